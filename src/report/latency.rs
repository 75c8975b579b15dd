//! Latency under load in the report (issue 35): the model's latency series (one per version,
//! config set, profile and load, from `ingest`), the ministat comparisons of their trials' P99
//! and P50 between versions and between config sets — the throughput comparisons' pairing, in
//! [`compare`](crate::report::compare)'s blocks, lower being better — and their verdicts, first
//! packet against established flows, and the charts ([`chart`]); the alternating runs' entries,
//! paired with their baseline block by block ([`alternating`]). The README's section is
//! [`markdown`], results.json's part [`json`].
//!
//! [`alternating`]: crate::report::latency::alternating
//! [`chart`]: crate::report::latency::chart
//! [`markdown`]: crate::report::latency::markdown
//! [`json`]: crate::report::latency::json

use std::time::Duration;

use anyhow::Context;

use super::compare::{chunks, ComparisonBlock, Scope};
use super::select::distinct;
use super::verdict::{unpaired, Metric, Quantile, Side, Verdict};
use super::{Exporter, OutputFile, Report};
use crate::ingest::benchlab::latency::{LatencySeries, Load, ProbeKind};
use crate::stats::doubt::TrialValue;
use crate::stats::latency::{Latency, Percentiles, ProbeCounts};
use crate::stats::ministat::MIN_POINTS;
use crate::stats::quiet::{quiet_seconds, QuietSeconds};
use crate::stats::{Comparison, Confidence, Dataset, MeanInterval, MinistatError};
use crate::units::{format_ns, format_pps};

/// The alternating runs' latency: each entry paired with the baseline, block by block.
pub(crate) mod alternating;
/// The latency charts: against load, and the distributions.
pub(crate) mod chart;
/// Latency by the CPUs' distance: the campaign's levels, each series' P50 at each.
pub(crate) mod distance;
/// results.json's `latency` and `latency_floor`.
pub(crate) mod json;
/// The README's "Latency under load" section.
pub(crate) mod markdown;

/// A ministat comparison of one percentile of latency series' trials: its members index
/// [`Report::latency`].
#[derive(Debug, Clone)]
pub(crate) struct LatencyBlock {
    /// The percentile compared.
    pub(crate) quantile: Quantile,
    /// The comparison.
    pub(crate) block: ComparisonBlock,
}

/// What the first packet's difference is taken over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Over {
    /// The trials' windows.
    Trials,
    /// The seconds of the one trial that had both kinds: a narrower claim, that trial's.
    Seconds,
    /// The blocks of an alternating run.
    Blocks,
}

impl Over {
    /// As results.json names it: `trials`, `seconds`, `blocks`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Over::Trials => "trials",
            Over::Seconds => "seconds",
            Over::Blocks => "blocks",
        }
    }
}

/// Which stretch of the probes' way a figure times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Leg {
    /// Sender to receiver: the latency.
    OneWay,
    /// The DUT's ingress to its egress, where the DUT recorded it: the time in the DUT.
    InDut,
}

impl Leg {
    /// Both, in the report's order.
    pub(crate) const ALL: [Leg; 2] = [Leg::OneWay, Leg::InDut];

    /// In the report's words: `one way`, `in the DUT`.
    pub(crate) fn text(self) -> &'static str {
        match self {
            Leg::OneWay => "one way",
            Leg::InDut => "in the DUT",
        }
    }

    /// A trial's probes of one kind on this leg: their window's figures and each second's P50.
    fn of(self, kind: &ProbeKind) -> (Option<Percentiles>, &[(Duration, u64)]) {
        match self {
            Leg::OneWay => (kind.window, &kind.seconds),
            Leg::InDut => (kind.in_dut, &kind.in_dut_seconds),
        }
    }

    /// A series' established and first-packet probes on this leg, every trial's window merged.
    fn merged(self, s: &LatencySeries) -> [Option<&Latency>; 2] {
        match self {
            Leg::OneWay => [Some(&s.established), s.first_packet.as_ref()],
            Leg::InDut => [s.in_dut.as_ref(), s.first_packet_in_dut.as_ref()],
        }
    }
}

/// First-packet probes against established ones in one latency series, on one [`Leg`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct FirstPacket {
    /// The established probes, every trial's window merged.
    pub(crate) established: Percentiles,
    /// The first-packet probes, the same way.
    pub(crate) first_packet: Percentiles,
    /// First-packet P50 less established P50, ns, with its 95 % interval widened by the
    /// clock's tick; `None` with too few values for one.
    pub(crate) difference: Option<MeanInterval>,
    /// What the interval is over.
    pub(crate) over: Over,
}

