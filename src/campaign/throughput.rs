//! Throughput profiles (`measure = "throughput"`): one search ([`crate::search`]) per iteration,
//! each of its trials the one trial procedure ([`trial::run`]) at a fixed rate.
//!
//! A search trial is the profile with its rate replaced by the search's load, for the search's
//! trial duration, with no warm-up or cool-down dropped: loss is counted over the whole trial,
//! as the draft asks. The draft's warm-up is the search's own (a discarded trial at max load);
//! between trials nothing happens but the trial procedure's own setup (no reboot, no config
//! change).
//!
//! Loss: the packets the senders sent, by their own counters summed over the whole trial, minus
//! the packets the receiver counted once the senders stopped and the receiver drained
//! ([`TrialData::sent_pkts`], [`TrialData::received_pkts`], both read after the traffic).
//! The receiver's drop counters of the watched interfaces (the DUT's; the sender's veth where
//! the generator does not hold the input queue) tell where they were lost and are kept per
//! trial, with the frames the generator's queue dropped at the stop ([`TrialData::late_pkts`]).
//! A sender that sent less than 99 % of the intended load, or failed, makes the trial invalid
//! (the search retries it), not a loss.
//! On the virtual lab a watch on the DUT's CPU ([`crate::lab::stall`], `dut-cpu.json`) sees
//! how long the hypervisor took it away; a trial whose loss those stalls account for (one
//! outlasted what the DUT's input queue holds at the load, and no more was lost than arrived
//! during them: [`crate::lab::stall::CpuStalls::explain`]) lost it to the machine, and the
//! report counts such trials. The search counts them as any other, bad for a goal whose loss
//! ratio they exceed: retried instead (up to three times at a load), they doubled a
//! forwarding search's trials (639 against 263, 705 s against 294 s) on a 2-vCPU VM where
//! four trials in five at the loads searched lost packets to stalls, and left its NDR where
//! it was (224 Kpps against 239 Kpps) — at that share a retry is stalled again. What
//! worked is the lab's: at a fixed load the virtual DUT's input queue is a NIC's ring, 4,352
//! frames instead of veth's 256 ([`crate::lab::virt::INPUT_QUEUE_FRAMES`]), so that a stall
//! costs frames only once it outlasts ~9 ms at 500 Kpps instead of 0.5 ms (the same
//! forwarding search then found its NDR at 493–749 Kpps in 68–240 trials, 79–266 s); and the
//! queue is deeper than that ring, its backlog beyond the ring when the traffic stops dropped
//! and counted lost ([`SearchTrial::late`](crate::store::SearchTrial::late)), so that a
//! backlog the DUT works off within the trial costs nothing and a dropping queue does not slow
//! the DUT (the generator holds it: [`crate::traffic::requeue`]).
//!
//! Stateful config sets: the generator has no ramp; it sends at the trial's rate from its first
//! packet. The search's warm-up trial at max load (and the calibration trial before it) creates
//! the state of every flow, and conntrack keeps an entry for 30 s (120 s once both ways were
//! seen), longer than the gap between two trials; so a measured trial finds its flows'
//! state in place instead of creating it at line rate. A search with `warmup_duration = 0`
//! (the rfc2544 preset) after more than 30 s without traffic loses that: its first trial may
//! count state creation as loss.
//!
//! [`TrialData::sent_pkts`]: crate::campaign::trial::TrialData::sent_pkts
//! [`TrialData::received_pkts`]: crate::campaign::trial::TrialData::received_pkts
//! [`TrialData::late_pkts`]: crate::campaign::trial::TrialData::late_pkts

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::Context as _;

use super::bench::Event;
use super::context::Context;
use super::design::{Design, Unit};
use super::trial::{self, TrialData, TrialSpec};
use crate::cancel::Cancelled;
use crate::config::{Profile, Rate, Trial};
use crate::lab::distance::RoundTrips;
use crate::search::{self, SearchResult, SearchState, TrialOutcome, TrialRunner};
use crate::store::{SampleRow, SearchRecord, SearchTrial, SearchTrialId, TrialKey, TrialMeta};
use crate::traffic::latency::Probes;

/// A sender below this share of the intended packets did not send the load: the trial is
/// invalid, not lossy.
pub(crate) const SENT_SHARE: f64 = 0.99;
/// Share of the intended packets below which a sender that held the rate started too late in
/// its time for the trial to count.
pub(crate) const LATE_SHARE: f64 = 0.9;
/// A trial that could not run at all (the lab failed, or Ctrl-C).
#[derive(Debug, thiserror::Error)]
#[error("{0:#}")]
pub(crate) struct TrialError(anyhow::Error);

