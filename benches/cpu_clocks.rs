//! How far apart two CPUs' clocks read (`CLOCK_REALTIME`), for the virtual lab's latency: a
//! probe's send stamp is read on the generator's CPU and its egress stamp on the DUT's, so an
//! offset between them would enter every latency, and the floor (one CPU) would not show it.
//!
//! Two threads, one pinned to each CPU, play ping-pong through one atomic word
//! (`benchlab::lab::distance::Table`, as the latency trials' watch of the CPUs' distance): A
//! reads the clock (t1) and serves, B reads the clock (tb) and returns, A reads it again (t2).
//! B's clock less the midpoint of A's, `tb − (t1 + t2) / 2`, is the offset give or take half
//! the round trip; per window the round with the shortest trip is kept. Figures are printed,
//! never asserted.
//!
//!   cargo bench --bench cpu_clocks -- [SECONDS [CPU_A CPU_B]]   # 10 s, CPUs 0 and 1

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use benchlab::lab::distance::Table;
use benchlab::traffic::os::pin_to_cpu;

/// Rounds that go into one window's offset.
const WINDOW: Duration = Duration::from_millis(100);

fn pin(cpu: usize) {
    if let Err(e) = pin_to_cpu(cpu) {
        eprintln!("cpu_clocks: {e:#}");
        std::process::exit(2);
    }
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let arg = |i: usize, default: u64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let seconds = arg(0, 10);
    let (a, b) = (arg(1, 0) as usize, arg(2, 1) as usize);
    let table = Arc::new(Table::default());
    let stop = Arc::new(AtomicBool::new(false));
    let answer = {
        let (table, stop) = (Arc::clone(&table), Arc::clone(&stop));
        std::thread::spawn(move || {
            pin(b);
            table.answer_until(|| stop.load(Ordering::Relaxed));
        })
    };
    pin(a);
    println!("# CPU {b}'s clock less CPU {a}'s, per {WINDOW:?} (ns); the shortest round trip");
    let (end, mut offsets, mut n) = (Instant::now() + Duration::from_secs(seconds), vec![], 0);
    while Instant::now() < end {
        let (window_end, mut best) = (Instant::now() + WINDOW, None::<(i64, i64)>);
        while Instant::now() < window_end {
            n += 1;
            let Some(round) = table.serve(n, Duration::from_secs(1)) else {
                eprintln!("cpu_clocks: CPU {b} did not answer within 1 s");
                std::process::exit(1);
            };
            if best.is_none_or(|(trip, _)| round.trip_ns() < trip) {
                best = Some((round.trip_ns(), round.offset_ns()));
            }
        }
        let Some((trip, offset)) = best else { continue };
        println!("offset {offset:6}  round trip {trip:6}");
        offsets.push(offset);
    }
    stop.store(true, Ordering::Relaxed);
    let _ = answer.join();
    offsets.sort_unstable();
    let at = |q: f64| offsets[((offsets.len() - 1) as f64 * q).round() as usize];
    println!(
        "# {} windows: offset min {} ns, median {} ns, max {} ns",
        offsets.len(),
        at(0.0),
        at(0.5),
        at(1.0)
    );
}
