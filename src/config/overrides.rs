//! What `benchlab run`'s command line changes in a campaign (`-n`, `--duration`, `--quick`,
//! `--profile`), merged into it once, at load ([`Campaign::prepare`]), before the one
//! validation.
//!
//! Under the alternating design blocks are the iterations and a run's length is its duration:
//! `-n` is the fewest blocks, `--duration` the longest run.

use std::time::Duration;

use super::{Campaign, Measure};
use crate::error::InputError;

/// The command line's changes to a campaign.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Overrides {
    /// `-n`: iterations per (version, config set, profile); the fewest blocks of an alternating
    /// run.
    pub(crate) iterations: Option<u32>,
    /// `--duration`: traffic per trial; the longest alternating run.
    pub(crate) duration: Option<Duration>,
    /// `--quick`: the campaign shrunk to about a minute.
    pub(crate) quick: bool,
    /// `--profile`: profiling trials, which belong to the trials design.
    pub(crate) profile: bool,
}

impl Overrides {
    /// `e`, a refusal a flag caused, saying so: the file alone was fine.
    pub(crate) fn blamed(e: InputError) -> InputError {
        InputError::new(format!(
            "{e} (with -n/--duration/--quick/--profile applied)"
        ))
    }

    /// Whether the command line changes nothing.
    pub(crate) fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// Applies the changes that follow the design (`--profile` chooses it, before).
    pub(super) fn apply(&self, c: &mut Campaign) {
        if self.quick {
            quicken(c);
        }
        if let Some(n) = self.iterations {
            c.iterations = n;
            if let Some(alt) = &mut c.alternating {
                alt.min_blocks = n as usize;
            }
        }
        if let Some(d) = self.duration {
            c.trial.duration = d;
            if let Some(alt) = &mut c.alternating {
                alt.max_duration = d;
            }
        }
    }
}

/// Blocks of a `--quick` alternating latency run (20 by default: 40 s more per profile).
const QUICK_LATENCY_BLOCKS: u32 = 4;

/// The `--quick` campaign: the given one, shrunk to about a minute (a throughput search to a
/// coarse one, an alternating latency run to a few blocks).
fn quicken(c: &mut Campaign) {
    c.iterations = 3;
    c.trial.duration = Duration::from_secs(5);
    c.trial.warmup = Duration::from_secs(1);
    c.trial.cooldown = Duration::from_secs(1);
    if let Some(alt) = &mut c.alternating {
        alt.max_duration = Duration::from_secs(40);
    }
    if c.profiles.len() > 1 {
        c.profiles.truncate(1);
    }
    if c.profiles.iter().any(|p| p.measure == Measure::Throughput) {
        let mut search = c.search();
        search.quicken();
        c.search = Some(search);
    }
    if c.measures_latency() {
        let mut latency = c.latency();
        latency.blocks = latency.blocks.min(QUICK_LATENCY_BLOCKS);
        c.latency = Some(latency);
    }
}
