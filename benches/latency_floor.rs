//! Prints this machine's latency floor (issue 35, point 4): probes from benchlab's sender
//! straight to its receiver over one veth, no DUT, in a throwaway lab removed at the end.
//!
//! ```text
//! sudo cargo bench --bench latency_floor -- [SECONDS] [RATE_PPS] [LOG]
//! ```
//!
//! Defaults: 10 s at 10 kpps. With LOG, the latency histogram is written there as an
//! HdrHistogram V2 log and read back. Exit 2 on bad arguments, 1 on a failure.

use std::time::{Duration, SystemTime};

use benchlab::lab::floor::{self, FloorConfig};
use benchlab::stats::latency::{log, Latency, SIGNIFICANT_DIGITS};

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
    // `cargo bench` adds `--bench`: flags are not this program's.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let number = |i: usize, default: u64| -> anyhow::Result<u64> {
        args.get(i).map_or(Ok(default), |a| {
            benchlab::traffic::parse_count(a).ok_or_else(|| {
                benchlab::error::InputError::new(format!(
                    "bad number {a:?}: usage: latency_floor [SECONDS] [RATE_PPS] [LOG]"
                ))
                .into()
            })
        })
    };
    let cfg = FloorConfig {
        duration: Duration::from_secs(number(0, 10)?),
        rate_pps: number(1, 10_000)?,
        ..FloorConfig::default()
    };
    let started = SystemTime::now();
    let probes = floor::run(&cfg)?;
    let s = probes.summary;
    let c = s.probes;
    println!(
        "floor: {} s at {} pps, {}-byte frames, no DUT (sender -> veth -> receiver)",
        cfg.duration.as_secs(),
        cfg.rate_pps,
        cfg.frame_size
    );
    println!(
        "probes: sent {} received {} lost {} duplicates {} reordered {} clock_steps {} (tx unstamped {}, rx unstamped {})",
        c.sent, c.received, c.lost, c.duplicates, c.reordered, c.clock_steps,
        probes.tx_unstamped, probes.rx_unstamped
    );
    match s.latency {
        Some(p) => println!(
            "latency_ns: p50 {} p90 {} p99 {} p99.9 {} max {} mean {:.0}",
            p.p50_ns, p.p90_ns, p.p99_ns, p.p999_ns, p.max_ns, p.mean_ns
        ),
        None => println!("latency_ns: no probe arrived"),
    }
    let w = &probes.stamp_to_wire;
    println!(
        "stamp_to_wire_ns: samples {} p50 {} p90 {} p99 {} p99.9 {} max {}",
        w.len(),
        w.quantile(0.5),
        w.quantile(0.9),
        w.quantile(0.99),
        w.quantile(0.999),
        w.histogram().max()
    );
    println!(
        "quantisation: {SIGNIFICANT_DIGITS} significant digits, largest relative bucket error {:.4} % (latency), {:.4} % (stamp-to-wire)",
        probes.latency.quantisation() * 100.0,
        w.quantisation() * 100.0
    );
    if let Some(path) = args.get(2) {
        write_log(path.as_ref(), started, &probes.latency, cfg.duration)?;
        println!("log: {path} (HdrHistogram V2 log, read back identical)");
    }
    Ok(())
}

/// Writes the floor's histogram as a V2 log and checks that it reads back the same.
fn write_log(
    path: &std::path::Path,
    started: SystemTime,
    latency: &Latency,
    length: Duration,
) -> anyhow::Result<()> {
    let interval = log::Interval {
        tag: Some("floor".into()),
        start: Duration::ZERO,
        length,
        latency: latency.clone(),
    };
    let mut buf = Vec::new();
    log::write(&mut buf, started, std::slice::from_ref(&interval))?;
    benchlab::atomic::write(path, &buf)?;
    let back = log::read_file(path)?;
    anyhow::ensure!(
        back == vec![interval],
        "{} did not read back the same",
        path.display()
    );
    Ok(())
}
