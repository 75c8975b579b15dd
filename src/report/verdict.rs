//! The verdicts: each comparison of a report once, with its best interval (the paired estimate
//! where the alternating design has one, else ministat's difference of the iterations), whether
//! it shows a difference, on how much data and at what speed, in one word; the throughput's
//! first, then latency's ([`Metric`](crate::report::verdict::Metric): lower is better there,
//! "higher latency" or "lower latency"). Computed once in
//! [`Report::build`](crate::report::Report::build); the README's first table, results.json's
//! `verdicts` and the terminal's last lines all render this one list, so that a reader meets
//! one figure per comparison, the same everywhere.

use serde::Serialize;

use crate::ingest::alternating::AlternatingRun;
use crate::ingest::benchlab::latency::ProbeTrial;
use crate::stats::paired::{decimals, signed};
use crate::stats::{Comparison, PairedEstimate};
use crate::units::format_pps;

use super::compare::ComparisonBlock;
use super::Report;

/// What a comparison shows, in one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Finding {
    /// The compared set forwards more than the reference: the interval lies above 0.
    Faster,
    /// The compared set forwards less than the reference: the interval lies below 0.
    Slower,
    /// The compared series' probes took longer than the reference's: the interval of a latency
    /// comparison lies above 0.
    HigherLatency,
    /// The compared series' probes took less time: the interval lies below 0.
    LowerLatency,
    /// The interval holds 0: no difference larger than its half-width was shown.
    NoDifference,
    /// A significant difference the machine spoiled: no verdict, no direction.
    Unreliable,
    /// Too few blocks for an interval.
    NoEstimate,
}

/// The interval a verdict rests on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Estimate {
    /// The alternating design's paired estimate of the per-block log ratios.
    Paired(PairedEstimate),
    /// ministat's Student's t difference of the iterations (blocks taken as iterations under
    /// the alternating design), with the iterations of each side.
    Unpaired(Comparison, [usize; 2]),
    /// A paired comparison with too few blocks for an interval.
    Missing,
}

/// What a verdict compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Metric {
    /// The rate forwarded: higher is better.
    Throughput,
    /// A percentile of the trials' one-way latency: lower is better.
    Latency(Quantile),
}

impl Metric {
    /// As results.json's `metric` names it: `throughput`, `latency_p99`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Metric::Throughput => "throughput",
            Metric::Latency(Quantile::P50) => "latency_p50",
            Metric::Latency(Quantile::P99) => "latency_p99",
            Metric::Latency(Quantile::InDutP50) => "latency_in_dut_p50",
        }
    }
}

/// A percentile of the trials that the latency comparisons compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quantile {
    /// The median.
    P50,
    /// The 99th percentile.
    P99,
    /// The median of the established probes' time in the DUT, its ingress to its egress,
    /// where the DUT recorded it (`traffic::latency::ingress`).
    InDutP50,
}

impl Quantile {
    /// The percentiles compared, in the order their blocks and verdicts come: the one-way
    /// tail first, which load moves most, then the median, then the time in the DUT's median,
    /// which the host's placement of a VM's CPUs moves least.
    pub(crate) const COMPARED: [Quantile; 3] = [Quantile::P99, Quantile::P50, Quantile::InDutP50];

    /// `P50`, `P99`, `P50 in the DUT`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Quantile::P50 => "P50",
            Quantile::P99 => "P99",
            Quantile::InDutP50 => "P50 in the DUT",
        }
    }

    /// Its name in a dataset's: `p50`, `p99`, `p50-in-dut`.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Quantile::P50 => "p50",
            Quantile::P99 => "p99",
            Quantile::InDutP50 => "p50-in-dut",
        }
    }

    /// What it is of, in words: `P99 latency`, `P50 latency in the DUT`.
    pub(crate) fn what(self) -> String {
        match self {
            Quantile::InDutP50 => "P50 latency in the DUT".to_string(),
            q => format!("{} latency", q.name()),
        }
    }

    /// Its value in trial `t`, ns: over its window; `None` where it has none (no probe, or no
    /// time in the DUT recorded).
    pub(crate) fn of(self, t: &ProbeTrial) -> Option<u64> {
        match self {
            Quantile::P50 => t.established.window.map(|p| p.p50_ns),
            Quantile::P99 => t.established.window.map(|p| p.p99_ns),
            Quantile::InDutP50 => t.established.in_dut.map(|p| p.p50_ns),
        }
    }
}

