//! A synthetic alternating run and its latency run made through the store, with known values,
//! and what the report makes of them: the README's figures and paired comparisons, the
//! verdicts, results.json's entries; alternated versions, compared as their rates are; a run
//! that ended early; a record without its histograms, and one naming an entry the run does not
//! alternate; blocks that other programs crowded, said of the rates and left out of the latency.

use std::path::Path;
use std::time::Duration;

use crate::config::Campaign;
use crate::report::pipeline::{from_dir, Overrides, Written};
use crate::report::verdict::{Estimate, Finding, Metric, Quantile};
use crate::stats::latency::log::Interval;
use crate::stats::latency::{Latency, LatencySummary, ProbeCounts};
use crate::stats::CounterSample;
use crate::store::latency::{ESTABLISHED, ESTABLISHED_IN_DUT, FIRST_PACKET, FIRST_PACKET_IN_DUT};
use crate::store::{AlternatingLatency, FloorRecord, LatencyPhase, PhaseRow, SegmentMeta, Store};

/// Two config sets of one version, four blocks of latency.
const CAMPAIGN: &str = r#"title = "alternating latency"
design = "alternating"
config_sets = ["forwarding", "nft-stateful"]

[[versions]]
name = "default"

[trial]
latency = true

[latency]
rate = 1000
blocks = 4

[[profiles]]
name = "inet4"
af = "inet4"
rate = "max"
"#;

const SETS: [&str; 2] = ["forwarding", "nft-stateful"];

/// The versions of [`CAMPAIGN`].
const DEFAULT: &str = "[[versions]]\nname = \"default\"\n";

/// What a synthetic run alternates, and how.
struct Layout {
    /// The campaign's versions, in place of [`DEFAULT`].
    versions: &'static str,
    /// The run's directory's version: `default`, or the versions joined when they alternate.
    run: &'static str,
    /// The run's entries, baseline first.
    entries: &'static [&'static str],
    /// The entries of each block's phases, in order.
    order: &'static [&'static [usize]],
    /// Whether the DUT recorded the probes' coming in: their time in it, half their latency.
    in_dut: bool,
    /// The blocks (from 0), of the throughput and of the latency run, during which other
    /// programs took 2 % of the lab's two CPUs' time (none took any of the others').
    crowded: &'static [usize],
}

/// `default`'s two config sets in the balanced order of four blocks.
const SETS_RUN: Layout = Layout {
    versions: DEFAULT,
    run: "default",
    entries: &SETS,
    order: &[&[0, 1, 1, 0], &[1, 0, 0, 1], &[1, 0, 0, 1], &[0, 1, 1, 0]],
    in_dut: false,
    crowded: &[],
};

/// The throughput blocks: 1 s phases in `layout`'s order, the baseline at 1 Mpps, the other
/// entries at 700 kpps and 1 % more each block.
fn throughput(store: &Store, layout: &Layout) {
    store.begin_segment(layout.run, "inet4", 1).unwrap();
    let mut series = vec![CounterSample {
        t_s: 0.0,
        rx_pkts: 0,
    }];
    let mut phases = Vec::new();
    let mut start = 0.0;
    for (b, order) in layout.order.iter().enumerate() {
        for (i, &entry) in order.iter().enumerate() {
            let pps = match entry {
                0 => 1e6,
                _ => 7e5 * (1.0 + 0.01 * b as f64),
            };
            for k in 1..=20 {
                let last = series.last().unwrap().rx_pkts;
                series.push(CounterSample {
                    t_s: start + f64::from(k) * 0.05,
                    rx_pkts: last + (pps * 0.05) as u64,
                });
            }
            phases.push(PhaseRow {
                segment: 1,
                block: b as u32 + 1,
                phase: i as u32 + 1,
                config: layout.entries[entry].into(),
                switched_s: start,
                end_s: start + 1.0,
                others_ms: Some(if layout.crowded.contains(&b) {
                    40.0
                } else {
                    0.0
                }),
            });
            start += 1.0;
        }
    }
    let at = (layout.run, "inet4", 1);
    store.write_blocks(at, &series, &phases).unwrap();
    let meta = SegmentMeta {
        start_unix_s: 1000.0,
        end_unix_s: Some(1000.0 + start),
        ended: Some("precise".into()),
        generator: None,
        others_cpus: vec![0, 1],
    };
    (store.write_segment_file(at, "meta.json", &serde_json::to_vec(&meta).unwrap())).unwrap();
}

