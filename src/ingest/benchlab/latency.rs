//! Latency under load in a benchlab results directory (issue 35): each trial's `latency.hlog`
//! (through `store`) cut to its measured window and merged per (version, config set, profile,
//! load) — a fixed-load profile's trials at their one load, a throughput profile's latency
//! trials at each % of their search's NDR — and the lab's floor from `lab.json` and
//! `latency-floor.hlog`.
//!
//! Only the figures the report needs are kept of each trial (its window's percentiles and
//! each second's P50), and one merged histogram per load: a histogram is 216 KB, and a trial
//! holds two per second.

use std::time::Duration;

use super::{Results, Warning, CROWDED};
use crate::error::InputError;
use crate::lab::distance::RoundTrips;
use crate::stats::latency::log::Interval;
use crate::stats::latency::{Latency, LatencySummary, Percentiles, ProbeCounts};
use crate::store::latency::{
    search_latency_window, windowed, ESTABLISHED, ESTABLISHED_IN_DUT, FIRST_PACKET,
    FIRST_PACKET_IN_DUT, FLOOR, LATENCY_FILE,
};
use crate::store::{
    FloorRecord, LabRecord, SearchRecord, Store, TrialKey, TrialLatency, TrialMeta,
};

/// The load a latency series was measured at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Load {
    /// A fixed-load profile's rate.
    Offered,
    /// A `max` profile: what the senders sent.
    Max,
    /// This percentage of the throughput search's NDR (a latency trial after each search).
    Ndr(u32),
    /// The alternating design's latency run: this percentage of the baseline's saturated rate,
    /// or (`None`) a fixed-rate profile's own rate.
    Alternating(Option<u32>),
}

/// One trial's probes: its measured window's figures, per kind.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ProbeTrial {
    /// The iteration.
    pub(crate) iteration: u32,
    /// The load it was offered (a `max` profile: what the senders sent), packets/s.
    pub(crate) load_pps: f64,
    /// The probes on one established flow.
    pub(crate) established: ProbeKind,
    /// The probes that each opened a flow, when sent.
    pub(crate) first_packet: Option<ProbeKind>,
    /// The share of the load the DUT did not forward, when the trial had a load.
    pub(crate) load_lost: Option<f64>,
    /// The share of the load a watched interface dropped, after a search
    /// ([`crate::store::SearchTrial::load_dropped`]: on the virtual lab, refused by the DUT's
    /// full input ring and sent again).
    pub(crate) load_dropped: Option<f64>,
    /// The share of the load dropped at an interface over its search's trials at the NDR
    /// ([`crate::store::SearchRecord::ndr_dropped`]), after a search: on the virtual lab, the
    /// DUT forwarded its NDR with its input ring full.
    pub(crate) ndr_dropped: Option<f64>,
    /// What disturbed the trial, in the doubt rule's words: a fixed-load trial's flags, and
    /// [`OVERLOADED`] at a fixed rate of which it lost more than [`FULL_QUEUE`]; after a
    /// search, when the DUT did not forward the whole load or its input queue was full for
    /// more than [`FULL_QUEUE`] of it, [`STALLED`] where the stalls of its CPU account for that
    /// and [`OVERLOADED`] otherwise; [`CROWDED`] when other programs took the lab's CPUs.
    pub(crate) troubles: Vec<String>,
    /// The longest stall of the DUT's CPU during the trial, ms, where the lab watched it
    /// ([`crate::lab::stall`]: after a search on the virtual lab).
    pub(crate) longest_stall_ms: Option<f64>,
    /// The share of the lab's CPUs' time over the trial that other programs took, where read
    /// (the virtual lab: [`crate::store::SearchTrial::others_share`] after a search,
    /// [`TrialMeta::others_share`] at a fixed load).
    pub(crate) others_share: Option<f64>,
    /// The median round trip between the probes' CPU and the DUT's while the probes ran, ns,
    /// where the lab watched it ([`crate::lab::distance`]).
    pub(crate) cpu_round_trip_ns: Option<u32>,
    /// The CPUs' distance per second of the trial from its start, as [`ProbeKind::seconds`]
    /// count them (`None` for a second whose readings disagreed: the host moved the vCPUs
    /// within it); empty where not watched.
    pub(crate) apart_by_second: Vec<Option<u32>>,
}

impl ProbeTrial {
    /// Whether `trouble` ([`OVERLOADED`], [`STALLED`], [`CROWDED`]…) disturbed it.
    pub(crate) fn had(&self, trouble: &str) -> bool {
        self.troubles.iter().any(|w| w == trouble)
    }
}

