//! Prints this machine's latency floor (issue 35, point 4): probes from benchlab's sender
//! straight to its receiver over one veth, no DUT, in a throwaway lab removed at the end.
//!
//! ```text
//! sudo cargo bench --bench latency_floor -- [SECONDS] [RATE_PPS] [LOG] [--first-packet] [--tap]
//! ```
//!
//! Defaults: 10 s at 10 kpps, established probes only (`--first-packet`: one in ten a
//! first-packet probe), read by a socket for the receiver's address as in the virtual lab's
//! trials (`--tap`: by a packet socket tapping its interface, as on a receiver with no address
//! for them; both read the same arrival stamp). The latency is the kernel's arrival stamp minus its transmit stamp: on
//! the floor, that is also the bound of the transmit stamp's error as a send time. With LOG,
//! one histogram per second and kind is written there as an HdrHistogram V2 log (as a trial's
//! `latency.hlog`) and read back. Exit 2 on bad arguments, 1 on a failure.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use benchlab::lab::floor::{self, FloorConfig};
use benchlab::stats::latency::{log, Latency, SIGNIFICANT_DIGITS};
use benchlab::traffic::latency::{ProbeKind, Probes};

fn main() {
    if let Err(e) = run() {
        eprintln!(
            "latency_floor: {}",
            benchlab::error::one_line(&format!("{e:#}"), 300)
        );
        std::process::exit(benchlab::error::exit_code(&e));
    }
}

fn run() -> anyhow::Result<()> {
    // `cargo bench` adds `--bench`: flags are not positional arguments.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let first_packet = std::env::args().any(|a| a == "--first-packet");
    let tap = std::env::args().any(|a| a == "--tap");
    let number = |i: usize, default: u64| -> anyhow::Result<u64> {
        args.get(i).map_or(Ok(default), |a| {
            benchlab::units::parse_count(a).ok_or_else(|| {
                benchlab::error::InputError::new(format!(
                    "bad number {a:?}: usage: latency_floor [SECONDS] [RATE_PPS] [LOG] [--first-packet] [--tap]"
                ))
                .into()
            })
        })
    };
    let cfg = FloorConfig {
        duration: Duration::from_secs(number(0, 10)?),
        rate_pps: number(1, 10_000)?,
        first_packet,
        tap,
        ..FloorConfig::default()
    };
    let started = SystemTime::now();
    let probes = floor::run(&cfg)?;
    println!(
        "floor: {} s at {} pps, {}-byte frames, no DUT (sender -> veth -> receiver), first-packet probes {}, read by {}",
        cfg.duration.as_secs(),
        cfg.rate_pps,
        cfg.frame_size,
        if first_packet { "1 in 10" } else { "none" },
        if tap { "a tap on the receiver's interface" } else { "a socket for the receiver's address" }
    );
    for kind in ProbeKind::ALL {
        let k = probes.of(kind);
        let c = k.summary.probes;
        if c.sent == 0 {
            continue;
        }
        let name = kind.name();
        println!(
            "probes {name}: sent {} received {} lost {} duplicates {} reordered {} clock_steps {} tx_unstamped {} rx_unstamped {}",
            c.sent, c.received, c.lost, c.duplicates, c.reordered, c.clock_steps,
            k.tx_unstamped, k.rx_unstamped
        );
        println!("latency_ns {name}: {}", figures(&k.latency));
    }
    println!(
        "user_to_driver_ns: {} (in-frame stamp -> kernel transmit stamp: the error of a probe timed without the latter)",
        figures(&probes.user_to_driver)
    );
    let floor = &probes.of(ProbeKind::Established).latency;
    println!(
        "stamp_to_wire_ns: at most p50 {} p99 {} (the floor: kernel transmit stamp -> arrival stamp with nothing between holds \
         the transmit stamp's error, the arrival stamp's and the veth crossing; on veth, skb_tx_timestamp is in veth_xmit, which hands the frame to the peer)",
        floor.quantile(0.5),
        floor.quantile(0.99)
    );
    println!(
        "quantisation: {SIGNIFICANT_DIGITS} significant digits, largest relative bucket error {:.4} % (latency), {:.4} % (user to driver)",
        floor.quantisation() * 100.0,
        probes.user_to_driver.quantisation() * 100.0
    );
    let tick = benchlab::traffic::latency::clock::tick_ns();
    println!(
        "clock_tick_ns: {tick} ({:.2} % of the floor's P50: every time is read to a tick)",
        100.0 * tick as f64 / floor.quantile(0.5).max(1) as f64
    );
    if let Some(path) = args.get(2) {
        let n = write_log(path.as_ref(), started, &probes)?;
        println!(
            "log: {path} ({n} one-second histograms, HdrHistogram V2 log, read back identical)"
        );
    }
    Ok(())
}

/// A distribution's samples and P50…max, ns.
fn figures(l: &Latency) -> String {
    if l.is_empty() {
        return "samples 0".into();
    }
    format!(
        "samples {} p50 {} p90 {} p99 {} p99.9 {} max {} mean {:.0}",
        l.len(),
        l.quantile(0.5),
        l.quantile(0.9),
        l.quantile(0.99),
        l.quantile(0.999),
        l.histogram().max(),
        l.histogram().mean()
    )
}

/// Writes one histogram per second and kind as a V2 log, as a trial's, checks that it reads
/// back the same, and returns how many it wrote.
fn write_log(
    path: &std::path::Path,
    started: SystemTime,
    probes: &Probes,
) -> anyhow::Result<usize> {
    let base_ns = started.duration_since(UNIX_EPOCH)?.as_nanos() as u64;
    let intervals: Vec<log::Interval> = ProbeKind::ALL
        .into_iter()
        .flat_map(|kind| probes.intervals(kind, base_ns, Duration::from_secs(1)))
        .collect();
    let mut buf = Vec::new();
    log::write(&mut buf, started, &intervals)?;
    benchlab::atomic::write(path, &buf)?;
    let back = log::read_file(path)?;
    anyhow::ensure!(
        back == intervals,
        "{} did not read back the same",
        path.display()
    );
    Ok(intervals.len())
}