/// One phase's probes: 100 values `base + k` ns, k = 1…100 (below 2048 ns, where the
/// histograms are exact).
fn probes(base: u64) -> Latency {
    let mut l = Latency::new();
    (1..=100).for_each(|k| l.record(base + k));
    l
}

/// The latency run of the first `blocks` blocks of `layout`'s order: the baseline's probes at
/// 1001…1100 ns in every phase, entry k's 100 k ns later per block (two sets: P50 1150, 1250,
/// 1350, 1450 ns against 1050); first packets 200 ns and 10 more per block above either.
fn latency_run(store: &Store, layout: &Layout, blocks: usize, failure: Option<&str>) {
    let mut phases = Vec::new();
    let mut intervals = Vec::new();
    let mut start = 0.0;
    for (b, order) in layout.order.iter().enumerate().take(blocks) {
        let block = b as u32 + 1;
        for (i, &entry) in order.iter().enumerate() {
            let phase = i as u32 + 1;
            let (from_s, to_s) = (start + 0.1, start + 1.0);
            start += 1.0;
            let base = 1000 + 100 * u64::from(block) * entry as u64;
            let established = probes(base);
            let first = probes(base + 200 + 10 * u64::from(block));
            phases.push(LatencyPhase {
                block,
                phase,
                config: layout.entries[entry].into(),
                from_s,
                to_s,
                established: established.percentiles(),
                first_packet: first.percentiles(),
                // 2 % of two CPUs' time over a crowded block (3.9 s of probes).
                others_ms: Some(if layout.crowded.contains(&b) {
                    39.0
                } else {
                    0.0
                }),
            });
            if layout.in_dut {
                // Half of the established probes' latency was in the DUT, and the first
                // packets took as long there: their difference was on the way to it.
                let in_dut = [
                    (ESTABLISHED_IN_DUT, base / 2),
                    (FIRST_PACKET_IN_DUT, base / 2),
                ];
                for (kind, ns) in in_dut {
                    intervals.push(Interval {
                        tag: Some(LatencyPhase::tag(block, phase, kind)),
                        start: Duration::from_secs_f64(from_s),
                        length: Duration::from_secs_f64(to_s - from_s),
                        latency: probes(ns),
                    });
                }
            }
            for (kind, latency) in [(ESTABLISHED, established), (FIRST_PACKET, first)] {
                intervals.push(Interval {
                    tag: Some(LatencyPhase::tag(block, phase, kind)),
                    start: Duration::from_secs_f64(from_s),
                    length: Duration::from_secs_f64(to_s - from_s),
                    latency,
                });
            }
        }
    }
    let record = AlternatingLatency {
        load_pct: Some(50),
        baseline_pps: 1e6,
        load_pps: 5e5,
        probe_rate_pps: 1000,
        start_unix_s: 1020.0,
        phases,
        failure: failure.map(String::from),
        others_cpus: vec![0, 1],
    };
    (store.write_alternating_latency((layout.run, "inet4"), &record, &intervals)).unwrap();
}

/// Writes the synthetic results directory of `layout` into `dir`: the throughput blocks, the
/// latency run (its first `blocks` blocks, ended by `failure` when given) and the lab's floor.
fn results_dir(dir: &Path, layout: &Layout, blocks: usize, failure: Option<&str>) {
    let toml = CAMPAIGN.replace(DEFAULT, layout.versions);
    let campaign = Campaign::from_toml(&toml, "campaign.toml", &SETS).unwrap();
    let store = Store::create(dir, &campaign).unwrap();
    throughput(&store, layout);
    latency_run(&store, layout, blocks, failure);
    let floor = FloorRecord {
        probe_rate_pps: 10_000,
        duration_s: 2.0,
        measured: Some(LatencySummary::new(
            &probes(200),
            ProbeCounts {
                sent: 100,
                received: 100,
                ..ProbeCounts::default()
            },
        )),
        user_to_driver: None,
        not_measured: None,
        clock_tick_ns: None,
    };
    store.record_floor(floor, None).unwrap();
}