/// The trouble of a latency trial after a search whose load the DUT did not forward whole, or
/// whose input queue was full for more than [`FULL_QUEUE`] of it: its latency is that of a
/// saturated DUT, not of the share of its capacity the load was meant to be — the DUT slowed
/// since the search, or (on the virtual lab, [`ProbeTrial::ndr_dropped`]) the NDR is a rate it
/// forwards with its input queue busy, and a load just under it stands at its knee.
pub(crate) const OVERLOADED: &str = "overloaded";

/// The trouble of a latency trial after a search whose input queue filled while the host took
/// the DUT's CPU away, the stalls accounting for all it lost or dropped
/// ([`crate::store::SearchTrial::full_to_stalls`]): the machine's, not the load's. Measured
/// (`benches/latency.sh load`, 2026-11-28, 01:45 UTC): two trials at 10 % of the NDR dropped
/// 1.04 and 1.13 % of their load, lost none, and their CPU stalled for up to 100 ms (7,700
/// frames at 77 Kpps, against 4,352 queued); their P50s, 4.6 and 4.5 µs, were nothing like
/// a saturated DUT's hundreds of µs.
pub(crate) const STALLED: &str = "stalled";

/// The share of a latency trial's load dropped at an interface
/// ([`crate::store::SearchTrial::load_dropped`]) above which its DUT was saturated though the
/// generator, sending the refused frames again, lost none. `benches/latency.sh load` on the virtual lab (2026-11-27, 20:25 UTC): every trial
/// at 10 and 50 % of the NDR dropped 0.35 % or less; at 90 %, those that dropped 0.25–0.76 %
/// had per-second P50s of 4–60 µs, those that dropped 2.2–23 % of 258–627 µs, one of them
/// without losing any load.
pub(crate) const FULL_QUEUE: f64 = 0.01;

/// Of a trial after a search that lost `load_lost` of its load and dropped `load_dropped` of it
/// at an interface: the share lost when it lost some, and the share dropped when its input
/// queue was full ([`FULL_QUEUE`]); either makes it [`OVERLOADED`].
pub(crate) fn saturation(load_lost: Option<f64>, load_dropped: Option<f64>) -> [Option<f64>; 2] {
    [
        load_lost.filter(|&lost| lost > 0.0),
        load_dropped.filter(|&dropped| dropped > FULL_QUEUE),
    ]
}

/// One probe kind of a trial.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ProbeKind {
    /// Percentiles of the measured window; `None` when no probe arrived in it.
    pub(crate) window: Option<Percentiles>,
    /// Each second of the window: its start and its P50, ns.
    pub(crate) seconds: Vec<(Duration, u64)>,
    /// What became of the probes over the whole trial (`meta.json`); `None` where the record
    /// does not count them (an alternating run's blocks: its record keeps what arrived).
    pub(crate) probes: Option<ProbeCounts>,
    /// Their time in the DUT (ingress to egress) over the window, where the DUT recorded it.
    pub(crate) in_dut: Option<Percentiles>,
    /// The same per second, as `seconds`.
    pub(crate) in_dut_seconds: Vec<(Duration, u64)>,
}

/// The latency of one (version, config set, profile) at one load: every iteration's trial
/// there, and their windows merged.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LatencySeries {
    /// `<version>.<config>.<profile>`, and `.<pct>pct` after a search.
    pub(crate) name: String,
    /// Version name.
    pub(crate) version: String,
    /// Config set name.
    pub(crate) config: String,
    /// Traffic profile name (a throughput profile's, without a goal).
    pub(crate) profile: String,
    /// The load.
    pub(crate) load: Load,
    /// Probes per second.
    pub(crate) probe_rate_pps: u64,
    /// Every trial, in iteration order.
    pub(crate) trials: Vec<ProbeTrial>,
    /// The established probes of every trial's window.
    pub(crate) established: Latency,
    /// The first-packet probes of every trial's window, when any trial sent them.
    pub(crate) first_packet: Option<Latency>,
    /// The established probes' time in the DUT of every trial's window, when any trial's DUT
    /// recorded it.
    pub(crate) in_dut: Option<Latency>,
    /// The first-packet probes', the same way.
    pub(crate) first_packet_in_dut: Option<Latency>,
}

/// The lab's latency floor: its record in `lab.json` and its histogram, when there is one.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Floor {
    /// `lab.json`'s `latency_floor`.
    pub(crate) record: FloorRecord,
    /// `latency-floor.hlog`, its intervals merged.
    pub(crate) latency: Option<Latency>,
}

/// One (version, config set, profile) whose latency is being read.
pub(crate) type Cell<'a> = (&'a str, &'a str, &'a str);

