//! A synthetic results directory with latency (fixed-load trials, latency trials after
//! throughput searches, the floor) made through the store, and what the report makes of it:
//! the README's tables and verdicts, results.json's fields, the charts, and a corrupt
//! `latency.hlog` refused. The directory is also the offline test's fixture,
//! tests/data/latency/, which `BENCHLAB_BLESS=1` writes again.

use std::path::Path;
use std::time::{Duration, SystemTime};

use super::*;
use crate::config::Campaign;
use crate::ingest::benchlab::latency::{ProbeKind, ProbeTrial};
use crate::lab::distance::{RoundTripSummary, RoundTrips};
use crate::lab::stall::CpuStalls;
use crate::report::pipeline::{from_dir, Overrides};
use crate::report::verdict::Quantile;
use crate::search::sim::{LossCurve, SimulatedDut};
use crate::search::{search, SearchConfig};
use crate::stats::latency::log::Interval;
use crate::stats::latency::{Latency, LatencySummary};
use crate::store::latency::{
    ESTABLISHED, ESTABLISHED_IN_DUT, FIRST_PACKET, FIRST_PACKET_IN_DUT, FLOOR, ROUND_TRIPS_FILE,
};
use crate::store::{
    plan, FloorRecord, LatencyLoad, SampleRow, SearchRecord, SearchTrial, SearchTrialId, Store,
    TrialKey, TrialLatency, TrialMeta,
};

/// Two versions, two config sets, three iterations of a fixed-load profile and of a
/// throughput profile, latency on both.
const CAMPAIGN: &str = r#"title = "latency under load"
iterations = 3
design = "trials"
config_sets = ["forwarding", "nft-stateful"]

[[versions]]
name = "a"

[[versions]]
name = "b"

[trial]
duration = 5
warmup = 1
cooldown = 1
latency = true

[latency]
rate = 1000
loads = [0, 50, 90]
in_dut = true

[[profiles]]
name = "inet4"
af = "inet4"
rate = 500000

[[profiles]]
name = "ndr"
af = "inet4"
rate = "max"
measure = "throughput"

[search]
preset = "rfc2544"
"#;

/// The search's NDR in the fixture, packets/s.
const NDR: f64 = 1e6;
/// What every out-of-window second holds: a latency the window must keep out.
const OUTSIDE_NS: u64 = 5_000_000;

/// One second of probes: 200 values `k · step + shift` ns, k = 1…200 (P50 at k = 100).
fn second(step: u64, shift: u64) -> Latency {
    let mut l = Latency::new();
    (1..=200).for_each(|k| l.record(k * step + shift));
    l
}

fn interval(tag: &str, start: u64, latency: Latency) -> Interval {
    Interval {
        tag: Some(tag.into()),
        start: Duration::from_secs(start),
        length: Duration::from_secs(1),
        latency,
    }
}

/// A trial's histograms: `seconds` seconds of each kind, those `kept` (by start) with the
/// distribution (established: `step`, `shift`; first packets 30 µs and 1 µs per iteration
/// later), the others far off.
fn trial_log(seconds: u64, kept: std::ops::Range<u64>, step: u64, iteration: u32) -> Vec<Interval> {
    let shift = 100 * u64::from(iteration - 1);
    let first = 30_000 + 1_000 * u64::from(iteration - 1);
    let mut out = Vec::new();
    for s in 0..seconds {
        let (e, f) = match kept.contains(&s) {
            true => (second(step, shift), second(step, shift + first)),
            false => (second(1, OUTSIDE_NS), second(1, OUTSIDE_NS)),
        };
        out.push(interval(ESTABLISHED, s, e));
        out.push(interval(FIRST_PACKET, s, f));
    }
    out
}

/// What a trial's meta.json holds of its probes: 5000 sent, 10 lost (percentiles unused).
fn trial_latency(pct: Option<u32>) -> TrialLatency {
    let summary = LatencySummary {
        latency: None,
        probes: ProbeCounts {
            sent: 5000,
            received: 4990,
            lost: 10,
            ..ProbeCounts::default()
        },
    };
    TrialLatency {
        probe_rate_pps: 1000,
        load_pct: pct,
        established: summary,
        first_packet: Some(summary),
        tx_unstamped: 0,
        carried: false,
        cpu_round_trip: None,
        established_in_dut: None,
        first_packet_in_dut: None,
    }
}

fn meta(key: &TrialKey, latency: Option<TrialLatency>) -> TrialMeta {
    // The DUT forwarded the fixed load all but 0.2 % (more than 1 % lost: saturated).
    TrialMeta {
        offered_pps: Some(500_000),
        tx_pkts: 2_500_000,
        rx_pkts: 2_495_000,
        lost_pkts: 5_000,
        latency,
        ..crate::store::tests::meta(key)
    }
}

/// The latency step of a (version, config set): b's probes take 1.5 times a's; the config sets
/// do not differ.
fn step(key: &TrialKey) -> u64 {
    if key.version == "b" {
        300
    } else {
        200
    }
}