/// The report of `dir`, written into `out`.
fn report(dir: &Path, out: &Path) -> anyhow::Result<Written> {
    from_dir(dir, out, Overrides::default(), &SETS)
}

/// The report of a fresh synthetic directory of `layout`: the model, its README and
/// results.json.
fn reported(
    layout: &Layout,
    blocks: usize,
    failure: Option<&str>,
) -> (crate::report::Report, String, serde_json::Value) {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, out) = (tmp.path().join("results"), tmp.path().join("out"));
    results_dir(&dir, layout, blocks, failure);
    crate::report::latency::tests::report_of(&dir, &out)
}

#[test]
fn the_readme_shows_each_entrys_figures_and_its_paired_comparisons() {
    let (_, readme, _) = reported(&SETS_RUN, 4, None);
    let at = |text: &str| {
        readme
            .find(text)
            .unwrap_or_else(|| panic!("{text}\n{readme}"))
    };
    // The floor comes from lab.json, under the alternating design too.
    at("Latency floor (generator → receiver, no DUT, same host): P50 250 ns, P99 299 ns");
    let table = "### default · inet4, alternated\n\n\
                 At 50 % of forwarding's saturated rate, 500 Kpps (forwarding's median over the \
                 run's throughput blocks: 1 Mpps), 4 blocks: ";
    // Over the run: forwarding's 1001…1100 ns, nft-stateful's 1101…1500 ns, 800 probes each.
    let rows = "| config set | P50 | P90 | P99 | P99.9 | max | probes |\n\
                |---|---:|---:|---:|---:|---:|---:|\n\
                | forwarding | 1.05 µs | 1.09 µs | 1.1 µs | 1.1 µs | 1.1 µs | 800 |\n\
                | nft-stateful | 1.3 µs | 1.46 µs | 1.5 µs | 1.5 µs | 1.5 µs | 800 |\n";
    assert!(at(table) < at(rows));
    // Per block 1150/1050 … 1450/1050 at P50, (1099 + 100 b)/1099 at P99: t(3) = 3.182.
    let p99 = "- nft-stateful vs forwarding: P99 +22.3 % [+5.0 %, +42.5 %] (paired, 95 %, 4 \
               blocks): higher latency\n";
    let p50 = "- nft-stateful vs forwarding: P50 +23.3 % [+5.2 %, +44.6 %] (paired, 95 %, 4 \
               blocks): higher latency\n";
    assert!(at(rows) < at(p99) && at(p99) < at(p50));
    // First packets 210, 220, 230, 240 ns above the established probes, block by block.
    at(
        "| default | forwarding | inet4 | 50 % of the baseline's saturated rate (500 Kpps) | one \
        way | 1.05 µs | 1.1 µs | 1.27 µs | 1.34 µs | – | +225 ns ± 20.5 ns | 4 blocks | **higher \
        latency** |",
    );
    at("](latency-cdf.inet4.png)");
    assert!(at("## Latency under load") < at("## Paired comparisons (alternating design)"));
}

#[test]
fn each_comparison_is_a_paired_latency_verdict_after_the_throughput_ones() {
    let (report, readme, _) = reported(&SETS_RUN, 4, None);
    let metrics: Vec<Metric> = report.verdicts.iter().map(|v| v.metric).collect();
    assert_eq!(
        metrics,
        [
            Metric::Throughput,
            Metric::Latency(Quantile::P99),
            Metric::Latency(Quantile::P50)
        ]
    );
    let p50 = &report.verdicts[2];
    assert_eq!(p50.finding(), Finding::HigherLatency);
    assert_eq!(
        (p50.reference.as_str(), p50.subject.as_str()),
        ("default.forwarding.inet4", "default.nft-stateful.inet4")
    );
    assert_eq!(
        p50.context,
        [
            "default",
            "inet4",
            "P50 latency at 50 % of the baseline's saturated rate"
        ]
    );
    let Estimate::Paired(e) = p50.estimate else {
        panic!("{:?}", p50.estimate)
    };
    assert_eq!((e.blocks, e.of), (4, 4));
    assert!((e.change_pct - 23.3497).abs() < 1e-3, "{e:?}");
    assert_eq!(p50.speed_text(), "forwarding at 500 Kpps");
    assert!(
        readme.contains(
            "| default, inet4, P50 latency at 50 % of the baseline's saturated rate | \
             nft-stateful vs forwarding | +23.3 % [+5.2 %, +44.6 %] | paired | yes | 4 blocks \
             | forwarding at 500 Kpps | **higher latency** |"
        ),
        "{readme}"
    );
}

