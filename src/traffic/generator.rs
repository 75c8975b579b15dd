//! The built-in generator: a sending thread in the sender's namespace, pinned to its CPU, and a
//! monitor thread.
//!
//! The sending thread runs an engine. XDP paces and counts in the kernel (see [`crate::traffic::xdp`]);
//! AF_PACKET sends bursts, each waiting at a fixed rate for its due time
//! `start + packets_sent / pps` on the monotonic clock (sleeping, then spinning the last 100 µs),
//! so that bursts are evenly spaced and the rate never drifts. The monitor reads the count every
//! 5 ms (and, at `max` following the DUT, sets the XDP engine's pace: [`crate::traffic::follow`];
//! holding the DUT's input queue, it looks every millisecond and, at the limit, lets the engine
//! send what the queue holds before the end: [`crate::traffic::requeue`]),
//! records a sample each second, and ends the run when its limit or a stop comes: it sets
//! a flag and signals the sending thread, whose long system call then returns `EINTR` (the count
//! lives in the kernel map or in an atomic, so nothing is lost). SIGINT and SIGTERM are blocked
//! on the sending thread: Ctrl-C reaches the CLI, which calls [`Generator::stop`].

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Context;

use super::afpacket::{self, PacketEngine};
use super::follow::{Follower, START_PPS};
use super::netlink::{self, Netlink};
use super::requeue::{self, Requeue};
use super::xdp::{Lent, XdpCounter, XdpEngine};
use super::{os, Engine, GenConfig, Generator, Limit, Rate, TxSample, TxSummary};
use crate::error::InputError;

/// A generator ready to start with [`Generator::start`].
pub fn builtin(cfg: GenConfig) -> anyhow::Result<Box<dyn Generator>> {
    if let Some(burst) = cfg.burst {
        if burst == 0 || burst as usize > afpacket::MAX_BURST {
            return Err(InputError::new(format!(
                "bad burst {burst}: 1 to {} packets",
                afpacket::MAX_BURST
            ))
            .into());
        }
    }
    if cfg.engine == Engine::Packet && cfg.input_queue.is_some() {
        return Err(InputError::new(
            "--input-queue needs the XDP engine (it sends again what the interface refused); \
             drop --engine packet",
        )
        .into());
    }
    if let Limit::Count(0) = cfg.limit {
        return Err(InputError::new("bad packet count 0: send at least one packet").into());
    }
    Ok(Box::new(Builtin {
        cfg,
        user_stop: Arc::new(AtomicBool::new(false)),
        samples: None,
        sender: None,
        monitor: None,
    }))
}

/// The built-in generator: a sending thread and a monitor thread that samples its count each
/// second and ends the run (limit reached, duration over, stop asked) by interrupting it.
struct Builtin {
    cfg: GenConfig,
    user_stop: Arc<AtomicBool>,
    samples: Option<Receiver<TxSample>>,
    sender: Option<JoinHandle<anyhow::Result<TxSummary>>>,
    monitor: Option<JoinHandle<()>>,
}

enum Sender {
    Xdp(XdpEngine),
    Packet(Box<PacketEngine>),
}

impl Sender {
    /// The XDP engine, when it is one.
    fn xdp(&self) -> Option<&XdpEngine> {
        let Sender::Xdp(e) = self else { return None };
        Some(e)
    }
}

/// Where the monitor reads the sending thread's count.
enum Counter {
    Atomic(Arc<AtomicU64>),
    Xdp(XdpCounter),
}

impl Counter {
    /// The count so far.
    fn sent(&self) -> u64 {
        match self {
            Counter::Atomic(a) => a.load(Ordering::Relaxed),
            Counter::Xdp(c) => c.sent(),
        }
    }
}

/// What the sending thread tells once it is ready to send.
struct Ready {
    counter: Counter,
    start: Instant,
    thread: libc::pthread_t,
    done: Receiver<(u64, Instant)>,
    follower: Option<Follower>,
    /// The input queue the monitor holds, shared with the sending thread for its account.
    requeue: Option<Arc<Mutex<Requeue>>>,
}

