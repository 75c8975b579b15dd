//! The virtual DUT's CPU stalls: how long, during a trial, its CPU ran nothing of the guest.
//!
//! A virtual machine's vCPU is taken away by the hypervisor now and then (`steal` in
//! `/proc/stat`); on a busy host for 3–20 ms at a time, several times a second in disturbed
//! stretches. The virtual DUT forwards nothing meanwhile, and its input queue (a veth's 256
//! frames) overflows once the stall outlasts what the queue holds at the load: 256 frames are
//! 6 ms at 43 Kpps, 0.5 ms at 500 Kpps. Measured in a throughput search of nft-stateful on a
//! 2-vCPU VM (150 one-second trials at 9–90 Kpps): 87 of the 89 trials that lost packets had a
//! stall longer than that, 6 of the 61 that lost none ([`CpuStalls::explain`] has a forwarding
//! search's figures). So a trial's loss on the virtual lab is often the machine's, not the
//! DUT's, and the watch says which. That was with veth's ring as the DUT's whole input queue;
//! at a fixed load the lab now puts 4,096 frames in front of it ([`crate::lab::virt`]), and the
//! stalls accounted for 4 of 384 lossy trials in six searches on an equally noisy day.
//!
//! The watch is a thread pinned to the DUT's CPU at a real-time priority above the DUT's NAPI
//! threads (`lab::virt::NAPI_PRIORITY`), which wakes every [`PERIOD`] and records how late
//! it woke: only a CPU that ran nothing of the guest (or the kernel's interrupt work) delays
//! it. A stall longer than the period is always seen, short by up to one period; shorter ones
//! are seen only when they cover a wake-up. Its cost to the DUT, one wake-up per period, was
//! lost in the machine's noise here: a process spinning on a CPU beside a 1 ms watch kept a
//! median 1.06 of its speed alone (0.67–1.31 over 12 one-second pairs), and the virtual DUT
//! lost no more with one on its CPU (`benches/pacing.sh` at 200 Kpps, 5 s runs, 5 each
//! alternating: median 0.61 % with it, 1.64 % without; 0.13–3.6 % either way).
//!
//! Beside it, [`OthersWatch`] reads the lab's CPUs' time in user space over every trial on the
//! virtual lab (and per phase of the alternating design): the DUT works in the kernel, and so
//! does benchlab (XDP, NAPI, sockets), whose own user time and its commands' are taken out, so
//! that time is other programs' (a trial they take more than `store::search::CROWDED_SHARE` of
//! is crowded).
//!
//! [`CpuStalls::explain`]: crate::lab::stall::CpuStalls::explain
//! [`PERIOD`]: crate::lab::stall::PERIOD
//! [`OthersWatch`]: crate::lab::stall::OthersWatch

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::traffic::os;

/// How often the watch wakes.
pub(crate) const PERIOD: Duration = Duration::from_millis(1);
/// A wake-up later than this is a stall worth keeping: 256 frames last 0.26 ms at 1 Mpps.
pub(crate) const MIN_STALL: Duration = Duration::from_micros(200);
/// The most stalls kept per trial: the worst 1 s trial seen here had 115 over [`MIN_STALL`],
/// so this keeps over a minute of such a stretch.
pub(crate) const MAX_STALLS: usize = 10_000;
/// Frames a veth's input queue holds (the kernel's `VETH_RING_SIZE`): what the virtual DUT
/// absorbs while its CPU is away.
pub const VETH_QUEUE_FRAMES: u64 = 256;

/// A CPU to watch and the input queue it drains.
#[derive(Debug, Clone, PartialEq)]
pub struct DutCpu {
    /// The DUT's CPU.
    pub cpu: usize,
    /// Frames its input queue holds (on the virtual lab veth's [`VETH_QUEUE_FRAMES`], plus at a
    /// fixed load the [`super::virt::INPUT_QUEUE_FRAMES`] the generator holds).
    pub queue_frames: u64,
}

