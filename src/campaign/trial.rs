//! The trial procedure, once for every lab: snapshot the DUT → ready the profiler → start the
//! receiver → ready the senders, watch the DUT's CPU (when asked and the lab can) and start
//! the senders → poll and pair their seconds (placing the capture window, running the `during`
//! hooks) → stop → drain → keep the files.
//!
//! A lab kind only hands out a [`Rig`]: its DUT, its senders, its receiver and its profiler.
//! Everything about time — when the trial clock starts, which seconds pair with which, when an
//! overrunning or failed sender stops the others, what an interruption keeps — is decided here.
//!
//! [`Rig`]: crate::campaign::trial::Rig

use std::time::{Duration, Instant};

use anyhow::Context;

use crate::cancel::Cancel;
use crate::clock::unix_now;
use crate::config::{Hooks, Profile, Rate, Trial};
use crate::lab::distance::RoundTrips;
use crate::lab::stall::{DutCpu, OthersTime, OthersWatch, StallWatch};
use crate::profile::{CaptureResult, CaptureSchedule, Profiler};
use crate::store::latency::ROUND_TRIPS_FILE;
use crate::store::{SampleRow, TrialKey};
use crate::traffic::endpoint::{
    sum_ticks, Receiver, Sender, SenderRecord, SenderState, StopReason, Tick,
};
use crate::traffic::latency::Probes;
use crate::transport::{display_argv, Command, Transport, TransportError};

/// What a lab is asked to run for one trial.
#[derive(Debug, Clone, Copy)]
pub struct TrialSpec<'a> {
    /// The trial's coordinates.
    pub(crate) key: &'a TrialKey,
    /// Traffic to send.
    pub(crate) profile: &'a Profile,
    /// Seconds of traffic, warm-up and cool-down.
    pub(crate) trial: &'a Trial,
    /// Commands to run on the DUT around the traffic.
    pub(crate) hooks: &'a Hooks,
    /// Profile the DUT between warm-up and cool-down (a profiling trial).
    pub(crate) capture: bool,
    /// At `max`, the senders offer a margin above what the DUT takes instead of all they can,
    /// where the lab needs it ([`crate::traffic::GenConfig::follow`]: the virtual lab). A
    /// search's calibration, which measures the generator, does not.
    pub(crate) follow: bool,
    /// Watch the DUT's CPU for stalls, where the lab can ([`crate::lab::stall`]: the virtual
    /// lab): a search's trials at a fixed load, whose loss it explains.
    pub(crate) watch_cpu: bool,
    /// Latency probes on top of the load, per second (`[trial] latency`; a search's latency
    /// trials): `None` sends none. With a profile rate of 0, the probes are all the traffic.
    pub(crate) probes: Option<u64>,
    /// With the probes, on the virtual lab: their time in the DUT recorded too (`[latency]
    /// in_dut`), at the cost of a program on the load's ingress.
    pub(crate) in_dut: bool,
}

/// What one trial gave back.
#[derive(Debug, Clone, Default)]
pub(crate) struct TrialData {
    /// One row per second of traffic.
    pub(crate) samples: Vec<SampleRow>,
    /// What sent the traffic, in words.
    pub(crate) generator: Option<String>,
    /// Files to keep with the trial (hook outputs: `dut-before.txt`, …), name and content.
    pub(crate) files: Vec<(String, String)>,
    /// Start of traffic, seconds since the Unix epoch.
    pub(crate) start_unix_s: f64,
    /// End of traffic, seconds since the Unix epoch.
    pub(crate) end_unix_s: f64,
    /// What profiling the DUT recorded (profiling trials): its window goes in `meta.json`, its
    /// stacks in the store's folded file.
    pub(crate) capture: Option<CaptureResult>,
    /// Packets the senders sent in all, by their own counters (every second, the last partial
    /// one too, which the paired samples may leave out).
    pub(crate) sent_pkts: u64,
    /// Packets the receiver counted in all, read once the senders stopped and it drained.
    pub(crate) received_pkts: u64,
    /// Frames the senders' input queues dropped, mostly held beyond the DUT's input ring when
    /// they stopped, as a NIC's ring would have ([`SenderRecord::late_pkts`]): sent, never
    /// received, so part of the loss, and where it happened.
    pub(crate) late_pkts: u64,
    /// What the latency probes measured, when the trial sent them.
    pub(crate) probes: Option<Probes>,
    /// How far apart the probes' CPU and the DUT's were meanwhile, where the lab watches it
    /// (the virtual lab, [`crate::lab::distance`]); also kept as `cpu-round-trips.json`.
    pub(crate) round_trips: Option<RoundTrips>,
    /// Other programs' time on the lab's CPUs over the traffic, where the lab reads it
    /// ([`Rig::lab_cpus`]).
    pub(crate) others: Option<OthersTime>,
}

