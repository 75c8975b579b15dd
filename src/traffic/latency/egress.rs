//! The DUT's egress stamp: a tc program on the DUT's egress interface writes each probe's time
//! of leaving into the probe itself, in place of its in-frame send stamp.
//!
//! Why not the receiver's kernel stamps: asking any socket for software receive stamps makes
//! the kernel read the clock for every frame that any interface receives, in every namespace
//! (`netstamp_needed_key` is global). On the virtual lab the DUT's CPU receives each frame of
//! the load twice (its ingress, then the receiver's veth, whose `netif_rx` runs in the DUT's
//! transmit), and those two clock reads cost the load 5 % of its throughput. This program costs
//! the load a few loads and compares per frame; only a probe pays a clock read.
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
//! The program is a few dozen eBPF instructions assembled here, loaded with bpf(2): a compiled
//! object would need a BPF compiler on every machine that builds benchlab.
// FFI: bpf(2) has no std wrapper.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::frame::{MAGIC, PAYLOAD_LEN};

/// Where the stamp goes in the probe's payload (the in-frame stamp's bytes, big-endian).
const STAMP_AT: i16 = 8;
/// The payload's offset in an IPv4 frame (Ethernet, IPv4 without options, UDP).
const IPV4_PAYLOAD: i16 = 14 + 20 + 8;
/// The payload's offset in an IPv6 frame (Ethernet, IPv6 without extension headers, UDP).
const IPV6_PAYLOAD: i16 = 14 + 40 + 8;
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
        let program = program(tai_offset_ns()?);
        let prog = load(&program)?;
        let link = link(&prog, ifindex)?;
        Ok(EgressStamper {
            _link: link,
            _prog: prog,
        })
    }
}

/// `CLOCK_TAI` − `CLOCK_REALTIME`, in ns: a whole number of seconds, 0 unless time daemons
/// set it.
fn tai_offset_ns() -> io::Result<u64> {
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

/// One eBPF instruction (`struct bpf_insn`).
#[derive(Debug, Clone, Copy)]
#[repr(C)]
struct Insn {
    code: u8,
    /// Destination register in the low nibble, source in the high one.
    regs: u8,
    off: i16,
    imm: i32,
}

fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
    Insn {
        code,
        regs: dst | (src << 4),
        off,
        imm,
    }
}

// The opcodes used (linux/bpf_common.h, linux/bpf.h).
const MOV64_REG: u8 = 0xbf;
const MOV64_IMM: u8 = 0xb7;
const ADD64_IMM: u8 = 0x07;
const SUB64_REG: u8 = 0x1f;
const AND64_IMM: u8 = 0x57;
const LDX_W: u8 = 0x61;
const LDX_H: u8 = 0x69;
const LDX_B: u8 = 0x71;
const STX_DW: u8 = 0x7b;
const JGT_REG: u8 = 0x2d;
const JNE_IMM: u8 = 0x55;
const JA: u8 = 0x05;
const CALL: u8 = 0x85;
const EXIT: u8 = 0x95;
const LD_IMM64: u8 = 0x18;
/// `r = htobe64(r)` (BPF_ALU | BPF_END | BPF_TO_BE, 64 bits).
const TO_BE: u8 = 0xdc;
/// `bpf_ktime_get_tai_ns`.
const KTIME_GET_TAI_NS: i32 = 208;
/// `struct __sk_buff`'s `data` and `data_end`.
const SKB_DATA: i16 = 76;
const SKB_DATA_END: i16 = 80;
/// tcx: go on to the next program, then the qdisc.
const TCX_NEXT: i32 = -1;

