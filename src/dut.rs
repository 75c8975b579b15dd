//! DUT configuration sets: a named firewall (or none) applied to the DUT over a
//! [`Transport`](crate::transport::Transport), verified, counted and reverted.
//!
//! The Linux presets are shaped like the seeds' rulesets ("2 firewall rules"): the rule that
//! passes the test traffic and a default that drops the rest, for IPv4 and IPv6 at once. Every
//! rule benchlab adds lives in its own objects (nft table `benchlab`, iptables chain
//! `benchlab-forward` jumped from `FORWARD`) so that revert removes exactly those. A user set
//! is a directory with an `apply` script (see [`user`](crate::dut::user)). FreeBSD sets (ipfw, pf, ipf) will use
//! the same trait over SSH.
//!
//! ```no_run
//! use benchlab::dut;
//! use benchlab::transport::NetnsTransport;
//! let dut_node = NetnsTransport::new("benchlab-0-dut");
//! let set = dut::preset("nft-stateful").expect("a Linux preset");
//! set.apply(&dut_node)?;
//! set.verify(&dut_node)?;
//! // … traffic …
//! println!("the pass rule saw {:?} packets", set.counters(&dut_node)?);
//! set.revert(&dut_node)?;
//! # Ok::<(), anyhow::Error>(())
//! ```

/// The FreeBSD presets: forwarding, ipfw, pf and ipf, stateless and stateful (over SSH).
pub(crate) mod freebsd;
/// The Linux presets: forwarding, nftables and iptables (nft and legacy backends).
pub(crate) mod linux;
/// The DUT's operating system: which presets it has, how its counters are read.
pub(crate) mod os;
/// User config sets: a directory with an `apply` script.
pub(crate) mod user;

use std::fmt;
use std::path::Path;

use anyhow::{Context, Result};

use crate::error::InputError;
use crate::transport::Transport;
pub use os::Os;

/// The comment that marks the rules whose counters [`ConfigSet::counters`] adds up.
pub(crate) const PASS_COMMENT: &str = "benchlab-pass";

/// A named DUT configuration.
pub trait ConfigSet: fmt::Debug + Send + Sync {
    /// Its name (`nft-stateful`, or a user directory's name).
    fn name(&self) -> &str;

    /// What it applies, as text for `lab.json` and reports.
    fn ruleset(&self) -> String;

    /// Applies it to the DUT.
    fn apply(&self, dut: &dyn Transport) -> Result<()>;

    /// Checks that it is in force (its rules are there and their counters readable).
    fn verify(&self, dut: &dyn Transport) -> Result<()>;

    /// Packets the rules that pass test traffic have seen since apply; `None` for a set with
    /// no such rule (`forwarding`) or a user set without a `counters` script.
    fn counters(&self, dut: &dyn Transport) -> Result<Option<u64>>;

    /// Removes exactly what [`apply`](Self::apply) added.
    fn revert(&self, dut: &dyn Transport) -> Result<()>;
    /// Whether nothing of it is left on the DUT (after [`revert`](Self::revert)); a set that
    /// cannot tell says true.
    fn gone(&self, _dut: &dyn Transport) -> Result<bool> {
        Ok(true)
    }

    /// What it shares with the sets that its [`apply`](Self::apply) replaces in place (one nft
    /// table, one FreeBSD firewall's ruleset): switching between two such sets is one apply,
    /// no revert. `None`: the set in force must be reverted first.
    fn replaces(&self) -> Option<&'static str> {
        None
    }
}

/// Every built-in config set a campaign may name, in the order reports list them: the one list
/// of names. Which of them a system has is up to its constructor ([`linux::preset`],
/// [`freebsd::preset`]); a test checks that every name here is built by at least one.
pub(crate) const KNOWN_PRESETS: &[&str] = &[
    "forwarding",
    "nft-stateless",
    "nft-stateful",
    "iptables-stateful",
    "iptables-legacy-stateful",
    "ipfw-stateless",
    "ipfw-stateful",
    "pf-stateless",
    "pf-stateful",
    "ipf-stateless",
    "ipf-stateful",
];

/// The preset `name` for a DUT running `os`; `None` when that system has no such preset.
pub(crate) fn preset_on(os: Os, name: &str) -> Option<Box<dyn ConfigSet>> {
    match os {
        Os::Linux => linux::preset(name),
        Os::FreeBsd => freebsd::preset(name).map(|set| Box::new(set) as Box<dyn ConfigSet>),
    }
}