/// Runs a search's trials on a campaign's lab: the [`TrialRunner`] of a throughput profile.
pub(crate) struct SearchRunner<'a, 'c> {
    /// The campaign: its lab, its hooks, where each trial's files go as it ends.
    ctx: &'a mut Context<'c>,
    key: &'a TrialKey,
    profile: &'a Profile,
    /// Every trial run so far, as the lab measured it.
    pub(crate) trials: Vec<SearchTrial>,
    /// What sent the traffic, in words (from the last trial that ran).
    pub(crate) generator: Option<String>,
    /// What the senders are asked for at a load.
    aim: Aim,
    /// Latency probes per second on top of the trials' load (the latency trials after the
    /// search), and what the last trial's measured, with the CPUs' distance meanwhile.
    probes: Option<u64>,
    probed: Option<Probes>,
    round_trips: Option<RoundTrips>,
}

impl<'a, 'c> SearchRunner<'a, 'c> {
    /// A runner of `profile`'s trials for iteration `key` of `ctx`'s campaign.
    pub(crate) fn new(ctx: &'a mut Context<'c>, key: &'a TrialKey, profile: &'a Profile) -> Self {
        Self {
            ctx,
            key,
            profile,
            trials: Vec::new(),
            generator: None,
            aim: Aim::default(),
            probes: None,
            probed: None,
            round_trips: None,
        }
    }

    /// Runs the trial procedure once, the senders asked for `rate` (at `max`, following the DUT
    /// when `follow`: [`TrialSpec::follow`]), for `duration` seconds, and keeps its record,
    /// judged against `load` packets/s (`None`: any load will do), and its files as the next
    /// search trial's (a trial that failed to run has none: whoever takes
    /// the record off `trials` moves them); also returns the senders' own rate while they sent,
    /// when they said. `Err` only when the lab could not run it, its files could not be written
    /// or the campaign was interrupted.
    fn measure(
        &mut self,
        rate: Rate,
        follow: bool,
        duration: f64,
        load: Option<f64>,
    ) -> Result<(SearchTrial, Option<f64>), TrialError> {
        let profile = Profile {
            rate,
            ..self.profile.clone()
        };
        let timing = Trial {
            duration: crate::clock::saturating_secs(duration),
            warmup: Duration::ZERO,
            cooldown: Duration::ZERO,
            latency: false,
        };
        let spec = TrialSpec {
            key: self.key,
            profile: &profile,
            trial: &timing,
            hooks: &self.ctx.campaign.hooks,
            capture: false,
            follow,
            watch_cpu: load.is_some(),
            probes: self.probes,
            in_dut: self.ctx.campaign.latency().in_dut,
        };
        let (cancel, on_event) = (self.ctx.cancel, &mut *self.ctx.on_event);
        let outcome = self.ctx.bench.rig(&spec).map_err(TrialError)?;
        let outcome = trial::run(outcome, &spec, cancel, &mut |s: &SampleRow| {
            on_event(&Event::Second { sample: s })
        });
        if cancel.is_cancelled() {
            return Err(TrialError(Cancelled.into()));
        }
        let intended = load.map(|pps| pps * duration);
        let mut sending = None;
        let record = match outcome {
            Ok(mut data) => {
                self.probed = data.probes.take();
                self.round_trips = data.round_trips.take();
                self.generator.clone_from(&data.generator);
                sending = sending_rate(&data.files);
                // Its index once pushed, as in `search.json`.
                let id = SearchTrialId::Trial(self.trials.len() + 1);
                let kept = (self.ctx.store).write_search_trial_files(self.key, id, &data.files);
                kept.with_context(|| format!("writing the files of {id} of {}", self.key))
                    .map_err(TrialError)?;
                judge(&data, duration, intended)
            }
            Err(e) => SearchTrial {
                load: intended.map_or(0.0, |n| n / duration),
                duration,
                sent: 0,
                received: 0,
                late: 0,
                drops: BTreeMap::new(),
                dut_cpu: None,
                valid: false,
                problem: Some(format!("the trial failed: {e:#}")),
                start_unix_s: 0.0,
                end_unix_s: 0.0,
            },
        };
        self.trials.push(record.clone());
        Ok((record, sending))
    }

    /// Takes the last trial off `trials`, its files moved to search trial `to`'s directory.
    fn take_last(&mut self, to: SearchTrialId) -> Result<Option<SearchTrial>, TrialError> {
        let from = SearchTrialId::Trial(self.trials.len());
        let moved = (self.ctx.store).move_search_trial_files(self.key, from, to);
        moved
            .with_context(|| format!("moving the files of {from} of {} to {to}", self.key))
            .map_err(TrialError)?;
        Ok(self.trials.pop())
    }

