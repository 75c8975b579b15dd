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
//! The receiver's drop counters of the watched interfaces (the sender's veth, the DUT's) tell
//! where they were lost and are kept per trial. A sender that sent less than 99 % of the
//! intended load, or failed, makes the trial invalid (the search retries it), not a loss.
//!
//! Stateful config sets: the generator has no ramp; it sends at the trial's rate from its first
//! packet. The search's warm-up trial at max load (and the calibration trial before it) creates
//! the state of every flow, and conntrack keeps an entry for 30 s (120 s once both ways were
//! seen), longer than the gap between two trials; so a measured trial finds its flows'
//! state in place instead of creating it at line rate. A search with `warmup_duration = 0`
//! (the rfc2544 preset) after more than 30 s without traffic loses that: its first trial may
//! count state creation as loss.

use std::collections::BTreeMap;
use std::time::Instant;

use anyhow::Context;

use super::run::{Bench, Event};
use super::trial::{self, TrialData, TrialSpec};
use crate::cancel::{Cancel, Cancelled};
use crate::config::{Campaign, Hooks, Profile, Rate, Trial};
use crate::search::{self, SearchResult, SearchState, TrialOutcome, TrialRunner};
use crate::store::{SearchRecord, SearchTrial, Status, Store, TrialKey, TrialMeta};

/// A sender below this share of the intended packets did not send the load: the trial is
/// invalid, not lossy.
pub const SENT_SHARE: f64 = 0.99;
/// Seconds of the calibration trial at the generator's full rate, which gives the search's max
/// load when neither the profile's rate nor `search.max_load` does.
pub const CALIBRATION_S: f64 = 1.0;
/// Share of the generator's full rate taken as the max load: a generator measured once at
/// full rate sends a little less in some later trials, which would make every max-load trial
/// invalid.
pub const GENERATOR_SHARE: f64 = 0.97;

/// A trial that could not run at all (the lab failed, or Ctrl-C).
#[derive(Debug, thiserror::Error)]
#[error("{0:#}")]
pub struct TrialError(anyhow::Error);

/// Runs a search's trials on a bench: the [`TrialRunner`] of a throughput profile.
pub struct SearchRunner<'a> {
    bench: &'a mut dyn Bench,
    key: &'a TrialKey,
    profile: &'a Profile,
    hooks: &'a Hooks,
    cancel: &'a Cancel,
    on_event: &'a mut dyn FnMut(&Event<'_>),
    /// Every trial run so far, as the lab measured it.
    pub trials: Vec<SearchTrial>,
    /// What sent the traffic, in words (from the last trial that ran).
    pub generator: Option<String>,
}

impl<'a> SearchRunner<'a> {
    /// A runner of `profile`'s trials for iteration `key`, on `bench`.
    pub fn new(
        bench: &'a mut dyn Bench,
        (key, profile, hooks): (&'a TrialKey, &'a Profile, &'a Hooks),
        cancel: &'a Cancel,
        on_event: &'a mut dyn FnMut(&Event<'_>),
    ) -> Self {
        Self {
            bench,
            key,
            profile,
            hooks,
            cancel,
            on_event,
            trials: Vec::new(),
            generator: None,
        }
    }

    /// Runs the trial procedure once at `rate` for `duration` seconds and keeps its record;
    /// `Err` only when the lab could not run it or the campaign was interrupted.
    fn measure(&mut self, rate: Rate, duration: f64) -> Result<SearchTrial, TrialError> {
        let profile = Profile {
            rate,
            ..self.profile.clone()
        };
        let timing = Trial {
            duration,
            warmup: 0.0,
            cooldown: 0.0,
        };
        let spec = TrialSpec {
            key: self.key,
            profile: &profile,
            trial: &timing,
            hooks: self.hooks,
            capture: false,
        };
        let on_event = &mut *self.on_event;
        let outcome = self.bench.rig(&spec).map_err(TrialError)?;
        let outcome = trial::run(outcome, &spec, self.cancel, &mut |s| {
            on_event(&Event::Second { sample: s })
        });
        if self.cancel.is_cancelled() {
            return Err(TrialError(Cancelled.into()));
        }
        let intended = match rate {
            Rate::Pps(pps) => Some(pps as f64 * duration),
            Rate::Max => None,
        };
        let record = match outcome {
            Ok(data) => {
                self.generator.clone_from(&data.generator);
                judge(&data, duration, intended)
            }
            Err(e) => SearchTrial {
                load: intended.map_or(0.0, |n| n / duration),
                duration,
                sent: 0,
                received: 0,
                drops: BTreeMap::new(),
                valid: false,
                problem: Some(format!("the trial failed: {e:#}")),
                start_unix_s: 0.0,
                end_unix_s: 0.0,
            },
        };
        self.trials.push(record.clone());
        Ok(record)
    }
}

