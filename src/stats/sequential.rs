//! The stopping rule of the alternating design: add blocks until every comparison is precise
//! enough or the time is up.
//!
//! After each block the run asks [`StopRule::decide`]. Looking at a 95 % interval after every
//! block and stopping as soon as it is narrow enough makes the reported interval miss more
//! often than 5 %: the run tends to stop when the spread of the blocks so far happens to be
//! small, which is exactly when the interval is too narrow (measured in this module's tests:
//! an A/A run with correlated, disturbed blocks).
//!
//! # Correction: a few planned looks, Bonferroni over them
//! The rule looks only at [`LOOKS`] block counts planned before the run, geometrically spaced
//! from `min_blocks` to the blocks that fit in `max_duration`, and every interval it computes
//! or reports is Student's t at 99 % (ministat's table): 5 looks × 1 % = 5 %, so by the union
//! bound the probability that the interval reported at the stop misses the truth is at most
//! 5 %, whatever made the run stop (precision, time, or a rule added later) and however the
//! noise drifts during the run. Alternatives weighed:
//! - alpha spending (O'Brien–Fleming, Pocock) needs the joint law of the looks, which
//!   correlated disturbance breaks, and quantiles the table does not have;
//! - a confidence sequence (Robbins' normal mixture) allows a look after every block but is
//!   1.5–2.5 times wider at 20–200 blocks;
//! - Stein's two-stage rule is exact for normal blocks but fixes the variance on the first
//!   blocks, and disturbance comes in stretches of minutes.
//!
//! The price is an interval about 1.3 times wider than the naive 95 % one at the same block
//! count (t at 99 % against 95 %), so reaching a precision needs about 1.7 times the blocks;
//! the geometric looks (ratio about 1.5) add at most that ratio again.
//!
//! [`LOOKS`]: crate::stats::sequential::LOOKS

use std::time::Duration;

use thiserror::Error;

use super::paired::{Block, PairedEstimate};
use super::quiet::{quiet_split, Side};
use super::student::Confidence;

/// How many looks the rule takes; with [`LOOK_CONFIDENCE`] they spend a 5 % error rate.
pub(crate) const LOOKS: usize = 5;
/// The confidence of the interval at each look: 1 − 5 % / [`LOOKS`].
pub(crate) const LOOK_CONFIDENCE: Confidence = Confidence::P99;
/// The confidence the reported interval guarantees over all looks, percent.
pub(crate) const FAMILY_LEVEL_PCT: f64 = 95.0;

/// When to stop adding blocks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StopOptions {
    /// Target half-width of every comparison, in percent. Default is 1.0.
    pub precision_pct: f64,
    /// Longest the run may take. Default is 180 s.
    pub max_duration: Duration,
    /// Blocks before the first look (at least 2). Default is 8.
    pub min_blocks: usize,
}

impl Default for StopOptions {
    fn default() -> Self {
        StopOptions {
            precision_pct: 1.0,
            max_duration: Duration::from_secs(180),
            min_blocks: 8,
        }
    }
}

/// Options that cannot make a stopping rule.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum StopError {
    /// The precision is not a positive number.
    #[error("precision {0} % is not a positive half-width: give e.g. precision = 1.0")]
    Precision(f64),
    /// Fewer than 2 blocks cannot give an interval.
    #[error("min_blocks = {0} cannot give an interval: give 2 or more (8 is a good start)")]
    MinBlocks(usize),
    /// A block that takes no time.
    #[error("a block of the alternating design cannot take 0 s: give phases a length")]
    BlockDuration,
}

/// What the run does after a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Measure another block.
    Continue,
    /// Every comparison reached the precision at a planned look.
    Precise,
    /// Another block would not end within `max_duration`, or the planned looks are spent.
    TimeUp,
}

/// The stopping rule with its planned looks.
#[derive(Debug, Clone, PartialEq)]
pub struct StopRule {
    options: StopOptions,
    looks: Vec<usize>,
}

