//! What a trial's latency probes leave (issue 35): one histogram per second and probe kind,
//! stored as the trial's `latency.hlog`, and their summary over the measured window for its
//! `meta.json` ([`crate::store::latency`]); and the lab's floor, measured once per campaign.

use std::path::Path;
use std::time::{Duration, SystemTime};

use anyhow::Context as _;

use crate::config::Trial;
use crate::lab::distance::RoundTrips;
use crate::stats::latency::log::Interval;
use crate::stats::latency::{Latency, LatencySummary};
use crate::store::latency::FLOOR;
use crate::store::{FloorRecord, SampleRow, Store, TrialLatency};
use crate::traffic::latency::{ProbeKind, Probes};

/// Each histogram of a trial's log spans one second, as its packet rates.
const INTERVAL: Duration = Duration::from_secs(1);

/// Writes `probes` as the `latency.hlog` of the trial in `dir` (its traffic started at
/// `start_unix_s`), their time in the DUT beside their latency where the DUT recorded it, and
/// returns their summary for its `meta.json`: per kind, the histograms of the seconds `window`
/// keeps (as its packet rates), and the probes' counts over the whole trial; with
/// `round_trips`, the CPUs' distance meanwhile.
pub(crate) fn store_trial(
    store: &Store,
    dir: &Path,
    (probes, round_trips): (&Probes, Option<&RoundTrips>),
    start_unix_s: f64,
    window: &Trial,
    rate_pps: u64,
    load_pct: Option<u32>,
) -> anyhow::Result<TrialLatency> {
    let base = SystemTime::UNIX_EPOCH + Duration::from_secs_f64(start_unix_s.max(0.0));
    let base_ns = base
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut intervals = Vec::new();
    let mut summaries = Vec::new();
    let mut in_dut = Vec::new();
    for kind in ProbeKind::ALL {
        let per_second = probes.intervals(kind, base_ns, INTERVAL);
        let kept = measured(&per_second, window);
        summaries.push(LatencySummary::new(&kept, probes.of(kind).summary.probes));
        intervals.extend(per_second);
        let per_second = probes.in_dut_intervals(kind, base_ns, INTERVAL);
        in_dut.push(measured(&per_second, window).percentiles());
        intervals.extend(per_second);
    }
    store
        .write_latency(dir, base, &intervals)
        .with_context(|| format!("writing the latency of {}", dir.display()))?;
    let [established, first_packet] = [summaries[0], summaries[1]];
    Ok(TrialLatency {
        probe_rate_pps: rate_pps,
        load_pct,
        established,
        first_packet: (first_packet.probes.sent > 0).then_some(first_packet),
        tx_unstamped: ProbeKind::ALL
            .map(|k| probes.of(k).tx_unstamped)
            .iter()
            .sum(),
        carried: probes.carried,
        cpu_round_trip: round_trips.and_then(|r| r.summary(start_unix_s)),
        established_in_dut: in_dut[0],
        first_packet_in_dut: in_dut[1],
    })
}

/// Takes the probes out of a trial's seconds (its traffic started at `start_unix_s`): each
/// row loses the probes sent in its second (a probe's latency, microseconds, never moves it
/// to the next one but at the edge); returns how many probes arrived in all.
pub(crate) fn take_out(rows: &mut [SampleRow], probes: &Probes, start_unix_s: f64) -> u64 {
    let ns = |s: f64| (s.max(0.0) * 1e9) as u64;
    for row in rows.iter_mut() {
        let (from, to) = (ns(start_unix_s + row.t_s - 1.0), ns(start_unix_s + row.t_s));
        let n: u64 = ProbeKind::ALL
            .iter()
            .map(|&k| probes.window(k, from, to).len())
            .sum();
        row.rx_pkts = row.rx_pkts.saturating_sub(n);
        row.rx_pps = (row.rx_pps - n as f64).max(0.0);
    }
    ProbeKind::ALL
        .iter()
        .map(|&k| probes.of(k).summary.probes.received)
        .sum()
}

/// The seconds of `intervals` that `window` keeps (after its warm-up, up to its cool-down: a
/// second `i` from the start is sample `i + 1`), merged.
fn measured(intervals: &[Interval], window: &Trial) -> Latency {
    let first = crate::config::secs(window.warmup).ceil() + 1.0;
    let last =
        (crate::config::secs(window.duration) - crate::config::secs(window.cooldown)).floor();
    let mut merged = Latency::new();
    for i in intervals {
        let t_s = i.start.as_secs_f64().round() + 1.0;
        if (first..=last).contains(&t_s) {
            merged.add(&i.latency);
        }
    }
    merged
}

/// The floor's record and its histogram for the store: what `probes` measured, straight from
/// the generator to the receiver, over `duration` at `rate_pps`.
pub(crate) fn floor_record(
    probes: &Probes,
    rate_pps: u64,
    duration: Duration,
) -> (FloorRecord, Interval) {
    let established = probes.of(ProbeKind::Established);
    let record = FloorRecord {
        probe_rate_pps: rate_pps,
        duration_s: duration.as_secs_f64(),
        measured: Some(established.summary),
        user_to_driver: probes.user_to_driver.percentiles(),
        not_measured: None,
        clock_tick_ns: Some(crate::traffic::latency::clock::tick_ns()),
    };
    let interval = Interval {
        tag: Some(FLOOR.into()),
        start: Duration::ZERO,
        length: duration,
        latency: established.latency.clone(),
    };
    (record, interval)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn second(i: u64, ns: u64) -> Interval {
        let mut latency = Latency::new();
        latency.record(ns);
        Interval {
            tag: Some(ProbeKind::FirstPacket.name().into()),
            start: Duration::from_secs(i),
            length: INTERVAL,
            latency,
        }
    }

    #[test]
    fn the_window_keeps_the_seconds_the_packet_rates_keep() {
        // 10 s, 2 s of warm-up, 1 of cool-down: samples 3 to 9, seconds 2 to 8 from the start.
        let trial = Trial::default();
        let seconds: Vec<Interval> = (0..10).map(|i| second(i, 1000 + i)).collect();
        let kept = measured(&seconds, &trial);
        assert_eq!(kept.len(), 7);
        assert_eq!(kept.quantile(0.0), 1002);
        assert_eq!(kept.quantile(1.0), 1008);
    }
}
