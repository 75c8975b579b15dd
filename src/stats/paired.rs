//! Block statistics of the alternating design: the paired estimate of each config set against
//! the baseline.
//!
//! One balanced round of the order is one **block**, with one value per set: the mean of the
//! set's phase values in that block (the order places each set's phases symmetrically around
//! the block's centre, so a linear drift adds the same to every set). Per block, the log ratio
//! `ln(set / baseline)` compares two values measured seconds apart under the same disturbance;
//! the estimate is the mean of the per-block log ratios with Student's t interval (ministat's
//! table, [`Confidence::student_t`]), back-transformed to a percentage change:
//! `nft-stateful vs forwarding: −32.4 % ± 0.9 % (paired, 95 %, 180 blocks)`.
//! Log ratios make the estimate symmetric (a set twice as fast and one half as fast are equally
//! far from the baseline) and turn the multiplicative disturbance into an additive one.

use std::fmt;

use thiserror::Error;

use super::phase::PhaseValue;
use super::student::{Confidence, MeanInterval};
use crate::units::format_pps;

/// One block: one value per config set (index 0 the baseline), in packets per second.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    values: Vec<f64>,
}

/// Why the phases of a block do not make a block.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum BlockError {
    /// A phase has no value: it kept too few short windows.
    #[error(
        "the phase of set {set} switched at {switched_s:.3} s kept only {windows} short windows: \
         the block is incomplete; lengthen the phases or shorten the settle time"
    )]
    NoValue {
        /// The phase's config set.
        set: usize,
        /// Its switch time, seconds since the start of the run.
        switched_s: f64,
        /// Short windows it kept.
        windows: usize,
    },
    /// A set has no phase in the block.
    #[error("the block has no phase of set {set}: every set needs a value in every block")]
    MissingSet {
        /// The config set without a phase.
        set: usize,
    },
    /// A phase names a set beyond the compared ones.
    #[error("a phase names set {set}, but only {sets} config sets are compared")]
    UnknownSet {
        /// The phase's set index.
        set: usize,
        /// How many sets are compared.
        sets: usize,
    },
    /// A value is not a positive rate, so it has no log ratio.
    #[error(
        "set {set} forwarded {value} pps in a block: a ratio needs a positive rate; \
         check that traffic reached the receiver"
    )]
    NotPositive {
        /// The config set.
        set: usize,
        /// Its value.
        value: f64,
    },
}

impl Block {
    /// A block from one value per set (pps); each must be a positive finite rate.
    pub(crate) fn new(values: Vec<f64>) -> Result<Block, BlockError> {
        if let Some((set, &value)) = values
            .iter()
            .enumerate()
            .find(|(_, v)| !(v.is_finite() && **v > 0.0))
        {
            return Err(BlockError::NotPositive { set, value });
        }
        Ok(Block { values })
    }

    /// The block of `sets` config sets made of one block's phases: each set's value is the
    /// mean of its phases' values.
    pub fn from_phases(phases: &[PhaseValue], sets: usize) -> Result<Block, BlockError> {
        let mut sums = vec![(0.0, 0usize); sets];
        for phase in phases {
            let set = phase.span.set;
            let value = phase.value.ok_or(BlockError::NoValue {
                set,
                switched_s: phase.span.switched_s,
                windows: phase.windows,
            })?;
            let slot = sums
                .get_mut(set)
                .ok_or(BlockError::UnknownSet { set, sets })?;
            slot.0 += value;
            slot.1 += 1;
        }
        let values = sums
            .iter()
            .enumerate()
            .map(|(set, &(sum, n))| match n {
                0 => Err(BlockError::MissingSet { set }),
                n => Ok(sum / n as f64),
            })
            .collect::<Result<Vec<f64>, BlockError>>()?;
        Block::new(values)
    }

    /// The value of each set, pps (index 0 the baseline): a block is one ministat iteration.
    pub(crate) fn values(&self) -> &[f64] {
        &self.values
    }

    /// `ln(value[set] / value[0])`, or `None` for a set the block does not have.
    pub(crate) fn log_ratio(&self, set: usize) -> Option<f64> {
        Some((self.values.get(set)? / self.values[0]).ln())
    }
}

/// A set's paired change against the baseline, with its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairedEstimate {
    /// Blocks the estimate is made of.
    pub(crate) blocks: usize,
    /// Blocks measured, those left out included (see [`super::quiet`]).
    pub(crate) of: usize,
    /// Mean of the per-block log ratios.
    pub mean_log: f64,
    /// Half-width of the interval on the log scale: `t · s / √n`.
    pub half_width_log: f64,
    /// The Student's t critical value used.
    pub(crate) t: f64,
    /// Confidence the interval is stated at, percent (95.0).
    pub(crate) level_pct: f64,
    /// The change, percent: `100 (e^mean − 1)`.
    pub change_pct: f64,
    /// Lower end of the interval, percent change.
    pub(crate) low_pct: f64,
    /// Upper end of the interval, percent change.
    pub(crate) high_pct: f64,
    /// The baseline's mean rate over the blocks used, packets/s: the machine's speed level the
    /// estimate holds at (`None` when not known).
    pub(crate) baseline_pps: Option<f64>,
}

