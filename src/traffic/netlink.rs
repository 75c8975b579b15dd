//! Just enough netlink: an interface's index, MAC and counters (rtnetlink `RTM_GETLINK`), its
//! root qdisc's drops (`RTM_GETQDISC`), and its XDP features (generic netlink family `netdev`).
//!
//! Netlink, unlike sysfs, works for any namespace from inside one process: a socket answers for
//! the namespace it was created in, whatever thread uses it later.
// FFI: netlink sockets (socket/send/recv) have no std wrapper.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const NLM_F_REQUEST: u16 = 1;
const NLM_F_ACK: u16 = 4;
const NLM_F_ECHO: u16 = 8;
const RTM_GETLINK: u16 = 18;
const RTM_NEWLINK: u16 = 16;
const IFLA_ADDRESS: u16 = 1;
const IFLA_IFNAME: u16 = 3;
const IFLA_MTU: u16 = 4;
const IFLA_STATS64: u16 = 23;
const RTM_NEWQDISC: u16 = 36;
const RTM_GETQDISC: u16 = 38;
const TCA_KIND: u16 = 1;
const TCA_STATS2: u16 = 7;
const TCA_STATS_QUEUE: u16 = 3;
/// `TC_H_ROOT`: the parent that names an interface's root qdisc.
const TC_H_ROOT: u32 = 0xffff_ffff;
const GENL_ID_CTRL: u16 = 0x10;
const CTRL_CMD_GETFAMILY: u8 = 3;
const CTRL_ATTR_FAMILY_ID: u16 = 1;
const CTRL_ATTR_FAMILY_NAME: u16 = 2;
const NETDEV_CMD_DEV_GET: u8 = 1;
const NETDEV_A_DEV_IFINDEX: u16 = 1;
const NETDEV_A_DEV_XDP_FEATURES: u16 = 3;
/// `NETDEV_XDP_ACT_NDO_XMIT`: the device takes XDP frames redirected to it.
pub(crate) const XDP_ACT_NDO_XMIT: u64 = 1 << 2;

/// An interface's counters (`struct rtnl_link_stats64`, the first 16 fields).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub(crate) struct LinkStats {
    /// Packets received.
    pub(crate) rx_packets: u64,
    /// Packets sent.
    pub(crate) tx_packets: u64,
    /// Bytes received.
    pub(crate) rx_bytes: u64,
    /// Bytes sent.
    pub(crate) tx_bytes: u64,
    /// Receive errors.
    pub(crate) rx_errors: u64,
    /// Transmit errors.
    pub(crate) tx_errors: u64,
    /// Packets dropped on receive (no buffer, backlog full…).
    pub(crate) rx_dropped: u64,
    /// Packets dropped on transmit (veth: the peer's queue was full).
    pub(crate) tx_dropped: u64,
    /// Receive FIFO overruns.
    pub(crate) rx_fifo_errors: u64,
    /// Packets the NIC missed (no descriptor).
    pub(crate) rx_missed_errors: u64,
}

impl LinkStats {
    /// Every packet lost at this interface: rx/tx dropped, FIFO overruns and misses.
    pub(crate) fn drops(&self) -> u64 {
        self.rx_dropped + self.tx_dropped + self.rx_fifo_errors + self.rx_missed_errors
    }

    /// Counters since `before` (wrapping, as kernel counters do).
    pub(crate) fn since(&self, before: &LinkStats) -> LinkStats {
        LinkStats {
            rx_packets: self.rx_packets.wrapping_sub(before.rx_packets),
            tx_packets: self.tx_packets.wrapping_sub(before.tx_packets),
            rx_bytes: self.rx_bytes.wrapping_sub(before.rx_bytes),
            tx_bytes: self.tx_bytes.wrapping_sub(before.tx_bytes),
            rx_errors: self.rx_errors.wrapping_sub(before.rx_errors),
            tx_errors: self.tx_errors.wrapping_sub(before.tx_errors),
            rx_dropped: self.rx_dropped.wrapping_sub(before.rx_dropped),
            tx_dropped: self.tx_dropped.wrapping_sub(before.tx_dropped),
            rx_fifo_errors: self.rx_fifo_errors.wrapping_sub(before.rx_fifo_errors),
            rx_missed_errors: self.rx_missed_errors.wrapping_sub(before.rx_missed_errors),
        }
    }
}