impl Generator for Builtin {
    fn start(&mut self) -> anyhow::Result<()> {
        anyhow::ensure!(self.sender.is_none(), "the generator was already started");
        os::install_wake_handler().context("installing the generator's wake-up signal handler")?;
        let (ready_tx, ready_rx) = mpsc::sync_channel::<anyhow::Result<Ready>>(1);
        let cfg = self.cfg.clone();
        let halt = Arc::new(AtomicBool::new(false));
        let sender_halt = Arc::clone(&halt);
        let sender = std::thread::Builder::new()
            .name("benchlab-gen".into())
            .spawn(move || send(&cfg, &ready_tx, &sender_halt))?;
        let ready = match ready_rx.recv() {
            Ok(Ok(ready)) => ready,
            Ok(Err(e)) => {
                let _ = sender.join();
                return Err(e);
            }
            Err(_) => {
                return match sender.join() {
                    Ok(Err(e)) => Err(e),
                    _ => Err(anyhow::anyhow!("the generator thread died during setup")),
                }
            }
        };
        let (sample_tx, sample_rx) = mpsc::channel();
        let limit = self.cfg.limit;
        let user_stop = Arc::clone(&self.user_stop);
        let monitor = std::thread::Builder::new()
            .name("benchlab-gen-mon".into())
            .spawn(move || {
                monitor(ready, limit, &user_stop, &halt, |s| {
                    let _ = sample_tx.send(s);
                })
            })?;
        self.sender = Some(sender);
        self.monitor = Some(monitor);
        self.samples = Some(sample_rx);
        Ok(())
    }

    fn next_sample(&mut self, timeout: Duration) -> Option<TxSample> {
        self.samples.as_ref()?.recv_timeout(timeout).ok()
    }

    fn is_finished(&self) -> bool {
        self.monitor.as_ref().is_none_or(|t| t.is_finished())
    }

    fn stop(&mut self) -> anyhow::Result<TxSummary> {
        // A run that already ended met its limit; one still going is being interrupted.
        let was_running = !self.is_finished();
        self.user_stop.store(true, Ordering::Relaxed);
        let sender = self
            .sender
            .take()
            .context("the generator was not started")?;
        let summary = sender
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the generator thread panicked")));
        if let Some(m) = self.monitor.take() {
            let _ = m.join();
        }
        let mut summary = summary?;
        summary.interrupted = match self.cfg.limit {
            Limit::Count(n) => summary.tx_pkts < n,
            Limit::Duration(_) | Limit::Forever => was_running,
        };
        Ok(summary)
    }
}

impl Drop for Builtin {
    fn drop(&mut self) {
        self.user_stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.sender.take() {
            let _ = t.join();
        }
        if let Some(t) = self.monitor.take() {
            let _ = t.join();
        }
    }
}

/// The sending thread: sets the engine up, tells the monitor it is [`Ready`] (or why it is
/// not), sends until `halt`, and sums the run up.
fn send(
    cfg: &GenConfig,
    ready_tx: &SyncSender<anyhow::Result<Ready>>,
    halt: &AtomicBool,
) -> anyhow::Result<TxSummary> {
    let Setup {
        mut sender,
        engine,
        fallback,
        follower,
        requeue,
    } = match setup(cfg) {
        Ok(s) => s,
        Err(e) => {
            let _ = ready_tx.send(Err(e));
            return Err(anyhow::anyhow!("the generator's setup failed"));
        }
    };
    // Lent before the generator says it is ready, after which the probes may start.
    let _lent = Lent::new(cfg.carrier.as_ref(), sender.xdp());
    let atomic = Arc::new(AtomicU64::new(0));
    let counter = match &sender {
        Sender::Xdp(e) => Counter::Xdp(e.counter()),
        Sender::Packet(_) => Counter::Atomic(Arc::clone(&atomic)),
    };
    let follow_margin = follower.as_ref().map(|_| super::follow::MARGIN);
    let requeue = requeue.map(|r| Arc::new(Mutex::new(r)));
    let (done_tx, done) = mpsc::channel();
    let start = Instant::now();
    let thread = os::current_thread();
    let _ = ready_tx.send(Ok(Ready {
        counter,
        start,
        thread,
        done,
        follower,
        requeue: requeue.clone(),
    }));
    let sent = match &mut sender {
        Sender::Xdp(e) => e.run(halt, requeue.is_some()),
        Sender::Packet(e) => {
            let burst = cfg
                .burst
                .unwrap_or_else(|| afpacket::default_burst(cfg.rate));
            e.paced_loop(cfg, burst, (start, halt), &atomic)
        }
    };
    // The traffic ended at the stop; the drain after it sent no new frame.
    let held = (requeue.as_ref())
        .map(|r| r.lock().unwrap_or_else(PoisonError::into_inner).finish())
        .transpose()
        .with_context(|| format!("reading {}'s refusals as the generator stopped", cfg.iface));
    let end = match &held {
        Ok(Some(h)) => h.stopped,
        _ => Instant::now(),
    };
    let sent = sent.with_context(|| format!("sending on {}", cfg.iface));
    let _ = done_tx.send((
        *sent.as_ref().unwrap_or(&atomic.load(Ordering::Relaxed)),
        end,
    ));
    let (sent, held) = (sent?, held?);
    let elapsed = (end - start).as_secs_f64();
    Ok(TxSummary {
        engine,
        fallback,
        tx_pkts: sent,
        elapsed_s: elapsed,
        tx_pps: if elapsed > 0.0 {
            sent as f64 / elapsed
        } else {
            0.0
        },
        interrupted: false,
        follow_margin,
        queued_at_stop: held.map(|h| h.queued_at_stop),
        lost_at_stop: held.map(|h| h.lost),
    })
}

