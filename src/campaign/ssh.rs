//! A real lab over SSH as a campaign [`Bench`]: a Linux (or FreeBSD) DUT, one or several
//! senders running `benchlab gen --json`, trafgen (counted by `benchlab rx --tx --json` on the
//! sender's interface) or netmap pkt-gen, and a receiver running `benchlab rx --json` (pkt-gen
//! for pkt-gen senders).
//!
//! Several senders (a 4-node lab) each send their share of the profile (see `senders`): all
//! are started before the trial clock runs and stopped together, the first one that fails
//! stops the others and fails the trial (which the campaign retries once), and a trial's
//! second is the sum of the senders' seconds against the receiver's.
//!
//! Versions: `commands`, then `install` (argv lists run on the DUT), then `reboot`, then
//! `online` retried once a second until `online_timeout`, then `sysctls` (restored before the
//! next version and at the end; `campaign::settings`); a DUT that does not come back fails
//! the campaign with one line (finished trials stay stored, `--resume` continues). Once a
//! version is online its `uname -a` and kernel configuration (`/proc/config.gz` or
//! `/boot/config-$(uname -r)` on Linux, `sysctl -n kern.conftxt` on FreeBSD) go into
//! `lab.json` (`versions.<name>`), the configuration itself into `kernel-config/<name>.txt`,
//! so a report never labels a kernel by an image's file name alone.
//!
//! Latency (`[trial] latency`): where the senders and the receiver are one host (the 2-node
//! layout), `benchlab probe` runs there for each trial (`prober`), one clock at both ends; a
//! lab of several hosts is refused at load (`SshLab::prober` says why). The floor is not
//! measured: no cable from the sender to the receiver bypasses the DUT.
//!
//! Each trial keeps the DUT's counters before and after (`ip -s -s link` on Linux, `netstat
//! -ndi` on FreeBSD) with the hook outputs, each generator's output (`generator.jsonl`, or
//! `generator-<k>.jsonl` with several senders; trafgen's configuration and log too) and the
//! receiver's.
//!
//! [`Bench`]: crate::campaign::bench::Bench

use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;

use super::bench::Bench;
use super::bench::Switcher;
use super::settings::{self, Restore};
use super::switcher::DutSwitcher;
use super::trial::{Prober, Rig, TrialSpec};
use crate::cancel::Cancel;
use crate::config::{Campaign, Version, ALTERNATING_INTERVAL};
use crate::dut::{self, ConfigSets, Os};
use crate::error::InputError;
use crate::lab::ssh::{NodeConfig, SshLab};
use crate::store::{LabRecord, Store};
use crate::traffic::endpoint::{Receiver, Sender};
use crate::traffic::registry;
use crate::traffic::remote::generator::fallback_receiver;
use crate::traffic::remote::{RemoteNode, RemoteRx};
use crate::transport::SshTransport;
use prober::RemoteProber;

/// The DUT's profiler, picked by its operating system.
mod os;
/// The latency probes: `benchlab probe` on the host of the senders and the receiver.
mod prober;
/// How several senders share a profile.
mod senders;
/// Installing, rebooting and recording versions.
mod version;

/// A real lab over SSH, ready to run a campaign's trials.
pub(crate) struct SshBench {
    lab: SshLab,
    dut: SshTransport,
    /// The campaign's config sets and the one in force.
    sets: ConfigSets,
    /// The campaign's results directory, whose `lab.json` gets each version's kernel.
    store: Store,
    /// The DUT's OS, asked once.
    os: Option<Os>,
    /// The sysctls the version in force changed, restored before the next one and at the end.
    restore: Restore,
    /// Why the DUT cannot be profiled (a FreeBSD DUT without hwpmc), when it cannot: the
    /// campaign then runs without flamegraphs, and `lab.json` says why.
    no_profiler: Option<String>,
}

impl std::fmt::Debug for SshBench {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SshBench")
            .field("dut", &self.lab.dut.host)
            .field("config_set", &self.sets.current())
            .finish_non_exhaustive()
    }
}

