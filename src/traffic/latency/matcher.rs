//! Pairs each probe's arrival with its transmit time: one-way latency = the receiver's kernel
//! stamp − the sender's kernel stamp of the same probe, matched by sequence number.
//!
//! The two stamps reach two threads (the sender reads its error queue, the receiver its socket)
//! in either order. A transmit time waits for its arrival in a ring of
//! [`WINDOW`](crate::traffic::latency::seq::WINDOW) slots (1 MiB); an arrival waits for its
//! transmit time until the sender has *settled* it: the kernel queues a software transmit stamp
//! during the send syscall itself (`skb_tx_timestamp` in the driver's transmit routine, which a
//! packet socket that bypasses the qdisc calls directly), so once the sender has sent a probe and
//! read its error queue, every earlier probe's stamp has been read, or will never come (a
//! driver without `skb_tx_timestamp`). Such an arrival, and one that comes after its transmit
//! time left the ring, is timed from its in-frame stamp instead, and counted (`tx_unstamped`).

use std::sync::{Mutex, MutexGuard, PoisonError};

use super::frame::Probe;
use super::seq::{Arrival, Sequence, WINDOW};
use crate::stats::latency::{Latency, HIGHEST_NS};

/// An empty slot of the ring: no sequence number is this.
const EMPTY: (u64, u64) = (u64::MAX, 0);

/// A probe that arrived: when it was sent and how long it took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Record {
    /// Send time, ns since the epoch (`CLOCK_REALTIME`): the kernel's transmit stamp, or the
    /// in-frame stamp when there is none.
    pub(crate) send_ns: u64,
    /// One-way latency, ns (at most [`HIGHEST_NS`], as the histograms).
    pub(crate) latency_ns: u64,
}

/// What one kind of probe came to at the receiver.
#[derive(Debug, Clone, Default)]
pub(crate) struct Account {
    /// The arrivals by sequence number.
    pub(crate) sequence: Sequence,
    /// Every probe timed, in the order they were matched.
    pub(crate) records: Vec<Record>,
    /// Their latencies.
    pub(crate) latency: Latency,
    /// The probes timed from the DUT's ingress to its egress, when it recorded their coming in
    /// ([`super::ingress`]): when they were sent and that time, in the order they were matched.
    pub(crate) in_dut_records: Vec<Record>,
    /// Those times.
    pub(crate) in_dut: Latency,
    /// Probes whose arrival preceded their send time (the clock stepped): not recorded.
    pub(crate) clock_steps: u64,
    /// Probes no transmit time was read for: timed from their in-frame stamp, or not timed
    /// when read from the DUT's egress log, which keeps none.
    pub(crate) tx_unstamped: u64,
    /// Probes that came without an arrival time (never with software timestamps on): not
    /// recorded.
    pub(crate) rx_unstamped: u64,
}

/// `matcher`, even if the other thread panicked holding it (its join reports the panic).
pub(crate) fn lock(matcher: &Mutex<Matcher>) -> MutexGuard<'_, Matcher> {
    matcher.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The sender's transmit times and the receiver's arrivals, paired.
#[derive(Debug)]
pub(crate) struct Matcher {
    /// Transmit times no arrival has claimed yet, `(seq, ns)` at slot `seq % WINDOW`.
    transmitted: Vec<(u64, u64)>,
    /// Arrivals, with their arrival and ingress times, whose transmit time has not been read
    /// yet.
    waiting: Vec<(Probe, u64, Option<u64>)>,
    /// Every transmit time of a probe below this sequence number has been read, or never will.
    settled: u64,
    /// Per kind, in [`ProbeKind::ALL`](crate::traffic::latency::ProbeKind::ALL)'s order.
    accounts: [Account; 2],
}

impl Matcher {
    /// Nothing sent, nothing arrived.
    pub(crate) fn new() -> Matcher {
        Matcher {
            transmitted: vec![EMPTY; WINDOW as usize],
            waiting: Vec::new(),
            settled: 0,
            accounts: Default::default(),
        }
    }

    /// The sender read probe `seq`'s kernel transmit time, `tx_ns`.
    pub(crate) fn transmitted(&mut self, seq: u32, tx_ns: u64) {
        if let Some(i) = self.waiting.iter().position(|(p, _, _)| p.seq == seq) {
            let (probe, rx_ns, in_ns) = self.waiting.swap_remove(i);
            self.record(probe, Some(tx_ns), (rx_ns, in_ns));
            return;
        }
        let seq = u64::from(seq);
        self.transmitted[(seq % WINDOW) as usize] = (seq, tx_ns);
    }