impl FirstPacket {
    /// Of `series` on `leg`, when it sent first-packet probes and both kinds arrived (and, in
    /// the DUT, the DUT recorded both). The difference's interval is Student's t over the
    /// trials' differences of their window's P50s, or, with one such trial, over its seconds'
    /// differences (a narrower claim: that trial's); an alternating run's over its blocks',
    /// paired by block. The interval is widened by `tick_ns`, the tick of the clock that timed
    /// the probes when known: each P50 is read to a tick, and the same few ns in every trial
    /// would otherwise make an interval of ± 0 (`traffic::latency::clock`).
    pub(crate) fn of(
        series: &LatencySeries,
        leg: Leg,
        tick_ns: Option<u64>,
    ) -> Option<FirstPacket> {
        let [established, first_packet] = leg.merged(series);
        let established = established?.percentiles()?;
        let first_packet = first_packet?.percentiles()?;
        let both: Vec<_> = (series.trials.iter())
            .filter_map(|t| {
                let (first, first_seconds) = leg.of(t.first_packet.as_ref()?);
                let (established, established_seconds) = leg.of(&t.established);
                Some((first?, established?, first_seconds, established_seconds))
            })
            .collect();
        let t95 = |df: usize| Confidence::P95.student_t(df);
        let of_windows = |over: Over| {
            let differences: Vec<f64> = (both.iter())
                .map(|(f, e, _, _)| f.p50_ns as f64 - e.p50_ns as f64)
                .collect();
            (MeanInterval::of(&differences, t95), over)
        };
        let (difference, over) = match (series.load, both.as_slice()) {
            // A block has no seconds of its own: its phases are fractions of one.
            (Load::Alternating(_), _) => of_windows(Over::Blocks),
            (_, [(_, _, first, established)]) => {
                let seconds: Vec<f64> = (first.iter())
                    .filter_map(|&(start, f)| {
                        let (_, e) = established.iter().find(|(s, _)| *s == start)?;
                        Some(f as f64 - *e as f64)
                    })
                    .collect();
                (MeanInterval::of(&seconds, t95), Over::Seconds)
            }
            _ => of_windows(Over::Trials),
        };
        let tick = tick_ns.unwrap_or(0) as f64;
        Some(FirstPacket {
            established,
            first_packet,
            difference: difference.map(|d| MeanInterval {
                half_width: d.half_width + tick,
                ..d
            }),
            over,
        })
    }
}

/// The probes' counts of every trial of `series` summed: the established probes', or the
/// first-packet ones'; `None` when a trial's record does not count them (an alternating run).
pub(crate) fn probe_totals(series: &LatencySeries, first_packet: bool) -> Option<ProbeCounts> {
    if series.trials.is_empty() {
        return None;
    }
    let mut kinds = (series.trials.iter()).filter_map(|t| match first_packet {
        true => t.first_packet.as_ref(),
        false => Some(&t.established),
    });
    kinds.try_fold(ProbeCounts::default(), |sum, k| {
        let p = k.probes?;
        Some(ProbeCounts {
            sent: sum.sent + p.sent,
            received: sum.received + p.received,
            lost: sum.lost + p.lost,
            duplicates: sum.duplicates + p.duplicates,
            reordered: sum.reordered + p.reordered,
            clock_steps: sum.clock_steps + p.clock_steps,
        })
    })
}

/// The mean load of a series' trials, packets/s.
pub(crate) fn mean_load(series: &LatencySeries) -> f64 {
    crate::report::mean(series.trials.iter().map(|t| t.load_pps))
}

/// The established probes' time in the DUT over `series`' quiet seconds (every trial's measured
/// seconds together, [`quiet_seconds`]); `None` where the DUT recorded none. A noisy machine's
/// disturbed stretches add to the time in the DUT for seconds to minutes; which ones a run's
/// trials fell in moved its P50 from run to run, its quiet seconds' far less.
pub(crate) fn quiet_in_dut(series: &LatencySeries) -> Option<QuietSeconds> {
    let p50s = (series.trials.iter())
        .flat_map(|t| t.established.in_dut_seconds.iter().map(|&(_, p50)| p50));
    quiet_seconds(p50s.collect())
}

/// The load in words: `1 Mpps`, `max (987 Kpps sent)`, `50 % of the NDR (612 Kpps)`, `50 %
/// of the baseline's saturated rate (560 Kpps)`, `the profile's 200 Kpps, alternated`.
pub(crate) fn load_text(series: &LatencySeries) -> String {
    let pps = format_pps(mean_load(series));
    match series.load {
        Load::Offered => pps,
        Load::Max => format!("max ({pps} sent)"),
        Load::Ndr(0) => "probes only".to_string(),
        Load::Ndr(pct) => format!("{pct} % of the NDR ({pps})"),
        Load::Alternating(Some(pct)) => {
            format!("{pct} % of the baseline's saturated rate ({pps})")
        }
        Load::Alternating(None) => format!("the profile's {pps}, alternated"),
    }
}

