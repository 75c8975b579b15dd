//! results.json's latency: `latency[]`, one entry per (version, config set, profile, load)
//! with its percentiles (every trial's window merged), probe counts, first packets, the first
//! packet's difference and each trial's figures — then one per entry of each alternating run,
//! its blocks as the trials (its comparisons are verdicts); and `latency_floor`, the floor's
//! figures or why it was not measured. Latencies are in ns; rates in packets per second.

use serde::Serialize;

use super::distance::{at_levels, levels, trial_at_levels, AtLevel, Level};
use super::{mean_load, probe_totals, quiet_in_dut, FirstPacket, Leg, Report};
use crate::ingest::alternating::latency::RunLatency;
use crate::ingest::benchlab::latency::{Floor, LatencySeries, Load, ProbeTrial};
use crate::stats::latency::{Percentiles, ProbeCounts};

/// One probe kind's figures.
#[derive(Serialize)]
pub(crate) struct FiguresJson {
    p50_ns: Option<u64>,
    p90_ns: Option<u64>,
    p99_ns: Option<u64>,
    p999_ns: Option<u64>,
    max_ns: Option<u64>,
    mean_ns: Option<f64>,
    /// Latencies in the percentiles (probes received in the measured windows).
    samples: u64,
    /// What became of the probes; absent where the record does not count them (alternating).
    #[serde(flatten)]
    probes: Option<ProbesJson>,
}

/// The probes' fate.
#[derive(Serialize)]
pub(crate) struct ProbesJson {
    probes_sent: u64,
    probes_received: u64,
    probes_lost: u64,
    probes_duplicates: u64,
    probes_reordered: u64,
}

/// A latency series at one load.
#[derive(Serialize)]
pub(crate) struct LatencyJson<'a> {
    name: &'a str,
    version: &'a str,
    config: &'a str,
    profile: &'a str,
    /// `trials`, or `alternating` (an alternating run's entry).
    design: &'static str,
    /// % of the NDR, after a search; % of the baseline's saturated rate, alternating; `null`
    /// for a fixed-load profile.
    load_pct: Option<u32>,
    /// The alternating run's baseline's median rate over its throughput blocks (its saturated
    /// rate at `max`), which `load_pct` is a share of.
    #[serde(skip_serializing_if = "Option::is_none")]
    baseline_pps: Option<f64>,
    /// Why the alternating run's latency run ended early, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    failure: Option<&'a str>,
    /// Mean offered load of its trials (a `max` profile: what was sent); an alternating
    /// entry's, its run's load.
    offered_pps: f64,
    probe_rate_pps: u64,
    trials: usize,
    #[serde(flatten)]
    established: FiguresJson,
    #[serde(skip_serializing_if = "Option::is_none")]
    first_packet: Option<FiguresJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    first_vs_established: Option<DifferenceJson>,
    /// The established probes' time in the DUT, ingress to egress (their latency less the
    /// way to the DUT), every trial's window merged, where the DUT recorded it (the virtual
    /// lab).
    #[serde(skip_serializing_if = "Option::is_none")]
    in_dut: Option<FiguresJson>,
    /// The first-packet probes' time in the DUT, the same way.
    #[serde(skip_serializing_if = "Option::is_none")]
    first_packet_in_dut: Option<FiguresJson>,
    /// `first_vs_established` in the DUT.
    #[serde(skip_serializing_if = "Option::is_none")]
    first_vs_established_in_dut: Option<DifferenceJson>,
    /// The time in the DUT over the series' quiet seconds (`stats::quiet::quiet_seconds`).
    #[serde(skip_serializing_if = "Option::is_none")]
    in_dut_quiet: Option<QuietJson>,
    /// The P50 at each level of the CPUs' distance its seconds fell in, when the campaign's
    /// fell in two or more (the virtual lab).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    p50_by_distance: Vec<AtLevelJson>,
    iterations: Vec<TrialJson<'a>>,
}

/// A series' time in the DUT over its quiet seconds.
#[derive(Serialize)]
pub(crate) struct QuietJson {
    /// The median of those seconds' P50s.
    p50_ns: u64,
    /// The seconds at the quiet level, and the series' measured seconds.
    seconds: usize,
    of_seconds: usize,
}

/// A series' P50 at one level of the CPUs' distance.
#[derive(Serialize)]
pub(crate) struct AtLevelJson {
    /// The level's shortest and longest round trip, ns.
    round_trip_low_ns: u32,
    round_trip_high_ns: u32,
    /// The median of its seconds' P50s there.
    p50_ns: u64,
    seconds: usize,
}

