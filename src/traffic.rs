//! Traffic: benchlab's own packet generator and the receiver's counter sampler.
//!
//! A trial runs a [`Generator`](crate::traffic::Generator) on the sender and a
//! [`Receiver`](crate::traffic::receiver::Receiver) that samples the
//! receiving interface's counters (and the DUT's drop counters) once a second:
//!
//! ```no_run
//! # fn main() -> anyhow::Result<()> {
//! use benchlab::traffic::{self, GenConfig, Generator, Limit, Rate};
//! use benchlab::traffic::IfRef;
//! use benchlab::traffic::receiver::{Receiver, RxConfig};
//! let spec = traffic::packet::FrameSpec::new(
//!     "02:00:00:00:00:01".parse()?, "02:00:00:00:00:02".parse()?,
//!     "198.18.10.1:2000-198.18.10.20".parse()?, "198.19.10.1:2000-198.19.10.100".parse()?, 64)?;
//! let mut cfg = GenConfig::new(IfRef::parse("benchlab-1-sender/bl1s0")?, spec);
//! cfg.rate = Rate::Pps(500_000);
//! cfg.limit = Limit::Count(5_000_000);
//! let rx = Receiver::start(RxConfig::new(IfRef::parse("benchlab-1-receiver/bl1r0")?))?;
//! let mut generator = traffic::builtin(cfg)?;
//! generator.start()?;
//! while generator.next_sample(std::time::Duration::from_secs(1)).is_some() {}
//! let sent = generator.stop()?;
//! let series = rx.stop()?; // t_s, rx_pkts, rx_pps, drops… one sample a second
//! # let _ = (sent, series); Ok(()) }
//! ```
//!
//! Two engines send the frames (see [`Engine`](crate::traffic::Engine)): XDP live frames, the default where the kernel
//! and interface allow it, and AF_PACKET, the portable fallback.

use std::time::Duration;

use serde::Serialize;

use crate::error::InputError;

/// AF_PACKET engine: `sendmmsg` with qdisc bypass, for any Linux interface.
pub(crate) mod afpacket;
/// eBPF without a BPF toolchain: the assembler and bpf(2) calls of the XDP generator and the
/// probes' egress log and ingress stamp.
pub(crate) mod bpf;
/// The seam a trial drives: `Sender` and `Receiver`, and the seconds (`Tick`s) they count.
pub(crate) mod endpoint;
/// `max` following the next hop: a margin above what the interface accepted lately.
pub mod follow;
/// The built-in generator: a pinned thread, the rate limiter, per-second samples.
pub(crate) mod generator;
/// Latency under load: probe frames stamped as they are sent, timed as they arrive.
pub mod latency;
/// benchlab's generator and receiver in this process, as a trial's sender and receiver.
pub(crate) mod local;
/// Minimal rtnetlink and generic netlink: interface lookup, counters, XDP features.
pub(crate) mod netlink;
/// Namespaces, CPU affinity and signal masks of the calling thread.
pub mod os;
/// The stoppable wait of every paced loop of `traffic`.
pub(crate) mod pace;
/// Frames, flow ranges and checksums, as pure functions.
pub mod packet;
/// netmap pkt-gen: command lines from a traffic profile, its per-second output parsed.
pub mod pktgen;
/// The receiver: per-second interface counters as a series.
pub mod receiver;
/// The generators a real lab's senders run, by their `LAB.toml` name.
pub(crate) mod registry;
/// Tools on other hosts: process guards, scratch files, `benchlab gen`/`rx` run remotely.
pub(crate) mod remote;
/// The DUT's input queue held by the generator: refused frames sent again.
pub(crate) mod requeue;
/// netsniff-ng trafgen: its packet configuration from a traffic profile, its command line.
pub(crate) mod trafgen;
/// The JSON lines of `benchlab gen`, `rx` and `probe --json`, written and read.
pub(crate) mod wire;
/// XDP live-frames engine: a hand-assembled XDP program run by `BPF_PROG_TEST_RUN`.
pub mod xdp;

pub use generator::builtin;
use packet::{FrameSpec, Mac};

/// Offered load: `"max"` or a packet rate in files and on command lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rate {
    /// As fast as the engine can.
    Max,
    /// A fixed rate in packets per second, evenly spaced in small bursts.
    Pps(u64),
}

impl Serialize for Rate {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Rate::Max => s.serialize_str("max"),
            Rate::Pps(pps) => s.serialize_u64(*pps),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Rate {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RateVisitor)
    }
}