/// The Linux preset called `name` (the virtual lab's DUT runs Linux).
pub fn preset(name: &str) -> Option<Box<dyn ConfigSet>> {
    preset_on(Os::Linux, name)
}

/// The names of the presets `os` has, in the order reports list them.
pub fn presets(os: Os) -> Vec<&'static str> {
    KNOWN_PRESETS
        .iter()
        .copied()
        .filter(|name| preset_on(os, name).is_some())
        .collect()
}

/// A preset by name, or a user set when `spec` is a directory. `env` goes to user scripts.
pub fn config_set(spec: &str, env: &[(String, String)]) -> Result<Box<dyn ConfigSet>, InputError> {
    if let Some(set) = preset(spec) {
        return Ok(set);
    }
    if Path::new(spec).is_dir() {
        return Ok(Box::new(user::UserSet::load(Path::new(spec), env)?));
    }
    Err(InputError::new(format!(
        "unknown config set {spec:?}: use one of {} or a directory with an apply script",
        presets(Os::Linux).join(", ")
    )))
}

/// A campaign's config sets, loaded up front so that a bad user set fails before any trial
/// runs, and the one in force on the DUT.
#[derive(Debug, Default)]
pub(crate) struct ConfigSets {
    /// (entry as the campaign writes it, set).
    sets: Vec<(String, Box<dyn ConfigSet>)>,
    /// Index into `sets` of the set in force.
    current: Option<usize>,
}

impl ConfigSets {
    /// Loads each of `entries` with `load`.
    pub(crate) fn load(
        entries: &[String],
        mut load: impl FnMut(&str) -> Result<Box<dyn ConfigSet>>,
    ) -> Result<Self> {
        let sets = entries
            .iter()
            .map(|entry| Ok((entry.clone(), load(entry)?)))
            .collect::<Result<_>>()?;
        Ok(Self {
            sets,
            current: None,
        })
    }

    /// Removes the set in force (unless `entry` replaces it in place, see
    /// [`ConfigSet::replaces`]), then applies `entry` (one of the loaded ones) and verifies it.
    pub(crate) fn switch(&mut self, entry: &str, dut: &dyn Transport) -> Result<()> {
        let i = self
            .sets
            .iter()
            .position(|(e, _)| e == entry)
            .ok_or_else(|| anyhow::anyhow!("config set {entry:?} is not in the campaign"))?;
        let shared = self.sets[i].1.replaces();
        match self.current {
            Some(c) if shared.is_some() && self.sets[c].1.replaces() == shared => {
                self.current = None;
            }
            _ => self.revert(dut)?,
        }
        self.sets[i].1.apply(dut)?;
        self.current = Some(i);
        self.sets[i].1.verify(dut)
    }

    /// Removes the set in force, if any, and checks that it is gone, or the next set would be
    /// measured with it.
    pub(crate) fn revert(&mut self, dut: &dyn Transport) -> Result<()> {
        if let Some(i) = self.current.take() {
            let set = &self.sets[i].1;
            set.revert(dut)
                .with_context(|| format!("removing config set `{}`", set.name()))?;
            if !set.gone(dut)? {
                anyhow::bail!(
                    "config set `{}` is still in force after its removal: check its revert",
                    set.name()
                );
            }
        }
        Ok(())
    }

    /// Packets the pass rules of the set in force have seen since it was applied; `None` with
    /// no set in force or a set without such rules.
    pub(crate) fn counters(&self, dut: &dyn Transport) -> Result<Option<u64>> {
        match self.current {
            Some(i) => self.sets[i].1.counters(dut),
            None => Ok(None),
        }
    }

    /// The name of the set in force.
    pub(crate) fn current(&self) -> Option<&str> {
        self.current.map(|i| self.sets[i].1.name())
    }

    /// Each set's ruleset by name, as `lab.json` records them.
    pub(crate) fn rulesets(&self) -> std::collections::BTreeMap<String, String> {
        self.sets
            .iter()
            .map(|(_, s)| (s.name().to_string(), s.ruleset()))
            .collect()
    }
}