/// What the watch saw over a trial (`dut-cpu.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuStalls {
    /// The CPU watched.
    pub(crate) cpu: usize,
    /// Times the watch woke.
    pub(crate) wakes: u64,
    /// The latest wake-up: the longest stall seen, milliseconds.
    pub longest_ms: f64,
    /// Every wake-up later than [`MIN_STALL`], in order: the stalls, milliseconds (each short
    /// of the real one by up to a period).
    pub(crate) stalls_ms: Vec<f64>,
    /// The CPU's time stolen by the hypervisor over the same span (`steal` in `/proc/stat`,
    /// 10 ms ticks), milliseconds: how much of the stalls was the host's.
    pub(crate) steal_ms: f64,
    /// The CPU's busy time over the same span (`/proc/stat`: all but idle, iowait and steal),
    /// milliseconds: the DUT's work, which a slowed CPU makes longer for the same packets.
    #[serde(default)]
    pub(crate) busy_ms: f64,
    /// Other programs' time on the lab's CPUs over the same span (`others_ms`,
    /// `others_cpus`; the trial procedure reads it, [`OthersWatch`]); `None` where not read.
    #[serde(flatten)]
    pub(crate) others: Option<OthersTime>,
    /// Frames the DUT's input queue holds while its CPU is away.
    pub(crate) queue_frames: u64,
}

impl CpuStalls {
    /// Packets that arrived at `load` packets/s while the DUT's CPU was away (each stall as
    /// long as the watch saw it).
    pub(crate) fn arrived_during(&self, load: f64) -> f64 {
        self.stalls_ms.iter().sum::<f64>() / 1e3 * load
    }

    /// Whether the stalls account for a trial's `lost` packets at `load` packets/s — the
    /// machine's loss, not the DUT's: one stall outlasted what the DUT's input queue holds at
    /// that load, and no more packets were lost than arrived during the stalls. Measured on a
    /// 2-vCPU VM (a forwarding search, 149 trials at 45–530 Kpps): 90 of the 107 lossy trials
    /// had a stall longer than the queue, 2 of the 42 clean ones; of the 90, 88 lost 5–49 % of
    /// what arrived during their stalls (the queue absorbs the rest), and the other two were
    /// above what the DUT forwards.
    pub(crate) fn explain(&self, load: f64, lost: u64) -> bool {
        let outlasted = self.longest_ms / 1e3 * load > self.queue_frames as f64;
        lost > 0 && outlasted && lost as f64 <= self.arrived_during(load)
    }

    /// The share of the lab's CPUs' time over `seconds` (the trial's traffic) that other
    /// programs took ([`CpuStalls::others`]), where that was read.
    pub(crate) fn others_share(&self, seconds: f64) -> Option<f64> {
        self.others.as_ref().map(|o| o.share(seconds))
    }
}

/// Other programs' time in user space on the lab's CPUs over a span (a trial, a block of the
/// alternating design): the DUT works in the kernel (its NAPI kthreads, netfilter), and so does
/// benchlab (XDP, sockets), whose own user time and its commands' are taken out, so that what
/// is left is other programs' work. The DUT's real-time NAPI kthreads preempt them; what they
/// take is the CPUs' caches and the kthreads' wake-ups.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OthersTime {
    /// Their time, milliseconds (`/proc/stat`'s user and nice, 10 ms ticks).
    #[serde(rename = "others_ms")]
    pub(crate) ms: f64,
    /// The CPUs whose time it sums (empty in the first files, which read the DUT's alone).
    #[serde(rename = "others_cpus", default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) cpus: Vec<usize>,
}

impl OthersTime {
    /// Their share of the CPUs' time over `seconds`.
    pub(crate) fn share(&self, seconds: f64) -> f64 {
        cpu_share(self.ms, seconds, self.cpus.len())
    }
}

