//! The DUT's egress log: a tc program on the DUT's egress interface takes each probe's time
//! of leaving, logs it with the probe's kind and sequence number in a ring this process maps,
//! and ends the probe there.
//!
//! Why not the receiver's kernel stamps: asking any socket for software receive stamps makes
//! the kernel read the clock for every frame that any interface receives, in every namespace
//! (`netstamp_needed_key` is global). On the virtual lab the DUT's CPU receives each frame of
//! the load twice (its ingress, then the receiver's veth, whose `netif_rx` runs in the DUT's
//! transmit), and those two clock reads cost the load 5 % of its throughput. This program costs
//! a few loads and compares per frame and only a probe pays a clock read, but the tcx hook that
//! runs it costs more than it: on the load's egress, 6–7 % of the DUT's rate at saturation.
//! So the virtual lab's probes leave by a link of their own (`lab::addressing`), where it
//! runs for them alone.
//!
//! Why the probe ends here: past this hook, veth's transmit hands the frame to the receiver's
//! stack, and on the virtual lab that is the DUT's CPU's work too (`netif_rx`, then the
//! receiver's IP input and socket delivery in the same CPU's softirq). A probe delivered to a
//! socket cost the DUT about two frames of the load; logged and dropped here, one, its own
//! forwarding (`benches/latency_cost.sh`, docs/latency.md). Nothing is lost for the
//! measurement: veth's transmit routine hands the frame to its peer and adds no time, and no
//! other frame shares the probes' link, so a probe that leaves here arrives.
//!
//! Where: tcx egress (kernel 6.6+), in `__dev_queue_xmit` past the DUT's routing and firewall,
//! just before veth's transmit routine, the hook nearest the wire that a forwarded frame passes
//! through. A tcx link is owned by its file descriptor: the program leaves the DUT when the
//! stream ends, and when this process dies, whatever kills it.
//!
//! The log: an array map's value ([`Mapped`](crate::traffic::bpf::Mapped)), a count of the
//! probes logged, then a ring of [`SLOTS`](crate::traffic::latency::egress::SLOTS) records. The
//! program raises the count atomically (the DUT may forward on several CPUs), writes its
//! record, then the record's commit word (its index + 1, by an atomic exchange, a full barrier);
//! the reader takes a record once its commit word says so, and reads the word again after the
//! record, which a record the program wrote over meanwhile fails
//! ([`Overrun`](crate::traffic::latency::egress::Overrun): the reader fell a whole ring behind,
//! 6.5 s at 10 kpps, and says so).
//!
//! The clock: `bpf_ktime_get_tai_ns`, `CLOCK_TAI`, which is `CLOCK_REALTIME` (the clock of the
//! sender's kernel transmit stamp) plus the kernel's TAI offset, a whole number of seconds read
//! when the program is loaded and subtracted by it.
//!
//! The program is 50-odd eBPF instructions, assembled ([`crate::traffic::bpf`]).
// FFI: clock_gettime(CLOCK_TAI) has no std wrapper.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{fence, Ordering};

use super::frame::{decode_payload, Probe, MAGIC, PAYLOAD_LEN};
use crate::traffic::bpf::{
    array_map, bpf, devmap, encode, fd_from, load, put_u32, Asm, Insn, Mapped, Size,
    ATOMIC_FETCH_ADD, ATOMIC_XCHG, ATTR_LEN, BPF_XDP_DEVMAP, R0, R1, R2, R3, R6, R7, R8, R9,
};

/// Probes the log holds, its ring's records (a power of two: 1.5 MiB, 6.5 s at 10 kpps).
pub(crate) const SLOTS: u64 = 1 << 16;
/// A record's bytes: its commit word, the payload's first 8 bytes, the time of leaving.
const RECORD: usize = 24;
/// Where the records start in the map's value: after the count of probes logged.
const RECORDS_AT: usize = 8;
/// The payload's offset in an IPv4 frame (Ethernet, IPv4 without options, UDP).
pub(super) const IPV4_PAYLOAD: i16 = 14 + 20 + 8;
/// The payload's offset in an IPv6 frame (Ethernet, IPv6 without extension headers, UDP).
pub(super) const IPV6_PAYLOAD: i16 = 14 + 40 + 8;
/// The magic as a little-endian load of the payload's first word sees it, kind byte masked.
const MAGIC_LE: i32 = i32::from_le_bytes([MAGIC[0], MAGIC[1], MAGIC[2], 0]);

