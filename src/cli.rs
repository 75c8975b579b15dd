//! Command line: clap parses, each subcommand's module runs, and only this layer prints.
//!
//! Every subcommand lives in `cli/<name>.rs` with its `Args` and a `run(args, out, err)` that
//! writes to the given streams, so tests can drive it in-process.

use std::io::Write;

use clap::{Parser, Subcommand};

mod gen;
/// `benchlab lab up|down|status`: the virtual lab by hand.
pub mod lab;
mod rx;

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
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    match run(cli, &mut stdout.lock(), &mut stderr.lock()) {
        Ok(code) => code,
        Err(e) => {
            let _ = writeln!(stderr.lock(), "benchlab: {e:#}");
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