#[test]
fn results_json_holds_each_entry_with_its_blocks() {
    let (_, _, json) = reported(&SETS_RUN, 4, None);
    let latency = json["latency"].as_array().unwrap();
    assert_eq!(latency.len(), 2);
    let nft = &latency[1];
    assert_eq!(nft["name"], "default.nft-stateful.inet4");
    assert_eq!(nft["design"], "alternating");
    assert_eq!(
        (nft["load_pct"].clone(), nft["baseline_pps"].clone()),
        (50.into(), 1e6.into())
    );
    assert_eq!(nft["offered_pps"], 5e5);
    assert_eq!(
        (nft["trials"].clone(), nft["samples"].clone()),
        (4.into(), 800.into())
    );
    assert_eq!(
        (nft["p50_ns"].clone(), nft["max_ns"].clone()),
        (1300.into(), 1500.into())
    );
    // The record keeps what arrived in the windows, not what was sent.
    assert!(
        nft.get("probes_sent").is_none() && nft.get("failure").is_none(),
        "{nft}"
    );
    let blocks = nft["iterations"].as_array().unwrap();
    let p50s: Vec<u64> = blocks
        .iter()
        .map(|b| b["p50_ns"].as_u64().unwrap())
        .collect();
    assert_eq!(p50s, [1150, 1250, 1350, 1450]);
    assert_eq!(blocks[3]["first_packet_p50_ns"], 1450 + 240);
    assert_eq!(nft["first_vs_established"]["over"], "blocks");
    assert_eq!(nft["first_vs_established"]["p50_difference_ns"], 225.0);
    let verdicts = json["verdicts"].as_array().unwrap();
    let p99 = &verdicts[1];
    assert_eq!(
        (
            p99["metric"].clone(),
            p99["estimate"].clone(),
            p99["verdict"].clone()
        ),
        (
            "latency_p99".into(),
            "paired".into(),
            "higher_latency".into()
        )
    );
    assert_eq!(p99["subject_used"], 4);
}

#[test]
fn a_latency_run_that_ended_early_keeps_its_blocks_and_says_why() {
    let (report, readme, json) = reported(&SETS_RUN, 2, Some("the DUT stopped answering"));
    assert!(
        readme.contains("- the latency run ended early: the DUT stopped answering; its 2 blocks before are kept\n"),
        "{readme}"
    );
    assert!(readme.contains(", 2 blocks: "), "{readme}");
    let latency = &report.alternating[0].latency.as_ref().unwrap();
    assert_eq!(latency.entries[1].trials.len(), 2);
    assert_eq!(json["latency"][0]["failure"], "the DUT stopped answering");
    // Two blocks still make an interval (t(1) = 12.7): wide.
    let p50 = &report.verdicts[2];
    assert_eq!(p50.used_text(), "2 blocks");
}

/// A fixed-rate profile's latency run is at that rate, which the baseline forwarded: the
/// README, the verdicts and results.json say so, and no share of a saturated rate.
#[test]
fn a_run_at_the_profiles_fixed_rate_is_said_as_such() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, out) = (tmp.path().join("results"), tmp.path().join("out"));
    results_dir(&dir, &SETS_RUN, 4, None);
    let path = dir.join("alternating/default.inet4/latency.json");
    let mut record: AlternatingLatency =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    (record.load_pct, record.load_pps) = (None, 1e6);
    std::fs::write(&path, serde_json::to_vec(&record).unwrap()).unwrap();
    let (report, readme, json) = crate::report::latency::tests::report_of(&dir, &out);
    assert!(
        readme.contains(
            "At the profile's rate, 1 Mpps, which forwarding forwarded (its median over the \
             run's throughput blocks: 1 Mpps), 4 blocks: "
        ),
        "{readme}"
    );
    assert!(
        readme.contains("| the profile's 1 Mpps, alternated |"),
        "{readme}"
    );
    assert!(!readme.contains("saturated rate"), "{readme}");
    assert_eq!(
        report.verdicts[2].context,
        ["default", "inet4", "P50 latency at the profile's rate"]
    );
    assert_eq!(json["latency"][1]["load_pct"], serde_json::Value::Null);
    assert_eq!(json["latency"][1]["offered_pps"], 1e6);
}

