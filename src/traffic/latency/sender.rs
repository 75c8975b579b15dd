//! The probe sender: its own thread and packet socket, one frame per syscall at a fixed rate,
//! each stamped just before its syscall, and the kernel's transmit time of each read back.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Context;

use super::frame::{self, Probe, ProbeFrame};
use super::sock::{PacketSocket, Queue};
use super::ProbeConfig;
use crate::stats::latency::Latency;
use crate::traffic::os;
use crate::traffic::pace::wait_until;

/// How long the sender waits, once it stops, for the last transmit timestamps.
const LAST_STAMPS: Duration = Duration::from_millis(50);

/// What the sender did.
#[derive(Debug, Clone)]
pub(crate) struct SenderReport {
    /// Probes handed to the interface (a frame the interface refused included: it reached the
    /// next hop's full input queue and was dropped there, a loss like any other).
    pub(crate) sent: u64,
    /// Of those, refused by the interface (`ENOBUFS`).
    pub(crate) refused: u64,
    /// Stamp-to-wire: the kernel's transmit time of each probe minus its in-frame stamp, ns.
    pub(crate) stamp_to_wire: Latency,
    /// Probes whose transmit time never came back (none on veth; a driver without
    /// `skb_tx_timestamp`, all).
    pub(crate) unstamped: u64,
}

/// A running probe sender.
#[derive(Debug)]
pub(crate) struct ProbeSender {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<anyhow::Result<SenderReport>>,
}

impl ProbeSender {
    /// Opens the socket in the interface's namespace and starts sending.
    pub(crate) fn start(cfg: &ProbeConfig) -> anyhow::Result<ProbeSender> {
        cfg.check()?;
        let sock = os::in_netns(cfg.iface.netns.as_deref(), || {
            let info =
                crate::traffic::lookup(&mut crate::traffic::netlink_for(&cfg.iface)?, &cfg.iface)?;
            PacketSocket::sender(info.ifindex)
                .with_context(|| format!("opening the probe socket on {}", cfg.iface))
        })?;
        let stop = Arc::new(AtomicBool::new(false));
        let (cfg, flag) = (cfg.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("probe-tx".into())
            .spawn(move || run(&cfg, &sock, &flag))
            .context("starting the probe sender's thread")?;
        Ok(ProbeSender { stop, thread })
    }

    /// Whether it has ended (its limit reached, or an error).
    pub(crate) fn is_finished(&self) -> bool {
        self.thread.is_finished()
    }

    /// Stops sending and returns what was sent, or the error that ended it.
    pub(crate) fn stop(self) -> anyhow::Result<SenderReport> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the probe sender's thread panicked")))
    }
}

/// The sending loop: probe `seq` is due at `start + seq / rate`; a late one goes at once.
fn run(cfg: &ProbeConfig, sock: &PacketSocket, stop: &AtomicBool) -> anyhow::Result<SenderReport> {
    os::block_stop_signals().context("blocking signals on the probe sender's thread")?;
    if let Some(cpu) = cfg.cpu {
        os::pin_to_cpu(cpu)?;
    }
    // Wake-ups within a microsecond or so of the due time instead of the default 50 µs slack:
    // the probes stay evenly spaced. (The stamp does not depend on it.)
    nix::sys::prctl::set_timerslack(1).context("setting the probe sender's timer slack")?;
    let mut probe = ProbeFrame::new(&cfg.spec);
    let mut report = SenderReport {
        sent: 0,
        refused: 0,
        stamp_to_wire: Latency::new(),
        unstamped: 0,
    };
    let mut matched = 0u64;
    let mut buf = vec![0u8; 2048];
    let interval = 1e9 / cfg.rate_pps as f64;
    let start = Instant::now();
    let end = cfg.limit.map(|d| start + d);
    while !stop.load(Ordering::Relaxed) && report.sent < u64::from(u32::MAX) {
        let due = start + Duration::from_nanos((report.sent as f64 * interval) as u64);
        if end.is_some_and(|end| due >= end) {
            break;
        }
        if !wait_until(due, stop, Duration::ZERO) {
            break;
        }
        // The stamp is the last thing before the syscall: batching, pacing and the wait above
        // never enter it. What the syscall itself takes before the driver sees the frame is
        // the stamp-to-wire error, measured below.
        probe.stamp(Probe {
            seq: report.sent as u32,
            stamp_ns: frame::now_ns(),
        });
        match sock.send(probe.bytes()) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => report.refused += 1,
            Err(e) => return Err(e).context("sending a probe"),
        }
        report.sent += 1;
        matched += read_tx_stamps(sock, &mut buf, &mut report.stamp_to_wire)?;
    }
    let until = Instant::now() + LAST_STAMPS;
    while matched < report.sent - report.refused && Instant::now() < until {
        matched += read_tx_stamps(sock, &mut buf, &mut report.stamp_to_wire)?;
        std::thread::sleep(Duration::from_millis(1));
    }
    report.unstamped = report.sent - report.refused - matched.min(report.sent - report.refused);
    Ok(report)
}

/// Reads every transmit timestamp waiting on the error queue into `stamp_to_wire` (kernel time
/// minus the stamp in the looped-back frame); returns how many it read.
fn read_tx_stamps(
    sock: &PacketSocket,
    buf: &mut [u8],
    stamp_to_wire: &mut Latency,
) -> io::Result<u64> {
    let mut n = 0;
    while let Some((len, stamp)) = sock.recv(buf, Queue::Errors)? {
        let (Some(tx_ns), Some(p)) = (stamp, frame::decode(&buf[..len])) else {
            continue;
        };
        // The kernel's clock read comes after ours: a negative difference would be a clock
        // step between the two, which is not an error of the stamp.
        if let Some(d) = tx_ns.checked_sub(p.stamp_ns) {
            stamp_to_wire.record(d);
        }
        n += 1;
    }
    Ok(n)
}
