//! A FreeBSD DUT's CPUs sampled by `pmcstat` (hwpmc) through a [`Transport`], folded by
//! [`fold_pmcstat`] into the same [`Folded`](crate::profile::folded::Folded) stacks as perf's.
//!
//! The flags are those of pmcstat(8), as the netbenches harness used them (bench-lab.sh, see
//! the harness notes), minus its `-l` duration, which benchlab replaces by SIGINT (the unit
//! tests keep what the manual says of each flag, and of `-l` and `-N`, which it leaves out):
//!
//! - `pmcstat -S EVENT -O FILE`: `-S` allocates a *system-wide sampling* PMC of EVENT on every
//!   CPU; `-O` sends the samples (with their call chains) to the log FILE. With no command to
//!   run, pmcstat samples until it receives SIGINT, on which it flushes the log and exits.
//! - `pmcstat -R FILE -z 16 -G GRAPH`: `-R` reads a log instead of sampling, `-G` writes its
//!   call graph (the text [`fold_pmcstat`] reads) to GRAPH, `-z` limits the call chains shown
//!   to 16 frames, the harness's `-z16`.
//! - `kldstat -q -m hwpmc || kldload hwpmc`: `-q -m` asks quietly whether the module is in
//!   the kernel; hwpmc is loaded only when it is not.
//!
//! pmcstat cannot be started paused and enabled later (it has no control channel, unlike
//! `perf record --control`), so it is *started* at the capture window's start and stopped
//! (SIGINT) at its end. What its start costs the window is measured: from the launch until
//! its log first has data (hwpmc writes the log a buffer at a time, so this bounds pmcstat's
//! setup from above, SSH connection included); the capture records it as `setup_s`.
//!
//! The log and the graph live in a `mktemp -d` directory on the DUT, removed when the
//! recording ends, whether it succeeded, failed or was interrupted (Ctrl-C).
//!
//! [`Transport`]: crate::transport::Transport
//! [`fold_pmcstat`]: crate::profile::pmc::fold_pmcstat

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use super::pmc::fold_pmcstat;
use super::{CaptureResult, CaptureWindow, Profiler, Recording};
use crate::clock::unix_now;
use crate::transport::{display_argv, failed, Command, Process, Transport, TransportError};

/// The event sampled when the lab names none: the netbenches harness's default
/// (`PMC_EVENT`), the unhalted clock of the AMD cores its APU2 DUTs have. Intel CPUs call it
/// `cpu_clk_unhalted.thread_p`.
pub(crate) const DEFAULT_EVENT: &str = "BU_CPU_CLK_UNHALTED";
/// Loads hwpmc unless the kernel has it already.
const LOAD_HWPMC: &str = "kldstat -q -m hwpmc || kldload hwpmc";
/// Whether pmcstat can sample `$1` on this machine: a system-wide sampling run around `true`,
/// its log in a scratch directory removed afterwards.
const PROBE: &str = r#"d=$(mktemp -d /tmp/benchlab-pmc.XXXXXX) || exit 1
pmcstat -S "$1" -O "$d/probe.out" true; s=$?
rm -rf "$d"; exit $s"#;
/// Returns once the file `$1` has data (pmcstat's log: sampling has begun), or fails once its
/// directory is gone (the recording ended), so that it never outlives the recording.
const WAIT_FOR_DATA: &str =
    r#"while [ ! -s "$1" ]; do [ -d "${1%/*}" ] || exit 1; sleep 0.01; done"#;
/// How long pmcstat may take to flush its log and exit after SIGINT.
const PMCSTAT_GRACE: Duration = Duration::from_secs(10);
/// How long `pmcstat -R … -G` may take to resolve the symbols of a capture.
const GRAPH_TIMEOUT: Duration = Duration::from_secs(120);
/// How often the waiter thread looks at the remote wait for the log's first data.
const WAIT_POLL: Duration = Duration::from_millis(5);

/// `pmcstat -S EVENT` on every CPU of a FreeBSD host.
#[derive(Debug)]
pub(crate) struct PmcstatProfiler<'a> {
    host: &'a dyn Transport,
    event: String,
}

impl<'a> PmcstatProfiler<'a> {
    /// A profiler sampling `event` on `host`.
    pub(crate) fn new(host: &'a dyn Transport, event: &str) -> Self {
        Self {
            host,
            event: event.to_string(),
        }
    }

