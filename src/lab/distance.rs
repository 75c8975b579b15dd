//! How far apart two CPUs are, as the host placed them: the round trip of one cache line
//! between a thread on each, sampled through a latency trial (`cpu-round-trips.json`).
//!
//! A VM's vCPUs are threads of the host, which places them, and moves them, on its own cores.
//! On the project's 2-vCPU VM the round trip between the two vCPUs read 100–140 ns for
//! stretches of a few seconds to a minute, then 180–210 ns for others, and the virtual lab's
//! probes, which cross from the generator's CPU to the DUT's, moved with it: probes alone
//! through the DUT took P50 3.1–3.4 µs in the first state and 4.7–5.2 µs in the second (30
//! pairs of a 1 s round-trip reading then 2 s of probes, 2026-11-27; the same probes sent from
//! the DUT's own CPU took 3.5–3.9 µs in either). That is the test machine's, not the DUT's, and
//! a trial falls wholly in one state or straddles two; the watch records which, so that the
//! report can say when a series' trials were measured with their CPUs at different distances.
//!
//! The watch is two threads, one pinned to each CPU at a real-time priority above the DUT's
//! NAPI kthreads (`lab::virt::NAPI_PRIORITY`), which meet every [`PERIOD`] (both sleep until
//! the same instant) and play [`ROUNDS`] rounds of ping-pong through one atomic word
//! ([`Table`]); the shortest round is the sample, as the shortest of many is the one no
//! interrupt or preemption entered. A meeting costs each CPU the rounds (≈ 10 µs) and the wait
//! for the other thread's wake-up (at most [`MEETING`]): under 0.1 % of its time, and of the
//! probes, those sent in that span wait for it.
//!
//! [`PERIOD`]: crate::lab::distance::PERIOD
//! [`ROUNDS`]: crate::lab::distance::ROUNDS
//! [`MEETING`]: crate::lab::distance::MEETING
//! [`Table`]: crate::lab::distance::Table

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use crate::stats::doubt::same_distance;
use crate::stats::upper_median;
use crate::traffic::os;

/// How often the two threads meet.
pub const PERIOD: Duration = Duration::from_millis(200);
/// Rounds of ping-pong per meeting, of which the shortest is kept.
pub const ROUNDS: u64 = 32;
/// How long a thread waits for the other at a meeting, and for an answer in a round, before
/// the meeting is given up: a CPU that long away (a hypervisor's stall) tells no distance.
pub const MEETING: Duration = Duration::from_micros(200);

/// Looks at the ball between two looks at the clock (or at whether to stop).
pub const LOOKS: u32 = 64;

/// A word two threads pass a ball through, one on each CPU: the initiator [`serve`]s, the
/// other thread [`answer`]s with the time on its clock.
///
/// [`serve`]: Table::serve
/// [`answer`]: Table::answer_until
#[derive(Debug, Default)]
pub struct Table {
    /// Odd: the ball is with the answering thread; even: back with the initiator.
    turn: AtomicU64,
    /// The answering thread's clock when it answered, ns since the epoch.
    stamp: AtomicI64,
}

/// One round: the initiator's clock when it served and when the ball came back, and the other
/// thread's clock when it answered, ns since the epoch (`CLOCK_REALTIME`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Round {
    /// The initiator's clock as it served.
    pub served_ns: i64,
    /// The other thread's clock as it answered.
    pub answered_ns: i64,
    /// The initiator's clock once the ball was back.
    pub back_ns: i64,
}

impl Round {
    /// The round trip, ns.
    pub fn trip_ns(&self) -> i64 {
        self.back_ns - self.served_ns
    }

    /// The other thread's clock less the initiator's, ns, give or take half the round trip.
    pub fn offset_ns(&self) -> i64 {
        self.answered_ns - (self.served_ns + self.back_ns) / 2
    }
}

/// `CLOCK_REALTIME` in ns since the epoch, through the vDSO.
fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

