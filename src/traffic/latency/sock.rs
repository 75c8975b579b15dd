//! The probes' sockets, the kernel's software timestamps on them, and batched reads.
//!
//! Every socket asks for `SO_TIMESTAMPING` software stamps, which the kernel takes on
//! `CLOCK_REALTIME`: the sender's `SOF_TIMESTAMPING_TX_SOFTWARE` (taken in the driver's transmit
//! routine, `skb_tx_timestamp`, and looped back on the socket's error queue with the frame), the
//! receiver's `SOF_TIMESTAMPING_RX_SOFTWARE` (taken when the frame enters the receiving
//! interface's stack, `netif_rx` / `netif_receive_skb`, before any tap, queue or socket sees it).
//! Reads never wait and take up to [`BATCH`](crate::traffic::latency::sock::BATCH) messages in one `recvmmsg`: on a virtual machine
//! each system call and each wake-up is a trip through the hypervisor, which the probes' threads
//! would otherwise pay per probe.
// FFI: packet and raw sockets, socket filters, timestamping options and recvmmsg's control
// messages have no std wrapper.
#![allow(unsafe_code)]

use std::io;
use std::net::IpAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use super::filter::{SockFilter, FILTER};
use super::frame::{self, Probe};

const ETH_P_ALL: u16 = 0x0003;
/// Room for the control messages of one frame: a `scm_timestamping` (3 timespecs) and, on the
/// error queue, a `sock_extended_err`.
const CONTROL_LEN: usize = 256;
/// Bytes kept of each message read: a probe's headers and payload (80 at most, IPv6 in
/// Ethernet); the rest of a larger probe is cut off.
const SNAP: usize = 128;
/// Most messages one read takes.
pub(crate) const BATCH: usize = 64;
/// The receiving socket's buffer: 5 ms of probes at the highest rate while its thread sleeps.
const RECEIVE_BUFFER: libc::c_int = 8 << 20;

/// Which queue [`ProbeSocket::recv`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Queue {
    /// Frames received.
    Receive,
    /// Frames sent, looped back with their transmit time.
    Errors,
}

/// What a socket's messages start with, for [`Batch::probes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layer {
    /// The Ethernet header: a packet socket's frames.
    Ethernet,
    /// The IPv4 header: an IPv4 raw socket's packets.
    Ipv4,
    /// The UDP header: an IPv6 raw socket's datagrams (the kernel strips the IP header).
    Udp,
}

/// A socket of the probes: a packet socket on one interface, or a raw UDP socket on one
/// address.
#[derive(Debug)]
pub(crate) struct ProbeSocket {
    fd: OwnedFd,
    layer: Layer,
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The byte count a send or receive call returned, or its error.
fn check_len(n: isize) -> io::Result<usize> {
    usize::try_from(n).map_err(|_| io::Error::last_os_error())
}

impl ProbeSocket {
    /// A socket of `domain`, `protocol` (network order for a packet socket), read as `layer`.
    fn open(domain: libc::c_int, protocol: libc::c_int, layer: Layer) -> io::Result<Self> {
        // SAFETY: socket(2) takes no pointers; a non-negative result is a descriptor we own.
        let fd = unsafe { libc::socket(domain, libc::SOCK_RAW | libc::SOCK_CLOEXEC, protocol) };
        check(fd)?;
        Ok(ProbeSocket {
            // SAFETY: fd was just returned by socket(2).
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            layer,
        })
    }

    /// A packet socket bound to `ifindex` for `protocol`, set up by `setup` before it is bound.
    fn packet(
        ifindex: u32,
        protocol: u16,
        setup: impl FnOnce(&Self) -> io::Result<()>,
    ) -> io::Result<Self> {
        // Protocol 0 until bound: nothing is queued before the filter and options are set.
        let sock = Self::open(libc::AF_PACKET, 0, Layer::Ethernet)?;
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
        Self::packet(ifindex, 0, |s| {
            s.set(libc::SOL_PACKET, libc::PACKET_QDISC_BYPASS, 1)?;
            s.set(
                libc::SOL_SOCKET,
                libc::SO_TIMESTAMPING,
                (libc::SOF_TIMESTAMPING_TX_SOFTWARE | libc::SOF_TIMESTAMPING_SOFTWARE) as i32,
            )
        })
    }

    /// A receiver that taps `ifindex`: a packet socket that every frame passes, which lets only
    /// probes in ([`FILTER`]), each with its arrival time. It works on any receiver, but the
    /// kernel runs the tap and its filter for every frame of the load.
    pub(crate) fn tap(ifindex: u32) -> io::Result<Self> {
        Self::packet(ifindex, ETH_P_ALL, |s| {
            s.attach_filter(&FILTER)?;
            s.receive_stamps()?;
            s.set(libc::SOL_PACKET, libc::PACKET_IGNORE_OUTGOING, 1)
        })
    }