#[test]
fn a_record_without_histograms_is_a_warning_and_an_unknown_entry_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("results");
    results_dir(&dir, &SETS_RUN, 4, None);
    let run = dir.join("alternating/default.inet4");
    let hlog = run.join("latency.hlog");
    let kept = std::fs::read(&hlog).unwrap();
    std::fs::remove_file(&hlog).unwrap();
    let written = report(&dir, &tmp.path().join("out")).unwrap();
    let w = "alternating/default.inet4/latency.hlog: missing, though the trial's record holds \
             latency; left out of the latency figures";
    assert!(
        written.report.warnings.iter().any(|x| x == w),
        "{:?}",
        written.report.warnings
    );
    assert!(written.report.alternating[0].latency.is_none());

    std::fs::write(&hlog, kept).unwrap();
    let record = run.join("latency.json");
    let text = std::fs::read_to_string(&record).unwrap();
    std::fs::write(&record, text.replacen("\"nft-stateful\"", "\"pf\"", 1)).unwrap();
    let out = tmp.path().join("refused");
    let e = report(&dir, &out).unwrap_err();
    let input = e.downcast_ref::<crate::error::InputError>().unwrap();
    assert!(
        input.0.contains("alternating/default.inet4/latency.json"),
        "{e}"
    );
    assert!(
        input
            .0
            .contains("names `pf`, which the run does not alternate"),
        "{e}"
    );
    assert!(!input.0.contains('\n') && !out.join("README.md").exists());
}

#[test]
fn alternated_versions_get_the_rates_comparisons_on_their_latency() {
    // Two quick versions: alternated with the config sets in one run.
    let layout = Layout {
        versions: "[[versions]]\nname = \"a\"\n\n[[versions]]\nname = \"b\"\n",
        run: "a+b",
        entries: &[
            "a.forwarding",
            "a.nft-stateful",
            "b.forwarding",
            "b.nft-stateful",
        ],
        order: &[&[0, 1, 2, 3], &[3, 2, 1, 0], &[1, 3, 0, 2]],
        in_dut: false,
        crowded: &[],
    };
    let (report, readme, _) = reported(&layout, 3, None);
    let latency: Vec<(String, String)> = (report.verdicts.iter())
        .filter(|v| v.metric == Metric::Latency(Quantile::P50))
        .map(|v| (v.subject_label.clone(), v.reference_label.clone()))
        .collect();
    let pair = |s: &str, r: &str| (s.to_string(), r.to_string());
    // Each entry against the baseline, then each version against the first within a set and
    // each set against the version's first: the rates' comparisons, under their labels.
    assert_eq!(
        latency,
        [
            pair("a (nft-stateful)", "a (forwarding)"),
            pair("b (forwarding)", "a (forwarding)"),
            pair("b (nft-stateful)", "a (forwarding)"),
            pair("b", "a (nft-stateful)"),
            pair("b (nft-stateful)", "b.forwarding"),
        ]
    );
    // b.nft-stateful's probes take 300 ns more per block, a.nft-stateful's 100 ns.
    let line = "- b vs a (nft-stateful): P50 +";
    let at = readme.find(line).unwrap_or_else(|| panic!("{readme}"));
    assert!(readme[at..]
        .lines()
        .next()
        .unwrap()
        .ends_with("(paired, 95 %, 3 blocks): higher latency"));
    assert!(readme.contains("| b (nft-stateful) | "), "{readme}");
    let run = report.alternating[0].latency.as_ref().unwrap();
    assert_eq!(run.entries[3].name, "b.nft-stateful.inet4");
    assert_eq!(
        (
            run.entries[3].version.as_str(),
            run.entries[3].config.as_str()
        ),
        ("b", "nft-stateful")
    );
}

