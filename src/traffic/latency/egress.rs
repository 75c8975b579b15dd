//! The DUT's egress stamp: a tc program on the DUT's egress interface writes each probe's time
//! of leaving into the probe itself, in place of its in-frame send stamp.
//!
//! Why not the receiver's kernel stamps: asking any socket for software receive stamps makes
//! the kernel read the clock for every frame that any interface receives, in every namespace
//! (`netstamp_needed_key` is global). On the virtual lab the DUT's CPU receives each frame of
//! the load twice (its ingress, then the receiver's veth, whose `netif_rx` runs in the DUT's
//! transmit), and those two clock reads cost the load 5 % of its throughput. This program costs
//! a few loads and compares per frame and only a probe pays a clock read, but the tcx hook that
//! runs it costs more than it: on the load's egress, 6–7 % of the DUT's rate at saturation.
//! So the virtual lab's probes leave by a link of their own (`lab::addressing`), where it
//! runs for them alone: the probes then cost the DUT about 1 % of its rate, their own
//! forwarding and delivery (`benches/latency_cost.sh`, docs/latency.md).
//!
//! Where: tcx egress (kernel 6.6+), in `__dev_queue_xmit` past the DUT's routing and firewall,
//! just before veth's transmit routine hands the frame to the receiver, the hook nearest the
//! wire that a forwarded frame passes through. A tcx link is owned by its file descriptor: the
//! program leaves the DUT when the stream ends, and when this process dies, whatever kills it.
//!
//! The clock: `bpf_ktime_get_tai_ns`, `CLOCK_TAI`, which is `CLOCK_REALTIME` (the clock of the
//! sender's kernel transmit stamp) plus the kernel's TAI offset, a whole number of seconds read
//! when the program is loaded and subtracted by it. The UDP checksum of a stamped probe is no
//! longer right: the receiver reads the probe through a raw socket, which copies it before UDP
//! looks at the checksum, and nothing else reads it.
//!
//! The program is 40-odd eBPF instructions, assembled ([`crate::traffic::bpf`]).
// FFI: clock_gettime(CLOCK_TAI) has no std wrapper.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use super::frame::{MAGIC, PAYLOAD_LEN};
use crate::traffic::bpf::{
    bpf, encode, fd_from, load, put_u32, Asm, Insn, Size, ATTR_LEN, R0, R1, R2, R3, R6, R7,
};

/// Where the stamp goes in the probe's payload (the in-frame stamp's bytes, big-endian).
const STAMP_AT: i16 = 8;
/// The payload's offset in an IPv4 frame (Ethernet, IPv4 without options, UDP).
pub(super) const IPV4_PAYLOAD: i16 = 14 + 20 + 8;
/// The payload's offset in an IPv6 frame (Ethernet, IPv6 without extension headers, UDP).
pub(super) const IPV6_PAYLOAD: i16 = 14 + 40 + 8;
/// The magic as a little-endian load of the payload's first word sees it, kind byte masked.
const MAGIC_LE: i32 = i32::from_le_bytes([MAGIC[0], MAGIC[1], MAGIC[2], 0]);

/// A program stamping probes on one interface, attached while this lives.
#[derive(Debug)]
pub(crate) struct EgressStamper {
    /// The tcx link: closing it detaches the program.
    _link: OwnedFd,
    /// The program.
    _prog: OwnedFd,
}

impl EgressStamper {
    /// Loads the program and attaches it to the egress of `ifindex`, an interface of the
    /// calling thread's namespace.
    pub(crate) fn attach(ifindex: u32) -> io::Result<EgressStamper> {
        let code = encode(&program(tai_offset_ns()?));
        let prog = load(
            BPF_PROG_TYPE_SCHED_CLS,
            &code,
            b"bl_stamp",
            "the probes' egress stamp",
        )?;
        let link = link(&prog, ifindex, BPF_TCX_EGRESS, "the probes' egress stamp")?;
        Ok(EgressStamper {
            _link: link,
            _prog: prog,
        })
    }
}

/// `CLOCK_TAI` − `CLOCK_REALTIME`, in ns: a whole number of seconds, 0 unless time daemons
/// set it.
pub(super) fn tai_offset_ns() -> io::Result<u64> {
    let read = |clock| {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: ts is a live timespec the call fills.
        if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(ts.tv_sec)
    };
    // Seconds apart, read twice: the same offset unless a second ticked between the reads.
    loop {
        let (real, tai, again) = (
            read(libc::CLOCK_REALTIME)?,
            read(libc::CLOCK_TAI)?,
            read(libc::CLOCK_REALTIME)?,
        );
        if real == again {
            return Ok((tai - real).max(0) as u64 * 1_000_000_000);
        }
    }
}

