//! The probe sender: its own thread, probes at a fixed rate, and the time each was handed to the
//! interface read back and handed to the [`Matcher`]. Out by a packet socket of its own (one
//! frame per syscall, stamped just before it; the kernel's transmit stamp), or carried by the
//! XDP generator ([`Carrier`]: a ring its program sends from when due, among the load's frames;
//! the stamp of its device map's program as the batch goes out).

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
use crate::traffic::xdp::{monotonic_ns, Carrier};

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
    /// Whether the XDP generator carried them ([`Carrier`]).
    pub(crate) carried: bool,
}

/// A running probe sender.
#[derive(Debug)]
pub(crate) struct ProbeSender {
    worker: Worker<SenderReport>,
}

/// How the probes go out.
enum Out {
    /// A packet socket of their own; the kernel's transmit stamps on its error queue.
    Socket(ProbeSocket),
    /// The XDP generator's frames; the log of its device map's program.
    Carried(Carrier),
}

impl ProbeSender {
    /// Opens the socket in the interface's namespace (or takes the carrier) and starts
    /// sending, each probe's transmit time handed to `matcher`.
    pub(crate) fn start(
        cfg: &ProbeConfig,
        matcher: Arc<Mutex<Matcher>>,
    ) -> anyhow::Result<ProbeSender> {
        cfg.check()?;
        let out = match &cfg.carrier {
            Some(carrier) => {
                let mut carrier = carrier.clone();
                carrier.resume();
                Out::Carried(carrier)
            }
            None => Out::Socket(on_interface(&cfg.iface, |ifindex| {
                ProbeSocket::sender(ifindex)
                    .with_context(|| format!("opening the probe socket on {}", cfg.iface))
            })?),
        };
        let cfg = cfg.clone();
        let worker = Worker::spawn("probe-tx", "the probe sender", move |stop| {
            run(&cfg, out, &matcher, stop)
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
    mut out: Out,
    matcher: &Mutex<Matcher>,
    stop: &AtomicBool,
) -> anyhow::Result<SenderReport> {
    prepare_thread(cfg.cpu)?;
    // One frame per kind: the established one is never rewritten.
    let mut frames = [ProbeFrame::new(&cfg.spec), ProbeFrame::new(&cfg.spec)];
    let mut fresh = FreshPorts::new(&cfg.spec);
    let mut stamps = Stamps {
        batch: Batch::new(),
        read: Vec::new(),
        user_to_driver: Latency::new(),
        offered: vec![0; OFFERED],
    };
    let mut sent = [0u64; 2];
    let (mut seq, mut refused, mut matched) = (0u64, 0u64, 0u64);
    let interval = 1e9 / cfg.rate_pps as f64;
    let start = Instant::now();
    // The carried probes' due times, on the program's clock and on the stamps' clock.
    let (start_mono, start_real) = (monotonic_ns(), frame::now_ns());
    let (mut last_read, mut unread) = (start, 0usize);
    let end = cfg.limit.map(|d| start + d);
    while !stop.load(Ordering::Relaxed) && seq <= u64::from(u32::MAX) {
        let after = (seq as f64 * interval) as u64;
        let due = start + Duration::from_nanos(after);
        if end.is_some_and(|end| due >= end) {
            break;
        }
        let kind = cfg.kind(seq as u32);
        let frame = &mut frames[kind.index()];
        if kind == ProbeKind::FirstPacket {
            let (sport, dport) = fresh
                .as_mut()
                .expect("ProbeConfig::check refuses first-packet probes with no fresh ports")
                .next();
            frame.set_ports(sport, dport);
        }
        if !wait_until(out.wake(due), stop, Duration::ZERO) {
            break;
        }
        let probe = Probe {
            kind,
            seq: seq as u32,
            stamp_ns: start_real + after,
        };
        match out.send(frame, probe, start_mono + after, stop)? {
            Sent::Yes => {}
            Sent::Refused => refused += 1,
            Sent::Stopped => break,
        }
        // (The carried probes' log holds no in-frame stamp.)
        stamps.offered[seq as usize % OFFERED] = probe.stamp_ns;
        sent[kind.index()] += 1;
        unread += 1;
        if unread == BATCH || last_read.elapsed() >= STAMPS_EVERY {
            matched += stamps.read(&out, matcher)?;
            if let Out::Socket(_) = out {
                // The kernel queued each probe's transmit stamp during its send (see the
                // matcher), so every earlier probe's has been read by now; this one's too, most
                // likely, but it is given until the next read. (The carried probes' are
                // settled as they are read.)
                lock(matcher).settle(seq);
            }
            (last_read, unread) = (Instant::now(), 0);
        }
        seq += 1;
    }
    if let Out::Carried(carrier) = &mut out {
        for _ in 0..withdraw(carrier) {
            seq -= 1;
            sent[cfg.kind(seq as u32).index()] -= 1;
        }
    }
    let until = Instant::now() + LAST_STAMPS;
    while matched < seq - refused && Instant::now() < until {
        matched += stamps.read(&out, matcher)?;
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(SenderReport {
        sent,
        user_to_driver: stamps.user_to_driver,
        carried: matches!(out, Out::Carried(_)),
    })
}

/// Readies the sender's thread: the stop signals left to the main thread, pinned to `cpu`.
fn prepare_thread(cpu: Option<usize>) -> anyhow::Result<()> {
    os::block_stop_signals().context("blocking signals on the probe sender's thread")?;
    if let Some(cpu) = cpu {
        os::pin_to_cpu(cpu)?;
    }
    // Wake-ups within a microsecond or so of the due time instead of the default 50 µs slack:
    // the probes stay evenly spaced. (No send time depends on it.)
    nix::sys::prctl::set_timerslack(1).context("setting the probe sender's timer slack")?;
    Ok(())
}

/// What became of a probe handed to [`Out::send`].
enum Sent {
    /// Handed to the interface, or to the generator's ring.
    Yes,
    /// Refused by the interface (its next hop's input queue full): a loss.
    Refused,
    /// Not sent: the sender was stopped while the generator's ring was full.
    Stopped,
}

impl Out {
    /// When to wake for a probe due at `due`: then for a socket; a carried one is offered up
    /// to [`Carrier::ahead`] of its time, a batch at each wake-up (one that finds it later
    /// than that sleeps until half of it is left).
    fn wake(&self, due: Instant) -> Instant {
        match self {
            Out::Socket(_) => due,
            Out::Carried(c) if Instant::now() + c.ahead() >= due => Instant::now(),
            Out::Carried(c) => due.checked_sub(c.ahead() / 2).unwrap_or(due),
        }
    }

    /// Sends `frame` as `probe`: from the socket at once, its in-frame stamp taken now (the
    /// last thing before the syscall: batching, pacing and the wait never enter it; the send
    /// time is the kernel's transmit stamp, read back later, and this one times the probe when
    /// there is none); or offered to the generator's ring, to go at `due_mono`, its in-frame
    /// stamp `probe`'s (its due time: the send time is the log's).
    fn send(
        &mut self,
        frame: &mut ProbeFrame,
        probe: Probe,
        due_mono: u64,
        stop: &AtomicBool,
    ) -> anyhow::Result<Sent> {
        match self {
            Out::Socket(sock) => {
                frame.stamp(Probe {
                    stamp_ns: frame::now_ns(),
                    ..probe
                });
                match sock.send(frame.bytes()) {
                    Ok(()) => Ok(Sent::Yes),
                    Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => Ok(Sent::Refused),
                    Err(e) => Err(e).context("sending a probe"),
                }
            }
            Out::Carried(carrier) => {
                frame.stamp(probe);
                while !carrier.offer(frame.bytes(), due_mono) {
                    if stop.load(Ordering::Relaxed) {
                        return Ok(Sent::Stopped);
                    }
                    std::thread::sleep(OFFER_AGAIN);
                }
                Ok(Sent::Yes)
            }
        }
    }
}

/// Once the carried probes stop: those offered ahead go while the generator runs (waited for
/// a little); those still in its ring when it has stopped were never sent, and are taken
/// back. Returns how many (the last ones offered).
fn withdraw(carrier: &mut Carrier) -> u64 {
    let until = Instant::now() + LAST_STAMPS;
    while carrier.waiting() > 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(1));
    }
    carrier.withdraw()
}

/// How long the sender waits before offering a carried probe again while the generator's
/// ring of probes is full.
const OFFER_AGAIN: Duration = Duration::from_micros(200);

/// In-frame stamps of the carried probes kept for their user-to-driver time, by sequence
/// number: far more than are ever offered between two reads of their log.
const OFFERED: usize = 1 << 12;

/// Reads the transmit times: the socket's error queue, or the carrier's log.
struct Stamps {
    batch: Batch,
    /// The last read's `(seq, transmit time)`, kept for their allocation.
    read: Vec<(u32, u64)>,
    /// Every probe's user-space-to-driver time.
    user_to_driver: Latency,
    /// The in-frame stamps of the last carried probes, at their sequence number modulo
    /// [`OFFERED`] (the carrier's log holds no in-frame stamp).
    offered: Vec<u64>,
}

impl Stamps {
    /// Reads every transmit time waiting, hands them to `matcher` (one lock, after the reads)
    /// and records each one's user-space-to-driver time; returns how many it read. A carried
    /// probe's read settles every earlier one: the log holds them in the order sent.
    fn read(&mut self, out: &Out, matcher: &Mutex<Matcher>) -> anyhow::Result<u64> {
        self.read.clear();
        let settle = match out {
            Out::Socket(sock) => {
                self.read_socket(sock)?;
                None
            }
            Out::Carried(carrier) => {
                let (read, offered) = (&mut self.read, &self.offered);
                let user_to_driver = &mut self.user_to_driver;
                carrier.read(|probe, tx_ns| {
                    let stamp_ns = offered[probe.seq as usize % OFFERED];
                    if let Some(d) = tx_ns.checked_sub(stamp_ns) {
                        user_to_driver.record(d);
                    }
                    read.push((probe.seq, tx_ns));
                })?;
                self.read.last().map(|&(seq, _)| u64::from(seq) + 1)
            }
        };
        if !self.read.is_empty() {
            let mut m = lock(matcher);
            for &(seq, tx_ns) in &self.read {
                m.transmitted(seq, tx_ns);
            }
            if let Some(seq) = settle {
                m.settle(seq);
            }
        }
        Ok(self.read.len() as u64)
    }

    /// Reads every transmit timestamp waiting on the socket's error queue into `read`, and
    /// records each one's user-space-to-driver time.
    fn read_socket(&mut self, sock: &ProbeSocket) -> io::Result<()> {
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
                return Ok(());
            }
        }
    }
}