    /// Loads hwpmc if needed and checks that pmcstat can sample `event`: `Ok(None)` when it
    /// can, `Ok(Some(why))` when the host cannot be profiled (no hwpmc: a VM, a kernel without
    /// it; or no such event), one line saying why and what to do. SSH failures are errors.
    pub(crate) fn check(host: &dyn Transport, event: &str) -> anyhow::Result<Option<String>> {
        let name = host.host();
        match host.check(&Command::new(["sh", "-c", LOAD_HWPMC])) {
            Ok(_) => {}
            Err(TransportError::Failed { stderr, .. }) => {
                return Ok(Some(format!(
                    "{name} has no hwpmc ({stderr}): a VM, or a kernel without hwpmc, cannot \
                     be profiled"
                )))
            }
            Err(e) => return Err(e.into()),
        }
        match host.check(&Command::new(["sh", "-c", PROBE, "sh", event])) {
            Ok(_) => Ok(None),
            Err(TransportError::Failed { stderr, .. }) => Ok(Some(format!(
                "{name}: pmcstat cannot sample {event} ({stderr}); set pmc_event in the DUT's \
                 [hosts.dut] table to an event `pmcstat -L` lists (Intel: \
                 cpu_clk_unhalted.thread_p)"
            ))),
            Err(e) => Err(e.into()),
        }
    }

    /// `pmcstat -S EVENT -O LOG`.
    fn record_argv(&self, log: &str) -> Vec<String> {
        ["pmcstat", "-S", &self.event, "-O", log]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }
}

impl Profiler for PmcstatProfiler<'_> {
    fn start(&self) -> anyhow::Result<Box<dyn Recording + '_>> {
        let host = self.host.host();
        // A new version (a reboot) unloads hwpmc: load it again before every capture.
        self.host
            .check(&Command::new(["sh", "-c", LOAD_HWPMC]))
            .with_context(|| format!("{host}: loading hwpmc for pmcstat"))?;
        let dir = self
            .host
            .run(&["mktemp", "-d", "/tmp/benchlab-pmc.XXXXXX"])
            .with_context(|| format!("{host}: making pmcstat's directory"))?
            .trim()
            .to_string();
        let log = format!("{dir}/pmc.out");
        let mut recording = PmcstatRecording {
            profiler: self,
            log,
            dir,
            process: None,
            launched: None,
            ready: None,
            halted: None,
        };
        // The watch is set up before the traffic, so that its own SSH connection does not
        // count in pmcstat's setup: from the launch on, it only waits for the log's data.
        let wait: Vec<String> = ["sh", "-c", WAIT_FOR_DATA, "sh", &recording.log]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut waiter =
            (self.host.spawn(&wait)).with_context(|| format!("{host}: watching pmcstat's log"))?;
        // Its process id comes once it runs on the host (over SSH: once connected).
        let deadline = Instant::now() + PMCSTAT_GRACE;
        while waiter.id().is_none() && Instant::now() < deadline {
            if waiter.try_wait()?.is_some() {
                break;
            }
            std::thread::sleep(WAIT_POLL);
        }
        recording.ready = Some(ReadyWatch::new(waiter));
        Ok(Box::new(recording))
    }
}

/// `pmcstat -R LOG -z 16 -G GRAPH`: the call graph of a log, chains cut at the harness's depth.
fn graph_argv(log: &str, graph: &str) -> Vec<String> {
    ["pmcstat", "-R", log, "-z", "16", "-G", graph]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// The remote wait for pmcstat's first log data, watched by a thread of its own so that the
/// trial loop is never held up: it gives the instant the wait ended, `None` if it was given up.
struct ReadyWatch {
    give_up: Arc<AtomicBool>,
    thread: JoinHandle<Option<Instant>>,
}

impl ReadyWatch {
    /// Watches `waiter` until it exits (successfully: the log has data) or is given up.
    fn new(mut waiter: Box<dyn Process>) -> Self {
        let give_up = Arc::new(AtomicBool::new(false));
        let flag = give_up.clone();
        let thread = std::thread::spawn(move || loop {
            if flag.load(Ordering::Relaxed) {
                let _ = waiter.stop(Duration::ZERO);
                return None;
            }
            match waiter.try_wait() {
                Ok(Some(out)) => return out.success().then(Instant::now),
                Ok(None) => std::thread::sleep(WAIT_POLL),
                Err(_) => return None,
            }
        });
        Self { give_up, thread }
    }

    /// When the log first had data, if it had by now; stops watching.
    fn finish(self) -> Option<Instant> {
        self.give_up.store(true, Ordering::Relaxed);
        self.thread.join().ok().flatten()
    }
}

struct PmcstatRecording<'p> {
    profiler: &'p PmcstatProfiler<'p>,
    /// The host's scratch directory (`benchlab-pmc.*`, removed on drop).
    dir: String,
    /// pmcstat's log in `dir`.
    log: String,
    process: Option<Box<dyn Process>>,
    /// When pmcstat was launched: local instant and Unix time.
    launched: Option<(Instant, f64)>,
    ready: Option<ReadyWatch>,
    /// Once stopped: when (Unix time), and how long pmcstat took to set up, if known.
    halted: Option<(f64, Option<Duration>)>,
}