    /// A receiver for the probes sent to `addr`, an address of this namespace's own: a raw UDP
    /// socket bound to it. The kernel hands it only packets delivered to that address, so the
    /// load, never addressed to it, costs it nothing. Each probe comes with its arrival time.
    pub(crate) fn local(addr: IpAddr) -> io::Result<Self> {
        let (domain, layer) = match addr {
            IpAddr::V4(_) => (libc::AF_INET, Layer::Ipv4),
            IpAddr::V6(_) => (libc::AF_INET6, Layer::Udp),
        };
        let sock = Self::open(domain, libc::IPPROTO_UDP, layer)?;
        sock.receive_stamps()?;
        // SAFETY: the sockaddr_in or sockaddr_in6 is plain data, zeroed then filled, and passed
        // with its exact size.
        let rc = unsafe {
            match addr {
                IpAddr::V4(a) => {
                    let mut sin: libc::sockaddr_in = std::mem::zeroed();
                    sin.sin_family = libc::AF_INET as u16;
                    sin.sin_addr.s_addr = u32::from_ne_bytes(a.octets());
                    libc::bind(
                        sock.fd.as_raw_fd(),
                        (&sin as *const libc::sockaddr_in).cast(),
                        std::mem::size_of::<libc::sockaddr_in>() as u32,
                    )
                }
                IpAddr::V6(a) => {
                    let mut sin6: libc::sockaddr_in6 = std::mem::zeroed();
                    sin6.sin6_family = libc::AF_INET6 as u16;
                    sin6.sin6_addr.s6_addr = a.octets();
                    libc::bind(
                        sock.fd.as_raw_fd(),
                        (&sin6 as *const libc::sockaddr_in6).cast(),
                        std::mem::size_of::<libc::sockaddr_in6>() as u32,
                    )
                }
            }
        };
        check(rc)?;
        Ok(sock)
    }

    /// Arrival times on every message, and room for the probes that arrive while the
    /// receiving thread sleeps.
    fn receive_stamps(&self) -> io::Result<()> {
        self.set(
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPING,
            (libc::SOF_TIMESTAMPING_RX_SOFTWARE | libc::SOF_TIMESTAMPING_SOFTWARE) as i32,
        )?;
        // SO_RCVBUF is capped by net.core.rmem_max (208 KiB by default); root may force more.
        self.set(libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, RECEIVE_BUFFER)
            .or_else(|_| self.set(libc::SOL_SOCKET, libc::SO_RCVBUF, RECEIVE_BUFFER))
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
        check_len(n).map(|_| ())
    }

    /// Reads what `queue` holds, up to [`BATCH`] messages in one system call, into `batch`,
    /// without waiting: how many it read (0 when the queue was empty).
    pub(crate) fn recv(&self, batch: &mut Batch, queue: Queue) -> io::Result<usize> {
        batch.layer = self.layer;
        batch.read = 0;
        let mut iovs: Vec<libc::iovec> = batch
            .data
            .iter_mut()
            .map(|d| libc::iovec {
                iov_base: d.as_mut_ptr().cast(),
                iov_len: SNAP,
            })
            .collect();
        let mut msgs: Vec<libc::mmsghdr> = iovs
            .iter_mut()
            .zip(batch.control.iter_mut())
            .map(|(iov, control)| {
                // SAFETY: msghdr is plain data; zeroed means no address.
                let mut hdr: libc::msghdr = unsafe { std::mem::zeroed() };
                hdr.msg_iov = iov;
                hdr.msg_iovlen = 1;
                hdr.msg_control = control.as_mut_ptr().cast();
                hdr.msg_controllen = CONTROL_LEN;
                libc::mmsghdr {
                    msg_hdr: hdr,
                    msg_len: 0,
                }
            })
            .collect();
        let flags = match queue {
            Queue::Receive => libc::MSG_DONTWAIT,
            Queue::Errors => libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT,
        };
        // SAFETY: every header points at live buffers of the lengths given (iovs, batch's data
        // and control), all outliving the call; no timeout.
        let n = unsafe {
            libc::recvmmsg(
                self.fd.as_raw_fd(),
                msgs.as_mut_ptr(),
                BATCH as libc::c_uint,
                flags,
                std::ptr::null_mut(),
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::EAGAIN | libc::EINTR) => Ok(0),
                _ => Err(e),
            };
        }
        for (i, m) in msgs.iter().take(n as usize).enumerate() {
            batch.got[i] = ((m.msg_len as usize).min(SNAP), software_stamp(&m.msg_hdr));
        }
        batch.read = n as usize;
        Ok(batch.read)
    }
}

