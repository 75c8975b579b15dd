//! Test frames as pure functions: Ethernet + IPv4/IPv6 + UDP, flow ranges and their order.
//!
//! Frame sizes follow RFC 2544: the size includes the 4-byte FCS that the NIC appends, so a
//! 64-byte frame is a 60-byte buffer handed to the driver (netmap pkt-gen's `-l 60`). IPv6/UDP
//! needs 62 bytes of headers, so its smallest frame is 66 (pkt-gen's `-l 62`). The UDP payload is
//! zeros and fills the frame (no Ethernet padding), as pkt-gen does.
//!
//! Flows are written as pkt-gen writes them: `START[:PORT0][-END[:PORT1]]`, IPv6 addresses in
//! brackets (`[2001:2:0:10::1]-[2001:2:0:10::14]`); a missing port is pkt-gen's 1234, a missing
//! end port repeats the start port. One side holds addresses × ports endpoints; the flows are
//! every (source, destination) pair. Packets walk them as pkt-gen's address update does, as an
//! odometer: the source port turns fastest, then the source address, then the destination port,
//! then the destination address; after the last flow the walk starts again at the first.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use crate::error::InputError;

/// Bytes of the Ethernet FCS counted in an RFC 2544 frame size but not in the buffer we send.
pub(crate) const FCS_LEN: usize = 4;
/// Smallest frame size accepted (RFC 2544), FCS included.
pub(crate) const MIN_FRAME: usize = 64;
/// Largest untagged Ethernet frame (RFC 2544), FCS included.
pub(crate) const MAX_FRAME: usize = 1518;
/// The port pkt-gen uses when a range names none.
pub(crate) const DEFAULT_PORT: u16 = 1234;
/// Most addresses one side of a range may hold (the fast path keeps indexes in 32 bits).
pub(crate) const MAX_ADDRESSES: u64 = 1 << 24;

const ETH_LEN: usize = 14;
const IPV4_LEN: usize = 20;
const IPV6_LEN: usize = 40;
const UDP_LEN: usize = 8;
const TTL: u8 = 64;
const IPPROTO_UDP: u8 = 17;

/// Address family of a traffic profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// IPv4 (`inet4` in campaigns).
    Inet4,
    /// IPv6 (`inet6` in campaigns).
    Inet6,
}

impl Family {
    /// Bytes of Ethernet + IP + UDP headers.
    pub(crate) fn header_len(self) -> usize {
        ETH_LEN
            + UDP_LEN
            + match self {
                Family::Inet4 => IPV4_LEN,
                Family::Inet6 => IPV6_LEN,
            }
    }

    /// Smallest frame size (FCS included) that holds the headers.
    pub fn min_frame(self) -> usize {
        MIN_FRAME.max(self.header_len() + FCS_LEN)
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Family::Inet4 => "inet4",
            Family::Inet6 => "inet6",
        })
    }
}

/// An Ethernet MAC address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mac(pub [u8; 6]);

impl FromStr for Mac {
    type Err = InputError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || {
            InputError::new(format!(
                "bad MAC address '{s}': expected six hex bytes like 02:00:00:00:00:01"
            ))
        };
        let mut mac = [0u8; 6];
        let mut parts = s.split([':', '-']);
        for byte in &mut mac {
            let part = parts.next().ok_or_else(bad)?;
            if part.is_empty() || part.len() > 2 {
                return Err(bad());
            }
            *byte = u8::from_str_radix(part, 16).map_err(|_| bad())?;
        }
        if parts.next().is_some() {
            return Err(bad());
        }
        Ok(Mac(mac))
    }
}

impl fmt::Display for Mac {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            m[0], m[1], m[2], m[3], m[4], m[5]
        )
    }
}

/// One side of the flows: an inclusive range of addresses and an inclusive range of UDP ports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowRange {
    /// First address.
    pub(crate) start: IpAddr,
    /// Last address (same family as `start`, not below it).
    pub(crate) end: IpAddr,
    /// First UDP port.
    pub(crate) port0: u16,
    /// Last UDP port (not below `port0`).
    pub(crate) port1: u16,
}

