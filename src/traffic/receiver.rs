//! The receiver: samples an interface's counters once a second, with drop counters of others.
//!
//! Counters come from netlink (`RTM_GETLINK`, the numbers `ip -s link` shows), through a socket
//! opened in each interface's namespace, so one process samples the receiver and the DUT alike.
//! Each [`Sample`](crate::traffic::receiver::Sample) holds counts since the start; the [`Series`](crate::traffic::receiver::Series) is what a trial records.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Context;
use serde::Serialize;

use super::netlink::{LinkStats, Netlink};
use super::IfRef;

/// What to sample.
#[derive(Debug, Clone)]
pub struct RxConfig {
    /// The receiving interface: its `rx_packets` is the traffic that went through.
    pub iface: IfRef,
    /// Interfaces whose drop counters are recorded too (the DUT's, the sender's).
    pub watch: Vec<IfRef>,
    /// Time between samples.
    pub interval: Duration,
    /// Count what the interface sent (`tx_packets`, `tx_bytes`) instead of what it received:
    /// a sender's output when its generator prints no figures of its own (trafgen).
    pub sent: bool,
}

impl RxConfig {
    /// Samples `iface` every second, watching nothing else.
    pub fn new(iface: IfRef) -> RxConfig {
        RxConfig {
            iface,
            watch: Vec::new(),
            interval: Duration::from_secs(1),
            sent: false,
        }
    }
}

/// One sample: counts since the start of sampling.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sample {
    /// Seconds since the start.
    pub t_s: f64,
    /// Packets received since the start (sent, with [`RxConfig::sent`]).
    pub rx_pkts: u64,
    /// Packets per second over the last interval.
    pub rx_pps: f64,
    /// Bytes received since the start (sent, with [`RxConfig::sent`]).
    pub rx_bytes: u64,
    /// Packets dropped by the receiving interface since the start.
    pub rx_drops: u64,
    /// Per watched interface (in [`RxConfig::watch`] order): packets dropped since the start
    /// (rx/tx dropped, FIFO overruns, misses; see [`LinkStats::drops`]).
    pub drops: Vec<u64>,
}

/// Every sample of a run, with the names of the interfaces.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Series {
    /// The receiving interface (`NETNS/IF`).
    pub iface: String,
    /// The watched interfaces, in the order of [`Sample::drops`].
    pub watch: Vec<String>,
    /// One sample per interval, the last one possibly shorter.
    pub samples: Vec<Sample>,
}

struct Probe {
    nl: Netlink,
    ifindex: u32,
}

impl Probe {
    fn open(iface: &IfRef) -> anyhow::Result<Probe> {
        let mut nl = super::netlink_for(iface)?;
        let ifindex = super::lookup(&mut nl, iface)?.ifindex;
        Ok(Probe { nl, ifindex })
    }

    fn read(&mut self) -> std::io::Result<LinkStats> {
        Ok(self.nl.link_by_index(self.ifindex)?.stats)
    }
}

struct Counters {
    rx: Probe,
    watch: Vec<Probe>,
}

impl Counters {
    fn read(&mut self) -> anyhow::Result<(LinkStats, Vec<LinkStats>)> {
        let rx = self
            .rx
            .read()
            .context("reading the receiving interface's counters")?;
        let watch = self
            .watch
            .iter_mut()
            .map(|p| p.read().context("reading a watched interface's counters"))
            .collect::<anyhow::Result<_>>()?;
        Ok((rx, watch))
    }
}

/// A running sampler.
pub struct Receiver {
    /// When the baseline was read: samples' `t_s` count from here.
    started: Instant,
    stop: Arc<AtomicBool>,
    samples: mpsc::Receiver<Sample>,
    seen: usize,
    thread: Option<JoinHandle<anyhow::Result<Series>>>,
}

impl Receiver {
    /// Opens every interface (errors name the missing one), takes the baseline and starts
    /// sampling on a background thread.
    pub fn start(cfg: RxConfig) -> anyhow::Result<Receiver> {
        if cfg.interval.is_zero() {
            return Err(crate::error::InputError::new("bad sampling interval 0").into());
        }
        let mut counters = Counters {
            rx: Probe::open(&cfg.iface)?,
            watch: cfg
                .watch
                .iter()
                .map(Probe::open)
                .collect::<anyhow::Result<_>>()?,
        };
        let (base_rx, base_watch) = counters.read()?;
        let start = Instant::now();
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, samples) = mpsc::channel();
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("benchlab-rx".into())
            .spawn(move || {
                let mut series = Series {
                    iface: cfg.iface.to_string(),
                    watch: cfg.watch.iter().map(ToString::to_string).collect(),
                    samples: Vec::new(),
                };
                let mut k = 1u32;
                let mut last = (0.0, 0u64);
                loop {
                    let due = start + cfg.interval * k;
                    let stopped = sleep_until(due, &flag);
                    let (rx, watch) = counters.read()?;
                    let t = start.elapsed().as_secs_f64();
                    let d = rx.since(&base_rx);
                    let (pkts, bytes) = if cfg.sent {
                        (d.tx_packets, d.tx_bytes)
                    } else {
                        (d.rx_packets, d.rx_bytes)
                    };
                    let dt = t - last.0;
                    let sample = Sample {
                        t_s: t,
                        rx_pkts: pkts,
                        rx_pps: if dt > 0.0 {
                            (pkts - last.1) as f64 / dt
                        } else {
                            0.0
                        },
                        rx_bytes: bytes,
                        rx_drops: d.drops(),
                        drops: watch
                            .iter()
                            .zip(&base_watch)
                            .map(|(now, base)| now.since(base).drops())
                            .collect(),
                    };
                    last = (t, pkts);
                    // A stop right after a tick would only add an empty sample.
                    if !(stopped && dt < 0.001) {
                        let _ = tx.send(sample.clone());
                        series.samples.push(sample);
                    }
                    if stopped {
                        return Ok(series);
                    }
                    k += 1;
                }
            })?;
        Ok(Receiver {
            started: start,
            stop,
            samples,
            seen: 0,
            thread: Some(thread),
        })
    }

    /// Waits up to `timeout` for the next sample.
    pub fn next_sample(&mut self, timeout: Duration) -> Option<Sample> {
        match self.samples.recv_timeout(timeout) {
            Ok(s) => {
                self.seen += 1;
                Some(s)
            }
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => None,
        }
    }

    /// When sampling started: the origin of the samples' `t_s`.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// How many samples [`Self::next_sample`] returned (the series' first ones).
    pub fn samples_seen(&self) -> usize {
        self.seen
    }

    /// Whether sampling has ended (only on an error reading the counters).
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }

    /// Takes a last sample (the partial interval since the previous one) and returns the series.
    pub fn stop(mut self) -> anyhow::Result<Series> {
        self.stop.store(true, Ordering::Relaxed);
        let thread = self
            .thread
            .take()
            .context("the receiver was already stopped")?;
        thread
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the receiver thread panicked")))
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Sleeps until `due` in short steps; true when stopped before.
fn sleep_until(due: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return true;
        }
        let now = Instant::now();
        if now >= due {
            return false;
        }
        std::thread::sleep((due - now).min(Duration::from_millis(20)));
    }
}