/// The program: for a probe (IPv4 or IPv6, UDP, the magic at the payload's start), write
/// `CLOCK_TAI` − `tai_ns` big-endian at its stamp; pass every frame on.
fn program(tai_ns: u64) -> Vec<Insn> {
    // Registers: r6 the context, r7 data, r8 data_end, r9 the payload's offset once known.
    let mut p = vec![
        insn(MOV64_REG, 6, 1, 0, 0),
        insn(LDX_W, 7, 6, SKB_DATA, 0),
        insn(LDX_W, 8, 6, SKB_DATA_END, 0),
    ];
    // Each family: its ethertype (as a little-endian load sees it), where its next-protocol
    // byte is, whether it checks the IPv4 header length byte, and its payload's offset.
    let families: [(i32, i16, bool, i16); 2] = [
        (0x0008, 14 + 9, true, IPV4_PAYLOAD),
        (0xdd86, 14 + 6, false, IPV6_PAYLOAD),
    ];
    // Jumps are to labels patched below: `exit` at the end, `stamp` before it.
    let (mut to_exit, mut to_stamp, mut to_next) = (Vec::new(), Vec::new(), Vec::new());
    for (ethertype, proto_at, ihl, payload) in families {
        for at in to_next.drain(..) {
            patch(&mut p, at);
        }
        let end = payload + PAYLOAD_LEN as i16;
        p.push(insn(MOV64_REG, 2, 7, 0, 0));
        p.push(insn(ADD64_IMM, 2, 0, 0, i32::from(end)));
        to_exit.push(p.len());
        p.push(insn(JGT_REG, 2, 8, 0, 0));
        p.push(insn(LDX_H, 3, 7, 12, 0));
        to_next.push(p.len());
        p.push(insn(JNE_IMM, 3, 0, 0, ethertype));
        if ihl {
            p.push(insn(LDX_B, 3, 7, 14, 0));
            to_exit.push(p.len());
            p.push(insn(JNE_IMM, 3, 0, 0, 0x45));
        }
        p.push(insn(LDX_B, 3, 7, proto_at, 0));
        to_exit.push(p.len());
        p.push(insn(JNE_IMM, 3, 0, 0, 17));
        p.push(insn(LDX_W, 3, 7, payload, 0));
        p.push(insn(AND64_IMM, 3, 0, 0, 0x00ff_ffff));
        to_exit.push(p.len());
        p.push(insn(JNE_IMM, 3, 0, 0, MAGIC_LE));
        p.push(insn(MOV64_IMM, 9, 0, 0, i32::from(payload)));
        to_stamp.push(p.len());
        p.push(insn(JA, 0, 0, 0, 0));
    }
    // Neither family: pass it on.
    to_exit.append(&mut to_next);
    for at in to_stamp {
        patch(&mut p, at);
    }
    // The stamp: r0 = TAI now − the offset, big-endian, at data + r9 + STAMP_AT. The helper
    // leaves r6–r9 as they were and the packet where it was.
    p.push(insn(CALL, 0, 0, 0, KTIME_GET_TAI_NS));
    p.push(insn(LD_IMM64, 1, 0, 0, tai_ns as u32 as i32));
    p.push(insn(0, 0, 0, 0, (tai_ns >> 32) as u32 as i32));
    p.push(insn(SUB64_REG, 0, 1, 0, 0));
    p.push(insn(TO_BE, 0, 0, 0, 64));
    // The bounds were checked for the payload's end at that offset, family by family, and
    // the verifier follows each path with its own: each family stores at its own constant
    // offset (IPv6's is two instructions on).
    p.push(insn(JNE_IMM, 9, 0, 2, i32::from(IPV4_PAYLOAD)));
    p.push(insn(STX_DW, 7, 0, IPV4_PAYLOAD + STAMP_AT, 0));
    to_exit.push(p.len());
    p.push(insn(JA, 0, 0, 0, 0));
    p.push(insn(STX_DW, 7, 0, IPV6_PAYLOAD + STAMP_AT, 0));
    for at in to_exit {
        patch(&mut p, at);
    }
    p.push(insn(MOV64_IMM, 0, 0, 0, TCX_NEXT));
    p.push(insn(EXIT, 0, 0, 0, 0));
    p
}

/// Points the jump at `at` to the instruction about to be pushed.
fn patch(p: &mut [Insn], at: usize) {
    p[at].off = (p.len() - at - 1) as i16;
}