impl FlowRange {
    /// The address family of the range.
    pub fn family(&self) -> Family {
        match self.start {
            IpAddr::V4(_) => Family::Inet4,
            IpAddr::V6(_) => Family::Inet6,
        }
    }

    /// Number of addresses in the range.
    pub(crate) fn addresses(&self) -> u32 {
        // Validated at construction: the range fits in the low 32 bits and holds ≤ 2^24 addresses.
        (low32(self.end).wrapping_sub(low32(self.start))) + 1
    }

    /// Number of ports in the range.
    pub(crate) fn ports(&self) -> u32 {
        u32::from(self.port1 - self.port0) + 1
    }

    /// Endpoints on this side: addresses × ports.
    pub(crate) fn endpoints(&self) -> u64 {
        u64::from(self.addresses()) * u64::from(self.ports())
    }

    /// The address at index `i` (0-based, below [`Self::addresses`]).
    pub(crate) fn address(&self, i: u32) -> IpAddr {
        match self.start {
            IpAddr::V4(a) => IpAddr::V4(Ipv4Addr::from(u32::from(a).wrapping_add(i))),
            IpAddr::V6(a) => IpAddr::V6(Ipv6Addr::from(u128::from(a).wrapping_add(u128::from(i)))),
        }
    }

    fn validate(self, text: &str) -> Result<Self, InputError> {
        let bad = |why: &str| InputError::new(format!("bad flow range '{text}': {why}"));
        match (self.start, self.end) {
            (IpAddr::V4(a), IpAddr::V4(b)) if a > b => {
                return Err(bad("the end address is below the start"))
            }
            (IpAddr::V6(a), IpAddr::V6(b)) => {
                if a > b {
                    return Err(bad("the end address is below the start"));
                }
                if u128::from(a) >> 32 != u128::from(b) >> 32 {
                    return Err(bad(
                        "IPv6 start and end must differ only in their last 32 bits",
                    ));
                }
            }
            (IpAddr::V4(_), IpAddr::V4(_)) => {}
            _ => return Err(bad("start and end are of different address families")),
        }
        if self.port0 > self.port1 {
            return Err(bad("the end port is below the start port"));
        }
        if u64::from(low32(self.end) - low32(self.start)) + 1 > MAX_ADDRESSES {
            return Err(bad(&format!("more than {MAX_ADDRESSES} addresses")));
        }
        Ok(self)
    }
}

/// The low 32 bits of an address, where ranges vary.
fn low32(a: IpAddr) -> u32 {
    match a {
        IpAddr::V4(a) => u32::from(a),
        IpAddr::V6(a) => u128::from(a) as u32,
    }
}

/// Splits `ADDR[:PORT]` or `[ADDR6][:PORT]` into the address and the optional port.
fn parse_endpoint(s: &str, text: &str) -> Result<(IpAddr, Option<u16>), InputError> {
    let bad = |why: String| InputError::new(format!("bad flow range '{text}': {why}"));
    let (addr, port) = if let Some(rest) = s.strip_prefix('[') {
        let (addr, after) = rest
            .split_once(']')
            .ok_or_else(|| bad(format!("missing ']' in '{s}'")))?;
        let port = match after {
            "" => None,
            p => Some(
                p.strip_prefix(':')
                    .ok_or_else(|| bad(format!("expected ':PORT' after ']' in '{s}'")))?,
            ),
        };
        (addr, port)
    } else if s.matches(':').count() == 1 {
        let (addr, port) = s.split_once(':').expect("one colon");
        (addr, Some(port))
    } else {
        (s, None)
    };
    let addr = addr
        .parse::<IpAddr>()
        .map_err(|_| bad(format!("'{addr}' is not an IP address")))?;
    let port = port
        .map(|p| {
            p.parse::<u16>()
                .map_err(|_| bad(format!("'{p}' is not a port (0-65535)")))
        })
        .transpose()?;
    Ok((addr, port))
}