/// A search iteration: a simulated search of a 1 Mpps DUT, then latency trials at 0, 50 and
/// 90 % of its NDR, whose latency grows with the load.
fn search_iteration(store: &Store, key: &TrialKey) {
    let mut dut = SimulatedDut::new(LossCurve::Cliff { capacity: NDR }, 0.0, 7);
    let result = search(&SearchConfig::rfc2544(), 2e6, &mut dut).unwrap();
    let mut latency = Vec::new();
    for pct in [0, 50, 90] {
        let load = NDR * f64::from(pct) / 100.0;
        let dir = store
            .search_trial_dir(key, SearchTrialId::Latency(pct))
            .unwrap();
        std::fs::create_dir_all(&dir).unwrap();
        let step = step(key) * u64::from(100 + pct) / 100;
        // Four seconds of load; the probes' part second after it (second 4, an idle DUT's) is
        // as far off as the first, and as left out.
        let mut log = trial_log(5, 1..4, step, key.iteration);
        // The DUT recorded the probes' coming in: a quarter of each latency was in it, and
        // the first packets' 5 µs more, 100 ns more each iteration (the out-of-window seconds
        // far off, as the latency's).
        let first = 5_000 + 100 * u64::from(key.iteration - 1);
        for s in 0..5 {
            let [established, first] = match s {
                0 | 4 => [(1, OUTSIDE_NS); 2],
                _ => [(step / 4, 0), (step / 4, first)],
            };
            log.push(interval(
                ESTABLISHED_IN_DUT,
                s,
                second(established.0, established.1),
            ));
            log.push(interval(FIRST_PACKET_IN_DUT, s, second(first.0, first.1)));
        }
        store
            .write_latency(&dir, SystemTime::UNIX_EPOCH, &log)
            .unwrap();
        // At 90 %, iteration 2: the DUT forwarded 2 % short of the load; iteration 3 of
        // version b: its input ring refused 5 % of the load, which the generator sent again
        // (both overloaded); iteration 1: it refused 0.5 % (not).
        let short = if pct == 90 && key.iteration == 2 {
            0.98
        } else {
            1.0
        };
        let dropped = match (pct, key.iteration, key.version.as_str()) {
            (90, 3, "b") => 0.05,
            (90, 1, _) => 0.005,
            _ => 0.0,
        };
        let sent = (load * 4.0) as u64;
        // At 50 %, iteration 1 of version a: the host took the DUT's CPU away for 100 ms (50,000
        // frames at the load, 4,352 queued) and its ring refused 2 % of the load, less than
        // arrived meanwhile (stalled, not overloaded). At 90 %, b's third: a 2 ms stall, shorter
        // than the queue holds, accounts for none of its 5 % (overloaded).
        // At 50 %, b's second: other programs took 0.8 s of its 4 s (a record of one CPU).
        let (dropped, stall_ms) = match (pct, key.iteration, key.version.as_str()) {
            (50, 1, "a") => (0.02, Some(100.0)),
            (90, 3, "b") => (dropped, Some(2.0)),
            (50, 2, "b") => (dropped, Some(0.5)),
            _ => (dropped, None),
        };
        let others_ms = match (pct, key.iteration, key.version.as_str()) {
            (50, 2, "b") => 800.0,
            _ => 20.0,
        };
        let dut_cpu = stall_ms.map(|ms| CpuStalls {
            cpu: 1,
            wakes: 4000,
            longest_ms: ms,
            stalls_ms: vec![ms],
            steal_ms: ms,
            busy_ms: 2000.0,
            others: Some(crate::lab::stall::OthersTime {
                ms: others_ms,
                cpus: Vec::new(),
            }),
            queue_frames: 4352,
        });
        let trial = SearchTrial {
            load,
            duration: 4.0,
            sent,
            received: (load * 4.0 * short) as u64,
            late: 0,
            drops: [
                ("benchlab-0-dut/bl0d1", (sent as f64 * dropped) as u64),
                ("benchlab-0-sender/bl0s1", (sent as f64 * dropped) as u64),
            ]
            .map(|(iface, n)| (iface.to_string(), n))
            .into(),
            dut_cpu,
            valid: true,
            problem: None,
            start_unix_s: 2000.0,
            end_unix_s: 2004.0,
        };
        let mut latency_of = trial_latency(Some(pct));
        // Iteration 1's CPUs were near (120 ns), the others' far (190, 200 ns).
        let apart = [120, 190, 200][key.iteration as usize - 1];
        latency_of.cpu_round_trip = Some(RoundTripSummary {
            median_ns: apart,
            min_ns: apart - 10,
            max_ns: apart + 10,
            samples: 20,
            per_second_ns: vec![Some(apart); 4],
        });
        if pct == 50 && key.iteration == 3 {
            // Its readings, which the report follows over its record: in its third second
            // (from 2002 s) the host moved the vCPUs, so neither that second nor the next is
            // at a settled distance.
            let round_trips = RoundTrips {
                cpus: [0, 1],
                period_ms: 500.0,
                samples: vec![
                    (2000.1, 200),
                    (2001.1, 200),
                    (2002.1, 200),
                    (2002.6, 420),
                    (2003.1, 200),
                ],
                missed: 0,
            };
            let text = serde_json::to_string(&round_trips).unwrap();
            std::fs::write(dir.join(ROUND_TRIPS_FILE), text).unwrap();
        }
        latency.push(LatencyLoad {
            pct,
            trial,
            latency: latency_of,
        });
    }
    // The lab's record of the search's trials; b's input ring refused 4 % of the load in
    // those at the NDR.
    let ndr = result.ndr().unwrap();
    let trials = (result.trials.iter())
        .map(|t| {
            let dropped = match key.version.as_str() {
                "b" if (t.load - ndr).abs() < 1e-6 => t.sent / 25,
                _ => 0,
            };
            SearchTrial {
                load: t.load,
                duration: t.duration,
                sent: t.sent,
                received: t.received,
                late: 0,
                drops: [("benchlab-0-dut/bl0d1".to_string(), dropped)].into(),
                dut_cpu: None,
                valid: t.valid,
                problem: None,
                start_unix_s: 1000.0,
                end_unix_s: 1000.0 + t.duration,
            }
        })
        .collect();
    let record = SearchRecord {
        generator_max: None,
        calibration: Vec::new(),
        result: Some(result),
        failure: None,
        trials,
        opening: None,
        closing: None,
        wall_s: 30.0,
        latency,
        probes_pps: Some(10_000),
    };
    store.write_search(key, &record).unwrap();
}