impl StopRule {
    /// The rule for blocks that take about `block_duration` (phases × phase length plus the
    /// switches): the looks are planned from it, before any data.
    pub fn new(options: StopOptions, block_duration: Duration) -> Result<StopRule, StopError> {
        if !(options.precision_pct > 0.0 && options.precision_pct.is_finite()) {
            return Err(StopError::Precision(options.precision_pct));
        }
        if options.min_blocks < 2 {
            return Err(StopError::MinBlocks(options.min_blocks));
        }
        if block_duration.is_zero() {
            return Err(StopError::BlockDuration);
        }
        // A float-to-int cast saturates, so a huge ratio cannot overflow.
        let fit = (options.max_duration.as_secs_f64() / block_duration.as_secs_f64()) as usize;
        let (first, last) = (options.min_blocks, fit.max(options.min_blocks));
        let ratio = last as f64 / first as f64;
        let mut looks: Vec<usize> = (0..LOOKS)
            .map(|j| (first as f64 * ratio.powf(j as f64 / (LOOKS - 1) as f64)).round() as usize)
            .collect();
        looks.dedup();
        Ok(StopRule { options, looks })
    }

    /// The block counts at which the rule may stop for precision, in increasing order.
    pub fn looks(&self) -> &[usize] {
        &self.looks
    }

    /// The corrected estimate of each set against the baseline (sets 1.. of the blocks) over
    /// the blocks at the machine's quiet level ([`super::quiet`]), as the decision uses it and
    /// the report must print it; `None` for a set without 2 such blocks.
    pub fn estimates(&self, blocks: &[Block]) -> Vec<Option<PairedEstimate>> {
        self.split_estimates(blocks, |quiet, _| quiet)
    }

    /// The same estimates over the blocks left out (at other speed levels), at the same
    /// confidence: the cost at those levels, which the report states beside the other.
    pub(crate) fn slowed_estimates(&self, blocks: &[Block]) -> Vec<Option<PairedEstimate>> {
        self.split_estimates(blocks, |_, slowed| slowed)
    }

    /// `pick` chooses the kept blocks' side of the split or the others'.
    fn split_estimates(
        &self,
        blocks: &[Block],
        pick: impl Fn(Side, Side) -> Side,
    ) -> Vec<Option<PairedEstimate>> {
        let sets = blocks.first().map_or(0, |b| b.values().len());
        (1..sets)
            .map(|set| {
                let (quiet, slowed) = quiet_split(blocks, set)?;
                let of = quiet.ratios.len() + slowed.ratios.len();
                let Side {
                    ratios,
                    baseline_pps,
                } = pick(quiet, slowed);
                PairedEstimate::from_log_ratios(
                    &ratios,
                    |df| LOOK_CONFIDENCE.student_t(df),
                    FAMILY_LEVEL_PCT,
                )
                .map(|e| PairedEstimate {
                    of,
                    baseline_pps,
                    ..e
                })
            })
            .collect()
    }

    /// Whether to measure another block, given the blocks so far and the time the run has
    /// taken since its first block began.
    pub fn decide(&self, blocks: &[Block], elapsed: Duration) -> Decision {
        let n = blocks.len();
        if self.looks.contains(&n) {
            let estimates = self.estimates(blocks);
            let precise = !estimates.is_empty()
                && estimates
                    .iter()
                    .all(|e| e.is_some_and(|e| e.half_width_pct() <= self.options.precision_pct));
            if precise {
                return Decision::Precise;
            }
        }
        let spent = self.looks.last().is_some_and(|&last| n >= last);
        // The next block is expected to take as long as the mean block so far.
        let next = match u32::try_from(n) {
            Ok(0) => Duration::ZERO,
            Ok(n) => elapsed / n,
            Err(_) => Duration::ZERO,
        };
        if spent || elapsed.saturating_add(next) > self.options.max_duration {
            Decision::TimeUp
        } else {
            Decision::Continue
        }
    }
}

#[cfg(test)]
mod tests;
