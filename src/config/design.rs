//! The measurement design of a campaign (`design = "auto"`, `"trials"` or `"alternating"`)
//! and the alternating design's settings (`[alternating]`).
//!
//! ```toml
//! design = "alternating"    # traffic runs on, the DUT switches config sets in a balanced order
//!
//! [alternating]
//! phase = 0.5               # seconds each config set runs before the next switch
//! settle = 0.1              # seconds dropped after each switch
//! estimator = "p90"         # a phase's value from its 0.05 s windows: mean, median or pNN
//! precision = 1.0           # stop once every comparison's half-width is this (percent)…
//! max_duration = 150        # …or after this many seconds of traffic per profile
//! min_blocks = 8            # blocks before the first look at the precision
//! ```
//!
//! The defaults were chosen on the virtual lab of a 2-vCPU shared VM, from the same raw series
//! reported again with each setting (`PARTS=params RUNS=2 MAX=120 bash benches/alternating.sh`:
//! forwarding against nft-stateless, nft-stateful and iptables-stateful, 120 s per run whatever
//! the precision, the two phase lengths taking turns; idle machine, after the sampler and switch
//! fixes). Half-widths (%) of the three comparisons with the blocks kept at the level held, run
//! 1 | run 2 (the machine was disturbed during run 1's 1 s phases):
//!
//! | phase | settle | estimator | run 1 | run 2 |
//! |---|---|---|---|---|
//! | 0.5 | 0.1 | mean | 3.3 (13) 2.8 (12) 1.8 (13) | 1.6 (23) 1.5 (23) 1.4 (21) |
//! | 0.5 | 0.1 | median | 1.7 (13) 1.7 (13) 1.4 (13) | 0.7 (24) 0.6 (24) 0.7 (24) |
//! | 0.5 | 0.1 | p75 | 1.5 (13) 1.5 (13) 1.3 (13) | 0.6 (24) 0.6 (24) 0.6 (24) |
//! | 0.5 | 0.1 | **p90** | 1.4 (13) 1.2 (13) 1.2 (13) | 0.5 (24) 0.6 (24) 0.5 (24) |
//! | 0.5 | 0.2 | mean | 3.6 (11) 3.3 (9) 1.4 (10) | 1.7 (22) 1.6 (22) 1.4 (20) |
//! | 0.5 | 0.2 | p90 | 1.2 (13) 1.0 (14) 1.3 (14) | 0.5 (24) 0.6 (24) 0.5 (24) |
//! | 0.5 | 0.3 | p90 | 1.5 (13) 1.6 (12) 1.7 (13) | 1.1 (24) 0.9 (24) 0.9 (24) |
//! | 1.0 | 0.1 | p90 | 8.4 (13) 7.5 (13) 6.9 (13) | 0.3 (13) 0.9 (13) 0.7 (13) |
//! | 1.0 | 0.2 | p90 | 8.0 (13) 6.6 (13) 6.4 (13) | 0.3 (13) 0.9 (13) 0.7 (13) |
//!
//! p90 and p75 are the narrowest, the mean the widest; 0.1 s and 0.2 s of settle are alike
//! within the runs' noise, 0.3 s wider; 1 s phases are no narrower when the machine is calm and
//! far wider when it is not, since a disturbed stretch then spoils fewer, longer blocks. An
//! earlier table, made beside a build and before those fixes, ranked them the same way.
//!
//! Short phases give twice the blocks of 1 s ones in the same time, and the estimate is made of
//! blocks; disturbance, which only ever lowers throughput, moves an upper quantile of a phase's
//! windows less than its mean or median (p90 of 8 windows lies between the two highest).
//!
//! The settle time was 0.2 s until switches got faster (the commands run off the DUT's CPU and
//! fewer of them: a switch now takes 0.1 s, half what it did). What a switch disturbs was then
//! read from the windows of the README's first command on an idle machine (inet4, 150 s, 0.2 s
//! settle: each window against the median of its phase's windows from 0.2 s on, medians over
//! about 45 phases per set):
//!
//! | after the switch | forwarding | nft-stateless | nft-stateful | iptables-stateful |
//! |---|---|---|---|---|
//! | 0–50 ms | 0.986 | 0.992 | 1.000 | 0.954 |
//! | 50–100 ms | 0.979 | 0.982 | 1.006 | 0.990 |
//! | 100–150 ms | 1.006 | 0.996 | 1.007 | 0.996 |
//! | 150–200 ms | 0.994 | 1.001 | 1.003 | 1.000 |
//!
//! From 100 ms on the windows are at their phase's level within 1 %, so 0.1 s is dropped and a
//! 0.5 s phase keeps 8 windows instead of 6. A real DUT whose ruleset reload disturbs it longer
//! shows it on the time chart (the first windows after each switch mark, drawn grey when
//! dropped): raise `settle` there.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::seconds::{check, secs};
use crate::error::InputError;
use crate::stats::{BalancedOrder, Estimator, PhaseOptions, StopOptions};