impl FromStr for FlowRange {
    type Err = InputError;

    /// Parses pkt-gen's syntax: `START[:PORT0][-END[:PORT1]]`, IPv6 as `[ADDR]`.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let s = text.trim().trim_matches('"');
        if s.is_empty() {
            return Err(InputError::new(
                "bad flow range '': expected START[:PORT][-END[:PORT]]",
            ));
        }
        // '-' never occurs inside an address or a port, so it splits the range unambiguously.
        let (first, last) = match s.split_once('-') {
            Some((a, b)) => (a, Some(b)),
            None => (s, None),
        };
        let (start, port0) = parse_endpoint(first, text)?;
        let (end, port1) = match last {
            Some(last) => parse_endpoint(last, text)?,
            None => (start, None),
        };
        let port0 = port0.unwrap_or(DEFAULT_PORT);
        FlowRange {
            start,
            end,
            port0,
            port1: port1.unwrap_or(port0),
        }
        .validate(text)
    }
}

impl fmt::Display for FlowRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let one = |a: IpAddr, p: u16| match a {
            IpAddr::V4(a) => format!("{a}:{p}"),
            IpAddr::V6(a) => format!("[{a}]:{p}"),
        };
        write!(
            f,
            "{}-{}",
            one(self.start, self.port0),
            one(self.end, self.port1)
        )
    }
}

/// What every frame of a run has in common.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameSpec {
    /// Source MAC (the sending interface's own, usually).
    pub(crate) src_mac: Mac,
    /// Destination MAC (the DUT's ingress interface).
    pub(crate) dst_mac: Mac,
    /// Source addresses and ports.
    pub(crate) src: FlowRange,
    /// Destination addresses and ports.
    pub(crate) dst: FlowRange,
    /// Frame size in bytes, FCS included (RFC 2544): the buffer sent is 4 bytes shorter.
    pub frame_size: usize,
}

impl FrameSpec {
    /// Checks the frame size and that both sides are of one family.
    pub fn new(
        src_mac: Mac,
        dst_mac: Mac,
        src: FlowRange,
        dst: FlowRange,
        frame_size: usize,
    ) -> Result<Self, InputError> {
        if src.family() != dst.family() {
            return Err(InputError::new(format!(
                "source range {src} and destination range {dst} are of different address families"
            )));
        }
        let family = src.family();
        if !(family.min_frame()..=MAX_FRAME).contains(&frame_size) {
            return Err(InputError::new(format!(
                "bad frame size {frame_size}: {family} frames are {}-{MAX_FRAME} bytes (FCS included, as RFC 2544)",
                family.min_frame()
            )));
        }
        Ok(FrameSpec {
            src_mac,
            dst_mac,
            src,
            dst,
            frame_size,
        })
    }

    /// The address family of the frames.
    pub(crate) fn family(&self) -> Family {
        self.src.family()
    }

    /// Length of the buffer handed to the driver: the frame size less the FCS.
    pub(crate) fn wire_len(&self) -> usize {
        self.frame_size - FCS_LEN
    }

    /// Number of distinct flows: source endpoints × destination endpoints (up to 2^80, past
    /// a u64: both sides may hold 2^24 addresses × 2^16 ports).
    pub fn flows(&self) -> u128 {
        u128::from(self.src.endpoints()) * u128::from(self.dst.endpoints())
    }
}

/// A position in the flow walk: indexes of source port and address, destination port and address.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlowPos {
    /// Index of the source port (turns fastest).
    pub(crate) src_port: u32,
    /// Index of the source address.
    pub(crate) src_addr: u32,
    /// Index of the destination port.
    pub(crate) dst_port: u32,
    /// Index of the destination address (turns slowest).
    pub(crate) dst_addr: u32,
}

