//! XDP live frames: the kernel builds and sends the frames itself.
//!
//! `BPF_PROG_TEST_RUN` with `BPF_F_TEST_XDP_LIVE_FRAMES` (Linux ≥ 5.18) runs an XDP program
//! `repeat` times on a frame from a page pool and really transmits what the program redirects —
//! no socket, no skb, no copy from user space. Measured here: about 6.8 Mpps on one CPU, six
//! times an AF_PACKET loop. The program is assembled below, instruction by instruction (no BPF
//! toolchain needed); per frame it
//! 1. rewrites the whole header from immediates (the page pool recycles pages that the DUT may
//!    have modified: TTL, MACs, checksums);
//! 2. writes the flow's ports and the varying 32 bits of its addresses from a 4-counter state in
//!    an array map, and both checksums from sums precomputed in [`FlowLayout`](crate::traffic::packet::FlowLayout);
//! 3. advances the counters in pkt-gen's order (see [`crate::traffic::packet`]);
//! 4. counts the frame and returns `bpf_redirect(ifindex)`.
//!
//! The program keeps its own count of frames sent (redirected) in the map, stops sending at the
//! limit, and at a fixed rate (or at `max` following the DUT, [`crate::traffic::follow`], at a
//! rate the generator's monitor changes through the map, which is mapped into the process)
//! paces frames itself: a run whose frame is not yet due (by
//! `bpf_ktime_get_ns`) waits for it, reading the clock again (and drops it only after
//! `SPIN` reads), so frames leave evenly spaced, one at a time (the kernel hands a batch of
//! runs to the device together: at a fixed rate a batch spans at most `PACED_BATCH_SPAN_NS`
//! of the schedule, see there). The generator
//! loses its CPU now and then (the kernel's own work on it, other tasks): measured here, a
//! generator that forgot any backlog over 32 frames sent 80–85 % of the rate asked, one that
//! caught up at once sent all of it but in bursts that overflowed the DUT's input queue (256
//! frames) — 12 % of the frames dropped at 300 Kpps. So a late generator sends a backlog of up
//! to `BURST_FRAMES` at once and catches up a longer one spaced, at `CATCH_UP` times the
//! rate asked (at least `CATCH_UP_MIN_PPS` more), until it is back on schedule, and forgets
//! only a backlog older than `SLACK_NS`; a rate it still cannot reach shows in the samples.
//! Measured on the virtual lab: 97–99.4 % of 100 K, 300 K and 600 Kpps sent, and two senders
//! of 15 Kpps sharing one CPU 99 % each (with the catch-up capped at 1.25 times the rate: 62 %;
//! at 1.1 times, alone beside a build: 86–88 %), under 0.1 % of the frames dropped at the
//! DUT's input. Every frame sent is one handed to the interface's
//! `ndo_xdp_xmit` (a device that cannot take it counts it as `tx_dropped`; veth does so when the
//! DUT's input queue is full). Frames the monitor owes the program (`XdpCounter::owe`: the
//! generator's input queue, [`crate::traffic::requeue`]) go before any new one, unpaced, and
//! count apart (`XdpCounter::resent`); at the limit a run waits for one as for a frame not yet
//! due. The run must
//! happen in the sender's namespace (the redirect looks the ifindex up there), and a redirect
//! needs an interface that accepts XDP frames: a veth whose peer has GRO or an XDP program, a
//! NIC driver with `ndo_xdp_xmit` ([`crate::traffic::netlink::XDP_ACT_NDO_XMIT`]).
//!
//! A loaded program is kept (`pool`) for the next engine with the same frame layout and
//! interface: a search runs one generator per trial, and the verifier takes tens of ms.
// FFI: the bpf(2) system call has no wrapper in std or libc.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use super::bpf::{
    array_map, bpf, encode, load, put_u32, put_u64, Asm, Insn, Mapped, Size, ATTR_LEN, R0, R1, R10,
    R2, R3, R4, R5, R6, R7, R8, R9,
};
use super::latency::egress::{Overrun, SentLog};
use super::latency::frame::{Probe, PAYLOAD_LEN};
use super::packet::{build_frame, FlowLayout, FlowPos, FrameSpec};
use pool::Loaded;

mod pool;

