//! Traffic tools run on other hosts (over a [`Transport`]): the process plumbing they share —
//! a guard that stops a remote process however a trial ends, a scratch file removed when
//! dropped, the wait for a counter's first sample — and benchlab's own `gen`/`rx` run remotely
//! with `--json` ([`RemoteGen`], [`RemoteRx`]).
//!
//! [`Transport`]: crate::transport::Transport
//! [`RemoteGen`]: crate::traffic::remote::RemoteGen
//! [`RemoteRx`]: crate::traffic::remote::RemoteRx

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use super::endpoint::{
    ticks_every, ticks_from_totals, Load, Receiver, ReceiverRecord, Sender, SenderRecord,
    SenderState, StopReason, Tick,
};
use super::wire::read_lines;
use crate::stats::CounterSample;
use crate::transport::{display_argv, failed, Output, Process, Transport};

/// The trait every generator of a real lab implements, and benchlab's own.
pub(crate) mod generator;

/// How long a counter may take to print its first sample.
const READY: Duration = Duration::from_secs(15);
/// How long a remote tool may take to stop once asked.
const STOP: Duration = Duration::from_secs(5);
/// How long the receiver keeps counting after the senders ended, for packets in flight and
/// one last sample.
pub(crate) const DRAIN: Duration = Duration::from_millis(1200);
/// How long benchlab's generator may overrun its duration: it ends by itself, so only a stuck
/// one (or a host that stopped answering) ever does.
const GEN_GRACE: Duration = Duration::from_secs(60);

/// A host's transport, shared by the tools running on it.
pub(crate) type Host = Arc<dyn Transport>;

/// A remote process stopped (SIGTERM, then SIGKILL after 2 s) when dropped, so that a trial
/// that fails half-way leaves nothing running on any host.
#[derive(Debug)]
pub(crate) struct Guard(Option<Box<dyn Process>>);

impl Guard {
    /// Guards `process`.
    pub(crate) fn new(process: Box<dyn Process>) -> Self {
        Self(Some(process))
    }

    /// The process, while guarded.
    fn get(&mut self) -> anyhow::Result<&mut Box<dyn Process>> {
        self.0.as_mut().context("the process was already stopped")
    }

    /// Stops it and returns what it left.
    fn stop(mut self) -> anyhow::Result<Output> {
        let process = self.0.take().context("the process was already stopped")?;
        Ok(process.stop(STOP)?)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = p.stop(Duration::from_secs(2));
        }
    }
}

/// A scratch file on a host, removed when dropped (trafgen's configuration).
#[derive(Debug)]
pub(crate) struct RemoteFile {
    host: Host,
    /// Its path on the host.
    pub(crate) path: String,
}

impl RemoteFile {
    /// Writes `contents` to a fresh `mktemp` file named after `stem` on `host`.
    pub(crate) fn create(host: &Host, stem: &str, contents: &[u8]) -> anyhow::Result<Self> {
        let template = format!("benchlab-{stem}.XXXXXX");
        let path = host.run(&["mktemp", "-t", &template])?.trim().to_string();
        let file = Self {
            host: host.clone(),
            path,
        };
        host.put_file(&file.path, contents)?;
        Ok(file)
    }
}

impl Drop for RemoteFile {
    fn drop(&mut self) {
        let _ = self.host.run(&["rm", "-f", &self.path]);
    }
}

/// One remote tool's run: spawned, polled, stopped, with what it left.
#[derive(Debug)]
pub(crate) struct RemoteRun {
    /// Where it runs.
    pub(crate) host: Host,
    /// Its command line.
    pub(crate) argv: Vec<String>,
    process: Option<Guard>,
    /// What it left once it ended.
    pub(crate) out: Option<Output>,
    /// Why benchlab stopped it, if it did.
    pub(crate) stopped: Option<StopReason>,
}

impl RemoteRun {
    /// A run of `argv` on `host`, not started yet.
    pub(crate) fn new(host: Host, argv: Vec<String>) -> Self {
        Self {
            host,
            argv,
            process: None,
            out: None,
            stopped: None,
        }
    }

    /// Starts it.
    pub(crate) fn spawn(&mut self) -> anyhow::Result<()> {
        let process = self
            .host
            .spawn(&self.argv)
            .with_context(|| format!("starting `{}` on {}", self.argv[0], self.host.host()))?;
        self.process = Some(Guard::new(process));
        Ok(())
    }

    /// What it left, once it ended (checked without blocking).
    pub(crate) fn poll(&mut self) -> anyhow::Result<Option<&Output>> {
        if self.out.is_none() {
            if let Some(p) = self.process.as_mut() {
                if let Some(out) = p.get()?.try_wait()? {
                    self.process = None;
                    self.out = Some(out);
                }
            }
        }
        Ok(self.out.as_ref())
    }

    /// Its output so far.
    pub(crate) fn stdout(&mut self) -> anyhow::Result<Vec<u8>> {
        Ok(match (&self.out, self.process.as_mut()) {
            (Some(out), _) => out.stdout.clone(),
            (None, Some(p)) => p.get()?.stdout_so_far(),
            (None, None) => Vec::new(),
        })
    }

