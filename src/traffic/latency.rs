//! Latency under load: probe frames sent on top of the load and timed on the kernel's clock
//! where they leave and where they arrive.
//!
//! A [`ProbeStream`](crate::traffic::latency::ProbeStream) starts both ends in one process. Its
//! sender sends a small stream (10 kpps by default) of sequence-numbered probe frames
//! ([`frame`](crate::traffic::latency::frame)) from its own thread and packet socket, one frame
//! per `send` syscall, and reads back the kernel's *transmit* stamp of each; its receiver reads
//! them where they arrive with their *arrival* time. One-way latency = arrival
//! − transmit stamp of the same probe, paired by sequence number (`matcher`), on one clock of
//! one host. Loss, duplicates and reordering come from the sequence numbers
//! ([`seq`](crate::traffic::latency::seq)), per kind of probe ([`ProbeKind`](crate::traffic::latency::ProbeKind)): *established*
//! probes on one flow (the load's first, but for its destination on the virtual lab), and, when
//! asked, *first-packet* probes that each open a new 5-tuple (on a stateful DUT, a new conntrack entry: the cost of creating state).
//!
//! **The clock: `CLOCK_REALTIME`.** The kernel's software stamps (`skb->tstamp`) are taken on
//! it; so is the in-frame stamp (read through the vDSO). A step of that clock between a probe's
//! two stamps (an administrator's `date`, not NTP's slewing) spoils that probe; one that makes
//! it negative is counted (`clock_steps`), never recorded.
//!
//! **The send time: the kernel's software transmit stamp** (`SOF_TIMESTAMPING_TX_SOFTWARE`:
//! `skb_tx_timestamp` in the driver's transmit routine, veth's included), looped back with the
//! frame on the sender socket's error queue. Its error, the time from that call to the wire, is
//! nil on veth (the same routine hands the frame to the peer) and in general bounded by the
//! floor ([`lab::floor`](crate::lab::floor): transmit stamp → arrival stamp with no DUT, which
//! holds both stamps' errors and the crossing). The in-frame stamp, written immediately before
//! the syscall, is what a probe is timed from when its transmit stamp never comes (a driver
//! without `skb_tx_timestamp`; counted, `tx_unstamped`); in-frame stamp → transmit stamp,
//! "user space to driver", is kept as a distribution: that fallback's error, ≈ 2 µs here,
//! which the transmit stamp removes.
//!
//! **The arrival time: where the DUT lets the probe go, or where it arrives**
//! ([`Listen`](crate::traffic::latency::Listen)). On the virtual lab the probes come in by the
//! load's ingress and leave the DUT by a link of their own (`lab::addressing`); a tc program on
//! the DUT's end of it ([`egress`](crate::traffic::latency::egress)) logs each probe with its
//! time of leaving, just before veth would hand it to the receiver, in a ring this process
//! reads, and ends it there: past that point a probe would only cost the DUT's CPU the
//! receiver's stack, and veth adds no time to it. Elsewhere
//! (labs over SSH, the floor) the kernel stamps a frame as it enters the receiving interface's
//! stack (`SOF_TIMESTAMPING_RX_SOFTWARE`: `netif_rx` on veth, the driver's receive path on a
//! NIC, where hardware stamps could later replace it), read through a packet socket tapping the
//! interface behind a classic BPF filter on the magic. The egress stamp costs the load little:
//! receive stamps make the kernel read the clock for every frame any interface
//! receives (a global switch, `netstamp_needed_key`), which on the virtual lab the DUT's CPU
//! pays twice per frame of the load, 5 % of it at saturation; a tc program on the load's own
//! egress runs for every frame of it, and cost the DUT 6–7 % of its rate; on the probes' own
//! link it runs for theirs alone, and a probe then costs the DUT one frame of the load, its own
//! forwarding (docs/latency.md, "What the probes cost the load").
//!
//! **The time in the DUT**, when asked (`[latency] in_dut`). With the egress stamp, a second tc
//! program on the DUT's ingress ([`ingress`](crate::traffic::latency::ingress)) records when
//! each probe came into the DUT's stack. The probes share that ingress with the load (and its
//! input queue: their latency is the load's), so it runs for every frame of the load, which
//! cost the DUT about 4 % of its rate. The probe's egress stamp less that is its time in the DUT,
//! kept beside its latency
//! ([`KindProbes::in_dut`](crate::traffic::latency::KindProbes::in_dut)). What it leaves out,
//! the way to the DUT, is on a VM mostly the test machine's: the crossing between the
//! generator's CPU and the DUT's.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::error::InputError;
use crate::traffic::packet::FrameSpec;
use crate::traffic::IfRef;