impl PairedEstimate {
    /// The estimate of the mean of `log_ratios` with critical value `t(df)` for `df = n − 1`,
    /// stated at `level_pct`; `None` with fewer than 2 ratios or a non-finite one.
    pub(crate) fn from_log_ratios(
        log_ratios: &[f64],
        t: impl Fn(usize) -> f64,
        level_pct: f64,
    ) -> Option<PairedEstimate> {
        let MeanInterval {
            n,
            mean,
            half_width: half,
            t,
        } = MeanInterval::of(log_ratios, t)?;
        let pct = |log: f64| 100.0 * log.exp_m1();
        Some(PairedEstimate {
            blocks: n,
            of: n,
            mean_log: mean,
            half_width_log: half,
            t,
            level_pct,
            change_pct: pct(mean),
            low_pct: pct(mean - half),
            high_pct: pct(mean + half),
            baseline_pps: None,
        })
    }

    /// The half-width in percent printed after `±`: half the interval's span (the interval is
    /// slightly asymmetric around the change once back-transformed; `low_pct`/`high_pct` are
    /// exact).
    pub fn half_width_pct(&self) -> f64 {
        (self.high_pct - self.low_pct) / 2.0
    }

    /// Whether the interval excludes 0: the change is significant at the stated confidence.
    pub fn is_significant(&self) -> bool {
        self.low_pct > 0.0 || self.high_pct < 0.0
    }

    /// The change and its half-width, `−32.4 % ± 0.9 %`, or its interval, `−18.1 % [−36.1 %,
    /// +5.0 %]`, when that is visibly asymmetric (wide intervals); one decimal unless the
    /// formatter asks for a precision.
    pub(crate) fn change(&self) -> Change<'_> {
        Change(self)
    }

    /// The report line `set vs baseline: −32.4 % ± 0.9 % (paired, 95 %, 180 blocks)` (`171 of
    /// 180 blocks` when some were left out); one
    /// decimal unless the formatter asks for a precision (`{:.2}`).
    pub fn line<'a>(&'a self, set: &'a str, baseline: &'a str) -> PairedLine<'a> {
        PairedLine {
            estimate: self,
            set,
            baseline,
        }
    }
}

/// The paired estimate of `set` against the baseline over `blocks`, with Student's t at
/// `confidence` (ministat's table); `None` with fewer than 2 blocks or a set beyond them.
pub fn paired(blocks: &[Block], set: usize, confidence: Confidence) -> Option<PairedEstimate> {
    let ratios = blocks
        .iter()
        .map(|b| b.log_ratio(set))
        .collect::<Option<Vec<f64>>>()?;
    PairedEstimate::from_log_ratios(&ratios, |df| confidence.student_t(df), confidence.percent())
}

/// A paired estimate's change and half-width, displayed as `−32.4 % ± 0.9 %`.
#[derive(Debug, Clone, Copy)]
pub struct Change<'a>(&'a PairedEstimate);

impl fmt::Display for Change<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = self.0;
        let (below, above) = (e.change_pct - e.low_pct, e.high_pct - e.change_pct);
        let half = e.half_width_pct();
        let decimals = decimals(half, f.precision().unwrap_or(1));
        // Back-transformed, a wide interval is asymmetric: `−18.1 % ± 20.5 %` reads as −38.6 to
        // +2.4 % when the interval is −36.1 to +5.0 %, and near 0 `±` could even misstate
        // whether it holds 0. Such an interval is printed as it is.
        let misread =
            (e.change_pct - half > 0.0 || e.change_pct + half < 0.0) != e.is_significant();
        if misread || (below - above).abs() > 0.1 * half {
            return write!(
                f,
                "{} % [{} %, {} %]",
                signed(e.change_pct, decimals),
                signed(e.low_pct, decimals),
                signed(e.high_pct, decimals)
            );
        }
        write!(
            f,
            "{} % ± {:.decimals$} %",
            signed(e.change_pct, decimals),
            half
        )
    }
}

/// A paired estimate with its names, displayed as the report line.
#[derive(Debug, Clone, Copy)]
pub struct PairedLine<'a> {
    estimate: &'a PairedEstimate,
    set: &'a str,
    baseline: &'a str,
}

impl fmt::Display for PairedLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let decimals = f.precision().unwrap_or(1);
        let e = self.estimate;
        write!(
            f,
            "{} vs {}: {:.decimals$} (paired, {} %, ",
            self.set,
            self.baseline,
            e.change(),
            e.level_pct,
        )?;
        if e.of > e.blocks {
            write!(f, "{} of {} blocks", e.blocks, e.of)?;
        } else {
            write!(f, "{} blocks", e.blocks)?;
        }
        match e.baseline_pps {
            Some(pps) => write!(f, ", {} at {})", self.baseline, format_pps(pps)),
            None => write!(f, ")"),
        }
    }
}

/// The decimals that show a change of half-width `half` (percent): at least `least`, and enough
/// for one significant digit of `half`, so that a difference of 0.003 % ± 0.002 % between two
/// 14.8 Mpps series does not read `0.00 % ± 0.00 %` beside a verdict that it is significant.
pub(crate) fn decimals(half: f64, least: usize) -> usize {
    if !(half.is_finite() && half > 0.0) {
        return least;
    }
    // Six is ppm of a percent, past any rate a generator holds.
    let needed = (-half.log10().floor()).clamp(0.0, 6.0) as usize;
    least.max(needed)
}

/// `value` with `decimals` decimals and a typographic sign (`−32.4`, `+1.2`); no sign when it
/// rounds to zero.
pub(crate) fn signed(value: f64, decimals: usize) -> String {
    let magnitude = format!("{:.decimals$}", value.abs());
    if magnitude.bytes().all(|b| b == b'0' || b == b'.') {
        magnitude
    } else if value < 0.0 {
        format!("\u{2212}{magnitude}")
    } else {
        format!("+{magnitude}")
    }
}

#[cfg(test)]
pub(crate) mod tests;
