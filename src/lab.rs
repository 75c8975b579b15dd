//! The virtual lab: network namespaces joined by veth pairs, sender → DUT → receiver, with the
//! real Linux forwarding path and netfilter in the DUT.
//!
//! [`Lab::up`](crate::lab::Lab::up) builds a lab from a [`LabConfig`](crate::lab::LabConfig) and returns a guard: dropping it (an error, a
//! panic) or a SIGINT/SIGTERM/SIGHUP tears the lab down; [`Lab::down`](crate::lab::Lab::down) does it and reports
//! errors. A lab records its owner in `/run/benchlab/<id>.pid` (pid and start time, or
//! `manual` for a lab built by `benchlab lab up`); a lab whose owner is dead is *stale*, and
//! every [`Lab::up`](crate::lab::Lab::up) and [`down`](crate::lab::down) removes stale labs — only benchlab's, found by the
//! `benchlab-` prefix of their namespaces, never anything else. A lab killed with -9 is thus
//! removed by the next start.
//!
//! ```no_run
//! use benchlab::lab::{Lab, LabConfig, Role};
//! let lab = Lab::up(&LabConfig::default())?;
//! let dut = lab.node(Role::Dut).expect("every lab has a DUT");
//! println!("{}", dut.run(&["ip", "route"])?);
//! println!("send from {} to {}", lab.facts().senders[0].interface, lab.facts().senders[0].dut_mac);
//! lab.down()?;
//! # Ok::<(), anyhow::Error>(())
//! ```

/// Addresses, MACs, routes and neighbours of the lab.
pub(crate) mod addressing;
/// How far apart the probes' CPU and the DUT's are during a latency trial
/// (`cpu-round-trips.json`).
pub mod distance;
/// What a running lab looks like (`lab status --json`).
pub mod facts;
/// The latency floor self-test: probes over one veth, no DUT, in a throwaway lab.
pub mod floor;
/// Facts about a host for lab.json: CPU, cores, kernel, OS, tool versions.
pub(crate) mod host;
/// Real labs: nodes reached over SSH (`[dut]`, `[sender]`, `[receiver]` in LAB.toml).
pub(crate) mod ssh;
/// How long the virtual DUT's CPU went without running during a trial (`dut-cpu.json`).
pub mod stall;
/// The `LAB.toml` model, roles, names of namespaces and interfaces.
pub mod topology;
/// Building and removing the lab on this machine (namespaces, veths, CPU placement).
pub mod virt;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

pub use facts::LabFacts;
pub use topology::{LabConfig, Placement, Role, Topology};

use crate::cancel::Cancel;
use crate::error::InputError;
use crate::transport::{NetnsTransport, Transport};

/// The prefix of every namespace benchlab creates: `benchlab-<id>-<role>`.
pub(crate) const NAMESPACE_PREFIX: &str = "benchlab-";

/// Where labs record their owner (`<id>.pid`) and topology (`<id>.json`).
pub use crate::traffic::os::RUN_DIR;

/// Labs built by this process and not yet removed, for the signal handler.
static LIVE: Mutex<Vec<String>> = Mutex::new(Vec::new());
static SIGNAL_HANDLER: Once = Once::new();

/// The token the first SIGINT, SIGTERM or SIGHUP raises once [`stop_gracefully_on_signal`]
/// was called: its holder finishes cleaning up its current step, removes its lab and stops.
static GRACEFUL: Mutex<Option<Cancel>> = Mutex::new(None);

/// Makes the first signal only raise `cancel` (a campaign then stops between trials and keeps
/// everything measured); a second signal still removes the labs and exits at once.
pub(crate) fn stop_gracefully_on_signal(cancel: &Cancel) {
    *GRACEFUL.lock().unwrap_or_else(|p| p.into_inner()) = Some(cancel.clone());
    SIGNAL_HANDLER.call_once(remove_labs_on_signal);
}

/// A running virtual lab; dropping it tears it down.
#[derive(Debug)]
pub struct Lab {
    topology: Topology,
    facts: LabFacts,
    nodes: Vec<(Role, NetnsTransport)>,
    guard: Guard,
}

/// Tears lab `id` down when dropped, unless disarmed.
#[derive(Debug)]
struct Guard {
    id: String,
    armed: bool,
}

impl Drop for Guard {
    fn drop(&mut self) {
        if self.armed {
            // Drop cannot report; the next start removes whatever this leaves as stale.
            let _ = teardown(&self.id);
        }
    }
}

