//! The probe frame: a UDP frame of the load's first flow whose payload starts with a magic, a
//! sequence number and the send time, stamped in place just before its send syscall.
//!
//! Payload (big-endian, 18 bytes: a 64-byte IPv4 frame holds it exactly):
//!
//! | bytes | field |
//! |---|---|
//! | 0–3 | magic `BLPR` ([`MAGIC`](crate::traffic::latency::frame::MAGIC)) |
//! | 4–7 | sequence number, from 0 |
//! | 8–15 | send time, ns since the epoch (`CLOCK_REALTIME`, the clock of the kernel's stamps) |
//! | 16–17 | checksum balance: keeps the UDP checksum computed at build time right |
//!
//! Why the balance word: stamping must cost nothing between the clock read and the syscall.
//! The frame's UDP checksum is computed once with the stamped fields zero; each stamp then sets
//! the balance to the one's-complement negative of the fields' sum, so their sum, and with it
//! the checksum, never changes (RFC 1071: 0 and 0xffff are both zero).

use std::time::{SystemTime, UNIX_EPOCH};

use crate::traffic::packet::{build_frame, internet_checksum, Family, FlowPos, FrameSpec, FCS_LEN};

/// The probes' magic, the first word of their UDP payload: "BLPR".
pub(crate) const MAGIC: u32 = 0x424c_5052;
/// Bytes of the probe payload.
pub(crate) const PAYLOAD_LEN: usize = 18;

/// What a probe frame carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Probe {
    /// Sequence number.
    pub(crate) seq: u32,
    /// Send time, ns since the epoch.
    pub(crate) stamp_ns: u64,
}

/// A probe frame ready to be stamped and sent again and again.
#[derive(Debug, Clone)]
pub(crate) struct ProbeFrame {
    bytes: Vec<u8>,
    payload: usize,
}

impl ProbeFrame {
    /// The frame of `spec`'s first flow, at `spec`'s size or the smallest that holds the
    /// payload (84 bytes for IPv6), its stamped fields zero and its checksum balanced.
    pub(crate) fn new(spec: &FrameSpec) -> ProbeFrame {
        let family = spec.family();
        let mut spec = spec.clone();
        spec.frame_size = spec.frame_size.max(min_frame(family));
        let mut bytes = build_frame(&spec, FlowPos::default());
        let payload = family.header_len();
        bytes[payload..payload + 4].copy_from_slice(&MAGIC.to_be_bytes());
        let mut frame = ProbeFrame { bytes, payload };
        // With every stamped field zero the payload's sum must stay zero: balance the magic.
        frame.stamp(Probe {
            seq: 0,
            stamp_ns: 0,
        });
        frame
    }

