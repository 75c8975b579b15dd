//! The lab's addresses, from the benchmarking ranges as in the seeds' labs: the sender side in
//! 198.18.0.0/16 and 2001:2::/49, the receiver side in 198.19.0.0/16 and 2001:2:0:8000::/49.
//!
//! | what | IPv4 | IPv6 |
//! |---|---|---|
//! | link to sender k: DUT, sender | 198.18.(k-1).1, .2 /24 | 2001:2:0:(k-1)::1, ::2 /64 |
//! | sender k's source flows | 198.18.(9+k).0/24 | 2001:2:0:(0x10+k-1)::/64 |
//! | link to the receiver: DUT, receiver | 198.19.0.1, .2 /24 | 2001:2:0:8000::1, ::2 /64 |
//! | the probes' link: DUT, receiver | 198.19.1.1, .2 /24 | 2001:2:0:8001::1, ::2 /64 |
//! | destination flows | 198.19.10.0/24 | 2001:2:0:8010::/64 |
//! | the sink next hop | 198.19.0.3 | 2001:2:0:8000::3 |
//!
//! The DUT has the seeds' two static routes (198.18.0.0/16 to the sender, 198.19.0.0/16 to the
//! receiver side; 2001:2::/49 and 2001:2:0:8000::/49) plus one per extra sender, and every
//! neighbour is static, so no ARP or NDP happens during a trial. The receiver-side route points
//! at the *sink*, an address whose MAC no interface owns: the receiver's interface counts each
//! frame and its kernel drops it first thing in `ip_rcv` as `PACKET_OTHERHOST` — measured
//! cheaper than an nftables netdev ingress drop (+2-3 %) and far cheaper than letting the IP
//! stack refuse it (+45 %), while the receiver's own address still answers for by-hand checks.
//! The latency probes come in by the load's ingress (from its first source, on its ports) and
//! leave by a link of their own, to the receiver's address on it: the DUT takes them from the
//! load's input queue, on its CPU, through the same hooks and rules, by a route of the same
//! table (the probes' link's own, where the load takes the receiver side's via the sink) to a
//! static neighbour, and the receiver delivers them to a socket of theirs (`traffic::latency`),
//! which no frame of the load reaches. Their own way out is what lets the DUT stamp them as they
//! leave at no cost to the load: a program on the load's egress ran for every frame of it and
//! cost the DUT 6–7 % of its rate (docs/latency.md). veth has no transmit queue, so the way
//! out adds no wait of its own. The receiver's namespace sends no ICMP error
//! (`lab::virt::RECEIVER_SYSCTLS`).
//! MACs are fixed (locally administered, `02:62:6c` = "bl") so facts never depend on chance.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::topology::{Role, Topology};

/// An address with a prefix length (`198.18.0.0/16`, `2001:2::1/64`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Net {
    /// The address.
    pub addr: IpAddr,
    /// The prefix length.
    pub(crate) len: u8,
}

impl Net {
    fn v4(a: [u8; 4], len: u8) -> Self {
        Self {
            addr: IpAddr::V4(Ipv4Addr::from(a)),
            len,
        }
    }

    fn v6(a: [u16; 8], len: u8) -> Self {
        Self {
            addr: IpAddr::V6(Ipv6Addr::from(a)),
            len,
        }
    }
}

impl fmt::Display for Net {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

impl FromStr for Net {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("{s:?} is not an address/prefix");
        let (addr, len) = s.split_once('/').ok_or_else(bad)?;
        let addr: IpAddr = addr.parse().map_err(|_| bad())?;
        let len: u8 = len.parse().map_err(|_| bad())?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        if len > max {
            return Err(bad());
        }
        Ok(Self { addr, len })
    }
}

