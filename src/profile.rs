//! Profiling the DUT during a trial: a [`Profiler`] records the DUT's CPUs for a window and
//! gives back folded stacks; a [`CaptureSchedule`] places that window inside the trial's traffic
//! (after warm-up, before cool-down).
//!
//! A profiler is started, paused, *before* the traffic: on a machine whose CPUs the traffic
//! saturates, `perf record` took up to 3 s to set itself up (walking /proc), which ate most of
//! a capture window started at the end of warm-up. Once ready it is resumed and paused again at
//! the window's edges, which costs a few milliseconds.
//!
//! [`PerfProfiler`] is `perf record -g` on a Linux host, driven through its control FIFOs, then
//! `perf script` folded by [`folded::fold_perf`]. It runs through a [`Transport`], so the same
//! code profiles a Linux DUT over SSH. A FreeBSD DUT gets a [`pmcstat::PmcstatProfiler`]
//! implementing the same traits: `pmcstat -S <event> -O FILE` started by
//! [`Recording::resume`] (it cannot start paused), stopped (SIGINT) by [`Recording::halt`],
//! then `pmcstat -R FILE -G GRAPH` folded by [`pmc::fold_pmcstat`]. Nothing after the folded
//! stacks (the `perf.folded` file, the checks, the SVGs, the report) depends on which profiler
//! made them.
//!
//! [`Profiler`]: crate::profile::Profiler
//! [`CaptureSchedule`]: crate::profile::CaptureSchedule
//! [`PerfProfiler`]: crate::profile::PerfProfiler
//! [`folded::fold_perf`]: crate::profile::folded::fold_perf
//! [`Transport`]: crate::transport::Transport
//! [`pmcstat::PmcstatProfiler`]: crate::profile::pmcstat::PmcstatProfiler
//! [`Recording::resume`]: crate::profile::Recording::resume
//! [`Recording::halt`]: crate::profile::Recording::halt
//! [`pmc::fold_pmcstat`]: crate::profile::pmc::fold_pmcstat

use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

use crate::cancel::Cancel;
use crate::clock::unix_now;
use folded::Folded;

/// Folded stacks, the model of a capture, and `perf script` folded into them.
pub(crate) mod folded;
/// FreeBSD `pmcstat -G` call graphs folded into [`Folded`] stacks.
pub mod pmc;
/// `pmcstat` sampling a FreeBSD DUT's CPUs (hwpmc) over a transport.
pub(crate) mod pmcstat;
use crate::transport::{failed, Command, Process, Transport};

/// When a capture ran and what it recorded, kept in the profiling trial's `meta.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaptureWindow {
    /// First sample, seconds since the Unix epoch (when the profiler started, if it gave no
    /// sample times).
    pub(crate) start_unix_s: f64,
    /// Last sample, seconds since the Unix epoch (when it stopped, if it gave no sample times).
    pub(crate) end_unix_s: f64,
    /// The CPUs recorded.
    pub(crate) cpus: Vec<usize>,
    /// The profiler's command line, as run on the DUT's host.
    pub(crate) command: String,
    /// Seconds from the profiler's launch until it sampled, when it was launched at the
    /// window's start (pmcstat, which cannot start paused): what its setup took of the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) setup_s: Option<f64>,
}

/// What a capture gives back.
#[derive(Debug, Clone)]
pub(crate) struct CaptureResult {
    /// The stacks.
    pub(crate) folded: Folded,
    /// When it ran.
    pub(crate) window: CaptureWindow,
}

/// A CPU profiler for the DUT: made ready before the traffic, recording only inside it.
pub(crate) trait Profiler {
    /// Starts the profiler paused, returning once it is ready to record the DUT's CPUs.
    fn start(&self) -> anyhow::Result<Box<dyn Recording + '_>>;
}

/// A profiler started by [`Profiler::start`], paused until resumed.
pub(crate) trait Recording {
    /// Starts recording (cheap: the profiler is ready).
    fn resume(&mut self) -> anyhow::Result<()>;
    /// Stops recording, keeping what was recorded; cheap, so it can run while traffic flows.
    fn halt(&mut self) -> anyhow::Result<()>;
    /// Halts if still recording, then folds what was recorded (resolving symbols takes CPU:
    /// the trial calls it once its traffic has stopped).
    fn stop(self: Box<Self>) -> anyhow::Result<CaptureResult>;
}