/// A lab's latency probes for one trial: sent on top of the load and read where it arrives,
/// both ends on one host, one clock ([`crate::traffic::latency`]).
pub(crate) trait Prober {
    /// Starts `rate_pps` probes per second for at most `limit`.
    fn start(&mut self, rate_pps: u64, limit: Duration) -> anyhow::Result<()>;
    /// Stops them, waits for those in flight and returns what they measured.
    fn finish(&mut self) -> anyhow::Result<Probes>;
    /// After [`Prober::finish`]: how far apart the probes' CPU and the DUT's were while they
    /// ran, where the lab watches it.
    fn round_trips(&mut self) -> Option<RoundTrips> {
        None
    }
    /// Whether the probes arrive where the receiver counts the load, which then counts them
    /// too (a tap on an SSH lab's receiving interface), rather than by a way of their own.
    fn counted(&self) -> bool {
        true
    }
}

/// The parts of a lab one trial runs with.
pub struct Rig<'a> {
    /// The DUT, for its counters and the hooks.
    pub(crate) dut: &'a dyn Transport,
    /// The command that prints the DUT's interface counters (kept before and after).
    pub(crate) counters: Vec<String>,
    /// The senders, in the lab's order (their seconds are summed).
    pub(crate) senders: Vec<Box<dyn Sender + 'a>>,
    /// The receiver.
    pub(crate) receiver: Box<dyn Receiver + 'a>,
    /// The DUT's profiler, used by profiling trials.
    pub(crate) profiler: Option<Box<dyn Profiler + 'a>>,
    /// The DUT's CPU to watch for stalls during the traffic (`dut-cpu.json`), when asked and
    /// the lab can.
    pub(crate) dut_cpu: Option<DutCpu>,
    /// The lab's CPUs, where other programs' time is read over the traffic (the virtual
    /// lab's: the DUT's, the generators', the probes'); empty where the lab's CPUs are other
    /// machines', or where the design reads them itself (the alternating design, per phase).
    pub(crate) lab_cpus: Vec<usize>,
    /// How much later than the end of warm-up a capture starts (zero, but in tests that
    /// misplace the capture on purpose).
    pub(crate) capture_delay: Duration,
    /// The latency probes, where the lab can send them (`None`: it cannot, and says why).
    pub(crate) prober: Result<Box<dyn Prober + 'a>, String>,
}

/// What follows a trial while its traffic flows: every paired second, and (for a design that
/// acts during the traffic, such as the alternating one) a look at each poll.
pub(crate) trait Watch {
    /// A paired second arrived.
    fn second(&mut self, row: &SampleRow);
    /// Traffic has flowed `elapsed` since the senders started: what to do next. The receiver
    /// is there for a design that reads its short windows.
    fn poll(&mut self, _receiver: &mut dyn Receiver, _elapsed: Duration) -> anyhow::Result<Flow> {
        Ok(Flow::Continue(POLL))
    }
}

/// What a [`Watch`] wants after a poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Go on; poll again within this time.
    Continue(Duration),
    /// Stop the senders now: the design has what it needs.
    Stop,
}

impl<F: FnMut(&SampleRow)> Watch for F {
    fn second(&mut self, row: &SampleRow) {
        self(row)
    }
}

/// How often the procedure looks at the senders and the receiver while traffic flows.
const POLL: Duration = Duration::from_millis(100);
/// How often it looks in the `POLL` after the senders' time is up: they end by themselves a
/// few milliseconds after it, and a whole `POLL` more would add 50 ms to every trial on average.
const TAIL_POLL: Duration = Duration::from_millis(5);

