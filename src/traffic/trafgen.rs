//! netsniff-ng's trafgen as a generator: its packet configuration built from a traffic profile,
//! and its command line.
//!
//! The configuration uses trafgen's low-level syntax, one `cpu(N): { … }` packet per block of
//! flows, bytes taken from [`build_frame`] (so the headers are benchlab's own: Ethernet,
//! IPv4 with DF or IPv6, UDP, zero payload, RFC 2544 frame size less the FCS). The IPv4 header
//! checksum is `csumip(14, 33)` and the UDP checksum `csumudp(14, 34)` (`csumudp6(14, 54)`),
//! which trafgen recomputes for every packet whose bytes change.
//!
//! Flows: trafgen's runtime counters are one byte wide (`dinc(min, max, step)`) and each
//! packet of the configuration has its own, while trafgen sends the packets round robin. So
//! one dimension of the flows (source or destination address or port) whose values differ in
//! their last byte only becomes a counter, the largest such one, and every combination of the
//! other three is a packet of its own: packet k sends its flows one after the other, each time
//! its turn comes, and every (source, destination) pair of the profile goes out once per
//! `flows` packets, as with pkt-gen (in another order). A profile that would need more than
//! [`MAX_PACKETS`] packets is refused.
//!
//! Pinning: trafgen forks one process per CPU from 0 to `-P` − 1 and pins each to its CPU; a
//! packet marked `cpu(N):` is sent only by the process of CPU N, so `-P N+1` with every packet
//! on CPU N sends from CPU N alone. At a fixed rate (`-b`) trafgen paces from one process on
//! CPU 0 whatever `-P` says (trafgen 0.6.8 sent nothing with `-P 2 -b … cpu(1)`), so a paced
//! sender must use CPU 0. The run is bounded by `timeout -s INT SECONDS`, which also
//! signals trafgen's forks (its whole process group). `--no-sock-mem` (its `-A`, which 0.6.8
//! does not accept in short form) and `-Q` leave the host's socket memory and IRQ affinity
//! alone. trafgen has no per-second output of its own: the sender's
//! interface counters (`benchlab rx --tx`) count what it sent.
//!
//! [`build_frame`]: crate::traffic::packet::build_frame
//! [`MAX_PACKETS`]: crate::traffic::trafgen::MAX_PACKETS

use std::fmt::Write as _;

/// trafgen on a remote sender as a trial's sender.
pub(crate) mod sender;

use super::packet::{build_frame, FlowPos, FlowRange, FrameSpec};
use crate::error::InputError;

/// The most packets a trafgen configuration may hold (it keeps them all in memory).
pub(crate) const MAX_PACKETS: u64 = 8192;

/// A dimension of the flows, as [`FlowPos`] indexes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dim {
    SrcPort,
    SrcAddr,
    DstPort,
    DstAddr,
}

const DIMS: [Dim; 4] = [Dim::SrcPort, Dim::SrcAddr, Dim::DstPort, Dim::DstAddr];

impl Dim {
    fn count(self, spec: &FrameSpec) -> u32 {
        match self {
            Dim::SrcPort => spec.src.ports(),
            Dim::SrcAddr => spec.src.addresses(),
            Dim::DstPort => spec.dst.ports(),
            Dim::DstAddr => spec.dst.addresses(),
        }
    }

    /// Whether all its values share every byte but the last (a one-byte counter covers them).
    fn fits_a_byte(self, spec: &FrameSpec) -> bool {
        let addr = |r: &FlowRange| {
            let low = |a: std::net::IpAddr| match a {
                std::net::IpAddr::V4(a) => u32::from(a),
                std::net::IpAddr::V6(a) => u128::from(a) as u32,
            };
            low(r.start) >> 8 == low(r.end) >> 8
        };
        match self {
            Dim::SrcPort => spec.src.port0 >> 8 == spec.src.port1 >> 8,
            Dim::SrcAddr => addr(&spec.src),
            Dim::DstPort => spec.dst.port0 >> 8 == spec.dst.port1 >> 8,
            Dim::DstAddr => addr(&spec.dst),
        }
    }

    /// The offset of its last byte in the frame.
    fn last_byte(self, spec: &FrameSpec) -> usize {
        let (l3, v4) = (14, spec.family() == super::packet::Family::Inet4);
        let l4 = spec.family().header_len() - 8;
        match (self, v4) {
            (Dim::SrcAddr, true) => l3 + 15,
            (Dim::DstAddr, true) => l3 + 19,
            (Dim::SrcAddr, false) => l3 + 23,
            (Dim::DstAddr, false) => l3 + 39,
            (Dim::SrcPort, _) => l4 + 1,
            (Dim::DstPort, _) => l4 + 3,
        }
    }

    fn set(self, pos: &mut FlowPos, i: u32) {
        match self {
            Dim::SrcPort => pos.src_port = i,
            Dim::SrcAddr => pos.src_addr = i,
            Dim::DstPort => pos.dst_port = i,
            Dim::DstAddr => pos.dst_addr = i,
        }
    }
}

