//! Latency on real namespaces: the floor self-test (probes of both kinds sent, stamped and
//! received across one veth, timed from the kernel's stamps, and the floor's lab gone
//! afterwards, after a panic too), and campaigns that measure latency through the DUT (fixed-load
//! trials, the alternating design's latency run): what they store, and the lab gone after.
//!
//! Needs root (CI runs the tests as root); without it every test says so and passes. No timing
//! threshold: what is asserted is what users rely on (the probes arrive, the figures are
//! numbers, nothing is left behind); the figures themselves are `benches/latency.sh`'s.

use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use benchlab::lab::floor::{self, FloorConfig, FloorLab};
use benchlab::stats::latency::log;
use benchlab::traffic::latency::ProbeKind;
use benchlab::traffic::os;

mod common;
use common::{lab_namespaces, run_campaign, stderr};

/// One test at a time in this process: each floor test counts this process's namespaces, and
/// a campaign's real-time NAPI kthreads and saturating load starve the kernel worker that turns
/// on receive stamps, which the floor waits for (CI, 2026-11-28: not on within 10 s).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn root() -> bool {
    if os::is_root() {
        return true;
    }
    eprintln!("skipped: needs root (network namespaces)");
    false
}

/// The namespaces of this process's floor labs that still exist.
fn floor_namespaces() -> Vec<String> {
    let out = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("running ip netns list");
    let prefix = format!("benchlab-f{}x", std::process::id());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(&prefix))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_floor_times_both_kinds_of_probes_from_kernel_stamps_with_either_receiver_and_leaves_nothing()
{
    if !root() {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    // A socket for the receiver's address (the virtual lab's trials), then a tap on its
    // interface (a receiver with no address for the probes): the same stamps, the same checks.
    for tap in [false, true] {
        floor_with(tap);
    }
    assert_eq!(floor_namespaces(), Vec::<String>::new());
}

/// The floor read as `tap` says, every probe accounted for and timed from the kernel's stamps.
fn floor_with(tap: bool) {
    let cfg = FloorConfig {
        duration: Duration::from_secs(2),
        first_packet: true,
        tap,
        ..FloorConfig::default()
    };
    let probes = floor::run(&cfg).expect("the floor self-test runs");
    let sent = |kind| probes.of(kind).summary.probes.sent;
    let all = sent(ProbeKind::Established) + sent(ProbeKind::FirstPacket);
    assert_eq!(sent(ProbeKind::FirstPacket), all / 10, "one probe in ten");
    for kind in ProbeKind::ALL {
        let k = probes.of(kind);
        let c = k.summary.probes;
        assert!(c.sent > 0, "{kind:?} {c:?}, tap {tap}");
        // Nothing between sender and receiver drops or repeats frames at 10 kpps.
        assert!(c.received * 100 >= c.sent * 99, "{kind:?} {c:?}");
        assert_eq!(c.received + c.lost, c.sent, "{kind:?} {c:?}");
        assert_eq!(c.duplicates, 0, "{kind:?} {c:?}");
        assert_eq!(c.clock_steps, 0, "{kind:?} {c:?}");
        // veth stamps every frame it transmits: every probe is timed from the kernel's stamp.
        assert_eq!(k.tx_unstamped, 0, "{kind:?}");
        // Either receiver's socket stamps every arrival.
        assert_eq!(k.rx_unstamped, 0, "{kind:?}, tap {tap}");
        let p = k.summary.latency.expect("probes arrived");
        assert_eq!(p.samples, c.received - k.rx_unstamped, "{kind:?}");
        assert!(p.p50_ns > 0 && p.mean_ns.is_finite(), "{kind:?} {p:?}");
        assert!(
            p.p50_ns <= p.p99_ns && p.p99_ns <= p.max_ns,
            "{kind:?} {p:?}"
        );
        assert!(k.latency.quantisation() <= 0.001);
        // Every probe timed is in the windows cut from the stream.
        let whole = probes.window(kind, 0, u64::MAX);
        assert_eq!(whole.len(), p.samples, "{kind:?}");
        let per_second = probes.intervals(kind, 0, Duration::from_secs(1));
        let in_intervals: u64 = per_second.iter().map(|i| i.latency.len()).sum();
        assert_eq!(in_intervals, p.samples, "{kind:?}");
    }
    assert!(
        !probes.user_to_driver.is_empty(),
        "no transmit timestamp came back"
    );
}

#[test]
fn a_panic_removes_the_floor_lab() {
    if !root() {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let result = std::panic::catch_unwind(|| {
        let lab = FloorLab::up().expect("the floor's lab comes up");
        assert_eq!(floor_namespaces().len(), 2, "sender and receiver");
        let _keep = &lab;
        panic!("a measurement fails half-way");
    });
    assert!(result.is_err());
    assert_eq!(floor_namespaces(), Vec::<String>::new());
}

fn json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn fixed_load_trials_store_their_latency_and_the_floor() {
    if !root() {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    // The DUT's CPU (the lab's default: the last) is held out of idle halts while the probes
    // run, and given back its setting after.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let knob = format!(
        "/sys/devices/system/cpu/cpu{}/power/pm_qos_resume_latency_us",
        cpus - 1
    );
    let before = std::fs::read_to_string(&knob).ok();
    let tmp = tempfile::tempdir().unwrap();
    let (results, out) = run_campaign(
        tmp.path(),
        r#"title = "latency trials"
iterations = 1
design = "trials"
config_sets = ["forwarding", "nft-stateful"]
[lab]
id = "tlat"
[trial]
duration = 5
warmup = 1
cooldown = 1
latency = true
[latency]
floor_duration = 1
in_dut = true
[[profiles]]
name = "inet4"
af = "inet4"
rate = 100000
"#,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    for set in ["forwarding", "nft-stateful"] {
        let dir = results.join(format!("runs/default.{set}.inet4.1"));
        let meta = json(&dir.join("meta.json"));
        let latency = &meta["latency"];
        assert_eq!(latency["probe_rate_pps"], 10000, "{set}");
        // The generator carries the probes among its frames, as the DUT takes the load.
        assert_eq!(latency["carried"], true, "{set}");
        for kind in ["established", "first_packet"] {
            let probes = &latency[kind]["probes"];
            let (sent, received) = (probes["sent"].as_u64(), probes["received"].as_u64());
            assert!(
                sent.unwrap() > 0 && received.unwrap() > 0,
                "{set} {kind}: {latency}"
            );
            assert!(
                latency[kind]["latency"]["p50_ns"].as_u64().unwrap() > 0,
                "{set} {kind}"
            );
        }
        // The probes leave the DUT by their own link: the load's count holds none of them.
        let (rx, tx) = (meta["rx_pkts"].as_u64(), meta["tx_pkts"].as_u64());
        assert!(rx.unwrap() <= tx.unwrap(), "{meta}");
        let intervals = log::read_file(&dir.join("latency.hlog")).unwrap();
        let tags: std::collections::BTreeSet<_> =
            intervals.iter().filter_map(|i| i.tag.clone()).collect();
        assert_eq!(
            tags,
            [
                "established",
                "established-in-dut",
                "first-packet",
                "first-packet-in-dut"
            ]
            .map(String::from)
            .into()
        );
        // The time in the DUT (its ingress to its egress) is part of each probe's latency.
        for (kind, in_dut) in [
            ("established", "established_in_dut"),
            ("first_packet", "first_packet_in_dut"),
        ] {
            let whole = latency[kind]["latency"]["p50_ns"].as_u64().unwrap();
            let part = latency[in_dut]["p50_ns"].as_u64().unwrap();
            assert!(0 < part && part <= whole, "{set} {kind}: {latency}");
        }
        // How far apart the probes' CPU and the DUT's were, every 200 ms, and per second.
        let watched = json(&dir.join("cpu-round-trips.json"));
        let samples = watched["samples"].as_array().unwrap();
        assert!(samples.len() >= 10, "{set}: {watched}");
        assert!(
            samples.iter().all(|s| s[1].as_u64().unwrap() > 0),
            "{watched}"
        );
        let summary = &latency["cpu_round_trip"];
        assert!(
            summary["median_ns"].as_u64().unwrap() > 0,
            "{set}: {latency}"
        );
        assert!(
            summary["per_second_ns"].as_array().unwrap().len() >= 4,
            "{latency}"
        );
    }
    let floor = &json(&results.join("lab.json"))["latency_floor"];
    assert!(
        floor["measured"]["probes"]["received"].as_u64().unwrap() > 0,
        "{floor}"
    );
    assert_eq!(
        log::read_file(&results.join("latency-floor.hlog"))
            .unwrap()
            .len(),
        1
    );
    assert_eq!(lab_namespaces("tlat"), Vec::<String>::new());
    assert_eq!(std::fs::read_to_string(&knob).ok(), before, "{knob}");
}

#[test]
fn the_alternating_design_alternates_the_sets_latency_at_a_fixed_load() {
    if !root() {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let (results, out) = run_campaign(
        tmp.path(),
        r#"title = "alternating latency"
design = "alternating"
config_sets = ["forwarding", "nft-stateful"]
[lab]
id = "alat"
[trial]
latency = true
[alternating]
max_duration = 8
min_blocks = 4
[latency]
floor_duration = 1
blocks = 3
[[profiles]]
name = "inet4"
af = "inet4"
"#,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let run = results.join("alternating/default.inet4");
    let record = json(&run.join("latency.json"));
    // The default load: a quarter of the baseline's saturated rate.
    assert_eq!(record["load_pct"], 25);
    let (baseline, load) = (record["baseline_pps"].as_f64(), record["load_pps"].as_f64());
    assert!(
        (load.unwrap() - baseline.unwrap() / 4.0).abs() < 1.0,
        "{record}"
    );
    let phases = record["phases"].as_array().unwrap();
    // Three blocks of the balanced order of two sets: four phases each, two per set.
    assert_eq!(phases.len(), 12, "{record}");
    for set in ["forwarding", "nft-stateful"] {
        let timed = (phases.iter())
            .filter(|p| p["config"] == set && p["established"]["samples"].as_u64() > Some(0))
            .count();
        // On a busy machine a phase may see none of its probes arrive (the sender's thread
        // kept off its CPU): most phases do.
        assert!(timed >= 4, "{set}: {timed} of 6 phases timed: {record}");
    }
    let intervals = log::read_file(&run.join("latency.hlog")).unwrap();
    assert!(intervals
        .iter()
        .any(|i| i.tag.as_deref() == Some("1.1.established")));
    // No time in the DUT unless `[latency] in_dut` asks: its program on the load's ingress
    // would cost the DUT 2–3 % of its rate.
    assert!(!intervals
        .iter()
        .any(|i| i.tag.as_deref().is_some_and(|t| t.ends_with("-in-dut"))));
    assert_eq!(lab_namespaces("alat"), Vec::<String>::new());
}