    /// A trial at a fixed `load`: the senders asked for as much more as makes up for what they
    /// fell short by so far, aimed [`AIM`](aim::AIM) above, judged against `load`; also the senders' own
    /// rate while they sent.
    fn fixed(
        &mut self,
        load: f64,
        duration: f64,
    ) -> Result<(SearchTrial, Option<f64>), TrialError> {
        let asked = self.aim.ask(load);
        let (record, sending) = self.measure(Rate::Pps(asked), false, duration, Some(load))?;
        if let Some(rate) = sending.filter(|&r| r > 0.0) {
            self.aim.learn(load, asked, rate);
        }
        Ok((record, sending))
    }
}

/// The record of a trial that ran: its counts, drops and whether the senders sent the
/// `intended` packets (`None`: full rate, anything goes). The senders' own rate while they sent
/// ([`sending_rate`]) is what must reach the load: a sender starts sending a few milliseconds
/// into its time, which costs a 1 s trial about 1 % of its packets at any load; without that
/// rate, the count must.
fn judge(data: &TrialData, duration: f64, intended: Option<f64>) -> SearchTrial {
    let short = intended.and_then(|n| {
        let load = n / duration;
        let sent = data.sent_pkts as f64;
        match sending_rate(&data.files) {
            Some(rate) if rate < SENT_SHARE * load || sent < LATE_SHARE * n => Some(format!(
                "the senders sent {} of the {n:.0} packets asked, at {rate:.0} packets/s \
                 ({:.1} % of the load)",
                data.sent_pkts,
                100.0 * rate / load
            )),
            Some(_) => None,
            None => (sent < SENT_SHARE * n).then(|| {
                format!(
                    "the senders sent {} of the {n:.0} packets asked ({:.1} %)",
                    data.sent_pkts,
                    100.0 * sent / n
                )
            }),
        }
    });
    SearchTrial {
        load: intended.map_or(data.sent_pkts as f64 / duration, |n| n / duration),
        duration,
        sent: data.sent_pkts,
        received: data.received_pkts,
        late: data.late_pkts,
        drops: drops(&data.files),
        dut_cpu: cpu_stalls(&data.files),
        valid: short.is_none(),
        problem: short,
        start_unix_s: data.start_unix_s,
        end_unix_s: data.end_unix_s,
    }
}

impl TrialRunner for SearchRunner<'_, '_> {
    type Error = TrialError;

    fn run(&mut self, load: f64, duration: f64) -> Result<TrialOutcome, TrialError> {
        if !(load.is_finite() && load >= 1.0) {
            return Err(TrialError(anyhow::anyhow!(
                "load {load} packets/s is not a rate a sender can send"
            )));
        }
        let (record, _) = self.fixed(load, duration)?;
        Ok(TrialOutcome {
            offered_load: record.sent as f64 / duration,
            duration,
            sent: record.sent,
            received: record.received,
            valid: record.valid,
        })
    }

    fn progress(&mut self, state: &SearchState) {
        self.ctx.event(&Event::Search {
            key: self.key,
            state,
        });
    }
}

/// The throughput search: each iteration of a throughput profile one search, its `search.json`
/// and `meta.json` stored once it ends.
pub(crate) struct Search;

impl Design for Search {
    fn measure(
        &mut self,
        ctx: &mut Context<'_>,
        unit: &Unit<'_>,
        since: Instant,
    ) -> anyhow::Result<usize> {
        let meta = run_search(ctx, &unit.key, unit.profile, since)?;
        ctx.event(&Event::TrialDone {
            key: &unit.key,
            meta: &meta,
        });
        Ok(1)
    }
}