/// The floor: its record in lab.json and its histogram.
fn floor(store: &Store) {
    let mut latency = Latency::new();
    (1..=300).for_each(|k| latency.record(1_500 + 10 * k));
    let record = FloorRecord {
        probe_rate_pps: 10_000,
        duration_s: 5.0,
        measured: Some(LatencySummary::new(
            &latency,
            ProbeCounts {
                sent: 50_000,
                received: 50_000,
                ..ProbeCounts::default()
            },
        )),
        user_to_driver: second(5, 1_000).percentiles(),
        not_measured: None,
        clock_tick_ns: Some(10),
    };
    let one = interval(FLOOR, 0, latency);
    (store.record_floor(record, Some((SystemTime::UNIX_EPOCH, one)))).unwrap();
}

/// Writes the synthetic results directory into `dir`.
pub(crate) fn results_dir(dir: &Path) {
    let campaign =
        Campaign::from_toml(CAMPAIGN, "campaign.toml", &["forwarding", "nft-stateful"]).unwrap();
    let store = Store::create(dir, &campaign).unwrap();
    for key in plan(&campaign) {
        store.begin_trial(&key).unwrap();
        let second = SampleRow {
            t_s: 0.0,
            tx_pkts: 500_000,
            rx_pkts: 499_000,
            tx_pps: 500_000.0,
            rx_pps: 499_000.0,
        };
        let rows: Vec<SampleRow> = (1..=5)
            .map(|t| SampleRow {
                t_s: f64::from(t),
                ..second
            })
            .collect();
        let latency = if key.profile == "ndr" {
            search_iteration(&store, &key);
            None
        } else {
            let log = trial_log(5, 1..4, step(&key), key.iteration);
            let dir = store.trial_dir(&key);
            store
                .write_latency(&dir, SystemTime::UNIX_EPOCH, &log)
                .unwrap();
            Some(trial_latency(None))
        };
        store
            .finish_trial(&key, &rows, &meta(&key, latency))
            .unwrap();
    }
    floor(&store);
}

/// The report of a fresh synthetic directory, written into `out`: its README and results.json.
fn reported(out: &Path) -> (Report, String, serde_json::Value) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("results");
    results_dir(&dir);
    report_of(&dir, out)
}

/// The report of the results directory `dir` (its config sets `forwarding` and
/// `nft-stateful`), written into `out`: the model, its README and results.json.
pub(super) fn report_of(dir: &Path, out: &Path) -> (Report, String, serde_json::Value) {
    let known = ["forwarding", "nft-stateful"];
    let written = from_dir(dir, out, Overrides::default(), &known).unwrap();
    let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
    let json = std::fs::read(out.join("results.json")).unwrap();
    (
        written.report,
        readme,
        serde_json::from_slice(&json).unwrap(),
    )
}