/// The time to the next look at the senders, `elapsed` into traffic due to end at `due`: every
/// `POLL`, one look right at `due`, then every `TAIL_POLL` for a `POLL` (a sender still
/// running then overran, and is looked at every `POLL` again until its grace is up).
fn next_poll(elapsed: Duration, due: Duration) -> Duration {
    match due.checked_sub(elapsed).filter(|left| !left.is_zero()) {
        Some(left) => left.min(POLL),
        None if elapsed < due.saturating_add(POLL) => TAIL_POLL,
        None => POLL,
    }
}

/// Runs one trial of `spec` on `rig`; `watch` sees each paired second as it arrives and may end
/// the traffic early. Every process it started is stopped when it returns, whatever happened.
pub(crate) fn run(
    mut rig: Rig<'_>,
    spec: &TrialSpec<'_>,
    cancel: &Cancel,
    watch: &mut dyn Watch,
) -> anyhow::Result<TrialData> {
    let files = vec![(
        "dut-before.txt".to_string(),
        snapshot(rig.dut, &rig.counters, &spec.hooks.before)?,
    )];
    // Ready before the traffic: perf takes seconds to set up on CPUs the traffic saturates, and
    // the receiver's seconds before the senders start must not include that setup.
    let profiler = rig.profiler.take().filter(|_| spec.capture);
    let recording = profiler.as_ref().map(|p| p.start()).transpose()?;
    rig.receiver.start().context("starting the receiver")?;
    for sender in &mut rig.senders {
        sender.prepare()?;
    }
    rig.receiver.traffic_starts()?;
    // A load of 0 is probes alone (a search's latency trial at 0 % of its NDR).
    if spec.profile.rate == Rate::Pps(0) {
        rig.senders.clear();
    }
    let prober = std::mem::replace(&mut rig.prober, Err(String::new()));
    let mut prober = match (spec.probes, prober) {
        (None, _) => None,
        (Some(_), Ok(p)) => Some(p),
        (Some(_), Err(why)) => anyhow::bail!("this lab cannot measure latency: {why}"),
    };
    let stalls = rig.dut_cpu.clone().map(StallWatch::start).transpose()?;
    let others = OthersWatch::on(&rig.lab_cpus)?;
    let start_unix_s = unix_now();
    for sender in &mut rig.senders {
        sender.start()?;
    }
    // After the load: the receiver's first second with traffic, where the trial's seconds
    // start, is the load's, and the probes' seconds line up with the trial's.
    if let (Some(p), Some(rate)) = (prober.as_mut(), spec.probes) {
        p.start(rate, spec.trial.duration)?;
    }
    let t0 = Instant::now();
    let mut capture = recording.map(|r| CaptureSchedule::new(r, t0, spec.trial, rig.capture_delay));
    let mut flowing = Flowing {
        t0,
        cancel,
        watch,
        rows: Vec::new(),
        files,
    };
    traffic(&mut rig, spec, &mut capture, &mut flowing)?;
    let Flowing {
        watch,
        mut rows,
        mut files,
        ..
    } = flowing;
    let end_unix_s = unix_now();
    let others = others.map(OthersWatch::finish).transpose();
    let others = others.context("reading other programs' time on the lab's CPUs")?;
    if let Some(watch) = stalls {
        let mut seen = watch.finish().context("watching the DUT's CPU")?;
        seen.others = others.clone();
        files.push(("dut-cpu.json".into(), serde_json::to_string_pretty(&seen)?));
    }
    rig.receiver
        .settle()
        .context("waiting for the packets in flight")?;
    let probes = prober.as_mut().map(|p| p.finish()).transpose();
    let probes = probes.context("reading the latency probes")?;
    let round_trips = prober.as_mut().and_then(|p| p.round_trips());
    if let Some(seen) = &round_trips {
        files.push((ROUND_TRIPS_FILE.into(), serde_json::to_string_pretty(seen)?));
    }
    let received = rig.receiver.finish().context("stopping the receiver")?;
    let capture = capture.map(|c| c.finish(cancel)).transpose()?;
    cancel.check()?;
    let sent = finish_senders(&mut rig.senders)?;
    let per_sender: Vec<Vec<Tick>> = sent.iter().map(|r| r.ticks.clone()).collect();
    let shown = rows.len();
    rows = pair(&sum_ticks(&per_sender), &received.ticks);
    // Where the receiver's interface counts the probes with the load, they are taken out, so
    // that the trial's rates and loss are the load's alone.
    let counted = prober.as_ref().is_some_and(|p| p.counted());
    let probes_received = (probes.as_ref()).filter(|_| counted).map_or(0, |p| {
        crate::campaign::latency::take_out(&mut rows, p, start_unix_s)
    });
    rows.iter().skip(shown).for_each(|row| watch.second(row));
    files.push((
        "dut-after.txt".to_string(),
        snapshot(rig.dut, &rig.counters, &spec.hooks.after)?,
    ));
    files.extend(sent.iter().flat_map(|r| r.files.iter().cloned()));
    files.extend(received.files);
    let generators: Vec<&str> = sent.iter().map(|r| r.description.as_str()).collect();
    let sent_pkts = sent.iter().flat_map(|r| &r.ticks).map(|t| t.pkts).sum();
    let received_pkts =
        (received.ticks.iter().map(|t| t.pkts).sum::<u64>()).saturating_sub(probes_received);
    let late_pkts = sent.iter().map(|r| r.late_pkts).sum();
    Ok(TrialData {
        samples: rows,
        generator: Some(generators.join(" + ")),
        files,
        start_unix_s,
        end_unix_s,
        capture,
        sent_pkts,
        received_pkts,
        late_pkts,
        probes,
        round_trips,
        others,
    })
}