/// Runs the search of throughput iteration `key` (its profile `profile`), stores `search.json`
/// and the iteration's `meta.json`, and returns the meta; `t0` is when its turn came.
fn run_search(
    ctx: &mut Context<'_>,
    key: &TrialKey,
    profile: &Profile,
    t0: Instant,
) -> anyhow::Result<TrialMeta> {
    let (store, cancel) = (ctx.store, ctx.cancel);
    store
        .begin_trial(key)
        .with_context(|| format!("preparing {}", store.trial_dir(key).display()))?;
    ctx.event(&Event::TrialStart { key, attempt: 1 });
    let config = ctx.campaign.search();
    let mut runner = SearchRunner::new(ctx, key, profile);
    let mut record = SearchRecord {
        generator_max: None,
        calibration: Vec::new(),
        result: None,
        failure: None,
        trials: Vec::new(),
        opening: None,
        closing: None,
        wall_s: 0.0,
        latency: Vec::new(),
        probes_pps: None,
    };
    // The latency trials' loads are shares of the NDR, and the probes take the DUT's work
    // (their own frames; with `[latency] in_dut`, about 4 % of its rate for the program on the
    // load's ingress: docs/latency.md, "What the probes cost the load"): the search runs with
    // them too, so that 90 % of its NDR is 90 % of what the DUT forwards while measured.
    let probing = runner.ctx.campaign.latency();
    if profile.latency(&runner.ctx.campaign.trial) && !probing.loads.is_empty() {
        runner.probes = Some(probing.rate);
        record.probes_pps = Some(probing.rate);
    }
    let outcome = match (config.max_load, profile.rate) {
        (Some(max), _) => Ok(max),
        (None, Rate::Pps(pps)) => Ok(pps as f64),
        (None, Rate::Max) => calibrate(&mut runner, &mut record, &config).and_then(|max| {
            record.opening = Some(saturating(&mut runner, shortest_trial(&config), true)?);
            Ok(max)
        }),
    }
    .and_then(|max| {
        // Calibration's rates are the generator's highest; what it held there says little of
        // what it holds at the search's loads, and no more does what it holds at max load.
        runner.aim = Aim::below(max);
        search::search(&config, max, &mut runner).map_err(|e| TrialError(anyhow::Error::new(e)))
    });
    if let Ok(result) = &outcome {
        // A closing trial the lab could not run leaves the search's result as it is.
        let closing = match &record.opening {
            Some(opening) => saturating(&mut runner, opening.duration, false).map(Some),
            None => closing_at_max_load(&mut runner, result),
        };
        record.closing = closing.ok().flatten();
        if profile.latency(&runner.ctx.campaign.trial) {
            record.latency = latency::loads(&mut runner, result)?;
        }
    }
    record.trials = std::mem::take(&mut runner.trials);
    let generator = runner.generator.take();
    if cancel.is_cancelled() {
        return Err(Cancelled.into());
    }
    match outcome {
        Ok(result) => record.result = Some(result),
        Err(e) => record.failure = Some(format!("{e}")),
    }
    record.wall_s = t0.elapsed().as_secs_f64();
    let meta = TrialMeta {
        generator,
        ..summarize(key, &record)
    };
    store
        .write_search(key, &record)
        .with_context(|| format!("writing the search of {key}"))?;
    store
        .finish_trial(key, &[], &meta)
        .with_context(|| format!("writing trial {key}"))?;
    Ok(meta)
}

/// A trial of `seconds` at `max` following the DUT, the opening one (before the search) or the
/// closing one (after): the rate the DUT forwards saturated but not buried, as the trials and
/// alternating designs measure it. A trial at the search's max load, which is the generator's
/// (several Mpps on the virtual lab), would bury the virtual DUT and show less
/// ([`crate::traffic::follow`]). A shared machine changes speed for minutes at a time, and a
/// search lasts minutes: when the two differ, the bounds mix two machines, and the report says
/// so.
fn saturating(
    runner: &mut SearchRunner<'_, '_>,
    seconds: f64,
    opening: bool,
) -> Result<SearchTrial, TrialError> {
    runner.measure(Rate::Max, true, seconds, None)?;
    let id = match opening {
        true => SearchTrialId::Opening,
        false => SearchTrialId::Closing,
    };
    let trial = runner.take_last(id)?;
    trial.ok_or_else(|| TrialError(anyhow::anyhow!("{id} left no record")))
}

/// Without an opening trial (the max load was given, not calibrated), one more trial at max
/// load once the search is over, as long as the search's first measured trial there, to
/// compare with it. `None` without a max-load trial to repeat.
fn closing_at_max_load(
    runner: &mut SearchRunner<'_, '_>,
    result: &SearchResult,
) -> Result<Option<SearchTrial>, TrialError> {
    let Some((_, first)) = result.first_at_max_load() else {
        return Ok(None);
    };
    let duration = first.duration;
    TrialRunner::run(runner, result.max_load, duration)?;
    runner.take_last(SearchTrialId::Closing)
}

/// What the senders are asked for at a trial's load.
mod aim;
use aim::Aim;
/// The highest fixed rate the generator holds, before a search.
mod calibrate;
use calibrate::{calibrate, shortest_trial};
/// What a search trial's files say: the senders' rate, the drops.
mod files;
pub(crate) use files::{cpu_stalls, drops, sending_rate};
/// The latency trials after a search, at shares of its NDR.
mod latency;
/// A finished search's `meta.json` and flags.
mod summary;
use summary::summarize;

#[cfg(test)]
mod tests;
