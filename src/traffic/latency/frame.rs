//! The probe frame: a UDP frame whose payload starts with a magic, the probe's kind, a sequence
//! number and the send time, stamped in place just before its send syscall.
//!
//! Payload (big-endian, 18 bytes: a 64-byte IPv4 frame holds it exactly):
//!
//! | bytes | field |
//! |---|---|
//! | 0–2 | magic `BLP` ([`MAGIC`](crate::traffic::latency::frame::MAGIC)) |
//! | 3 | kind: `E` established, `F` first packet ([`ProbeKind`](crate::traffic::latency::ProbeKind)) |
//! | 4–7 | sequence number, from 0, one count for both kinds |
//! | 8–15 | in-frame stamp: ns since the epoch (`CLOCK_REALTIME`, the clock of the kernel's stamps) |
//! | 16–17 | checksum balance: keeps the UDP checksum of the frame's ports right |
//!
//! An established probe is the spec's first flow; a first-packet probe takes the next pair of
//! ports of [`FreshPorts`](crate::traffic::latency::frame::FreshPorts), a 5-tuple the stream never used and the load does not use.
//!
//! Why the balance word: stamping must cost nothing between the clock read and the syscall.
//! The frame's UDP checksum is computed for its ports with the payload zero (the load's
//! [`FlowLayout`](crate::traffic::packet::FlowLayout)); each stamp then sets the balance to the one's-complement negative of the
//! other 16 bytes' sum, so the payload adds nothing to the sum, whatever it holds (RFC 1071: 0
//! and 0xffff are both zero), and the checksum stays right.

use std::ops::RangeInclusive;
use std::time::{SystemTime, UNIX_EPOCH};

use super::ProbeKind;
use crate::traffic::packet::{internet_checksum, Family, FlowLayout, FlowPos, FrameSpec, FCS_LEN};

/// The probes' magic, the first three bytes of their UDP payload: "BLP".
pub(crate) const MAGIC: [u8; 3] = *b"BLP";
/// Bytes of the probe payload.
pub(crate) const PAYLOAD_LEN: usize = 18;

/// The byte that carries `kind`.
fn kind_byte(kind: ProbeKind) -> u8 {
    match kind {
        ProbeKind::Established => b'E',
        ProbeKind::FirstPacket => b'F',
    }
}

/// What a probe frame carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Probe {
    /// Established or first packet.
    pub(crate) kind: ProbeKind,
    /// Sequence number.
    pub(crate) seq: u32,
    /// In-frame stamp, ns since the epoch.
    pub(crate) stamp_ns: u64,
}

/// A probe frame ready to be stamped and sent again and again.
#[derive(Debug, Clone)]
pub(crate) struct ProbeFrame {
    bytes: Vec<u8>,
    payload: usize,
    layout: FlowLayout,
}

impl ProbeFrame {
    /// The frame of `spec`'s first flow, at `spec`'s size or the smallest that holds the
    /// payload (84 bytes for IPv6), an established probe with its stamped fields zero.
    pub(crate) fn new(spec: &FrameSpec) -> ProbeFrame {
        let family = spec.family();
        let mut spec = spec.clone();
        spec.frame_size = spec.frame_size.max(min_frame(family));
        let layout = FlowLayout::new(&spec);
        let mut frame = ProbeFrame {
            bytes: layout.template.clone(),
            payload: family.header_len(),
            layout,
        };
        frame.set_ports(frame.layout.src_first.0, frame.layout.dst_first.0);
        frame.stamp(Probe {
            kind: ProbeKind::Established,
            seq: 0,
            stamp_ns: 0,
        });
        frame
    }

    /// Aims the frame at another pair of ports, its UDP checksum computed for them; the payload
    /// is zero until the next [`Self::stamp`]. A copy of the frame and a few sums: done before
    /// the wait for the send time, never between the stamp and the syscall.
    pub(crate) fn set_ports(&mut self, sport: u16, dport: u16) {
        // The layout writes the first port plus an index, wrapping: any port is an index.
        let pos = FlowPos {
            src_port: u32::from(sport.wrapping_sub(self.layout.src_first.0)),
            dst_port: u32::from(dport.wrapping_sub(self.layout.dst_first.0)),
            ..FlowPos::default()
        };
        self.layout.write(&mut self.bytes, pos);
    }

