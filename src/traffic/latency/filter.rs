//! The receiver's socket filter: a classic BPF program the kernel runs on each frame, so that
//! only probes (UDP whose payload starts with the probes' magic) reach the probe socket's queue
//! and the load never does.

use super::frame::MAGIC;

/// The magic as the receiver's filter sees the payload's first word, kind byte masked out.
const MAGIC_WORD: u32 = u32::from_be_bytes([MAGIC[0], MAGIC[1], MAGIC[2], 0]);

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
const AND: u16 = 0x54; // BPF_ALU | BPF_AND | BPF_K
const JEQ: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const RET: u16 = 0x06; // BPF_RET | BPF_K

/// The receiver's socket filter: UDP over IPv4 or IPv6 whose payload starts with [`MAGIC`]
/// (the kind byte after it masked out). The kernel runs it per frame, so the load never
/// reaches the probe socket's queue (and [`decode`](super::frame::decode) checks the rest).
/// Jumps are relative: target = next instruction + offset.
pub(crate) const FILTER: [SockFilter; 15] = [
    ins(LDH, 0, 0, 12),          // 0: ethertype
    ins(JEQ, 0, 5, 0x0800),      // 1: IPv4 → 2, else → 7
    ins(LDB, 0, 0, 23),          // 2: IPv4 protocol
    ins(JEQ, 0, 10, 17),         // 3: UDP → 4, else drop
    ins(LDW, 0, 0, 42),          // 4: first payload word (IHL 5)
    ins(AND, 0, 0, 0xffff_ff00), // 5: its magic bytes
    ins(JEQ, 6, 7, MAGIC_WORD),  // 6: magic → accept, else drop
    ins(JEQ, 0, 6, 0x86dd),      // 7: IPv6 → 8, else drop
    ins(LDB, 0, 0, 20),          // 8: next header
    ins(JEQ, 0, 4, 17),          // 9: UDP → 10, else drop
    ins(LDW, 0, 0, 62),          // 10: first payload word
    ins(AND, 0, 0, 0xffff_ff00), // 11: its magic bytes
    ins(JEQ, 0, 1, MAGIC_WORD),  // 12: magic → accept, else drop
    ins(RET, 0, 0, 0xffff),      // 13: accept the whole frame
    ins(RET, 0, 0, 0),           // 14: drop
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::latency::frame::{Probe, ProbeFrame};
    use crate::traffic::latency::ProbeKind;
    use crate::traffic::packet::tests::spec;
    use crate::traffic::packet::{build_frame, Family, FlowPos};

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
                AND => a &= i.k,
                JEQ => pc += usize::from(if a == i.k { i.jt } else { i.jf }),
                RET => return i.k,
                other => panic!("opcode {other:#x}"),
            }
            pc += 1;
        }
    }

    #[test]
    fn the_filter_keeps_probes_of_both_kinds_only() {
        for s in [
            spec("198.18.0.1:2000", "198.19.0.1:2000", 64),
            spec("[2001:2::1]:2000", "[2001:2:0:1::1]:2000", 128),
        ] {
            let mut probe = ProbeFrame::new(&s);
            assert_eq!(run_filter(probe.bytes()), 0xffff);
            probe.set_ports(1024, 2000);
            probe.stamp(Probe {
                kind: ProbeKind::FirstPacket,
                seq: 9,
                stamp_ns: 1,
            });
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