const BPF_PROG_TEST_RUN: libc::c_long = 10;
const BPF_PROG_TYPE_XDP: u32 = 6;
const BPF_F_TEST_XDP_LIVE_FRAMES: u32 = 1 << 1;
const BPF_FUNC_KTIME_GET_NS: i32 = 5;
const BPF_FUNC_REDIRECT: i32 = 23;
const BPF_FUNC_REDIRECT_MAP: i32 = 51;
/// Fractional bits of the pacing clock: intervals are exact to 1/256 ns.
const FIXED_SHIFT: i32 = 8;
/// Frames of backlog a late generator sends at once, as a short burst (a veth queue holds 256):
/// a generator sharing its CPU with another loses it for a few ms at a time.
const BURST_FRAMES: u64 = 32;
/// The oldest backlog a late generator catches up, ns; an older one is forgotten.
const SLACK_NS: u64 = 20_000_000;
/// Catching up sends at least this many frames per second more than the rate asked: a slow
/// generator sharing its CPU (two senders on one core) is off it half the time, and must then
/// send at over twice its rate while it runs.
const CATCH_UP_MIN_PPS: f64 = 100_000.0;
/// How much faster than the rate asked a late generator sends until it is back on schedule:
/// a quarter more load for a while, which a DUT's input queue absorbs unless it is at its
/// limit (1.1 did not catch up on a loaded machine; 1.5 dropped more).
const CATCH_UP: f64 = 1.25;
/// Clock reads a paced run makes, waiting for its frame's due time, before it drops the frame:
/// a wait of ~17 µs here (`kernel.bpf_stats_enabled`: 16.5 µs a run at 10 Kpps, nearly all of
/// them waiting in vain), so that at 100 Kpps no run drops its frame and at 50 Kpps about one
/// per frame sent.
///
/// Why wait instead of dropping: a dropped frame goes back to the run's page pool through the
/// pool's shared ring, under the lock the DUT's CPU takes to give back every frame it
/// forwarded. When most runs dropped (~6 M runs a second whatever the rate), the two CPUs
/// fought over that lock: in `perf`, up to a third of the DUT's CPU went to page-pool returns
/// and `__pv_queued_spin_lock_slowpath`, and its 256-frame input queue overflowed. Measured on
/// the virtual lab (`benches/pacing.sh`, 10 s runs, this engine and the dropping one
/// alternating, 3 rounds): lost at 700 Kpps 1.1–4.8 % before, 0.01–0.07 % now; at 1 Mpps
/// 0.15–21 % before (and 91–93 % of the rate sent), 0.03–1.5 % now; at 400 Kpps about the
/// same, 0.03–1 % before, 0.01–0.08 % now.
const SPIN: i32 = 512;

/// The state map's one value: byte offsets of its fields (u32 flow indexes, u64 the rest).
mod state {
    /// u64: frames sent (redirected) so far.
    pub(crate) const SENT: i16 = 16;
    /// u64: frames to send in all (`u64::MAX`: no limit).
    pub(crate) const LIMIT: i16 = 24;
    /// u64: pacing interval, ns << 8 (0: as fast as possible).
    pub(crate) const INTERVAL: i16 = 32;
    /// u64: ktime of the first paced frame (0 until then).
    pub(crate) const START: i16 = 40;
    /// u64: due time of the next frame, ns since START << 8.
    pub(crate) const DUE: i16 = 48;
    /// u64: largest backlog caught up, ns << 8.
    pub(crate) const SLACK: i16 = 56;
    /// u64: shortest time between two frames while catching up, ns << 8.
    pub(crate) const GAP: i16 = 64;
    /// u64: earliest time of the next frame, ns since START << 8.
    pub(crate) const NEXT: i16 = 72;
    /// u64: backlog sent at once, without the catch-up gap, ns << 8.
    pub(crate) const BURST: i16 = 80;
    /// u64: frames the interface refused, owed again: the monitor adds, each run takes one.
    pub(crate) const OWED: i16 = 88;
    /// u64: owed frames sent again (not counted in SENT).
    pub(crate) const RESENT: i16 = 96;
    /// u64: latency probes the program has taken from the ring.
    pub(crate) const PROBE_HEAD: i16 = 104;
    /// The ring of latency probes ([`PROBE_SLOTS`](super::PROBE_SLOTS) slots of
    /// [`PROBE_SLOT`](super::PROBE_SLOT) bytes): each a u64 due time (`CLOCK_MONOTONIC`, ns; 0:
    /// empty) and the probe's first bytes, its headers and payload
    /// ([`PROBE_BYTES`](super::PROBE_BYTES) at most). The [`Carrier`](super::Carrier) fills a
    /// slot and sets its due time last; the program sends it once due and empties it.
    pub(crate) const PROBE_RING: i16 = 112;
    /// Size of the value.
    pub(crate) const LEN: usize = 112 + super::PROBE_SLOTS * super::PROBE_SLOT;
}
/// The probes the ring holds (a power of two): 3.2 ms ahead at 10 kpps.
const PROBE_SLOTS: usize = 32;
/// A ring slot's bytes: the due time, then the probe's bytes.
const PROBE_SLOT: usize = 8 + PROBE_BYTES;
/// The probes the [`Carrier`] keeps ahead of their time, at most: the generator's thread sends
/// them when due even while the probes' thread waits for its CPU, which it shares on a
/// 2-CPU machine (each offer waited for the generator's next run: 3.5 kpps of 10 went out).
const PROBE_AHEAD: Duration = Duration::from_millis(2);
const PROBE_BYTES: usize = 14 + 40 + 8 + PAYLOAD_LEN;
const XDP_DROP: i32 = 1;
/// Frames the kernel runs between two flushes to the device, as fast as possible (its
/// default; 256 at most).
const KERNEL_BATCH: u32 = 64;
/// Frames per kernel batch at `max` following the interface: the kernel's most. The kernel
/// sends from a page pool whose recycling ring holds as many pages as a batch has frames; the
/// DUT's CPU fills it as it frees the frames it forwarded, and while the generator's thread is
/// off its CPU it overflows: the DUT's CPU frees the rest to the page allocator, and the
/// generator allocates and writes them again. Following a DUT at ~1.2 Mpps (page_pool
/// tracepoints, 2026-11-29): 57 k pages a second with batches of 64, 85 k with the latency
/// probes' threads beside it, 450 with 256; the DUT forwarded 0.93 % more (+0.41 % to +1.24 %,
/// 40 phases of each alternated).
const FULL_BATCH: u32 = 256;
/// At a fixed rate, the longest stretch of the schedule one kernel batch spans, ns. The kernel
/// runs a batch with bottom halves off, so nothing else runs on the generator's CPU meanwhile
/// (the latency probes' thread, when it shares that CPU), and hands the batch's frames to the
/// device together at its end. A batch of 64 spans 640 µs at 100 Kpps: the probes went out
/// right behind 64 frames of the load and waited for the DUT to forward them, P50 47 µs
/// through the virtual DUT against 2 µs with one frame a batch (10 kpps of probes, 5 s each;
/// 29 µs against 3.4 µs at 500 Kpps). One frame a batch still sent 1.5 Mpps.
const PACED_BATCH_SPAN_NS: u64 = 2_000;

