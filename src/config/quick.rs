//! Quick versions (issue 12): a `[[versions]]` whose install is only `sysctls` and/or
//! `commands` (no `install`, no `reboot`) switches in a fraction of a second, so the
//! alternating design alternates it under traffic like a config set.
//!
//! Decisions where the issue was silent: `online` alone does not make a version slow (it only
//! waits for forwarding after a reboot, and a quick version has none); a campaign alternates
//! its versions only when every one of them is quick and there are at least two, otherwise
//! versions run one after another as before (a mix would need a reboot between entries).

use super::{config_set_name, Campaign, Design, Version};

impl Version {
    /// Whether this version's switch needs no reboot: no `install`, no `reboot`.
    pub(crate) fn is_quick(&self) -> bool {
        self.install.is_empty() && self.reboot.is_empty()
    }
}

impl Campaign {
    /// Whether the alternating design alternates the versions too: every version is quick
    /// and there are at least two of them.
    pub(crate) fn alternates_versions(&self) -> bool {
        self.design == Design::Alternating && self.versions_switch()
    }

    /// How this campaign's alternating runs are laid out (a new run's layout).
    pub(crate) fn runs(&self) -> Runs<'_> {
        Runs::of(self)
    }

    /// Whether the versions switch under traffic: at least two, every one quick.
    fn versions_switch(&self) -> bool {
        self.versions.len() > 1 && self.versions.iter().all(Version::is_quick)
    }

    /// How many entries one alternating run switches between, whatever the design: every
    /// (version, set) pair when the versions switch under traffic, else one version's sets.
    pub(crate) fn alternated_entries(&self) -> usize {
        let versions = if self.versions_switch() {
            self.versions.len()
        } else {
            1
        };
        versions * self.config_sets.len()
    }
}

/// One alternated entry: indices into the campaign's versions and config sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Index into `campaign.versions`.
    pub(crate) version: usize,
    /// Index into `campaign.config_sets`.
    pub(crate) set: usize,
}

/// How a campaign's alternating runs are laid out in a results directory: the versions
/// alternated in one run per profile, or measured in turn, one run per version and profile
/// (every campaign before issue 12, and a directory started then: `Store::alternates_versions`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Runs<'c> {
    /// The campaign.
    pub(crate) campaign: &'c Campaign,
    /// Whether its versions alternate in one run per profile.
    pub(crate) alternates: bool,
}

impl<'c> Runs<'c> {
    /// The layout a new run of `campaign` takes.
    pub(crate) fn of(campaign: &'c Campaign) -> Self {
        Self {
            campaign,
            alternates: campaign.alternates_versions(),
        }
    }

    /// How many runs per profile: one when versions alternate, else one per version.
    pub(crate) fn per_profile(&self) -> usize {
        if self.alternates {
            1
        } else {
            self.campaign.versions.len()
        }
    }

    /// The entries the run of version `version` switches between, baseline first: every
    /// (version, set) pair when versions alternate (the run holds them all), else its sets.
    pub(crate) fn entries(&self, version: usize) -> Vec<Entry> {
        let versions = if self.alternates {
            0..self.campaign.versions.len()
        } else {
            version..version + 1
        };
        let sets = self.campaign.config_sets.len();
        versions
            .flat_map(|v| (0..sets).map(move |s| Entry { version: v, set: s }))
            .collect()
    }

    /// An entry's name in results and reports: `<version>.<set>` when versions alternate (the
    /// seeds' ministat file stem), else the set's name.
    pub(crate) fn entry_name(&self, entry: Entry) -> String {
        let set = config_set_name(&self.campaign.config_sets[entry.set]);
        if self.alternates {
            format!("{}.{set}", self.campaign.versions[entry.version].name)
        } else {
            set.to_string()
        }
    }

    /// The version key a run is stored under: the version's name, or every version's name
    /// joined by `+` when they alternate (one directory `alternating/<v1>+<v2>.<profile>/`,
    /// whose phases name their `<version>.<set>` entry).
    pub(crate) fn run_version(&self, version: usize) -> String {
        if self.alternates {
            let names: Vec<&str> = (self.campaign.versions.iter())
                .map(|v| v.name.as_str())
                .collect();
            names.join("+")
        } else {
            self.campaign.versions[version].name.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(name: &str) -> Version {
        toml::from_str(&format!("name = \"{name}\"")).unwrap()
    }

    fn campaign(design: Design, versions: Vec<Version>) -> Campaign {
        Campaign {
            design,
            versions,
            ..Campaign::default()
        }
    }

    #[test]
    fn sysctl_and_command_versions_are_quick() {
        let mut v = version("acct-on");
        v.sysctls
            .insert("net.netfilter.nf_conntrack_acct".into(), "1".into());
        v.commands.push(vec!["true".into()]);
        assert!(v.is_quick());
        let mut installed = version("new-kernel");
        installed.install.push(vec!["cp".into()]);
        assert!(!installed.is_quick());
        let mut rebooted = version("reboot");
        rebooted.reboot.push("reboot".into());
        assert!(!rebooted.is_quick());
    }

    #[test]
    fn only_alternating_campaigns_of_quick_versions_alternate_them() {
        let quick = vec![version("acct-off"), version("acct-on")];
        assert!(campaign(Design::Alternating, quick.clone()).alternates_versions());
        assert!(!campaign(Design::Trials, quick.clone()).alternates_versions());
        assert!(!campaign(Design::Alternating, quick[..1].to_vec()).alternates_versions());
        let mut slow = quick;
        slow[1].reboot.push("reboot".into());
        assert!(!campaign(Design::Alternating, slow).alternates_versions());
    }
}
