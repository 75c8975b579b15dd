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
use super::pace::wait_until;
use super::IfRef;

/// What to sample.
#[derive(Debug, Clone)]
pub struct RxConfig {
    /// The receiving interface: its `rx_packets` is the traffic that went through.
    pub(crate) iface: IfRef,
    /// Interfaces whose drop counters are recorded too (the DUT's, the sender's).
    pub(crate) watch: Vec<IfRef>,
    /// Time between samples.
    pub(crate) interval: Duration,
    /// Count what the interface sent (`tx_packets`, `tx_bytes`) instead of what it received:
    /// a sender's output when its generator prints no figures of its own (trafgen).
    pub(crate) sent: bool,
    /// CPU the sampling thread runs on, at real-time priority (`None`: left to the scheduler).
    /// A sampler that shares the DUT's CPU waits behind its forwarding for up to 150 ms, and a
    /// late sample followed by one taken at once makes two windows of nonsense rates.
    pub(crate) cpu: Option<usize>,
}

impl RxConfig {
    /// Samples `iface` every second, watching nothing else.
    pub fn new(iface: IfRef) -> RxConfig {
        RxConfig {
            iface,
            watch: Vec::new(),
            interval: Duration::from_secs(1),
            sent: false,
            cpu: None,
        }
    }
}

/// One sample: counts since the start of sampling.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sample {
    /// Seconds since the start.
    pub(crate) t_s: f64,
    /// Packets received since the start (sent, with [`RxConfig::sent`]).
    pub rx_pkts: u64,
    /// Packets per second over the last interval.
    pub(crate) rx_pps: f64,
    /// Bytes received since the start (sent, with [`RxConfig::sent`]).
    pub(crate) rx_bytes: u64,
    /// Packets dropped by the receiving interface since the start.
    pub(crate) rx_drops: u64,
    /// Per watched interface (in [`RxConfig::watch`] order): packets dropped since the start
    /// (rx/tx dropped, FIFO overruns, misses; see [`LinkStats::drops`]).
    pub(crate) drops: Vec<u64>,
}

/// Every sample of a run, with the names of the interfaces.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Series {
    /// The receiving interface (`NETNS/IF`).
    pub(crate) iface: String,
    /// The watched interfaces, in the order of [`Sample::drops`].
    pub watch: Vec<String>,
    /// One sample per interval, the last one possibly shorter.
    pub samples: Vec<Sample>,
}

struct Probe {
    nl: Netlink,
    ifindex: u32,
    /// Whether the interface has a root qdisc that queues (and may drop), read with its own:
    /// most have none (`noqueue`), and their samples cost no second request.
    qdisc: bool,
}

impl Probe {
    fn open(iface: &IfRef) -> anyhow::Result<Probe> {
        let mut nl = super::netlink_for(iface)?;
        let ifindex = super::lookup(&mut nl, iface)?.ifindex;
        let qdisc = nl.qdisc_queue(ifindex).is_ok();
        Ok(Probe { nl, ifindex, qdisc })
    }

    /// The interface's counters; what its qdisc dropped counts as `tx_dropped`: frames it
    /// could not send either (a queueing qdisc full in front of a slower link).
    fn read(&mut self) -> std::io::Result<LinkStats> {
        let mut stats = self.nl.link_by_index(self.ifindex)?.stats;
        if self.qdisc {
            stats.tx_dropped += self.nl.qdisc_queue(self.ifindex)?.drops;
        }
        Ok(stats)
    }
}

struct Counters {
    rx: Probe,
    watch: Vec<Probe>,
}

impl Counters {
    /// The receiving interface's counters with the time they were read, then the watched ones':
    /// the time is taken next to the one read that makes the rate.
    fn read(&mut self) -> anyhow::Result<Reading> {
        let rx = self
            .rx
            .read()
            .context("reading the receiving interface's counters")?;
        let at = Instant::now();
        let watch = self
            .watch
            .iter_mut()
            .map(|p| p.read().context("reading a watched interface's counters"))
            .collect::<anyhow::Result<_>>()?;
        Ok(Reading { rx, at, watch })
    }