/// Frames per kernel batch at pacing `interval` (ns << [`FIXED_SHIFT`], 0: unpaced): as many
/// as [`PACED_BATCH_SPAN_NS`] of the schedule hold, at least one, at most [`KERNEL_BATCH`]
/// (a fixed rate; `max` following the interface keeps full batches, [`XdpEngine::full_batches`]).
fn kernel_batch(interval: u64) -> u32 {
    if interval == 0 {
        return KERNEL_BATCH;
    }
    ((PACED_BATCH_SPAN_NS << FIXED_SHIFT) / interval).clamp(1, u64::from(KERNEL_BATCH)) as u32
}
/// Assembles the frame-writing program for `layout`, redirecting its frames to interface
/// `ifindex` (its `ndo_xdp_xmit`, past its qdisc), its state in the array map `map_fd` (one
/// value, see `state`: flow indexes as u32 at 0, 4, 8, 12 — source port, source address,
/// destination port, destination address — then counters and pacing). With `carry`, the
/// device map (of that interface, with the [`SentLog`]'s program) that carried latency probes
/// and every frame then go through: a probe due in the state's ring goes before any frame of
/// the load, and each frame of the load has its payload's probe bytes zeroed (its page may have
/// carried a probe).
pub(crate) fn program(
    layout: &FlowLayout,
    ifindex: u32,
    map_fd: i32,
    carry: Option<i32>,
) -> Vec<Insn> {
    let mut a = Asm::default();
    let drop = a.label();
    let hdr = layout.udp_csum + 2;
    let probe_len = hdr + PAYLOAD_LEN;
    // r6 = ctx->data, r7 = ctx->data_end; the bounds check lets the verifier accept the stores.
    // A carrying engine's frames hold a probe (ProbeConfig::check refuses a smaller size).
    a.ldx(Size::W, R6, R1, 0);
    a.ldx(Size::W, R7, R1, 4);
    a.alu_reg(0xb0, R2, R6);
    a.alu_imm(
        0x00,
        R2,
        if carry.is_some() { probe_len } else { hdr } as i32,
    );
    a.jmp_reg(0x2d, R2, R7, drop);
    // r8 = the flow state.
    a.lookup_value(map_fd, drop);
    a.alu_reg(0xb0, R8, R0);
    // r7: whether the run's frame is an owed one (sent again, not counted as sent).
    a.alu_imm(0xb0, R7, 0);
    // A run waits for a frame to send, reading the clock again up to SPIN times, and drops its
    // frame only after that (the next run asks again): see [`SPIN`] for why waiting beats
    // dropping. r9 counts the reads left.
    a.alu_imm(0xb0, R9, SPIN);
    let top = a.label();
    let resend = a.label();
    let at_limit = a.label();
    a.bind(top);
    if carry.is_some() {
        // A probe due goes first, unpaced and not counted as the load's: its headers and
        // payload copied from its slot, the slot emptied, sent through the device map, whose
        // program logs its time as the batch goes to the interface.
        let no_probe = a.label();
        a.ldx(Size::Dw, R1, R8, state::PROBE_HEAD);
        a.alu_imm(0x50, R1, (PROBE_SLOTS - 1) as i32);
        a.alu_imm(0x20, R1, PROBE_SLOT as i32);
        a.alu_reg(0xb0, R2, R8);
        a.alu_reg(0x00, R2, R1);
        a.ldx(Size::Dw, R3, R2, state::PROBE_RING);
        a.jmp_imm(0x15, R3, 0, no_probe);
        // The slot survives the clock's call on the stack (r6-r9 are all taken).
        a.stx(Size::Dw, R10, -16, R2);
        a.call(BPF_FUNC_KTIME_GET_NS);
        a.ldx(Size::Dw, R2, R10, -16);
        a.ldx(Size::Dw, R3, R2, state::PROBE_RING);
        a.jmp_reg(0x2d, R3, R0, no_probe);
        copy_probe(&mut a, probe_len);
        a.st(Size::Dw, R2, state::PROBE_RING, 0);
        a.ldx(Size::Dw, R1, R8, state::PROBE_HEAD);
        a.alu_imm(0x00, R1, 1);
        a.stx(Size::Dw, R8, state::PROBE_HEAD, R1);
        redirect(&mut a, ifindex, carry);
        a.bind(no_probe);
    }
    // Owed frames go first, unpaced: the DUT's input queue held them while its ring was full.
    a.ldx(Size::Dw, R1, R8, state::OWED);
    a.jmp_imm(0x55, R1, 0, resend);
    // The limit: once `sent` reaches it, no new frame goes.
    a.ldx(Size::Dw, R1, R8, state::SENT);
    a.ldx(Size::Dw, R2, R8, state::LIMIT);
    a.jmp_reg(0x3d, R1, R2, at_limit);
    // Pacing (interval ≠ 0): a frame goes once its due time has come. Times are ns since the
    // first frame, shifted left by 8 bits.
    let go = a.label();
    let have_start = a.label();
    let no_catch_up = a.label();
    let not_yet = a.label();
    a.ldx(Size::Dw, R1, R8, state::INTERVAL);
    a.jmp_imm(0x15, R1, 0, go);
    a.call(BPF_FUNC_KTIME_GET_NS);
    a.ldx(Size::Dw, R1, R8, state::START);
    a.jmp_imm(0x55, R1, 0, have_start);
    a.stx(Size::Dw, R8, state::START, R0);
    a.alu_reg(0xb0, R1, R0);
    a.bind(have_start);
    a.alu_reg(0x10, R0, R1);
    a.alu_imm(0x60, R0, FIXED_SHIFT);
    a.ldx(Size::Dw, R2, R8, state::DUE);
    a.jmp_reg(0x2d, R2, R0, not_yet);
    // A backlog of a few frames goes at once; catching up a longer one, frames keep the gap.
    let at_once = a.label();
    a.alu_reg(0xb0, R4, R0);
    a.alu_reg(0x10, R4, R2);
    a.ldx(Size::Dw, R5, R8, state::BURST);
    a.jmp_reg(0xbd, R4, R5, at_once);
    a.ldx(Size::Dw, R5, R8, state::NEXT);
    a.jmp_reg(0x2d, R5, R0, not_yet);
    a.bind(at_once);
    // Late by more than the slack (preempted): forget the backlog rather than burst.
    a.ldx(Size::Dw, R3, R8, state::SLACK);
    a.jmp_reg(0xad, R0, R3, no_catch_up);
    a.alu_reg(0xb0, R4, R0);
    a.alu_reg(0x10, R4, R3);
    a.jmp_reg(0x3d, R2, R4, no_catch_up);
    a.alu_reg(0xb0, R2, R4);
    a.bind(no_catch_up);
    a.ldx(Size::Dw, R3, R8, state::INTERVAL);
    a.alu_reg(0x00, R2, R3);
    a.stx(Size::Dw, R8, state::DUE, R2);
    // Catching up keeps its rate on average: the next frame's earliest time follows the last
    // one's, not the clock, so that time spent after the program (delivering the batch: ~1 µs
    // a frame through the stack) counts toward the gap. Spaced from the clock, frames through
    // the stack went at 1 / (gap + delivery): 77 % of 450 Kpps, the backlog never caught up.
    // A schedule over a burst behind restarts a burst behind the clock.
    let kept = a.label();
    a.ldx(Size::Dw, R5, R8, state::NEXT);
    a.ldx(Size::Dw, R3, R8, state::BURST);
    a.alu_reg(0xb0, R4, R5);
    a.alu_reg(0x00, R4, R3);
    a.jmp_reg(0x3d, R4, R0, kept);
    a.alu_reg(0xb0, R5, R0);
    a.alu_reg(0x10, R5, R3);
    a.bind(kept);
    a.ldx(Size::Dw, R3, R8, state::GAP);
    a.alu_reg(0x00, R5, R3);
    a.stx(Size::Dw, R8, state::NEXT, R5);
    a.jmp_imm(0x05, 0, 0, go);
    // An owed frame: taken from OWED (which the monitor adds to meanwhile: an atomic add of
    // -1, BPF_STX | BPF_DW | BPF_ATOMIC), counted in RESENT, sent.
    a.bind(resend);
    a.alu_imm(0xb0, R1, -1);
    a.emit(Insn::new(0xdb, R8, R1, state::OWED, 0));
    a.ldx(Size::Dw, R1, R8, state::RESENT);
    a.alu_imm(0x00, R1, 1);
    a.stx(Size::Dw, R8, state::RESENT, R1);
    a.alu_imm(0xb0, R7, 1);
    a.bind(go);
    // The header, 4 bytes at a time (the template's varying fields are zero).
    let t = &layout.template;
    for off in (0..hdr - 1).step_by(4) {
        if off + 4 <= hdr {
            a.st(
                Size::W,
                R6,
                off as i16,
                i32::from_ne_bytes(t[off..off + 4].try_into().expect("4 bytes")),
            );
        } else {
            a.st(
                Size::H,
                R6,
                off as i16,
                i32::from(u16::from_ne_bytes([t[off], t[off + 1]])),
            );
        }
    }
    // Ports: r1 = htobe16(first + index), stored; r9 accumulates the UDP sum.
    a.ldx(Size::W, R1, R8, 0);
    a.alu_imm(0x00, R1, i32::from(layout.src_first.0));
    a.bswap_be(R1, 16);
    a.stx(Size::H, R6, layout.sport as i16, R1);
    a.alu_reg(0xb0, R9, R1);
    a.ldx(Size::W, R1, R8, 8);
    a.alu_imm(0x00, R1, i32::from(layout.dst_first.0));
    a.bswap_be(R1, 16);
    a.stx(Size::H, R6, layout.dport as i16, R1);
    a.alu_reg(0x00, R9, R1);
    // Addresses: r1 = htobe32(first + index), stored; r4 accumulates their two 16-bit halves.
    for (i, (state_off, first, field)) in [
        (4, layout.src_first.1, layout.saddr),
        (12, layout.dst_first.1, layout.daddr),
    ]
    .into_iter()
    .enumerate()
    {
        a.ldx(Size::W, R1, R8, state_off);
        a.add32_imm(R1, first);
        a.bswap_be(R1, 32);
        a.stx(Size::W, R6, field as i16, R1);
        a.alu_reg(0xb0, R2, R1);
        a.alu_imm(0x50, R2, 0xffff);
        a.alu_imm(0x70, R1, 16);
        a.alu_reg(0x00, R1, R2);
        a.alu_reg(if i == 0 { 0xb0 } else { 0x00 }, R4, R1);
    }
    a.alu_reg(0x00, R9, R4);
    if let Some(off) = layout.ip_csum {
        a.alu_reg(0xb0, R1, R4);
        a.alu_imm(0x00, R1, layout.ip_base as i32);
        a.fold_not(R1, R2);
        a.stx(Size::H, R6, off as i16, R1);
    }
    let nonzero = a.label();
    a.alu_imm(0x00, R9, layout.udp_base as i32);
    a.fold_not(R9, R2);
    a.jmp_imm(0x55, R9, 0, nonzero);
    a.alu_imm(0xb0, R9, 0xffff); // RFC 768: a computed zero is sent as all ones
    a.bind(nonzero);
    a.stx(Size::H, R6, layout.udp_csum as i16, R9);
    if carry.is_some() {
        // The checksum is the zero payload's: a probe's bytes left by an earlier use of the
        // page would also be logged as a probe sent.
        for off in (hdr..probe_len).step_by(8) {
            let size = if probe_len - off >= 8 {
                Size::Dw
            } else {
                Size::H
            };
            a.st(size, R6, off as i16, 0);
        }
    }
    // The odometer: each counter that wraps carries into the next (see FlowPos::next).
    let stores: Vec<usize> = (0..4).map(|_| a.label()).collect();
    let regs = [R1, R2, R3, R5];
    for i in 0..4 {
        a.ldx(Size::W, regs[i], R8, 4 * i as i16);
        a.alu_imm(0x00, regs[i], 1);
        a.jmp_imm(0x55, regs[i], layout.counts[i] as i32, stores[i]);
        a.alu_imm(0xb0, regs[i], 0);
    }
    for i in (0..4).rev() {
        a.bind(stores[i]);
        a.stx(Size::W, R8, 4 * i as i16, regs[i]);
    }
    let counted = a.label();
    a.jmp_imm(0x55, R7, 0, counted);
    a.ldx(Size::Dw, R1, R8, state::SENT);
    a.alu_imm(0x00, R1, 1);
    a.stx(Size::Dw, R8, state::SENT, R1);
    a.bind(counted);
    redirect(&mut a, ifindex, carry);
    // At the limit, wait as for a frame not yet due: an owed one may come.
    a.bind(at_limit);
    a.call(BPF_FUNC_KTIME_GET_NS);
    // Not due yet: read the clock again while reads are left (the one backward jump).
    a.bind(not_yet);
    a.alu_imm(0x00, R9, -1);
    a.jmp_imm(0x55, R9, 0, top);
    a.bind(drop);
    a.alu_imm(0xb0, R0, XDP_DROP);
    a.exit();
    a.finish()
}