/// The tick of the probes' clock.
pub mod clock;
/// The DUT's egress log of the virtual lab's probes: a tc program and its ring (FFI).
pub(crate) mod egress;
/// The receiver's socket filter: only probes reach its queue.
mod filter;
/// The probe frame: layout, kinds, stamping and decoding.
pub(crate) mod frame;
/// The DUT's ingress stamp of the virtual lab's probes: a tc program and its map (FFI).
pub(crate) mod ingress;
/// Pairs each arrival with its probe's kernel transmit time.
mod matcher;
/// A stream's results, per kind, and the time windows cut from them.
mod probes;
/// The probe receiver: where probes are read, their arrival times handed to the matcher.
mod receiver;
/// The probe sender's thread: pacing, stamping, the kernel's transmit times.
mod sender;
/// Loss, duplicates and reordering from sequence numbers.
pub(crate) mod seq;
/// The probes' sockets, their software timestamps and batched reads (FFI).
mod sock;
/// A probe thread stopped when asked or when dropped.
mod worker;

pub use probes::{KindProbes, Probes};

use crate::traffic::xdp::Carrier;

use matcher::Matcher;
pub(crate) use receiver::Listen;
use receiver::ProbeReceiver;
use sender::ProbeSender;

/// Probes per second when none is given: 10 kpps, 1 % of a 1 Mpps load.
pub(crate) const DEFAULT_RATE_PPS: u64 = 10_000;

/// Most probes per second: one syscall each; past this the probes are a load of their own.
pub(crate) const MAX_RATE_PPS: u64 = 1_000_000;

/// With first-packet probes, one probe in this many is one: sequence numbers `9, 19, 29, …`.
pub(crate) const FIRST_PACKET_EVERY: u32 = 10;

/// Runs `f` with the index of `iface`, in `iface`'s namespace: where the probes' sockets are
/// bound and the DUT's programs attached.
fn on_interface<T: Send>(
    iface: &IfRef,
    f: impl FnOnce(u32) -> anyhow::Result<T> + Send,
) -> anyhow::Result<T> {
    crate::traffic::os::in_netns(iface.netns.as_deref(), || {
        let info = crate::traffic::lookup(&mut crate::traffic::netlink_for(iface)?, iface)?;
        f(info.ifindex)
    })
}

/// What state a probe finds on a stateful DUT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProbeKind {
    /// On one established flow, the load's first (on the virtual lab sent to the receiver's
    /// address on the probes' own link): the latency of forwarding.
    Established,
    /// The first packet of a 5-tuple never used before: the latency of creating state.
    FirstPacket,
}

impl ProbeKind {
    /// Both kinds, in the order of [`Probes`]' results.
    pub const ALL: [ProbeKind; 2] = [ProbeKind::Established, ProbeKind::FirstPacket];

    /// Its name, the tag of its histograms in a log: `established`, `first-packet`.
    pub const fn name(self) -> &'static str {
        match self {
            ProbeKind::Established => "established",
            ProbeKind::FirstPacket => "first-packet",
        }
    }

    /// The tag of its histograms of the time in the DUT ([`ingress`]): `established-in-dut`,
    /// `first-packet-in-dut`.
    pub const fn in_dut_name(self) -> &'static str {
        match self {
            ProbeKind::Established => "established-in-dut",
            ProbeKind::FirstPacket => "first-packet-in-dut",
        }
    }

    /// Its place in [`Self::ALL`].
    fn index(self) -> usize {
        self as usize
    }
}

/// What a probe stream needs.
#[derive(Debug, Clone)]
pub(crate) struct ProbeConfig {
    /// The sending interface, in its namespace (the load's).
    pub(crate) iface: IfRef,
    /// The probes' addresses: the first flow of this spec, at its frame size (or the smallest
    /// that holds a probe, [`frame::min_frame`]); its port ranges are the load's, which
    /// first-packet probes avoid. (The virtual lab gives it the receiver's address on the
    /// probes' own link as its destination, [`Listen::Local`].)
    pub(crate) spec: FrameSpec,
    /// Probes per second.
    pub(crate) rate_pps: u64,
    /// Whether one probe in [`FIRST_PACKET_EVERY`] is a first-packet probe, on a 5-tuple of its
    /// own ([`frame::FreshPorts`]). Each leaves a conntrack entry on a stateful DUT: at the
    /// default 10 kpps, 1,000 new entries a second, ≈ 30,000 held with Linux's 30 s timeout of
    /// unreplied UDP (of a table of 262,144 at most): small next to the load.
    pub(crate) first_packet: bool,
    /// How long to send (`None`: until stopped).
    pub(crate) limit: Option<Duration>,
    /// CPU the sending thread is pinned to (`None`: left to the scheduler).
    pub(crate) cpu: Option<usize>,
    /// The XDP generator that carries the probes, when one does ([`Carrier`]): they then go
    /// out among its frames, timed as its batch goes to the interface, and `iface` only names
    /// where; otherwise from a packet socket of their own.
    pub(crate) carrier: Option<Carrier>,
}