const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_LINK_CREATE: libc::c_long = 28;
const BPF_PROG_TYPE_SCHED_CLS: u32 = 3;
const BPF_TCX_EGRESS: u32 = 47;

/// `union bpf_attr` for `BPF_PROG_LOAD`, the fields used, zero past them.
#[repr(C)]
#[derive(Default)]
struct ProgLoad {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    log_level: u32,
    log_size: u32,
    log_buf: u64,
    kern_version: u32,
    prog_flags: u32,
    prog_name: [u8; 16],
    prog_ifindex: u32,
    expected_attach_type: u32,
}

/// `union bpf_attr` for `BPF_LINK_CREATE` with tcx, zero past the fields used.
#[repr(C)]
#[derive(Default)]
struct LinkCreate {
    prog_fd: u32,
    target_ifindex: u32,
    attach_type: u32,
    flags: u32,
    relative_fd: u32,
    _pad: u32,
    expected_revision: u64,
}

/// bpf(2): the new descriptor it returns.
fn bpf<T>(cmd: libc::c_long, attr: &mut T) -> io::Result<OwnedFd> {
    // SAFETY: attr is a live, fully initialised bpf_attr prefix passed with its size; the
    // kernel reads it (and what its pointers point at, kept alive by the caller) and returns a
    // descriptor we own, or -1.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            (attr as *mut T).cast::<libc::c_void>(),
            std::mem::size_of::<T>() as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a non-negative result of these commands is a new descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// Loads `program` as a tc classifier; the verifier's log in the error when it refuses it.
fn load(program: &[Insn]) -> io::Result<OwnedFd> {
    let license = c"GPL";
    let mut log = vec![0u8; 64 * 1024];
    let mut name = [0u8; 16];
    name[..12].copy_from_slice(b"benchlab_stp");
    let mut attr = ProgLoad {
        prog_type: BPF_PROG_TYPE_SCHED_CLS,
        insn_cnt: program.len() as u32,
        insns: program.as_ptr() as u64,
        license: license.as_ptr() as u64,
        log_level: 1,
        log_size: log.len() as u32,
        log_buf: log.as_mut_ptr() as u64,
        prog_name: name,
        ..ProgLoad::default()
    };
    bpf(BPF_PROG_LOAD, &mut attr).map_err(|e| {
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        let log = String::from_utf8_lossy(&log[..end]);
        let last = log.lines().rev().take(3).collect::<Vec<_>>().join("; ");
        io::Error::new(
            e.kind(),
            format!("loading the probes' egress stamp: {e}: {last}"),
        )
    })
}

/// Attaches `prog` to the tcx egress of `ifindex`.
fn link(prog: &OwnedFd, ifindex: u32) -> io::Result<OwnedFd> {
    let mut attr = LinkCreate {
        prog_fd: prog.as_raw_fd() as u32,
        target_ifindex: ifindex,
        attach_type: BPF_TCX_EGRESS,
        ..LinkCreate::default()
    };
    bpf(BPF_LINK_CREATE, &mut attr).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("attaching the probes' egress stamp (tcx, kernel 6.6+): {e}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_jump_lands_inside_the_program_and_it_ends_with_exit() {
        let p = program(37_000_000_000);
        assert_eq!(p.last().unwrap().code, EXIT);
        for (i, ins) in p.iter().enumerate() {
            if matches!(ins.code, JGT_REG | JNE_IMM | JA) {
                let to = i as i64 + 1 + i64::from(ins.off);
                assert!(to > i as i64 && (to as usize) < p.len(), "{i}: {to}");
            }
        }
        // The offset is loaded whole, in the two halves of LD_IMM64.
        let ld = p.iter().position(|i| i.code == LD_IMM64).unwrap();
        let imm = |i: usize| u64::from(p[i].imm as u32);
        assert_eq!(imm(ld) | imm(ld + 1) << 32, 37_000_000_000);
    }
}