#[test]
fn the_readme_shows_each_loads_figures_of_the_measured_window_only() {
    let out = tempfile::tempdir().unwrap();
    let (report, readme, _) = reported(out.path());
    // 4 cells of the fixed profile, 4 × 3 loads after the searches.
    assert_eq!(report.latency.len(), 16);
    assert!(readme.contains("\n## Latency under load\n"), "{readme}");
    // Its searches ran with the probes (`search.json`'s `probes_pps`): said once.
    let searched = "The searches for the NDRs those loads are shares of ran with the probes too \
                    (10000 probes/s)";
    assert_eq!(readme.matches(searched).count(), 1, "{readme}");
    assert!(
        readme.contains(
            "Latency floor (generator → receiver, no DUT, same host): P50 3 µs, P99 4.47 µs \
             (10000 probes/s for 5 s: 50000 probes, 0 lost; user space to the driver, P50 \
             1.5 µs, left out by the kernel's transmit stamp; the clock's tick, 10 ns)."
        ),
        "{readme}"
    );
    // a, forwarding: 200 values k · 200 ns (+ 0, 100, 200 ns by iteration) per second; the
    // seconds outside the window (5 ms) never show.
    let table = "### a, forwarding, inet4\n\n\
                 | load | trials | load lost | P50 | trials' P50 | CPUs' round trip | P50 in the DUT | trials' P50 in the DUT | quiet seconds' P50 in the DUT | P90 | P99 | P99.9 | max | probes sent | received | lost |\n\
                 |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n\
                 | 500 Kpps | 3 | 0.20 % | 20.2 µs | 20 µs–20.2 µs | – | – | – | – | 36.2 µs | 39.8 µs | 40.2 µs | 40.2 µs | 15000 | 14970 | 30 |\n";
    assert!(readme.contains(table), "{readme}");
    assert!(!readme.contains(" ms |"), "{readme}");
    // The searches' DUT recorded the probes' coming in: what the columns hold is said once.
    assert_eq!(
        readme
            .matches("*in the DUT* is the time from there")
            .count(),
        1
    );
    assert!(
        readme.contains("| 50 % of the NDR (500 Kpps) | 3 | 0 | 30.2 µs | 30 µs–30.2 µs | 120 ns–200 ns | 7.5 µs | 7.5 µs | 7.5 µs (9 of 9 s) |"),
        "{readme}"
    );
    // After the searches, every load with its rate.
    for row in [
        "| probes only | 3 | – | 20.2 µs |",
        "| 50 % of the NDR (500 Kpps) | 3 | 0 | 30.2 µs |",
        "| 90 % of the NDR (900 Kpps) | 3 | 0.67 % | 38.2 µs |",
    ] {
        assert!(readme.contains(row), "{row}\n{readme}");
    }
    // A load the DUT did not forward whole is said, under its table.
    assert!(
        readme.contains(
            "\nAt 90 % of the NDR the DUT was saturated in 1 of 3 trials: in 1 it did not forward \
             the whole load (2.0 % of it lost). It forwarded less than during the search, so their \
             latency is that of a saturated DUT, not of 90 % of its NDR.\n"
        ),
        "{readme}"
    );
    // b's searches forwarded their NDR with the input queue full: the line says why 90 % of it
    // saturated the DUT.
    assert!(
        readme.contains(
            "\nAt 90 % of the NDR the DUT was saturated in 2 of 3 trials: in 1 it did not forward \
             the whole load (2.0 % of it lost); in 1 its input queue was full (an interface \
             dropped 5.0 % of the load). The searches' trials at the NDR had the DUT's input \
             queue full as well (an interface dropped 4.0 % of their load, sent again): the NDR \
             is a rate the DUT forwards saturated, and a steady load at 90 % of it was at or \
             past the knee where a standing queue forms, whose length follows the machine's \
             speed. Their latency is that of a saturated DUT, not of 90 % of its capacity.\n"
        ),
        "{readme}"
    );
    // A load whose input queue filled only while the host had the DUT's CPU is said apart.
    assert!(
        readme.contains(
            "\nAt 50 % of the NDR the host took the DUT's CPU away in 1 of 3 trials, for up to \
             100 ms, longer than its input queue holds at that load (an interface dropped 2.0 % \
             of the load, no more than arrived meanwhile). The load did not saturate the DUT; \
             the probes of those stretches waited for the machine, and those trials count as \
             disturbed in the comparisons.\n"
        ),
        "{readme}"
    );
    // The loads during which other programs took the lab's CPUs are said too, once a table.
    assert!(
        readme.contains(
            "\nOther programs took the lab's CPUs during 1 of the 9 trials after the searches \
             (at 50 % of the NDR), up to 20.0 % of their time in a trial. The DUT's threads \
             preempt them, but they take the CPUs' caches and delay their wake-ups: those trials \
             measured the machine's other work as much as the DUT, and count as disturbed in \
             the comparisons. Run nothing else while latency is measured.\n"
        ),
        "{readme}"
    );
    // b's second trial at 50 %, in b's two tables.
    assert_eq!(
        readme.matches("Other programs took the lab's CPUs").count(),
        2
    );
    assert_eq!(readme.matches("did not forward the whole load").count(), 4);
    // b's third trial, whose input ring refused 5 % of the load, in b's two series.
    assert_eq!(
        (readme.matches("its input queue was full (an interface dropped 5.0 % of the load)"))
            .count(),
        2
    );
    // Each load's trials' CPUs' distance, and under each search's table that it moved.
    assert_eq!(
        readme.matches(" | 120 ns–200 ns | ").count(),
        12,
        "{readme}"
    );
    // Under each search's table, the P50 at each distance: iteration 1's 3 seconds near,
    // the other two's 6 far.
    let apart = "\nThe probes' CPU and the DUT's were at different distances in these trials";
    assert_eq!(readme.matches(apart).count(), 4, "{readme}");
    assert!(
        readme.contains("| load | 120 ns | 190 ns–200 ns |\n|---|---:|---:|\n| probes only | "),
        "{readme}"
    );
    assert!(
        readme.contains(" (3 s) | ") && readme.contains(" (6 s) |\n"),
        "{readme}"
    );
    // Two of b's three trials overloaded: its latency at 90 % is no finding.
    assert!(
        readme.contains(
            "| forwarding, ndr, P99 latency at 90 % of the NDR | b vs a | — | unpaired | — | \
             3 iterations each | a at 900 Kpps | unreliable, no verdict: 2 of 3 b trials \
             overloaded; re-run"
        ),
        "{readme}"
    );
    assert!(
        readme.contains("![One-way latency against load: inet4"),
        "{readme}"
    );
    assert!(readme.contains("](latency-cdf.ndr.png)"), "{readme}");
}