/// A program logging and ending the probes on one interface's egress, attached while this
/// lives, and the log it writes.
#[derive(Debug)]
pub(crate) struct EgressLog {
    /// The program; its map's value: the count, then the ring of records.
    tc: TcxProgram,
    /// The next probe to read, counted from the first logged.
    next: u64,
}

/// A tc program with its map of one value, attached to a tcx hook while this lives: the DUT's
/// egress log and its ingress stamp.
#[derive(Debug)]
pub(super) struct TcxProgram {
    /// The tcx link: closing it detaches the program.
    _link: OwnedFd,
    /// The program (which holds its map).
    _prog: OwnedFd,
    /// The map's value, mapped here.
    pub(super) value: Mapped,
}

impl TcxProgram {
    /// Makes a map of one `len`-byte value, assembles `program` for it (given the kernel's TAI
    /// offset and the map's descriptor), loads it as `name` and attaches it to `hook` (tcx
    /// ingress or egress) of `ifindex`, an interface of the calling thread's namespace; `what`
    /// names it in errors.
    pub(super) fn attach(
        ifindex: u32,
        hook: u32,
        (name, what): (&[u8; 8], &str),
        len: usize,
        program: fn(u64, i32) -> Vec<Insn>,
    ) -> io::Result<TcxProgram> {
        let map = array_map(len, name)?;
        let value = Mapped::new(&map, len)?;
        let code = encode(&program(tai_offset_ns()?, map.as_raw_fd()));
        let prog = load((BPF_PROG_TYPE_SCHED_CLS, 0), &code, name, what)?;
        let link = link(&prog, ifindex, hook, what)?;
        Ok(TcxProgram {
            _link: link,
            _prog: prog,
            value,
        })
    }
}