/// `perf record -g -C <cpus>` on a Linux host (the virtual lab's host sees every namespace's
/// CPUs, kernel stacks included).
#[derive(Debug)]
pub(crate) struct PerfProfiler<'a> {
    host: &'a dyn Transport,
    cpus: Vec<usize>,
}

/// How long `perf record` may take to write its last buffers once asked to stop.
const PERF_GRACE: Duration = Duration::from_secs(10);
/// How long `perf record` may take to set itself up and answer a control command.
const PERF_CONTROL_TIMEOUT: Duration = Duration::from_secs(60);
/// Sends a command to `perf record`'s control FIFO (`$1`) and waits for its answer on the
/// acknowledgement FIFO (`$2`). The acknowledgement FIFO is opened read-write first, so that
/// perf always has a reader to answer to (writing to a FIFO without one would kill it). The
/// command and paths are arguments, never part of the script's text.
const PERF_CONTROL_SCRIPT: &str =
    r#"exec 3<>"$2" && printf '%s\n' "$3" > "$1" && read -r answer <&3 && [ "$answer" = ack ]"#;
/// How long `perf script` may take to resolve a capture's symbols.
const PERF_SCRIPT_TIMEOUT: Duration = Duration::from_secs(120);

impl<'a> PerfProfiler<'a> {
    /// A profiler of `cpus` on `host` (no CPUs: all of them, `-a`, as on a DUT host of its own).
    pub(crate) fn new(host: &'a dyn Transport, cpus: Vec<usize>) -> Self {
        Self { host, cpus }
    }

    /// Fails unless `perf` runs on the host, saying what to install.
    pub(crate) fn check(host: &dyn Transport) -> anyhow::Result<()> {
        host.run(&["perf", "--version"]).with_context(|| {
            format!(
                "{}: profiling needs perf (Debian: apt-get install linux-perf); \
                 or run without --profile / profile = true",
                host.host()
            )
        })?;
        Ok(())
    }