    /// The sender has read every transmit time of the probes below `seq` that will come: those
    /// still waiting are timed from their in-frame stamps.
    pub(crate) fn settle(&mut self, seq: u64) {
        self.settled = self.settled.max(seq);
        let settled = self.settled;
        // A few arrivals wait at most (those of one send): a search each is cheap.
        while let Some(i) = self
            .waiting
            .iter()
            .position(|(p, _, _)| u64::from(p.seq) < settled)
        {
            let (probe, rx_ns, in_ns) = self.waiting.swap_remove(i);
            self.record(probe, None, (rx_ns, in_ns));
        }
    }

    /// `probe` arrived at `rx_ns` (`None`: without an arrival time); `in_ns`: what the DUT's
    /// ingress recorded for its sequence number, when it records.
    pub(crate) fn arrived(&mut self, probe: Probe, rx_ns: Option<u64>, in_ns: Option<u64>) {
        let account = &mut self.accounts[probe.kind.index()];
        if account.sequence.observe(probe.seq) == Arrival::Duplicate {
            return;
        }
        let Some(rx_ns) = rx_ns else {
            account.rx_unstamped += 1;
            return;
        };
        let seq = u64::from(probe.seq);
        let slot = &mut self.transmitted[(seq % WINDOW) as usize];
        if slot.0 == seq {
            let tx_ns = slot.1;
            *slot = EMPTY;
            self.record(probe, Some(tx_ns), (rx_ns, in_ns));
        } else if seq < self.settled {
            self.record(probe, None, (rx_ns, in_ns));
        } else {
            self.waiting.push((probe, rx_ns, in_ns));
        }
    }

    /// Records `probe`, sent at `tx_ns` (`None`: its in-frame stamp), arrived at `rx_ns`, and
    /// its time in the DUT when `in_ns`, the DUT's ingress time for its sequence number, lies
    /// between its kernel transmit stamp and its arrival: a word the DUT wrote for a probe
    /// [`SLOTS`](super::ingress::SLOTS) before or after it does not.
    fn record(&mut self, probe: Probe, tx_ns: Option<u64>, (rx_ns, in_ns): (u64, Option<u64>)) {
        let account = &mut self.accounts[probe.kind.index()];
        let send_ns = match tx_ns {
            Some(ns) => ns,
            None => {
                account.tx_unstamped += 1;
                // No in-frame stamp either: the DUT's egress log keeps none.
                if probe.stamp_ns == 0 {
                    return;
                }
                probe.stamp_ns
            }
        };
        let Some(latency_ns) = rx_ns.checked_sub(send_ns) else {
            account.clock_steps += 1;
            return;
        };
        // Bounded before both: the histogram is then the records' own, made again exactly from
        // them where the results travel (`benchlab probe`).
        let latency_ns = latency_ns.min(HIGHEST_NS);
        account.latency.record(latency_ns);
        account.records.push(Record {
            send_ns,
            latency_ns,
        });
        if let (Some(tx_ns), Some(in_ns)) = (tx_ns, in_ns) {
            if (tx_ns..=rx_ns).contains(&in_ns) {
                let in_dut_ns = rx_ns - in_ns;
                account.in_dut.record(in_dut_ns);
                account.in_dut_records.push(Record {
                    send_ns,
                    latency_ns: in_dut_ns,
                });
            }
        }
    }

