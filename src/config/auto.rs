//! `design = "auto"` (issue 37), the default of every campaign file: the alternating design
//! whenever everything the campaign compares switches under traffic on its lab, the trials
//! design otherwise.
//!
//! Why it is the default: on a shared machine the trials design compares figures measured
//! minutes apart, and the machine's speed moves by more than the costs users look for (an A/A
//! campaign of the trials design on the project's 2-vCPU VM claimed a difference in some of its
//! runs, `benches/design.sh`); the alternating design compares phases half a second apart.
//!
//! What cannot alternate, and so gets the trials design:
//! - a version that installs or reboots (alongside another version: a single such version is
//!   installed once, and its config sets alternate);
//! - a throughput search (`measure = "throughput"`), which is trial by trial;
//! - profiling trials (`profile = true`), which belong to the trials design;
//! - an SSH lab whose senders' generator counts its own traffic (the alternating design needs
//!   benchlab's receiver, which samples every 0.05 s);
//! - a campaign with one version and one config set: nothing to alternate (its profiles are
//!   compared with one another, trial by trial).
//!
//! The choice is settled when the campaign is loaded, after the command line's `--profile`,
//! and written into `DIR/campaign.toml` as the design in force with `design_auto = true`, so
//! that a results directory keeps its layout whatever a later benchlab would choose, and its
//! report says the design was chosen and why.

use super::{Alternating, Campaign, Design, Measure};

impl Campaign {
    /// The design `auto` gives this campaign, and why, in words.
    pub(crate) fn auto_design(&self) -> (Design, String) {
        if self.profile {
            return (
                Design::Trials,
                "profiling trials (`profile = true`) run in the trials design".into(),
            );
        }
        if let Some(p) = (self.profiles.iter()).find(|p| p.measure == Measure::Throughput) {
            return (
                Design::Trials,
                format!("profile `{}` searches a throughput, trial by trial", p.name),
            );
        }
        if self.versions.len() > 1 {
            if let Some(v) = self.versions.iter().find(|v| !v.is_quick()) {
                return (
                    Design::Trials,
                    format!(
                        "version `{}` installs or reboots: it cannot be switched under traffic",
                        v.name
                    ),
                );
            }
        }
        if let Ok(Some(lab)) = self.lab.ssh_lab() {
            if let Some(generator) = lab.receiving_generator() {
                return (
                    Design::Trials,
                    format!(
                        "the senders' generator `{}` counts its own traffic, and the \
                         alternating design needs benchlab's receiver",
                        generator.name()
                    ),
                );
            }
        }
        if self.alternated_entries() < 2 {
            return (
                Design::Trials,
                "one version and one config set: nothing to switch between".into(),
            );
        }
        let what = match (self.versions.len() > 1, self.config_sets.len() > 1) {
            (true, true) => "its quick versions (sysctls, commands) and config sets",
            (true, false) => "its quick versions (sysctls, commands)",
            _ => "its config sets",
        };
        (Design::Alternating, format!("{what} switch under traffic"))
    }

    /// Settles `design = "auto"` (again, when the campaign's `profile` changed since): the
    /// design in force and the alternating settings it needs. An explicit design stays.
    pub(crate) fn settle_design(&mut self) {
        if self.design != Design::Auto && !self.design_auto {
            return;
        }
        let (design, _) = self.auto_design();
        self.design = design;
        self.design_auto = true;
        match design {
            Design::Alternating => {
                self.alternating.get_or_insert_with(Alternating::default);
            }
            // `[alternating]` was written for the case the campaign alternates.
            _ => self.alternating = None,
        }
    }

    /// Resuming `stored`, a results directory whose design benchlab did not choose (one begun
    /// before `auto` has no `design` key: the trials design), with a file that names no
    /// design: the directory keeps its trials rather than refuse the file as changed.
    pub(crate) fn keep_design_of(&mut self, stored: &Campaign) {
        if self.design_auto && !stored.design_auto && stored.design == Design::Trials {
            self.design = Design::Trials;
            self.design_auto = false;
            self.alternating = None;
        }
    }

    /// Which design runs and why, for `run --check` and the report.
    pub(crate) fn design_reason(&self) -> String {
        if !self.design_auto {
            return "set in the campaign file".into();
        }
        match self.auto_design() {
            (design, why) if design == self.design => format!("chosen by benchlab: {why}"),
            _ => "chosen by an earlier benchlab".into(),
        }
    }