/// What `RTM_GETLINK` tells about one interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LinkInfo {
    /// Interface index in its namespace.
    pub(crate) ifindex: u32,
    /// Hardware address (empty for devices without one).
    pub(crate) mac: Vec<u8>,
    /// MTU in bytes.
    pub(crate) mtu: u32,
    /// Counters.
    pub(crate) stats: LinkStats,
}

/// What an interface's root qdisc holds and has dropped (`RTM_GETQDISC`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct QdiscQueue {
    /// Frames waiting in it now.
    pub(crate) frames: u64,
    /// Frames it dropped since it was created.
    pub(crate) drops: u64,
}

/// Seconds a request waits for the kernel's answer.
const ANSWER_TIMEOUT_S: libc::time_t = 2;

/// A netlink socket bound to the namespace it was opened in.
#[derive(Debug)]
pub(crate) struct Netlink {
    fd: OwnedFd,
    seq: u32,
    buf: Vec<u8>,
}

fn push_attr(msg: &mut Vec<u8>, kind: u16, data: &[u8]) {
    let len = 4 + data.len();
    msg.extend_from_slice(&(len as u16).to_ne_bytes());
    msg.extend_from_slice(&kind.to_ne_bytes());
    msg.extend_from_slice(data);
    msg.resize(msg.len().next_multiple_of(4), 0);
}

/// Iterates the attributes `(type, payload)` of a netlink attribute area.
fn attrs(mut area: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    std::iter::from_fn(move || {
        if area.len() < 4 {
            return None;
        }
        let len = usize::from(u16::from_ne_bytes([area[0], area[1]]));
        let kind = u16::from_ne_bytes([area[2], area[3]]) & 0x3fff;
        if len < 4 || len > area.len() {
            return None;
        }
        let data = &area[4..len];
        area = &area[len.next_multiple_of(4).min(area.len())..];
        Some((kind, data))
    })
}

fn u64_at(data: &[u8], i: usize) -> u64 {
    data.get(i * 8..i * 8 + 8)
        .map_or(0, |b| u64::from_ne_bytes(b.try_into().expect("8 bytes")))
}

impl Netlink {
    /// Opens a routing (`NETLINK_ROUTE`) socket in the calling thread's namespace.
    pub(crate) fn route() -> io::Result<Netlink> {
        Self::open(libc::NETLINK_ROUTE)
    }

    /// Opens a generic netlink socket in the calling thread's namespace.
    pub(crate) fn generic() -> io::Result<Netlink> {
        Self::open(libc::NETLINK_GENERIC)
    }