/// Reads a rate from `"max"` or a whole positive number, saying which was expected otherwise.
struct RateVisitor;

impl serde::de::Visitor<'_> for RateVisitor {
    type Value = Rate;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("\"max\" or a whole, positive number of packets per second")?;
        f.write_str(" (500000, \"500k\", \"1.5M\")")
    }

    /// The command line's forms too (`"500k"`), so that a rate copied from `benchlab gen -r`
    /// reads the same in a campaign file.
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Rate, E> {
        v.parse()
            .map_err(|_| E::invalid_value(serde::de::Unexpected::Str(v), &self))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Rate, E> {
        match u64::try_from(v) {
            Ok(pps) if pps > 0 => Ok(Rate::Pps(pps)),
            _ => Err(E::invalid_value(serde::de::Unexpected::Signed(v), &self)),
        }
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Rate, E> {
        match v {
            0 => Err(E::invalid_value(serde::de::Unexpected::Unsigned(v), &self)),
            pps => Ok(Rate::Pps(pps)),
        }
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Rate, E> {
        Err(E::invalid_value(serde::de::Unexpected::Float(v), &self))
    }
}

impl std::str::FromStr for Rate {
    type Err = InputError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "max" {
            return Ok(Rate::Max);
        }
        match crate::units::parse_count(s) {
            Some(0) | None => Err(InputError::new(format!(
                "bad rate '{s}': expected 'max' or packets per second (e.g. 500000, 500k, 1.5M)"
            ))),
            Some(pps) => Ok(Rate::Pps(pps)),
        }
    }
}

/// When a run ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Limit {
    /// After exactly this many packets.
    Count(u64),
    /// After this long.
    Duration(Duration),
    /// When stopped.
    Forever,
}

/// Which engine sends the frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// XDP where the interface accepts XDP frames (veth with GRO or XDP on its peer, NICs with
    /// `ndo_xdp_xmit`), AF_PACKET otherwise.
    Auto,
    /// XDP live frames: an XDP program run in the kernel by `BPF_PROG_TEST_RUN` that writes
    /// each frame and redirects it to the interface (Linux ≥ 5.18).
    Xdp,
    /// AF_PACKET `sendmmsg` with `PACKET_QDISC_BYPASS`: any interface, any Linux.
    Packet,
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Engine::Auto => "auto",
            Engine::Xdp => "xdp",
            Engine::Packet => "packet",
        })
    }
}

/// Everything a generator run needs.
#[derive(Debug, Clone)]
pub struct GenConfig {
    /// The sending interface, in its namespace.
    pub iface: IfRef,
    /// The frames: MACs, flow ranges, size.
    pub spec: FrameSpec,
    /// Offered rate.
    pub rate: Rate,
    /// When to stop.
    pub limit: Limit,
    /// CPU the sending thread is pinned to (`None`: left to the scheduler).
    pub cpu: Option<usize>,
    /// Engine choice.
    pub engine: Engine,
    /// AF_PACKET packets per `sendmmsg` (`None`: [`afpacket::default_burst`]); the XDP
    /// engine sends frame by frame.
    pub burst: Option<u32>,
    /// At `max`, the XDP engine offers a margin above what the interface accepted lately
    /// instead of all it can ([`follow`]): on a virtual lab, the frames a full DUT refuses
    /// cost the DUT's CPU.
    pub follow: bool,
    /// The XDP engine holds the frames the interface refuses and sends them again once it
    /// takes frames ([`requeue`]): the DUT's input queue, a ring of this many frames (the
    /// virtual lab's at a fixed load, `lab::virt`). What it holds beyond that when the
    /// traffic stops is dropped. Refused with [`Engine::Packet`]; `auto` falling back to
    /// AF_PACKET sends without.
    pub input_queue: Option<u64>,
    /// The XDP engine carries latency probes and puts its [`xdp::Carrier`] here while it
    /// sends, for the probes' sender to take (the virtual lab's trials with probes).
    pub carrier: Option<xdp::CarrierCell>,
}

impl GenConfig {
    /// A configuration with defaults: rate `max`, no limit, no pinning, engine `auto`.
    pub fn new(iface: IfRef, spec: FrameSpec) -> GenConfig {
        GenConfig {
            iface,
            spec,
            rate: Rate::Max,
            limit: Limit::Forever,
            cpu: None,
            engine: Engine::Auto,
            burst: None,
            follow: false,
            input_queue: None,
            carrier: None,
        }
    }
}

/// One second of a generator run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TxSample {
    /// Seconds since the first packet, at the end of this interval.
    pub t_s: f64,
    /// Packets sent since the start.
    pub tx_pkts: u64,
    /// Packets per second over this interval.
    pub(crate) tx_pps: f64,
}