/// Emits the program's end: r0 = redirect to interface `ifindex`, or through the device map
/// `carry` when it carries probes; exit.
fn redirect(a: &mut Asm, ifindex: u32, carry: Option<i32>) {
    match carry {
        Some(devmap) => {
            a.ld_map(R1, devmap);
            a.alu_imm(0xb0, R2, 0);
            a.alu_imm(0xb0, R3, 0);
            a.call(BPF_FUNC_REDIRECT_MAP);
        }
        None => {
            a.alu_imm(0xb0, R1, ifindex as i32);
            a.alu_imm(0xb0, R2, 0);
            a.call(BPF_FUNC_REDIRECT);
        }
    }
    a.exit();
}

/// Emits the copy of the probe in the ring slot at r2 into the frame (r6): its first `len`
/// bytes, 8 at a time, then 4 and 2 (a probe's length is even).
fn copy_probe(a: &mut Asm, len: usize) {
    let mut off = 0;
    for (size, width) in [(Size::Dw, 8), (Size::W, 4), (Size::H, 2)] {
        while len - off >= width {
            a.ldx(size, R1, R2, state::PROBE_RING + 8 + off as i16);
            a.stx(size, R6, off as i16, R1);
            off += width;
        }
    }
}

/// A loaded frame-writing program, its state map and the frame it starts from.
#[derive(Debug)]
pub(crate) struct XdpEngine {
    /// The program (which holds its state map; so does the mapping).
    prog: OwnedFd,
    /// Its instructions, map fd left out: its name in the `pool` it goes back to.
    key: Vec<u8>,
    frame: Vec<u8>,
    limit: u64,
    /// Frames per kernel batch ([`kernel_batch`] of the pace it was made with).
    batch: u32,
    state: Arc<Mapped>,
    /// The log of the probes it carries, when it carries them.
    sent: Option<Arc<Mutex<SentLog>>>,
}