/// `bpf_ktime_get_tai_ns`.
const KTIME_GET_TAI_NS: i32 = 208;
/// `struct __sk_buff`'s `data` and `data_end`.
const SKB_DATA: i16 = 76;
const SKB_DATA_END: i16 = 80;
/// tcx: go on to the next program, then the qdisc.
pub(super) const TCX_NEXT: i32 = -1;
const BPF_LINK_CREATE: libc::c_long = 28;
pub(super) const BPF_PROG_TYPE_SCHED_CLS: u32 = 3;
const BPF_TCX_EGRESS: u32 = 47;

/// The program: for a probe (IPv4 or IPv6, UDP, the magic at the payload's start), write
/// `CLOCK_TAI` − `tai_ns` big-endian at its stamp; pass every frame on.
fn program(tai_ns: u64) -> Vec<Insn> {
    let mut a = Asm::default();
    let (pass, stamp4, stamp6) = (a.label(), a.label(), a.label());
    find_probe(&mut a, [stamp4, stamp6], pass);
    // The stamp: r0 = TAI now − the offset, big-endian, over the in-frame stamp. The helper
    // leaves r6–r9 as they were and the frame where it was.
    for (payload, stamp) in [(IPV4_PAYLOAD, stamp4), (IPV6_PAYLOAD, stamp6)] {
        a.bind(stamp);
        realtime_now(&mut a, tai_ns);
        a.bswap_be(R0, 64);
        a.stx(Size::Dw, R6, payload + STAMP_AT, R0);
        a.ja(pass);
    }
    a.bind(pass);
    a.alu_imm(0xb0, R0, TCX_NEXT);
    a.exit();
    a.finish()
}

/// Emits the test both of the DUT's stamps make of each frame: r6 = data, r7 = data_end, then
/// a jump to `found[0]` for an IPv4 probe, `found[1]` for an IPv6 one (UDP, the magic at the
/// payload's start, the whole payload within the frame: the verifier then accepts that
/// family's loads and stores in it), to `pass` for anything else.
pub(super) fn find_probe(a: &mut Asm, found: [usize; 2], pass: usize) {
    a.ldx(Size::W, R6, R1, SKB_DATA);
    a.ldx(Size::W, R7, R1, SKB_DATA_END);
    // Per family: its ethertype (as a little-endian load sees it), where its next-protocol byte
    // is, whether the IPv4 header-length byte is checked and its payload's offset.
    let families = [
        (0x0008, 14 + 9, true, IPV4_PAYLOAD, found[0]),
        (0xdd86, 14 + 6, false, IPV6_PAYLOAD, found[1]),
    ];
    for (ethertype, proto_at, ihl, payload, found) in families {
        let next = a.label();
        a.alu_reg(0xb0, R2, R6);
        a.alu_imm(0x00, R2, i32::from(payload) + PAYLOAD_LEN as i32);
        a.jmp_reg(0x2d, R2, R7, next);
        a.ldx(Size::H, R3, R6, 12);
        a.jmp_imm(0x55, R3, ethertype, next);
        if ihl {
            a.ldx(Size::B, R3, R6, 14);
            a.jmp_imm(0x55, R3, 0x45, pass);
        }
        a.ldx(Size::B, R3, R6, proto_at);
        a.jmp_imm(0x55, R3, 17, pass);
        a.ldx(Size::W, R3, R6, payload);
        a.alu_imm(0x50, R3, 0x00ff_ffff);
        a.jmp_imm(0x55, R3, MAGIC_LE, pass);
        a.ja(found);
        a.bind(next);
    }
    a.ja(pass);
}

/// Emits r0 = `CLOCK_TAI` now − `tai_ns`: `CLOCK_REALTIME`, the sender's clock. The helper
/// leaves r6–r9 as they were and the frame where it was.
pub(super) fn realtime_now(a: &mut Asm, tai_ns: u64) {
    a.call(KTIME_GET_TAI_NS);
    a.ld_imm64(R1, tai_ns);
    a.alu_reg(0x10, R0, R1);
}

/// Attaches `prog` to `ifindex` where `attach` says (tcx ingress or egress); `what` names it
/// in an error.
pub(super) fn link(prog: &OwnedFd, ifindex: u32, attach: u32, what: &str) -> io::Result<OwnedFd> {
    let mut attr = [0u8; ATTR_LEN];
    put_u32(&mut attr, 0, prog.as_raw_fd() as u32);
    put_u32(&mut attr, 4, ifindex);
    put_u32(&mut attr, 8, attach);
    bpf(BPF_LINK_CREATE, &mut attr)
        .map(fd_from)
        .map_err(|e| io::Error::new(e.kind(), format!("attaching {what} (tcx, Linux 6.6+): {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_jump_lands_inside_the_program_and_it_ends_with_exit() {
        let p = program(37_000_000_000);
        assert_eq!(p.last().unwrap().code, 0x95);
        for (i, ins) in p.iter().enumerate() {
            if matches!(ins.code, 0x05 | 0x2d | 0x55) {
                let to = i as i64 + 1 + i64::from(ins.off);
                assert!(to > i as i64 && (to as usize) < p.len(), "{i}: {to}");
            }
        }
    }
}