impl Serialize for Net {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Net {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

pub(crate) use crate::traffic::packet::Mac;

// Facts carry MACs as text, as `ip` prints them.
impl Serialize for Mac {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Mac {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

const fn mac(node: u8, port: u8) -> Mac {
    Mac([0x02, 0x62, 0x6c, node, port, 0x00])
}

/// Sender k's interface MAC.
pub(crate) const fn sender_mac(k: u8) -> Mac {
    mac(0x01, k)
}

/// The MAC of the DUT's interface facing sender k: the destination of sender k's frames.
pub(crate) const fn dut_in_mac(k: u8) -> Mac {
    mac(0x02, k)
}

/// The MAC of the DUT's interface facing the receiver.
pub(crate) const DUT_OUT_MAC: Mac = mac(0x02, 0x80);
/// The receiver's interface MAC.
pub(crate) const RECEIVER_MAC: Mac = mac(0x03, 0x80);
/// The sink's MAC, owned by no interface: frames sent to it are counted, then dropped early.
pub(crate) const SINK_MAC: Mac = mac(0x03, 0xff);
/// The MAC of the DUT's interface on the probes' link.
pub(crate) const DUT_PROBE_MAC: Mac = mac(0x02, 0x81);
/// The MAC of the receiver's interface on the probes' link.
pub(crate) const RECEIVER_PROBE_MAC: Mac = mac(0x03, 0x81);

/// The addresses of sender k's side of the lab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SenderSide {
    /// The DUT's address on the link (IPv4, /24): the sender's gateway.
    pub(crate) dut4: Net,
    /// The sender's address on the link (IPv4, /24).
    pub(crate) sender4: Net,
    /// The DUT's address on the link (IPv6, /64).
    pub(crate) dut6: Net,
    /// The sender's address on the link (IPv6, /64).
    pub(crate) sender6: Net,
    /// The network the sender's flows come from (IPv4), routed back to it by the DUT.
    pub(crate) source4: Net,
    /// The network the sender's flows come from (IPv6).
    pub(crate) source6: Net,
}

/// The addresses of sender k's side (k from 1).
pub(crate) fn sender_side(k: u8) -> SenderSide {
    let link = k - 1;
    let subnet = 0x10 + u16::from(k) - 1;
    SenderSide {
        dut4: Net::v4([198, 18, link, 1], 24),
        sender4: Net::v4([198, 18, link, 2], 24),
        dut6: Net::v6([0x2001, 2, 0, link.into(), 0, 0, 0, 1], 64),
        sender6: Net::v6([0x2001, 2, 0, link.into(), 0, 0, 0, 2], 64),
        source4: Net::v4([198, 18, 9 + k, 0], 24),
        source6: Net::v6([0x2001, 2, 0, subnet, 0, 0, 0, 0], 64),
    }
}

/// The addresses of the receiver's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReceiverSide {
    /// The DUT's address on the link (IPv4, /24).
    pub(crate) dut4: Net,
    /// The receiver's address (IPv4, /24).
    pub(crate) receiver4: Net,
    /// The sink next hop (IPv4).
    pub(crate) sink4: IpAddr,
    /// The DUT's address on the link (IPv6, /64).
    pub(crate) dut6: Net,
    /// The receiver's address (IPv6, /64).
    pub(crate) receiver6: Net,
    /// The sink next hop (IPv6).
    pub(crate) sink6: IpAddr,
    /// The network the flows go to (IPv4).
    pub(crate) destination4: Net,
    /// The network the flows go to (IPv6).
    pub(crate) destination6: Net,
}

/// The addresses of the receiver's side.
pub(crate) fn receiver_side() -> ReceiverSide {
    ReceiverSide {
        dut4: Net::v4([198, 19, 0, 1], 24),
        receiver4: Net::v4([198, 19, 0, 2], 24),
        sink4: IpAddr::V4(Ipv4Addr::new(198, 19, 0, 3)),
        dut6: Net::v6([0x2001, 2, 0, 0x8000, 0, 0, 0, 1], 64),
        receiver6: Net::v6([0x2001, 2, 0, 0x8000, 0, 0, 0, 2], 64),
        sink6: IpAddr::V6(Ipv6Addr::new(0x2001, 2, 0, 0x8000, 0, 0, 0, 3)),
        destination4: Net::v4([198, 19, 10, 0], 24),
        destination6: Net::v6([0x2001, 2, 0, 0x8010, 0, 0, 0, 0], 64),
    }
}

/// The addresses of the probes' link, DUT to receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProbeSide {
    /// The DUT's address on the link (IPv4, /24).
    pub(crate) dut4: Net,
    /// The receiver's address on it (IPv4, /24): the probes' destination.
    pub(crate) receiver4: Net,
    /// The DUT's address on the link (IPv6, /64).
    pub(crate) dut6: Net,
    /// The receiver's address on it (IPv6, /64).
    pub(crate) receiver6: Net,
}

/// The addresses of the probes' link: inside the receiver side's aggregate, whose route (to
/// the sink) their connected prefixes override.
pub(crate) fn probe_side() -> ProbeSide {
    ProbeSide {
        dut4: Net::v4([198, 19, 1, 1], 24),
        receiver4: Net::v4([198, 19, 1, 2], 24),
        dut6: Net::v6([0x2001, 2, 0, 0x8001, 0, 0, 0, 1], 64),
        receiver6: Net::v6([0x2001, 2, 0, 0x8001, 0, 0, 0, 2], 64),
    }
}

/// One end of a veth pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Port {
    /// Its namespace.
    pub(crate) ns: String,
    /// Its interface name.
    pub(crate) name: String,
    /// Its MAC.
    pub(crate) mac: Mac,
    /// Its addresses.
    pub(crate) addrs: Vec<Net>,
}