/// A trial's traffic as it flows: since when, who may stop it, who watches it and what it
/// gathered.
struct Flowing<'a> {
    /// When the senders started.
    t0: Instant,
    /// Raised by Ctrl-C.
    cancel: &'a Cancel,
    /// Sees each paired second, may end the traffic early.
    watch: &'a mut dyn Watch,
    /// The paired seconds so far.
    rows: Vec<SampleRow>,
    /// Files to keep with the trial.
    files: Vec<(String, String)>,
}

/// While traffic flows: pairs and shows the seconds, places the capture, runs the `during`
/// hooks once warm-up is over, and stops every sender when one failed, the trial overran its
/// time (plus the senders' grace) or Ctrl-C was pressed. Returns once every sender ended.
fn traffic(
    rig: &mut Rig<'_>,
    spec: &TrialSpec<'_>,
    capture: &mut Option<CaptureSchedule<'_>>,
    flowing: &mut Flowing<'_>,
) -> anyhow::Result<()> {
    let Flowing {
        t0,
        cancel,
        watch,
        rows,
        files,
    } = flowing;
    let grace = rig.senders.iter().map(|s| s.grace()).min();
    let due = spec.trial.duration;
    let limit = due.saturating_add(grace.unwrap_or_default());
    let mut during = (!spec.hooks.during.is_empty()).then_some(&spec.hooks.during);
    loop {
        let states = rig
            .senders
            .iter_mut()
            .map(|s| s.state())
            .collect::<anyhow::Result<Vec<_>>>()?;
        let failed = states
            .iter()
            .any(|s| matches!(s, SenderState::Failed { .. }));
        let flow = match failed || cancel.is_cancelled() {
            true => Flow::Stop,
            false => watch.poll(&mut *rig.receiver, t0.elapsed())?,
        };
        if failed || cancel.is_cancelled() || flow == Flow::Stop || t0.elapsed() > limit {
            let why = match failed || cancel.is_cancelled() {
                true => StopReason::Abort,
                false => StopReason::TimeUp,
            };
            for (sender, state) in rig.senders.iter_mut().zip(&states) {
                if *state == SenderState::Running {
                    sender.stop(why)?;
                }
            }
            return Ok(());
        }
        if let Some(capture) = capture.as_mut() {
            capture.poll()?;
        }
        for row in new_rows(rig, rows)? {
            watch.second(&row);
        }
        let warm = rows
            .last()
            .is_some_and(|r| r.t_s >= crate::config::secs(spec.trial.warmup));
        if let Some(hooks) = during.filter(|_| warm) {
            files.push((
                "dut-during.txt".into(),
                snapshot(rig.dut, &rig.counters, hooks)?,
            ));
            during = None;
        }
        // With no sender (probes alone), the traffic lasts its time.
        if !states.is_empty() && states.iter().all(|s| *s == SenderState::Ended) {
            return Ok(());
        }
        let wait = capture.as_ref().and_then(CaptureSchedule::until_next);
        let wanted = match flow {
            Flow::Continue(within) => within.min(next_poll(t0.elapsed(), due)),
            Flow::Stop => POLL,
        };
        std::thread::sleep(wait.map_or(wanted, |w| w.min(wanted)));
    }
}