/// A trafgen sender: what it sends and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TrafgenTx {
    /// The sending interface.
    pub(crate) iface: String,
    /// The frames: MACs, flows, size.
    pub(crate) spec: FrameSpec,
    /// A fixed rate in packets per second (`-b NNNpps`); `None` sends as fast as it can.
    pub(crate) rate: Option<u64>,
    /// The CPU that sends.
    pub(crate) cpu: usize,
}

impl TrafgenTx {
    /// trafgen's packet configuration: one packet per block of flows (see the module doc).
    pub(crate) fn config(&self) -> Result<String, InputError> {
        if let (Some(pps), 1..) = (self.rate, self.cpu) {
            return Err(InputError::new(format!(
                "trafgen sends at a fixed rate ({pps} pps) from CPU 0 only, not from CPU {}: \
                 set cpu = 0 on the sender (or leave it out), or rate = \"max\"",
                self.cpu
            )));
        }
        let spec = &self.spec;
        let counter = DIMS
            .into_iter()
            .filter(|d| d.count(spec) > 1 && d.fits_a_byte(spec))
            .max_by_key(|d| d.count(spec));
        let others: Vec<Dim> = DIMS.into_iter().filter(|&d| Some(d) != counter).collect();
        let packets: u64 = others.iter().map(|d| u64::from(d.count(spec))).product();
        if packets > MAX_PACKETS {
            return Err(InputError::new(format!(
                "trafgen: the flows {} → {} need {packets} packets in trafgen's configuration \
                 (at most {MAX_PACKETS}); narrow the ranges or use generator = \"benchlab\"",
                spec.src, spec.dst
            )));
        }
        let family = spec.family();
        let (l3, l4) = (14, family.header_len() - 8);
        let ip_csum = (family == super::packet::Family::Inet4).then_some(l3 + 10);
        let udp_csum = match family {
            super::packet::Family::Inet4 => format!("csumudp({l3}, {l4})"),
            super::packet::Family::Inet6 => format!("csumudp6({l3}, {l4})"),
        };
        let mut text = String::new();
        for k in 0..packets {
            let mut pos = FlowPos::default();
            let mut rest = k;
            for d in &others {
                let n = u64::from(d.count(spec));
                d.set(&mut pos, (rest % n) as u32);
                rest /= n;
            }
            let frame = build_frame(spec, pos);
            let mut items: Vec<String> = Vec::with_capacity(l4 + 9);
            let mut i = 0;
            while i < l4 + 8 {
                if Some(i) == ip_csum {
                    items.push(format!("csumip({l3}, {})", l4 - 1));
                    i += 2;
                } else if i == l4 + 6 {
                    items.push(udp_csum.clone());
                    i += 2;
                } else {
                    match counter.filter(|d| d.last_byte(spec) == i) {
                        Some(d) => items.push(format!(
                            "dinc({}, {}, 1)",
                            frame[i],
                            u32::from(frame[i]) + d.count(spec) - 1
                        )),
                        None => items.push(format!("0x{:02x}", frame[i])),
                    }
                    i += 1;
                }
            }
            if frame.len() > l4 + 8 {
                items.push(format!("fill(0x00, {})", frame.len() - l4 - 8));
            }
            let _ = writeln!(text, "cpu({}): {{ {} }}", self.cpu, items.join(", "));
        }
        Ok(text)
    }

    /// The command line that sends the configuration in `config_path` for `seconds`.
    pub(crate) fn argv(&self, config_path: &str, seconds: f64) -> Vec<String> {
        let mut argv: Vec<String> = [
            "timeout",
            "-s",
            "INT",
            &seconds.to_string(),
            "trafgen",
            "-o",
            &self.iface,
            "-i",
            config_path,
            "-P",
            &(if self.rate.is_some() { 1 } else { self.cpu + 1 }).to_string(),
            "--no-sock-mem",
            "-Q",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if let Some(pps) = self.rate {
            argv.extend(["-b".to_string(), format!("{pps}pps")]);
        }
        argv
    }
}

/// `timeout`'s status when it ended the command at the time limit: a trafgen run's normal end.
pub(crate) const TIMED_OUT: i32 = 124;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::packet::Mac;

    fn tx(src: &str, dst: &str, size: usize) -> TrafgenTx {
        let spec = FrameSpec::new(
            Mac([2, 0, 0, 0, 0, 1]),
            Mac([2, 0, 0, 0, 0, 2]),
            src.parse().unwrap(),
            dst.parse().unwrap(),
            size,
        )
        .unwrap();
        TrafgenTx {
            iface: "eth1".into(),
            spec,
            rate: None,
            cpu: 1,
        }
    }