    /// Every kind's account, once nothing more is sent or received: arrivals still waiting are
    /// timed from their in-frame stamps.
    pub(crate) fn finish(mut self) -> [Account; 2] {
        self.settle(u64::MAX);
        self.accounts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::latency::ProbeKind;

    fn probe(kind: ProbeKind, seq: u32, stamp_ns: u64) -> Probe {
        Probe {
            kind,
            seq,
            stamp_ns,
        }
    }

    const E: ProbeKind = ProbeKind::Established;
    const F: ProbeKind = ProbeKind::FirstPacket;

    fn records(a: &Account) -> Vec<(u64, u64)> {
        a.records
            .iter()
            .map(|r| (r.send_ns, r.latency_ns))
            .collect()
    }

    #[test]
    fn a_transmit_time_read_first_waits_for_its_arrival() {
        let mut m = Matcher::new();
        m.transmitted(0, 1_000);
        m.transmitted(1, 2_000);
        m.settle(1);
        // The in-frame stamp (900) is not the send time: the kernel's (1000) is.
        m.arrived(probe(E, 0, 900), Some(1_300), None);
        m.arrived(probe(F, 1, 1_900), Some(2_700), None);
        let [e, f] = m.finish();
        assert_eq!(records(&e), [(1_000, 300)]);
        assert_eq!(records(&f), [(2_000, 700)]);
        assert_eq!((e.tx_unstamped, f.tx_unstamped), (0, 0));
        assert_eq!(e.latency.len(), 1);
    }

    #[test]
    fn an_arrival_read_first_waits_for_its_transmit_time() {
        let mut m = Matcher::new();
        m.arrived(probe(E, 0, 900), Some(1_300), None);
        m.arrived(probe(E, 1, 1_900), Some(2_400), None);
        m.transmitted(1, 2_000);
        m.transmitted(0, 1_000);
        m.settle(2);
        let [e, _] = m.finish();
        assert_eq!(records(&e), [(2_000, 400), (1_000, 300)]);
        assert_eq!(e.tx_unstamped, 0);
    }

    #[test]
    fn a_missing_transmit_time_falls_back_to_the_in_frame_stamp_once_settled() {
        let mut m = Matcher::new();
        m.arrived(probe(E, 0, 900), Some(1_300), None);
        // Not settled yet: its transmit time may still come.
        m.settle(0);
        assert_eq!(m.accounts[0].tx_unstamped, 0);
        // Probe 1 sent and its stamps read: 0's never came.
        m.transmitted(1, 2_000);
        m.settle(1);
        assert_eq!(m.accounts[0].tx_unstamped, 1);
        // An arrival already settled falls back at once; one still waiting at the end, too.
        m.arrived(probe(E, 1, 1_950), Some(2_500), None);
        m.arrived(probe(F, 0, 800), Some(1_000), None);
        m.arrived(probe(F, 5, 5_000), Some(5_100), None);
        let [e, f] = m.finish();
        assert_eq!(records(&e), [(900, 400), (2_000, 500)]);
        assert_eq!(records(&f), [(800, 200), (5_000, 100)]);
        assert_eq!((e.tx_unstamped, f.tx_unstamped), (1, 2));
    }

    #[test]
    fn duplicates_steps_and_unstamped_arrivals_are_counted_never_recorded() {
        let mut m = Matcher::new();
        m.transmitted(0, 1_000);
        m.transmitted(1, 2_000);
        m.transmitted(2, 3_000);
        m.arrived(probe(E, 0, 900), Some(1_100), None);
        m.arrived(probe(E, 0, 900), Some(1_200), None);
        m.arrived(probe(E, 1, 1_900), Some(1_500), None);
        m.arrived(probe(E, 2, 2_900), None, None);
        let [e, _] = m.finish();
        assert_eq!(records(&e), [(1_000, 100)]);
        assert_eq!((e.clock_steps, e.rx_unstamped), (1, 1));
        let c = e.sequence.counts(3, e.clock_steps);
        assert_eq!((c.received, c.duplicates), (3, 1));
    }

    #[test]
    fn a_transmit_time_overwritten_in_the_ring_falls_back() {
        let mut m = Matcher::new();
        m.transmitted(0, 1_000);
        m.transmitted(WINDOW as u32, 9_000);
        m.settle(WINDOW + 1);
        m.arrived(probe(E, 0, 900), Some(1_300), None);
        let [e, _] = m.finish();
        assert_eq!(records(&e), [(900, 400)]);
        assert_eq!(e.tx_unstamped, 1);
    }

    #[test]
    fn the_time_in_the_dut_is_kept_only_between_the_two_stamps() {
        let mut m = Matcher::new();
        for (seq, tx) in [(0, 1_000), (1, 2_000), (2, 3_000), (3, 4_000)] {
            m.transmitted(seq, tx);
        }
        // 0: came in at 1,200, left at 1,300: 100 ns in the DUT. 1: a stale word (before it
        // was sent); 2: none recorded; 3: a word written after it left.
        m.arrived(probe(E, 0, 0), Some(1_300), Some(1_200));
        m.arrived(probe(E, 1, 0), Some(2_500), Some(1_200));
        m.arrived(probe(E, 2, 0), Some(3_500), None);
        m.arrived(probe(E, 3, 0), Some(4_500), Some(4_600));
        // Timed from the in-frame stamp (no transmit stamp): no time in the DUT either.
        m.settle(5);
        m.arrived(probe(F, 4, 4_900), Some(5_500), Some(5_000));
        let [e, f] = m.finish();
        assert_eq!(records(&e).len(), 4);
        let in_dut: Vec<(u64, u64)> = (e.in_dut_records.iter())
            .map(|r| (r.send_ns, r.latency_ns))
            .collect();
        assert_eq!(in_dut, [(1_000, 100)]);
        assert_eq!(e.in_dut.len(), 1);
        assert!(f.in_dut_records.is_empty() && f.in_dut.is_empty());
    }
}