/// The record of a trial that ran: its counts, drops and whether the senders sent the
/// `intended` packets (`None`: full rate, anything goes).
fn judge(data: &TrialData, duration: f64, intended: Option<f64>) -> SearchTrial {
    let short = intended.filter(|&n| (data.sent_pkts as f64) < SENT_SHARE * n);
    SearchTrial {
        load: intended.map_or(data.sent_pkts as f64 / duration, |n| n / duration),
        duration,
        sent: data.sent_pkts,
        received: data.received_pkts,
        drops: drops(&data.files),
        valid: short.is_none(),
        problem: short.map(|n| {
            format!(
                "the senders sent {} of the {n:.0} packets asked ({:.1} %)",
                data.sent_pkts,
                100.0 * data.sent_pkts as f64 / n
            )
        }),
        start_unix_s: data.start_unix_s,
        end_unix_s: data.end_unix_s,
    }
}

impl TrialRunner for SearchRunner<'_> {
    type Error = TrialError;

    fn run(&mut self, load: f64, duration: f64) -> Result<TrialOutcome, TrialError> {
        if !(load.is_finite() && load >= 1.0) {
            return Err(TrialError(anyhow::anyhow!(
                "load {load} packets/s is not a rate a sender can send"
            )));
        }
        // The generator sends whole packets a second.
        let record = self.measure(Rate::Pps(load.round() as u64), duration)?;
        Ok(TrialOutcome {
            offered_load: record.sent as f64 / duration,
            duration,
            sent: record.sent,
            received: record.received,
            valid: record.valid,
        })
    }

    fn progress(&mut self, state: &SearchState) {
        (self.on_event)(&Event::Search {
            key: self.key,
            state,
        });
    }
}

/// Drops per interface over a trial, from the receiver's file: `receiver.json` (in-process:
/// counts since the receiver started, so the last sample's) or `receiver.jsonl` (`benchlab rx`
/// on a remote host: its summary line).
pub fn drops(files: &[(String, String)]) -> BTreeMap<String, u64> {
    let last = files.iter().find_map(|(name, text)| match name.as_str() {
        "receiver.json" => {
            let series: serde_json::Value = serde_json::from_str(text).ok()?;
            let last = series["samples"].as_array()?.last()?.clone();
            Some((series["iface"].clone(), series["watch"].clone(), last))
        }
        "receiver.jsonl" => text.lines().rev().find_map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).ok()?;
            (v["type"] == "summary").then(|| (v["iface"].clone(), v["watch"].clone(), v))
        }),
        _ => None,
    });
    let Some((iface, watch, counts)) = last else {
        return BTreeMap::new();
    };
    let names = watch.as_array().cloned().unwrap_or_default();
    let values = counts["drops"].as_array().cloned().unwrap_or_default();
    let mut drops: BTreeMap<String, u64> = names
        .iter()
        .zip(&values)
        .filter_map(|(n, v)| Some((n.as_str()?.to_string(), v.as_u64()?)))
        .collect();
    if let (Some(name), Some(n)) = (iface.as_str(), counts["rx_drops"].as_u64()) {
        drops.insert(name.to_string(), n);
    }
    drops
}