impl Table {
    /// The initiator's round `n` (1, 2, …, rising across the table's life): serves and waits
    /// at most `patience` for the ball; `None` when it did not come back.
    pub fn serve(&self, n: u64, patience: Duration) -> Option<Round> {
        let (odd, even) = (2 * n - 1, 2 * n);
        let since = Instant::now();
        let served_ns = now_ns();
        self.turn.store(odd, Ordering::Release);
        let mut spins = 0u32;
        while self.turn.load(Ordering::Acquire) != even {
            // The clock only now and then: a read between two looks at the ball would
            // lengthen the round by as much.
            spins = spins.wrapping_add(1);
            if spins % LOOKS == 0 && since.elapsed() > patience {
                return None;
            }
            std::hint::spin_loop();
        }
        let back_ns = now_ns();
        let answered_ns = self.stamp.load(Ordering::Relaxed);
        Some(Round {
            served_ns,
            answered_ns,
            back_ns,
        })
    }

    /// The other thread: answers every serve, spinning, until `done` says so (asked every
    /// [`LOOKS`] looks at the ball, which it would otherwise answer late).
    pub fn answer_until(&self, mut done: impl FnMut() -> bool) {
        let (mut answered, mut spins) = (0, 0u32);
        loop {
            let turn = self.turn.load(Ordering::Acquire);
            if turn % 2 == 1 && turn != answered {
                self.stamp.store(now_ns(), Ordering::Relaxed);
                answered = turn + 1;
                self.turn.store(answered, Ordering::Release);
            }
            spins = spins.wrapping_add(1);
            if spins % LOOKS == 0 && done() {
                return;
            }
            std::hint::spin_loop();
        }
    }
}

/// What the watch saw over a trial (`cpu-round-trips.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundTrips {
    /// The two CPUs: the probes' (the answering thread's) and the DUT's (the initiator's).
    pub cpus: [usize; 2],
    /// Time between meetings, ms.
    pub period_ms: f64,
    /// Each meeting: its time (s since the Unix epoch) and its shortest round trip (ns).
    pub samples: Vec<(f64, u32)>,
    /// Meetings given up: a thread came too late, or an answer did.
    pub missed: u64,
}

/// A trial's round trips in short, for its `meta.json`: their median and range, ns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundTripSummary {
    /// The median meeting's round trip.
    pub median_ns: u32,
    /// The shortest.
    pub min_ns: u32,
    /// The longest.
    pub max_ns: u32,
    /// Meetings sampled.
    pub samples: usize,
    /// Each second of the trial from its start (as its `latency.hlog`'s intervals), the median
    /// of its meetings' round trips; `None` for a second without one, and for a second whose
    /// meetings disagree by more than [`APART_RATIO`](crate::stats::doubt::APART_RATIO) (the
    /// host moved the vCPUs within it: no one distance was its own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_second_ns: Vec<Option<u32>>,
}

impl RoundTrips {
    /// The samples' median and range, and each second's median from `start_unix_s` (the
    /// trial's start, as [`RoundTripSummary::per_second_ns`] says); `None` without a sample.
    pub fn summary(&self, start_unix_s: f64) -> Option<RoundTripSummary> {
        let mut seconds: Vec<Vec<u32>> = Vec::new();
        for &(t, ns) in &self.samples {
            let Some(i) = Some((t - start_unix_s).floor()).filter(|&i| i >= 0.0) else {
                continue;
            };
            let i = i as usize;
            if seconds.len() <= i {
                seconds.resize(i + 1, Vec::new());
            }
            seconds[i].push(ns);
        }
        let all = self.samples.iter().map(|&(_, ns)| ns);
        Some(RoundTripSummary {
            median_ns: upper_median(all.clone().collect())?,
            min_ns: all.clone().min()?,
            max_ns: all.max()?,
            samples: self.samples.len(),
            per_second_ns: seconds.into_iter().map(one_distance).collect(),
        })
    }
}

/// The median of a second's round trips, when they are of one distance
/// ([`same_distance`]: the lowest and the highest).
fn one_distance(ns: Vec<u32>) -> Option<u32> {
    let (low, high) = (*ns.iter().min()?, *ns.iter().max()?);
    same_distance(low, high).then(|| upper_median(ns))?
}

