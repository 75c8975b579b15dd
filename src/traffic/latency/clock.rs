//! The tick of the probes' clock: the smallest step it advances by.
//!
//! Every time benchlab compares is a difference of two readings of `CLOCK_REALTIME` (or of
//! `CLOCK_TAI`, the same clock a whole number of seconds apart), so it is known to one step of
//! that clock. A clock's resolution as the kernel states it (`clock_getres`) is 1 ns wherever
//! the clocksource is the TSC, yet the TSC a hypervisor presents may advance by coarser steps:
//! on the project's 2-vCPU VM (AMD EPYC, 2026-11-28) successive reads differed by 20, 21, 30, 31,
//! 40 … ns, never by 25: a 10 ns tick, 3 % of the floor's P50 and 1.5 % of forwarding's time in
//! the DUT, where the histograms' own rounding is 0.1 %. The time in the DUT of the three
//! morning runs (`established-in-dut`) took values on the same 10 ns grid, and first packets
//! read exactly 10 ns below established ones in all three trials of a series: a difference the
//! clock cannot tell from none. So the tick is measured, kept with the floor, said in the report,
//! and widens the intervals of differences of P50s.
//!
//! How: pairs of reads a varying spin apart (so that their differences spread over hundreds of
//! ns, much more than any tick), then the largest step `g` of which nearly every difference is
//! a multiple, give or take 1 ns (the conversion of the counter to ns rounds either way).

use std::hint::black_box;

use super::frame::now_ns;

/// Pairs of reads taken.
const PAIRS: usize = 4000;
/// The largest tick looked for, ns.
const LARGEST_NS: u64 = 1000;
/// The smallest tick the test can tell, ns: every difference is within 1 ns of a multiple of
/// 2 or 3.
const SMALLEST_NS: u64 = 4;
/// The share of differences that must be multiples of the tick: a read interrupted between its
/// counter and its conversion is not.
const ON_GRID: f64 = 0.99;

/// The tick of `CLOCK_REALTIME` on this host, ns: 1 when it is finer than [`SMALLEST_NS`].
pub fn tick_ns() -> u64 {
    let mut differences = Vec::with_capacity(PAIRS);
    for i in 0..PAIRS {
        let before = now_ns();
        // 0 to 250 spins of a few ns each: differences from tens of ns to about a µs.
        for k in 0..(i * 37) % 251 {
            black_box(k);
        }
        differences.push(now_ns().saturating_sub(before));
    }
    tick_of(&differences)
}

/// The largest step of which at least [`ON_GRID`] of `differences` are multiples, within 1 ns;
/// 1 when none from [`SMALLEST_NS`] to [`LARGEST_NS`] is.
pub(crate) fn tick_of(differences: &[u64]) -> u64 {
    let on_grid = |g: u64| {
        let near = (differences.iter())
            .filter(|&&d| {
                let r = d % g;
                r <= 1 || r == g - 1
            })
            .count();
        near as f64 >= ON_GRID * differences.len() as f64
    };
    (SMALLEST_NS..=LARGEST_NS)
        .rev()
        .find(|&g| !differences.is_empty() && on_grid(g))
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Differences spread from 25 ns to about 1 µs, on a grid of `tick` (rounded either way by
    /// 1 ns in every third).
    fn spread(tick: u64) -> Vec<u64> {
        (0..2000u64)
            .map(|i| {
                let d = 25 + (i * 37) % 1000;
                let on = d / tick * tick;
                match i % 3 {
                    0 => on + 1,
                    1 => on.saturating_sub(1).max(1),
                    _ => on,
                }
            })
            .collect()
    }

    #[test]
    fn a_ten_ns_clock_has_a_ten_ns_tick_and_a_fine_one_a_nanosecond() {
        // The project's VM: differences of 20, 21, 30, 31 … ns.
        assert_eq!(tick_of(&spread(10)), 10);
        assert_eq!(tick_of(&spread(40)), 40);
        assert_eq!(tick_of(&spread(1)), 1);
        assert_eq!(tick_of(&[]), 1);
    }

    #[test]
    fn a_few_reads_off_the_grid_do_not_hide_it_but_many_do() {
        let mut d = spread(10);
        d.extend([23, 47, 55, 68, 79, 84, 95, 103, 117, 125]);
        assert_eq!(tick_of(&d), 10);
        d.extend((0..200).map(|i| 23 + 10 * i));
        assert_eq!(tick_of(&d), 1);
    }

    #[test]
    fn this_hosts_reads_differ_by_multiples_of_its_tick() {
        let tick = tick_ns();
        let reads: Vec<u64> = (0..1000).map(|_| now_ns()).collect();
        let on = (reads.windows(2))
            .filter(|w| {
                let r = (w[1] - w[0]) % tick;
                r <= 1 || r == tick - 1
            })
            .count();
        assert!(on >= 900, "tick {tick} ns: {on} of 999 differences on it");
    }
}