/// What a latency comparison compares, in words: `P99 latency at 90 % of the NDR`, `P99
/// latency at 200 Kpps` (a fixed rate, `offered_pps`).
pub(crate) fn compared_at(quantile: Quantile, load: Load, offered_pps: f64) -> String {
    let what = quantile.what();
    match load {
        Load::Ndr(0) => format!("{what}, probes only"),
        Load::Ndr(pct) => format!("{what} at {pct} % of the NDR"),
        Load::Alternating(Some(pct)) => {
            format!("{what} at {pct} % of the baseline's saturated rate")
        }
        Load::Alternating(None) => format!("{what} at the profile's rate"),
        // The latency of a DUT saturated by design is its queue's: said in the verdict too.
        Load::Max => format!("{what} at max, saturated"),
        Load::Offered => format!("{what} at {}", format_pps(offered_pps)),
    }
}

/// The trials' values of `quantile`, those whose window had probes.
fn values(series: &LatencySeries, quantile: Quantile) -> Vec<TrialValue<'_>> {
    (series.trials.iter())
        .filter_map(|t| {
            Some(TrialValue {
                index: t.iteration,
                value: quantile.of(t)? as f64,
                troubles: &t.troubles,
                apart_ns: t.cpu_round_trip_ns,
            })
        })
        .collect()
}

impl Report {
    /// The tick of the clock that timed the probes, ns, when the floor's record has it.
    pub(crate) fn clock_tick_ns(&self) -> Option<u64> {
        (self.latency_floor.as_ref()).and_then(|f| f.record.clock_tick_ns)
    }

    /// Index of the latency series of a (version, config set, profile) at `load` with enough
    /// trials for ministat.
    fn find_latency(&self, [v, c, p]: [&str; 3], load: Load, quantile: Quantile) -> Option<usize> {
        self.latency.iter().position(|s| {
            (
                s.version.as_str(),
                s.config.as_str(),
                s.profile.as_str(),
                s.load,
            ) == (v, c, p, load)
                && values(s, quantile).len() >= MIN_POINTS
        })
    }

    /// The latency comparisons: per scope of the throughput comparisons (versions, then config
    /// sets) and per load, the trials' P99 then P50 compared with the reference's.
    pub(super) fn latency_blocks(&self) -> Result<Vec<LatencyBlock>, MinistatError> {
        let mut blocks = Vec::new();
        for scope in self.level_scopes(&self.latency_profiles()) {
            let cells = self.cells(&scope);
            let mut loads: Vec<Load> = Vec::new();
            // Versions and config sets are compared per profile: the second name fixed.
            for s in (self.latency.iter()).filter(|s| s.profile == scope.fixed()[1]) {
                if !loads.contains(&s.load) {
                    loads.push(s.load);
                }
            }
            for (load, quantile) in (loads.iter()).flat_map(|&l| Quantile::COMPARED.map(|q| (l, q)))
            {
                let members: Vec<usize> = (cells.iter())
                    .filter_map(|&cell| self.find_latency(cell, load, quantile))
                    .collect();
                for members in chunks(&members) {
                    let block = self.latency_block(scope.clone(), members, quantile)?;
                    blocks.push(LatencyBlock { quantile, block });
                }
            }
        }
        Ok(blocks)
    }