    /// Writes `probe` into the frame and rebalances the checksum: a few stores, no pass over
    /// the frame.
    pub(crate) fn stamp(&mut self, probe: Probe) {
        let p = self.payload;
        self.bytes[p..p + 3].copy_from_slice(&MAGIC);
        self.bytes[p + 3] = kind_byte(probe.kind);
        self.bytes[p + 4..p + 8].copy_from_slice(&probe.seq.to_be_bytes());
        self.bytes[p + 8..p + 16].copy_from_slice(&probe.stamp_ns.to_be_bytes());
        // The balance word cancels what the first 16 bytes add to the UDP sum: their checksum.
        let balance = internet_checksum(&self.bytes[p..p + 16]);
        self.bytes[p + 16..p + 18].copy_from_slice(&balance.to_be_bytes());
    }

    /// The frame as sent (FCS excluded).
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// The smallest frame size (FCS included) that holds a probe of `family`.
pub(crate) fn min_frame(family: Family) -> usize {
    family
        .min_frame()
        .max(family.header_len() + PAYLOAD_LEN + FCS_LEN)
}

/// The lowest port first-packet probes take: above the well-known ones.
const FRESH_PORT_MIN: u16 = 1024;

/// The ports of the first-packet probes, in order: the source port over 1024..=65535, then again
/// with the next destination port (from the spec's first one): each pair once (64,512² of them,
/// ten times the first-packet probes of 2³² sequence numbers) and never a flow of the load,
/// whose first flow the established probes take. With the spec's first addresses, each is a
/// 5-tuple the DUT has seen neither from the probes nor from the load.
#[derive(Debug, Clone)]
pub(crate) struct FreshPorts {
    next: (u16, u16),
    /// The load's source and destination ports: with the first addresses, its flows.
    load: (RangeInclusive<u16>, RangeInclusive<u16>),
}

impl FreshPorts {
    /// The pairs for probes of `spec`; `None` when the load's flows take every one (its ports
    /// span 1024..=65535 on both sides).
    pub(crate) fn new(spec: &FrameSpec) -> Option<FreshPorts> {
        let load = (
            spec.src.port0..=spec.src.port1,
            spec.dst.port0..=spec.dst.port1,
        );
        let all = |r: &RangeInclusive<u16>| r.contains(&FRESH_PORT_MIN) && r.contains(&u16::MAX);
        if all(&load.0) && all(&load.1) {
            return None;
        }
        Some(FreshPorts {
            next: (FRESH_PORT_MIN, spec.dst.port0),
            load,
        })
    }

    /// The next pair: (source port, destination port).
    pub(crate) fn next(&mut self) -> (u16, u16) {
        loop {
            let (sport, dport) = self.next;
            let taken = self.load.0.contains(&sport) && self.load.1.contains(&dport);
            // A pair of the load's skips all its source ports at once: one step, not thousands.
            let from = if taken { *self.load.0.end() } else { sport };
            let sport_next = step(from);
            let dport_next = if sport_next == FRESH_PORT_MIN {
                step(dport)
            } else {
                dport
            };
            self.next = (sport_next, dport_next);
            if !taken {
                return (sport, dport);
            }
        }
    }
}

/// The port after `port` in 1024..=65535, wrapping.
fn step(port: u16) -> u16 {
    match port.checked_add(1) {
        Some(p) => p.max(FRESH_PORT_MIN),
        None => FRESH_PORT_MIN,
    }
}

/// The probe in `frame` (Ethernet first, as a packet socket reads it), or `None` when it is
/// not one (another family, IP options, another protocol, too short, no magic, an unknown kind).
pub(crate) fn decode(frame: &[u8]) -> Option<Probe> {
    let ethertype = u16::from_be_bytes([*frame.get(12)?, *frame.get(13)?]);
    match ethertype {
        0x0800 => decode_ipv4(frame.get(14..)?),
        // Past the Ethernet (14 bytes) and IPv6 (40) headers, when the next header is UDP.
        0x86dd if *frame.get(20)? == 17 => decode_udp(frame.get(54..)?),
        _ => None,
    }
}

/// The probe in an IPv4 packet (its header first, as an IPv4 raw socket reads it), as
/// [`decode`].
pub(crate) fn decode_ipv4(packet: &[u8]) -> Option<Probe> {
    if *packet.first()? != 0x45 || *packet.get(9)? != 17 {
        return None;
    }
    decode_udp(packet.get(20..)?)
}

/// The probe in a UDP datagram (its header first, as an IPv6 raw socket reads it), as
/// [`decode`].
pub(crate) fn decode_udp(datagram: &[u8]) -> Option<Probe> {
    decode_payload(datagram.get(8..8 + PAYLOAD_LEN)?)
}

/// The probe in a payload's first 16 bytes (magic, kind, sequence number, stamp), as
/// [`decode`]: all the DUT's egress log keeps of it.
pub(crate) fn decode_payload(p: &[u8]) -> Option<Probe> {
    let p = p.get(..16)?;
    if p[..3] != MAGIC {
        return None;
    }
    let kind = ProbeKind::ALL.into_iter().find(|&k| kind_byte(k) == p[3])?;
    Some(Probe {
        kind,
        seq: u32::from_be_bytes([p[4], p[5], p[6], p[7]]),
        stamp_ns: u64::from_be_bytes([p[8], p[9], p[10], p[11], p[12], p[13], p[14], p[15]]),
    })
}

/// Now on `CLOCK_REALTIME`, in ns since the epoch: the clock of the kernel's software
/// timestamps (`skb->tstamp`), read through the vDSO.
pub(crate) fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::packet::build_frame;
    use crate::traffic::packet::tests::spec;