/// One comparison's verdict.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Verdict {
    /// What it compares.
    pub(crate) metric: Metric,
    /// Display names of what the comparison holds fixed (`default`, `inet4`).
    pub(crate) context: Vec<String>,
    /// The reference series' name (`default.forwarding.inet4`), as results.json's `series`.
    pub(crate) reference: String,
    /// The compared series' name.
    pub(crate) subject: String,
    /// The reference's display name.
    pub(crate) reference_label: String,
    /// The compared series' display name.
    pub(crate) subject_label: String,
    /// The interval.
    pub(crate) estimate: Estimate,
    /// The reference's rate the comparison holds at, packets/s: the baseline's mean over the
    /// blocks used (paired) or the reference's mean iteration (unpaired); for latency, its
    /// mean offered load.
    pub(crate) speed_pps: Option<f64>,
    /// Why a significant difference is not to be believed (trials design, [`crate::stats::doubt`]);
    /// for an alternating latency run without an estimate, the blocks other programs crowded
    /// (`report::latency::alternating`).
    pub(crate) unreliable: Option<String>,
}

impl Verdict {
    /// What it shows, in one word; a doubted significant difference is no finding.
    pub(crate) fn finding(&self) -> Finding {
        let change = match self.estimate {
            Estimate::Paired(e) => e.change_pct,
            Estimate::Unpaired(c, _) => c.relative_pct,
            Estimate::Missing => return Finding::NoEstimate,
        };
        let latency = matches!(self.metric, Metric::Latency(_));
        match (self.significant(), self.unreliable.is_some(), change > 0.0) {
            (false, _, _) => Finding::NoDifference,
            (true, true, _) => Finding::Unreliable,
            (true, false, up) if latency => match up {
                true => Finding::HigherLatency,
                false => Finding::LowerLatency,
            },
            (true, false, true) => Finding::Faster,
            (true, false, false) => Finding::Slower,
        }
    }

    /// Whether the interval is the paired one.
    pub fn paired(&self) -> bool {
        !matches!(self.estimate, Estimate::Unpaired(..))
    }

    /// `paired` or `unpaired`, as the table, the terminal and results.json name the estimate.
    pub(crate) fn kind(&self) -> &'static str {
        if self.paired() {
            "paired"
        } else {
            "unpaired"
        }
    }

    /// The change in percent, its interval's ends and half-width; `None` without an estimate.
    pub(crate) fn interval(&self) -> Option<Interval> {
        match self.estimate {
            Estimate::Paired(e) => Some(Interval {
                change_pct: e.change_pct,
                low_pct: e.low_pct,
                high_pct: e.high_pct,
                half_width_pct: e.half_width_pct(),
                confidence_pct: e.level_pct,
            }),
            Estimate::Unpaired(c, _) => Some(Interval {
                change_pct: c.relative_pct,
                low_pct: c.relative_pct - c.relative_ci_pct,
                high_pct: c.relative_pct + c.relative_ci_pct,
                half_width_pct: c.relative_ci_pct,
                confidence_pct: c.confidence.percent(),
            }),
            Estimate::Missing => None,
        }
    }

    /// Whether the interval excludes 0 (ministat's "Difference at" for unpaired ones).
    pub(crate) fn significant(&self) -> bool {
        match self.estimate {
            Estimate::Paired(e) => e.is_significant(),
            Estimate::Unpaired(c, _) => c.significant,
            Estimate::Missing => false,
        }
    }

    /// Blocks or iterations used, of the reference and of the compared series, and blocks
    /// left out (paired estimates keep the blocks at the machine's quiet level).
    pub(crate) fn used(&self) -> Used {
        match self.estimate {
            Estimate::Paired(e) => Used {
                reference: e.blocks,
                subject: e.blocks,
                left_out: e.of - e.blocks,
            },
            Estimate::Unpaired(_, [reference, subject]) => Used {
                reference,
                subject,
                left_out: 0,
            },
            Estimate::Missing => Used::default(),
        }
    }

    /// The change as the README's other sections print it: `−16.7 % ± 2.0 %` (paired, one
    /// decimal, its interval when visibly asymmetric), `−34.37 % ± 0.34 %` (ministat's), `—`.
    pub(crate) fn change_text(&self) -> String {
        match self.estimate {
            Estimate::Paired(e) => e.change().to_string(),
            Estimate::Unpaired(c, _) => {
                let decimals = decimals(c.relative_ci_pct, 2);
                format!(
                    "{} % ± {:.decimals$} %",
                    signed(c.relative_pct, decimals),
                    c.relative_ci_pct
                )
            }
            Estimate::Missing => "—".to_string(),
        }
    }

    /// `11 of 32 blocks`, `32 blocks`, `5 iterations each`, `5 and 4 iterations`.
    pub(crate) fn used_text(&self) -> String {
        let used = self.used();
        match (&self.estimate, used.left_out) {
            (Estimate::Unpaired(..), _) if used.reference == used.subject => {
                format!("{} iterations each", used.subject)
            }
            (Estimate::Unpaired(..), _) => {
                format!("{} and {} iterations", used.reference, used.subject)
            }
            (Estimate::Missing, _) => "too few blocks".to_string(),
            (_, 0) => format!("{} blocks", used.subject),
            (_, out) => format!("{} of {} blocks", used.subject, used.subject + out),
        }
    }

    /// The speed level, `forwarding at 2.45 Mpps`; empty when not known.
    pub(crate) fn speed_text(&self) -> String {
        (self.speed_pps)
            .map(|pps| format!("{} at {}", self.reference_label, format_pps(pps)))
            .unwrap_or_default()
    }

    /// The verdict in words: `slower`, `no difference shown (the run could have shown
    /// ±1.2 %)`, `unreliable, no verdict: …`.
    pub(crate) fn verdict_text(&self) -> String {
        let half = self.interval().map_or(0.0, |i| i.half_width_pct);
        let decimals = decimals(half, if self.paired() { 1 } else { 2 });
        match self.finding() {
            Finding::Faster => "faster".to_string(),
            Finding::Slower => "slower".to_string(),
            Finding::HigherLatency => "higher latency".to_string(),
            Finding::LowerLatency => "lower latency".to_string(),
            Finding::NoDifference => {
                format!("no difference shown (the run could have shown ±{half:.decimals$} %)")
            }
            Finding::Unreliable => format!(
                "unreliable, no verdict: {}",
                self.unreliable.as_deref().unwrap_or_default()
            ),
            Finding::NoEstimate => match &self.unreliable {
                Some(why) => format!("no estimate: too few blocks for an interval ({why})"),
                None => "no estimate: too few blocks for an interval".to_string(),
            },
        }
    }
}

