//! Loss, duplicates and reordering from the probes' sequence numbers.
//!
//! Reordering as RFC 4737 counts it: a probe is reordered when it arrives after one with a
//! higher sequence number. Duplicates are told from late arrivals by a window of the last
//! [`WINDOW`](crate::traffic::latency::seq::WINDOW) sequence numbers (8 KiB of bits, 6.5 s of probes at 10 kpps): a probe older than
//! that counts as reordered, never as a duplicate, since whether it came before is forgotten.

use crate::stats::latency::ProbeCounts;

/// Sequence numbers remembered behind the highest one seen.
pub(crate) const WINDOW: u64 = 1 << 16;

/// What one arrival was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arrival {
    /// First arrival, after every lower sequence number seen so far.
    InOrder,
    /// First arrival, after a higher sequence number.
    Reordered,
    /// Already arrived.
    Duplicate,
}

/// The arrivals' account.
#[derive(Debug, Clone)]
pub(crate) struct Sequence {
    /// One past the highest sequence number seen.
    next: u64,
    /// Bit `s % WINDOW`: whether `s` arrived, for `next - WINDOW <= s < next`.
    seen: Vec<u64>,
    received: u64,
    duplicates: u64,
    reordered: u64,
}

impl Default for Sequence {
    fn default() -> Self {
        Sequence::new()
    }
}

impl Sequence {
    /// No arrival yet.
    pub(crate) fn new() -> Sequence {
        Sequence {
            next: 0,
            seen: vec![0; (WINDOW / 64) as usize],
            received: 0,
            duplicates: 0,
            reordered: 0,
        }
    }

    fn bit(&mut self, seq: u64) -> (&mut u64, u64) {
        let i = seq % WINDOW;
        (&mut self.seen[(i / 64) as usize], 1 << (i % 64))
    }

    /// Counts the arrival of `seq`.
    pub(crate) fn observe(&mut self, seq: u32) -> Arrival {
        let seq = u64::from(seq);
        if seq >= self.next {
            // Sequence numbers skipped on the way have not arrived (yet): forget the bits they
            // held a window ago.
            let from = self.next.max((seq + 1).saturating_sub(WINDOW));
            for s in from..seq {
                let (word, mask) = self.bit(s);
                *word &= !mask;
            }
            let (word, mask) = self.bit(seq);
            *word |= mask;
            self.next = seq + 1;
            self.received += 1;
            return Arrival::InOrder;
        }
        self.received += 1;
        self.reordered += 1;
        if self.next - seq > WINDOW {
            return Arrival::Reordered;
        }
        let (word, mask) = self.bit(seq);
        if *word & mask != 0 {
            self.received -= 1;
            self.reordered -= 1;
            self.duplicates += 1;
            return Arrival::Duplicate;
        }
        *word |= mask;
        Arrival::Reordered
    }

    /// The counts once `sent` probes were sent: lost are those sent that never arrived.
    pub(crate) fn counts(&self, sent: u64, clock_steps: u64) -> ProbeCounts {
        ProbeCounts {
            sent,
            received: self.received,
            lost: sent.saturating_sub(self.received),
            duplicates: self.duplicates,
            reordered: self.reordered,
            clock_steps,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(seqs: &[u32], sent: u64) -> ProbeCounts {
        let mut s = Sequence::new();
        for &q in seqs {
            s.observe(q);
        }
        s.counts(sent, 0)
    }

    #[test]
    fn in_order_arrivals_lose_nothing() {
        let c = run(&[0, 1, 2, 3, 4], 5);
        assert_eq!(
            (c.received, c.lost, c.duplicates, c.reordered),
            (5, 0, 0, 0)
        );
    }

    #[test]
    fn gaps_are_lost_and_late_ones_reordered() {
        // 2 arrives after 3 (reordered), 5 never (lost), 6 twice (duplicate).
        let mut s = Sequence::new();
        let arrivals: Vec<Arrival> = [0, 1, 3, 2, 4, 6, 6, 7]
            .iter()
            .map(|&q| s.observe(q))
            .collect();
        assert_eq!(arrivals[3], Arrival::Reordered);
        assert_eq!(arrivals[6], Arrival::Duplicate);
        let c = s.counts(8, 2);
        assert_eq!(c.received, 7);
        assert_eq!(c.lost, 1);
        assert_eq!(c.duplicates, 1);
        assert_eq!(c.reordered, 1);
        assert_eq!(c.clock_steps, 2);
    }

    #[test]
    fn a_late_duplicate_is_a_duplicate_and_a_late_first_is_not() {
        let c = run(&[0, 5, 2, 2, 5, 3, 0], 6);
        assert_eq!(
            (c.received, c.lost, c.duplicates, c.reordered),
            (4, 2, 3, 2)
        );
    }

    #[test]
    fn bits_are_forgotten_as_the_window_moves() {
        let mut s = Sequence::new();
        s.observe(0);
        // Far ahead: 0's bit is reused for WINDOW, which has not arrived.
        let far = WINDOW as u32;
        assert_eq!(s.observe(far + 10), Arrival::InOrder);
        assert_eq!(s.observe(far), Arrival::Reordered);
        assert_eq!(s.observe(far), Arrival::Duplicate);
        // Older than the window: reordered, whether or not it came before.
        assert_eq!(s.observe(0), Arrival::Reordered);
        assert_eq!(s.counts(far as u64 + 11, 0).received, 4);
    }

    #[test]
    fn more_arrivals_than_sent_lose_nothing() {
        assert_eq!(run(&[0, 1, 2], 2).lost, 0);
    }
}