    /// The UDP checksum of `frame` computed from scratch (it verifies to 0 when right).
    fn udp_verifies(frame: &[u8]) -> bool {
        let (l4, mut pseudo) = if frame[12..14] == [0x08, 0x00] {
            (34, [&frame[26..34], &[0, 17]].concat())
        } else {
            (54, [&frame[22..54], &[0, 0, 0, 17]].concat())
        };
        let udp_len = (frame.len() - l4) as u16;
        if l4 == 34 {
            pseudo.extend_from_slice(&udp_len.to_be_bytes());
        } else {
            pseudo.splice(32..32, (u32::from(udp_len)).to_be_bytes());
        }
        let mut all = pseudo;
        all.extend_from_slice(&frame[l4..]);
        if all.len() % 2 == 1 {
            all.push(0);
        }
        internet_checksum(&all) == 0
    }

    /// The frame's UDP ports.
    fn ports(frame: &[u8]) -> (u16, u16) {
        let l4 = if frame[12..14] == [0x08, 0x00] {
            34
        } else {
            54
        };
        (
            u16::from_be_bytes([frame[l4], frame[l4 + 1]]),
            u16::from_be_bytes([frame[l4 + 2], frame[l4 + 3]]),
        )
    }

    #[test]
    fn probes_of_both_kinds_round_trip_with_valid_checksums() {
        let cases = [
            spec("198.18.0.1:2000", "198.19.0.1:2000", 64),
            spec("198.18.0.1:2000", "198.19.0.1:2000", 1518),
            spec("[2001:2::1]:2000", "[2001:2:0:1::1]:2000", 66),
            spec("[2001:2::1]:2000", "[2001:2:0:1::1]:2000", 333),
        ];
        for s in cases {
            let mut f = ProbeFrame::new(&s);
            assert!(f.bytes().len() + FCS_LEN >= min_frame(s.family()));
            assert_eq!(
                decode(f.bytes()),
                Some(Probe {
                    kind: ProbeKind::Established,
                    seq: 0,
                    stamp_ns: 0
                })
            );
            assert!(udp_verifies(f.bytes()));
            assert_eq!(ports(f.bytes()), (2000, 2000));
            // Established on the first flow, then first packets on other ports, then back.
            for (kind, (sport, dport), seq, stamp_ns) in [
                (ProbeKind::Established, (2000, 2000), 1, 1),
                (
                    ProbeKind::FirstPacket,
                    (1024, 2000),
                    9,
                    1_770_000_000_123_456_789,
                ),
                (ProbeKind::FirstPacket, (65535, 1), 19, u64::MAX),
                (ProbeKind::FirstPacket, (1999, 65535), u32::MAX, 0),
                (
                    ProbeKind::Established,
                    (2000, 2000),
                    77,
                    1_770_000_000_000_000_000,
                ),
            ] {
                f.set_ports(sport, dport);
                let probe = Probe {
                    kind,
                    seq,
                    stamp_ns,
                };
                f.stamp(probe);
                assert_eq!(decode(f.bytes()), Some(probe));
                assert_eq!(ports(f.bytes()), (sport, dport));
                assert!(udp_verifies(f.bytes()), "{probe:?} {sport} {dport}");
            }
        }
        assert_eq!(min_frame(Family::Inet4), 64);
        assert_eq!(min_frame(Family::Inet6), 84);
    }