/// The confidence level every verdict with an interval is stated at, when they share one (95 %,
/// or an archive's own `-c` level; 95 % when none has an interval); `None` when they differ.
pub(crate) fn shared_level(verdicts: &[Verdict]) -> Option<f64> {
    let mut levels = (verdicts.iter())
        .filter_map(Verdict::interval)
        .map(|i| i.confidence_pct);
    let first = levels.next().unwrap_or(95.0);
    levels.all(|l| l == first).then_some(first)
}

/// A verdict's change and interval, percent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Interval {
    /// The change of the compared series against the reference.
    pub(crate) change_pct: f64,
    /// Lower end of the interval.
    pub(crate) low_pct: f64,
    /// Upper end of the interval.
    pub(crate) high_pct: f64,
    /// Half the interval's span: the smallest difference the run could have shown.
    pub(crate) half_width_pct: f64,
    /// The confidence it is stated at (95.0).
    pub(crate) confidence_pct: f64,
}

/// What a verdict rests on: blocks (paired) or iterations (unpaired) per side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Used {
    /// Used of the reference.
    pub(crate) reference: usize,
    /// Used of the compared series.
    pub(crate) subject: usize,
    /// Blocks measured but left out (at other speed levels); 0 for unpaired verdicts.
    pub(crate) left_out: usize,
}

impl Report {
    /// Every comparison once: the paired estimates of the alternating runs, then ministat's
    /// comparisons that no paired estimate covers (trials, or series of separate runs).
    pub(super) fn verdict_list(&self) -> Vec<Verdict> {
        let mut verdicts: Vec<Verdict> = self
            .alternating
            .iter()
            .flat_map(|run| self.paired(run))
            .collect();
        let covered = |a: &str, b: &str| {
            (verdicts.iter()).any(|v| {
                (v.reference == a && v.subject == b) || (v.reference == b && v.subject == a)
            })
        };
        let unpaired: Vec<Verdict> = (self.blocks.iter())
            .flat_map(|block| self.unpaired(block))
            .filter(|v| !covered(&v.reference, &v.subject))
            .collect();
        verdicts.extend(unpaired);
        verdicts
    }