/// A static route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Route {
    /// Destination network.
    pub(crate) dst: Net,
    /// Next hop.
    pub(crate) via: IpAddr,
    /// Outgoing interface.
    pub(crate) dev: String,
}

/// A static neighbour entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Neighbour {
    /// The neighbour's address.
    pub(crate) addr: IpAddr,
    /// Its MAC.
    pub(crate) mac: Mac,
    /// The interface it is reached through.
    pub(crate) dev: String,
}

/// Everything the lab configures, per link and per namespace.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Plan {
    /// veth pairs.
    pub(crate) links: Vec<(Port, Port)>,
    /// Routes per namespace.
    pub(crate) routes: Vec<(String, Route)>,
    /// Neighbour entries per namespace.
    pub(crate) neighbours: Vec<(String, Neighbour)>,
}

impl Plan {
    fn route(&mut self, ns: &str, dst: Net, via: Net, dev: &str) {
        self.routes.push((
            ns.to_string(),
            Route {
                dst,
                via: via.addr,
                dev: dev.to_string(),
            },
        ));
    }

    fn neighbour(&mut self, ns: &str, addr: IpAddr, mac: Mac, dev: &str) {
        self.neighbours.push((
            ns.to_string(),
            Neighbour {
                addr,
                mac,
                dev: dev.to_string(),
            },
        ));
    }

    /// The ports living in namespace `ns`.
    pub(crate) fn ports_in<'a>(&'a self, ns: &'a str) -> impl Iterator<Item = &'a Port> + 'a {
        self.links
            .iter()
            .flat_map(|(a, b)| [a, b])
            .filter(move |p| p.ns == ns)
    }
}

/// The seeds' aggregate networks: the whole sender side and the whole receiver side.
struct Aggregates {
    sender4: Net,
    sender6: Net,
    receiver4: Net,
    receiver6: Net,
}

fn aggregates() -> Aggregates {
    Aggregates {
        sender4: Net::v4([198, 18, 0, 0], 16),
        sender6: Net::v6([0x2001, 2, 0, 0, 0, 0, 0, 0], 49),
        receiver4: Net::v4([198, 19, 0, 0], 16),
        receiver6: Net::v6([0x2001, 2, 0, 0x8000, 0, 0, 0, 0], 49),
    }
}

/// The whole addressing plan of a topology.
pub fn plan(t: &Topology) -> Plan {
    let mut plan = Plan::default();
    for k in 1..=t.senders {
        plan_sender(&mut plan, t, k);
    }
    plan_receiver(&mut plan, t);
    plan_probes(&mut plan, t);
    plan
}