    #[test]
    fn raw_sockets_read_the_same_probes_without_the_headers_they_strip() {
        let probe = Probe {
            kind: ProbeKind::FirstPacket,
            seq: 7,
            stamp_ns: 1_770_000_000_123_456_789,
        };
        // An IPv4 raw socket reads from the IP header, an IPv6 one from the UDP header.
        for (s, strip) in [
            (spec("198.18.0.1:2000", "198.19.0.2:2000", 64), 14),
            (spec("[2001:2::1]:2000", "[2001:2:0:8000::2]:2000", 84), 54),
        ] {
            let mut f = ProbeFrame::new(&s);
            f.stamp(probe);
            let read = &f.bytes()[strip..];
            let got = match s.family() {
                Family::Inet4 => decode_ipv4(read),
                Family::Inet6 => decode_udp(read),
            };
            assert_eq!(got, Some(probe));
            assert_eq!(got, decode(f.bytes()));
        }
        let s = spec("198.18.0.1:2000", "198.19.0.2:2000", 64);
        let f = ProbeFrame::new(&s);
        let mut options = f.bytes()[14..].to_vec();
        options[0] = 0x46;
        assert_eq!(decode_ipv4(&options), None);
        assert_eq!(
            decode_ipv4(&build_frame(&s, FlowPos::default())[14..]),
            None
        );
        assert_eq!(decode_udp(&f.bytes()[34..40]), None);
    }

    #[test]
    fn other_frames_are_not_probes() {
        let s = spec("198.18.0.1:2000", "198.19.0.1:2000", 64);
        assert_eq!(decode(&build_frame(&s, FlowPos::default())), None);
        let f = ProbeFrame::new(&s);
        assert_eq!(decode(&f.bytes()[..50]), None);
        let mut tcp = f.bytes().to_vec();
        tcp[23] = 6;
        assert_eq!(decode(&tcp), None);
        let mut unknown_kind = f.bytes().to_vec();
        unknown_kind[45] = b'X';
        assert_eq!(decode(&unknown_kind), None);
        assert_eq!(decode(&[]), None);
    }

    #[test]
    fn fresh_ports_are_new_and_never_the_loads() {
        // The load: source ports 1030-1040 to 5000-5001; the established probes' flow is 1030 → 5000.
        let s = spec(
            "198.18.0.1:1030-198.18.0.1:1040",
            "198.19.0.1:5000-198.19.0.1:5001",
            64,
        );
        let mut fresh = FreshPorts::new(&s).unwrap();
        let first: Vec<(u16, u16)> = (0..8).map(|_| fresh.next()).collect();
        assert_eq!(
            first,
            [1024, 1025, 1026, 1027, 1028, 1029, 1041, 1042].map(|p| (p, 5000))
        );
        // The source port wraps into the next destination port, where the load's ports are
        // skipped again, and the one after that, which the load does not use.
        let mut seen: std::collections::HashSet<_> = first.into_iter().collect();
        let mut last = (0, 0);
        for _ in 0..3 * 64_512 {
            last = fresh.next();
            assert!(seen.insert(last), "{last:?} twice");
            let (sport, dport) = last;
            assert!(sport >= FRESH_PORT_MIN);
            assert!(!((1030..=1040).contains(&sport) && (5000..=5001).contains(&dport)));
        }
        assert_eq!(last.1, 5003);
        assert!(seen.contains(&(1035, 5002)));
        assert!(!seen.contains(&(1035, 5001)));
    }

    #[test]
    fn fresh_ports_start_from_a_low_destination_port_and_wrap_above_1023() {
        let s = spec("198.18.0.1:53", "198.19.0.1:53", 64);
        let mut fresh = FreshPorts::new(&s).unwrap();
        assert_eq!(fresh.next(), (1024, 53));
        let mut last = (0, 0);
        for _ in 0..64_512 {
            last = fresh.next();
        }
        assert_eq!(last, (1024, 1024));
    }

    #[test]
    fn a_load_on_every_port_leaves_no_fresh_pair_unless_one_side_is_free() {
        let all = spec(
            "198.18.0.1:1-198.18.0.1:65535",
            "198.19.0.1:1024-198.19.0.1:65535",
            64,
        );
        assert!(FreshPorts::new(&all).is_none());
        // Every source port, not every destination port: the next free destination port.
        let most = spec(
            "198.18.0.1:1-198.18.0.1:65535",
            "198.19.0.1:1024-198.19.0.1:65534",
            64,
        );
        assert_eq!(FreshPorts::new(&most).unwrap().next(), (1024, 65535));
    }
}