/// Where benchlab's tools run on `node` of `lab` (toward its `dut_mac`, a sender's).
fn remote_node(node: &NodeConfig, lab: &SshLab) -> RemoteNode {
    RemoteNode {
        host: Arc::new(lab.ssh.transport(node)),
        benchlab: node.benchlab.clone().unwrap_or_else(|| "benchlab".into()),
        iface: node.interface.clone().unwrap_or_default(),
        dut_mac: node.dut_mac.clone().unwrap_or_default(),
        cpu: node.cpu,
    }
}

/// The receiver on `node` that counts what the lab's senders send: their generator's own, or
/// `benchlab rx`.
fn receiver(lab: &SshLab, node: &RemoteNode) -> Box<dyn Receiver> {
    match lab.receiving_generator().and_then(|g| g.receiver()) {
        Some(new) => new(node),
        None => fallback_receiver(node),
    }
}

impl SshBench {
    /// A bench on the real lab `lab` for `campaign`, whose results go to `results`.
    pub(crate) fn new(lab: SshLab, campaign: &Campaign, results: &Path) -> anyhow::Result<Self> {
        // Every profile must split among the senders (and fit trafgen) before any host is asked.
        for profile in &campaign.profiles {
            let shares = senders::shares(profile, lab.senders.len())?;
            for (node, share) in lab.senders.iter().zip(&shares) {
                let remote = remote_node(node, &lab);
                let load = share.load(campaign.trial.duration);
                node.tool().check(&remote, &load).map_err(|e| {
                    InputError::new(format!(
                        "profile `{}` on sender {}: {}",
                        profile.name, node.host, e.0
                    ))
                })?;
            }
        }
        let env = vec![("BENCHLAB_DUT_HOST".to_string(), lab.dut.host.clone())];
        let dut = lab.ssh.transport(&lab.dut);
        // Asking the DUT first also fails early, with one line, when it is unreachable.
        let os = Os::of(&dut)?;
        let no_profiler = match campaign.profile {
            true => os::check_profiler(os, &dut, lab.dut.pmc_event.as_deref())?,
            false => None,
        };
        let sets = ConfigSets::load(&campaign.config_sets, |entry| {
            Ok(match dut::preset_on(os, entry) {
                Some(set) => set,
                None => dut::config_set(entry, &env)?,
            })
        })?;
        Ok(Self {
            dut,
            lab,
            sets,
            store: Store::open(results)?,
            os: Some(os),
            restore: Restore::default(),
            no_profiler,
        })
    }

    fn os(&mut self) -> anyhow::Result<Os> {
        if let Some(os) = self.os {
            return Ok(os);
        }
        let os = Os::of(&self.dut)?;
        self.os = Some(os);
        Ok(os)
    }

    /// The senders of one trial of `spec`, each with its share of the profile.
    fn senders(&self, spec: &TrialSpec<'_>) -> anyhow::Result<Vec<Box<dyn Sender>>> {
        let shares = senders::shares(spec.profile, self.lab.senders.len())?;
        let n = shares.len();
        Ok((self.lab.senders.iter().zip(&shares).enumerate())
            .map(|(k, (node, share))| {
                let remote = remote_node(node, &self.lab);
                node.tool()
                    .sender(&remote, &share.load(spec.trial.duration), k, n)
            })
            .collect())
    }

    /// The latency probes of one trial of `spec`, or why this lab cannot send them (the
    /// campaign's check refused that at load already: this is defence).
    fn prober(&self, spec: &TrialSpec<'_>) -> Result<Box<dyn Prober>, String> {
        let sender = self.lab.prober()?;
        let node = remote_node(sender, &self.lab);
        let receive = self.lab.receiver.interface.clone().unwrap_or_default();
        let load = spec.profile.load(spec.trial.duration);
        Ok(Box::new(RemoteProber::new(node, &load, receive)))
    }

    /// The rig of one trial of `spec` counted by `receiver`.
    fn rig_with(
        &mut self,
        spec: &TrialSpec<'_>,
        receiver: Box<dyn Receiver>,
    ) -> anyhow::Result<Rig<'_>> {
        let senders = self.senders(spec)?;
        let prober = self.prober(spec);
        let os = self.os()?;
        let counters = os.counters_argv();
        let event = self.lab.dut.pmc_event.as_deref();
        Ok(Rig {
            dut: &self.dut,
            counters,
            senders,
            receiver,
            profiler: (self.no_profiler.is_none()).then(|| os::profiler(os, &self.dut, event)),
            dut_cpu: None,
            lab_cpus: Vec::new(),
            capture_delay: std::time::Duration::ZERO,
            prober,
        })
    }

    fn revert_current(&mut self) -> anyhow::Result<()> {
        self.sets.revert(&self.dut)
    }
}