/// The share of `cpus` CPUs' time over `seconds` that `ms` milliseconds of it are (a count of
/// none read as one CPU's: the first files, which read the DUT's alone).
pub(crate) fn cpu_share(ms: f64, seconds: f64, cpus: usize) -> f64 {
    ms / 1e3 / (seconds.max(f64::EPSILON) * cpus.max(1) as f64)
}

/// Reads other programs' time on the lab's CPUs from the start of a span to its end
/// ([`OthersWatch::finish`]), or lap by lap within it ([`OthersWatch::lap`]: the alternating
/// design's phases).
#[derive(Debug)]
pub struct OthersWatch {
    cpus: Vec<usize>,
    start_ms: f64,
    lap_ms: f64,
}

impl OthersWatch {
    /// Starts reading on `cpus` where the lab names them; `None` where it names none (a lab
    /// whose CPUs are other machines').
    pub fn on(cpus: &[usize]) -> anyhow::Result<Option<Self>> {
        (!cpus.is_empty())
            .then(|| Self::start(cpus.to_vec()))
            .transpose()
    }

    /// Starts reading on `cpus`.
    pub fn start(cpus: Vec<usize>) -> anyhow::Result<Self> {
        let start_ms = others_now(&cpus)?;
        Ok(Self {
            cpus,
            start_ms,
            lap_ms: start_ms,
        })
    }

    /// Other programs' time since the last lap (or the start), milliseconds.
    pub fn lap(&mut self) -> anyhow::Result<f64> {
        let now = others_now(&self.cpus)?;
        let lap = (now - self.lap_ms).max(0.0);
        self.lap_ms = now;
        Ok(lap)
    }

    /// Their time from the start to now.
    pub fn finish(self) -> anyhow::Result<OthersTime> {
        Ok(OthersTime {
            ms: (others_now(&self.cpus)? - self.start_ms).max(0.0),
            cpus: self.cpus,
        })
    }
}

/// A running watch; [`StallWatch::finish`] stops it and says what it saw.
#[derive(Debug)]
pub struct StallWatch {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<anyhow::Result<CpuStalls>>>,
}

impl StallWatch {
    /// Starts watching the DUT's CPU.
    pub fn start(dut: DutCpu) -> anyhow::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("benchlab-stall".into())
            .spawn(move || watch(dut, &flag))?;
        Ok(Self {
            stop,
            thread: Some(thread),
        })
    }

    /// Stops the watch and returns what it saw.
    pub fn finish(mut self) -> anyhow::Result<CpuStalls> {
        self.stop.store(true, Ordering::Relaxed);
        let thread = self.thread.take();
        let joined = thread.map(|t| t.join());
        joined
            .unwrap_or_else(|| {
                Ok(Err(anyhow::anyhow!(
                    "the DUT's CPU watch was stopped twice"
                )))
            })
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the DUT's CPU watch panicked")))
    }
}

impl Drop for StallWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The watch's loop, on its own thread, until `stop`.
fn watch(dut: DutCpu, stop: &AtomicBool) -> anyhow::Result<CpuStalls> {
    let DutCpu { cpu, queue_frames } = dut;
    os::pin_to_cpu(cpu)?;
    os::realtime(super::virt::NAPI_PRIORITY + 1)
        .map_err(|e| anyhow::anyhow!("the DUT's CPU watch needs a real-time priority: {e}"))?;
    let stat = std::fs::read_to_string("/proc/stat")?;
    let before = CpuTimes::parse(&stat, cpu)?;
    let mut stalls = CpuStalls {
        cpu,
        wakes: 0,
        longest_ms: 0.0,
        stalls_ms: Vec::new(),
        steal_ms: 0.0,
        busy_ms: 0.0,
        others: None,
        queue_frames,
    };
    let mut due = Instant::now() + PERIOD;
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
        let late = Instant::now().saturating_duration_since(due);
        stalls.wakes += 1;
        let ms = late.as_secs_f64() * 1e3;
        stalls.longest_ms = stalls.longest_ms.max(ms);
        if late > MIN_STALL && stalls.stalls_ms.len() < MAX_STALLS {
            stalls.stalls_ms.push(ms);
        }
        if late > PERIOD {
            // Late by more than a period: the missed wake-ups are one stall, not many.
            due = Instant::now();
        }
        due += PERIOD;
    }
    let stat = std::fs::read_to_string("/proc/stat")?;
    let after = CpuTimes::parse(&stat, cpu)?;
    stalls.steal_ms = after.steal_ms - before.steal_ms;
    stalls.busy_ms = after.busy_ms - before.busy_ms;
    Ok(stalls)
}