impl FlowPos {
    /// The next flow in pkt-gen's order, wrapping after the last one.
    pub fn next(self, spec: &FrameSpec) -> FlowPos {
        let mut p = self;
        p.src_port += 1;
        if p.src_port == spec.src.ports() {
            p.src_port = 0;
            p.src_addr += 1;
            if p.src_addr == spec.src.addresses() {
                p.src_addr = 0;
                p.dst_port += 1;
                if p.dst_port == spec.dst.ports() {
                    p.dst_port = 0;
                    p.dst_addr += 1;
                    if p.dst_addr == spec.dst.addresses() {
                        p.dst_addr = 0;
                    }
                }
            }
        }
        p
    }

    /// The addresses and ports of this flow: (source, source port, destination, destination port).
    pub(crate) fn endpoints(self, spec: &FrameSpec) -> (IpAddr, u16, IpAddr, u16) {
        (
            spec.src.address(self.src_addr),
            spec.src.port0 + self.src_port as u16,
            spec.dst.address(self.dst_addr),
            spec.dst.port0 + self.dst_port as u16,
        )
    }
}

/// RFC 1071 Internet checksum of `data` (big-endian 16-bit words), not yet complemented.
fn sum_be(data: &[u8]) -> u32 {
    data.chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)])))
        .sum()
}

/// Folds a one's-complement sum to 16 bits and complements it.
fn finish(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The Internet checksum (RFC 1071) of `data`.
pub(crate) fn internet_checksum(data: &[u8]) -> u16 {
    finish(sum_be(data))
}

/// Builds the whole frame (`wire_len` bytes) of one flow, with checksums computed from scratch.
pub fn build_frame(spec: &FrameSpec, pos: FlowPos) -> Vec<u8> {
    let (src, sport, dst, dport) = pos.endpoints(spec);
    let len = spec.wire_len();
    let mut f = vec![0u8; len];
    f[0..6].copy_from_slice(&spec.dst_mac.0);
    f[6..12].copy_from_slice(&spec.src_mac.0);
    let l3 = ETH_LEN;
    let (l4, pseudo) = match (src, dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
            let ip = &mut f[l3..l3 + IPV4_LEN];
            ip[0] = 0x45;
            ip[2..4].copy_from_slice(&((len - l3) as u16).to_be_bytes());
            ip[6] = 0x40; // DF, as pkt-gen
            ip[8] = TTL;
            ip[9] = IPPROTO_UDP;
            ip[12..16].copy_from_slice(&s.octets());
            ip[16..20].copy_from_slice(&d.octets());
            let csum = internet_checksum(ip);
            ip[10..12].copy_from_slice(&csum.to_be_bytes());
            let l4 = l3 + IPV4_LEN;
            let mut pseudo = Vec::with_capacity(12);
            pseudo.extend_from_slice(&s.octets());
            pseudo.extend_from_slice(&d.octets());
            pseudo.extend_from_slice(&[0, IPPROTO_UDP]);
            pseudo.extend_from_slice(&((len - l4) as u16).to_be_bytes());
            (l4, pseudo)
        }
        (IpAddr::V6(s), IpAddr::V6(d)) => {
            f[12..14].copy_from_slice(&0x86ddu16.to_be_bytes());
            let l4 = l3 + IPV6_LEN;
            let ip = &mut f[l3..l4];
            ip[0] = 0x60;
            ip[4..6].copy_from_slice(&((len - l4) as u16).to_be_bytes());
            ip[6] = IPPROTO_UDP;
            ip[7] = TTL;
            ip[8..24].copy_from_slice(&s.octets());
            ip[24..40].copy_from_slice(&d.octets());
            let mut pseudo = Vec::with_capacity(40);
            pseudo.extend_from_slice(&s.octets());
            pseudo.extend_from_slice(&d.octets());
            pseudo.extend_from_slice(&((len - l4) as u32).to_be_bytes());
            pseudo.extend_from_slice(&[0, 0, 0, IPPROTO_UDP]);
            (l4, pseudo)
        }
        _ => unreachable!("FrameSpec::new checks that both sides share a family"),
    };
    let udp_len = (len - l4) as u16;
    f[l4..l4 + 2].copy_from_slice(&sport.to_be_bytes());
    f[l4 + 2..l4 + 4].copy_from_slice(&dport.to_be_bytes());
    f[l4 + 4..l4 + 6].copy_from_slice(&udp_len.to_be_bytes());
    let csum = match finish(sum_be(&pseudo) + sum_be(&f[l4..])) {
        0 => 0xffff, // RFC 768: a computed zero is sent as all ones
        c => c,
    };
    f[l4 + 6..l4 + 8].copy_from_slice(&csum.to_be_bytes());
    f
}

