//! `benchlab lab up|down|status [LAB.toml]`: the virtual lab by hand.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};

use crate::error::InputError;
use crate::lab::{self, Lab, LabConfig, LabFacts, Owner};

/// Arguments of `benchlab lab`.
#[derive(Debug, Args)]
pub(crate) struct LabArgs {
    /// What to do with the lab.
    #[command(subcommand)]
    pub(crate) action: LabAction,
}

/// `lab up`, `lab down`, `lab status`.
#[derive(Debug, Subcommand)]
pub(crate) enum LabAction {
    /// Build the virtual lab and leave it up until `benchlab lab down`.
    Up {
        /// Which lab.
        #[command(flatten)]
        target: LabTarget,
        /// Keep the lab only while this command runs: Ctrl-C (or SIGTERM) removes it.
        #[arg(long)]
        hold: bool,
    },
    /// Remove the lab, and every stale benchlab lab.
    Down {
        /// Which lab.
        #[command(flatten)]
        target: LabTarget,
        /// Remove it even when a running benchlab process owns it.
        #[arg(long)]
        force: bool,
    },
    /// Show a lab: namespaces, interfaces, MACs, addresses, routes, CPU placement.
    Status {
        /// Which lab.
        #[command(flatten)]
        target: LabTarget,
        /// Print JSON (what a script needs to drive the lab by hand).
        #[arg(long)]
        json: bool,
    },
}

/// Which lab a command is about.
#[derive(Debug, Args)]
pub(crate) struct LabTarget {
    /// The lab description [default: the seeds' 3-node lab, id 0].
    #[arg(value_name = "LAB.toml")]
    pub(crate) file: Option<PathBuf>,
    /// Lab id, overriding the file's.
    #[arg(long)]
    pub(crate) id: Option<String>,
}

impl LabTarget {
    fn config(&self) -> Result<LabConfig, InputError> {
        let mut cfg = match &self.file {
            Some(path) => LabConfig::load(path)?,
            None => LabConfig::default(),
        };
        if let Some(id) = &self.id {
            cfg.id = id.clone();
            cfg.validate()
                .map_err(|msg| InputError::new(format!("--id: {msg}")))?;
        }
        Ok(cfg)
    }
}

/// Runs `benchlab lab …`.
pub(crate) fn run(args: LabArgs, out: &mut dyn Write, _err: &mut dyn Write) -> Result<i32> {
    match args.action {
        LabAction::Up { target, hold } => {
            let lab = Lab::up(&target.config()?)?;
            if hold {
                writeln!(out, "lab {} is up until Ctrl-C", lab.id())?;
                print_facts(out, lab.facts())?;
                out.flush()?;
                // The lab's signal handler removes it and ends the process.
                loop {
                    std::thread::park();
                }
            }
            let facts = lab.keep()?;
            writeln!(
                out,
                "lab {} is up; `benchlab lab down --id {}` removes it",
                facts.id, facts.id
            )?;
            print_facts(out, &facts)?;
        }
        LabAction::Down { target, force } => {
            let id = target.config()?.id;
            let removed = lab::down(&id, force)?;
            if removed.lab {
                writeln!(out, "lab {id} is down")?;
            } else {
                writeln!(out, "lab {id} was not up")?;
            }
            for stale in removed.stale {
                writeln!(out, "removed stale lab {stale}")?;
            }
        }
        LabAction::Status { target, json } => {
            let id = target.config()?.id;
            let Some(status) = lab::status(&id)? else {
                // Another id is the likely slip: name the labs that are up.
                let up = lab::ids();
                anyhow::bail!(InputError::new(match up.first() {
                    None => format!("lab {id} is not up (`benchlab lab up` builds it)"),
                    Some(other) => format!(
                        "lab {id} is not up; up on this host: {} (`benchlab lab status --id \
                         {other}`)",
                        up.join(", ")
                    ),
                }));
            };
            if json {
                serde_json::to_writer_pretty(&mut *out, &status)?;
                writeln!(out)?;
            } else {
                let owner = match status.owner {
                    Owner::Process(pid) => format!("process {pid}"),
                    Owner::Manual => "benchlab lab up (manual)".to_string(),
                    Owner::Stale => "none: stale, the next start removes it".to_string(),
                };
                writeln!(out, "lab {id}, owner: {owner}")?;
                print_facts(out, &status.facts)?;
            }
        }
    }
    Ok(0)
}

/// The lab in a few lines a person reads: placement, what to send, then each namespace.
fn print_facts(out: &mut dyn Write, f: &LabFacts) -> Result<()> {
    writeln!(out, "placement: {}", f.placement.summary)?;
    for s in &f.senders {
        writeln!(
            out,
            "{}: send from {} in {} to DUT MAC {}, CPU {}",
            s.role, s.interface, s.namespace, s.dut_mac, s.cpu
        )?;
        for (family, fam) in [("inet4", &s.inet4), ("inet6", &s.inet6)] {
            writeln!(
                out,
                "  {family}: sources in {}, destinations in {}",
                fam.source, fam.destination
            )?;
        }
    }
    writeln!(
        out,
        "receiver: counts on {} in {}",
        f.receiver.interface, f.receiver.namespace
    )?;
    for ns in &f.namespaces {
        let roles: Vec<String> = ns.roles.iter().map(ToString::to_string).collect();
        writeln!(out, "{} ({})", ns.name, roles.join(", "))?;
        for i in &ns.interfaces {
            let addrs: Vec<String> = i.addresses.iter().map(ToString::to_string).collect();
            writeln!(
                out,
                "  {:<10} {} {:<5} {}",
                i.name,
                i.mac,
                i.state,
                addrs.join(" ")
            )?;
        }
        for r in &ns.routes {
            writeln!(out, "  route {} via {} dev {}", r.destination, r.via, r.dev)?;
        }
        for n in &ns.neighbours {
            writeln!(out, "  neigh {} lladdr {} dev {}", n.address, n.mac, n.dev)?;
        }
    }
    Ok(())
}