#[test]
fn first_packets_and_comparisons_reach_the_readme_and_the_verdicts() {
    let out = tempfile::tempdir().unwrap();
    let (report, readme, _) = reported(out.path());
    // The first-packet table's row that starts with `row` ends with `end`.
    let row_ends = |row: &str, end: &str| {
        let line = readme.lines().find(|l| l.starts_with(row));
        let line = line.unwrap_or_else(|| panic!("{readme}"));
        assert!(line.ends_with(end), "{line}");
    };
    // First packets: 30, 31, 32 µs above the established probes' P50.
    row_ends(
        "| a | forwarding | inet4 | 500 Kpps | one way | 20.2 µs | 39.8 µs |",
        "| +31 µs ± 2.51 µs | 3 trials | **higher latency** |",
    );
    // In the DUT, 5, 5.1 and 5.2 µs: t(2) = 4.303, ± 249 ns (the histograms' buckets) and the
    // clock's tick, 10 ns; the fixed-load trials' DUT recorded none, so they have no such row.
    row_ends(
        "| a | forwarding | ndr | 50 % of the NDR (500 Kpps) | in the DUT |",
        "| +5.1 µs ± 259 ns | 3 trials | **higher latency** |",
    );
    assert!(!readme.contains("| 500 Kpps | in the DUT |"), "{readme}");
    // b's probes take 1.5 times a's: a higher P99 at every load (the verdicts keep the P99s),
    // but at 90 % two of b's three trials were overloaded: no finding there; the config sets
    // do not differ.
    let (latency, p50s): (Vec<&Verdict>, Vec<&Verdict>) = (report.verdicts.iter())
        .filter(|v| v.metric != Metric::Throughput)
        .partition(|v| v.metric == Metric::Latency(Quantile::P99));
    // Versions: 2 sets × (1 + 3 loads); config sets: 2 versions × 4.
    assert_eq!(latency.len(), 16);
    // The time in the DUT, recorded by the searches' latency trials only: 2 sets × 3 loads,
    // 2 versions × 3. b's takes 1.5 times a's there too. The fixed-load trials, whose DUT
    // recorded none, have their one-way P50 compared instead: 2 sets, 2 versions.
    let (in_dut, one_way): (Vec<&Verdict>, Vec<&Verdict>) =
        (p50s.iter()).partition(|v| v.metric == Metric::Latency(Quantile::InDutP50));
    assert_eq!(in_dut.len(), 12);
    assert_eq!(one_way.len(), 4);
    assert!(one_way
        .iter()
        .all(|v| v.metric == Metric::Latency(Quantile::P50)));
    let b_in_dut = (in_dut.iter())
        .find(|v| v.subject == "b.forwarding.ndr.50pct")
        .unwrap();
    assert_eq!(
        b_in_dut.finding(),
        crate::report::verdict::Finding::HigherLatency
    );
    assert_eq!(
        b_in_dut.context,
        [
            "forwarding",
            "ndr",
            "P50 latency in the DUT at 50 % of the NDR"
        ]
    );
    let b = (latency.iter())
        .find(|v| {
            v.subject == "b.forwarding.ndr.90pct" && v.metric == Metric::Latency(Quantile::P99)
        })
        .unwrap();
    assert_eq!(b.finding(), crate::report::verdict::Finding::Unreliable);
    let at_50 = (latency.iter())
        .find(|v| v.subject == "b.forwarding.ndr.50pct")
        .unwrap();
    assert_eq!(
        at_50.finding(),
        crate::report::verdict::Finding::HigherLatency
    );
    assert_eq!(
        b.context,
        ["forwarding", "ndr", "P99 latency at 90 % of the NDR"]
    );
    assert_eq!(b.speed_text(), "a at 900 Kpps");
    let sets = (latency.iter()).filter(|v| v.reference_label == "forwarding");
    assert_eq!(sets.clone().count(), 8);
    assert!(sets.clone().all(|v| !v.significant()), "{readme}");
    assert!(readme.contains("| forwarding, ndr, P99 latency at 90 % of the NDR | b vs a |"));
    assert!(readme.contains("| **higher latency** |"), "{readme}");
    assert!(
        readme.contains("\n### Latency compared\n"),
        "the ministat blocks: {readme}"
    );
    assert!(
        readme.contains("forwarding, inet4, P99 latency at 500 Kpps: b +"),
        "{readme}"
    );
}