/// Where the per-flow fields sit in a frame and the checksum sums of everything else.
///
/// Sums are of 16-bit words read in the host's byte order ("native-endian"): RFC 1071's sum is
/// byte-order independent, so adding native words and storing the result natively yields the
/// right bytes on any host. The XDP program computes exactly this in registers; [`Self::write`]
/// does it in Rust for the AF_PACKET path, and the tests check both against [`build_frame`].
#[derive(Debug, Clone)]
pub(crate) struct FlowLayout {
    /// The frame of the first flow with the variable fields and checksums zeroed.
    pub(crate) template: Vec<u8>,
    /// Offset of the source port.
    pub(crate) sport: usize,
    /// Offset of the destination port.
    pub(crate) dport: usize,
    /// Offset of the varying last 4 bytes of the source address.
    pub(crate) saddr: usize,
    /// Offset of the varying last 4 bytes of the destination address.
    pub(crate) daddr: usize,
    /// Offset of the IPv4 header checksum (`None` for IPv6).
    pub(crate) ip_csum: Option<usize>,
    /// Offset of the UDP checksum.
    pub(crate) udp_csum: usize,
    /// Native-word sum of the IPv4 header without addresses (0 for IPv6).
    pub(crate) ip_base: u32,
    /// Native-word sum of the UDP pseudo-header, header and payload without the varying fields.
    pub(crate) udp_base: u32,
    /// First source port and low 32 bits of the first source address (host order).
    pub(crate) src_first: (u16, u32),
    /// First destination port and low 32 bits of the first destination address (host order).
    pub(crate) dst_first: (u16, u32),
    /// Ports and addresses per side: (source ports, source addresses, destination ports, destination addresses).
    pub(crate) counts: [u32; 4],
}

/// Native-word sum (see [`FlowLayout`]).
fn sum_ne(data: &[u8]) -> u32 {
    data.chunks(2)
        .map(|w| u32::from(u16::from_ne_bytes([w[0], *w.get(1).unwrap_or(&0)])))
        .sum()
}

/// Native-word sum of a 32-bit field holding `value` in network order.
fn sum_ne32(value: u32) -> u32 {
    sum_ne(&value.to_be_bytes())
}

impl FlowLayout {
    /// Computes the layout of `spec`'s frames.
    pub(crate) fn new(spec: &FrameSpec) -> FlowLayout {
        let mut template = build_frame(spec, FlowPos::default());
        let (saddr, daddr, ip_csum, l4) = match spec.family() {
            Family::Inet4 => (26, 30, Some(24), ETH_LEN + IPV4_LEN),
            Family::Inet6 => (34, 50, None, ETH_LEN + IPV6_LEN),
        };
        let (sport, dport, udp_csum) = (l4, l4 + 2, l4 + 6);
        for off in [saddr, daddr] {
            template[off..off + 4].fill(0);
        }
        for off in [sport, dport, udp_csum].into_iter().chain(ip_csum) {
            template[off..off + 2].fill(0);
        }
        let ip_base = ip_csum.map_or(0, |_| sum_ne(&template[ETH_LEN..l4]));
        // The pseudo-header: the constant parts of the addresses are still in the template, the
        // varying ones are zero there; then the protocol and the UDP length.
        let udp_len = (spec.wire_len() - l4) as u16;
        let (src_prefix, dst_prefix) = match spec.family() {
            Family::Inet4 => (0..0, 0..0),
            Family::Inet6 => (22..34, 38..50),
        };
        let udp_base = sum_ne(&template[src_prefix])
            + sum_ne(&template[dst_prefix])
            + sum_ne(&[0, IPPROTO_UDP])
            + sum_ne(&udp_len.to_be_bytes())
            + sum_ne(&template[l4..]);
        FlowLayout {
            template,
            sport,
            dport,
            saddr,
            daddr,
            ip_csum,
            udp_csum,
            ip_base,
            udp_base,
            src_first: (spec.src.port0, low32(spec.src.start)),
            dst_first: (spec.dst.port0, low32(spec.dst.start)),
            counts: [
                spec.src.ports(),
                spec.src.addresses(),
                spec.dst.ports(),
                spec.dst.addresses(),
            ],
        }
    }