impl PmcstatRecording<'_> {
    /// pmcstat's process id on the host (the SSH transport learns it from the first line the
    /// remote wrapper prints, which may take a moment after the launch).
    fn pid(&self, process: &dyn Process) -> anyhow::Result<u32> {
        let deadline = Instant::now() + PMCSTAT_GRACE;
        loop {
            if let Some(pid) = process.id() {
                return Ok(pid);
            }
            if Instant::now() > deadline {
                bail!("{}: pmcstat's process id never came", self.host().host());
            }
            std::thread::sleep(WAIT_POLL);
        }
    }

    fn host(&self) -> &dyn Transport {
        self.profiler.host
    }

    /// Sends SIGINT to pmcstat (it then writes the rest of its log and exits) and waits for
    /// it; fails with pmcstat's own message when it had already exited by itself.
    fn interrupt(&self, mut process: Box<dyn Process>) -> anyhow::Result<()> {
        let host = self.host().host();
        let argv = self.profiler.record_argv(&self.log);
        if let Some(out) = process.try_wait()? {
            return Err(failed(host, &argv, &out))
                .context("pmcstat stopped before the end of the capture window");
        }
        let pid = self.pid(process.as_ref())?.to_string();
        self.host()
            .run(&["kill", "-INT", &pid])
            .with_context(|| format!("{host}: stopping pmcstat"))?;
        let deadline = Instant::now() + PMCSTAT_GRACE;
        // Its status after SIGINT says nothing: reading the log tells whether it is whole.
        while process.try_wait()?.is_none() {
            if Instant::now() > deadline {
                let _ = process.stop(Duration::from_secs(1));
                bail!(
                    "{host}: pmcstat did not stop within {} s of SIGINT",
                    PMCSTAT_GRACE.as_secs()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }
}

impl Recording for PmcstatRecording<'_> {
    fn resume(&mut self) -> anyhow::Result<()> {
        if self.launched.is_some() {
            return Ok(());
        }
        let host = self.profiler.host;
        let argv = self.profiler.record_argv(&self.log);
        self.launched = Some((Instant::now(), unix_now()));
        let process = host
            .spawn(&argv)
            .with_context(|| format!("{}: starting pmcstat", host.host()))?;
        self.process = Some(process);
        Ok(())
    }

    fn halt(&mut self) -> anyhow::Result<()> {
        let Some(process) = self.process.take() else {
            return Ok(());
        };
        let stopped_unix_s = unix_now();
        let stopped = self.interrupt(process);
        let ready = self.ready.take().and_then(ReadyWatch::finish);
        let setup = match (self.launched, ready) {
            (Some((launched, _)), Some(ready)) => Some(ready.saturating_duration_since(launched)),
            _ => None,
        };
        self.halted = Some((stopped_unix_s, setup));
        stopped
    }

    fn stop(mut self: Box<Self>) -> anyhow::Result<CaptureResult> {
        self.halt()?;
        let host = self.host();
        let (Some((stopped_unix_s, setup)), Some((_, launched_unix_s))) =
            (self.halted, self.launched)
        else {
            bail!("{}: pmcstat was never started", host.host());
        };
        let graph = format!("{}/pmc.graph", self.dir);
        host.check(&Command::new(graph_argv(&self.log, &graph)).timeout(GRAPH_TIMEOUT))
            .with_context(|| format!("{}: pmcstat's call graph", host.host()))?;
        let text = host
            .get_file(&graph)
            .with_context(|| format!("{}: fetching pmcstat's call graph", host.host()))?;
        let name = format!("{}:{graph}", host.host());
        let folded = fold_pmcstat(text.as_slice(), &name)?;
        Ok(CaptureResult {
            folded,
            window: CaptureWindow {
                // pmcstat's graph has no sample times: the window is its run.
                start_unix_s: launched_unix_s,
                end_unix_s: stopped_unix_s,
                cpus: Vec::new(),
                command: display_argv(&self.profiler.record_argv(&self.log)),
                setup_s: setup.map(|d| d.as_secs_f64()),
            },
        })
    }
}

impl Drop for PmcstatRecording<'_> {
    fn drop(&mut self) {
        // A trial that fails mid-capture (or Ctrl-C) must leave neither pmcstat nor its files.
        if let Some(process) = self.process.take() {
            let _ = process.stop(Duration::from_secs(1));
        }
        if let Some(ready) = self.ready.take() {
            ready.finish();
        }
        let _ = self.host().run(&["rm", "-rf", &self.dir]);
    }
}

#[cfg(test)]
mod tests;