    /// A sample of the counts since `base`; `last` is the previous sample's time and count.
    fn sample(&mut self, base: &Reading, sent: bool, last: (f64, u64)) -> anyhow::Result<Sample> {
        let now = self.read()?;
        let t = now.at.duration_since(base.at).as_secs_f64();
        let d = now.rx.since(&base.rx);
        let (pkts, bytes) = if sent {
            (d.tx_packets, d.tx_bytes)
        } else {
            (d.rx_packets, d.rx_bytes)
        };
        let dt = t - last.0;
        Ok(Sample {
            t_s: t,
            rx_pkts: pkts,
            rx_pps: if dt > 0.0 {
                pkts.saturating_sub(last.1) as f64 / dt
            } else {
                0.0
            },
            rx_bytes: bytes,
            rx_drops: d.drops(),
            drops: now
                .watch
                .iter()
                .zip(&base.watch)
                .map(|(now, base)| now.since(base).drops())
                .collect(),
        })
    }
}

/// One reading of every counter.
struct Reading {
    rx: LinkStats,
    /// When the receiving interface's counters were read.
    at: Instant,
    watch: Vec<LinkStats>,
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
        let base = counters.read()?;
        let start = base.at;
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, samples) = mpsc::channel();
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("benchlab-rx".into())
            .spawn(move || {
                if let Some(cpu) = cfg.cpu {
                    super::os::pin_to_cpu(cpu)?;
                    // Best effort: without CAP_SYS_NICE the sampler keeps its ordinary priority.
                    let _ = super::os::realtime(1);
                }
                let mut series = Series {
                    iface: cfg.iface.to_string(),
                    watch: cfg.watch.iter().map(ToString::to_string).collect(),
                    samples: Vec::new(),
                };
                let mut k = 1u32;
                let mut last = (0.0, 0u64);
                loop {
                    // `Receiver::stop` unparks this thread: the wait ends at once.
                    let stopped = !wait_until(start + cfg.interval * k, &flag, Duration::ZERO);
                    let sample = counters.sample(&base, cfg.sent, last)?;
                    let dt = sample.t_s - last.0;
                    last = (sample.t_s, sample.rx_pkts);
                    // A stop right after a tick would only add an empty sample.
                    if !(stopped && dt < 0.001) {
                        let _ = tx.send(sample.clone());
                        series.samples.push(sample);
                    }
                    if stopped {
                        return Ok(series);
                    }
                    // A late sample skips the ticks it missed: one taken at once after it
                    // would make a window of a few microseconds.
                    k = next_tick(start.elapsed(), cfg.interval);
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
    pub(crate) fn next_sample(&mut self, timeout: Duration) -> Option<Sample> {
        match self.samples.recv_timeout(timeout) {
            Ok(s) => {
                self.seen += 1;
                Some(s)
            }
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => None,
        }
    }

    /// When sampling started: the origin of the samples' `t_s`.
    pub(crate) fn started(&self) -> Instant {
        self.started
    }

    /// How many samples [`Self::next_sample`] returned (the series' first ones).
    pub(crate) fn samples_seen(&self) -> usize {
        self.seen
    }

    /// Whether sampling has ended (only on an error reading the counters).
    pub(crate) fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }

    /// Takes a last sample (the partial interval since the previous one) and returns the series.
    pub fn stop(mut self) -> anyhow::Result<Series> {
        self.stop.store(true, Ordering::Relaxed);
        let thread = self
            .thread
            .take()
            .context("the receiver was already stopped")?;
        // Its last sample now, not at the end of its current sleep.
        thread.thread().unpark();
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

/// The number of the first tick of `interval` after `elapsed`.
fn next_tick(elapsed: Duration, interval: Duration) -> u32 {
    let done = elapsed.as_nanos() / interval.as_nanos().max(1);
    u32::try_from(done + 1).unwrap_or(u32::MAX)
}

/// Waiting for the count to stop moving once the senders stopped.
pub mod quiet;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_late_sample_skips_the_ticks_it_missed() {
        let ms = Duration::from_millis;
        assert_eq!(next_tick(ms(0), ms(50)), 1);
        assert_eq!(next_tick(ms(51), ms(50)), 2);
        // 140 ms late for tick 1: ticks 2 and 3 are gone, the next is at 200 ms.
        assert_eq!(next_tick(ms(190), ms(50)), 4);
        assert_eq!(next_tick(ms(5), Duration::ZERO), 5_000_001);
    }
}
