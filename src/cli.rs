//! Command line: clap parses, each subcommand's module runs, and only this layer prints.
//!
//! Every subcommand lives in `cli/<name>.rs` with its `Args` and a `run(args, out, err)` that
//! writes to the given streams, so tests can drive it in-process.

use std::io::Write;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser, Subcommand};

/// `benchlab gen`: the packet generator, standalone.
pub(crate) mod gen;
/// `benchlab history import|show|regressions`: the results database.
pub(crate) mod history;
/// `benchlab lab up|down|status`: the virtual lab by hand.
pub(crate) mod lab;
/// `benchlab ministat`: FreeBSD's ministat(1), flag for flag.
pub(crate) mod ministat;
/// `benchlab probe`: latency probes between two interfaces of this host, standalone.
pub(crate) mod probe;
/// `benchlab report`: README, graphs, JSON and the harness's files from a results directory.
pub(crate) mod report;
/// `benchlab run`: a whole campaign, ending with its report.
pub(crate) mod run;
/// `benchlab rx`: the receiver's counter sampler, standalone.
pub(crate) mod rx;

/// benchlab: forwarding benchmarks of routers and firewalls, with statistics.
#[derive(Debug, Parser)]
#[command(name = "benchlab", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The subcommands (names are stable: DESIGN.md).
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run a campaign (default: the built-in one on the virtual lab) and write its report.
    Run(run::Args),
    /// Write the report of a results directory (benchlab's, or netbenches pkt-gen logs):
    /// README.md with ministat tables, PNG graphs, results.json.
    ///
    /// How the comparisons are chosen: a netbenches directory whose README.md the harness's
    /// author wrote (not benchlab) has its ministat tables made again first: the series their
    /// legends name (by .pps file, or by their values where relabelled), the x one the
    /// reference, in the README's order and at its confidence level; the README's difference
    /// lines no table reproduces are listed with the reason. Then benchlab's own: versions per
    /// config set and profile, config sets per version and profile, each pair once, the first
    /// version and config set the reference: --versions/--configs, else report.toml's, else the
    /// campaign's, else the oldest version (by the revision its uname or name carries, r318516
    /// 11-stable before 12-head; without one, the logs' order).
    Report(report::Args),
    /// Statistics of data files, exactly as FreeBSD's ministat(1) prints them.
    Ministat(ministat::MinistatArgs),
    /// Remember campaigns in a database (SQLite, or PostgreSQL a team shares); trends across
    /// versions and the regressions jumpavg finds in them.
    History(history::HistoryArgs),
    /// Build, inspect or remove the virtual lab (network namespaces: sender → DUT → receiver).
    Lab(lab::LabArgs),
    /// Send UDP test frames (the packet generator, usable standalone like pkt-gen).
    Gen(gen::Args),
    /// Sample an interface's packet counters once a second (the receiver).
    Rx(rx::Args),
    /// Send latency probes out of one interface and read them back on another of this host
    /// (the probes of an SSH lab whose senders and receiver are one host).
    Probe(probe::Args),
}

/// Runs one parsed command line, writing its output to `out` and `err`; returns the exit status.
pub fn run(cli: Cli, out: &mut dyn Write, err: &mut dyn Write) -> anyhow::Result<i32> {
    match cli.command {
        Command::Run(args) => run::run(args, out, err),
        Command::Report(args) => report::run(args, out, err),
        Command::Ministat(args) => ministat::run(args, out, err),
        Command::History(args) => history::run(args, out, err),
        Command::Lab(args) => lab::run(args, out, err),
        Command::Gen(args) => gen::run(args, out, err),
        Command::Rx(args) => rx::run(args, out, err),
        Command::Probe(args) => probe::run(args, out, err),
    }
}

/// Parses the process arguments, runs, prints any error as one line; returns the exit status.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e)
            if !e.use_stderr()
                || e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand =>
        {
            // --help and --version (status 0), or the help of a bare `benchlab` (status 2).
            let _ = e.print();
            return e.exit_code();
        }
        Err(e) => {
            let line = one_line(&e, std::env::args().nth(1).as_deref());
            let _ = writeln!(std::io::stderr(), "benchlab: {line}");
            return e.exit_code();
        }
    };
    // Unlocked handles: a progress bar's ticker thread writes to stderr while a run goes on.
    match run(cli, &mut std::io::stdout(), &mut std::io::stderr()) {
        Ok(code) => code,
        // A reader that stopped reading (`benchlab history show | head`) asked for no more:
        // not an error to print, as with any Unix filter.
        Err(e)
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            0
        }
        Err(e) => {
            let code = crate::error::exit_code(&e);
            let mut message = format!("{e:#}");
            if code == 2 {
                // Bad input is one line of at most 300 characters with its `benchlab: `,
                // even when it quotes a path with a line break or a 20 MB value in it.
                message = crate::error::one_line(&message, 290);
            }
            let _ = writeln!(std::io::stderr(), "benchlab: {message}");
            code
        }
    }
}

/// A usage error in one line, as every other error: clap's message, its tip if it has one,
/// and the help to read (clap's own text spans several lines with a usage block).
/// `first_arg` is the process's first argument: the subcommand, when it names one.
fn one_line(e: &clap::Error, first_arg: Option<&str>) -> String {
    let text = e.render().to_string();
    // The message may go on over lines (the missing arguments); the usage block ends it.
    let (mut parts, mut tips) = (Vec::new(), Vec::new());
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        match line.strip_prefix("tip: ") {
            Some(tip) => tips.push(format!("({tip})")),
            None => parts.push(line.strip_prefix("error: ").unwrap_or(line)),
        }
    }
    let out = parts.join(" ") + &tips.iter().map(|t| format!(" {t}")).collect::<String>();
    let command = Cli::command();
    let help = match first_arg.filter(|a| command.find_subcommand(a).is_some()) {
        Some(sub) => format!("benchlab {sub} --help"),
        None => "benchlab --help".to_string(),
    };
    format!("{out}; see `{help}`")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn usage_errors_are_one_line_naming_the_command() {
        let e = Cli::try_parse_from(["benchlab", "run", "--bogus"]).unwrap_err();
        let line = one_line(&e, Some("run"));
        assert!(!line.contains('\n'), "{line}");
        assert!(line.contains("'--bogus'"), "{line}");
        assert!(line.ends_with("see `benchlab run --help`"), "{line}");
        // A message that lists what is missing keeps the list.
        let e = Cli::try_parse_from(["benchlab", "report"]).unwrap_err();
        let line = one_line(&e, Some("report"));
        assert!(line.contains("not provided: <DIR>"), "{line}");
        // A negative number is read as the value it is, for validation to refuse.
        let cli = Cli::try_parse_from(["benchlab", "run", "--duration", "-1"]).unwrap();
        assert!(matches!(cli.command, Command::Run(a) if a.duration == Some(-1.0)));
    }
}
