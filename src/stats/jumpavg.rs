//! Change-point grouping of a series of runs by minimum description length: a port of FD.io CSIT's
//! jumpavg 0.4.2 (PyPI `jumpavg`, Apache-2.0), written from its behaviour and checked against it by
//! `benches/jumpavg.sh`.
//!
//! The series is cut into groups of consecutive runs, each taken as samples of one normal
//! distribution; among all cuttings, [`classify`](crate::stats::jumpavg::classify) keeps the one
//! whose encoding (every group's size, average, stdev and samples, see `bits::Scale::bits`) takes
//! the fewest bits. A group is a [`Trend::Regression`](crate::stats::jumpavg::Trend::Regression)
//! when its average is below the previous group's (a drop: the series is taken as higher-is-better,
//! e.g. throughput), a [`Trend::Progression`](crate::stats::jumpavg::Trend::Progression) when
//! above; the first group is always [`Trend::Normal`](crate::stats::jumpavg::Trend::Normal).
//!
//! Facts of the reference that callers must know:
//! - the bit counts depend on the largest *sample* of the series (not the largest average), so a
//!   run keeps its samples' maximum in [`RunStats::max`](crate::stats::jumpavg::RunStats::max);
//! - with neither `unit` nor `sbits` (jumpavg's `sbps`), the unit is max / (2^13 − 1): 12
//!   significant bits per sample; a zero `unit` or `sbits` means the same default;
//! - inputs the reference refuses (the largest sample not positive: jumpavg raises ValueError; an
//!   empty series: IndexError) give here one group of every run with 0 bits, or no group;
//! - runs with a NaN or infinite average or stdev make bit counts NaN and the grouping meaningless
//!   (as in the reference), without a panic: callers should leave them out.

/// Merging of statistics and the bit count of a group.
mod bits;
#[cfg(test)]
mod tests;

use bits::{Moments, Scale};

/// Average, standard deviation and size of a run's samples (jumpavg's AvgStdevStats), and their maximum.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunStats {
    /// Population average of the samples.
    pub avg: f64,
    /// Population standard deviation of the samples.
    pub stdev: f64,
    /// Number of samples; a run of none counts for nothing.
    pub size: u64,
    /// Largest sample: jumpavg's scale is the largest sample of the whole series.
    pub max: f64,
}

impl RunStats {
    /// Stats of one run's samples (population stdev, as jumpavg computes it).
    pub fn of(values: &[f64]) -> RunStats {
        let moments = Moments::merge(values.iter().map(|&v| Moments::single(v)));
        // NaN samples never become the maximum, as in the reference's `>` scan.
        let max = values
            .iter()
            .fold(f64::NEG_INFINITY, |m, &v| if v > m { v } else { m });
        RunStats {
            avg: moments.avg,
            stdev: moments.stdev,
            size: moments.size,
            max,
        }
    }

    /// A run of one sample (what jumpavg's classify gets as a plain float).
    pub fn single(value: f64) -> RunStats {
        RunStats {
            avg: value,
            stdev: 0.0,
            size: 1,
            max: value,
        }
    }

    /// The run's statistics as the grouping merges them.
    fn moments(&self) -> Moments {
        Moments {
            size: self.size,
            avg: self.avg,
            stdev: self.stdev,
        }
    }
}

/// What a group's average did against the previous group's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Trend {
    /// The first group, or the same average as the previous group.
    Normal,
    /// A lower average than the previous group's.
    Regression,
    /// A higher average than the previous group's.
    Progression,
}

/// One group of consecutive runs with one average.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Group {
    /// Index of the group's first run in the series.
    pub start: usize,
    /// Number of runs in the group.
    pub len: usize,
    /// Population average of the group's samples.
    pub avg: f64,
    /// Population standard deviation of the group's samples.
    pub(crate) stdev: f64,
    /// Number of samples in the group.
    pub size: u64,
    /// Bits to encode the group given the previous group's average.
    pub bits: f64,
    /// The group's average against the previous group's.
    pub trend: Trend,
}