/// The time `cpus` spent in user space since boot (`/proc/stat`) less this process's own and
/// its finished commands', milliseconds (wherever that ran: on a machine with CPUs beside the
/// lab's, what benchlab did there hides as much of the others', erring towards calling a span
/// uncrowded).
fn others_now(cpus: &[usize]) -> anyhow::Result<f64> {
    let stat = std::fs::read_to_string("/proc/stat")?;
    let user: f64 = (cpus.iter())
        .map(|&cpu| CpuTimes::parse(&stat, cpu).map(|t| t.user_ms))
        .sum::<anyhow::Result<f64>>()?;
    Ok(user - own_user_ms()?)
}

/// This process's time in user space since it started (`/proc/self/stat`'s `utime`, every
/// thread) and that of the commands it ran and waited for (`cutime`: the alternating design
/// switches config sets with `nft` and `iptables` during its traffic, the trials run the
/// campaign's `during` hooks), milliseconds.
fn own_user_ms() -> anyhow::Result<f64> {
    let (utime, cutime) = own_times_ms()?;
    Ok(utime + cutime)
}

/// This process's `utime` and `cutime` ([`own_user_ms`]), milliseconds.
fn own_times_ms() -> anyhow::Result<(f64, f64)> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    // The command name, in parentheses, may hold spaces: the fields count from its end.
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let field = |n: usize| {
        (after_name.split_whitespace().nth(n))
            .and_then(|t| t.parse::<f64>().ok())
            .ok_or_else(|| anyhow::anyhow!("/proc/self/stat has no field {}", n + 3))
    };
    // utime and cutime: the 14th and 16th fields, the 12th and 14th after the name.
    Ok((field(11)? * 10.0, field(13)? * 10.0))
}

/// A CPU's times since boot (`/proc/stat`), milliseconds.
struct CpuTimes {
    busy_ms: f64,
    steal_ms: f64,
    user_ms: f64,
}