    /// Stops it, if it still runs.
    pub(crate) fn stop(&mut self, why: StopReason) -> anyhow::Result<()> {
        if let Some(p) = self.process.take() {
            let out = p
                .stop()
                .with_context(|| format!("stopping `{}` on {}", self.argv[0], self.host.host()))?;
            self.out = Some(out);
            self.stopped = Some(why);
        }
        Ok(())
    }

    /// The error naming its host, command and first line of output.
    pub(crate) fn failure(&self) -> anyhow::Error {
        match &self.out {
            Some(out) => failed(self.host.host(), &self.argv, out).into(),
            None => anyhow::anyhow!(
                "{}: `{}` failed",
                self.host.host(),
                display_argv(&self.argv)
            ),
        }
    }

    /// The log kept with a trial: the command line as the old harness wrote it, then the
    /// output.
    pub(crate) fn log(&self) -> String {
        let (stdout, stderr) = self.out.as_ref().map_or((String::new(), ""), |o| {
            (o.stdout_text(), o.stderr.as_str())
        });
        format!(
            "CMD on {}: {}\n{stdout}{stderr}",
            self.host.host(),
            display_argv(&self.argv)
        )
    }

    /// Waits until `ready` says its output so far shows it counting; fails if it exited.
    pub(crate) fn wait_ready(
        &mut self,
        ready: &dyn Fn(&[u8]) -> anyhow::Result<bool>,
    ) -> anyhow::Result<()> {
        let t0 = Instant::now();
        loop {
            if self.poll()?.is_some() {
                return Err(self.failure());
            }
            if ready(&self.stdout()?)? {
                return Ok(());
            }
            if t0.elapsed() > READY {
                bail!(
                    "{}: `{}` was not ready within {} s",
                    self.host.host(),
                    display_argv(&self.argv),
                    READY.as_secs()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The seconds a benchlab `--json` tool printed so far (complete lines), sent (`tx`) or
/// received.
pub(crate) fn json_ticks(run: &mut RemoteRun, out: &[u8], tx: bool) -> anyhow::Result<Vec<Tick>> {
    let lines = read_lines(out, run.host.host(), &run.argv)?;
    Ok(ticks_from_totals(
        lines.iter().filter(|l| l.is_sample()).map(|l| match tx {
            true => (l.tx_pkts, l.tx_pps),
            false => (l.rx_pkts, l.rx_pps),
        }),
    ))
}

/// The readiness test of a benchlab `--json` counter: it printed its first sample.
pub(crate) fn read_ready(run: &RemoteRun) -> impl Fn(&[u8]) -> anyhow::Result<bool> {
    let (host, argv) = (run.host.clone(), run.argv.clone());
    move |out| {
        let lines = read_lines(out, host.host(), &argv)?;
        Ok(lines.iter().any(|l| l.is_sample()))
    }
}

/// Where benchlab runs on a remote node, and how it sends there.
#[derive(Debug, Clone)]
pub(crate) struct RemoteNode {
    /// The node.
    pub(crate) host: Host,
    /// The `benchlab` command there.
    pub(crate) benchlab: String,
    /// The interface it sends or counts on.
    pub(crate) iface: String,
    /// The DUT's MAC on that link (senders).
    pub(crate) dut_mac: String,
    /// The CPU to pin the generator to.
    pub(crate) cpu: Option<usize>,
}

/// The frames of `load` sent from `node`, as `benchlab gen` and `benchlab probe` take them:
/// interface, DUT MAC, flows, frame size.
pub(crate) fn frame_argv(node: &RemoteNode, load: &Load) -> Vec<String> {
    [
        ("-i", node.iface.clone()),
        ("-D", node.dut_mac.clone()),
        ("-s", load.src.clone()),
        ("-d", load.dst.clone()),
        ("-l", load.frame_size.to_string()),
    ]
    .into_iter()
    .flat_map(|(flag, value)| [flag.to_owned(), value])
    .collect()
}

/// `benchlab gen --json` on a remote sender.
#[derive(Debug)]
pub(crate) struct RemoteGen {
    run: RemoteRun,
    /// Which of `of` senders it is, for its file names.
    k: usize,
    of: usize,
}

impl RemoteGen {
    /// Sender `k` of `of`, sending `load` from `node`.
    pub(crate) fn new(node: &RemoteNode, load: &Load, k: usize, of: usize) -> Self {
        let mut argv = vec![node.benchlab.clone(), "gen".into(), "--json".into()];
        argv.extend(frame_argv(node, load));
        argv.extend([
            "-r".into(),
            load.rate_arg(),
            "-t".into(),
            load.seconds.to_string(),
        ]);
        if let Some(cpu) = node.cpu {
            argv.extend(["--cpu".into(), cpu.to_string()]);
        }
        Self {
            run: RemoteRun::new(node.host.clone(), argv),
            k,
            of,
        }
    }
}

impl Sender for RemoteGen {
    fn prepare(&mut self) -> anyhow::Result<()> {
        Ok(())
    }

    fn start(&mut self) -> anyhow::Result<()> {
        self.run.spawn()
    }

    fn state(&mut self) -> anyhow::Result<SenderState> {
        let stopped = self.run.stopped.is_some();
        Ok(match self.run.poll()? {
            None => SenderState::Running,
            Some(out) if out.success() => SenderState::Ended,
            Some(_) => SenderState::Failed { stopped },
        })
    }

    fn ticks(&mut self) -> anyhow::Result<Vec<Tick>> {
        let out = self.run.stdout()?;
        json_ticks(&mut self.run, &out, true)
    }

    fn grace(&self) -> Duration {
        GEN_GRACE
    }

    fn stop(&mut self, why: StopReason) -> anyhow::Result<()> {
        self.run.stop(why)
    }

    fn failure(&self) -> anyhow::Error {
        self.run.failure()
    }

    fn finish(mut self: Box<Self>) -> anyhow::Result<SenderRecord> {
        let out = self.run.stdout()?;
        let ticks = json_ticks(&mut self.run, &out, true)?;
        let lines = read_lines(&out, self.run.host.host(), &self.run.argv)?;
        let host = self.run.host.host();
        let description = match lines.iter().rev().find_map(|l| l.engine.clone()) {
            Some(e) => format!("benchlab gen on {host}, {e} engine"),
            None => format!("benchlab gen on {host}"),
        };
        let name = super::endpoint::file_name("generator", "jsonl", self.k, self.of);
        Ok(SenderRecord {
            ticks,
            description,
            files: vec![(name, String::from_utf8_lossy(&out).into_owned())],
            late_pkts: 0,
        })
    }
}

/// `benchlab rx --json` on a remote receiver.
#[derive(Debug)]
pub(crate) struct RemoteRx {
    run: RemoteRun,
    /// Its samples before the senders started.
    skip: usize,
    /// Samples per tick: a receiver sampling every 0.05 s still reports whole seconds.
    per_tick: usize,
}

impl RemoteRx {
    /// The receiver counting on `node`'s interface once a second.
    pub(crate) fn new(node: &RemoteNode) -> Self {
        Self::sampling(node, Duration::from_secs(1))
    }

    /// The receiver counting on `node`'s interface every `interval`, which divides a second.
    pub(crate) fn sampling(node: &RemoteNode, interval: Duration) -> Self {
        let mut argv = vec![node.benchlab.clone()];
        argv.extend(["rx", "--json", "-i"].map(String::from));
        argv.push(node.iface.clone());
        let per_tick = (1.0 / interval.as_secs_f64()).round().max(1.0) as usize;
        if per_tick > 1 {
            argv.extend(["--interval".into(), format!("{}", interval.as_secs_f64())]);
        }
        Self {
            run: RemoteRun::new(node.host.clone(), argv),
            skip: 0,
            per_tick,
        }
    }

    /// Every sample so far: seconds since it started, cumulative packets, interval rate.
    fn samples(&mut self) -> anyhow::Result<Vec<(f64, u64, f64)>> {
        let out = self.run.stdout()?;
        let lines = read_lines(&out, self.run.host.host(), &self.run.argv)?;
        Ok(lines
            .iter()
            .filter(|l| l.is_sample())
            .map(|l| (l.t_s, l.rx_pkts, l.rx_pps))
            .collect())
    }
}

impl Receiver for RemoteRx {
    fn start(&mut self) -> anyhow::Result<()> {
        self.run.spawn()?;
        let ready = read_ready(&self.run);
        self.run.wait_ready(&ready)
    }

    fn traffic_starts(&mut self) -> anyhow::Result<()> {
        self.skip = self.samples()?.len();
        Ok(())
    }

    fn ticks(&mut self) -> anyhow::Result<Vec<Tick>> {
        Ok(ticks_every(&self.samples()?, self.skip, self.per_tick))
    }

    /// The remote clock's origin is its last sample before the senders started: within one
    /// interval (and the SSH round trip) of their start, which the settle time covers.
    fn counter_samples(&mut self) -> anyhow::Result<Vec<CounterSample>> {
        let samples = self.samples()?;
        let first = self.skip.saturating_sub(1).min(samples.len());
        let origin = samples.get(first).map_or(0.0, |s| s.0);
        Ok(samples[first..]
            .iter()
            .map(|&(t, total, _)| CounterSample {
                t_s: t - origin,
                rx_pkts: total,
            })
            .collect())
    }

    fn drain(&self) -> Duration {
        DRAIN
    }

    fn finish(mut self: Box<Self>) -> anyhow::Result<ReceiverRecord> {
        self.run
            .stop(StopReason::TimeUp)
            .context("stopping the receiver")?;
        let ticks = self.ticks()?;
        let out = self.run.stdout()?;
        Ok(ReceiverRecord {
            ticks,
            files: vec![(
                "receiver.jsonl".to_string(),
                String::from_utf8_lossy(&out).into_owned(),
            )],
        })
    }
}