/// The latency probes' way out through a running [`XdpEngine`] that carries them
/// ([`XdpEngine::carrier`]): a ring in its state, whose probes its program sends when due
/// before any frame of the load, and the log of the time each was handed to the interface. The
/// probes then reach the next hop as the load does, XDP frames in its input queue: probes sent
/// from a socket, taken by the virtual DUT among the generator's frames, cost it 1–3 % of its
/// rate at saturation (docs/latency.md).
#[derive(Debug, Clone)]
pub struct Carrier {
    state: Arc<Mapped>,
    sent: Arc<Mutex<SentLog>>,
    /// Probes offered so far: the next slot is theirs modulo [`PROBE_SLOTS`].
    tail: u64,
}

/// An engine's carrier lent to the probes' sender while the engine sends: in the cell from
/// [`Lent::new`] until this drops.
pub(crate) struct Lent<'a>(Option<&'a CarrierCell>);

impl<'a> Lent<'a> {
    /// Puts `engine`'s carrier (none if it carries no probes) in `cell`, if any.
    pub(crate) fn new(cell: Option<&'a CarrierCell>, engine: Option<&XdpEngine>) -> Lent<'a> {
        if let Some(cell) = cell {
            *cell.lock().unwrap_or_else(PoisonError::into_inner) =
                engine.and_then(XdpEngine::carrier);
        }
        Lent(cell)
    }
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        if let Some(cell) = self.0 {
            *cell.lock().unwrap_or_else(PoisonError::into_inner) = None;
        }
    }
}