    /// `perf record`, paused (`-D -1`) and driven through the FIFOs `dir/ctl` and `dir/ack`.
    fn record_argv(&self, dir: &str) -> Vec<String> {
        let cpus: Vec<String> = self.cpus.iter().map(ToString::to_string).collect();
        // Pipe mode (-o -): the data comes back on stdout, so nothing is left on the host.
        // Realtime sample clock: the window is read from the samples themselves.
        let which = if cpus.is_empty() {
            vec!["-a".to_string()]
        } else {
            vec!["-C".to_string(), cpus.join(",")]
        };
        let control = format!("fifo:{dir}/ctl,{dir}/ack");
        [
            "perf",
            "record",
            "-g",
            "-k",
            "realtime",
            "-D",
            "-1",
            "--control",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([control, "-o".into(), "-".into()])
        .chain(which)
        .collect()
    }

    /// Sends `command` to `perf`, the `perf record` controlled through `dir`, and waits for its
    /// answer; fails with perf's own message if it exits instead.
    fn control(&self, dir: &str, perf: &mut Box<dyn Process>, command: &str) -> anyhow::Result<()> {
        let host = self.host.host();
        let (ctl, ack) = (format!("{dir}/ctl"), format!("{dir}/ack"));
        let argv: Vec<String> = ["sh", "-c", PERF_CONTROL_SCRIPT, "sh", &ctl, &ack, command]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let no_answer = || format!("{host}: perf record did not answer `{command}`");
        let mut sent = self.host.spawn(&argv).with_context(no_answer)?;
        let deadline = Instant::now() + PERF_CONTROL_TIMEOUT;
        loop {
            if let Some(out) = sent.try_wait().with_context(no_answer)? {
                return if out.success() {
                    Ok(())
                } else {
                    Err(failed(host, &argv, &out)).with_context(no_answer)
                };
            }
            if let Some(out) = perf.try_wait()? {
                let _ = sent.stop(Duration::ZERO);
                return Err(failed(host, &self.record_argv(dir), &out).into());
            }
            if Instant::now() > deadline {
                let _ = sent.stop(Duration::ZERO);
                bail!(
                    "{} within {} s",
                    no_answer(),
                    PERF_CONTROL_TIMEOUT.as_secs()
                );
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

struct PerfRecording<'p> {
    profiler: &'p PerfProfiler<'p>,
    /// The host's directory holding the control FIFOs (`benchlab-perf.*`, removed on drop).
    dir: String,
    process: Option<Box<dyn Process>>,
    /// When recording was resumed, if it was.
    resumed_unix_s: Option<f64>,
    /// `perf record`'s data once halted, and when it was halted.
    halted: Option<(Vec<u8>, f64)>,
}

impl Profiler for PerfProfiler<'_> {
    fn start(&self) -> anyhow::Result<Box<dyn Recording + '_>> {
        let host = self.host.host();
        let dir = self
            .host
            .run(&["mktemp", "-d", "/tmp/benchlab-perf.XXXXXX"])
            .with_context(|| format!("{host}: making perf record's control directory"))?
            .trim()
            .to_string();
        // From here on, the recording's drop removes the directory and stops perf.
        let mut recording = PerfRecording {
            profiler: self,
            dir,
            process: None,
            resumed_unix_s: None,
            halted: None,
        };
        let dir = recording.dir.clone();
        self.host
            .run(&["mkfifo", &format!("{dir}/ctl"), &format!("{dir}/ack")])
            .with_context(|| format!("{host}: making perf record's control FIFOs"))?;
        let mut perf = self
            .host
            .spawn(&self.record_argv(&dir))
            .with_context(|| format!("{host}: starting perf record"))?;
        // perf answers once it has set itself up: from then on, resuming is immediate.
        let ready = self.control(&dir, &mut perf, "ping");
        recording.process = Some(perf);
        ready?;
        Ok(Box::new(recording))
    }
}

impl Recording for PerfRecording<'_> {
    fn resume(&mut self) -> anyhow::Result<()> {
        let perf = self
            .process
            .as_mut()
            .context("perf record already halted")?;
        self.profiler.control(&self.dir, perf, "enable")?;
        self.resumed_unix_s = Some(unix_now());
        Ok(())
    }

    fn halt(&mut self) -> anyhow::Result<()> {
        let Some(mut process) = self.process.take() else {
            return Ok(());
        };
        let p = self.profiler;
        let stopped_unix_s = unix_now();
        // Pausing first makes the window end now, however long perf takes to exit.
        let paused = p.control(&self.dir, &mut process, "disable");
        let out = process
            .stop(PERF_GRACE)
            .with_context(|| format!("{}: stopping perf record", p.host.host()))?;
        paused?;
        // perf record exits with the signal's status when stopped; only its data says if it ran.
        if out.stdout.is_empty() {
            return Err(failed(p.host.host(), &p.record_argv(&self.dir), &out).into());
        }
        self.halted = Some((out.stdout, stopped_unix_s));
        Ok(())
    }

    fn stop(mut self: Box<Self>) -> anyhow::Result<CaptureResult> {
        self.halt()?;
        let p = self.profiler;
        let argv = p.record_argv(&self.dir);
        let (data, stopped_unix_s) = self.halted.take().expect("halted above");
        let script = Command::new([
            "perf",
            "script",
            "-i",
            "-",
            "--no-inline",
            "-F",
            "comm,tid,cpu,time,event,ip,sym,dso",
        ])
        .stdin(data)
        .timeout(PERF_SCRIPT_TIMEOUT);
        let text = p
            .host
            .check(&script)
            .with_context(|| format!("{}: perf script", p.host.host()))?
            .stdout;
        let folded = folded::fold_perf(text.as_slice()).context("folding perf script output")?;
        let resumed = self.resumed_unix_s.unwrap_or(stopped_unix_s);
        let (first, last) = sample_times(&text).unwrap_or((resumed, stopped_unix_s));
        Ok(CaptureResult {
            folded,
            window: CaptureWindow {
                start_unix_s: first,
                end_unix_s: last,
                cpus: p.cpus.clone(),
                command: crate::transport::display_argv(&argv),
                setup_s: None,
            },
        })
    }
}

impl Drop for PerfRecording<'_> {
    fn drop(&mut self) {
        // A trial that fails mid-capture must not leave perf running, nor its FIFOs.
        if let Some(process) = self.process.take() {
            let _ = process.stop(Duration::from_secs(1));
        }
        let _ = self.profiler.host.run(&["rm", "-rf", &self.dir]);
    }
}

