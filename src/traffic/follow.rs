//! `max` that follows the next hop: the XDP engine offers a [`MARGIN`] more than its interface
//! accepted over the last few ms, instead of all it can.
//!
//! Why: on the virtual lab the frames the DUT's full input queue refuses are not free, as they
//! are on a NIC. Each one goes back to the generator's page pool under the lock the DUT's CPU
//! takes for every frame it forwards, so the surplus costs the DUT's forwarding, in proportion
//! to its size. Measured here (5 s runs, forwarding, DUT forwarding ~1.16 Mpps): offered
//! 1.2 Mpps, forwarded 1.15–1.17 Mpps; 1.6 Mpps, 1.09; 2.2 Mpps, 1.03–1.05; 3 Mpps, 0.99;
//! 6.3–6.5 Mpps (unpaced), 0.85–0.88 — and a firewall's cost looked ten points smaller at full
//! speed than just above capacity (`benches/overload.sh`). A DUT offered a little more than it
//! takes is still saturated: its input queue is full whenever frames are refused.
//!
//! Each window (the generator's monitor poll, ~5 ms) gives frames sent and frames the
//! interface refused (`tx_dropped`: a veth counts there the frames its peer's full queue did
//! not take). A window with refusals sets the rate to the second most accepted per second in
//! the last `MEMORY` windows, plus the margin. A short DUT stall lowers one window's figure, not
//! the rate (a high figure, not the mean: that figure's noise adds ~10 % to the margin,
//! measured 1.26–1.5 Mpps offered for 1.09–1.33 Mpps forwarded); a window right after the
//! generator lost its CPU raises one (the DUT's queue drained meanwhile, and takes a burst),
//! which the second most leaves out. (The most, before 2026-11-29, kept such a burst for
//! `MEMORY` windows: with the latency probes' threads on the generator's CPU it offered 7 %
//! more than without, 1,212 against 1,129 Kpps, and the DUT paid for the refused surplus.) A
//! window without refusals raises the rate by `GROWTH` if the generator sent what it was asked
//! (`HELD`), so a DUT that became faster (the alternating design switching to a cheaper config
//! set) is caught up in a few windows, and an interface that never refuses (or does not count
//! it) gets all the engine can; a generator that fell short (it lost its CPU) keeps its rate.
//!
//! [`MARGIN`]: crate::traffic::follow::MARGIN

use std::collections::VecDeque;
use std::time::Instant;

use super::netlink::Netlink;
use super::xdp::XdpCounter;

/// How much more than it accepted the interface is offered.
pub const MARGIN: f64 = 0.05;
/// How much faster the next window offers when nothing was refused.
const GROWTH: f64 = 1.25;
/// A window sending at least this share of the rate asked held it; one below (the generator
/// lost its CPU, or cannot go faster) keeps the rate as it is.
const HELD: f64 = 0.9;
/// The highest rate asked: far above any engine's, so that asking it means "all you can".
const MAX_PPS: f64 = 1e9;
/// Windows remembered: ~40 ms at the monitor's 5 ms poll.
const MEMORY: usize = 8;
/// The rate of the first window, packets per second.
pub(crate) const START_PPS: u64 = 100_000;
/// A window refusing under this share of its frames counts as one with no refusals: the
/// generator's catch-up after losing its CPU may overflow a queue that is otherwise not full.
const REFUSED_FLOOR: f64 = 0.005;

/// The second largest of `values` (the largest when there is one).
fn second_most(values: impl Iterator<Item = f64>) -> f64 {
    let (most, second) = values.fold((f64::MIN, f64::MIN), |(most, second), v| {
        if v > most {
            (v, most)
        } else {
            (most, second.max(v))
        }
    });
    if second == f64::MIN {
        most
    } else {
        second
    }
}

/// The follower's state: its rate and the last windows.
#[derive(Debug, Clone)]
pub(crate) struct Follow {
    rate: f64,
    /// (offered, accepted) per second, newest last.
    windows: VecDeque<(f64, f64)>,
}

impl Default for Follow {
    fn default() -> Self {
        Follow {
            rate: START_PPS as f64,
            windows: VecDeque::with_capacity(MEMORY + 1),
        }
    }
}

impl Follow {
    /// The rate to offer now, packets per second.
    pub(crate) fn rate(&self) -> u64 {
        self.rate.round().max(1.0) as u64
    }

    /// Takes a window of `seconds` in which `sent` frames were sent and `refused` of them
    /// refused; returns the rate to offer next.
    pub(crate) fn step(&mut self, seconds: f64, sent: u64, refused: u64) -> u64 {
        if seconds <= 0.0 {
            return self.rate();
        }
        let refused = refused.min(sent);
        self.windows
            .push_back((sent as f64 / seconds, (sent - refused) as f64 / seconds));
        if self.windows.len() > MEMORY {
            self.windows.pop_front();
        }
        let accepted = second_most(self.windows.iter().map(|w| w.1));
        let offered = sent as f64 / seconds;
        self.rate = if refused > 0 && refused as f64 >= REFUSED_FLOOR * sent as f64 {
            accepted * (1.0 + MARGIN)
        } else if offered >= HELD * self.rate {
            (self.rate * GROWTH).min(MAX_PPS)
        } else {
            self.rate
        }
        .max(START_PPS as f64);
        self.rate()
    }
}