/// `CLOCK_MONOTONIC` now, ns: the clock of the program's `bpf_ktime_get_ns`.
pub(crate) fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a live timespec the call fills; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Where a generator that carries latency probes puts its [`Carrier`] while it sends, for the
/// probes' sender to take (`None` the rest of the time).
pub type CarrierCell = Arc<Mutex<Option<Carrier>>>;

impl Carrier {
    /// Puts `frame`'s first bytes (its headers and probe payload, [`PROBE_BYTES`] at most) in
    /// the ring, for the program to send at `due_ns` (`CLOCK_MONOTONIC`, as [`monotonic_ns`]);
    /// false, and nothing written, while the ring is full.
    pub(crate) fn offer(&mut self, frame: &[u8], due_ns: u64) -> bool {
        let at = state::PROBE_RING as usize + (self.tail as usize % PROBE_SLOTS) * PROBE_SLOT;
        let due = self.state.word(at);
        if due.load(Ordering::Acquire) != 0 {
            return false;
        }
        for (i, chunk) in frame[..frame.len().min(PROBE_BYTES)].chunks(8).enumerate() {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.state
                .word(at + 8 + 8 * i)
                .store(u64::from_ne_bytes(w), Ordering::Relaxed);
        }
        // Release: the program that sees the due time reads the frame written before.
        due.store(due_ns.max(1), Ordering::Release);
        self.tail += 1;
        true
    }

    /// Takes up where the program is: the next probe offered goes in the slot it reads next
    /// (a new stream on a generator that carried an earlier one).
    pub(crate) fn resume(&mut self) {
        self.tail = self
            .state
            .word(state::PROBE_HEAD as usize)
            .load(Ordering::Acquire);
    }

    /// How long ahead of its time a probe may be offered.
    pub(crate) fn ahead(&self) -> Duration {
        PROBE_AHEAD
    }

    /// The probes offered and not yet taken by the program.
    pub(crate) fn waiting(&self) -> u64 {
        let head = self.state.word(state::PROBE_HEAD as usize);
        self.tail.saturating_sub(head.load(Ordering::Acquire))
    }

    /// Empties the ring of the probes the program has not taken (the generator stopped):
    /// returns how many were there, newest last, never sent.
    pub(crate) fn withdraw(&mut self) -> u64 {
        let mut withdrawn = 0;
        for i in 0..PROBE_SLOTS {
            let at = state::PROBE_RING as usize + i * PROBE_SLOT;
            withdrawn += u64::from(self.state.word(at).swap(0, Ordering::AcqRel) != 0);
        }
        withdrawn
    }

    /// Hands `sent` each probe sent since the last call, with the time it was handed to the
    /// interface (ns since the epoch, `CLOCK_REALTIME`); returns how many.
    pub(crate) fn read(&self, sent: impl FnMut(Probe, u64)) -> Result<usize, Overrun> {
        self.sent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .read(sent)
    }
}

/// Reads how many frames an [`XdpEngine`] has sent and sets its pace, from any thread.
#[derive(Debug, Clone)]
pub(crate) struct XdpCounter {
    state: Arc<Mapped>,
}

impl XdpCounter {
    /// Frames sent so far (exact once the sending thread is back from the kernel).
    pub(crate) fn sent(&self) -> u64 {
        self.state
            .word(state::SENT as usize)
            .load(Ordering::Relaxed)
    }

    /// Owed frames sent again so far (not in [`XdpCounter::sent`]).
    pub(crate) fn resent(&self) -> u64 {
        self.state
            .word(state::RESENT as usize)
            .load(Ordering::Relaxed)
    }