    fn latency_block(
        &self,
        scope: Scope,
        members: Vec<usize>,
        quantile: Quantile,
    ) -> Result<ComparisonBlock, MinistatError> {
        let trials: Vec<(&str, Vec<TrialValue<'_>>)> = (members.iter())
            .map(|&i| {
                (
                    self.latency_label(&scope, i),
                    values(&self.latency[i], quantile),
                )
            })
            .collect();
        let datasets: Vec<Dataset> = (members.iter().zip(&trials))
            .map(|(&i, (_, values))| {
                let name = format!("{}.{}", self.latency[i].name, quantile.key());
                Dataset::new(name, values.iter().map(|t| t.value).collect())
            })
            .collect();
        let mut block =
            self.compared(scope, members, (&datasets, &trials), Confidence::default())?;
        // The clock's tick doubts the block itself, so that its line in the report and its
        // verdicts say the same.
        let tick = self.clock_tick_ns();
        for (doubt, c) in block.doubts.iter_mut().zip(&block.comparisons) {
            if doubt.is_none() {
                *doubt = within_tick(c, tick);
            }
        }
        Ok(block)
    }

    /// The name of latency series `i` by what `scope` varies.
    pub(crate) fn latency_label(&self, scope: &Scope, i: usize) -> &str {
        let s = &self.latency[i];
        self.level_label(scope, [&s.version, &s.config, &s.profile])
    }

    /// What a latency comparison holds fixed, in words: the scope's labels, then the
    /// percentile and the load (`inet4`, `P99 latency at 50 % of the NDR`).
    pub(crate) fn latency_context(&self, b: &LatencyBlock) -> Vec<String> {
        let mut context: Vec<String> = (self.fixed_labels(&b.block.scope).into_iter())
            .map(str::to_string)
            .collect();
        let reference = &self.latency[b.block.members[0]];
        context.push(compared_at(
            b.quantile,
            reference.load,
            mean_load(reference),
        ));
        context
    }

    /// The verdicts of the latency comparisons, after the throughput ones: the alternating
    /// runs' paired ones (P99, P50 and P50 in the DUT: a run has one per set), then
    /// ministat's of the trials,
    /// their P99, the tail a firewall or kernel change shows in, and their P50 in the DUT where
    /// the DUT recorded it, the time a change costs each frame, which a VM's placement of its
    /// CPUs moves least, else their one-way P50; the trials' one-way P50 comparisons beside
    /// the DUT's stay in the section's tables (a search's four loads would otherwise double a
    /// table that leads the report).
    pub(super) fn latency_verdicts(&self) -> Vec<Verdict> {
        let mut verdicts: Vec<Verdict> = (self.alternating.iter())
            .flat_map(|run| self.alternating_latency_verdicts(run))
            .collect();
        let in_dut =
            |b: &&LatencyBlock| (b.block.members.iter()).all(|&i| self.latency[i].in_dut.is_some());
        let verdicted = |b: &&LatencyBlock| b.quantile != Quantile::P50 || !in_dut(b);
        for b in self.latency_blocks.iter().filter(verdicted) {
            let reference = &self.latency[b.block.members[0]];
            let speed = Some(mean_load(reference)).filter(|&pps| pps > 0.0);
            let side = |i: usize| Side {
                name: self.latency[i].name.clone(),
                label: self.latency_label(&b.block.scope, i).to_string(),
                used: values(&self.latency[i], b.quantile).len(),
            };
            let what = (Metric::Latency(b.quantile), self.latency_context(b), speed);
            verdicts.extend(unpaired(what, &b.block, side));
        }
        verdicts
    }

    /// The profiles with latency, in the logs' order.
    pub(crate) fn latency_profiles(&self) -> Vec<String> {
        distinct(self.latency_series().map(|s| &s.profile))
    }

    /// Every latency series: the trials', then each alternating run's entries.
    pub(crate) fn latency_series(&self) -> impl Iterator<Item = &LatencySeries> {
        let alternating = (self.alternating.iter())
            .filter_map(|run| run.latency.as_ref())
            .flat_map(|l| &l.entries);
        self.latency.iter().chain(alternating)
    }
}

/// Why significant comparison `c` of trials' latencies is unreliable when its interval comes
/// within the clock's `tick` of no difference: the trials' P50s are read to a tick, and
/// identical ones (a quiet machine, a coarse clock) make an interval of ± 0 around a difference
/// of one tick (`traffic::latency::clock`).
fn within_tick(c: &Comparison, tick: Option<u64>) -> Option<String> {
    let tick = tick?;
    (c.significant && c.difference.abs() - c.difference_ci <= tick as f64).then(|| {
        format!(
            "its interval comes within the clock's tick ({}) of no difference",
            format_ns(tick as f64)
        )
    })
}

/// The latency charts, as PNG files.
pub(crate) struct LatencyExporter;

impl Exporter for LatencyExporter {
    fn files(&self, report: &Report) -> anyhow::Result<Vec<OutputFile>> {
        let mut files = Vec::new();
        for profile in report.latency_profiles() {
            let load = chart::load_chart(report, &profile);
            let cdf = chart::cdf_chart(report, &profile);
            files.push(OutputFile {
                name: load.file_name.clone(),
                bytes: chart::render_load(&load).context("drawing the latency charts")?,
            });
            files.push(OutputFile {
                name: cdf.file_name.clone(),
                bytes: chart::render_cdf(&cdf).context("drawing the latency charts")?,
            });
        }
        Ok(files)
    }
}

#[cfg(test)]
mod tests;