/// First-packet P50 less established P50 and its interval.
#[derive(Serialize)]
pub(crate) struct DifferenceJson {
    p50_difference_ns: f64,
    half_width_ns: f64,
    confidence_pct: f64,
    /// `trials`, `seconds` (of the one trial with both kinds), or `blocks` (alternating).
    over: &'static str,
    n: usize,
    significant: bool,
}

/// One trial's figures of its window, ns.
#[derive(Serialize)]
pub(crate) struct TrialJson<'a> {
    index: u32,
    offered_pps: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    load_lost_ratio: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    load_dropped_ratio: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ndr_load_dropped_ratio: Option<f64>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    troubles: &'a [String],
    /// The share of the lab's CPUs' time over the trial that other programs took, where read.
    #[serde(skip_serializing_if = "Option::is_none")]
    others_cpu_ratio: Option<f64>,
    p50_ns: Option<u64>,
    p99_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    first_packet_p50_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    first_packet_p99_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cpu_round_trip_ns: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    in_dut_p50_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    in_dut_p99_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    first_packet_in_dut_p50_ns: Option<u64>,
    /// Its P50 at each level of the CPUs' distance its seconds fell in, when the campaign's
    /// fell in two or more.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    p50_by_distance: Vec<AtLevelJson>,
}

/// The floor: its figures, or why it was not measured.
#[derive(Serialize)]
#[serde(untagged)]
pub(crate) enum FloorJson {
    /// Measured.
    Measured {
        /// Probes per second.
        probe_rate_pps: u64,
        /// Seconds of probes.
        duration_s: f64,
        /// The figures.
        #[serde(flatten)]
        figures: FiguresJson,
        /// P50 of the in-frame stamp to the kernel's transmit stamp, when measured.
        #[serde(skip_serializing_if = "Option::is_none")]
        user_to_driver_p50_ns: Option<u64>,
        /// The tick of the clock that timed the probes, when measured.
        #[serde(skip_serializing_if = "Option::is_none")]
        clock_tick_ns: Option<u64>,
    },
    /// Not measured.
    NotMeasured {
        /// Why.
        not_measured: String,
    },
}

fn figures(p: Option<Percentiles>, c: Option<ProbeCounts>) -> FiguresJson {
    FiguresJson {
        p50_ns: p.map(|p| p.p50_ns),
        p90_ns: p.map(|p| p.p90_ns),
        p99_ns: p.map(|p| p.p99_ns),
        p999_ns: p.map(|p| p.p999_ns),
        max_ns: p.map(|p| p.max_ns),
        mean_ns: p.map(|p| p.mean_ns),
        samples: p.map_or(0, |p| p.samples),
        probes: c.map(|c| ProbesJson {
            probes_sent: c.sent,
            probes_received: c.received,
            probes_lost: c.lost,
            probes_duplicates: c.duplicates,
            probes_reordered: c.reordered,
        }),
    }
}

/// `latency[]`: every latency series in the report's order, then the alternating runs' entries.
pub(crate) fn series(report: &Report) -> Vec<LatencyJson<'_>> {
    let tick = report.clock_tick_ns();
    let alternating = (report.alternating.iter())
        .filter_map(|run| run.latency.as_ref())
        .flat_map(|l| l.entries.iter().map(move |s| one(s, Some(l), &[], tick)));
    // Distances are given when the campaign's seconds fell at two levels or more.
    let mut levels = levels(report.latency.iter());
    if levels.len() < 2 {
        levels.clear();
    }
    (report.latency.iter().map(|s| one(s, None, &levels, tick)))
        .chain(alternating)
        .collect()
}

