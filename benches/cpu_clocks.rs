//! How far apart two CPUs' clocks read (`CLOCK_REALTIME`), for the virtual lab's latency: a
//! probe's send stamp is read on the generator's CPU and its egress stamp on the DUT's, so an
//! offset between them would enter every latency, and the floor (one CPU) would not show it.
//!
//! Two threads, one pinned to each CPU, play ping-pong through one atomic word: A reads the
//! clock (t1) and serves, B reads the clock (tb) and returns, A reads it again (t2). B's clock
//! less the midpoint of A's, `tb − (t1 + t2) / 2`, is the offset give or take half the round
//! trip; per window the round with the shortest trip is kept. Figures are printed, never
//! asserted.
//!
//!   cargo bench --bench cpu_clocks -- [SECONDS [CPU_A CPU_B]]   # 10 s, CPUs 0 and 1

// FFI: pinning a thread (sched_setaffinity) and reading a clock (clock_gettime) have no
// wrapper in std.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Rounds that go into one window's offset.
const WINDOW: Duration = Duration::from_millis(100);
/// B's answer to a round it has not seen yet; `u64::MAX` in the turn word ends the game.
const STOP: u64 = u64::MAX;

fn now_ns() -> i64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut t) };
    t.tv_sec * 1_000_000_000 + t.tv_nsec
}

fn pin(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is empty; CPU_SET and sched_setaffinity read and write only it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) != 0 {
            eprintln!("cpu_clocks: cannot pin a thread to CPU {cpu}");
            std::process::exit(2);
        }
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
    let turn = Arc::new(AtomicU64::new(0));
    let stamp = Arc::new(AtomicI64::new(0));
    let answer = {
        let (turn, stamp) = (Arc::clone(&turn), Arc::clone(&stamp));
        std::thread::spawn(move || {
            pin(b);
            let mut seen = 0;
            loop {
                let t = turn.load(Ordering::Acquire);
                if t == STOP {
                    return;
                }
                if t != seen && t % 2 == 1 {
                    stamp.store(now_ns(), Ordering::Relaxed);
                    seen = t + 1;
                    turn.store(seen, Ordering::Release);
                }
            }
        })
    };
    pin(a);
    println!("# CPU {b}'s clock less CPU {a}'s, per {WINDOW:?} (ns); the shortest round trip");
    let (end, mut offsets, mut round) = (Instant::now() + Duration::from_secs(seconds), vec![], 0);
    while Instant::now() < end {
        let (window_end, mut best) = (Instant::now() + WINDOW, (i64::MAX, 0));
        while Instant::now() < window_end {
            round += 2;
            let t1 = now_ns();
            turn.store(round - 1, Ordering::Release);
            while turn.load(Ordering::Acquire) != round {}
            let t2 = now_ns();
            if t2 - t1 < best.0 {
                best = (t2 - t1, stamp.load(Ordering::Relaxed) - (t1 + t2) / 2);
            }
        }
        println!("offset {:6}  round trip {:6}", best.1, best.0);
        offsets.push(best.1);
    }
    turn.store(STOP, Ordering::Release);
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