#[test]
fn results_json_holds_each_load_the_floor_and_the_latency_verdicts() {
    let out = tempfile::tempdir().unwrap();
    let (_, _, json) = reported(out.path());
    let latency = json["latency"].as_array().unwrap();
    let a = latency
        .iter()
        .find(|l| l["name"] == "a.forwarding.inet4")
        .unwrap();
    assert_eq!(a["load_pct"], serde_json::Value::Null);
    assert_eq!(a["offered_pps"], 500_000.0);
    assert_eq!(a["trials"], 3);
    assert_eq!(
        (a["probes_sent"].clone(), a["probes_received"].clone()),
        (15000.into(), 14970.into())
    );
    assert_eq!(a["probes_lost"], 30);
    for field in ["p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns"] {
        let ns = a[field].as_u64().unwrap();
        assert!((20_000..=40_300).contains(&ns), "{field}: {ns}");
    }
    assert!(a["first_packet"]["p50_ns"].as_u64().unwrap() > 50_000);
    assert_eq!(a["first_vs_established"]["over"], "trials");
    assert_eq!(a["first_vs_established"]["significant"], true);
    assert_eq!(a["iterations"].as_array().unwrap().len(), 3);
    let ndr = latency
        .iter()
        .find(|l| l["name"] == "a.forwarding.ndr.50pct")
        .unwrap();
    assert_eq!(
        (ndr["load_pct"].clone(), ndr["offered_pps"].clone()),
        (50.into(), 500_000.0.into())
    );
    let by_distance = ndr["p50_by_distance"].as_array().unwrap();
    assert_eq!(by_distance.len(), 2);
    // Iterations 2 and 3 at 190–200 ns, 3 measured seconds each; iteration 3's readings
    // (`cpu-round-trips.json`) leave out its last two as unsettled.
    assert_eq!(
        (
            by_distance[1]["round_trip_low_ns"].clone(),
            by_distance[1]["seconds"].clone()
        ),
        (190.into(), 4.into())
    );
    assert!(a.get("p50_by_distance").is_none());
    // The time in the DUT: a quarter of the latency, every iteration's window merged, and
    // each iteration's own.
    let step_50 = 200 * 150 / 100 / 4;
    assert_eq!(
        ndr["in_dut"]["p50_ns"].as_u64().map(|ns| ns / 10),
        Some(100 * step_50 / 10)
    );
    assert!(ndr["in_dut"].get("probes_sent").is_none());
    // Its quiet seconds: all nine of the window's, every one at the same level.
    assert_eq!(
        ndr["in_dut_quiet"],
        serde_json::json!({"p50_ns": ndr["in_dut"]["p50_ns"], "seconds": 9, "of_seconds": 9})
    );
    for it in ndr["iterations"].as_array().unwrap() {
        assert_eq!(
            it["in_dut_p50_ns"].as_u64().map(|ns| ns / 10),
            Some(100 * step_50 / 10)
        );
    }
    assert!(a.get("in_dut").is_none());
    // The first packets' 5, 5.1, 5.2 µs more in the DUT: its own difference, beside the
    // one-way one.
    let in_dut = &ndr["first_vs_established_in_dut"];
    assert_eq!(
        (in_dut["over"].as_str(), in_dut["n"].as_u64()),
        (Some("trials"), Some(3))
    );
    assert_eq!(in_dut["significant"], true);
    assert!((in_dut["p50_difference_ns"].as_f64().unwrap() - 5_100.0).abs() < 20.0);
    assert!(ndr["first_packet_in_dut"]["p50_ns"].as_u64().unwrap() > 5_000);
    let first = ndr["iterations"][0]["first_packet_in_dut_p50_ns"].as_u64();
    assert!(first.unwrap() > 5_000);
    assert!(a.get("first_vs_established_in_dut").is_none());
    let at_90 = latency
        .iter()
        .find(|l| l["name"] == "a.forwarding.ndr.90pct")
        .unwrap();
    let second = &at_90["iterations"][1];
    assert_eq!(second["troubles"], serde_json::json!(["overloaded"]));
    assert_eq!(second["cpu_round_trip_ns"], 190);
    assert!(a["iterations"][0].get("cpu_round_trip_ns").is_none());
    assert!((second["load_lost_ratio"].as_f64().unwrap() - 0.02).abs() < 1e-9);
    assert_eq!(at_90["iterations"][0]["load_lost_ratio"], 0.0);
    // Its input ring refused 0.5 % of the load: below FULL_QUEUE, not overloaded.
    assert_eq!(at_90["iterations"][0]["load_dropped_ratio"], 0.005);
    assert!(at_90["iterations"][0].get("troubles").is_none());
    // b's third trial lost none of its load, but its input ring refused 5 % of it: overloaded.
    let b_at_90 = latency
        .iter()
        .find(|l| l["name"] == "b.forwarding.ndr.90pct")
        .unwrap();
    let third = &b_at_90["iterations"][2];
    assert_eq!(third["load_lost_ratio"], 0.0);
    assert_eq!(third["load_dropped_ratio"], 0.05);
    assert_eq!(third["troubles"], serde_json::json!(["overloaded"]));
    // Each trial keeps its search's share dropped at the NDR: b's 4 %, a's none.
    assert!((third["ndr_load_dropped_ratio"].as_f64().unwrap() - 0.04).abs() < 1e-4);
    assert_eq!(at_90["iterations"][0]["ndr_load_dropped_ratio"], 0.0);
    // a's first trial at 50 % dropped 2 % of its load while its CPU was away: stalled.
    let a_at_50 = latency
        .iter()
        .find(|l| l["name"] == "a.forwarding.ndr.50pct")
        .unwrap();
    assert_eq!(
        a_at_50["iterations"][0]["troubles"],
        serde_json::json!(["stalled"])
    );
    let floor = &json["latency_floor"];
    assert_eq!(floor["probe_rate_pps"], 10_000);
    assert_eq!(floor["probes_sent"], 50_000);
    assert!(floor["p50_ns"].as_u64().is_some());
    assert_eq!(floor["clock_tick_ns"], 10);
    let verdicts = json["verdicts"].as_array().unwrap();
    let higher = verdicts
        .iter()
        .find(|v| v["metric"] == "latency_p99" && v["verdict"] == "higher_latency");
    assert!(higher.is_some(), "{verdicts:?}");
    assert!(verdicts.iter().any(|v| v["metric"] == "throughput"));
}