impl Drop for SshBench {
    fn drop(&mut self) {
        let _ = self.revert_current();
        if let Some(os) = self.os {
            let _ = settings::restore_sysctls(&self.dut, os, &mut self.restore);
        }
        let lab = &self.lab;
        for node in lab.senders.iter().chain([&lab.receiver, &lab.dut]) {
            lab.ssh.transport(node).close();
        }
    }
}

impl Bench for SshBench {
    fn set_version(&mut self, version: &Version, cancel: &Cancel) -> anyhow::Result<()> {
        self.install(version, cancel)
    }

    fn set_config(&mut self, entry: &str) -> anyhow::Result<()> {
        self.sets.switch(entry, &self.dut)
    }

    fn rig(&mut self, spec: &TrialSpec<'_>) -> anyhow::Result<Rig<'_>> {
        let rx = remote_node(&self.lab.receiver, &self.lab);
        let receiver = receiver(&self.lab, &rx);
        self.rig_with(spec, receiver)
    }

    fn alternating(
        &mut self,
        spec: &TrialSpec<'_>,
    ) -> anyhow::Result<(Rig<'_>, Box<dyn Switcher + '_>)> {
        if self.lab.receiving_generator().is_some() {
            let counted: Vec<&str> = (registry::GENERATORS.iter())
                .filter(|g| g.receiver().is_none())
                .map(|g| g.name())
                .collect();
            anyhow::bail!(
                "the alternating design needs benchlab's receiver on {} (it samples every \
                 0.05 s): use {} senders, or design = \"trials\"",
                self.lab.receiver.host,
                counted.join(" or ")
            );
        }
        let rx = remote_node(&self.lab.receiver, &self.lab);
        let receiver = Box::new(RemoteRx::sampling(&rx, ALTERNATING_INTERVAL));
        // Asked before the rig borrows the DUT's connection.
        let os = self.os()?;
        let senders = self.senders(spec)?;
        let prober = self.prober(spec);
        let counters = os.counters_argv();
        let switcher = DutSwitcher {
            sets: &mut self.sets,
            restore: &mut self.restore,
            dut: &self.dut,
            os,
        };
        let rig = Rig {
            dut: &self.dut,
            counters,
            senders,
            receiver,
            profiler: None,
            dut_cpu: None,
            lab_cpus: Vec::new(),
            capture_delay: std::time::Duration::ZERO,
            prober,
        };
        Ok((rig, Box::new(switcher)))
    }

    fn facts(&mut self) -> anyhow::Result<LabRecord> {
        let rulesets = self.sets.rulesets();
        let node = |n: &NodeConfig| {
            serde_json::json!({
                "transport": "ssh",
                "host": n.host,
                "interface": n.interface,
                "interfaces": n.interfaces,
            })
        };
        let senders: Vec<serde_json::Value> = self
            .lab
            .senders
            .iter()
            .map(|s| {
                let mut v = node(s);
                v["dut_mac"] = serde_json::json!(s.dut_mac);
                v["generator"] = serde_json::json!(s.tool().label());
                v["cpu"] = serde_json::json!(s.cpu);
                v
            })
            .collect();
        let generators: Vec<String> = self
            .lab
            .senders
            .iter()
            .map(|s| format!("{} over SSH on {}", s.tool().label(), s.host))
            .collect();
        Ok(LabRecord {
            host: Some(crate::lab::host::facts(&self.dut)),
            lab: serde_json::json!({
                "dut": node(&self.lab.dut),
                "senders": senders,
                "receiver": node(&self.lab.receiver),
            }),
            generator: Some(generators.join(" + ")),
            config_sets: rulesets,
            profiler_unavailable: self.no_profiler.clone(),
            ..LabRecord::default()
        })
    }

    /// Reverts the config set in force (the sysctls and connections go as it drops).
    fn down(mut self: Box<Self>) -> anyhow::Result<()> {
        (self.revert_current()).context("reverting the DUT's config set")
    }
}