    /// A run's paired estimates: each set against the baseline, then the `versus` lines.
    fn paired(&self, run: &AlternatingRun) -> Vec<Verdict> {
        let context = self.run_context(run);
        let estimates =
            (run.estimates.iter().map(|(_, e)| e)).chain(run.versus.iter().map(|(_, _, e)| e));
        (self.run_pairs(run).iter().zip(estimates))
            .map(|(pair, e)| {
                let speed = e.and_then(|e| e.baseline_pps);
                self.run_verdict(run, pair, (Metric::Throughput, context.clone(), speed), *e)
            })
            .collect()
    }

    /// What every comparison of a run holds fixed: its version and profile, by display name.
    pub(crate) fn run_context(&self, run: &AlternatingRun) -> Vec<String> {
        [self.version_label(&run.version), self.label(&run.profile)]
            .iter()
            .filter(|l| !l.is_empty())
            .map(|l| l.to_string())
            .collect()
    }

    /// A run's comparisons, in the order of its estimates: each entry against the baseline,
    /// then the `versus` lines.
    pub(crate) fn run_pairs(&self, run: &AlternatingRun) -> Vec<RunPair> {
        let baseline = run.sets.first().map_or("", |s| self.label(s)).to_string();
        let against_baseline = (run.estimates.iter().enumerate()).map(|(k, (set, _))| RunPair {
            subject: k + 1,
            reference: 0,
            subject_label: self.label(set).to_string(),
            reference_label: baseline.clone(),
        });
        let versus = (run.versus.iter().zip(&run.versus_entries)).map(
            |((version, base, _), &(subject, reference))| RunPair {
                subject,
                reference,
                subject_label: self.version_label(version).to_string(),
                reference_label: base.clone(),
            },
        );
        against_baseline.chain(versus).collect()
    }

    /// The verdict of `pair` of `run` on `metric`, with `context` and the reference's rate
    /// `speed_pps`: `estimate`, or none with too few blocks.
    pub(crate) fn run_verdict(
        &self,
        run: &AlternatingRun,
        pair: &RunPair,
        (metric, context, speed_pps): (Metric, Vec<String>, Option<f64>),
        estimate: Option<PairedEstimate>,
    ) -> Verdict {
        let series = |k: usize| run.series.get(k).cloned().unwrap_or_default();
        Verdict {
            metric,
            context,
            reference: series(pair.reference),
            subject: series(pair.subject),
            reference_label: pair.reference_label.clone(),
            subject_label: pair.subject_label.clone(),
            speed_pps,
            estimate: estimate.map_or(Estimate::Missing, Estimate::Paired),
            unreliable: None,
        }
    }

    /// A ministat block's comparisons, each member against the reference.
    fn unpaired(&self, block: &ComparisonBlock) -> Vec<Verdict> {
        let context: Vec<String> = (self.fixed_labels(&block.scope).into_iter())
            .map(str::to_string)
            .collect();
        let side = |i: usize| Side {
            name: self.series[i].series.name.clone(),
            label: self.varying_label(&block.scope, i).to_string(),
            used: self.series[i].summary.map_or(0, |s| s.n),
        };
        let speed = self.series[block.members[0]].summary.map(|s| s.mean);
        unpaired((Metric::Throughput, context, speed), block, side)
    }
}

/// One comparison of an alternating run: the entries compared, as indexes into its `sets`,
/// and their display names.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RunPair {
    /// The compared entry.
    pub(crate) subject: usize,
    /// The entry it is compared with.
    pub(crate) reference: usize,
    /// The compared entry's display name.
    pub(crate) subject_label: String,
    /// The reference's display name.
    pub(crate) reference_label: String,
}

/// One side of an unpaired comparison, as its verdict names it.
pub(crate) struct Side {
    /// The series' name.
    pub(crate) name: String,
    /// Its display name.
    pub(crate) label: String,
    /// Iterations used.
    pub(crate) used: usize,
}

/// The verdicts of a ministat block of `metric`, with `context` and the reference's rate
/// `speed_pps`: each member against the reference, named by `side`.
pub(crate) fn unpaired(
    (metric, context, speed_pps): (Metric, Vec<String>, Option<f64>),
    block: &ComparisonBlock,
    side: impl Fn(usize) -> Side,
) -> Vec<Verdict> {
    let reference = side(block.members[0]);
    (block.members[1..].iter())
        .zip(&block.comparisons)
        .zip(&block.doubts)
        .map(|((&k, &c), doubt)| {
            let subject = side(k);
            Verdict {
                metric,
                context: context.clone(),
                reference: reference.name.clone(),
                subject: subject.name,
                reference_label: reference.label.clone(),
                subject_label: subject.label,
                speed_pps,
                estimate: Estimate::Unpaired(c, [reference.used, subject.used]),
                unreliable: doubt.clone(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