/// Adds a fixed-load trial's latency (when its `meta` has some) to `results`, cut to the
/// campaign's measured `window`; a trial whose `latency.hlog` is missing is said in a warning.
pub(crate) fn add_trial(
    store: &Store,
    (cell, key): (Cell<'_>, &TrialKey),
    meta: &TrialMeta,
    (window, max, troubles): ((f64, f64), bool, Vec<String>),
    results: &mut Results,
) -> Result<(), InputError> {
    let Some(latency) = &meta.latency else {
        return Ok(());
    };
    let Some(intervals) = store.read_trial_latency(key)? else {
        results.warnings.push(Warning::NoLatencyLog {
            file: format!("runs/{key}/{LATENCY_FILE}"),
        });
        return Ok(());
    };
    let load = if max { Load::Max } else { Load::Offered };
    let load_pps = meta.offered_pps.map_or(meta.tx_pps, |pps| pps as f64);
    let load_lost = (meta.tx_pkts > 0).then(|| meta.lost_pkts as f64 / meta.tx_pkts as f64);
    // A fixed rate the DUT did not forward saturated it, as a load after a search may: its
    // probes measured a full input queue. At `max` that is what was asked for.
    let mut troubles = troubles;
    if !max && load_lost.is_some_and(|lost| lost > FULL_QUEUE) {
        troubles.insert(0, OVERLOADED.to_string());
    }
    let trial = Measured {
        iteration: key.iteration,
        load_pps,
        load_lost,
        load_dropped: None,
        ndr_dropped: None,
        latency,
        troubles,
        longest_stall_ms: None,
        others_share: meta.others_share(),
        apart_by_second: apart_by_second(
            store.read_round_trips(key, None, (meta.start_unix_s, meta.end_unix_s))?,
            latency,
            meta.start_unix_s,
        ),
    };
    add(results, (cell, load), trial, &intervals, window);
    Ok(())
}

/// Adds the latency trials after search iteration `key` (its `record`) to `results`, each cut
/// to [`search_latency_window`]; one whose `latency.hlog` is missing is said in a warning.
pub(crate) fn add_search(
    store: &Store,
    (cell, key): (Cell<'_>, &TrialKey),
    record: &SearchRecord,
    results: &mut Results,
) -> Result<(), InputError> {
    let ndr_dropped = record.ndr_dropped();
    for l in &record.latency {
        let Some(intervals) = store.read_search_latency(key, l.pct)? else {
            results.warnings.push(Warning::NoLatencyLog {
                file: format!("runs/{key}/latency/{}/{LATENCY_FILE}", l.pct),
            });
            continue;
        };
        let load_lost = (l.pct > 0).then(|| l.trial.load_lost());
        let load_dropped = (l.pct > 0).then(|| l.trial.load_dropped());
        let saturated = saturation(load_lost, load_dropped)
            .iter()
            .any(Option::is_some);
        let trouble = match saturated {
            false => None,
            true if l.trial.full_to_stalls() => Some(STALLED),
            true => Some(OVERLOADED),
        };
        let troubles = trouble
            .into_iter()
            .chain(l.trial.crowded().then_some(CROWDED));
        let span = (l.trial.start_unix_s, l.trial.end_unix_s);
        let round_trips = store.read_round_trips(key, Some(l.pct), span)?;
        let trial = Measured {
            iteration: key.iteration,
            load_pps: l.trial.load,
            load_lost,
            load_dropped,
            ndr_dropped,
            latency: &l.latency,
            troubles: troubles.map(String::from).collect(),
            longest_stall_ms: l.trial.dut_cpu.as_ref().map(|c| c.longest_ms),
            others_share: l.trial.others_share(),
            apart_by_second: apart_by_second(round_trips, &l.latency, l.trial.start_unix_s),
        };
        let at = (cell, Load::Ndr(l.pct));
        let window = search_latency_window(l.trial.duration);
        add(results, at, trial, &intervals, window);
    }
    Ok(())
}

/// The lab's floor, when `lab.json` records one, with its histogram when it was measured.
pub(crate) fn floor(store: &Store, lab: &LabRecord) -> Result<Option<Floor>, InputError> {
    let Some(record) = &lab.latency_floor else {
        return Ok(None);
    };
    let latency = match record.measured {
        Some(_) => store.read_floor()?.map(|intervals| {
            let (merged, _) = reduce(&intervals, FLOOR, (0.0, f64::INFINITY));
            merged
        }),
        None => None,
    };
    Ok(Some(Floor {
        record: record.clone(),
        latency,
    }))
}

/// A trial's latency as its record says it, before its histograms are read.
struct Measured<'a> {
    iteration: u32,
    load_pps: f64,
    load_lost: Option<f64>,
    load_dropped: Option<f64>,
    ndr_dropped: Option<f64>,
    latency: &'a TrialLatency,
    troubles: Vec<String>,
    longest_stall_ms: Option<f64>,
    others_share: Option<f64>,
    /// Each second's distance between the CPUs ([`ProbeTrial::apart_by_second`]).
    apart_by_second: Vec<Option<u32>>,
}

/// Each second's distance between the CPUs of a trial that started at `start_unix_s`: from
/// its readings (`round_trips`) when it kept them, so that a report made again follows the
/// rule of the build that makes it; else as its record kept them.
fn apart_by_second(
    round_trips: Option<RoundTrips>,
    latency: &TrialLatency,
    start_unix_s: f64,
) -> Vec<Option<u32>> {
    let summary = match round_trips {
        Some(r) => r.summary(start_unix_s),
        None => latency.cpu_round_trip.clone(),
    };
    summary.map_or(Vec::new(), |s| s.per_second_ns)
}

/// Adds one trial, its `intervals` cut to `window`, to its series in `results` (made when it
/// is the first).
fn add(
    results: &mut Results,
    ((version, config, profile), load): (Cell<'_>, Load),
    trial: Measured<'_>,
    intervals: &[Interval],
    window: (f64, f64),
) {
    let position = (results.latency.iter()).position(|s| {
        (
            s.version.as_str(),
            s.config.as_str(),
            s.profile.as_str(),
            s.load,
        ) == (version, config, profile, load)
    });
    let series = match position {
        Some(i) => &mut results.latency[i],
        None => {
            let name = match load {
                Load::Ndr(pct) => format!("{version}.{config}.{profile}.{pct}pct"),
                Load::Offered | Load::Max | Load::Alternating(_) => {
                    format!("{version}.{config}.{profile}")
                }
            };
            results.latency.push(LatencySeries {
                name,
                version: version.to_string(),
                config: config.to_string(),
                profile: profile.to_string(),
                load,
                probe_rate_pps: trial.latency.probe_rate_pps,
                trials: Vec::new(),
                established: Latency::new(),
                first_packet: None,
                in_dut: None,
                first_packet_in_dut: None,
            });
            results.latency.last_mut().expect("just pushed")
        }
    };
    let tags = [ESTABLISHED, ESTABLISHED_IN_DUT];
    let (merged, established) = probe_kind(intervals, tags, window, &trial.latency.established);
    series.established.add(&merged[0]);
    add_in_dut(&mut series.in_dut, &merged[1]);
    let first_packet = trial.latency.first_packet.as_ref().map(|summary| {
        let tags = [FIRST_PACKET, FIRST_PACKET_IN_DUT];
        let (merged, kind) = probe_kind(intervals, tags, window, summary);
        series
            .first_packet
            .get_or_insert_with(Latency::new)
            .add(&merged[0]);
        add_in_dut(&mut series.first_packet_in_dut, &merged[1]);
        kind
    });
    series.trials.push(ProbeTrial {
        iteration: trial.iteration,
        load_pps: trial.load_pps,
        load_lost: trial.load_lost,
        load_dropped: trial.load_dropped,
        ndr_dropped: trial.ndr_dropped,
        established,
        first_packet,
        troubles: trial.troubles,
        longest_stall_ms: trial.longest_stall_ms,
        others_share: trial.others_share,
        cpu_round_trip_ns: trial.latency.cpu_round_trip.as_ref().map(|r| r.median_ns),
        apart_by_second: trial.apart_by_second,
    });
}

/// Adds a trial's time in the DUT of one kind, `in_dut`, to its series' `whole`, when the DUT
/// recorded it.
pub(crate) fn add_in_dut(whole: &mut Option<Latency>, in_dut: &Latency) {
    if !in_dut.is_empty() {
        whole.get_or_insert_with(Latency::new).add(in_dut);
    }
}

/// One probe kind of a trial, its latency and time in the DUT tagged `tags`: both windows
/// merged, and its figures with the counts of `summary`.
fn probe_kind(
    intervals: &[Interval],
    tags: [&str; 2],
    window: (f64, f64),
    summary: &LatencySummary,
) -> ([Latency; 2], ProbeKind) {
    let (merged, seconds) = reduce(intervals, tags[0], window);
    let (in_dut, in_dut_seconds) = reduce(intervals, tags[1], window);
    let kind = ProbeKind {
        window: merged.percentiles(),
        seconds,
        probes: Some(summary.probes),
        in_dut: in_dut.percentiles(),
        in_dut_seconds,
    };
    ([merged, in_dut], kind)
}

/// The histograms of `tag` in `window` merged, and each one's start and P50.
fn reduce(
    intervals: &[Interval],
    tag: &str,
    window: (f64, f64),
) -> (Latency, Vec<(Duration, u64)>) {
    let mut merged = Latency::new();
    let mut seconds = Vec::new();
    for i in windowed(intervals, tag, window) {
        merged.add(&i.latency);
        if !i.latency.is_empty() {
            seconds.push((i.start, i.latency.quantile(0.5)));
        }
    }
    (merged, seconds)
}
