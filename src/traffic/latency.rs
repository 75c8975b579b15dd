//! Latency under load: probe frames sent on top of the load, stamped as they are sent and timed
//! as they arrive.
//!
//! A [`ProbeSender`](crate::traffic::latency::ProbeSender) sends a small stream (10 kpps by
//! default) of sequence-numbered probe frames ([`frame`](crate::traffic::latency::frame)) from its own thread and packet
//! socket, one frame per `send` syscall, each stamped immediately before its syscall: the
//! load's batches, and the sender's pacing, never enter a stamp. A
//! [`ProbeReceiver`](crate::traffic::latency::ProbeReceiver) reads them on the receiving
//! interface with their arrival time; one-way latency = arrival − stamp, on one clock of one
//! host. Loss, duplicates and reordering come from the sequence numbers ([`seq`](crate::traffic::latency::seq)).
//!
//! **The clock: `CLOCK_REALTIME`.** The receive hook's timestamps are the kernel's software
//! stamps (`skb->tstamp`), taken on `CLOCK_REALTIME`; the in-frame stamp is read from the same
//! clock (through the vDSO), so both ends are one clock. A step of that clock between a probe's
//! stamp and its arrival (an administrator's `date`, not NTP's slewing) spoils that probe;
//! one that makes it negative is counted (`clock_steps`), never recorded.
//!
//! **The hook: software receive timestamps on a packet socket, not XDP.** The kernel stamps a
//! frame when it enters the receiving interface's stack (`netif_rx` on veth, before any tap,
//! qdisc or socket), and a classic BPF socket filter on the magic lets only probes reach the
//! socket. An XDP program on the receiving veth would see the frame a few hundred nanoseconds
//! earlier (in veth's NAPI poll), but loading one changes the veth under test: the DUT's egress
//! veth then hands every frame of the load to NAPI on the receiver's side, and its time would
//! need a BPF map and a ring buffer read back, all hand-assembled. The stamp is the same kind
//! on a NIC (`SOF_TIMESTAMPING_RX_SOFTWARE` in the driver's receive path), where hardware
//! stamps could later replace it.
//!
//! **Stamp-to-wire error, measured.** The sender's socket also asks for the kernel's software
//! *transmit* stamp (`SOF_TIMESTAMPING_TX_SOFTWARE`: `skb_tx_timestamp` in the driver's
//! transmit routine, veth's included), looped back with the frame on the socket's error queue.
//! The frame carries its own stamp, so each transmit time is matched to its probe exactly:
//! transmit − stamp is how long the probe took from its stamp to the driver, recorded as a
//! distribution ([`SenderReport::stamp_to_wire`](crate::traffic::latency::SenderReport)).
//! It is an upper bound of the error (it includes the clock read itself, ≈ 20 ns).

use std::time::Duration;

use crate::error::InputError;
use crate::stats::latency::{Latency, LatencySummary};
use crate::traffic::packet::FrameSpec;
use crate::traffic::IfRef;

/// The probe frame: layout, stamping, decoding and the receiver's socket filter.
pub(crate) mod frame;
/// The probe receiver's thread: arrival times, latency histogram, sequence account.
mod receiver;
/// The probe sender's thread: pacing, stamping, the kernel's transmit times.
mod sender;
/// Loss, duplicates and reordering from sequence numbers.
pub(crate) mod seq;
/// The packet sockets and their software timestamps (FFI).
mod sock;

pub(crate) use receiver::{ProbeReceiver, ReceiverReport};
pub(crate) use sender::{ProbeSender, SenderReport};

/// Probes per second when none is given: 10 kpps, 1 % of a 1 Mpps load.
pub(crate) const DEFAULT_RATE_PPS: u64 = 10_000;

/// Most probes per second: one syscall each; past this the probes are a load of their own.
pub(crate) const MAX_RATE_PPS: u64 = 1_000_000;

/// What a probe stream needs.
#[derive(Debug, Clone)]
pub(crate) struct ProbeConfig {
    /// The sending interface, in its namespace (the load's).
    pub(crate) iface: IfRef,
    /// The probes' addresses: the first flow of this spec, at its frame size (or the smallest
    /// that holds a probe, [`frame::min_frame`]).
    pub(crate) spec: FrameSpec,
    /// Probes per second.
    pub(crate) rate_pps: u64,
    /// How long to send (`None`: until stopped).
    pub(crate) limit: Option<Duration>,
    /// CPU the sending thread is pinned to (`None`: left to the scheduler).
    pub(crate) cpu: Option<usize>,
}

impl ProbeConfig {
    /// Probes at [`DEFAULT_RATE_PPS`] from `iface`, until stopped, unpinned.
    pub(crate) fn new(iface: IfRef, spec: FrameSpec) -> ProbeConfig {
        ProbeConfig {
            iface,
            spec,
            rate_pps: DEFAULT_RATE_PPS,
            limit: None,
            cpu: None,
        }
    }

    /// Refuses a rate of 0 or above [`MAX_RATE_PPS`].
    pub(crate) fn check(&self) -> Result<(), InputError> {
        if !(1..=MAX_RATE_PPS).contains(&self.rate_pps) {
            return Err(InputError::new(format!(
                "bad probe rate {}: 1 to {MAX_RATE_PPS} probes per second",
                self.rate_pps
            )));
        }
        Ok(())
    }
}

/// A probe stream's results: the latency, its summary with the probes' counts, and the
/// stamp-to-wire error.
#[derive(Debug, Clone)]
pub struct Probes {
    /// One-way latency of the probes that arrived, ns.
    pub latency: Latency,
    /// P50…max and the probes' counts.
    pub summary: LatencySummary,
    /// The kernel's transmit time minus the in-frame stamp, ns.
    pub stamp_to_wire: Latency,
    /// Probes the sender has no transmit time for.
    pub tx_unstamped: u64,
    /// Probes the receiver has no arrival time for.
    pub rx_unstamped: u64,
}

impl Probes {
    /// The results of a sender and a receiver of one stream.
    pub(crate) fn new(sent: SenderReport, received: ReceiverReport) -> Probes {
        let counts = received.sequence.counts(sent.sent, received.clock_steps);
        Probes {
            summary: LatencySummary::new(&received.latency, counts),
            latency: received.latency,
            stamp_to_wire: sent.stamp_to_wire,
            tx_unstamped: sent.unstamped,
            rx_unstamped: received.unstamped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> FrameSpec {
        FrameSpec::new(
            "02:00:00:00:00:01".parse().unwrap(),
            "02:00:00:00:00:02".parse().unwrap(),
            "198.18.0.1:2000".parse().unwrap(),
            "198.19.0.1:2000".parse().unwrap(),
            64,
        )
        .unwrap()
    }

    #[test]
    fn rates_are_checked() {
        let mut cfg = ProbeConfig::new(IfRef::parse("ns/eth0").unwrap(), spec());
        assert!(cfg.check().is_ok());
        cfg.rate_pps = 0;
        assert!(cfg.check().unwrap_err().0.contains("bad probe rate 0"));
        cfg.rate_pps = MAX_RATE_PPS + 1;
        assert!(cfg.check().is_err());
    }
}
