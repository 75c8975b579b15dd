//! The probe sender: its own thread and packet socket, one frame per syscall at a fixed rate,
//! each stamped just before its syscall, and the kernel's transmit time of each read back and
//! handed to the [`Matcher`].

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;

use super::frame::{self, FreshPorts, Probe, ProbeFrame};
use super::matcher::{lock, Matcher};
use super::sock::{Batch, ProbeSocket, Queue, BATCH};
use super::worker::Worker;
use super::{on_interface, ProbeConfig, ProbeKind};
use crate::stats::latency::Latency;
use crate::traffic::os;
use crate::traffic::pace::wait_until;

/// How long the sender waits, once it stops, for the last transmit timestamps.
const LAST_STAMPS: Duration = Duration::from_millis(50);

/// How often the sender reads the transmit timestamps back, at most: each read is a system
/// call, which a virtual machine makes costly, and a probe's stamp waits in the socket's error
/// queue until then (the receiver reads its arrivals less often still, [`super::receiver`]).
/// It also reads every [`BATCH`] probes, which one read takes, so that the error queue stays
/// far below the socket's buffer at any rate.
const STAMPS_EVERY: Duration = Duration::from_millis(1);

/// What the sender did.
#[derive(Debug, Clone)]
pub(crate) struct SenderReport {
    /// Probes handed to the interface per kind, in [`ProbeKind::ALL`]'s order (a frame the
    /// interface refused included: it reached the next hop's full input queue and was dropped
    /// there, a loss like any other).
    pub(crate) sent: [u64; 2],
    /// User space to driver: the kernel's transmit time of each probe minus its in-frame
    /// stamp, ns.
    pub(crate) user_to_driver: Latency,
}

/// A running probe sender.
#[derive(Debug)]
pub(crate) struct ProbeSender {
    worker: Worker<SenderReport>,
}

impl ProbeSender {
    /// Opens the socket in the interface's namespace and starts sending, each probe's transmit
    /// time handed to `matcher`.
    pub(crate) fn start(
        cfg: &ProbeConfig,
        matcher: Arc<Mutex<Matcher>>,
    ) -> anyhow::Result<ProbeSender> {
        cfg.check()?;
        let sock = on_interface(&cfg.iface, |ifindex| {
            ProbeSocket::sender(ifindex)
                .with_context(|| format!("opening the probe socket on {}", cfg.iface))
        })?;
        let cfg = cfg.clone();
        let worker = Worker::spawn("probe-tx", "the probe sender", move |stop| {
            run(&cfg, &sock, &matcher, stop)
        })?;
        Ok(ProbeSender { worker })
    }

    /// Whether it has ended (its limit reached, or an error).
    pub(crate) fn is_finished(&self) -> bool {
        self.worker.is_finished()
    }

    /// Stops sending and returns what was sent, or the error that ended it.
    pub(crate) fn stop(self) -> anyhow::Result<SenderReport> {
        self.worker.stop()
    }
}

/// The sending loop: probe `seq` is due at `start + seq / rate`; a late one goes at once.
fn run(
    cfg: &ProbeConfig,
    sock: &ProbeSocket,
    matcher: &Mutex<Matcher>,
    stop: &AtomicBool,
) -> anyhow::Result<SenderReport> {
    os::block_stop_signals().context("blocking signals on the probe sender's thread")?;
    if let Some(cpu) = cfg.cpu {
        os::pin_to_cpu(cpu)?;
    }
    // Wake-ups within a microsecond or so of the due time instead of the default 50 µs slack:
    // the probes stay evenly spaced. (No send time depends on it.)
    nix::sys::prctl::set_timerslack(1).context("setting the probe sender's timer slack")?;
    // One frame per kind: the established one is never rewritten.
    let mut frames = [ProbeFrame::new(&cfg.spec), ProbeFrame::new(&cfg.spec)];
    let mut fresh = FreshPorts::new(&cfg.spec);
    let mut stamps = Stamps {
        batch: Batch::new(),
        read: Vec::new(),
        user_to_driver: Latency::new(),
    };
    let mut sent = [0u64; 2];
    let (mut seq, mut refused, mut matched) = (0u64, 0u64, 0u64);
    let interval = 1e9 / cfg.rate_pps as f64;
    let start = Instant::now();
    let (mut last_read, mut unread) = (start, 0usize);
    let end = cfg.limit.map(|d| start + d);
    while !stop.load(Ordering::Relaxed) && seq <= u64::from(u32::MAX) {
        let due = start + Duration::from_nanos((seq as f64 * interval) as u64);
        if end.is_some_and(|end| due >= end) {
            break;
        }
        let kind = cfg.kind(seq as u32);
        let probe = &mut frames[kind.index()];
        if kind == ProbeKind::FirstPacket {
            let (sport, dport) = fresh
                .as_mut()
                .expect("ProbeConfig::check refuses first-packet probes with no fresh ports")
                .next();
            probe.set_ports(sport, dport);
        }
        if !wait_until(due, stop, Duration::ZERO) {
            break;
        }
        // The in-frame stamp is the last thing before the syscall: batching, pacing and the
        // wait above never enter it. The send time is the kernel's transmit stamp, read back
        // below; this one times the probe when there is none.
        probe.stamp(Probe {
            kind,
            seq: seq as u32,
            stamp_ns: frame::now_ns(),
        });
        match sock.send(probe.bytes()) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => refused += 1,
            Err(e) => return Err(e).context("sending a probe"),
        }
        sent[kind.index()] += 1;
        unread += 1;
        if unread == BATCH || last_read.elapsed() >= STAMPS_EVERY {
            matched += stamps.read(sock, matcher)?;
            // The kernel queued each probe's transmit stamp during its send (see the matcher),
            // so every earlier probe's has been read by now; this one's too, most likely, but
            // it is given until the next read.
            lock(matcher).settle(seq);
            (last_read, unread) = (Instant::now(), 0);
        }
        seq += 1;
    }
    let until = Instant::now() + LAST_STAMPS;
    while matched < seq - refused && Instant::now() < until {
        matched += stamps.read(sock, matcher)?;
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(SenderReport {
        sent,
        user_to_driver: stamps.user_to_driver,
    })
}

/// Reads the transmit timestamps of the sender's error queue.
struct Stamps {
    batch: Batch,
    /// The last read's `(seq, transmit time)`, kept for their allocation.
    read: Vec<(u32, u64)>,
    /// Every probe's user-space-to-driver time.
    user_to_driver: Latency,
}

impl Stamps {
    /// Reads every transmit timestamp waiting on the error queue, hands them to `matcher` (one
    /// lock, after the socket reads) and records each one's user-space-to-driver time; returns
    /// how many it read.
    fn read(&mut self, sock: &ProbeSocket, matcher: &Mutex<Matcher>) -> io::Result<u64> {
        self.read.clear();
        loop {
            let n = sock.recv(&mut self.batch, Queue::Errors)?;
            for (probe, stamp) in self.batch.probes() {
                let (Some(p), Some(tx_ns)) = (probe, stamp) else {
                    continue;
                };
                // The kernel's clock read comes after ours: a negative difference would be a
                // clock step between the two, not a time.
                if let Some(d) = tx_ns.checked_sub(p.stamp_ns) {
                    self.user_to_driver.record(d);
                }
                self.read.push((p.seq, tx_ns));
            }
            // A full batch may have left more behind.
            if n < BATCH {
                break;
            }
        }
        if !self.read.is_empty() {
            let mut m = lock(matcher);
            for &(seq, tx_ns) in &self.read {
                m.transmitted(seq, tx_ns);
            }
        }
        Ok(self.read.len() as u64)
    }
}
