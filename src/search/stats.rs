//! Search targets and the per-load trial statistics that classify a load as a lower or upper
//! bound (the reference's `TargetScaling`, `TargetStat`, `MeasurementDatabase`).
//!
//! Draft terms: a trial is *good* for a target when its loss ratio is at most the target's loss
//! ratio, *bad* otherwise; a load is a *lower bound* when, whatever further trials would give,
//! the bad trial seconds stay within the exceed ratio of the duration sum, an *upper bound* when
//! they cannot; the *relevant upper bound* is the lowest upper bound and the *relevant lower
//! bound* the highest lower bound below it.

use std::collections::BTreeMap;

use super::config::Goal;
use super::grid::{Grid, Load, Width};

/// One search target: a goal's final target or one of its coarser preceding targets.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// Target loss ratio (the goal's).
    pub(crate) loss_ratio: f64,
    /// Target exceed ratio (the goal's).
    pub(crate) exceed_ratio: f64,
    /// Target width in grid steps: the goal's, doubled per preceding level.
    pub(crate) width: Width,
    /// Seconds of the trials this target asks for.
    pub(crate) trial_duration: f64,
    /// Seconds of trials that classify a load.
    pub(crate) duration_sum: f64,
    /// External search step multiplier.
    pub(crate) expansion_coefficient: i64,
}

/// The targets of one goal, coarsest first, the final target last (the reference's chain of
/// `preceding` links, read from its start).
pub(crate) fn targets_of(goal: &Goal, grid: &Grid) -> Vec<Target> {
    let mut width = grid.width(goal.relative_width);
    let final_target = Target {
        loss_ratio: goal.loss_ratio,
        exceed_ratio: goal.exceed_ratio,
        width,
        trial_duration: goal.final_trial_duration,
        duration_sum: goal.duration_sum,
        expansion_coefficient: i64::from(goal.expansion_coefficient),
    };
    let count = goal.preceding_targets;
    // Duration sums shrink geometrically from the goal's to the initial trial duration.
    let multiplier = if count > 0 {
        (goal.initial_trial_duration / goal.duration_sum).powf(1.0 / f64::from(count))
    } else {
        1.0
    };
    let mut chain = vec![final_target.clone()];
    for level in 1..=count {
        let duration_sum = if level == count {
            goal.initial_trial_duration
        } else {
            goal.duration_sum * multiplier.powi(level as i32)
        };
        width *= 2;
        chain.push(Target {
            width,
            trial_duration: goal.final_trial_duration.min(duration_sum),
            duration_sum,
            ..final_target.clone()
        });
    }
    chain.reverse();
    chain
}

/// Trial seconds at one load for one target.
#[derive(Debug, Clone, Default)]
pub(crate) struct TargetStat {
    good_long: f64,
    bad_long: f64,
    good_short: f64,
    bad_short: f64,
    /// Seconds of long trials per loss ratio, by increasing loss ratio.
    long_losses: Vec<(f64, f64)>,
}

impl TargetStat {
    /// Counts a trial of `intended` seconds (long or short for the target) that lasted `seconds`.
    fn add(&mut self, target: &Target, intended: f64, seconds: f64, loss_ratio: f64) {
        let bad = loss_ratio > target.loss_ratio;
        if intended >= target.trial_duration {
            match self
                .long_losses
                .binary_search_by(|(r, _)| r.total_cmp(&loss_ratio))
            {
                Ok(i) => self.long_losses[i].1 += seconds,
                Err(i) => self.long_losses.insert(i, (loss_ratio, seconds)),
            }
            *if bad {
                &mut self.bad_long
            } else {
                &mut self.good_long
            } += seconds;
        } else {
            *if bad {
                &mut self.bad_short
            } else {
                &mut self.good_short
            } += seconds;
        }
    }