/// A running watch; [`DistanceWatch::finish`] stops it and says what it saw.
#[derive(Debug)]
pub struct DistanceWatch {
    stop: Arc<AtomicBool>,
    initiator: Option<JoinHandle<anyhow::Result<RoundTrips>>>,
    answerer: Option<JoinHandle<anyhow::Result<()>>>,
}

/// What the two threads share.
#[derive(Debug, Default)]
struct Meeting {
    table: Table,
    /// The meeting the answering thread is at.
    present: AtomicU64,
    /// The last meeting the initiator is done with.
    over: AtomicU64,
}

impl DistanceWatch {
    /// Starts sampling the distance between `answerer` (a thread on that CPU answers) and
    /// `initiator` (the DUT's CPU, whose thread serves and records).
    pub fn start(answerer: usize, initiator: usize) -> anyhow::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let meeting = Arc::new(Meeting::default());
        // Both threads count their meetings from one instant.
        let t0 = Instant::now();
        let spawn_err = "starting the CPUs' round-trip watch";
        let answering = {
            let (stop, meeting) = (Arc::clone(&stop), Arc::clone(&meeting));
            std::thread::Builder::new()
                .name("benchlab-cpu-rt-a".into())
                .spawn(move || answer(answerer, t0, &meeting, &stop))
                .context(spawn_err)?
        };
        let initiating = {
            let (stop, meeting) = (Arc::clone(&stop), Arc::clone(&meeting));
            std::thread::Builder::new()
                .name("benchlab-cpu-rt-i".into())
                .spawn(move || initiate([answerer, initiator], t0, &meeting, &stop))
        };
        let initiating = match initiating {
            Ok(t) => t,
            Err(e) => {
                stop.store(true, Ordering::Relaxed);
                let _ = answering.join();
                return Err(e).context(spawn_err);
            }
        };
        Ok(Self {
            stop,
            initiator: Some(initiating),
            answerer: Some(answering),
        })
    }

    /// Stops the watch and returns what it saw.
    pub fn finish(mut self) -> anyhow::Result<RoundTrips> {
        self.stop.store(true, Ordering::Relaxed);
        let answered = self
            .answerer
            .take()
            .map(|t| t.join().unwrap_or_else(panicked));
        let initiated = self
            .initiator
            .take()
            .map(|t| t.join().unwrap_or_else(panicked));
        answered.transpose()?;
        initiated.context("the CPUs' round-trip watch was stopped twice")?
    }
}

impl Drop for DistanceWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.answerer.take() {
            let _ = t.join();
        }
        if let Some(t) = self.initiator.take() {
            let _ = t.join();
        }
    }
}

/// A watch thread's end when it panicked.
fn panicked<T>(_: Box<dyn std::any::Any + Send>) -> anyhow::Result<T> {
    Err(anyhow::anyhow!("the CPUs' round-trip watch panicked"))
}

/// A watch thread's setup: pinned to `cpu`, above the DUT's NAPI kthreads.
fn ready(cpu: usize) -> anyhow::Result<()> {
    os::pin_to_cpu(cpu)?;
    os::realtime(super::virt::NAPI_PRIORITY + 1)
        .map_err(|e| anyhow::anyhow!("the CPUs' round-trip watch needs a real-time priority: {e}"))
}

/// Sleeps until meeting `k` (counted from `t0`); `false` once the watch is stopped.
fn until_meeting(t0: Instant, k: u64, stop: &AtomicBool) -> bool {
    let due = t0 + PERIOD * k as u32;
    // In short sleeps, so that a stop is seen within a few ms.
    while !stop.load(Ordering::Relaxed) {
        let left = due.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return true;
        }
        std::thread::sleep(left.min(Duration::from_millis(20)));
    }
    false
}