/// Runs the search of throughput iteration `key` (its profile `profile`), stores `search.json`
/// and the iteration's `meta.json`, and returns the meta; `t0` is when its turn came.
pub fn run_search(
    campaign: &Campaign,
    store: &Store,
    bench: &mut dyn Bench,
    (key, profile): (&TrialKey, &Profile),
    (t0, cancel): (Instant, &Cancel),
    on_event: &mut dyn FnMut(&Event<'_>),
) -> anyhow::Result<TrialMeta> {
    store
        .begin_trial(key)
        .with_context(|| format!("preparing {}", store.trial_dir(key).display()))?;
    on_event(&Event::TrialStart { key, attempt: 1 });
    let config = campaign.search();
    let mut runner = SearchRunner::new(bench, (key, profile, &campaign.hooks), cancel, on_event);
    let mut record = SearchRecord {
        generator_max: None,
        calibration: None,
        result: None,
        failure: None,
        trials: Vec::new(),
        wall_s: 0.0,
    };
    let outcome = match (config.max_load, profile.rate) {
        (Some(max), _) => Ok(max),
        (None, Rate::Pps(pps)) => Ok(pps as f64),
        (None, Rate::Max) => calibrate(&mut runner, &mut record),
    }
    .and_then(|max| {
        search::search(&config, max, &mut runner).map_err(|e| TrialError(anyhow::Error::new(e)))
    });
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

/// The generator's full rate, from one trial at `max` (the search's max load is a share of it).
fn calibrate(runner: &mut SearchRunner<'_>, record: &mut SearchRecord) -> Result<f64, TrialError> {
    let trial = runner.measure(Rate::Max, CALIBRATION_S)?;
    runner.trials.pop();
    let rate = trial.sent as f64 / CALIBRATION_S;
    record.calibration = Some(trial.clone());
    if let Some(problem) = trial.problem {
        return Err(TrialError(anyhow::anyhow!(
            "measuring the generator's full rate: {problem}"
        )));
    }
    record.generator_max = Some(rate);
    Ok(GENERATOR_SHARE * rate)
}

/// The iteration's `meta.json` for a search: its figure (`rx_pps`) is the first goal's
/// conditional throughput; a timeout or a goal without a lower bound flags it.
fn summarize(key: &TrialKey, record: &SearchRecord) -> TrialMeta {
    let valid: Vec<&SearchTrial> = record.trials.iter().filter(|t| t.valid).collect();
    let tx_pkts = valid.iter().map(|t| t.sent).sum();
    let rx_pkts = valid.iter().map(|t| t.received).sum();
    let start = record.trials.first().map_or(0.0, |t| t.start_unix_s);
    let end = record.trials.last().map_or(0.0, |t| t.end_unix_s);
    let (status, flags, figure, max) = match &record.result {
        Some(result) => {
            let flags = flags(result);
            let status = if flags.is_empty() {
                Status::Ok
            } else {
                Status::Flagged
            };
            let figure = result.goals.first().and_then(|g| g.conditional_throughput);
            (status, flags, figure.unwrap_or(0.0), result.max_load)
        }
        None => (Status::Failed, Vec::new(), 0.0, 0.0),
    };
    let trial_s: f64 = record.trials.iter().map(|t| t.duration).sum();
    TrialMeta {
        trial: key.to_string(),
        start_unix_s: start,
        end_unix_s: end,
        offered_pps: None,
        tx_pps: max,
        rx_pps: figure,
        tx_pkts,
        rx_pkts,
        lost_pkts: valid
            .iter()
            .map(|t| t.sent.saturating_sub(t.received))
            .sum(),
        measured_samples: valid.len(),
        generator: None,
        status,
        flags,
        failure: record.failure.clone(),
        attempts: 1,
        discarded: None,
        overhead_s: (record.wall_s - trial_s).max(0.0),
        capture: None,
    }
}

/// What a finished search did not reach: its time limit, or a goal's lower bound.
fn flags(result: &SearchResult) -> Vec<String> {
    let mut flags = Vec::new();
    if result.end == search::SearchEnd::Timeout {
        flags.push(format!(
            "the search stopped at its time limit ({} s of trials) before every goal's width",
            result.trial_seconds
        ));
    }
    for goal in result
        .goals
        .iter()
        .filter(|g| g.relevant_lower_bound.is_none())
    {
        flags.push(format!(
            "{}: even min load ({:.0} packets/s) lost more than {} %",
            goal.goal.name,
            result.min_load,
            100.0 * goal.goal.loss_ratio
        ));
    }
    flags
}

#[cfg(test)]
mod tests;
