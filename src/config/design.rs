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

use crate::stats::{Estimator, PhaseOptions, StopOptions};

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
/// settle time still holds 6 windows.
pub const ALTERNATING_INTERVAL: Duration = Duration::from_millis(50);

/// `[alternating]`: phases, what is dropped, how a phase becomes a value, when to stop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Alternating {
    /// Seconds each config set runs before the next switch. Default is 0.5.
    pub phase: f64,
    /// Seconds dropped after each switch (the switch itself and what it disturbs). Default is
    /// 0.1.
    pub settle: f64,
    /// A phase's value from its short windows: `mean`, `median` or `pNN`. Default is `p90`.
    pub estimator: String,
    /// Target half-width of every comparison, percent. Default is 1.0.
    pub precision: f64,
    /// Longest a profile's traffic runs, seconds. Default is 150.
    pub max_duration: f64,
    /// Blocks before the first look at the precision. Default is 8.
    pub min_blocks: usize,
}

impl Default for Alternating {
    fn default() -> Self {
        Alternating {
            phase: 0.5,
            settle: 0.1,
            estimator: "p90".into(),
            precision: 1.0,
            max_duration: 150.0,
            min_blocks: 8,
        }
    }
}

impl Alternating {
    /// How phases become values (the estimator was checked at load; an unknown one falls back
    /// to the default rather than panic).
    pub fn phase_options(&self) -> PhaseOptions {
        let defaults = PhaseOptions::default();
        PhaseOptions {
            settle_s: self.settle,
            estimator: self
                .estimator
                .parse::<Estimator>()
                .unwrap_or(defaults.estimator),
            // Half the windows a phase can hold, so that a late switch still leaves a value.
            min_windows: (self.windows_per_phase() / 2).max(2),
            min_window_s: ALTERNATING_INTERVAL.as_secs_f64() * 0.8,
        }
    }

    /// Short windows a phase holds once its settle time is dropped.
    pub fn windows_per_phase(&self) -> usize {
        // The epsilon keeps 0.2 s / 0.05 s at 4 despite binary fractions.
        ((self.phase - self.settle) / ALTERNATING_INTERVAL.as_secs_f64() + 1e-9).floor() as usize
    }

    /// When to stop adding blocks.
    pub fn stop_options(&self) -> StopOptions {
        StopOptions {
            precision_pct: self.precision,
            max_duration: Duration::try_from_secs_f64(self.max_duration)
                .unwrap_or(Duration::from_secs(150)),
            min_blocks: self.min_blocks,
        }
    }

    /// How long a block of `sets` config sets takes: each set runs twice (the balanced order
    /// of `campaign::order` folds a Williams row).
    pub fn block_duration(&self, sets: usize) -> Duration {
        self.phase_duration() * (2 * sets) as u32
    }

    /// The phase length.
    pub fn phase_duration(&self) -> Duration {
        Duration::try_from_secs_f64(self.phase).unwrap_or(Duration::from_millis(500))
    }

    /// What is wrong with these settings, as `(key, problem)`.
    pub fn problem(&self) -> Option<(&'static str, String)> {
        if let Err(e) = self.estimator.parse::<Estimator>() {
            return Some(("alternating.estimator", e.to_string()));
        }
        if !(self.phase.is_finite() && (0.2..=60.0).contains(&self.phase)) {
            return Some((
                "alternating.phase",
                format!("must be 0.2 to 60 seconds, not {:?}", self.phase),
            ));
        }
        if !(self.settle.is_finite() && self.settle >= 0.0) {
            return Some((
                "alternating.settle",
                format!("must be 0 seconds or more, not {:?}", self.settle),
            ));
        }
        if self.windows_per_phase() < 4 {
            return Some((
                "alternating.settle",
                format!(
                    // `{:?}` keeps 1e300 short.
                    "{:?} s leaves fewer than 4 windows of {} s in a {} s phase; settle less or \
                     make phases longer",
                    self.settle,
                    ALTERNATING_INTERVAL.as_secs_f64(),
                    self.phase
                ),
            ));
        }
        if !(self.precision.is_finite() && self.precision > 0.0 && self.precision <= 100.0) {
            return Some((
                "alternating.precision",
                format!(
                    "must be a half-width in percent above 0, such as 1.0, not {:?}",
                    self.precision
                ),
            ));
        }
        if !(self.max_duration.is_finite() && (1.0..=86_400.0).contains(&self.max_duration)) {
            return Some((
                "alternating.max_duration",
                format!("must be 1 to 86400 seconds, not {:?}", self.max_duration),
            ));
        }
        if !(2..=10_000).contains(&self.min_blocks) {
            return Some((
                "alternating.min_blocks",
                format!("must be 2 to 10000, not {}", self.min_blocks),
            ));
        }
        None
    }
}