/// How often the monitor looks at the count: the precision of a duration limit.
const MONITOR_POLL: Duration = Duration::from_millis(5);

/// Samples the count every second and ends the run when it is due; the last sample is the exact
/// final count, taken once the sending thread is back.
fn monitor(
    ready: Ready,
    limit: Limit,
    user_stop: &AtomicBool,
    halt: &AtomicBool,
    mut emit: impl FnMut(TxSample),
) {
    let Ready {
        counter,
        start,
        thread,
        done,
        mut follower,
        requeue,
    } = ready;
    let poll = match requeue {
        Some(_) => requeue::POLL,
        None => MONITOR_POLL,
    };
    let mut last = TxSample {
        t_s: 0.0,
        tx_pkts: 0,
        tx_pps: 0.0,
    };
    let mut sample = |t: f64, sent: u64, last: &mut TxSample| {
        let dt = t - last.t_s;
        let pps = if dt > 0.0 {
            sent.saturating_sub(last.tx_pkts) as f64 / dt
        } else {
            0.0
        };
        *last = TxSample {
            t_s: t,
            tx_pkts: sent,
            tx_pps: pps,
        };
        emit(*last);
    };
    let mut next_tick = 1.0;
    loop {
        std::thread::sleep(poll);
        match done.try_recv() {
            Ok((sent, end)) => {
                let t = (end - start).as_secs_f64();
                if sent > last.tx_pkts || t > last.t_s + 0.001 {
                    sample(t, sent, &mut last);
                }
                return;
            }
            Err(mpsc::TryRecvError::Disconnected) => return,
            Err(mpsc::TryRecvError::Empty) => {}
        }
        let t = start.elapsed().as_secs_f64();
        let sent = counter.sent();
        if let Some(f) = follower.as_mut() {
            f.step(sent);
        }
        if t >= next_tick {
            sample(t, sent, &mut last);
            while next_tick <= t {
                next_tick += 1.0;
            }
        }
        let mut over = match limit {
            Limit::Count(n) => sent >= n,
            Limit::Duration(d) => t >= d.as_secs_f64(),
            Limit::Forever => false,
        };
        if let Some(queue) = &requeue {
            over = requeue::look(queue, over);
        }
        if over || user_stop.load(Ordering::Relaxed) {
            halt.store(true, Ordering::Relaxed);
            os::interrupt(thread);
        }
    }
}

/// Refuses frames that do not fit the interface's MTU.
fn check_mtu(cfg: &GenConfig, link: &netlink::LinkInfo) -> Result<(), InputError> {
    let l3 = cfg.spec.wire_len() - 14;
    if l3 > link.mtu as usize {
        return Err(InputError::new(format!(
            "frame size {} does not fit {}'s MTU {} (at most {} bytes)",
            cfg.spec.frame_size,
            cfg.iface,
            link.mtu,
            link.mtu as usize + 18
        )));
    }
    Ok(())
}

/// What the sending thread sends with.
struct Setup {
    /// The engine's socket or program.
    sender: Sender,
    /// The engine that sends (never `auto`).
    engine: Engine,
    /// Why `auto` did not pick XDP, when it did not.
    fallback: Option<String>,
    /// The follower, when `max` follows the interface.
    follower: Option<Follower>,
    /// With [`GenConfig::input_queue`] and the XDP engine, the queue the monitor holds.
    requeue: Option<Requeue>,
}

