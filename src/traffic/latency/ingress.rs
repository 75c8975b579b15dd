//! The DUT's ingress stamp: a tc program on the DUT's ingress interface records each probe's
//! time of coming in, so that its latency splits into the way to the DUT and the time in it.
//!
//! Why: on the virtual lab a probe crosses from the generator's CPU to the DUT's before the DUT
//! sees it, and that crossing is the test machine's, not the DUT's. A VM's vCPUs are threads
//! the host places and moves: with the two vCPUs near (a cache line's round trip ≈ 200 ns) plain
//! forwarding's P50 at 10 % of its NDR read 2.2 µs, far (≈ 400 ns) 3.6 µs, while the time from
//! the DUT's ingress to its egress stayed at 1.3–1.4 µs in both (bpftrace on the DUT's receive
//! and transmit tracepoints, 2026-11-28; nft-stateful 2.1–2.2 µs at either distance, its one-way
//! P50 4.9 and 6.5 µs). The time in the DUT is what a kernel or firewall change moves.
//!
//! Where: tcx ingress (kernel 6.6+), in `__netif_receive_skb_core`, the first hook of the DUT's
//! stack: after veth's NAPI took the frame off its ring (the wait there, behind the load's
//! frames, falls in the way to the DUT) and before routing and the firewall.
//!
//! What it costs: the probes must share the load's ingress, ring and NAPI thread (their wait
//! behind the load's frames is their latency), so the hook runs for every frame of the load:
//! about 4 % of the DUT's rate at saturation on the project's VM, where the probes without it cost
//! a paced overload under 1 % (docs/latency.md). Hence only when asked (`[latency] in_dut`).
//!
//! How the time travels: the probe frame has no room for a second stamp at 64 bytes, and the
//! UDP checksum the DUT's conntrack checks must stay right before its firewall. The program
//! writes the time (the clock of the [`egress`](crate::traffic::latency::egress) stamp) into
//! an array of [`SLOTS`](crate::traffic::latency::ingress::SLOTS) words at the probe's sequence
//! number modulo that, an eBPF map this process maps
//! ([`Mapped`](crate::traffic::bpf::Mapped)); the receiver reads the probe's word when the
//! probe arrives. A word is written again that many probes later (6.5 s at 10 kpps): the
//! matcher keeps an ingress time only between the probe's transmit stamp and its egress stamp,
//! which a stale or later word is not.

use std::io;
use std::sync::atomic::Ordering;

use super::egress::{
    find_probe, realtime_now, Hook, TcxProgram, IPV4_PAYLOAD, IPV6_PAYLOAD, TCX_NEXT,
};
use crate::traffic::bpf::{Asm, Insn, Size, R0, R6, R8, R9};

/// Words of ingress times, one per probe, indexed by sequence number modulo this (a power of
/// two): 512 KiB.
pub(crate) const SLOTS: u32 = 1 << 16;
/// Where the sequence number is in the probe's payload (big-endian).
const SEQ_AT: i16 = 4;
const BPF_TCX_INGRESS: u32 = 46;

/// A program recording the probes' ingress times on one interface, attached while this lives.
#[derive(Debug)]
pub(crate) struct IngressStamper {
    /// The program; its map's value: the words.
    tc: TcxProgram,
}

impl IngressStamper {
    /// Loads the program with its map and attaches it to the ingress of `ifindex`, an
    /// interface of the calling thread's namespace.
    pub(crate) fn attach(ifindex: u32) -> io::Result<IngressStamper> {
        let what = (b"bl_ingrs", "the probes' ingress stamp");
        let tc = TcxProgram::attach(ifindex, BPF_TCX_INGRESS, what, SLOTS as usize * 8, program)?;
        Ok(IngressStamper { tc })
    }

    /// The ingress time last recorded in probe `seq`'s word, ns since the epoch
    /// (`CLOCK_REALTIME`; 0: none yet): `seq`'s own, or that of a probe [`SLOTS`] before or
    /// after it.
    pub(crate) fn ingress_ns(&self, seq: u32) -> u64 {
        let slot = (seq % SLOTS) as usize;
        self.tc.value.word(slot * 8).load(Ordering::Relaxed)
    }
}

/// The program: for a probe (as [`find_probe`] knows one), write `CLOCK_TAI` − `tai_ns` into
/// word `seq % SLOTS` of the map `map_fd`'s one value; pass every frame on.
fn program(tai_ns: u64, map_fd: i32) -> Vec<Insn> {
    let mut a = Asm::default();
    let (pass, at4, at6, record) = (a.label(), a.label(), a.label(), a.label());
    find_probe(&mut a, Hook::Tcx, [at4, at6], pass);
    // r8 = the word's offset: the sequence number, host order, modulo SLOTS, times 8 (bounded:
    // the verifier then accepts the store inside the value).
    for (payload, at) in [(IPV4_PAYLOAD, at4), (IPV6_PAYLOAD, at6)] {
        a.bind(at);
        a.ldx(Size::W, R8, R6, payload + SEQ_AT);
        a.ja(record);
    }
    a.bind(record);
    a.bswap_be(R8, 32);
    a.alu_imm(0x50, R8, (SLOTS - 1) as i32);
    a.alu_imm(0x60, R8, 3);
    // r9 = the value's word: the map's value + r8.
    a.lookup_value(map_fd, pass);
    a.alu_reg(0x00, R0, R8);
    a.alu_reg(0xb0, R9, R0);
    realtime_now(&mut a, tai_ns);
    a.stx(Size::Dw, R9, 0, R0);
    a.bind(pass);
    a.alu_imm(0xb0, R0, TCX_NEXT);
    a.exit();
    a.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_jump_lands_inside_the_program_and_it_ends_with_exit() {
        let p = program(37_000_000_000, 3);
        assert_eq!(p.last().unwrap().code, 0x95);
        for (i, ins) in p.iter().enumerate() {
            if matches!(ins.code, 0x05 | 0x15 | 0x2d | 0x55) {
                let to = i as i64 + 1 + i64::from(ins.off);
                assert!(to > i as i64 && (to as usize) < p.len(), "{i}: {to}");
            }
        }
    }
}
