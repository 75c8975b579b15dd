//! The probes' packet sockets and the kernel's software timestamps on them.
//!
//! Both sockets ask for `SO_TIMESTAMPING` software stamps, which the kernel takes on
//! `CLOCK_REALTIME`: the sender's `SOF_TIMESTAMPING_TX_SOFTWARE` (taken in the driver's transmit
//! routine, `skb_tx_timestamp`, and looped back on the socket's error queue with the frame), the
//! receiver's `SOF_TIMESTAMPING_RX_SOFTWARE` (taken when the frame enters the receiving
//! interface's stack, `netif_rx` / `netif_receive_skb`, before any tap or socket sees it).
// FFI: packet sockets, socket filters, timestamping options and recvmsg's control messages have
// no std wrapper.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

use super::frame::{SockFilter, FILTER};

const ETH_P_ALL: u16 = 0x0003;
/// Room for the control messages of one frame: a `scm_timestamping` (3 timespecs) and, on the
/// error queue, a `sock_extended_err`.
const CONTROL_LEN: usize = 256;

/// Which queue [`PacketSocket::recv`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Queue {
    /// Frames received; `wait`: up to the socket's timeout for one.
    Receive {
        /// Whether to wait for a frame when none is queued.
        wait: bool,
    },
    /// Frames sent, looped back with their transmit time; never waits.
    Errors,
}

/// A packet socket bound to one interface.
#[derive(Debug)]
pub(crate) struct PacketSocket {
    fd: OwnedFd,
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

impl PacketSocket {
    fn open(
        ifindex: u32,
        protocol: u16,
        setup: impl FnOnce(&Self) -> io::Result<()>,
    ) -> io::Result<Self> {
        // Protocol 0 until bound: nothing is queued before the filter and options are set.
        // SAFETY: socket(2) takes no pointers; a non-negative result is a descriptor we own.
        let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        check(fd)?;
        // SAFETY: fd was just returned by socket(2).
        let sock = PacketSocket {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        };
        setup(&sock)?;
        // SAFETY: sockaddr_ll is plain data; zeroed then filled, passed with its exact size.
        let rc = unsafe {
            let mut sll: libc::sockaddr_ll = std::mem::zeroed();
            sll.sll_family = libc::AF_PACKET as u16;
            sll.sll_protocol = protocol.to_be();
            sll.sll_ifindex = ifindex as i32;
            libc::bind(
                sock.fd.as_raw_fd(),
                (&sll as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            )
        };
        check(rc)?;
        Ok(sock)
    }

    /// The probe sender's socket on `ifindex`: past the qdisc (as the load's engines), the
    /// driver's transmit time of each frame looped back with it.
    pub(crate) fn sender(ifindex: u32) -> io::Result<Self> {
        Self::open(ifindex, 0, |s| {
            s.set(libc::SOL_PACKET, libc::PACKET_QDISC_BYPASS, 1)?;
            s.set(
                libc::SOL_SOCKET,
                libc::SO_TIMESTAMPING,
                (libc::SOF_TIMESTAMPING_TX_SOFTWARE | libc::SOF_TIMESTAMPING_SOFTWARE) as i32,
            )
        })
    }

    /// The probe receiver's socket on `ifindex`: probes only ([`FILTER`]), each with its
    /// arrival time, waking every `poll` to look at the clock.
    pub(crate) fn receiver(ifindex: u32, poll: Duration) -> io::Result<Self> {
        Self::open(ifindex, ETH_P_ALL, |s| {
            s.attach_filter(&FILTER)?;
            s.set(
                libc::SOL_SOCKET,
                libc::SO_TIMESTAMPING,
                (libc::SOF_TIMESTAMPING_RX_SOFTWARE | libc::SOF_TIMESTAMPING_SOFTWARE) as i32,
            )?;
            // Room for a second of probes at 100 kpps while the thread is away.
            s.set(libc::SOL_SOCKET, libc::SO_RCVBUF, 8 << 20)?;
            s.set(libc::SOL_PACKET, libc::PACKET_IGNORE_OUTGOING, 1)?;
            s.timeout(poll)
        })
    }

    fn set(&self, level: libc::c_int, name: libc::c_int, value: libc::c_int) -> io::Result<()> {
        // SAFETY: the option value is a live c_int passed with its size.
        check(unsafe {
            libc::setsockopt(
                self.fd.as_raw_fd(),
                level,
                name,
                (&value as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as u32,
            )
        })
    }

    fn timeout(&self, d: Duration) -> io::Result<()> {
        let tv = libc::timeval {
            tv_sec: d.as_secs() as libc::time_t,
            tv_usec: d.subsec_micros() as libc::suseconds_t,
        };
        // SAFETY: the timeval lives for the call and is passed with its size.
        check(unsafe {
            libc::setsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                (&tv as *const libc::timeval).cast(),
                std::mem::size_of::<libc::timeval>() as u32,
            )
        })
    }

    fn attach_filter(&self, program: &[SockFilter]) -> io::Result<()> {
        let prog = libc::sock_fprog {
            len: program.len() as u16,
            // The kernel copies the program and never writes it; SockFilter is
            // `struct sock_filter`'s layout (repr(C)).
            filter: program.as_ptr() as *mut libc::sock_filter,
        };
        // SAFETY: prog points at `program`, alive for the call, with its length.
        check(unsafe {
            libc::setsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_ATTACH_FILTER,
                (&prog as *const libc::sock_fprog).cast(),
                std::mem::size_of::<libc::sock_fprog>() as u32,
            )
        })
    }

    /// Sends one frame in one syscall.
    pub(crate) fn send(&self, frame: &[u8]) -> io::Result<()> {
        // SAFETY: the buffer is live and passed with its length.
        let n = unsafe { libc::send(self.fd.as_raw_fd(), frame.as_ptr().cast(), frame.len(), 0) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Reads one frame of `queue` into `buf` with its software timestamp (ns since the epoch):
    /// its length and stamp, or `Ok(None)` when none came (timeout, empty queue).
    pub(crate) fn recv(
        &self,
        buf: &mut [u8],
        queue: Queue,
    ) -> io::Result<Option<(usize, Option<u64>)>> {
        let mut control = [0u64; CONTROL_LEN / 8];
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        // SAFETY: msghdr is plain data; zeroed means no address; iov and control point at live
        // buffers of the lengths given.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = CONTROL_LEN;
        let flags = match queue {
            Queue::Receive { wait: true } => 0,
            Queue::Receive { wait: false } => libc::MSG_DONTWAIT,
            Queue::Errors => libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT,
        };
        // SAFETY: msg and everything it points at outlive the call.
        let n = unsafe { libc::recvmsg(self.fd.as_raw_fd(), &mut msg, flags) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::EAGAIN | libc::EINTR) => Ok(None),
                _ => Err(e),
            };
        }
        Ok(Some(((n as usize).min(buf.len()), software_stamp(&msg))))
    }
}

/// The software timestamp of a received message's `SCM_TIMESTAMPING`, if it has one.
fn software_stamp(msg: &libc::msghdr) -> Option<u64> {
    // SAFETY: msg was filled by recvmsg; the CMSG macros walk its control buffer within
    // msg_controllen, and an SCM_TIMESTAMPING message holds three timespecs (read unaligned).
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPING {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<libc::timespec>());
                if ts.tv_sec == 0 && ts.tv_nsec == 0 {
                    return None;
                }
                return Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
            }
            c = libc::CMSG_NXTHDR(msg, c);
        }
    }
    None
}
