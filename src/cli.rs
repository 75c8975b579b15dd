//! Command line: clap parses, each subcommand's module runs, and only this layer prints.
//!
//! Every subcommand lives in `cli/<name>.rs` with its `Args` and a `run(args, out, err)` that
//! writes to the given streams, so tests can drive it in-process.

use std::io::Write;

use clap::{Parser, Subcommand};

/// `benchlab gen`: the packet generator, standalone.
pub mod gen;
/// `benchlab lab up|down|status`: the virtual lab by hand.
pub mod lab;
/// `benchlab ministat`: FreeBSD's ministat(1), flag for flag.
pub mod ministat;
/// `benchlab report`: README, graphs, JSON and the harness's files from a results directory.
pub mod report;
/// `benchlab run`: a whole campaign, ending with its report.
pub mod run;
/// `benchlab rx`: the receiver's counter sampler, standalone.
pub mod rx;

/// benchlab: forwarding benchmarks of routers and firewalls, with statistics.
#[derive(Debug, Parser)]
#[command(name = "benchlab", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands (names are stable: DESIGN.md).
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a campaign (default: the built-in one on the virtual lab) and write its report.
    Run(run::Args),
    /// Write the report of a results directory (benchlab's, or netbenches pkt-gen logs):
    /// README.md with ministat tables, PNG graphs, results.json.
    Report(report::Args),
    /// Statistics of data files, exactly as FreeBSD's ministat(1) prints them.
    Ministat(ministat::MinistatArgs),
    /// Build, inspect or remove the virtual lab (network namespaces: sender → DUT → receiver).
    Lab(lab::LabArgs),
    /// Send UDP test frames (the packet generator, usable standalone like pkt-gen).
    Gen(gen::Args),
    /// Sample an interface's packet counters once a second (the receiver).
    Rx(rx::Args),
}

/// Runs one parsed command line, writing its output to `out` and `err`; returns the exit status.
pub fn run(cli: Cli, out: &mut dyn Write, err: &mut dyn Write) -> anyhow::Result<i32> {
    match cli.command {
        Command::Run(args) => run::run(args, out, err),
        Command::Report(args) => report::run(args, out, err),
        Command::Ministat(args) => ministat::run(args, out, err),
        Command::Lab(args) => lab::run(args, out, err),
        Command::Gen(args) => gen::run(args, out, err),
        Command::Rx(args) => rx::run(args, out, err),
    }
}

/// Parses the process arguments, runs, prints any error as one line; returns the exit status.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints its own usage errors (status 2) and --help/--version (status 0).
            let _ = e.print();
            return e.exit_code();
        }
    };
    // Unlocked handles: a progress bar's ticker thread writes to stderr while a run goes on.
    match run(cli, &mut std::io::stdout(), &mut std::io::stderr()) {
        Ok(code) => code,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "benchlab: {e:#}");
            crate::error::exit_code(&e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