#[test]
fn the_time_in_the_dut_is_shown_and_compared_block_by_block() {
    let layout = Layout {
        in_dut: true,
        ..SETS_RUN
    };
    let (report, readme, _) = reported(&layout, 4, None);
    // Forwarding's 501…600 ns in the DUT, nft-stateful's 551…750 ns over the four blocks.
    let rows = "| config set | P50 | P50 in the DUT | P90 | P99 | P99.9 | max | probes |\n\
                |---|---:|---:|---:|---:|---:|---:|---:|\n\
                | forwarding | 1.05 µs | 550 ns | 1.09 µs |";
    assert!(readme.contains(rows), "{readme}");
    assert_eq!(
        readme
            .matches("*in the DUT* is the time from there")
            .count(),
        1
    );
    let in_dut: Vec<_> = (report.verdicts.iter())
        .filter(|v| v.metric == Metric::Latency(Quantile::InDutP50))
        .collect();
    assert_eq!(in_dut.len(), 1);
    assert_eq!(in_dut[0].finding(), Finding::HigherLatency);
    assert!(
        readme.contains("- nft-stateful vs forwarding: P50 in the DUT +"),
        "{readme}"
    );
    // First packets 210…240 ns above the established probes one way, none in the DUT: the
    // one-way difference is not the DUT's.
    let row = |leg: &str, end: &str| {
        let start = format!(
            "| default | forwarding | inet4 | 50 % of the baseline's saturated rate (500 Kpps) \
             | {leg} |"
        );
        let line = readme.lines().find(|l| l.starts_with(&start));
        let line = line.unwrap_or_else(|| panic!("{readme}"));
        assert!(line.ends_with(end), "{line}");
    };
    row("one way", " | 4 blocks | not the DUT's: none in the DUT |");
    row("in the DUT", " | 4 blocks | no difference shown |");
}

#[test]
fn crowded_blocks_are_said_and_left_out_of_the_latency_and_a_latency_run_of_them_has_no_estimate() {
    let one = Layout {
        crowded: &[1],
        ..SETS_RUN
    };
    let (report, readme, _) = reported(&one, 4, None);
    // The rates keep every block (their paired intervals held beside a build), and say it.
    let run = &report.alternating[0];
    assert_eq!(run.blocks, 4);
    let said = "other programs took more than 1 % of the lab's CPUs' time during 1 of its 4 \
                blocks (up to 2.0 %)";
    assert!(readme.contains(said), "{readme}");
    // The latency run's block 2 is left out: its three others paired.
    let latency = run.latency.as_ref().unwrap();
    assert_eq!((latency.blocks, latency.crowded.len()), (3, 1));
    let said = "- 1 of its 4 blocks left out: other programs took more than 1 % of the lab's \
                CPUs' time during them (up to 2.0 %)";
    assert!(readme.contains(said), "{readme}");
    let p50 = (report.verdicts.iter())
        .find(|v| v.metric == Metric::Latency(Quantile::P50))
        .unwrap();
    let Estimate::Paired(e) = p50.estimate else {
        panic!("{:?}", p50.estimate)
    };
    assert_eq!(e.of, 3);
    let all = Layout {
        crowded: &[0, 1, 2, 3],
        ..SETS_RUN
    };
    let (report, readme, json) = reported(&all, 4, None);
    assert!(
        readme.contains("during 4 of its 4 blocks (up to 2.0 %)"),
        "{readme}"
    );
    assert_eq!(report.verdicts[0].finding(), Finding::Slower);
    // Every block crowded: all kept, their figures given as a crowded machine's, and no
    // comparison of them is a finding.
    let latency = report.alternating[0].latency.as_ref().unwrap();
    assert_eq!((latency.blocks, latency.crowded_kept), (4, true));
    let said = "- other programs took more than 1 % of the lab's CPUs' time during every one of \
                its 4 blocks (up to 2.0 %): kept, as none was left, so these figures are a \
                crowded machine's";
    assert!(readme.contains(said), "{readme}");
    let p50 = (report.verdicts.iter())
        .find(|v| v.metric == Metric::Latency(Quantile::P50))
        .unwrap();
    assert_eq!(p50.finding(), Finding::Unreliable);
    assert_eq!(
        p50.verdict_text(),
        "unreliable, no verdict: other programs took more than 1 % of the lab's CPUs' time \
         during every one of its 4 blocks"
    );
    let entry = &json["latency"][0];
    assert!(entry["p50_ns"].as_u64().is_some(), "{entry}");
    assert!(entry["offered_pps"].as_f64().unwrap() > 0.0, "{entry}");
    assert!(entry.get("probes_sent").is_none(), "{entry}");
}