    /// Writes `probe` into the frame and rebalances the checksum: a few stores, no pass over
    /// the frame.
    pub(crate) fn stamp(&mut self, probe: Probe) {
        let p = self.payload;
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

/// The probe in `frame`, or `None` when it is not one (another family, IP options, another
/// protocol, too short, no magic).
pub(crate) fn decode(frame: &[u8]) -> Option<Probe> {
    let ethertype = u16::from_be_bytes([*frame.get(12)?, *frame.get(13)?]);
    let payload = match ethertype {
        0x0800 if *frame.get(14)? == 0x45 && *frame.get(23)? == 17 => Family::Inet4.header_len(),
        0x86dd if *frame.get(20)? == 17 => Family::Inet6.header_len(),
        _ => return None,
    };
    let p = frame.get(payload..payload + PAYLOAD_LEN)?;
    if u32::from_be_bytes([p[0], p[1], p[2], p[3]]) != MAGIC {
        return None;
    }
    Some(Probe {
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

/// One classic BPF instruction (`struct sock_filter`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct SockFilter {
    /// Opcode.
    pub(crate) code: u16,
    /// Jump offset when true.
    pub(crate) jt: u8,
    /// Jump offset when false.
    pub(crate) jf: u8,
    /// Operand.
    pub(crate) k: u32,
}

const fn ins(code: u16, jt: u8, jf: u8, k: u32) -> SockFilter {
    SockFilter { code, jt, jf, k }
}

const LDH: u16 = 0x28; // BPF_LD | BPF_H | BPF_ABS
const LDB: u16 = 0x30; // BPF_LD | BPF_B | BPF_ABS
const LDW: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const RET: u16 = 0x06; // BPF_RET | BPF_K

/// The receiver's socket filter: UDP over IPv4 or IPv6 whose payload starts with [`MAGIC`].
/// The kernel runs it per frame, so the load never reaches the probe socket's queue (and
/// [`decode`] checks the rest). Jumps are relative: target = next instruction + offset.
pub(crate) const FILTER: [SockFilter; 13] = [
    ins(LDH, 0, 0, 12),     // 0: ethertype
    ins(JEQ, 0, 4, 0x0800), // 1: IPv4 → 2, else → 6
    ins(LDB, 0, 0, 23),     // 2: IPv4 protocol
    ins(JEQ, 0, 8, 17),     // 3: UDP → 4, else drop
    ins(LDW, 0, 0, 42),     // 4: first payload word (IHL 5)
    ins(JEQ, 5, 6, MAGIC),  // 5: magic → accept, else drop
    ins(JEQ, 0, 5, 0x86dd), // 6: IPv6 → 7, else drop
    ins(LDB, 0, 0, 20),     // 7: next header
    ins(JEQ, 0, 3, 17),     // 8: UDP → 9, else drop
    ins(LDW, 0, 0, 62),     // 9: first payload word
    ins(JEQ, 0, 1, MAGIC),  // 10: magic → accept, else drop
    ins(RET, 0, 0, 0xffff), // 11: accept the whole frame
    ins(RET, 0, 0, 0),      // 12: drop
];

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(src: &str, dst: &str, size: usize) -> FrameSpec {
        FrameSpec::new(
            "02:00:00:00:00:01".parse().unwrap(),
            "02:00:00:00:00:02".parse().unwrap(),
            src.parse().unwrap(),
            dst.parse().unwrap(),
            size,
        )
        .unwrap()
    }

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

    #[test]
    fn probes_round_trip_with_valid_checksums() {
        let cases = [
            spec("198.18.0.1:2000", "198.19.0.1:2000", 64),
            spec("198.18.0.1:2000", "198.19.0.1:2000", 1518),
            spec("[2001:2::1]:2000", "[2001:2:0:1::1]:2000", 66),
        ];
        for s in cases {
            let mut f = ProbeFrame::new(&s);
            assert!(f.bytes().len() + FCS_LEN >= min_frame(s.family()));
            assert_eq!(
                decode(f.bytes()),
                Some(Probe {
                    seq: 0,
                    stamp_ns: 0
                })
            );
            assert!(udp_verifies(f.bytes()));
            for (seq, stamp_ns) in [
                (1, 1),
                (77, 1_770_000_000_123_456_789),
                (u32::MAX, u64::MAX),
            ] {
                let probe = Probe { seq, stamp_ns };
                f.stamp(probe);
                assert_eq!(decode(f.bytes()), Some(probe));
                assert!(udp_verifies(f.bytes()), "{probe:?}");
            }
        }
        assert_eq!(min_frame(Family::Inet4), 64);
        assert_eq!(min_frame(Family::Inet6), 84);
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
        assert_eq!(decode(&[]), None);
    }

    /// Runs [`FILTER`] on `frame` as the kernel would (the opcodes it uses only): the bytes
    /// it keeps, 0 for a dropped frame.
    fn run_filter(frame: &[u8]) -> u32 {
        let (mut pc, mut a) = (0usize, 0u32);
        loop {
            let i = FILTER[pc];
            let at = i.k as usize;
            let load = |n: usize| {
                frame
                    .get(at..at + n)
                    .map(|b| b.iter().fold(0u32, |x, &y| x << 8 | u32::from(y)))
            };
            match i.code {
                LDH | LDB | LDW => {
                    let n = match i.code {
                        LDH => 2,
                        LDB => 1,
                        _ => 4,
                    };
                    match load(n) {
                        Some(v) => a = v,
                        None => return 0, // the kernel drops a frame read past its end
                    }
                }
                JEQ => pc += usize::from(if a == i.k { i.jt } else { i.jf }),
                RET => return i.k,
                other => panic!("opcode {other:#x}"),
            }
            pc += 1;
        }
    }

    #[test]
    fn the_filter_keeps_probes_only() {
        for s in [
            spec("198.18.0.1:2000", "198.19.0.1:2000", 64),
            spec("[2001:2::1]:2000", "[2001:2:0:1::1]:2000", 128),
        ] {
            let probe = ProbeFrame::new(&s);
            assert_eq!(run_filter(probe.bytes()), 0xffff);
            assert_eq!(run_filter(&build_frame(&s, FlowPos::default())), 0);
            assert_eq!(run_filter(&probe.bytes()[..40]), 0);
            let mut tcp = probe.bytes().to_vec();
            tcp[if s.family() == Family::Inet4 { 23 } else { 20 }] = 6;
            assert_eq!(run_filter(&tcp), 0);
        }
        let mut arp = vec![0u8; 60];
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        assert_eq!(run_filter(&arp), 0);
    }
}