/// The totals of a finished run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TxSummary {
    /// The engine that sent (never `auto`).
    pub engine: Engine,
    /// Why `auto` did not pick XDP, when it did not.
    pub(crate) fallback: Option<String>,
    /// Packets sent.
    pub tx_pkts: u64,
    /// Seconds from the first to the last packet.
    pub elapsed_s: f64,
    /// Average packets per second.
    pub(crate) tx_pps: f64,
    /// Whether the run stopped before its limit (Ctrl-C, [`Generator::stop`]).
    pub interrupted: bool,
    /// At `max`, how much more than the interface accepted was offered, when the generator
    /// followed it ([`GenConfig::follow`]); `None` when it sent all it could.
    pub follow_margin: Option<f64>,
    /// With [`GenConfig::input_queue`], the frames it held when the traffic stopped: the DUT's
    /// backlog beyond veth's ring.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queued_at_stop: Option<u64>,
    /// With [`GenConfig::input_queue`], the frames the interface refused that were never sent
    /// again: held beyond the queue's ring when the traffic stopped (or beyond its buffer, or
    /// still held when the drain ran out of time). The receiver never sees them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_at_stop: Option<u64>,
}

/// A packet generator: started once, sampled every second, stopped once.
pub trait Generator: Send {
    /// Checks the setup (interface, permissions, engine) and starts sending in the background.
    fn start(&mut self) -> anyhow::Result<()>;
    /// Waits up to `timeout` for the next per-second sample; `None` on timeout or once the run
    /// has ended and every sample was taken (see [`Generator::is_finished`]).
    fn next_sample(&mut self, timeout: Duration) -> Option<TxSample>;
    /// Whether the run has ended (limit reached, stopped, or failed).
    fn is_finished(&self) -> bool;
    /// Stops the run if it is still going, waits for it and returns the totals (or its error).
    fn stop(&mut self) -> anyhow::Result<TxSummary>;
}

/// An interface in a network namespace: `NETNS/IF`, or `IF` for the caller's own namespace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IfRef {
    /// The `ip netns` name, or `None` for the current namespace.
    pub netns: Option<String>,
    /// The interface name.
    pub name: String,
}

impl IfRef {
    /// Parses `NETNS/IF` or `IF`.
    pub fn parse(s: &str) -> Result<IfRef, InputError> {
        let (netns, name) = match s.split_once('/') {
            Some((ns, name)) => (Some(ns), name),
            None => (None, s),
        };
        if name.is_empty()
            || name.len() > 15
            || name.contains(char::is_whitespace)
            || netns == Some("")
        {
            return Err(InputError::new(format!(
                "bad interface '{s}': expected IF or NETNS/IF (interface names have 1-15 characters)"
            )));
        }
        Ok(IfRef {
            netns: netns.map(str::to_owned),
            name: name.to_owned(),
        })
    }
}

impl std::str::FromStr for IfRef {
    type Err = InputError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        IfRef::parse(s)
    }
}

impl std::fmt::Display for IfRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.netns {
            Some(ns) => write!(f, "{ns}/{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// Looks `iface` up through a netlink socket of its namespace; a missing one is an input error.
fn lookup(nl: &mut netlink::Netlink, iface: &IfRef) -> anyhow::Result<netlink::LinkInfo> {
    nl.link_by_name(&iface.name).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            let place = iface
                .netns
                .as_deref()
                .map_or("this namespace".to_owned(), |ns| {
                    format!("namespace '{ns}'")
                });
            InputError::new(format!(
                "no interface '{}' in {place} (see `ip link`)",
                iface.name
            ))
            .into()
        } else {
            anyhow::Error::new(e).context(format!("reading interface {iface}"))
        }
    })
}

/// Opens a routing netlink socket in `iface`'s namespace.
fn netlink_for(iface: &IfRef) -> anyhow::Result<netlink::Netlink> {
    os::in_netns(iface.netns.as_deref(), || Ok(netlink::Netlink::route()?))
}

/// The MAC address of an interface (the default source MAC of the frames).
pub fn interface_mac(iface: &IfRef) -> anyhow::Result<Mac> {
    let info = lookup(&mut netlink_for(iface)?, iface)?;
    let mac: [u8; 6] =
        info.mac.as_slice().try_into().map_err(|_| {
            InputError::new(format!("{iface} has no Ethernet address; give --src-mac"))
        })?;
    Ok(Mac(mac))
}