    /// For a trials campaign, what to do when the machine spoiled a verdict: alternate, where
    /// everything it compares switches under traffic; else measure again. `None` for the
    /// alternating design.
    pub(crate) fn trials_advice(&self) -> Option<String> {
        (self.design == Design::Trials).then(|| match self.auto_design() {
            (Design::Alternating, _) => "re-run with design = \"alternating\"".into(),
            _ => "re-run on a quieter machine, or with more iterations".into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dut::KNOWN_PRESETS;

    fn load(text: &str) -> Campaign {
        Campaign::from_toml(text, "c.toml", KNOWN_PRESETS).unwrap()
    }

    const TWO_QUICK: &str = "config_sets = [\"nft-stateful\"]\n\
        [[versions]]\nname = \"off\"\nsysctls = { \"net.netfilter.nf_conntrack_acct\" = \"0\" }\n\
        [[versions]]\nname = \"on\"\nsysctls = { \"net.netfilter.nf_conntrack_acct\" = \"1\" }\n";

    #[test]
    fn what_switches_under_traffic_alternates() {
        let c = load("");
        assert_eq!((c.design, c.design_auto), (Design::Alternating, true));
        assert_eq!(c.alternating, Some(Alternating::default()));
        assert!(c
            .design_reason()
            .contains("config sets switch under traffic"));
        let c = load(TWO_QUICK);
        assert_eq!(c.design, Design::Alternating);
        assert!(
            c.design_reason().contains("quick versions"),
            "{}",
            c.design_reason()
        );
    }

    #[test]
    fn what_cannot_alternate_runs_trials_and_says_why() {
        let cases = [
            (
                TWO_QUICK.replace("name = \"on\"", "name = \"on\"\nreboot = [\"reboot\"]"),
                "version `on` installs or reboots",
            ),
            ("profile = true\n".to_string(), "profiling trials"),
            (
                "[[profiles]]\nname = \"t\"\naf = \"inet4\"\nmeasure = \"throughput\"\n".into(),
                "searches a throughput",
            ),
            (
                "config_sets = [\"forwarding\"]\n".into(),
                "nothing to switch between",
            ),
        ];
        for (text, why) in &cases {
            let c = load(text);
            assert_eq!(c.design, Design::Trials, "{text}");
            assert!(c.alternating.is_none());
            assert!(c.design_reason().contains(why), "{}", c.design_reason());
        }
    }

    #[test]
    fn an_explicit_design_wins_and_a_settled_one_is_settled_again_when_profile_changes() {
        let c = load("design = \"trials\"\n");
        assert_eq!((c.design, c.design_auto), (Design::Trials, false));
        assert_eq!(c.design_reason(), "set in the campaign file");
        // A table the chosen design will not use is still checked.
        let bad = Campaign::from_toml(
            "config_sets = [\"forwarding\"]\n[alternating]\nphase = 0.1\n",
            "c.toml",
            KNOWN_PRESETS,
        );
        assert!(bad.unwrap_err().to_string().contains("alternating.phase"));
        let mut c = load("[alternating]\nmax_duration = 60\n");
        assert_eq!(
            c.alternating.as_ref().unwrap().max_duration,
            std::time::Duration::from_secs(60)
        );
        c.profile = true;
        c.settle_design();
        assert_eq!((c.design, &c.alternating), (Design::Trials, &None));
        // Written out and read back: the design in force, still known as benchlab's choice.
        let again = load(&c.to_toml());
        assert_eq!((again.design, again.design_auto), (Design::Trials, true));
    }

    #[test]
    fn a_directory_begun_before_auto_keeps_its_trials_when_resumed() {
        let mut file = load("");
        let mut legacy = file.clone();
        (legacy.design, legacy.design_auto, legacy.alternating) = (Design::Trials, false, None);
        file.keep_design_of(&legacy);
        assert_eq!(file.to_toml(), legacy.to_toml());
        // A directory that recorded benchlab's choice is compared key by key, as before.
        let mut file = load("");
        let mut chosen = load("profile = true\n");
        chosen.profile = false;
        file.keep_design_of(&chosen);
        assert_eq!(file.design, Design::Alternating);
    }
}