/// A log's ring went round before the reader read it: probes logged were lost unread.
#[derive(Debug, thiserror::Error)]
#[error(
    "{1} went round before it was read ({0} probes unread): the probe reader fell more than \
     {SLOTS} probes behind"
)]
pub(crate) struct Overrun(pub(crate) u64, &'static str);

/// What [`Overrun`] names: the DUT's egress log.
const EGRESS: &str = "the DUT's egress log of the probes";
/// What [`Overrun`] names: the log of the probes sent.
const SENT: &str = "the log of the probes sent";

impl EgressLog {
    /// Loads the program with its map and attaches it to the egress of `ifindex`, an
    /// interface of the calling thread's namespace.
    pub(crate) fn attach(ifindex: u32) -> io::Result<EgressLog> {
        let len = RECORDS_AT + SLOTS as usize * RECORD;
        let what = (b"bl_egrss", "the probes' egress log");
        let tc = TcxProgram::attach(ifindex, BPF_TCX_EGRESS, what, len, program)?;
        Ok(EgressLog { tc, next: 0 })
    }

    /// Hands `arrived` each probe logged since the last call, in the order they left, with
    /// its time of leaving (ns since the epoch, `CLOCK_REALTIME`); returns how many. A record
    /// whose program has not finished writing it waits for the next call.
    pub(crate) fn read(&mut self, arrived: impl FnMut(Probe, u64)) -> Result<usize, Overrun> {
        read_ring((&self.tc.value, EGRESS), &mut self.next, arrived)
    }
}

/// The log of the probes an XDP generator carries ([`crate::traffic::xdp::Carrier`]): a device
/// map whose program logs each probe with its time as the kernel hands the generator's batch
/// to the interface, past the batching. Frames redirected through [`SentLog::devmap`] reach
/// the interface through the program.
#[derive(Debug)]
pub(crate) struct SentLog {
    /// The device map the generator redirects to (which holds the program).
    devmap: OwnedFd,
    /// The program's map's value: the count, then the ring of records.
    value: Mapped,
    /// The next probe to read, counted from the first logged.
    next: u64,
}

impl SentLog {
    /// Loads the program with its map and a device map of interface `ifindex` with it; must
    /// run in the interface's namespace.
    pub(crate) fn new(ifindex: u32) -> io::Result<SentLog> {
        let len = RECORDS_AT + SLOTS as usize * RECORD;
        let map = array_map(len, b"bl_sent_")?;
        let value = Mapped::new(&map, len)?;
        let code = encode(&sent_program(tai_offset_ns()?, map.as_raw_fd()));
        let what = "the log of the probes sent (a device map's XDP program)";
        let prog = load(
            (BPF_PROG_TYPE_XDP, BPF_XDP_DEVMAP),
            &code,
            b"bl_sent_",
            what,
        )?;
        let devmap = devmap(ifindex, &prog)?;
        Ok(SentLog {
            devmap,
            value,
            next: 0,
        })
    }

    /// The device map's descriptor, for the generator's program to redirect through.
    pub(crate) fn devmap(&self) -> i32 {
        self.devmap.as_raw_fd()
    }

    /// Hands `sent` each probe logged since the last call, in the order they were sent, with
    /// the time it was handed to the interface (ns since the epoch, `CLOCK_REALTIME`); returns
    /// how many.
    pub(crate) fn read(&mut self, sent: impl FnMut(Probe, u64)) -> Result<usize, Overrun> {
        read_ring((&self.value, SENT), &mut self.next, sent)
    }
}

/// [`EgressLog::read`] of the log `log`, from its probe `next` on, which it moves past those
/// read.
fn read_ring(
    (log, what): (&Mapped, &'static str),
    next: &mut u64,
    mut arrived: impl FnMut(Probe, u64),
) -> Result<usize, Overrun> {
    let logged = log.word(0).load(Ordering::Acquire);
    if logged - *next > SLOTS {
        return Err(Overrun(logged - *next, what));
    }
    let start = *next;
    while *next < logged {
        let at = RECORDS_AT + (*next % SLOTS) as usize * RECORD;
        let tag = *next + 1;
        let commit = log.word(at);
        match commit.load(Ordering::Acquire) {
            c if c == tag => {}
            c if c > tag => return Err(Overrun(logged - *next, what)),
            _ => break,
        }
        let head = log.word(at + 8).load(Ordering::Relaxed);
        let left = log.word(at + 16).load(Ordering::Relaxed);
        // Read again: a record the program wrote over meanwhile is not this probe's.
        fence(Ordering::Acquire);
        if commit.load(Ordering::Relaxed) != tag {
            return Err(Overrun(logged - *next, what));
        }
        let mut payload = [0; 16];
        payload[..8].copy_from_slice(&head.to_le_bytes());
        payload[8..].copy_from_slice(&left.to_be_bytes());
        // The program logs only what bears the magic; an unknown kind is no probe of ours.
        if let Some(probe) = decode_payload(&payload) {
            arrived(probe, left);
        }
        *next += 1;
    }
    Ok((*next - start) as usize)
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

/// `bpf_ktime_get_tai_ns`.
const KTIME_GET_TAI_NS: i32 = 208;
/// Where a program of the probes runs: where it finds the frame's `data` and `data_end`.
#[derive(Debug, Clone, Copy)]
pub(super) enum Hook {
    /// tcx (the DUT's egress log and ingress stamp): in `struct __sk_buff`.
    Tcx,
    /// A device map's XDP program (the log of the probes sent): in `struct xdp_md`.
    Devmap,
}

impl Hook {
    /// The offsets of `data` and `data_end` in the program's context.
    fn data(self) -> (i16, i16) {
        match self {
            Hook::Tcx => (76, 80),
            Hook::Devmap => (0, 4),
        }
    }
}

/// tcx: go on to the next program, then the qdisc.
pub(super) const TCX_NEXT: i32 = -1;
/// tcx: drop the frame.
const TCX_DROP: i32 = 2;
/// XDP: send the frame on.
const XDP_PASS: i32 = 2;
const BPF_PROG_TYPE_XDP: u32 = 6;
const BPF_LINK_CREATE: libc::c_long = 28;
const BPF_PROG_TYPE_SCHED_CLS: u32 = 3;
const BPF_TCX_EGRESS: u32 = 47;

/// The program: for a probe (IPv4 or IPv6, UDP, the magic at the payload's start), take the
/// count of probes logged in the map `map_fd`'s value and add one (atomically: the DUT may
/// forward on several CPUs), write the payload's first 8 bytes and `CLOCK_TAI` − `tai_ns` in
/// that record of the ring, then its commit word (count + 1, an atomic exchange: a full
/// barrier, so the reader that sees it sees the record), and drop the probe; pass every
/// other frame on.
fn program(tai_ns: u64, map_fd: i32) -> Vec<Insn> {
    log_program(Hook::Tcx, (TCX_DROP, TCX_NEXT), tai_ns, map_fd)
}

/// The program of [`SentLog`]: [`program`]'s log, in a device map, every frame sent on.
fn sent_program(tai_ns: u64, map_fd: i32) -> Vec<Insn> {
    log_program(Hook::Devmap, (XDP_PASS, XDP_PASS), tai_ns, map_fd)
}

/// A program at `hook` that logs each probe as [`program`] says, then returns `verdicts.0`
/// for a probe, `verdicts.1` for any other frame.
fn log_program(hook: Hook, verdicts: (i32, i32), tai_ns: u64, map_fd: i32) -> Vec<Insn> {
    let mut a = Asm::default();
    let (pass, at4, at6, log) = (a.label(), a.label(), a.label(), a.label());
    find_probe(&mut a, hook, [at4, at6], pass);
    // r8 = the payload's first 8 bytes: magic, kind, sequence number.
    for (payload, at) in [(IPV4_PAYLOAD, at4), (IPV6_PAYLOAD, at6)] {
        a.bind(at);
        a.ldx(Size::Dw, R8, R6, payload);
        a.ja(log);
    }
    a.bind(log);
    // r6 = the time of leaving, read first: the map's work is not the DUT's.
    realtime_now(&mut a, tai_ns);
    a.alu_reg(0xb0, R6, R0);
    a.lookup_value(map_fd, pass);
    a.alu_reg(0xb0, R9, R0);
    // r7 = the count before, fetched as it is raised; r9 = its record (the slot bounded: the
    // verifier then accepts the stores inside the value).
    a.alu_imm(0xb0, R7, 1);
    a.atomic(Size::Dw, R9, 0, R7, ATOMIC_FETCH_ADD);
    a.alu_reg(0xb0, R1, R7);
    a.alu_imm(0x50, R1, (SLOTS - 1) as i32);
    a.alu_imm(0x20, R1, RECORD as i32);
    a.alu_reg(0x00, R9, R1);
    a.stx(Size::Dw, R9, RECORDS_AT as i16 + 8, R8);
    a.stx(Size::Dw, R9, RECORDS_AT as i16 + 16, R6);
    a.alu_imm(0x00, R7, 1);
    a.atomic(Size::Dw, R9, RECORDS_AT as i16, R7, ATOMIC_XCHG);
    a.alu_imm(0xb0, R0, verdicts.0);
    a.exit();
    a.bind(pass);
    a.alu_imm(0xb0, R0, verdicts.1);
    a.exit();
    a.finish()
}

/// Emits the test every program of the probes makes of each frame at `hook`: r6 = data, r7 =
/// data_end, then
/// a jump to `found[0]` for an IPv4 probe, `found[1]` for an IPv6 one (UDP, the magic at the
/// payload's start, the whole payload within the frame: the verifier then accepts that
/// family's loads and stores in it), to `pass` for anything else.
pub(super) fn find_probe(a: &mut Asm, hook: Hook, found: [usize; 2], pass: usize) {
    let (data, data_end) = hook.data();
    a.ldx(Size::W, R6, R1, data);
    a.ldx(Size::W, R7, R1, data_end);
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
fn link(prog: &OwnedFd, ifindex: u32, attach: u32, what: &str) -> io::Result<OwnedFd> {
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
    use crate::traffic::latency::ProbeKind;

    /// A log whose records the test writes as the program does.
    fn log() -> Mapped {
        let len = RECORDS_AT + SLOTS as usize * RECORD;
        Mapped::new(&array_map(len, b"bl_test_").unwrap(), len).unwrap()
    }

    /// Writes probe `seq` (established) as record `index`, left at `left`, committed or not.
    fn write(log: &Mapped, index: u64, seq: u32, left: u64, committed: bool) {
        let at = RECORDS_AT + (index % SLOTS) as usize * RECORD;
        let mut head = [0; 8];
        head[..3].copy_from_slice(&MAGIC);
        head[3] = b'E';
        head[4..].copy_from_slice(&seq.to_be_bytes());
        log.word(at + 8)
            .store(u64::from_le_bytes(head), Ordering::Relaxed);
        log.word(at + 16).store(left, Ordering::Relaxed);
        let tag = if committed { index + 1 } else { 0 };
        log.word(at).store(tag, Ordering::Release);
    }

    fn read_all(log: &Mapped, next: &mut u64) -> Result<Vec<(u32, u64)>, Overrun> {
        let mut got = Vec::new();
        read_ring((log, EGRESS), next, |p, left| {
            assert_eq!(p.kind, ProbeKind::Established);
            got.push((p.seq, left));
        })?;
        Ok(got)
    }

    #[test]
    fn the_log_is_read_in_order_and_a_record_not_yet_committed_waits() {
        let log = log();
        let mut next = 0;
        write(&log, 0, 7, 1_000, true);
        write(&log, 1, 9, 2_000, true);
        write(&log, 2, 8, 3_000, false);
        log.word(0).store(3, Ordering::Release);
        assert_eq!(read_all(&log, &mut next).unwrap(), [(7, 1_000), (9, 2_000)]);
        assert_eq!(next, 2);
        assert_eq!(read_all(&log, &mut next).unwrap(), []);
        write(&log, 2, 8, 3_000, true);
        assert_eq!(read_all(&log, &mut next).unwrap(), [(8, 3_000)]);
        assert_eq!(next, 3);
    }

    #[test]
    fn a_reader_a_whole_ring_behind_says_so() {
        let log = log();
        let mut next = 0;
        log.word(0).store(SLOTS + 5, Ordering::Release);
        assert_eq!(read_all(&log, &mut next).unwrap_err().0, SLOTS + 5);
        // Written over by the program's next round after the reader took the count: the
        // record's commit word is past the one expected.
        log.word(0).store(1, Ordering::Release);
        write(&log, SLOTS, 1, 1, true);
        assert_eq!(read_all(&log, &mut next).unwrap_err().0, 1);
        assert_eq!(next, 0);
    }

    #[test]
    fn every_jump_lands_inside_the_program_and_it_ends_with_exit() {
        for p in [program(37_000_000_000, 3), sent_program(37_000_000_000, 3)] {
            jumps_inside(&p);
        }
    }

    fn jumps_inside(p: &[Insn]) {
        assert_eq!(p.last().unwrap().code, 0x95);
        for (i, ins) in p.iter().enumerate() {
            if matches!(ins.code, 0x05 | 0x15 | 0x2d | 0x55) {
                let to = i as i64 + 1 + i64::from(ins.off);
                assert!(to > i as i64 && (to as usize) < p.len(), "{i}: {to}");
            }
        }
    }
}
