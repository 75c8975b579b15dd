//! What an alternating run alternates: its **entries**. A campaign whose versions are all quick
//! ([`Campaign::alternates_versions`]) alternates the (version, config set) pairs, version-major,
//! so the baseline is (first version, first set) and one [`BalancedOrder`](crate::stats::BalancedOrder)
//! runs over all `versions × sets` entries; any other campaign alternates its config sets
//! within one version at a time, as before.
//!
//! A switch between entries applies only what differs: the version's sysctls and commands when
//! the version changes (the lab restores the previous version's sysctls first, as
//! `Bench::set_version` does), then the config set when the set changes. A version change alone
//! keeps the set in force: a sysctl or a module parameter does not remove the set's rules, and
//! reloading the set would make version switches slower than set switches.

use anyhow::Context;

use super::Switcher;
use crate::config::Campaign;
use crate::store::{Store, VersionRecord};

pub(crate) use crate::config::Entry;

/// The version and set in force on the DUT, as indices into the campaign's (`None`: unknown,
/// the next switch applies it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct InForce {
    /// The version in force.
    pub(crate) version: Option<usize>,
    /// The config set in force.
    pub(crate) set: Option<usize>,
}

/// Switches the DUT from what is in force (`from`) to `to`.
fn switch_entry(
    switcher: &mut dyn Switcher,
    campaign: &Campaign,
    from: InForce,
    to: Entry,
) -> anyhow::Result<()> {
    if from.version != Some(to.version) {
        let version = &campaign.versions[to.version];
        switcher
            .set_version(version)
            .with_context(|| format!("applying version `{}` under traffic", version.name))?;
    }
    if from.set != Some(to.set) {
        switcher.switch(&campaign.config_sets[to.set])?;
    }
    Ok(())
}

/// A run's entries and the one in force on the DUT: a phase of the same entry as the one
/// before goes on without a switch (each switch costs a dozen commands on a saturated DUT).
pub(crate) struct OnDut {
    /// What the phases alternate, in the order of the plan's names.
    entries: Vec<Entry>,
    /// The entry in force (`None`: none yet, or a switch failed half-way).
    entry: Option<usize>,
    /// The version in force (`None`: unknown, the next switch applies it).
    version: Option<usize>,
}

impl OnDut {
    /// Run `entries`, with `version` in force already (`None`: the first switch applies it).
    pub(crate) fn new(entries: Vec<Entry>, version: Option<usize>) -> Self {
        OnDut {
            entries,
            entry: None,
            version,
        }
    }

    /// Switches the DUT to entry `to`, unless it is in force.
    pub(crate) fn switch_to(
        &mut self,
        switcher: &mut dyn Switcher,
        campaign: &Campaign,
        to: usize,
    ) -> anyhow::Result<()> {
        if self.entry == Some(to) {
            return Ok(());
        }
        let entry = self.entries[to];
        // Taken before the switch: a failed one leaves what is in force unknown.
        let from = InForce {
            version: self.version.take(),
            set: self.entry.take().map(|e| self.entries[e].set),
        };
        switch_entry(switcher, campaign, from, entry)?;
        self.entry = Some(to);
        self.version = Some(entry.version);
        Ok(())
    }
}

/// Records in `lab.json` what each alternated version's switches apply (its sysctls and
/// commands), as an SSH lab records the kernel each version boots between trials.
pub(crate) fn record_versions(store: &Store, campaign: &Campaign) -> anyhow::Result<()> {
    for version in &campaign.versions {
        store
            .record_version(&version.name, VersionRecord::settings(version), None)
            .with_context(|| format!("recording version `{}` in lab.json", version.name))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Design, Runs, Version};

    /// Records what a switch applied.
    #[derive(Default)]
    struct RecordingSwitcher {
        applied: Vec<String>,
    }

    impl Switcher for RecordingSwitcher {
        fn switch(&mut self, entry: &str) -> anyhow::Result<()> {
            self.applied.push(format!("set {entry}"));
            Ok(())
        }
        fn counters(&mut self) -> anyhow::Result<Option<u64>> {
            Ok(None)
        }
        fn set_version(&mut self, version: &Version) -> anyhow::Result<()> {
            self.applied.push(format!("version {}", version.name));
            Ok(())
        }
    }

    fn campaign(alternating: bool) -> Campaign {
        Campaign {
            design: if alternating {
                Design::Alternating
            } else {
                Design::Trials
            },
            versions: ["acct-off", "acct-on"]
                .iter()
                .map(|n| toml::from_str(&format!("name = \"{n}\"")).unwrap())
                .collect(),
            config_sets: vec!["nft-stateless".into(), "/sets/nft-stateful".into()],
            ..Campaign::default()
        }
    }

    #[test]
    fn quick_versions_alternate_as_pairs_with_the_baseline_first() {
        let c = campaign(true);
        let runs = Runs::of(&c);
        assert!(runs.alternates && runs.per_profile() == 1);
        let all = runs.entries(0);
        assert_eq!(all.len(), 4);
        assert_eq!(all[0], Entry { version: 0, set: 0 });
        let names: Vec<String> = all.iter().map(|&e| runs.entry_name(e)).collect();
        assert_eq!(
            names,
            [
                "acct-off.nft-stateless",
                "acct-off.nft-stateful",
                "acct-on.nft-stateless",
                "acct-on.nft-stateful"
            ]
        );
        // One balanced order runs over every pair.
        let order = crate::stats::BalancedOrder::new(all.len()).unwrap();
        let mut seen = order.block(0);
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen, [0, 1, 2, 3]);
    }

    #[test]
    fn other_campaigns_alternate_the_sets_of_one_version() {
        let c = campaign(false);
        let runs = Runs::of(&c);
        assert_eq!(runs.per_profile(), 2);
        let all = runs.entries(1);
        assert_eq!(
            all,
            [Entry { version: 1, set: 0 }, Entry { version: 1, set: 1 }]
        );
        assert_eq!(runs.entry_name(all[1]), "nft-stateful");
        assert_eq!(runs.run_version(1), "acct-on");
        // A directory that measured quick versions in turn keeps that layout.
        let c = campaign(true);
        let in_turn = Runs {
            campaign: &c,
            alternates: false,
        };
        assert_eq!(in_turn.entries(1), all);
        assert_eq!(in_turn.run_version(1), "acct-on");
    }

    #[test]
    fn a_switch_applies_only_what_changes() {
        let c = campaign(true);
        let mut s = RecordingSwitcher::default();
        let (a, b) = (Entry { version: 0, set: 0 }, Entry { version: 1, set: 0 });
        let of = |e: Entry| InForce {
            version: Some(e.version),
            set: Some(e.set),
        };
        switch_entry(&mut s, &c, InForce::default(), a).unwrap();
        switch_entry(&mut s, &c, of(a), b).unwrap();
        let d = Entry { version: 0, set: 1 };
        switch_entry(&mut s, &c, of(b), d).unwrap();
        // A version already in force (set by the run loop) is not applied again.
        let version_only = InForce {
            version: Some(0),
            set: None,
        };
        switch_entry(&mut s, &c, version_only, a).unwrap();
        assert_eq!(
            s.applied,
            [
                "version acct-off",
                "set nft-stateless",
                "version acct-on",
                "version acct-off",
                "set /sets/nft-stateful",
                "set nft-stateless"
            ]
        );
    }
}