/// [`Follow`] as the generator's monitor runs it ([`crate::traffic::GenConfig::follow`]): the
/// engine's pace, the interface's refusals and the controller.
pub(crate) struct Follower {
    pace: XdpCounter,
    /// A socket in the sender's namespace, to read the interface's `tx_dropped`.
    netlink: Netlink,
    ifindex: u32,
    follow: Follow,
    /// When the last window ended, frames sent and refused by then.
    last: Option<(Instant, u64, u64)>,
}

impl Follower {
    /// A follower pacing `pace`, reading the refusals of interface `ifindex` through `netlink`
    /// (a socket in its namespace).
    pub(crate) fn new(pace: XdpCounter, netlink: Netlink, ifindex: u32) -> Follower {
        Follower {
            pace,
            netlink,
            ifindex,
            follow: Follow::default(),
            last: None,
        }
    }

    /// Ends a window: reads the refusals and sets the pace. A failed read skips the window.
    pub(crate) fn step(&mut self, sent: u64) {
        let Ok(link) = self.netlink.link_by_index(self.ifindex) else {
            return;
        };
        let now = Instant::now();
        let refused = link.stats.tx_dropped;
        if let Some((t, sent0, refused0)) = self.last {
            let rate = self.follow.step(
                (now - t).as_secs_f64(),
                sent.saturating_sub(sent0),
                refused.saturating_sub(refused0),
            );
            self.pace.set_rate(rate);
        }
        self.last = Some((now, sent, refused));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mock DUT for the unit tests: takes up to `capacity` frames per second (its queue
    /// refuses the rest) and the generator sends what it is asked, up to `engine` per second.
    fn window(rate: u64, capacity: f64, engine: f64, seconds: f64) -> (u64, u64) {
        let sent = (rate as f64).min(engine) * seconds;
        let refused = (sent - capacity * seconds).max(0.0);
        (sent as u64, refused as u64)
    }

    fn run(f: &mut Follow, windows: usize, capacity: f64, engine: f64) -> u64 {
        let mut rate = f.rate();
        for _ in 0..windows {
            let (sent, refused) = window(rate, capacity, engine, 0.005);
            rate = f.step(0.005, sent, refused);
        }
        rate
    }

    #[test]
    fn settles_a_margin_above_what_the_dut_takes() {
        let mut f = Follow::default();
        let rate = run(&mut f, 20, 1.1e6, 6.5e6) as f64;
        assert!((rate / 1.1e6 - (1.0 + MARGIN)).abs() < 0.01, "{rate}");
    }

    #[test]
    fn catches_a_faster_dut_up_within_a_few_windows() {
        let mut f = Follow::default();
        run(&mut f, 20, 6e5, 6.5e6);
        let rate = run(&mut f, 6, 1.1e6, 6.5e6) as f64;
        assert!(rate >= 1.1e6, "{rate}");
        let rate = run(&mut f, MEMORY + 2, 6e5, 6.5e6) as f64;
        assert!((rate / 6e5 - (1.0 + MARGIN)).abs() < 0.01, "{rate}");
    }

    #[test]
    fn a_generator_that_lost_its_cpu_keeps_its_rate() {
        let mut f = Follow::default();
        let before = run(&mut f, 20, 1e6, 6.5e6);
        // Off its CPU for most of the window: it sent a fifth, and the DUT took it all.
        assert_eq!(f.step(0.005, before / 1000, 0), before);
    }

    #[test]
    fn one_stalled_window_does_not_lower_the_rate() {
        let mut f = Follow::default();
        let before = run(&mut f, 20, 1e6, 6.5e6);
        let (sent, _) = window(before, 1e6, 6.5e6, 0.005);
        // The DUT took half its share in this window; the queue refused the rest.
        assert_eq!(f.step(0.005, sent, sent - 2500), before);
    }

    #[test]
    fn a_burst_after_losing_the_cpu_does_not_raise_the_rate() {
        let mut f = Follow::default();
        let before = run(&mut f, 20, 1e6, 6.5e6);
        // Back on its CPU, the generator's owed frames filled the drained queue (256 frames on
        // top of the window's 5,000): the window accepted 5 % more than the DUT forwards.
        let (sent, refused) = window(before, 1e6, 6.5e6, 0.005);
        assert_eq!(f.step(0.005, sent + 256, refused), before);
    }

    #[test]
    fn an_interface_that_never_refuses_gets_all_the_engine_can() {
        let mut f = Follow::default();
        let rate = run(&mut f, 20, f64::INFINITY, 6.5e6) as f64;
        assert!(rate >= 6.5e6, "{rate}");
        // It stops growing once the engine falls short of what is asked.
        assert!(rate <= 6.5e6 / HELD * GROWTH, "{rate}");
    }
}