/// The built-in config sets a campaign on `lab` may name: the FreeBSD ones only on a real lab
/// (whose DUT may run FreeBSD), the Linux ones everywhere.
pub(crate) fn known_sets(lab: &crate::lab::LabConfig) -> Vec<&'static str> {
    if lab.hosts.is_some() {
        KNOWN_PRESETS.to_vec()
    } else {
        presets(Os::Linux)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_freebsd_presets_are_for_real_labs_only() {
        let real = crate::lab::LabConfig::parse(
            "[hosts.dut]\ntransport = \"ssh\"\nhost = \"a\"\n\
             [hosts.sender]\ntransport = \"ssh\"\nhost = \"g\"\ninterface = \"s0\"\n\
             dut_mac = \"02:00:00:00:00:01\"\n\
             [hosts.receiver]\ntransport = \"ssh\"\nhost = \"g\"\ninterface = \"r0\"\n",
            "LAB.toml",
        )
        .unwrap();
        assert!(!known_sets(&crate::lab::LabConfig::default()).contains(&"pf-stateful"));
        assert!(known_sets(&real).contains(&"pf-stateful"));
    }

    #[test]
    fn every_known_preset_is_built_by_a_system_under_its_own_name() {
        for name in KNOWN_PRESETS {
            let built: Vec<_> = [Os::Linux, Os::FreeBsd]
                .into_iter()
                .filter_map(|os| preset_on(os, name))
                .collect();
            assert!(!built.is_empty(), "{name} is built by no system");
            assert!(built.iter().all(|s| s.name() == *name), "{name}");
        }
        assert_eq!(
            presets(Os::Linux),
            [
                "forwarding",
                "nft-stateless",
                "nft-stateful",
                "iptables-stateful",
                "iptables-legacy-stateful"
            ]
        );
        assert!(presets(Os::FreeBsd).contains(&"forwarding"));
        assert!(!presets(Os::FreeBsd).contains(&"nft-stateful"));
    }

    /// Loads `names` (FreeBSD presets when `freebsd`) and switches through them on a mock
    /// DUT whose every command succeeds with `answer` but those starting with `fails`; returns
    /// the commands of each switch.
    fn switches(names: &[&str], freebsd: bool, answer: &str, fails: &[&str]) -> Vec<Vec<String>> {
        use crate::transport::{MockTransport, Output};
        let entries: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut sets = ConfigSets::load(&entries, |e| {
            let os = if freebsd { Os::FreeBsd } else { Os::Linux };
            Ok(preset_on(os, e).unwrap())
        })
        .unwrap();
        let dut = MockTransport::new("dut");
        dut.reply(&[], Output::ok(answer));
        if !fails.is_empty() {
            dut.reply(
                fails,
                Output {
                    status: Some(1),
                    ..Output::default()
                },
            );
        }
        let mut seen = 0;
        names
            .iter()
            .map(|n| {
                // A verify that fails on the mock's canned answer still shows what ran.
                let _ = sets.switch(n, &dut);
                let all = dut.commands();
                let new = all[seen..].to_vec();
                seen = all.len();
                new
            })
            .collect()
    }

    #[test]
    fn nft_sets_replace_each_other_in_one_apply() {
        let json = r#"{"nftables":[{"rule":{"comment":"benchlab-pass"}}]}"#;
        let runs = switches(&["nft-stateless", "nft-stateful"], false, json, &[]);
        assert!(
            runs[1]
                .iter()
                .all(|c| !c.contains("delete") && !c.contains("list tables")),
            "{:?}",
            runs[1]
        );
        assert_eq!(runs[1][0], "nft -f -");
    }

    #[test]
    fn freebsd_rulesets_of_one_firewall_reload_in_place_and_others_are_unloaded_first() {
        let runs = switches(
            &["ipfw-stateless", "ipfw-stateful", "pf-stateful"],
            true,
            "Status: Disabled for 0 days",
            &["kldstat"],
        );
        assert!(
            runs[1].iter().all(|c| !c.contains("kldunload")),
            "{:?}",
            runs[1]
        );
        assert!(runs[1].iter().any(|c| c.contains("/etc/ipfw.rules")));
        // Another firewall: ipfw is unloaded and checked gone before pf goes in.
        let unload = runs[2].iter().position(|c| c == "kldunload ipfw").unwrap();
        let gone = runs[2]
            .iter()
            .position(|c| c == "kldstat -q -m ipfw")
            .unwrap();
        let pf = runs[2]
            .iter()
            .position(|c| c == "pfctl -f /etc/pf.conf")
            .unwrap();
        assert!(unload < gone && gone < pf, "{:?}", runs[2]);
    }

    #[test]
    fn every_preset_is_known_by_its_name() {
        for name in &presets(Os::Linux) {
            assert_eq!(preset(name).unwrap().name(), *name);
        }
        let err = config_set("pf-stateful", &[]).unwrap_err().to_string();
        assert!(
            err.starts_with("unknown config set \"pf-stateful\": use one of forwarding, "),
            "{err}"
        );
    }
}