    /// Writes the frame of flow `pos` into `buf` (`template.len()` bytes): template + fields + checksums.
    pub(crate) fn write(&self, buf: &mut [u8], pos: FlowPos) {
        buf.copy_from_slice(&self.template);
        let sport = self
            .src_first
            .0
            .wrapping_add(pos.src_port as u16)
            .to_be_bytes();
        let dport = self
            .dst_first
            .0
            .wrapping_add(pos.dst_port as u16)
            .to_be_bytes();
        let saddr = self.src_first.1.wrapping_add(pos.src_addr);
        let daddr = self.dst_first.1.wrapping_add(pos.dst_addr);
        buf[self.sport..self.sport + 2].copy_from_slice(&sport);
        buf[self.dport..self.dport + 2].copy_from_slice(&dport);
        buf[self.saddr..self.saddr + 4].copy_from_slice(&saddr.to_be_bytes());
        buf[self.daddr..self.daddr + 4].copy_from_slice(&daddr.to_be_bytes());
        let addrs = sum_ne32(saddr) + sum_ne32(daddr);
        if let Some(off) = self.ip_csum {
            buf[off..off + 2].copy_from_slice(&finish(self.ip_base + addrs).to_ne_bytes());
        }
        let udp = match finish(self.udp_base + addrs + sum_ne(&sport) + sum_ne(&dport)) {
            0 => 0xffff,
            c => c,
        };
        buf[self.udp_csum..self.udp_csum + 2].copy_from_slice(&udp.to_ne_bytes());
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn mac(s: &str) -> Mac {
        s.parse().unwrap()
    }

    /// A frame spec from `src` to `dst` (pkt-gen ranges), `size` bytes, between two fixed MACs.
    pub(crate) fn spec(src: &str, dst: &str, size: usize) -> FrameSpec {
        FrameSpec::new(
            mac("02:00:00:00:00:01"),
            mac("02:00:00:00:00:02"),
            src.parse().unwrap(),
            dst.parse().unwrap(),
            size,
        )
        .unwrap()
    }

    #[test]
    fn ranges_parse_as_pkt_gen_writes_them() {
        let r: FlowRange = "198.18.10.1:2001-198.18.10.20".parse().unwrap();
        assert_eq!(
            (r.addresses(), r.ports(), r.port0, r.port1),
            (20, 1, 2001, 2001)
        );
        let r: FlowRange = "198.18.10.1:2001-198.18.10.20:2010".parse().unwrap();
        assert_eq!((r.addresses(), r.ports(), r.endpoints()), (20, 10, 200));
        let r: FlowRange = "198.19.10.1".parse().unwrap();
        assert_eq!(
            (r.addresses(), r.port0, r.port1),
            (1, DEFAULT_PORT, DEFAULT_PORT)
        );
        let r: FlowRange = "\"[2001:2:0:10::1]-[2001:2:0:10::14]\"".parse().unwrap();
        assert_eq!(
            (r.family(), r.addresses(), r.port0),
            (Family::Inet6, 20, DEFAULT_PORT)
        );
        let r: FlowRange = "[2001:2::1]:53-[2001:2::2]:54".parse().unwrap();
        assert_eq!(
            (r.endpoints(), r.to_string().as_str()),
            (4, "[2001:2::1]:53-[2001:2::2]:54")
        );
        let r: FlowRange = "2001:2::1".parse().unwrap();
        assert_eq!(r.addresses(), 1);
    }

    #[test]
    fn bad_ranges_say_why() {
        for (text, why) in [
            ("198.18.10.20-198.18.10.1", "end address is below"),
            ("198.18.10.1:2001-198.18.10.2:2000", "end port is below"),
            ("198.18.10.1-[2001:2::1]", "different address families"),
            ("198.18.10.300", "not an IP address"),
            ("198.18.10.1:70000", "not a port"),
            ("[2001:2::1]-[2001:3::1]", "last 32 bits"),
            ("198.0.0.0-199.0.0.0", "more than"),
            ("[2001:2::1", "missing ']'"),
            ("", "expected START"),
        ] {
            let err = text.parse::<FlowRange>().unwrap_err().to_string();
            assert!(err.contains(why), "{text}: {err}");
        }
    }

    #[test]
    fn frame_sizes_follow_rfc2544_with_the_fcs() {
        let s = spec("198.18.10.1", "198.19.10.1", 64);
        assert_eq!(build_frame(&s, FlowPos::default()).len(), 60);
        let s = spec("[2001:2::1]", "[2001:2:0:8000::1]", 66);
        assert_eq!(build_frame(&s, FlowPos::default()).len(), 62);
        let r6: FlowRange = "[2001:2::1]".parse().unwrap();
        let err =
            FrameSpec::new(mac("0:0:0:0:0:1"), mac("0:0:0:0:0:2"), r6.clone(), r6, 64).unwrap_err();
        assert!(
            err.to_string().contains("inet6 frames are 66-1518"),
            "{err}"
        );
        let r4: FlowRange = "198.18.10.1".parse().unwrap();
        let err = FrameSpec::new(mac("0:0:0:0:0:1"), mac("0:0:0:0:0:2"), r4.clone(), r4, 1519)
            .unwrap_err();
        assert!(err.to_string().contains("64-1518"), "{err}");
    }

    fn hex(f: &[u8]) -> String {
        f.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Reference frames computed independently (Python's `struct` and a textbook RFC 1071 sum).
    #[test]
    fn frames_match_independent_references() {
        let s = spec("198.18.10.1:2001", "198.19.10.1:2001", 64);
        assert_eq!(
            hex(&build_frame(&s, FlowPos::default())),
            "02000000000202000000000108004500002e0000400040119a97c6120a01c6130a0107d107d1001a4ff0\
             000000000000000000000000000000000000"
        );
        let s = spec("[2001:2:0:10::1]", "[2001:2:0:8010::1]", 66);
        assert_eq!(
            hex(&build_frame(&s, FlowPos::default())),
            "02000000000202000000000186dd600000000008114020010002000000100000000000000001200100020000\
             8010000000000000000104d204d200083612"
        );
    }

    #[test]
    fn checksums_verify_to_zero() {
        for (src, dst, size) in [
            (
                "198.18.10.1:2001-198.18.10.20:2010",
                "198.19.10.1:2001-198.19.10.100",
                64,
            ),
            ("198.18.255.250:65530-198.19.0.5:65535", "198.19.10.1", 1518),
            (
                "[2001:2:0:10::1]-[2001:2:0:10::14]",
                "[2001:2:0:8010::1]:9-[2001:2:0:8010::64]:11",
                66,
            ),
            (
                "[2001:2::fff0]:1-[2001:2::1:10]:3",
                "[2001:2:0:8010::1]",
                1518,
            ),
        ] {
            let s = spec(src, dst, size);
            let mut pos = FlowPos::default();
            for _ in 0..500 {
                let f = build_frame(&s, pos);
                let l4 = if s.family() == Family::Inet4 {
                    assert_eq!(internet_checksum(&f[14..34]), 0, "IPv4 header");
                    34
                } else {
                    54
                };
                let (a, b) = if l4 == 34 { (26, 34) } else { (22, 54) };
                let mut pseudo = f[a..b].to_vec();
                if l4 == 34 {
                    pseudo.extend_from_slice(&[0, 17]);
                    pseudo.extend_from_slice(&((f.len() - l4) as u16).to_be_bytes());
                } else {
                    pseudo.extend_from_slice(&((f.len() - l4) as u32).to_be_bytes());
                    pseudo.extend_from_slice(&[0, 0, 0, 17]);
                }
                pseudo.extend_from_slice(&f[l4..]);
                assert_eq!(internet_checksum(&pseudo), 0, "UDP of {pos:?}");
                pos = pos.next(&s);
            }
        }
    }

    #[test]
    fn flows_walk_like_an_odometer_source_port_first() {
        let s = spec(
            "198.18.10.1:2001-198.18.10.2:2002",
            "198.19.10.1:7-198.19.10.3",
            64,
        );
        assert_eq!(s.flows(), 4 * 3);
        // The widest ranges hold more flows than a u64 counts: no wrap to a small number.
        let widest = "10.0.0.0:0-10.255.255.255:65535";
        assert_eq!(spec(widest, widest, 64).flows(), 1 << 80);
        let mut pos = FlowPos::default();
        let mut seen = Vec::new();
        for _ in 0..13 {
            let (sa, sp, da, dp) = pos.endpoints(&s);
            seen.push(format!("{sa}:{sp}>{da}:{dp}"));
            pos = pos.next(&s);
        }
        assert_eq!(
            &seen[..5],
            [
                "198.18.10.1:2001>198.19.10.1:7",
                "198.18.10.1:2002>198.19.10.1:7",
                "198.18.10.2:2001>198.19.10.1:7",
                "198.18.10.2:2002>198.19.10.1:7",
                "198.18.10.1:2001>198.19.10.2:7",
            ]
        );
        let distinct: std::collections::HashSet<_> = seen[..12].iter().collect();
        assert_eq!(distinct.len(), 12);
        assert_eq!(seen[12], seen[0], "the walk wraps after the last flow");
    }

    #[test]
    fn layout_writes_the_same_frames_as_build_frame() {
        for (src, dst, size) in [
            (
                "198.18.10.1:2001-198.18.10.20",
                "198.19.10.1:2001-198.19.10.100",
                64,
            ),
            (
                "198.18.255.250:65530-198.19.0.5:65535",
                "198.19.10.1:1-198.19.10.2:2",
                1518,
            ),
            (
                "[2001:2:0:10::1]-[2001:2:0:10::14]",
                "[2001:2:0:8010::1]-[2001:2:0:8010::64]",
                66,
            ),
            (
                "[2001:2::fff0]:1-[2001:2::1:10]:3",
                "[2001:2:0:8010::1]",
                200,
            ),
        ] {
            let s = spec(src, dst, size);
            let layout = FlowLayout::new(&s);
            let mut buf = vec![0u8; s.wire_len()];
            let mut pos = FlowPos::default();
            for _ in 0..3000 {
                layout.write(&mut buf, pos);
                assert_eq!(buf, build_frame(&s, pos), "{src} {dst} {pos:?}");
                pos = pos.next(&s);
            }
        }
    }

    #[test]
    fn macs_parse_and_print() {
        assert_eq!(mac("2:0:0:a:b:FF").to_string(), "02:00:00:0a:0b:ff");
        assert!("02:00:00:00:00".parse::<Mac>().is_err());
        assert!("02:00:00:00:00:01:02".parse::<Mac>().is_err());
        assert!("02:00:00:00:00:zz".parse::<Mac>().is_err());
    }
}