#[test]
fn the_charts_are_drawn_for_each_profile() {
    let out = tempfile::tempdir().unwrap();
    let (report, _, _) = reported(out.path());
    for name in [
        "latency.inet4.png",
        "latency-cdf.inet4.png",
        "latency.ndr.png",
        "latency-cdf.ndr.png",
    ] {
        let png = std::fs::read(out.path().join(name)).unwrap();
        assert!(png.starts_with(b"\x89PNG"), "{name}");
    }
    let load = chart::load_chart(&report, "ndr");
    assert!(load.percent);
    let a = &load.lines[0];
    assert_eq!(a.name, "a, forwarding");
    assert_eq!(
        a.points.iter().map(|p| p.x).collect::<Vec<_>>(),
        [0.0, 50.0, 90.0]
    );
    let cdf = chart::cdf_chart(&report, "ndr");
    assert_eq!(cdf.curves.len(), 4);
    assert_eq!(cdf.curves[0].name, "a, forwarding at 90 % of the NDR");
    assert!(cdf.curves[0].first_packet.is_some() && cdf.floor.is_some());
    let last = cdf.curves[0].established.last().unwrap();
    assert_eq!(last.1, 1.0);
}

#[test]
fn a_corrupt_histogram_log_is_refused_naming_it_and_nothing_is_written() {
    let file = "runs/b.nft-stateful.ndr.2/latency/50/latency.hlog";
    let said = refused_with(file, "#[benchlab]\n0.0,1.0,2.0,HISTFAAAAB\n");
    assert!(said.contains("corrupt latency histogram log"), "{said}");
}

#[test]
fn corrupt_round_trips_are_refused_naming_the_file_and_nothing_is_written() {
    let file = "runs/a.forwarding.ndr.3/latency/50/cpu-round-trips.json";
    let said = refused_with(file, "{\"cpus\": [0, 1], \"samples\": 7}");
    assert!(said.contains("corrupted"), "{said}");
    // A meeting far outside its trial (2000 to 2004 s) would ask for a second of that index:
    // refused before anything is allocated for it.
    let far = r#"{"cpus": [0, 1], "period_ms": 500.0, "samples": [[1e15, 200]], "missed": 0}"#;
    let said = refused_with(file, far);
    assert!(
        said.contains("outside its trial (2000 s to 2004 s)"),
        "{said}"
    );
}

/// The report of the test results directory with `file` holding `text` instead: refused in
/// an input error naming the file, no README written; returns what the error said.
fn refused_with(file: &str, text: &str) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("results");
    results_dir(&dir);
    std::fs::write(dir.join(file), text).unwrap();
    let out = tmp.path().join("out");
    let e = from_dir(
        &dir,
        &out,
        Overrides::default(),
        &["forwarding", "nft-stateful"],
    );
    let e = e.unwrap_err();
    let input = e.downcast_ref::<crate::error::InputError>().unwrap();
    assert!(input.0.contains(file), "{e}");
    assert!(!out.join("README.md").exists());
    input.0.clone()
}

#[test]
fn a_missing_histogram_log_is_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("results");
    results_dir(&dir);
    std::fs::remove_file(dir.join("runs/a.forwarding.inet4.1/latency.hlog")).unwrap();
    let out = tmp.path().join("out");
    let written = from_dir(
        &dir,
        &out,
        Overrides::default(),
        &["forwarding", "nft-stateful"],
    );
    let report = written.unwrap().report;
    let w = "runs/a.forwarding.inet4.1/latency.hlog: missing, though the trial's record holds \
             latency; left out of the latency figures";
    assert!(
        report.warnings.iter().any(|x| x == w),
        "{:?}",
        report.warnings
    );
    assert_eq!(report.latency[0].trials.len(), 2);
}

/// A series of one trial whose first packets are `first` ns above its established probes'
/// P50 in each second, and a quarter of that in the DUT.
pub(super) fn one_trial(first: &[u64]) -> LatencySeries {
    let seconds = |base: u64, add: &[u64], share: u64| {
        (add.iter().enumerate())
            .map(|(s, a)| (Duration::from_secs(s as u64 + 2), base + a / share))
            .collect()
    };
    let kind = |add: &[u64]| ProbeKind {
        window: Some(second(100, 0).percentiles().unwrap()),
        seconds: seconds(10_000, add, 1),
        probes: Some(ProbeCounts::default()),
        in_dut: second(100, 0).percentiles(),
        in_dut_seconds: seconds(1_000, add, 4),
    };
    LatencySeries {
        name: "v.c.p".into(),
        version: "v".into(),
        config: "c".into(),
        profile: "p".into(),
        load: Load::Offered,
        probe_rate_pps: 1000,
        trials: vec![ProbeTrial {
            iteration: 1,
            load_pps: 1e5,
            load_lost: None,
            load_dropped: None,
            ndr_dropped: None,
            established: kind(&[0; 4]),
            first_packet: Some(kind(first)),
            troubles: Vec::new(),
            longest_stall_ms: None,
            others_share: None,
            cpu_round_trip_ns: None,
            apart_by_second: Vec::new(),
        }],
        established: second(100, 0),
        first_packet: Some(second(100, 0)),
        in_dut: Some(second(100, 0)),
        first_packet_in_dut: Some(second(100, 0)),
    }
}