/// How a campaign measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Design {
    /// The default: the alternating design when everything the campaign compares switches
    /// under traffic, the trials design otherwise; settled at load
    /// ([`Campaign::settle_design`](crate::config::Campaign::settle_design)), never run as such.
    #[default]
    Auto,
    /// The seeds' design: one trial per iteration, traffic started and stopped each time; any
    /// version or config set, reboots included.
    Trials,
    /// Traffic of one profile runs without a stop while the DUT switches between the
    /// campaign's entries (config sets, quick versions) in a balanced order; one balanced round
    /// (a block) gives one value per entry.
    Alternating,
}

impl std::fmt::Display for Design {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Design::Auto => "auto",
            Design::Trials => "trials",
            Design::Alternating => "alternating",
        })
    }
}

/// The receiver's sampling interval under the alternating design: a 0.5 s phase less its
/// default settle time (0.1 s) holds 8 windows.
pub(crate) const ALTERNATING_INTERVAL: Duration = Duration::from_millis(50);

/// `[alternating]`: phases, what is dropped, how a phase becomes a value, when to stop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Alternating {
    /// How long each config set runs before the next switch. Default is 0.5 s.
    #[serde(with = "super::seconds")]
    pub(crate) phase: Duration,
    /// What is dropped after each switch (the switch itself and what it disturbs). Default is
    /// 0.1 s.
    #[serde(with = "super::seconds")]
    pub(crate) settle: Duration,
    /// A phase's value from its short windows: `mean`, `median` or `pNN`. Default is `p90`.
    pub(crate) estimator: Estimator,
    /// Target half-width of every comparison, percent. Default is 1.0.
    pub(crate) precision: f64,
    /// Longest a profile's traffic runs. Default is 150 s.
    #[serde(with = "super::seconds")]
    pub(crate) max_duration: Duration,
    /// Blocks before the first look at the precision. Default is 8.
    pub(crate) min_blocks: usize,
}

impl Default for Alternating {
    fn default() -> Self {
        Alternating {
            phase: Duration::from_millis(500),
            settle: Duration::from_millis(100),
            estimator: Estimator::Quantile(0.9),
            precision: 1.0,
            max_duration: Duration::from_secs(150),
            min_blocks: 8,
        }
    }
}

impl Alternating {
    /// How phases become values.
    pub(crate) fn phase_options(&self) -> PhaseOptions {
        PhaseOptions {
            settle_s: secs(self.settle),
            estimator: self.estimator,
            // Half the windows a phase can hold, so that a late switch still leaves a value.
            min_windows: (self.windows_per_phase() / 2).max(2),
            min_window_s: ALTERNATING_INTERVAL.as_secs_f64() * 0.8,
        }
    }

    /// Short windows a phase holds once its settle time is dropped.
    pub(crate) fn windows_per_phase(&self) -> usize {
        let kept = self.phase.saturating_sub(self.settle);
        (kept.as_nanos() / ALTERNATING_INTERVAL.as_nanos()) as usize
    }

    /// When to stop adding blocks.
    pub(crate) fn stop_options(&self) -> StopOptions {
        StopOptions {
            precision_pct: self.precision,
            max_duration: self.max_duration,
            min_blocks: self.min_blocks,
        }
    }

    /// How long a block of `entries` entries takes: each runs twice (the balanced order of
    /// [`BalancedOrder`] folds a Williams row).
    pub(crate) fn block_duration(&self, entries: usize) -> Duration {
        self.phase * BalancedOrder::phases_for(entries) as u32
    }

    /// Checks these settings; the refusal names the file and the key.
    pub(crate) fn validate(&self, origin: &str) -> Result<(), InputError> {
        let bad = |key, what: String| Err(super::bad(origin, key, what));
        check(origin, "alternating.phase", secs(self.phase))?;
        if self.windows_per_phase() < 4 {
            return bad(
                "alternating.settle",
                format!(
                    // `{:?}` keeps 1e300 short.
                    "{:?} s leaves fewer than 4 windows of {} s in a {} s phase; settle less or \
                     make phases longer",
                    secs(self.settle),
                    ALTERNATING_INTERVAL.as_secs_f64(),
                    secs(self.phase)
                ),
            );
        }
        if !(self.precision.is_finite() && self.precision > 0.0 && self.precision <= 100.0) {
            return bad(
                "alternating.precision",
                format!(
                    "must be a half-width in percent above 0, such as 1.0, not {:?}",
                    self.precision
                ),
            );
        }
        check(origin, "alternating.max_duration", secs(self.max_duration))?;
        if !(2..=10_000).contains(&self.min_blocks) {
            return bad(
                "alternating.min_blocks",
                format!("must be 2 to 10000, not {}", self.min_blocks),
            );
        }
        Ok(())
    }
}