impl Lab {
    /// Builds the lab `cfg` describes, after removing stale labs. Refuses (exit 2) when not
    /// root, when a tool is missing, or when a live process owns a lab with the same id.
    pub fn up(cfg: &LabConfig) -> Result<Self> {
        virt::preflight(virt::LAB_TOOLS)?;
        let topology = Topology::resolve(cfg, virt::online_cpus()).map_err(InputError::new)?;
        std::fs::create_dir_all(RUN_DIR).with_context(|| format!("cannot create {RUN_DIR}"))?;
        remove_stale()?;
        claim(&topology.id)?;
        SIGNAL_HANDLER.call_once(remove_labs_on_signal);
        lock_live().push(topology.id.clone());
        // From here on, an error drops the guard, which removes whatever was built.
        let guard = Guard {
            id: topology.id.clone(),
            armed: true,
        };
        let record = run_file(&topology.id, "json");
        crate::atomic::write(&record, &serde_json::to_vec_pretty(&topology)?)
            .with_context(|| format!("cannot write {}", record.display()))?;
        virt::build(&topology, &addressing::plan(&topology))
            .with_context(|| format!("building lab {}", topology.id))?;
        let facts = facts::collect(&topology)?;
        let nodes = topology
            .roles()
            .into_iter()
            .map(|r| (r, NetnsTransport::new(topology.namespace(r))))
            .collect();
        Ok(Self {
            topology,
            facts,
            nodes,
            guard,
        })
    }

    /// The lab id.
    pub(crate) fn id(&self) -> &str {
        &self.topology.id
    }

    /// The resolved topology (names, placement, CPUs).
    pub(crate) fn topology(&self) -> &Topology {
        &self.topology
    }

    /// The transport into the node playing `role`, if the lab has that role.
    pub fn node(&self, role: Role) -> Option<&dyn Transport> {
        self.nodes
            .iter()
            .find(|(r, _)| *r == role)
            .map(|(_, t)| t as &dyn Transport)
    }

    /// Addresses, MACs, interfaces, routes and CPU placement, as read when the lab came up.
    pub fn facts(&self) -> &LabFacts {
        &self.facts
    }

    /// Tears the lab down: kills what runs in its namespaces, deletes them and its records.
    pub fn down(mut self) -> Result<()> {
        self.guard.armed = false;
        teardown(&self.topology.id)
    }

    /// Leaves the lab up after this process ends (`benchlab lab up`): it is marked `manual`
    /// and only `benchlab lab down` removes it. Returns its facts.
    pub(crate) fn keep(mut self) -> Result<LabFacts> {
        let pid_file = run_file(&self.topology.id, "pid");
        crate::atomic::write(&pid_file, b"manual\n")
            .with_context(|| format!("cannot write {}", pid_file.display()))?;
        self.guard.armed = false;
        lock_live().retain(|id| *id != self.topology.id);
        Ok(self.facts)
    }
}

/// On SIGINT, SIGTERM or SIGHUP, removes this process's labs and exits with 128 + the
/// signal (after [`stop_gracefully_on_signal`], only from the second signal on). signal-hook chains handlers, so others (a generator stopping) still run; a handler
/// that must finish first should call [`teardown_all`] itself before the process ends.
fn remove_labs_on_signal() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    // Without the handler a signal still ends the process; its labs are then stale and the
    // next start removes them.
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    std::thread::spawn(move || {
        for signal in signals.forever() {
            let graceful = GRACEFUL.lock().unwrap_or_else(|p| p.into_inner()).clone();
            if graceful.is_some_and(|cancel| !cancel.cancel()) {
                continue;
            }
            teardown_all();
            std::process::exit(128 + signal);
        }
    });
}

/// Removes every lab this process built and still owns (signal handlers call this).
pub(crate) fn teardown_all() {
    let ids: Vec<String> = lock_live().clone();
    for id in ids {
        let _ = teardown(&id);
    }
}

fn lock_live() -> std::sync::MutexGuard<'static, Vec<String>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Removes lab `id`: namespaces (with their processes and veths) first, records last, so that
/// an interrupted teardown still leaves a stale lab the next start finds.
fn teardown(id: &str) -> Result<()> {
    let removed = virt::remove_namespaces(id);
    for ext in ["json", "pid"] {
        let _ = std::fs::remove_file(run_file(id, ext));
    }
    lock_live().retain(|l| l != id);
    removed
}

fn run_file(id: &str, ext: &str) -> PathBuf {
    Path::new(RUN_DIR).join(format!("{id}.{ext}"))
}

/// Who owns a lab, as its `.pid` file says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Owner {
    /// A running process (pid).
    Process(i32),
    /// Built by `benchlab lab up`, kept until `benchlab lab down`.
    Manual,
    /// Its owner is dead (or unknown): the next start removes it.
    Stale,
}