/// First and last sample times of `perf script` output (`comm tid [cpu] 1700000000.123456: …`).
fn sample_times(perf_script: &[u8]) -> Option<(f64, f64)> {
    let text = String::from_utf8_lossy(perf_script);
    let times = text
        .lines()
        .filter(|l| !l.starts_with(char::is_whitespace))
        .filter_map(|l| {
            let rest = &l[l.find("] ")? + 2..];
            rest.trim_start()
                .split(':')
                .next()?
                .trim()
                .parse::<f64>()
                .ok()
        });
    times.fold(None, |acc, t| match acc {
        None => Some((t, t)),
        Some((a, b)) => Some((f64::min(a, t), f64::max(b, t))),
    })
}

/// Where a capture goes in a trial: from the end of warm-up (plus an optional delay) for as long
/// as the measured window lasts. The trial starts the profiler (paused) before its traffic, then
/// calls [`poll`](Self::poll) as it goes and [`finish`](Self::finish) once the traffic stops.
pub(crate) struct CaptureSchedule<'p> {
    recording: Box<dyn Recording + 'p>,
    start_at: Instant,
    stop_at: Instant,
    state: Capture,
}

/// Where a scheduled capture is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Capture {
    Paused,
    Recording,
    Halted,
}

impl<'p> CaptureSchedule<'p> {
    /// A capture by `recording` (from [`Profiler::start`]) from `traffic_start + warmup + delay`
    /// to `traffic_start + duration - cooldown + delay` (delay 0: exactly the measured window).
    pub(crate) fn new(
        recording: Box<dyn Recording + 'p>,
        traffic_start: Instant,
        trial: &crate::config::Trial,
        delay: Duration,
    ) -> Self {
        let start_at = traffic_start + trial.warmup + delay;
        let measured_end = trial.duration.saturating_sub(trial.cooldown);
        let stop_at = traffic_start + measured_end.max(trial.warmup) + delay;
        Self {
            recording,
            start_at,
            stop_at,
            state: Capture::Paused,
        }
    }

    /// Resumes or halts the capture when its time has come.
    pub(crate) fn poll(&mut self) -> anyhow::Result<()> {
        let now = Instant::now();
        if self.state == Capture::Paused && now >= self.start_at {
            self.recording.resume()?;
            self.state = Capture::Recording;
        }
        if self.state == Capture::Recording && now >= self.stop_at {
            self.recording.halt()?;
            self.state = Capture::Halted;
        }
        Ok(())
    }

    /// Time left until the capture must start or stop (`None` once it is done), so that a
    /// trial loop waiting for samples wakes up in time.
    pub(crate) fn until_next(&self) -> Option<Duration> {
        let next = match self.state {
            Capture::Halted => return None,
            Capture::Recording => self.stop_at,
            Capture::Paused => self.start_at,
        };
        Some(next.saturating_duration_since(Instant::now()))
    }

    /// Completes the schedule (waiting for a window placed past the traffic) and returns the
    /// folded capture; `cancel` cuts the waiting short.
    pub(crate) fn finish(mut self, cancel: &Cancel) -> anyhow::Result<CaptureResult> {
        while self.state != Capture::Halted {
            cancel.check()?;
            self.poll()?;
            if let Some(wait) = self.until_next() {
                std::thread::sleep(wait.min(Duration::from_millis(100)));
            }
        }
        self.recording.stop()
    }
}

#[cfg(test)]
mod tests;