#[test]
fn with_one_trial_the_first_packets_interval_is_over_its_seconds() {
    let series = one_trial(&[900, 1000, 1100, 1000]);
    let f = FirstPacket::of(&series, Leg::OneWay, None).unwrap();
    assert_eq!(f.over, Over::Seconds);
    let d = f.difference.unwrap();
    assert_eq!((d.n, d.mean), (4, 1000.0));
    // s = 81.65 ns, t(3) = 3.182: ± 129.9 ns.
    assert!((d.half_width - 129.9).abs() < 0.1, "{d:?}");
    assert!(d.excludes_zero());
    // In the DUT, its own seconds: a quarter of each.
    let d = FirstPacket::of(&series, Leg::InDut, None)
        .unwrap()
        .difference;
    assert_eq!(d.map(|d| (d.n, d.mean)), Some((4, 250.0)));
    // Seconds that disagree: ± 1453 ns holds 0.
    let f = FirstPacket::of(&one_trial(&[0, 2000, 500, 1500]), Leg::OneWay, None).unwrap();
    assert!(!f.difference.unwrap().excludes_zero());
    let f = FirstPacket::of(&one_trial(&[0]), Leg::OneWay, None).unwrap();
    assert_eq!(f.difference, None);
    // One tick (10 ns) more in every second: ± 0 ns, a finding, unless the tick is known.
    let series = one_trial(&[10; 4]);
    let d = FirstPacket::of(&series, Leg::OneWay, None)
        .unwrap()
        .difference;
    assert!(d.unwrap().excludes_zero());
    let d = FirstPacket::of(&series, Leg::OneWay, Some(10))
        .unwrap()
        .difference;
    assert_eq!(
        d.map(|d| (d.half_width, d.excludes_zero())),
        Some((10.0, false))
    );
    // No time in the DUT recorded: nothing to say there.
    let mut series = one_trial(&[900, 1000]);
    series.first_packet_in_dut = None;
    assert_eq!(FirstPacket::of(&series, Leg::InDut, None), None);
}

/// Every file below `dir` but the lock, by path relative to it, with its bytes.
fn files(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut std::collections::BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else if path.file_name() != Some(crate::store::lock::LOCK_FILE.as_ref()) {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

#[test]
fn the_offline_tests_fixture_is_this_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("results");
    results_dir(&dir);
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/latency");
    if std::env::var_os("BENCHLAB_BLESS").is_some() {
        let _ = std::fs::remove_dir_all(&fixture);
        for (name, bytes) in files(&dir) {
            let path = fixture.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
    }
    let (made, kept) = (files(&dir), files(&fixture));
    assert_eq!(
        made.keys().collect::<Vec<_>>(),
        kept.keys().collect::<Vec<_>>(),
        "BENCHLAB_BLESS=1 cargo test --lib the_offline_tests_fixture writes it again"
    );
    for (name, bytes) in made {
        assert!(
            kept[&name] == bytes,
            "{name} differs: BENCHLAB_BLESS=1 writes it again"
        );
    }
}

#[test]
fn a_difference_within_the_clocks_tick_of_none_is_no_finding() {
    use crate::report::verdict::{Estimate, Finding};
    use crate::stats::compare::compare;
    use crate::stats::{Flavor, Summary};
    let of = |values: &[f64]| Summary::of(values, Flavor::Current);
    let verdict = |reference: &[f64], subject: &[f64], tick: Option<u64>| {
        let c = compare(
            &of(reference),
            &of(subject),
            Confidence::P95,
            Flavor::Current,
        );
        let v = Verdict {
            metric: Metric::Latency(Quantile::InDutP50),
            context: Vec::new(),
            reference: "a".into(),
            subject: "b".into(),
            reference_label: "a".into(),
            subject_label: "b".into(),
            estimate: Estimate::Unpaired(c, [3, 3]),
            speed_pps: None,
            unreliable: within_tick(&c, tick),
        };
        v.finding()
    };
    // Three trials each, every P50 the same: one tick apart is ± 0 ns, which ministat proves.
    let (same, one_tick) = ([661.0; 3], [671.0; 3]);
    assert_eq!(verdict(&same, &one_tick, None), Finding::HigherLatency);
    assert_eq!(verdict(&same, &one_tick, Some(10)), Finding::Unreliable);
    // Three ticks apart, and the trials spread a little: more than a tick from none.
    assert_eq!(
        verdict(&same, &[691.0, 691.0, 692.0], Some(10)),
        Finding::HigherLatency
    );
}