impl CpuTimes {
    /// `cpu`'s line of `stat` (`/proc/stat`, read once for every CPU a reading needs).
    fn parse(stat: &str, cpu: usize) -> anyhow::Result<Self> {
        let name = format!("cpu{cpu}");
        let line = (stat.lines()).find(|l| l.split_whitespace().next() == Some(name.as_str()));
        // user nice system idle iowait irq softirq steal, in USER_HZ ticks (10 ms).
        let ticks: Vec<f64> = (line.into_iter().flat_map(|l| l.split_whitespace().skip(1)))
            .map_while(|t| t.parse().ok())
            .collect();
        if ticks.len() < 8 {
            anyhow::bail!("/proc/stat has no steal time for CPU {cpu}");
        }
        let busy = ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6];
        Ok(Self {
            busy_ms: busy * 10.0,
            steal_ms: ticks[7] * 10.0,
            user_ms: (ticks[0] + ticks[1]) * 10.0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stalls_explain_a_loss_no_larger_than_what_arrived_during_them() {
        let stalls = CpuStalls {
            cpu: 1,
            wakes: 1000,
            longest_ms: 9.0,
            stalls_ms: vec![9.0, 4.0, 0.5],
            steal_ms: 10.0,
            busy_ms: 500.0,
            others: Some(OthersTime {
                ms: 250.0,
                cpus: vec![0, 1],
            }),
            queue_frames: 256,
        };
        // At 90 Kpps the queue lasts 2.84 ms, outlasted; 13.5 ms of stalls: 1,215 packets.
        assert_eq!(stalls.arrived_during(90e3).round(), 1215.0);
        assert!(stalls.explain(90e3, 600));
        assert!(stalls.explain(90e3, 1215));
        assert!(!stalls.explain(90e3, 1300));
        assert!(!stalls.explain(90e3, 0));
        // At 20 Kpps the queue lasts 12.8 ms: no stall outlasted it, the loss is the DUT's.
        assert!(!stalls.explain(20e3, 1));
        // 250 ms of other programs over a trial of 10 s on two CPUs.
        assert_eq!(stalls.others_share(10.0), Some(0.0125));
    }

    #[test]
    fn the_watch_wakes_every_period_and_reads_the_steal_time() {
        // Needs a real-time priority (root), like the lab.
        let watch = StallWatch::start(DutCpu {
            cpu: 0,
            queue_frames: 256,
        })
        .unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let seen = watch.finish().unwrap();
        assert!(seen.wakes > 30, "{seen:?}");
        assert!(seen.steal_ms >= 0.0 && seen.longest_ms >= 0.0, "{seen:?}");
        assert!(seen.stalls_ms.iter().all(|&ms| ms <= seen.longest_ms));
    }

    #[test]
    fn other_programs_time_counts_and_benchlabs_own_and_its_commands_do_not() {
        let cpus: Vec<usize> = (0..super::super::virt::online_cpus()).collect();
        let tmp = tempfile::tempdir().unwrap();
        let done = tmp.path().join("done");
        // Some 0.3 s of a CPU in user space, however busy the machine, then a mark.
        let spin = format!(
            "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; touch {}",
            done.display()
        );
        let finished = || {
            let t0 = std::time::Instant::now();
            while !done.exists() && t0.elapsed() < Duration::from_secs(30) {
                std::thread::sleep(Duration::from_millis(10));
            }
            std::fs::remove_file(&done).unwrap();
        };
        // The CPUs' user time, everyone's.
        let total = || {
            let stat = std::fs::read_to_string("/proc/stat").unwrap();
            (cpus.iter())
                .map(|&cpu| CpuTimes::parse(&stat, cpu).unwrap().user_ms)
                .sum::<f64>()
        };
        // A command run and waited for: benchlab's, in its `cutime`, which the watch takes
        // out. Lower bounds only, so that what else runs does not matter: it is in the CPUs'
        // time and the watch's alike, and the tests beside this one (this process too) only
        // add to benchlab's.
        let (_, cutime) = own_times_ms().unwrap();
        let (watch, total_before) = (OthersWatch::start(cpus.clone()).unwrap(), total());
        let status = std::process::Command::new("sh")
            .args(["-c", &spin])
            .status();
        assert!(status.is_ok_and(|s| s.success()));
        finished();
        let (waited, total_after) = (watch.finish().unwrap(), total());
        let (_, cutime_after) = own_times_ms().unwrap();
        assert!(cutime_after - cutime >= 200.0, "{cutime} {cutime_after}");
        let taken_out = total_after - total_before - waited.ms;
        assert!(taken_out >= 180.0, "{taken_out} {waited:?}");
        // The same left to run on its own (its parent gone at once): another program's,
        // whatever else the machine runs beside it (which only adds).
        let watch = OthersWatch::start(cpus.clone()).unwrap();
        let detached = format!("({spin}) &");
        let status = std::process::Command::new("sh")
            .args(["-c", &detached])
            .status();
        assert!(status.is_ok_and(|s| s.success()));
        finished();
        let others = watch.finish().unwrap();
        // Some 0.3 s of another's; the clock counts in 10 ms ticks.
        assert!(others.ms >= 200.0, "{others:?}");
        assert_eq!(others.cpus, cpus);
        assert!((others.share(0.7) - others.ms / 700.0 / cpus.len() as f64).abs() < 1e-9);
    }
}
