//! The latency floor self-test on real namespaces: probes of both kinds sent, stamped and
//! received across one veth, timed from the kernel's stamps, and the floor's lab gone
//! afterwards, after a panic too.
//!
//! Needs root (CI runs the tests as root); without it every test says so and passes. No timing
//! threshold: what is asserted is what users rely on (the probes arrive, the figures are
//! numbers, nothing is left behind); the figures themselves are `benches/latency.sh`'s.

use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use benchlab::lab::floor::{self, FloorConfig, FloorLab};
use benchlab::traffic::latency::ProbeKind;
use benchlab::traffic::os;

/// One floor lab at a time in this process: each test counts this process's namespaces.
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