    /// Owed frames not yet sent again.
    pub(crate) fn owed(&self) -> u64 {
        self.state
            .word(state::OWED as usize)
            .load(Ordering::Relaxed)
    }

    /// Owes `n` more frames: the program sends them before any new one, unpaced.
    pub(crate) fn owe(&self, n: u64) {
        self.state
            .word(state::OWED as usize)
            .fetch_add(n, Ordering::Relaxed);
    }

    /// Sends no new frame from now on, only those owed: the limit becomes the count so far
    /// (a run already past the limit's check may still add one).
    pub(crate) fn close(&self) {
        let sent = self
            .state
            .word(state::SENT as usize)
            .load(Ordering::Relaxed);
        self.state
            .word(state::LIMIT as usize)
            .store(sent, Ordering::Relaxed);
    }

    /// Paces the frames at `pps` from the next one on; an engine made unpaced stays so.
    pub(crate) fn set_rate(&self, pps: u64) {
        let word = |off: i16| self.state.word(off as usize);
        if word(state::INTERVAL).load(Ordering::Relaxed) == 0 {
            return;
        }
        let pace = Pace::new(Some(pps));
        word(state::GAP).store(pace.gap, Ordering::Relaxed);
        word(state::BURST).store(pace.burst, Ordering::Relaxed);
        word(state::INTERVAL).store(pace.interval, Ordering::Relaxed);
    }
}

/// The pacing fields of the state for a rate (`None`: as fast as possible, all zero).
struct Pace {
    interval: u64,
    gap: u64,
    burst: u64,
}

impl Pace {
    fn new(pps: Option<u64>) -> Pace {
        let interval = pps.map_or(0, |pps| {
            ((1_000_000_000u128 << FIXED_SHIFT) / u128::from(pps.max(1))).max(1) as u64
        });
        Pace {
            interval,
            gap: pps.map_or(0, catch_up_gap),
            burst: interval * BURST_FRAMES,
        }
    }
}

impl XdpEngine {
    /// Takes the program for `spec`'s layout redirecting to interface `ifindex` from the
    /// `pool`, or loads it with a new state map, and starts its state over; must run in the
    /// sender's namespace.
    /// `pps` paces the frames in the program (`None`: as fast as possible); `limit` caps them;
    /// with `carry`, it carries latency probes ([`XdpEngine::carrier`]).
    pub(crate) fn new(
        spec: &FrameSpec,
        ifindex: u32,
        (pps, limit): (Option<u64>, Option<u64>),
        carry: bool,
    ) -> io::Result<XdpEngine> {
        let layout = FlowLayout::new(spec);
        // The program's instructions but for its maps' fds name it in the pool.
        let key = encode(&program(&layout, ifindex, -1, carry.then_some(-1)));
        let Loaded { prog, state, sent } = match pool::take(&key) {
            Some(loaded) => loaded,
            None => load_program(&layout, ifindex, carry)?,
        };
        let limit = limit.unwrap_or(u64::MAX);
        let pace = Pace::new(pps);
        // A kept program's state starts over: flows from the first, no frame sent or due.
        for off in (0..state::LEN as i16).step_by(8) {
            state.word(off as usize).store(0, Ordering::Relaxed);
        }
        for (off, v) in [
            (state::LIMIT, limit),
            (state::INTERVAL, pace.interval),
            (state::SLACK, SLACK_NS << FIXED_SHIFT),
            (state::GAP, pace.gap),
            (state::BURST, pace.burst),
        ] {
            state.word(off as usize).store(v, Ordering::Relaxed);
        }
        Ok(XdpEngine {
            prog,
            key,
            frame: build_frame(spec, FlowPos::default()),
            limit,
            batch: kernel_batch(pace.interval),
            state,
            sent,
        })
    }

    /// The way its program carries latency probes, when it was made to.
    /// (Each stream that takes it [`Carrier::resume`]s it first.)
    pub(crate) fn carrier(&self) -> Option<Carrier> {
        self.sent.as_ref().map(|sent| Carrier {
            state: Arc::clone(&self.state),
            sent: Arc::clone(sent),
            tail: 0,
        })
    }

    /// Runs the kernel's full batches whatever the pace: for `max` following the interface
    /// ([`crate::traffic::follow`]), whose pace only keeps the DUT's input queue full and
    /// changes every few ms, so evenly spaced frames buy nothing there (the latency probes run
    /// beside fixed loads), and the alternating design keeps the sender it was measured with.
    /// The README's default campaign with 2 µs batches there: forwarding at 1.0 Mpps, 12–18 of
    /// 30 blocks used; with full batches a quarter hour later: 1.19 Mpps, 26–27 of 30 (one run
    /// each, 2026-11-27). Full is [`FULL_BATCH`], not [`KERNEL_BATCH`]: see there.
    pub(crate) fn full_batches(mut self) -> XdpEngine {
        self.batch = FULL_BATCH;
        self
    }

    /// A handle that reads the sent counter and sets the pace from another thread.
    pub(crate) fn counter(&self) -> XdpCounter {
        XdpCounter {
            state: Arc::clone(&self.state),
        }
    }