    fn open(protocol: libc::c_int) -> io::Result<Netlink> {
        // SAFETY: socket(2) takes no pointers; a non-negative result is a fresh descriptor we own.
        let fd = unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                protocol,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd was just returned by socket(2) and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // The kernel answers within microseconds; a request it does not answer at all (an
        // RTM_GETQDISC without NLM_F_ECHO did so) would otherwise block the thread, and the
        // trial with it, beyond Ctrl-C's reach.
        let timeout = libc::timeval {
            tv_sec: ANSWER_TIMEOUT_S,
            tv_usec: 0,
        };
        // SAFETY: the option value is a live timeval passed with its size.
        let rc = unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                (&timeout as *const libc::timeval).cast(),
                std::mem::size_of::<libc::timeval>() as u32,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Netlink {
            fd,
            seq: 0,
            buf: vec![0; 64 * 1024],
        })
    }

    /// Sends one request (`kind`, header bytes after nlmsghdr) and returns the payload of the
    /// single answer of type `answer` (after its nlmsghdr).
    fn request(&mut self, kind: u16, body: &[u8], answer: u16) -> io::Result<&[u8]> {
        self.send(kind, NLM_F_REQUEST, body, answer)
    }

    /// [`Self::request`] with `flags`: `NLM_F_ACK` for a request the kernel may answer with
    /// nothing (the ack, an error of 0, then ends the wait), `NLM_F_ECHO` for one it would
    /// otherwise answer to a multicast group.
    fn send(&mut self, kind: u16, flags: u16, body: &[u8], answer: u16) -> io::Result<&[u8]> {
        self.seq = self.seq.wrapping_add(1);
        let mut msg = Vec::with_capacity(16 + body.len());
        msg.extend_from_slice(&((16 + body.len()) as u32).to_ne_bytes());
        msg.extend_from_slice(&kind.to_ne_bytes());
        msg.extend_from_slice(&flags.to_ne_bytes());
        msg.extend_from_slice(&self.seq.to_ne_bytes());
        msg.extend_from_slice(&0u32.to_ne_bytes());
        msg.extend_from_slice(body);
        // SAFETY: msg is a live buffer of msg.len() bytes.
        let n = unsafe { libc::send(self.fd.as_raw_fd(), msg.as_ptr().cast(), msg.len(), 0) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        loop {
            // SAFETY: self.buf is a live, writable buffer of self.buf.len() bytes.
            let n = unsafe {
                libc::recv(
                    self.fd.as_raw_fd(),
                    self.buf.as_mut_ptr().cast(),
                    self.buf.len(),
                    0,
                )
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::WouldBlock {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("no netlink answer within {ANSWER_TIMEOUT_S} s"),
                    ));
                }
                return Err(e);
            }
            let n = n as usize;
            let mut off = 0;
            while off + 16 <= n {
                let h = &self.buf[off..n];
                let len = u32::from_ne_bytes(h[0..4].try_into().expect("4 bytes")) as usize;
                let typ = u16::from_ne_bytes([h[4], h[5]]);
                let seq = u32::from_ne_bytes(h[8..12].try_into().expect("4 bytes"));
                if len < 16 || off + len > n {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "truncated netlink message",
                    ));
                }
                if seq == self.seq {
                    match typ {
                        NLMSG_ERROR => {
                            let code = i32::from_ne_bytes(h[16..20].try_into().expect("4 bytes"));
                            if code == 0 {
                                return Err(io::Error::new(
                                    io::ErrorKind::NotFound,
                                    "no netlink answer but the ack",
                                ));
                            }
                            return Err(io::Error::from_raw_os_error(-code));
                        }
                        NLMSG_DONE => {
                            return Err(io::Error::new(
                                io::ErrorKind::NotFound,
                                "empty netlink answer",
                            ))
                        }
                        t if t == answer => return Ok(&self.buf[off + 16..off + len]),
                        _ => {}
                    }
                }
                off += len.next_multiple_of(4);
            }
        }
    }

    /// Looks an interface up by name (`Err` of kind `NotFound` when there is none).
    pub(crate) fn link_by_name(&mut self, name: &str) -> io::Result<LinkInfo> {
        let mut body = vec![0u8; 16]; // struct ifinfomsg, index 0: select by IFLA_IFNAME
        let mut cname = name.as_bytes().to_vec();
        cname.push(0);
        push_attr(&mut body, IFLA_IFNAME, &cname);
        self.link(body)
    }

    /// Looks an interface up by index.
    pub(crate) fn link_by_index(&mut self, ifindex: u32) -> io::Result<LinkInfo> {
        let mut body = vec![0u8; 16];
        body[4..8].copy_from_slice(&ifindex.to_ne_bytes());
        self.link(body)
    }

    fn link(&mut self, body: Vec<u8>) -> io::Result<LinkInfo> {
        let payload = self.request(RTM_GETLINK, &body, RTM_NEWLINK).map_err(|e| {
            if e.raw_os_error() == Some(libc::ENODEV) {
                io::Error::new(io::ErrorKind::NotFound, "no such interface")
            } else {
                e
            }
        })?;
        if payload.len() < 16 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "short RTM_NEWLINK",
            ));
        }
        let ifindex = u32::from_ne_bytes(payload[4..8].try_into().expect("4 bytes"));
        let mut info = LinkInfo {
            ifindex,
            mac: Vec::new(),
            mtu: 0,
            stats: LinkStats::default(),
        };
        for (kind, data) in attrs(&payload[16..]) {
            match kind {
                IFLA_ADDRESS => info.mac = data.to_vec(),
                IFLA_MTU if data.len() >= 4 => {
                    info.mtu = u32::from_ne_bytes(data[..4].try_into().expect("4 bytes"))
                }
                IFLA_STATS64 => {
                    info.stats = LinkStats {
                        rx_packets: u64_at(data, 0),
                        tx_packets: u64_at(data, 1),
                        rx_bytes: u64_at(data, 2),
                        tx_bytes: u64_at(data, 3),
                        rx_errors: u64_at(data, 4),
                        tx_errors: u64_at(data, 5),
                        rx_dropped: u64_at(data, 6),
                        tx_dropped: u64_at(data, 7),
                        rx_fifo_errors: u64_at(data, 14),
                        rx_missed_errors: u64_at(data, 15),
                    }
                }
                _ => {}
            }
        }
        Ok(info)
    }

    /// The root qdisc of an interface: frames waiting in it and frames it dropped (`struct
    /// gnet_stats_queue`'s qlen and drops): `Err` when it has none that queues (`noqueue`, a
    /// veth's default, never queues nor drops) or the kernel describes none.
    pub(crate) fn qdisc_queue(&mut self, ifindex: u32) -> io::Result<QdiscQueue> {
        let mut body = vec![0u8; 20]; // struct tcmsg
        body[4..8].copy_from_slice(&ifindex.to_ne_bytes());
        body[12..16].copy_from_slice(&TC_H_ROOT.to_ne_bytes());
        // The kernel multicasts its answer unless asked to echo it; a root qdisc that keeps
        // no statistics (noqueue) is not described at all: no answer but the ack.
        let flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_ECHO;
        let payload = self.send(RTM_GETQDISC, flags, &body, RTM_NEWQDISC)?;
        let area = payload.get(20..).unwrap_or_default();
        if attrs(area).any(|(kind, name)| kind == TCA_KIND && name == b"noqueue\0") {
            return Err(io::Error::new(io::ErrorKind::NotFound, "noqueue: no qdisc"));
        }
        let u32_at = |q: &[u8], at: usize| {
            u64::from(u32::from_ne_bytes(
                q[at..at + 4].try_into().expect("4 bytes"),
            ))
        };
        attrs(area)
            .filter(|(kind, _)| *kind == TCA_STATS2)
            .flat_map(|(_, nested)| attrs(nested))
            .find(|(kind, data)| *kind == TCA_STATS_QUEUE && data.len() >= 12)
            .map(|(_, q)| QdiscQueue {
                frames: u32_at(q, 0),
                drops: u32_at(q, 8),
            })
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no qdisc queue statistics"))
    }

    /// The XDP features (`NETDEV_XDP_ACT_*` bits) of an interface; needs a generic socket.
    pub(crate) fn xdp_features(&mut self, ifindex: u32) -> io::Result<u64> {
        let mut body = vec![CTRL_CMD_GETFAMILY, 1, 0, 0];
        push_attr(&mut body, CTRL_ATTR_FAMILY_NAME, b"netdev\0");
        let payload = self.request(GENL_ID_CTRL, &body, GENL_ID_CTRL)?;
        let family = attrs(payload.get(4..).unwrap_or_default())
            .find(|(k, d)| *k == CTRL_ATTR_FAMILY_ID && d.len() >= 2)
            .map(|(_, d)| u16::from_ne_bytes([d[0], d[1]]))
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::Unsupported,
                    "no generic netlink family 'netdev'",
                )
            })?;
        let mut body = vec![NETDEV_CMD_DEV_GET, 1, 0, 0];
        push_attr(&mut body, NETDEV_A_DEV_IFINDEX, &ifindex.to_ne_bytes());
        let payload = self.request(family, &body, family)?;
        attrs(payload.get(4..).unwrap_or_default())
            .find(|(k, d)| *k == NETDEV_A_DEV_XDP_FEATURES && d.len() >= 8)
            .map(|(_, d)| u64::from_ne_bytes(d[..8].try_into().expect("8 bytes")))
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::Unsupported,
                    "the kernel does not report XDP features",
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_are_walked_with_padding() {
        let mut area = Vec::new();
        push_attr(&mut area, 3, b"lo\0");
        push_attr(&mut area, 4, &1500u32.to_ne_bytes());
        let got: Vec<_> = attrs(&area).collect();
        assert_eq!(
            got,
            vec![(3, &b"lo\0"[..]), (4, &1500u32.to_ne_bytes()[..])]
        );
        assert_eq!(
            attrs(&area[..6]).count(),
            0,
            "a truncated attribute ends the walk"
        );
    }

    #[test]
    fn a_request_the_kernel_does_not_answer_times_out() {
        // Without NLM_F_REQUEST the kernel ignores a message, answers nothing, acks nothing.
        let mut netlink = Netlink::route().unwrap();
        let e = netlink
            .send(RTM_GETLINK, 0, &[0u8; 16], RTM_NEWLINK)
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut, "{e}");
    }

    #[test]
    fn drops_add_every_loss_counter() {
        let s = LinkStats {
            rx_dropped: 1,
            tx_dropped: 2,
            rx_fifo_errors: 3,
            rx_missed_errors: 4,
            rx_packets: 9,
            ..Default::default()
        };
        assert_eq!(s.drops(), 10);
        assert_eq!(
            s.since(&LinkStats {
                rx_packets: 4,
                ..Default::default()
            })
            .rx_packets,
            5
        );
    }
}