/// Enters the namespace, pins, finds the interface and opens the engine (and its follower, when
/// `max` follows the interface).
fn setup(cfg: &GenConfig) -> anyhow::Result<Setup> {
    os::block_stop_signals().context("blocking signals on the generator thread")?;
    if let Some(ns) = &cfg.iface.netns {
        os::enter_netns(ns)?;
    }
    if let Some(cpu) = cfg.cpu {
        os::pin_to_cpu(cpu)?;
    }
    let mut netlink = Netlink::route().context("opening a netlink socket")?;
    let link = super::lookup(&mut netlink, &cfg.iface)?;
    check_mtu(cfg, &link)?;
    let not_root = |what: &str| {
        InputError::new(format!(
            "{what} on {} needs root (CAP_NET_RAW, CAP_BPF); run as root",
            cfg.iface
        ))
    };
    let packet = || -> anyhow::Result<Sender> {
        PacketEngine::new(&cfg.spec, link.ifindex)
            .map(|e| Sender::Packet(Box::new(e)))
            .map_err(|e| {
                if e.raw_os_error() == Some(libc::EPERM) {
                    not_root("sending with AF_PACKET").into()
                } else {
                    anyhow::Error::new(e)
                        .context(format!("opening an AF_PACKET socket on {}", cfg.iface))
                }
            })
    };
    let xdp = || -> Result<Sender, String> {
        let features = Netlink::generic()
            .and_then(|mut nl| nl.xdp_features(link.ifindex))
            .map_err(|e| format!("cannot read {}'s XDP features: {e}", cfg.iface))?;
        if features & netlink::XDP_ACT_NDO_XMIT == 0 {
            return Err(format!(
                "{} does not take XDP frames (a veth needs GRO or an XDP program on its peer; a NIC, a driver with ndo_xdp_xmit)",
                cfg.iface
            ));
        }
        open_xdp(cfg, link.ifindex)
            .map(Sender::Xdp)
            .map_err(|e| format!("cannot load the XDP program: {e}"))
    };
    let (sender, engine, fallback) = match cfg.engine {
        Engine::Packet => (packet()?, Engine::Packet, None),
        Engine::Xdp => match xdp() {
            Ok(s) => (s, Engine::Xdp, None),
            Err(why) if !os::is_root() => {
                return Err(not_root(&format!("the XDP engine ({why})")).into())
            }
            Err(why) => {
                return Err(
                    InputError::new(format!("--engine xdp: {why}; use --engine packet")).into(),
                )
            }
        },
        Engine::Auto => match xdp() {
            Ok(s) => (s, Engine::Xdp, None),
            Err(why) => (packet()?, Engine::Packet, Some(why)),
        },
    };
    let (follower, requeue) = watchers(cfg, &sender, netlink, link.ifindex)?;
    Ok(Setup {
        sender,
        engine,
        fallback,
        follower,
        requeue,
    })
}

/// What watches the XDP engine's interface `ifindex` (read through `netlink`) for the monitor:
/// the follower at `max` when asked, the input queue when asked.
fn watchers(
    cfg: &GenConfig,
    sender: &Sender,
    netlink: Netlink,
    ifindex: u32,
) -> anyhow::Result<(Option<Follower>, Option<Requeue>)> {
    let Sender::Xdp(e) = sender else {
        // The AF_PACKET engine needs neither: the interface's backpressure already holds it
        // to what the next hop takes.
        return Ok((None, None));
    };
    let follower =
        (cfg.follow && cfg.rate == Rate::Max).then(|| Follower::new(e.counter(), netlink, ifindex));
    let requeue = (cfg.input_queue)
        .map(|ring| Requeue::new(e.counter(), ifindex, ring))
        .transpose()
        .with_context(|| format!("reading {}'s refusals", cfg.iface))?;
    Ok((follower, requeue))
}

/// The XDP engine for `cfg` on interface `ifindex`: its pace and limit.
fn open_xdp(cfg: &GenConfig, ifindex: u32) -> std::io::Result<XdpEngine> {
    let pps = match cfg.rate {
        Rate::Max if cfg.follow => Some(START_PPS),
        Rate::Max => None,
        Rate::Pps(pps) => Some(pps),
    };
    let limit = match cfg.limit {
        Limit::Count(n) => Some(n),
        _ => None,
    };
    let engine = XdpEngine::new(&cfg.spec, ifindex, (pps, limit), cfg.carrier.is_some())?;
    Ok(match cfg.rate {
        Rate::Max if cfg.follow => engine.full_batches(),
        _ => engine,
    })
}