/// The grouping of a series and its total bit count.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Grouping {
    /// The groups, in series order, covering every run once.
    pub groups: Vec<Group>,
    /// The total bit count the grouping minimises.
    pub bits: f64,
}

/// jumpavg's classify(): groups of consecutive runs, minimum description length. `unit` and
/// `sbits` as jumpavg's optional arguments (None = its defaults).
pub fn classify(runs: &[RunStats], unit: Option<f64>, sbits: Option<f64>) -> Grouping {
    if runs.is_empty() {
        return Grouping {
            groups: Vec::new(),
            bits: 0.0,
        };
    }
    // The reference scans samples with `>` from 0: NaN never wins, the maximum is at least 0.
    let max_value = runs
        .iter()
        .fold(0.0_f64, |m, r| if r.max > m { r.max } else { m });
    let unit = resolve_unit(max_value, unit, sbits);
    let usable = |x: f64| x > 0.0 && x.is_finite();
    if !usable(max_value) || !usable(unit) {
        return whole(runs);
    }
    let mut groups = search(runs, Scale { max_value, unit });
    label(&mut groups.groups);
    groups
}

/// The unit jumpavg counts in: the given one, else max / (2^(sbits+1) − 1) with 12 bits by
/// default (zero stands for "not given", as the reference tests truthiness).
fn resolve_unit(max_value: f64, unit: Option<f64>, sbits: Option<f64>) -> f64 {
    match unit {
        Some(u) if u != 0.0 => u,
        _ => {
            let sbits = sbits.filter(|&s| s != 0.0).unwrap_or(12.0);
            max_value / (2.0_f64.powf(sbits + 1.0) - 1.0)
        }
    }
}

/// One group of every run, for series the reference cannot count bits for.
fn whole(runs: &[RunStats]) -> Grouping {
    let stats = Moments::merge(runs.iter().map(RunStats::moments));
    Grouping {
        groups: vec![Group {
            start: 0,
            len: runs.len(),
            avg: stats.avg,
            stdev: stats.stdev,
            size: stats.size,
            bits: 0.0,
            trend: Trend::Normal,
        }],
        bits: 0.0,
    }
}

/// Labels each group against the previous one; the first against itself, hence Normal.
fn label(groups: &mut [Group]) {
    let Some(first) = groups.first() else {
        return;
    };
    let mut previous = first.avg;
    for group in groups.iter_mut() {
        group.trend = if group.avg < previous {
            Trend::Regression
        } else if group.avg > previous {
            Trend::Progression
        } else {
            Trend::Normal
        };
        previous = group.avg;
    }
}

/// The group still growing at the end of a candidate grouping.
#[derive(Debug, Clone)]
struct Open {
    stats: Moments,
    prev_avg: Option<f64>,
    /// Bits once counted, kept until the group grows: the reference caches them the same way,
    /// and a copy keeps the cached count even though it recomputes the stats (to the last bit,
    /// which matters for near ties).
    cached: Option<f64>,
    start: usize,
    len: usize,
}

impl Open {
    /// The group's bits, counted at most once per content.
    fn bits(&mut self, scale: &Scale) -> f64 {
        let (stats, prev_avg) = (self.stats, self.prev_avg);
        *self
            .cached
            .get_or_insert_with(|| scale.bits(stats, prev_avg))
    }
}

/// A finished group, shared by every candidate grouping that starts with it.
#[derive(Debug, Clone)]
struct Closed {
    stats: Moments,
    bits: f64,
    start: usize,
    len: usize,
    /// The group before, in the arena of closed groups.
    prev: Option<usize>,
}

/// A candidate grouping of the runs so far: closed groups, then the open last one.
#[derive(Debug, Clone)]
struct Candidate {
    closed: Option<usize>,
    bits_closed: f64,
    last: Open,
}