    /// Sends until the limit, or until `stop` is set and a signal interrupts the kernel's loop
    /// (see [`super::os::interrupt`]); returns the frames sent. With `hold`, goes on past the
    /// limit until `stop`, sending only the frames owed ([`XdpCounter::owe`]).
    ///
    /// Each `BPF_PROG_TEST_RUN` call runs as long as possible: setting up and tearing down its
    /// page pool costs an RCU grace period (tens of ms here), a gap in the traffic.
    pub(crate) fn run(&mut self, stop: &AtomicBool, hold: bool) -> io::Result<u64> {
        let counter = self.counter();
        let paced = self
            .state
            .word(state::INTERVAL as usize)
            .load(Ordering::Relaxed)
            != 0;
        loop {
            let sent = counter.sent();
            if (sent >= self.limit && !hold) || stop.load(Ordering::Relaxed) {
                return Ok(sent);
            }
            // Unpaced, every run sends: ask for exactly what is left. Paced (or holding), a
            // run may drop its frame (below ~100 Kpps), so the count of runs says nothing.
            let repeat = if paced || hold {
                u32::MAX
            } else {
                (self.limit - sent).min(u64::from(u32::MAX)) as u32
            };
            match self.test_run(repeat) {
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                other => other?,
            }
        }
    }

    fn test_run(&mut self, repeat: u32) -> io::Result<()> {
        let mut attr = [0u8; ATTR_LEN];
        put_u32(&mut attr, 0, self.prog.as_raw_fd() as u32);
        put_u32(&mut attr, 8, self.frame.len() as u32);
        put_u64(&mut attr, 16, self.frame.as_ptr() as u64);
        put_u32(&mut attr, 32, repeat);
        put_u32(&mut attr, 64, BPF_F_TEST_XDP_LIVE_FRAMES);
        put_u32(&mut attr, 72, self.batch);
        bpf(BPF_PROG_TEST_RUN, &mut attr).map(|_| ())
    }
}

impl Drop for XdpEngine {
    fn drop(&mut self) {
        // A program whose fd cannot be duplicated is not kept: the next engine loads its own.
        if let Ok(prog) = self.prog.try_clone() {
            let state = Arc::clone(&self.state);
            let sent = self.sent.take();
            pool::give(std::mem::take(&mut self.key), Loaded { prog, state, sent });
        }
    }
}

/// Creates a state map, maps its value and loads the program for `layout` on it (with
/// `carry`, and the log of the probes it carries); must run in the sender's namespace.
fn load_program(layout: &FlowLayout, ifindex: u32, carry: bool) -> io::Result<Loaded> {
    let map = array_map(state::LEN, b"bl_state")?;
    let sent = carry.then(|| SentLog::new(ifindex)).transpose()?;
    let devmap = sent.as_ref().map(SentLog::devmap);
    let code = encode(&program(layout, ifindex, map.as_raw_fd(), devmap));
    // A rejection is reloaded with the verifier's log, to say why.
    let prog = load(
        (BPF_PROG_TYPE_XDP, 0),
        &code,
        b"bl_frame",
        "the XDP program",
    )?;
    let state = Arc::new(Mapped::new(&map, state::LEN)?);
    let sent = sent.map(|s| Arc::new(Mutex::new(s)));
    Ok(Loaded { prog, state, sent })
}

/// The gap between frames while catching up, ns << 8: the rate asked times [`CATCH_UP`], or
/// [`CATCH_UP_MIN_PPS`] more, whichever is faster.
fn catch_up_gap(pps: u64) -> u64 {
    let pps = pps as f64;
    let rate = (pps * CATCH_UP).max(pps + CATCH_UP_MIN_PPS);
    (f64::from(1u32 << FIXED_SHIFT) * 1e9 / rate) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paced_batch_spans_two_microseconds_of_the_schedule() {
        let batch = |pps| kernel_batch(Pace::new(pps).interval);
        assert_eq!(batch(None), KERNEL_BATCH);
        assert_eq!(batch(Some(100_000)), 1);
        assert_eq!(batch(Some(1_500_000)), 3);
        assert_eq!(batch(Some(100_000_000)), KERNEL_BATCH);
    }

    #[test]
    fn program_ends_in_exits_and_jumps_stay_inside() {
        let spec = FrameSpec::new(
            "02:00:00:00:00:01".parse().unwrap(),
            "02:00:00:00:00:02".parse().unwrap(),
            "198.18.10.1:2000-198.18.10.20".parse().unwrap(),
            "198.19.10.1:2000-198.19.10.100".parse().unwrap(),
            64,
        )
        .unwrap();
        for carry in [None, Some(4)] {
            jumps_inside(&program(&FlowLayout::new(&spec), 7, 3, carry));
        }
    }

    fn jumps_inside(p: &[Insn]) {
        assert_eq!(p.last().unwrap().code, 0x95);
        let mut backward = 0;
        for (pc, i) in p.iter().enumerate() {
            if matches!(i.code, 0x05 | 0x15 | 0x55 | 0x2d | 0x3d | 0xad | 0xbd) {
                let target = pc as isize + 1 + i.off as isize;
                assert!(target >= 0 && (target as usize) < p.len(), "jump at {pc}");
                backward += usize::from(target <= pc as isize);
            }
        }
        // The wait (for a due frame, or an owed one at the limit) is the program's one loop.
        assert_eq!(backward, 1);
    }
}