/// The answering thread: at each meeting, says it is there and answers until the initiator
/// is done with it (or three [`MEETING`]s, should the initiator not come).
fn answer(cpu: usize, t0: Instant, m: &Meeting, stop: &AtomicBool) -> anyhow::Result<()> {
    ready(cpu)?;
    let mut k = 1;
    while until_meeting(t0, k, stop) {
        m.present.store(k, Ordering::Release);
        let since = Instant::now();
        // The initiator is done within a MEETING of its wake-up, plus the rounds, or one more
        // MEETING for an answer that did not come: past three, it is away (a stall), and
        // spinning longer would only take this CPU from the generator.
        m.table
            .answer_until(|| m.over.load(Ordering::Acquire) >= k || since.elapsed() > MEETING * 3);
        k += 1;
    }
    Ok(())
}

/// The initiating thread: at each meeting, waits for the other, plays the rounds and keeps
/// the shortest.
fn initiate(
    cpus: [usize; 2],
    t0: Instant,
    m: &Meeting,
    stop: &AtomicBool,
) -> anyhow::Result<RoundTrips> {
    ready(cpus[1])?;
    let mut seen = RoundTrips {
        cpus,
        period_ms: PERIOD.as_secs_f64() * 1e3,
        samples: Vec::new(),
        missed: 0,
    };
    let (mut k, mut n) = (1, 0);
    while until_meeting(t0, k, stop) {
        let since = Instant::now();
        let mut there = false;
        while since.elapsed() < MEETING {
            if m.present.load(Ordering::Acquire) == k {
                there = true;
                break;
            }
            std::hint::spin_loop();
        }
        let mut shortest: Option<i64> = None;
        for _ in 0..ROUNDS {
            if !there {
                break;
            }
            n += 1;
            match m.table.serve(n, MEETING) {
                Some(round) => {
                    shortest = Some(shortest.map_or(round.trip_ns(), |s| s.min(round.trip_ns())))
                }
                None => {
                    shortest = None;
                    break;
                }
            }
        }
        m.over.store(k, Ordering::Release);
        match shortest {
            Some(ns) => seen.samples.push((
                crate::clock::unix_now(),
                ns.clamp(0, u32::MAX as i64) as u32,
            )),
            None => seen.missed += 1,
        }
        k += 1;
    }
    Ok(seen)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_trip_is_its_ends_and_the_offset_its_middle() {
        let r = Round {
            served_ns: 1000,
            answered_ns: 1080,
            back_ns: 1200,
        };
        assert_eq!(r.trip_ns(), 200);
        assert_eq!(r.offset_ns(), -20);
    }

    #[test]
    fn the_summary_is_the_samples_median_and_range_and_each_seconds_median() {
        let mut rt = RoundTrips {
            cpus: [0, 1],
            period_ms: 200.0,
            samples: vec![],
            missed: 0,
        };
        assert_eq!(rt.summary(0.0), None);
        rt.samples = vec![
            (10.2, 140),
            (10.6, 120),
            (10.8, 130),
            (12.5, 200),
            (13.1, 200),
            (13.5, 410),
            (9.9, 400),
        ];
        let s = rt.summary(10.0).unwrap();
        assert_eq!(
            (s.median_ns, s.min_ns, s.max_ns, s.samples),
            (200, 120, 410, 7)
        );
        // Seconds from the start: the one before it is left out, and the one whose meetings
        // read two distances (the host moved the vCPUs within it) has none.
        assert_eq!(s.per_second_ns, [Some(130), None, Some(200), None]);
    }

    #[test]
    fn the_watch_meets_every_period_between_two_cpus() {
        // Needs a real-time priority (root), like the lab.
        let cpus = os::cpu_count();
        let watch = DistanceWatch::start(0, cpus.min(2) - 1).unwrap();
        std::thread::sleep(PERIOD * 3 + PERIOD / 2);
        let seen = watch.finish().unwrap();
        assert_eq!(seen.samples.len() as u64 + seen.missed, 3, "{seen:?}");
        assert!(
            seen.samples.iter().all(|&(t, ns)| t > 0.0 && ns > 0),
            "{seen:?}"
        );
    }
}