impl Candidate {
    /// The candidate's total bits.
    fn bits(&mut self, scale: &Scale) -> f64 {
        self.bits_closed + self.last.bits(scale)
    }
}

/// The reference's search: for each run, the best grouping ending with a group that starts at
/// that run extends the best grouping so far; every earlier candidate grows its last group by
/// the run, and the candidate with the fewest bits (the newest on ties) becomes the best.
fn search(runs: &[RunStats], scale: Scale) -> Grouping {
    let mut arena: Vec<Closed> = Vec::new();
    let mut candidates: Vec<Candidate> = Vec::with_capacity(runs.len());
    let mut best: Option<usize> = None;
    for (index, run) in runs.iter().enumerate() {
        let run_stats = Moments::merge([run.moments()]);
        let mut fresh = match best {
            None => Candidate {
                closed: None,
                bits_closed: 0.0,
                last: Open {
                    stats: run_stats,
                    prev_avg: None,
                    cached: None,
                    start: index,
                    len: 1,
                },
            },
            Some(b) => extend(&candidates[b], run_stats, index, &scale, &mut arena),
        };
        let mut best_index = candidates.len();
        // The reference counts the fresh candidate's bits at its first comparison, so only when
        // there is an earlier candidate; whether they are cached matters when it is copied.
        let mut best_bits = if candidates.is_empty() {
            f64::NAN
        } else {
            fresh.bits(&scale)
        };
        for (j, candidate) in candidates.iter_mut().enumerate() {
            candidate.last.stats = Moments::merge([candidate.last.stats, run.moments()]);
            candidate.last.len += 1;
            candidate.last.cached = None;
            let bits = candidate.bits(&scale);
            if bits < best_bits {
                best_index = j;
                best_bits = bits;
            }
        }
        candidates.push(fresh);
        best = Some(best_index);
    }
    match best {
        Some(b) => collect(&mut candidates[b], &arena, &scale),
        None => Grouping {
            groups: Vec::new(),
            bits: 0.0,
        },
    }
}

/// A new candidate: the best grouping so far, its last group closed, and a group of one run.
fn extend(
    best: &Candidate,
    run_stats: Moments,
    start: usize,
    scale: &Scale,
    arena: &mut Vec<Closed>,
) -> Candidate {
    // The reference copies the last group before closing it, which recomputes its stats from
    // themselves (possibly an ulp off) but keeps its cached bits.
    let stats = Moments::merge([best.last.stats]);
    let bits = best
        .last
        .cached
        .unwrap_or_else(|| scale.bits(stats, best.last.prev_avg));
    arena.push(Closed {
        stats,
        bits,
        start: best.last.start,
        len: best.last.len,
        prev: best.closed,
    });
    Candidate {
        closed: Some(arena.len() - 1),
        bits_closed: best.bits_closed + bits,
        last: Open {
            stats: run_stats,
            prev_avg: Some(stats.avg),
            cached: None,
            start,
            len: 1,
        },
    }
}

/// The groups of the chosen candidate, in series order, with its total bits.
fn collect(best: &mut Candidate, arena: &[Closed], scale: &Scale) -> Grouping {
    let bits = best.bits(scale);
    let group = |stats: Moments, bits: f64, start: usize, len: usize| Group {
        start,
        len,
        avg: stats.avg,
        stdev: stats.stdev,
        size: stats.size,
        bits,
        trend: Trend::Normal,
    };
    let mut groups = vec![group(
        best.last.stats,
        best.last.bits(scale),
        best.last.start,
        best.last.len,
    )];
    let mut next = best.closed;
    while let Some(index) = next {
        let Some(closed) = arena.get(index) else {
            break;
        };
        groups.push(group(closed.stats, closed.bits, closed.start, closed.len));
        next = closed.prev;
    }
    groups.reverse();
    Grouping { groups, bits }
}