    /// The bytes a packet line stands for, counters at their first value, checksums as zeros.
    fn bytes(line: &str) -> Vec<u8> {
        let body = line.split_once("{ ").unwrap().1.trim_end_matches(" }");
        let mut items = Vec::new();
        let mut cur = String::new();
        for part in body.split(", ") {
            if !cur.is_empty() {
                cur.push_str(", ");
            }
            cur.push_str(part);
            if cur.matches('(').count() == cur.matches(')').count() {
                items.push(std::mem::take(&mut cur));
            }
        }
        let arg = |item: &str, i: usize| -> usize {
            let inner = item.split_once('(').unwrap().1.trim_end_matches(')');
            inner.split(", ").nth(i).unwrap().parse().unwrap()
        };
        let mut out = Vec::new();
        for item in &items {
            if let Some(hex) = item.strip_prefix("0x") {
                out.push(u8::from_str_radix(hex, 16).unwrap());
            } else if item.starts_with("dinc(") {
                out.push(arg(item, 0) as u8);
            } else if item.starts_with("csum") {
                out.extend([0, 0]);
            } else if item.starts_with("fill(0x00, ") {
                out.extend(std::iter::repeat_n(0, arg(item, 1)));
            } else {
                panic!("unexpected item {item}");
            }
        }
        out
    }

    fn zero_csums(mut frame: Vec<u8>, v4: bool) -> Vec<u8> {
        let l4 = if v4 { 34 } else { 54 };
        if v4 {
            frame[24..26].fill(0);
        }
        frame[l4 + 6..l4 + 8].fill(0);
        frame
    }

    #[test]
    fn inet4_flows_become_a_counter_on_the_widest_dimension_and_one_packet_per_rest() {
        let t = tx(
            "198.18.10.1:2000-198.18.10.20",
            "198.19.10.1:2000-198.19.10.100",
            64,
        );
        let config = t.config().unwrap();
        let lines: Vec<&str> = config.lines().collect();
        // 100 destinations count in a byte; the 20 sources are one packet each.
        assert_eq!(lines.len(), 20);
        assert!(lines.iter().all(|l| l.starts_with("cpu(1): { 0x02, ")));
        assert!(lines[0].contains("csumip(14, 33)") && lines[0].contains("csumudp(14, 34)"));
        assert!(lines[0].contains("dinc(1, 100, 1)"), "{}", lines[0]);
        assert!(lines[0].ends_with("fill(0x00, 18) }"), "{}", lines[0]);
        for (k, line) in lines.iter().enumerate() {
            let pos = FlowPos {
                src_addr: k as u32,
                ..FlowPos::default()
            };
            let frame = zero_csums(build_frame(&t.spec, pos), true);
            assert_eq!(bytes(line), frame, "packet {k}");
            assert_eq!(frame.len(), 60);
        }
        assert_eq!(
            t.argv("/tmp/x", 4.0),
            [
                "timeout",
                "-s",
                "INT",
                "4",
                "trafgen",
                "-o",
                "eth1",
                "-i",
                "/tmp/x",
                "-P",
                "2",
                "--no-sock-mem",
                "-Q"
            ]
        );
        let paced = TrafgenTx {
            rate: Some(20_000),
            ..t
        };
        let err = paced.config().unwrap_err().to_string();
        assert!(err.contains("from CPU 0 only, not from CPU 1"), "{err}");
        let paced = TrafgenTx { cpu: 0, ..paced };
        assert!(paced.config().unwrap().starts_with("cpu(0): { "));
        let argv = paced.argv("c", 2.5);
        assert_eq!((argv[3].as_str(), argv[10].as_str()), ("2.5", "1"));
        assert_eq!(argv[13..], ["-b", "20000pps"]);
    }

    #[test]
    fn inet6_frames_and_ports_and_ranges_beyond_one_byte() {
        // Ports 2000-2009 count; 3 × 2 addresses are packets; 1518-byte frames.
        let t = tx(
            "[2001:2:0:10::1]:2000-[2001:2:0:10::3]:2009",
            "[2001:2:0:8010::1]-[2001:2:0:8010::2]",
            1518,
        );
        let config = t.config().unwrap();
        let lines: Vec<&str> = config.lines().collect();
        assert_eq!(lines.len(), 6);
        assert!(lines[0].contains("0x86, 0xdd") && lines[0].contains("csumudp6(14, 54)"));
        assert!(!lines[0].contains("csumip"));
        assert!(lines[0].contains("dinc(208, 217, 1)"), "{}", lines[0]); // 2000 = 0x07d0
        let pos = FlowPos {
            src_addr: 2,
            dst_addr: 1,
            ..FlowPos::default()
        };
        let frame = build_frame(&t.spec, pos);
        assert_eq!(frame.len(), 1514);
        assert_eq!(bytes(lines[2 + 3]), zero_csums(frame, false));

        // 300 addresses cross a byte boundary: no counter on them; ports count instead.
        let wide = tx("198.18.10.1:2000-198.18.11.44:2001", "198.19.10.1:2000", 64);
        let config = wide.config().unwrap();
        assert_eq!(config.lines().count(), 300);
        assert!(config.contains("dinc(208, 209, 1)"));
        let too_many = tx("198.18.0.1-198.18.40.1", "198.19.0.1-198.19.0.200", 64);
        let err = too_many.config().unwrap_err().to_string();
        assert!(
            err.contains("need 10241 packets") && err.contains("benchlab"),
            "{err}"
        );
    }
}