impl ProbeConfig {
    /// Established probes at [`DEFAULT_RATE_PPS`] from `iface`, until stopped, unpinned.
    pub(crate) fn new(iface: IfRef, spec: FrameSpec) -> ProbeConfig {
        ProbeConfig {
            iface,
            spec,
            rate_pps: DEFAULT_RATE_PPS,
            first_packet: false,
            limit: None,
            cpu: None,
            carrier: None,
        }
    }

    /// Refuses a rate of 0 or above [`MAX_RATE_PPS`], and first-packet probes when the load's
    /// flows leave them no 5-tuple.
    pub(crate) fn check(&self) -> Result<(), InputError> {
        if !(1..=MAX_RATE_PPS).contains(&self.rate_pps) {
            return Err(InputError::new(format!(
                "bad probe rate {}: 1 to {MAX_RATE_PPS} probes per second",
                self.rate_pps
            )));
        }
        if self.first_packet && frame::FreshPorts::new(&self.spec).is_none() {
            return Err(InputError::new(format!(
                "no first-packet probes with flows {} to {}: their ports take every pair \
                 first-packet probes could use (1024-65535 on both sides)",
                self.spec.src, self.spec.dst
            )));
        }
        Ok(())
    }

    /// The kind of probe `seq`.
    pub(crate) fn kind(&self, seq: u32) -> ProbeKind {
        if self.first_packet && seq % FIRST_PACKET_EVERY == FIRST_PACKET_EVERY - 1 {
            ProbeKind::FirstPacket
        } else {
            ProbeKind::Established
        }
    }
}

/// A running probe stream: its sender, its receiver, and what pairs their stamps.
#[derive(Debug)]
pub(crate) struct ProbeStream {
    sender: ProbeSender,
    receiver: ProbeReceiver,
    matcher: Arc<Mutex<Matcher>>,
}

impl ProbeStream {
    /// Starts receiving as `listen` says (the thread pinned to `rx_cpu`, if any), then sending
    /// as `cfg` says: every probe sent is looked for.
    pub(crate) fn start(
        cfg: &ProbeConfig,
        listen: &Listen,
        rx_cpu: Option<usize>,
    ) -> anyhow::Result<ProbeStream> {
        cfg.check()?;
        let matcher = Arc::new(Mutex::new(Matcher::new()));
        let receiver = ProbeReceiver::start(listen, rx_cpu, matcher.clone())?;
        let sender = match ProbeSender::start(cfg, matcher.clone()) {
            Ok(s) => s,
            Err(e) => {
                // The sender's error is the one to report; the receiver has nothing to say.
                let _ = receiver.stop(Duration::ZERO);
                return Err(e);
            }
        };
        Ok(ProbeStream {
            sender,
            receiver,
            matcher,
        })
    }

    /// Whether the sender has ended: its limit reached, or an error (which [`Self::stop`]
    /// returns).
    pub(crate) fn is_finished(&self) -> bool {
        self.sender.is_finished()
    }

    /// Stops sending, waits `drain` for the probes in flight, stops receiving and returns the
    /// results; or the sender's error, the receiver then stopped at once.
    pub(crate) fn stop(self, drain: Duration) -> anyhow::Result<Probes> {
        let sent = match self.sender.stop() {
            Ok(sent) => sent,
            Err(e) => {
                let _ = self.receiver.stop(Duration::ZERO);
                return Err(e);
            }
        };
        self.receiver.stop(drain)?;
        let accounts = Arc::try_unwrap(self.matcher)
            .expect("both threads have ended: the matcher is the stream's alone")
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
            .finish();
        Ok(Probes::new(sent, accounts))
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

    #[test]
    fn one_probe_in_ten_is_a_first_packet_when_asked() {
        let mut cfg = ProbeConfig::new(IfRef::parse("ns/eth0").unwrap(), spec());
        assert!((0..100).all(|s| cfg.kind(s) == ProbeKind::Established));
        cfg.first_packet = true;
        let first: Vec<u32> = (0..40)
            .filter(|&s| cfg.kind(s) == ProbeKind::FirstPacket)
            .collect();
        assert_eq!(first, [9, 19, 29, 39]);
        assert_eq!(
            ProbeKind::ALL.map(ProbeKind::name),
            ["established", "first-packet"]
        );
    }

    #[test]
    fn first_packets_need_a_free_tuple() {
        let mut all = spec();
        all.src = "198.18.0.1:1-198.18.0.1:65535".parse().unwrap();
        all.dst = "198.19.0.1:1-198.19.0.1:65535".parse().unwrap();
        let mut cfg = ProbeConfig::new(IfRef::parse("ns/eth0").unwrap(), all);
        assert!(cfg.check().is_ok());
        cfg.first_packet = true;
        let err = cfg.check().unwrap_err().0;
        assert!(err.contains("no first-packet probes"), "{err}");
    }
}