    /// (optimistic, pessimistic): whether the load would be a lower bound if every missing trial
    /// second were good, resp. bad. Both true: lower bound; both false: upper bound.
    pub(crate) fn estimates(&self, target: &Target) -> (bool, bool) {
        let coeff = target.exceed_ratio;
        // Good short trials cancel bad short ones in the exceed ratio's proportion.
        let decrease = self.good_short * coeff / (1.0 - coeff);
        let short_excess = self.bad_short - decrease;
        let effective_excess = self.bad_long + short_excess.max(0.0);
        let effective_sum = (self.good_long + effective_excess).max(target.duration_sum);
        let limit = effective_sum * coeff;
        let optimistic = effective_excess <= limit;
        let pessimistic = effective_sum - self.good_long <= limit;
        (optimistic, pessimistic)
    }

    /// The loss ratio the exceed ratio's share of the long trial seconds measured so far
    /// exceed (the median for 0.5), `None` before any long trial.
    pub(crate) fn typical_loss_ratio(&self, target: &Target) -> Option<f64> {
        let total: f64 = self.long_losses.iter().map(|(_, s)| s).sum();
        self.loss_quantile(total, target.exceed_ratio)
    }

    /// The loss ratio of the conditional throughput: the exceed-ratio quantile of the long trial
    /// seconds, the missing duration sum counted as full loss (ties take the lower value).
    pub(crate) fn pessimistic_loss_ratio(&self, target: &Target) -> f64 {
        let all_long = target.duration_sum.max(self.good_long + self.bad_long);
        self.loss_quantile(all_long, target.exceed_ratio)
            .unwrap_or(1.0)
    }

    /// The lowest long-trial loss ratio that, with the lower ones, covers `1 - exceed_ratio` of
    /// `seconds`; `None` when the long trials measured do not cover it (the rest is unmeasured).
    fn loss_quantile(&self, seconds: f64, exceed_ratio: f64) -> Option<f64> {
        let mut remaining = seconds * (1.0 - exceed_ratio);
        self.long_losses.iter().find_map(|&(ratio, lasted)| {
            remaining -= lasted;
            (remaining <= 0.0).then_some(ratio)
        })
    }
}

/// The relevant bounds of one target, as grid loads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Bounds {
    /// Relevant lower bound.
    pub(crate) clo: Option<Load>,
    /// Relevant upper bound.
    pub(crate) chi: Option<Load>,
}

/// Every trial so far, as per-load, per-target statistics; every trial feeds every target.
#[derive(Debug, Clone)]
pub(crate) struct Database {
    targets: Vec<Target>,
    loads: BTreeMap<Load, Vec<TargetStat>>,
}

impl Database {
    /// An empty database over `targets` (indexed as given).
    pub(crate) fn new(targets: Vec<Target>) -> Self {
        Self {
            targets,
            loads: BTreeMap::new(),
        }
    }

    /// The target at `index`.
    pub(crate) fn target(&self, index: usize) -> &Target {
        &self.targets[index]
    }

    /// Adds a trial at `load` that was asked for `intended` seconds and lasted `seconds`.
    pub(crate) fn add(&mut self, load: Load, intended: f64, seconds: f64, loss_ratio: f64) {
        let n = self.targets.len();
        let stats = self
            .loads
            .entry(load)
            .or_insert_with(|| vec![TargetStat::default(); n]);
        for (stat, target) in stats.iter_mut().zip(&self.targets) {
            stat.add(target, intended, seconds, loss_ratio);
        }
    }

    /// The relevant bounds of target `index`: loads scanned upwards, undecided ones skipped, the
    /// first upper bound ends the scan (higher good loads are ignored: conservative).
    pub(crate) fn bounds(&self, index: usize) -> Bounds {
        let target = &self.targets[index];
        let mut bounds = Bounds::default();
        for (&load, stats) in &self.loads {
            let (optimistic, pessimistic) = stats[index].estimates(target);
            if optimistic != pessimistic {
                continue;
            }
            if !optimistic {
                bounds.chi = Some(load);
                break;
            }
            bounds.clo = Some(load);
        }
        bounds
    }

    /// The statistics of target `index` at `load` (empty when never measured).
    pub(crate) fn stat(&self, load: Load, index: usize) -> TargetStat {
        self.loads
            .get(&load)
            .map(|stats| stats[index].clone())
            .unwrap_or_default()
    }
}