/// One series; `run` is the alternating run's latency it belongs to, if any; `levels` the
/// campaign's of the CPUs' distance, none when fewer than two; `tick` the clock's
/// ([`FirstPacket::of`]).
fn one<'a>(
    s: &'a LatencySeries,
    run: Option<&'a RunLatency>,
    levels: &[Level],
    tick: Option<u64>,
) -> LatencyJson<'a> {
    let at = by_distance(levels, at_levels(s, levels));
    LatencyJson {
        name: &s.name,
        version: &s.version,
        config: &s.config,
        profile: &s.profile,
        design: if run.is_some() {
            "alternating"
        } else {
            "trials"
        },
        load_pct: match s.load {
            Load::Ndr(pct) => Some(pct),
            Load::Alternating(pct) => pct,
            Load::Offered | Load::Max => None,
        },
        baseline_pps: run.map(|r| r.baseline_pps),
        failure: run.and_then(|r| r.failure.as_deref()),
        offered_pps: run.map_or_else(|| mean_load(s), |r| r.load_pps),
        probe_rate_pps: s.probe_rate_pps,
        trials: s.trials.len(),
        established: figures(s.established.percentiles(), probe_totals(s, false)),
        first_packet: (s.first_packet.as_ref())
            .map(|l| figures(l.percentiles(), probe_totals(s, true))),
        first_vs_established: difference(s, Leg::OneWay, tick),
        in_dut: (s.in_dut.as_ref()).map(|l| figures(l.percentiles(), None)),
        first_packet_in_dut: (s.first_packet_in_dut.as_ref())
            .map(|l| figures(l.percentiles(), None)),
        first_vs_established_in_dut: difference(s, Leg::InDut, tick),
        in_dut_quiet: quiet_in_dut(s).map(|q| QuietJson {
            p50_ns: q.p50_ns,
            seconds: q.seconds,
            of_seconds: q.of,
        }),
        p50_by_distance: at,
        iterations: s.trials.iter().map(|t| trial(t, levels)).collect(),
    }
}

/// First-packet P50 less established P50 of `s` on `leg`, when it has an interval (widened by
/// the clock's `tick`).
fn difference(s: &LatencySeries, leg: Leg, tick: Option<u64>) -> Option<DifferenceJson> {
    let f = FirstPacket::of(s, leg, tick)?;
    let d = f.difference?;
    Some(DifferenceJson {
        p50_difference_ns: d.mean,
        half_width_ns: d.half_width,
        confidence_pct: 95.0,
        over: f.over.name(),
        n: d.n,
        significant: d.excludes_zero(),
    })
}

/// The levels `at` has a P50 at, with it.
fn by_distance(levels: &[Level], at: Vec<Option<AtLevel>>) -> Vec<AtLevelJson> {
    (levels.iter().zip(at))
        .filter_map(|(l, at)| {
            let at = at?;
            Some(AtLevelJson {
                round_trip_low_ns: l.low_ns,
                round_trip_high_ns: l.high_ns,
                p50_ns: at.p50_ns,
                seconds: at.seconds,
            })
        })
        .collect()
}

/// One trial; `levels` as [`one`]'s.
fn trial<'a>(t: &'a ProbeTrial, levels: &[Level]) -> TrialJson<'a> {
    let first = t.first_packet.as_ref().and_then(|f| f.window);
    let first_in_dut = t.first_packet.as_ref().and_then(|f| f.in_dut);
    TrialJson {
        index: t.iteration,
        offered_pps: t.load_pps,
        load_lost_ratio: t.load_lost,
        load_dropped_ratio: t.load_dropped,
        ndr_load_dropped_ratio: t.ndr_dropped,
        troubles: &t.troubles,
        others_cpu_ratio: t.others_share,
        p50_ns: t.established.window.map(|p| p.p50_ns),
        p99_ns: t.established.window.map(|p| p.p99_ns),
        first_packet_p50_ns: first.map(|p| p.p50_ns),
        first_packet_p99_ns: first.map(|p| p.p99_ns),
        cpu_round_trip_ns: t.cpu_round_trip_ns,
        in_dut_p50_ns: t.established.in_dut.map(|p| p.p50_ns),
        in_dut_p99_ns: t.established.in_dut.map(|p| p.p99_ns),
        first_packet_in_dut_p50_ns: first_in_dut.map(|p| p.p50_ns),
        p50_by_distance: by_distance(levels, trial_at_levels(t, levels)),
    }
}

/// `latency_floor`: `None` when the lab recorded none.
pub(crate) fn floor(floor: Option<&Floor>) -> Option<FloorJson> {
    let r = &floor?.record;
    Some(match &r.measured {
        Some(m) => FloorJson::Measured {
            probe_rate_pps: r.probe_rate_pps,
            duration_s: r.duration_s,
            figures: figures(m.latency, Some(m.probes)),
            user_to_driver_p50_ns: r.user_to_driver.map(|p| p.p50_ns),
            clock_tick_ns: r.clock_tick_ns,
        },
        None => FloorJson::NotMeasured {
            not_measured: (r.not_measured.clone())
                .unwrap_or_else(|| "no reason recorded".to_string()),
        },
    })
}