/// The senders' records once they ended; the first sender that failed by itself (the others
/// were stopped) names the trial's failure.
fn finish_senders(senders: &mut Vec<Box<dyn Sender + '_>>) -> anyhow::Result<Vec<SenderRecord>> {
    let mut first_failed = None;
    for (k, sender) in senders.iter_mut().enumerate() {
        if let SenderState::Failed { stopped } = sender.state()? {
            if first_failed.is_none_or(|(_, s)| s && !stopped) {
                first_failed = Some((k, stopped));
            }
        }
    }
    if let Some((k, _)) = first_failed {
        return Err(senders[k].failure());
    }
    senders.drain(..).map(|s| s.finish()).collect()
}

/// The rows of the seconds that every sender and the receiver have counted and `rows` lacks;
/// they are appended to `rows` and returned.
fn new_rows(rig: &mut Rig<'_>, rows: &mut Vec<SampleRow>) -> anyhow::Result<Vec<SampleRow>> {
    let per_sender = rig
        .senders
        .iter_mut()
        .map(|s| s.ticks())
        .collect::<anyhow::Result<Vec<_>>>()?;
    let paired = pair(&sum_ticks(&per_sender), &rig.receiver.ticks()?);
    let new = paired.get(rows.len()..).unwrap_or_default().to_vec();
    rows.extend(new.iter().cloned());
    Ok(new)
}

/// Rows from the senders' seconds paired by index with the receiver's, from the receiver's
/// first second with traffic: a second it counted before any packet arrived (a sender took
/// longer to start, over SSH, than what was left of that second) is not the trial's, and
/// pairing it would shift every second by one.
fn pair(tx: &[Tick], rx: &[Tick]) -> Vec<SampleRow> {
    let rx = rx.iter().skip_while(|t| t.pkts == 0);
    tx.iter()
        .zip(rx)
        .enumerate()
        .map(|(i, (t, r))| SampleRow {
            t_s: (i + 1) as f64,
            tx_pkts: t.pkts,
            rx_pkts: r.pkts,
            tx_pps: t.pps,
            rx_pps: r.pps,
        })
        .collect()
}

/// The DUT's counters and the hooks' outputs, as text kept with the trial. A hook that fails is recorded, not fatal; an SSH failure means the DUT is gone, and
/// the trial cannot be trusted.
fn snapshot(
    dut: &dyn Transport,
    counters: &[String],
    hooks: &[Vec<String>],
) -> anyhow::Result<String> {
    let mut text = String::new();
    for argv in std::iter::once(counters).chain(hooks.iter().map(Vec::as_slice)) {
        text.push_str(&format!("$ {}\n", display_argv(argv)));
        match dut.exec(&Command::new(argv.to_vec())) {
            Ok(out) => {
                text.push_str(&out.stdout_text());
                text.push_str(&out.stderr);
                if !out.success() {
                    text.push_str(&format!("[{}]\n", out.status_text()));
                }
            }
            Err(e @ TransportError::Ssh { .. }) => return Err(e.into()),
            Err(e) => text.push_str(&format!("[{e}]\n")),
        }
    }
    Ok(text)
}

/// Mock senders and receivers, for unit tests.
#[cfg(test)]
pub(crate) mod mock;
#[cfg(test)]
mod tests;