/// The buffers of one [`ProbeSocket::recv`] and what it read.
pub(crate) struct Batch {
    data: Vec<[u8; SNAP]>,
    control: Vec<[u64; CONTROL_LEN / 8]>,
    /// Each message's length (at most [`SNAP`]) and software timestamp.
    got: Vec<(usize, Option<u64>)>,
    /// How many messages the last read took.
    read: usize,
    /// What they start with.
    layer: Layer,
}

impl Batch {
    /// Room for [`BATCH`] messages.
    pub(crate) fn new() -> Batch {
        Batch {
            data: vec![[0; SNAP]; BATCH],
            control: vec![[0; CONTROL_LEN / 8]; BATCH],
            got: vec![(0, None); BATCH],
            read: 0,
            layer: Layer::Ethernet,
        }
    }

    /// The messages of the last read: the probe each holds (`None`: not a probe) and its
    /// software timestamp (ns since the epoch), in the order read.
    pub(crate) fn probes(&self) -> impl Iterator<Item = (Option<Probe>, Option<u64>)> + '_ {
        self.data
            .iter()
            .zip(&self.got)
            .take(self.read)
            .map(|(data, &(len, stamp))| {
                let bytes = &data[..len];
                let probe = match self.layer {
                    Layer::Ethernet => frame::decode(bytes),
                    Layer::Ipv4 => frame::decode_ipv4(bytes),
                    Layer::Udp => frame::decode_udp(bytes),
                };
                (probe, stamp)
            })
    }
}

/// How long the kernel may take to turn its receive stamps on.
const STAMPS_ON_WITHIN: Duration = Duration::from_secs(10);

/// Waits until the kernel stamps the frames it receives. Its switch for that
/// (`netstamp_needed_key`, one for every namespace) is turned on by a work item that the first
/// socket asking for receive stamps queues on its CPU; until the item runs, frames arrive
/// unstamped. A CPU taken by real-time threads (a virtual DUT forwarding at saturation in a
/// test beside) held it past a whole 2 s floor self-test: 18,000 probes, none stamped (CI,
/// 2026-11-27). Checked on loopback, in this thread's namespace: a datagram sent to itself,
/// again every millisecond, until one comes back stamped.
pub(crate) fn await_receive_stamps() -> io::Result<()> {
    // SAFETY: socket(2) takes no pointers; a non-negative result is a descriptor we own.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    check(fd)?;
    let sock = ProbeSocket {
        // SAFETY: fd was just returned by socket(2).
        fd: unsafe { OwnedFd::from_raw_fd(fd) },
        layer: Layer::Udp,
    };
    // SAFETY: a zeroed sockaddr_in is valid; bind, getsockname, sendto and recvmsg get
    // pointers to live buffers with their sizes.
    unsafe {
        let mut sin: libc::sockaddr_in = std::mem::zeroed();
        sin.sin_family = libc::AF_INET as u16;
        sin.sin_addr.s_addr = u32::from_ne_bytes([127, 0, 0, 1]);
        let mut len = std::mem::size_of::<libc::sockaddr_in>() as u32;
        let at = (&mut sin as *mut libc::sockaddr_in).cast::<libc::sockaddr>();
        check(libc::bind(sock.fd.as_raw_fd(), at, len))?;
        check(libc::getsockname(sock.fd.as_raw_fd(), at, &mut len))?;
        sock.receive_stamps()?;
        let deadline = Instant::now() + STAMPS_ON_WITHIN;
        loop {
            let byte = [0u8; 1];
            check_len(libc::sendto(
                sock.fd.as_raw_fd(),
                byte.as_ptr().cast(),
                1,
                0,
                at,
                len,
            ))?;
            let mut data = [0u8; 1];
            let mut iov = libc::iovec {
                iov_base: data.as_mut_ptr().cast(),
                iov_len: data.len(),
            };
            let mut control = [0u8; CONTROL_LEN];
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = control.len();
            // Loopback delivers within the sendto; a datagram not there yet is waited for.
            check_len(libc::recvmsg(sock.fd.as_raw_fd(), &mut msg, 0))?;
            if software_stamp(&msg).is_some() {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(io::Error::other(format!(
                    "the kernel did not turn its receive stamps on within {} s",
                    STAMPS_ON_WITHIN.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// The software timestamp of a received message's `SCM_TIMESTAMPING`, if it has one.
fn software_stamp(msg: &libc::msghdr) -> Option<u64> {
    // SAFETY: msg was filled by recvmmsg; the CMSG macros walk its control buffer within
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
