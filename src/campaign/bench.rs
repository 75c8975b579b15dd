//! What the run loop and the measurement designs drive: a [`Bench`] (a lab kind), the
//! [`Switcher`] that changes config sets under traffic, and the [`Event`]s they report. Kept
//! apart from `run` so that the designs (`trials`, `alternating`, `throughput`), which `run`
//! hands each unit to, import it without importing `run` back.
//!
//! [`Bench`]: crate::campaign::bench::Bench
//! [`Switcher`]: crate::campaign::bench::Switcher
//! [`Event`]: crate::campaign::bench::Event

use std::time::Duration;

use super::trial::{Rig, TrialSpec};
use crate::cancel::Cancel;
use crate::config::Version;
use crate::stats::PairedEstimate;
use crate::store::{SampleRow, TrialKey, TrialMeta};
use crate::traffic::latency::Probes;

/// A lab that can run trials: the virtual lab, or real hosts over SSH. It switches versions
/// and config sets and hands out the parts of a trial; the trial procedure is
/// [`trial::run`](super::trial::run), the same for every lab.
pub trait Bench {
    /// Puts `version` on the DUT (settings on the virtual lab; install and reboot on real labs);
    /// a long wait (a reboot) ends early when `cancel` is raised.
    fn set_version(&mut self, version: &Version, cancel: &Cancel) -> anyhow::Result<()>;
    /// Applies a config set (a built-in name or a directory), removing the previous one.
    fn set_config(&mut self, entry: &str) -> anyhow::Result<()>;
    /// The DUT, senders, receiver and profiler of one trial of `spec`.
    fn rig(&mut self, spec: &TrialSpec<'_>) -> anyhow::Result<Rig<'_>>;
    /// The rig of an alternating run of `spec` (its receiver sampling every
    /// [`ALTERNATING_INTERVAL`](crate::config::ALTERNATING_INTERVAL)) and what switches the
    /// DUT's config sets while its traffic flows. A lab that cannot says so.
    fn alternating(
        &mut self,
        _spec: &TrialSpec<'_>,
    ) -> anyhow::Result<(Rig<'_>, Box<dyn Switcher + '_>)> {
        anyhow::bail!("this lab cannot run the alternating design: use design = \"trials\"")
    }
    /// Facts about the lab for `lab.json` (hosts, CPUs, kernel, tools, rulesets).
    fn facts(&mut self) -> anyhow::Result<crate::store::LabRecord>;
    /// The latency floor: `rate_pps` probes for `duration` from the generator straight to the
    /// receiver, no DUT between (`lab::floor`); `Err` says why the lab cannot measure it.
    fn floor(&mut self, _rate_pps: u64, _duration: Duration) -> Result<Probes, String> {
        Err("this lab has no path from its generator to its receiver that bypasses the DUT".into())
    }
    /// Takes the lab down at the end of a campaign, saying what failed (dropping it instead
    /// cleans up as well as it can, but cannot say): nothing to do for a lab with no state.
    fn down(self: Box<Self>) -> anyhow::Result<()> {
        Ok(())
    }
}

/// A bench lent for a campaign (a test reading its mock's record afterwards): its owner takes
/// it down.
#[cfg(test)]
impl<B: Bench + ?Sized> Bench for &mut B {
    fn set_version(&mut self, version: &Version, cancel: &Cancel) -> anyhow::Result<()> {
        (**self).set_version(version, cancel)
    }
    fn set_config(&mut self, entry: &str) -> anyhow::Result<()> {
        (**self).set_config(entry)
    }
    fn rig(&mut self, spec: &TrialSpec<'_>) -> anyhow::Result<Rig<'_>> {
        (**self).rig(spec)
    }
    fn alternating(
        &mut self,
        spec: &TrialSpec<'_>,
    ) -> anyhow::Result<(Rig<'_>, Box<dyn Switcher + '_>)> {
        (**self).alternating(spec)
    }
    fn facts(&mut self) -> anyhow::Result<crate::store::LabRecord> {
        (**self).facts()
    }
    fn floor(&mut self, rate_pps: u64, duration: Duration) -> Result<Probes, String> {
        (**self).floor(rate_pps, duration)
    }
}

/// Progress of a campaign, for the CLI to show.
#[derive(Debug, Clone)]
pub enum Event<'a> {
    /// The campaign starts: `todo` trials to run out of `total` (the rest were done before).
    Start {
        /// Trials in the campaign.
        total: usize,
        /// Trials still to run.
        todo: usize,
    },
    /// A trial starts.
    TrialStart {
        /// Which.
        key: &'a TrialKey,
        /// Attempt number, from 1.
        attempt: u32,
    },
    /// One second of the running trial.
    Second {
        /// The sample.
        sample: &'a SampleRow,
    },
    /// An attempt failed, or was unsteady, and will be measured once more.
    Retry {
        /// Which.
        key: &'a TrialKey,
        /// Why.
        reason: &'a str,
    },
    /// A throughput search is about to run a trial: its bounds and width per goal.
    Search {
        /// Which iteration.
        key: &'a TrialKey,
        /// Where the search stands.
        state: &'a crate::search::SearchState,
    },
    /// A trial is stored.
    TrialDone {
        /// Which.
        key: &'a TrialKey,
        /// What was stored.
        meta: &'a TrialMeta,
    },
    /// A block of an alternating run is stored.
    Block {
        /// Version of the run.
        version: &'a str,
        /// Profile of the run.
        profile: &'a str,
        /// Block number, from 1.
        block: u32,
        /// Why the block is left out of the estimates (a phase with too few windows, other
        /// programs on the lab's CPUs), when it is.
        problem: Option<String>,
        /// Each set against the baseline so far.
        estimates: &'a Estimates,
    },
    /// The latency floor was measured (or why it was not): what the measurement itself adds.
    Floor {
        /// As `lab.json` records it.
        floor: &'a crate::store::FloorRecord,
    },
    /// An alternating run ended.
    RunDone {
        /// Version of the run.
        version: &'a str,
        /// Profile of the run.
        profile: &'a str,
        /// Why: `precise` or `time up`.
        ended: &'a str,
        /// Each set against the baseline.
        estimates: &'a Estimates,
    },
}

/// Switches the DUT between config sets while traffic flows.
pub trait Switcher {
    /// Removes the set in force (checking it is gone), applies `entry` and verifies it.
    fn switch(&mut self, entry: &str) -> anyhow::Result<()>;
    /// Packets the pass rules of the set in force counted since it was applied; `None` for a
    /// set without such rules.
    fn counters(&mut self) -> anyhow::Result<Option<u64>>;
    /// Applies a quick version's sysctls and commands (restoring the previous version's
    /// sysctls first) while traffic flows. A lab that cannot says so.
    fn set_version(&mut self, version: &Version) -> anyhow::Result<()> {
        anyhow::bail!(
            "this lab cannot switch version `{}` under traffic: use design = \"trials\"",
            version.name
        )
    }
}

/// The comparisons of a run so far: each set after the baseline with its corrected estimate.
pub(crate) type Estimates = Vec<(String, Option<PairedEstimate>)>;