/// The owner of lab `id`. A pid counts only if that process still has the start time it had
/// when it claimed the lab, so a recycled pid does not keep a stale lab alive.
pub fn owner(id: &str) -> Owner {
    let Ok(text) = std::fs::read_to_string(run_file(id, "pid")) else {
        return Owner::Stale;
    };
    let mut words = text.split_whitespace();
    match (words.next(), words.next()) {
        (Some("manual"), None) => Owner::Manual,
        (Some(pid), Some(start)) => match (pid.parse::<i32>(), start.parse::<u64>()) {
            (Ok(pid), Ok(start)) if start_time(pid) == Some(start) => Owner::Process(pid),
            _ => Owner::Stale,
        },
        _ => Owner::Stale,
    }
}

/// The start time of process `pid` (field 22 of `/proc/<pid>/stat`), if it runs.
fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Records this process as the owner of lab `id`, atomically and exclusively (a hard link
/// fails when the file exists), after removing the lab if it is stale.
fn claim(id: &str) -> Result<()> {
    let me = std::process::id() as i32;
    let start = start_time(me).context("cannot read this process's start time")?;
    let path = run_file(id, "pid");
    let tmp = path.with_extension(format!("pid.{me}"));
    std::fs::write(&tmp, format!("{me} {start}\n"))
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    let linked = std::fs::hard_link(&tmp, &path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => match owner(id) {
            Owner::Process(pid) => bail!(InputError::new(format!(
                "lab {id} is in use by process {pid}: give this lab another id, or stop that process"
            ))),
            Owner::Manual => bail!(InputError::new(format!(
                "lab {id} is up (built by `benchlab lab up`): `benchlab lab down --id {id}` first, or give this lab another id"
            ))),
            Owner::Stale => {
                teardown(id)?;
                claim(id)
            }
        },
        Err(e) => Err(e).with_context(|| format!("cannot create {}", path.display())),
    }
}

/// The ids of the benchlab labs on this host, up or stale: from their namespaces and owner
/// records.
pub(crate) fn ids() -> Vec<String> {
    let mut ids: Vec<String> = virt::benchlab_namespaces()
        .iter()
        .filter_map(|ns| {
            let rest = ns.strip_prefix(NAMESPACE_PREFIX)?;
            Some(rest.split_once('-')?.0.to_string())
        })
        .collect();
    if let Ok(entries) = std::fs::read_dir(RUN_DIR) {
        ids.extend(entries.filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let id = name
                .strip_suffix(".pid")
                .or_else(|| name.strip_suffix(".json"))?;
            Some(id.to_string())
        }));
    }
    ids.sort();
    ids.dedup();
    ids
}

/// Removes every stale benchlab lab (owner dead, or no owner record); returns their ids.
pub(crate) fn remove_stale() -> Result<Vec<String>> {
    let mut removed = Vec::new();
    for id in ids() {
        if owner(&id) == Owner::Stale {
            teardown(&id).with_context(|| format!("removing stale lab {id}"))?;
            removed.push(id);
        }
    }
    Ok(removed)
}

/// A lab as `benchlab lab status` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LabStatus {
    /// Who owns it.
    pub(crate) owner: Owner,
    /// What it is, read from the kernel now.
    #[serde(flatten)]
    pub(crate) facts: LabFacts,
}

/// The status of lab `id`, or `None` when it is not up.
pub(crate) fn status(id: &str) -> Result<Option<LabStatus>> {
    virt::preflight(virt::INSPECT_TOOLS)?;
    if virt::namespaces_of(id).is_empty() {
        return Ok(None);
    }
    let path = run_file(id, "json");
    let text = std::fs::read(&path).with_context(|| {
        format!(
            "lab {id} has namespaces but no {}: remove it with `benchlab lab down --id {id}`",
            path.display()
        )
    })?;
    let topology: Topology = serde_json::from_slice(&text)
        .with_context(|| format!("{} is not a lab record", path.display()))?;
    Ok(Some(LabStatus {
        owner: owner(id),
        facts: facts::collect(&topology)?,
    }))
}

/// What [`down`] removed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Removed {
    /// Whether the lab asked for was up (and is now gone).
    pub(crate) lab: bool,
    /// Stale labs removed along the way.
    pub(crate) stale: Vec<String>,
}

/// Removes lab `id` and every stale lab. A lab owned by another live process is left alone
/// unless `force` (that process would fail half-way).
pub fn down(id: &str, force: bool) -> Result<Removed> {
    virt::preflight(virt::INSPECT_TOOLS)?;
    if let Owner::Process(pid) = owner(id) {
        if !force && pid != std::process::id() as i32 {
            bail!(InputError::new(format!(
                "lab {id} is in use by process {pid}: stop that process, or add --force"
            )));
        }
    }
    let lab = !virt::namespaces_of(id).is_empty();
    teardown(id)?;
    let stale = remove_stale()?;
    Ok(Removed { lab, stale })
}
