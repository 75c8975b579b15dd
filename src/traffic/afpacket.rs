//! AF_PACKET engine: `sendmmsg(2)` on a raw packet socket with `PACKET_QDISC_BYPASS`.
//!
//! Portable (any interface, any Linux since 3.14) and about as fast as trafgen's TX ring
//! (≈ 1.1 Mpps on one CPU here). Frames are written per packet from [`FlowLayout`](crate::traffic::packet::FlowLayout), so flows
//! vary packet by packet. A frame the device refuses (`ENOBUFS`: a full TX ring, or for a veth
//! the peer's full input queue) is sent again, so a fixed count always reaches the device.
// FFI: packet sockets, setsockopt and sendmmsg have no std wrapper.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::pace::wait_until;
use super::packet::{FlowLayout, FlowPos, FrameSpec};
use super::{GenConfig, Limit, Rate};

/// Most frames one `sendmmsg` call takes.
pub(crate) const MAX_BURST: usize = 1024;

/// Frames per `sendmmsg` call at full speed.
const PACKET_MAX_BURST: u32 = 256;
/// Largest burst at a fixed rate: well under a veth's 256-frame input ring.
const RATE_MAX_BURST: u32 = 64;
/// The last stretch before a burst is due that is spun, not slept: a sleep overshoots by tens
/// of µs, which at a paced rate is lost load.
const SPIN: Duration = Duration::from_micros(100);

/// AF_PACKET frames per `sendmmsg` when none is given: 256 at `max`; at a fixed rate one burst
/// a millisecond (at most 64 packets), so that packets stay evenly spread. (The XDP engine
/// paces frame by frame in the kernel and has no bursts.)
pub(crate) fn default_burst(rate: Rate) -> u32 {
    match rate {
        Rate::Max => PACKET_MAX_BURST,
        Rate::Pps(pps) => (pps / 1000).clamp(1, u64::from(RATE_MAX_BURST)) as u32,
    }
}

/// A packet socket bound to the sending interface, with a buffer per frame of a burst.
pub(crate) struct PacketEngine {
    fd: OwnedFd,
    spec: FrameSpec,
    layout: FlowLayout,
    pos: FlowPos,
    bufs: Vec<Vec<u8>>,
}

impl PacketEngine {
    /// Opens the socket on `ifindex`; must run in the sender's namespace.
    pub(crate) fn new(spec: &FrameSpec, ifindex: u32) -> io::Result<PacketEngine> {
        // Protocol 0: this socket only sends, it never receives a copy of the traffic.
        // SAFETY: socket(2) takes no pointers; a non-negative result is a descriptor we own.
        let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd was just returned by socket(2).
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: sockaddr_ll is plain data; zeroed then filled, passed with its exact size.
        let rc = unsafe {
            let mut sll: libc::sockaddr_ll = std::mem::zeroed();
            sll.sll_family = libc::AF_PACKET as u16;
            sll.sll_ifindex = ifindex as i32;
            libc::bind(
                fd.as_raw_fd(),
                (&sll as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        let one: libc::c_int = 1;
        // SAFETY: the option value is a live c_int passed with its size.
        let rc = unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_QDISC_BYPASS,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as u32,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        let layout = FlowLayout::new(spec);
        let bufs = vec![vec![0u8; spec.wire_len()]; MAX_BURST];
        Ok(PacketEngine {
            fd,
            spec: spec.clone(),
            layout,
            pos: FlowPos::default(),
            bufs,
        })
    }

    /// Sends exactly `n` frames (at most [`MAX_BURST`]), the next flows in order.
    pub(crate) fn send(&mut self, n: u32) -> io::Result<()> {
        let n = n as usize;
        assert!(n <= MAX_BURST, "burst above MAX_BURST");
        for buf in &mut self.bufs[..n] {
            self.layout.write(&mut buf[..], self.pos);
            self.pos = self.pos.next(&self.spec);
        }
        let mut iovs: Vec<libc::iovec> = self.bufs[..n]
            .iter_mut()
            .map(|b| libc::iovec {
                iov_base: b.as_mut_ptr().cast(),
                iov_len: b.len(),
            })
            .collect();
        // SAFETY: mmsghdr is plain data; zeroed means no address, no control data.
        let mut msgs: Vec<libc::mmsghdr> = iovs
            .iter_mut()
            .map(|iov| {
                let mut m: libc::mmsghdr = unsafe { std::mem::zeroed() };
                m.msg_hdr.msg_iov = iov;
                m.msg_hdr.msg_iovlen = 1;
                m
            })
            .collect();
        let mut done = 0;
        while done < n {
            // SAFETY: msgs[done..n] are live headers whose iovecs point into self.bufs, which
            // outlive the call.
            let rc = unsafe {
                libc::sendmmsg(
                    self.fd.as_raw_fd(),
                    msgs[done..].as_mut_ptr(),
                    (n - done) as u32,
                    0,
                )
            };
            if rc < 0 {
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::ENOBUFS | libc::EAGAIN | libc::EINTR) => {
                        std::hint::spin_loop();
                        continue;
                    }
                    _ => return Err(e),
                }
            }
            done += rc as usize;
        }
        Ok(())
    }

    /// Sends bursts of `burst` frames, each at its due time at a fixed rate, from `start` until
    /// `cfg`'s limit or `halt`; keeps `sent_out` up to date and returns the frames sent.
    pub(super) fn paced_loop(
        &mut self,
        cfg: &GenConfig,
        burst: u32,
        (start, halt): (Instant, &AtomicBool),
        sent_out: &AtomicU64,
    ) -> io::Result<u64> {
        let mut sent: u64 = 0;
        while !halt.load(Ordering::Relaxed) {
            let n = match cfg.limit {
                Limit::Count(c) if sent >= c => break,
                Limit::Count(c) => u64::from(burst).min(c - sent) as u32,
                _ => burst,
            };
            if let Rate::Pps(pps) = cfg.rate {
                let due = start + Duration::from_secs_f64(sent as f64 / pps as f64);
                if matches!(cfg.limit, Limit::Duration(d) if due >= start + d)
                    || !wait_until(due, halt, SPIN)
                {
                    break;
                }
            }
            self.send(n)?;
            sent += u64::from(n);
            sent_out.store(sent, Ordering::Relaxed);
            if matches!(cfg.limit, Limit::Duration(d) if start.elapsed() >= d) {
                break;
            }
        }
        Ok(sent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bursts_are_large_at_max_and_a_millisecond_at_a_rate() {
        assert_eq!(default_burst(Rate::Max), PACKET_MAX_BURST);
        assert_eq!(default_burst(Rate::Pps(100)), 1);
        assert_eq!(default_burst(Rate::Pps(20_000)), 20);
        assert_eq!(default_burst(Rate::Pps(5_000_000)), RATE_MAX_BURST);
    }
}