/// Sender `k`'s link to the DUT, and the routes and neighbours at both its ends.
fn plan_sender(plan: &mut Plan, t: &Topology, k: u8) {
    let agg = aggregates();
    let dut = t.namespace(Role::Dut);
    let s = sender_side(k);
    let ns = t.namespace(Role::Sender(k));
    let (sif, dif) = (t.sender_if(k), t.dut_in_if(k));
    plan.links.push((
        Port {
            ns: ns.clone(),
            name: sif.clone(),
            mac: sender_mac(k),
            addrs: vec![s.sender4, s.sender6],
        },
        Port {
            ns: dut.clone(),
            name: dif.clone(),
            mac: dut_in_mac(k),
            addrs: vec![s.dut4, s.dut6],
        },
    ));
    // The seeds' two routes send the whole sender side to sender 1; later senders add
    // their own source networks.
    let (back4, back6) = if k == 1 {
        (agg.sender4, agg.sender6)
    } else {
        (s.source4, s.source6)
    };
    plan.route(&dut, back4, s.sender4, &dif);
    plan.route(&dut, back6, s.sender6, &dif);
    plan.neighbour(&dut, s.sender4.addr, sender_mac(k), &dif);
    plan.neighbour(&dut, s.sender6.addr, sender_mac(k), &dif);
    plan.route(&ns, agg.receiver4, s.dut4, &sif);
    plan.route(&ns, agg.receiver6, s.dut6, &sif);
    plan.neighbour(&ns, s.dut4.addr, dut_in_mac(k), &sif);
    plan.neighbour(&ns, s.dut6.addr, dut_in_mac(k), &sif);
}

/// The receiver's link to the DUT, the DUT's routes to the sink, and the receiver's way back.
fn plan_receiver(plan: &mut Plan, t: &Topology) {
    let agg = aggregates();
    let dut = t.namespace(Role::Dut);
    let rx = receiver_side();
    let rns = t.namespace(Role::Receiver);
    let (oif, rif) = (t.dut_out_if(), t.receiver_if());
    plan.links.push((
        Port {
            ns: dut.clone(),
            name: oif.clone(),
            mac: DUT_OUT_MAC,
            addrs: vec![rx.dut4, rx.dut6],
        },
        Port {
            ns: rns.clone(),
            name: rif.clone(),
            mac: RECEIVER_MAC,
            addrs: vec![rx.receiver4, rx.receiver6],
        },
    ));
    let sink4 = Net {
        addr: rx.sink4,
        len: 32,
    };
    let sink6 = Net {
        addr: rx.sink6,
        len: 128,
    };
    plan.route(&dut, agg.receiver4, sink4, &oif);
    plan.route(&dut, agg.receiver6, sink6, &oif);
    plan.neighbour(&dut, rx.receiver4.addr, RECEIVER_MAC, &oif);
    plan.neighbour(&dut, rx.receiver6.addr, RECEIVER_MAC, &oif);
    plan.neighbour(&dut, rx.sink4, SINK_MAC, &oif);
    plan.neighbour(&dut, rx.sink6, SINK_MAC, &oif);
    plan.route(&rns, agg.sender4, rx.dut4, &rif);
    plan.route(&rns, agg.sender6, rx.dut6, &rif);
    plan.neighbour(&rns, rx.dut4.addr, DUT_OUT_MAC, &rif);
    plan.neighbour(&rns, rx.dut6.addr, DUT_OUT_MAC, &rif);
}

/// The probes' link from the DUT to the receiver and the DUT's static neighbour on it. The
/// receiver needs no route back: nothing answers a probe.
fn plan_probes(plan: &mut Plan, t: &Topology) {
    let dut = t.namespace(Role::Dut);
    let p = probe_side();
    let oif = t.dut_probe_if();
    plan.links.push((
        Port {
            ns: dut.clone(),
            name: oif.clone(),
            mac: DUT_PROBE_MAC,
            addrs: vec![p.dut4, p.dut6],
        },
        Port {
            ns: t.namespace(Role::Receiver),
            name: t.receiver_probe_if(),
            mac: RECEIVER_PROBE_MAC,
            addrs: vec![p.receiver4, p.receiver6],
        },
    ));
    plan.neighbour(&dut, p.receiver4.addr, RECEIVER_PROBE_MAC, &oif);
    plan.neighbour(&dut, p.receiver6.addr, RECEIVER_PROBE_MAC, &oif);
}

#[cfg(test)]
mod tests;
