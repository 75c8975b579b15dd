//! Reader for benchlab's own results directories (`benchlab run -o DIR`): the campaign as run,
//! `lab.json`, and each trial's `samples.csv` and `meta.json` (and `latency.hlog`, [`latency`]).
//!
//! [`latency`]: crate::ingest::benchlab::latency
//!
//! An iteration's figure is recomputed from `samples.csv` (median receive rate over the seconds
//! left once the campaign's warm-up and cool-down are dropped), so a report can always be
//! regenerated from the raw samples. Failed trials are left out and flagged trials kept; both
//! are named in the warnings, which the report prints.

use std::collections::BTreeMap;
use std::path::Path;

use super::{Capture, Iteration, Results, Series, Setup, Traffic, Warning};
use crate::config::{secs, Campaign, Design, Measure, Profile, Rate, Trial};
use crate::error::InputError;
use crate::stats::{Flavor, Sample};
use crate::store::window::measured_window;
use crate::store::{
    measured, plan, LabRecord, Status, Store, TrialKey, TrialMeta, FOLDED_FILE, PROFILING,
};

/// Latency under load: each trial's histograms cut to its window, merged per load; the floor.
pub(crate) mod latency;
/// Throughput profiles: one series per goal from each iteration's `search.json`.
pub(crate) mod throughput;

/// True when `dir` looks like a benchlab results directory (it has `campaign.toml` and `runs/`).
pub(crate) fn is_results_dir(dir: &Path) -> bool {
    dir.join("campaign.toml").is_file() && dir.join("runs").is_dir()
}

/// What a benchlab results directory holds, read back.
#[derive(Debug, Clone)]
pub(crate) struct CampaignResults {
    /// The campaign as run.
    pub(crate) campaign: Campaign,
    /// `lab.json` (empty when the campaign stopped before writing it).
    pub(crate) lab: LabRecord,
    /// The series, in campaign order (versions, then config sets, then profiles).
    pub(crate) results: Results,
}

/// Reads a results directory; `known_sets` are the built-in config set names.
pub(crate) fn read_dir(dir: &Path, known_sets: &[&str]) -> Result<CampaignResults, InputError> {
    let campaign = Store::stored_campaign(dir, known_sets)?;
    let store = Store::open(dir)?;
    let mut finished = store.finished_trials()?;
    let lab = store.read_lab()?.unwrap_or_default();
    if campaign.design == Design::Alternating {
        let mut results = Results {
            latency_floor: latency::floor(&store, &lab)?,
            ..Results::default()
        };
        super::alternating::read(&store, &campaign, &mut results)?;
        return Ok(CampaignResults {
            campaign,
            lab,
            results,
        });
    }
    let mut results = Results {
        method: method(&campaign),
        latency_floor: latency::floor(&store, &lab)?,
        ..Results::default()
    };
    let keys = plan(&campaign);
    // A DUT that cannot be profiled (no hwpmc) is said once, not once per series.
    let no_profiler = (lab.profiler_unavailable.as_deref()).filter(|_| campaign.profile);
    if let Some(reason) = no_profiler {
        results.warnings.push(Warning::NoProfiler {
            reason: reason.to_string(),
        });
    }
    for version in &campaign.versions {
        for config in campaign.config_set_names() {
            for profile in &campaign.profiles {
                if profile.measure == Measure::Throughput {
                    let keys: Vec<&TrialKey> = (keys.iter())
                        .filter(|k| !k.is_profiling() && k.profile == profile.name)
                        .filter(|k| k.version == version.name && k.config == config)
                        .collect();
                    let cell = (version.name.as_str(), config, profile);
                    throughput::read(&store, &campaign, cell, &keys, &mut finished, &mut results)?;
                    continue;
                }
                let uname = (lab.versions.get(&version.name)).and_then(|v| v.uname.as_deref());
                let cell = (version.name.as_str(), config, profile);
                let series = read_series(
                    &store,
                    &campaign,
                    cell,
                    uname,
                    &keys,
                    &mut finished,
                    &mut results,
                )?;
                if campaign.profile && no_profiler.is_none() {
                    let key = TrialKey {
                        version: version.name.clone(),
                        config: config.to_string(),
                        profile: profile.name.clone(),
                        iteration: PROFILING,
                    };
                    let meta = finished.get(&key);
                    results
                        .captures
                        .push(read_capture(&store, &key, meta, &campaign.trial)?);
                }
                results.series.push(series);
            }
        }
    }
    Ok(CampaignResults {
        campaign,
        lab,
        results,
    })
}

/// How a fixed-rate campaign's figures were made, as the report's method line says.
fn method(campaign: &Campaign) -> String {
    let t = &campaign.trial;
    let fixed = format!(
        "the median of the receiver's per-second rates over each {} s trial, the first {} s \
         and the last {} s dropped",
        secs(t.duration),
        secs(t.warmup),
        secs(t.cooldown)
    );
    match (campaign.profiles.iter()).any(|p| p.measure == Measure::Throughput) {
        true => format!("{fixed}; {}", throughput::METHOD),
        false => fixed,
    }
}

/// One series of fixed-rate trials: an iteration per finished trial (its median over the
/// measured window), a warning for each one missing, failed or without samples.
fn read_series(
    store: &Store,
    campaign: &Campaign,
    (version, config, profile): (&str, &str, &Profile),
    uname: Option<&str>,
    keys: &[TrialKey],
    finished: &mut BTreeMap<TrialKey, TrialMeta>,
    results: &mut Results,
) -> Result<Series, InputError> {
    let mut series = Series {
        name: format!("{version}.{config}.{}", profile.name),
        version: version.to_string(),
        config: config.to_string(),
        profile: profile.name.clone(),
        iterations: Vec::new(),
        pps_blanks: Vec::new(),
        setup: Setup {
            // The virtual lab's DUT runs this host's kernel, which the setup list names once;
            // a lab over SSH records each version's running kernel.
            uname: uname.map(str::to_string),
            traffic: Some(Traffic::of_profile(profile)),
        },
    };
    let mut trials: Vec<_> = (keys.iter())
        .filter(|k| !k.is_profiling() && k.version == version)
        .filter(|k| k.config == config && k.profile == profile.name)
        .collect();
    trials.sort_by_key(|k| k.iteration);
    let window = measured_window(&campaign.trial);
    for key in trials {
        let Some(meta) = take_finished(key, finished, &[&series.name], results) else {
            continue;
        };
        if note_status(key, &meta, &mut results.warnings) {
            continue;
        }
        if let Some(reason) = &meta.discarded {
            results.warnings.push(Warning::RemeasuredTrial {
                trial: key.to_string(),
                reason: reason.clone(),
            });
        }
        let how = (window, profile.rate == Rate::Max, troubles(&meta));
        latency::add_trial(
            store,
            ((version, config, &profile.name), key),
            &meta,
            how,
            results,
        )?;
        let samples = store.read_samples(key)?;
        let window: Vec<f64> = measured(&samples, &campaign.trial)
            .iter()
            .map(|s| s.rx_pps)
            .collect();
        if window.is_empty() {
            results.warnings.push(Warning::TooFewSamples {
                file: format!("runs/{key}/samples.csv"),
                samples: 0,
            });
            continue;
        }
        let n = window.len();
        series.iterations.push(Iteration {
            index: key.iteration,
            median_pps: Sample::new(window).summary(Flavor::Current).median,
            samples: n,
            offered_pps: Some(meta.tx_pps),
            source: format!("runs/{key}/samples.csv"),
            troubles: troubles(&meta),
        });
    }
    Ok(series)
}

/// The trouble of a trial during which other programs took more than
/// [`CROWDED_SHARE`](crate::store::CROWDED_SHARE) of the lab's CPUs' time (a fixed-load trial,
/// flagged so by `campaign::trials`; after a search, a latency trial, or any trial of the
/// search itself): the DUT's NAPI kthreads preempt them,
/// but they take the CPUs' caches and the kthreads' wake-ups wait for them, so the trial
/// measured the machine's other work as much as the DUT.
pub(crate) const CROWDED: &str = "crowded";

/// What disturbed a trial, one short word each, for the doubt rule (`stats::doubt`): its flags
/// (as `campaign::trials` words them) and a first attempt left out.
fn troubles(meta: &TrialMeta) -> Vec<String> {
    let kind = |flag: &String| {
        let kind = match flag.split(':').next().unwrap_or_default() {
            "unsteady" => "unsteady",
            "slowed" => "slowed",
            "DUT not saturated" => "not saturated",
            "crowded" => CROWDED,
            _ if flag.starts_with("sender reached") => "short of its load",
            _ => "flagged",
        };
        kind.to_string()
    };
    let mut troubles: Vec<String> = meta.flags.iter().map(kind).collect();
    if meta.attempts > 1 || meta.discarded.is_some() {
        troubles.push("measured twice".into());
    }
    troubles.dedup();
    troubles
}

/// The record of trial `key`, taken out of `finished` (its generator noted once), or a missing
/// iteration said of each of `series` when the trial never finished.
fn take_finished(
    key: &TrialKey,
    finished: &mut BTreeMap<TrialKey, TrialMeta>,
    series: &[&str],
    results: &mut Results,
) -> Option<TrialMeta> {
    let Some(meta) = finished.remove(key) else {
        for name in series {
            results.warnings.push(Warning::MissingIteration {
                series: name.to_string(),
                index: key.iteration,
                why: "no finished trial record, meta.json; `benchlab run --resume` measures it",
            });
        }
        return None;
    };
    if let Some(generator) = &meta.generator {
        (results.generators.entry(key.profile.clone())).or_insert_with(|| generator.clone());
    }
    Some(meta)
}

/// Says in `warnings` what a finished trial's status says (failed: left out; flagged: kept);
/// true when it failed.
fn note_status(key: &TrialKey, meta: &TrialMeta, warnings: &mut Vec<Warning>) -> bool {
    match meta.status {
        Status::Failed => warnings.push(Warning::FailedTrial {
            trial: key.to_string(),
            reason: meta.failure.clone().unwrap_or_default(),
        }),
        Status::Flagged => warnings.push(Warning::FlaggedTrial {
            trial: key.to_string(),
            flags: meta.flags.join("; "),
        }),
        Status::Ok => {}
    }
    meta.status == Status::Failed
}

/// Seconds a capture may start before the end of warm-up (perf's first sample against the
/// controller's clock). Its end may run into cool-down, as perf takes a moment to stop on a
/// loaded machine, but not past the traffic.
const CAPTURE_SLACK_S: f64 = 0.5;

/// A profiling trial's capture, from its `meta` (`None`: it did not run); what is wrong with it
/// (not run, failed, no stacks, outside the traffic) goes in its `problem`.
fn read_capture(
    store: &Store,
    key: &TrialKey,
    meta: Option<&TrialMeta>,
    trial: &Trial,
) -> Result<Capture, InputError> {
    let mut capture = Capture {
        version: key.version.clone(),
        config: key.config.clone(),
        profile: key.profile.clone(),
        trial: format!("runs/{key}"),
        folded: String::new(),
        problem: None,
        // An SSH DUT is profiled on all its CPUs (no CPU list), the virtual lab's on one.
        system_wide: meta
            .and_then(|m| m.capture.as_ref())
            .is_some_and(|w| w.cpus.is_empty()),
        source: "CPU of the DUT during one extra trial per series, between warm-up and \
                 cool-down"
            .into(),
    };
    let Some(meta) = meta else {
        capture.problem = Some("the profiling trial did not run".into());
        return Ok(capture);
    };
    if let Some(setup) = meta.capture.as_ref().and_then(|w| w.setup_s) {
        // pmcstat cannot start paused: it starts with the window, whose first moments it spends
        // setting up.
        capture.source = format!(
            "{}; the profiler, started at the end of warm-up, took {setup:.2} s of the window \
             to set up",
            capture.source
        );
    }
    let path = store.trial_dir(key).join(FOLDED_FILE);
    capture.problem = match (
        &meta.status,
        &meta.capture,
        crate::file::read_text_in(store.dir(), &path),
    ) {
        (Status::Failed, _, _) => Some(format!(
            "the profiling trial failed ({})",
            meta.failure.as_deref().unwrap_or("unknown")
        )),
        (_, None, _) | (_, _, Err(_)) => Some("no capture (perf.folded) in the trial".into()),
        (_, Some(window), Ok(text)) => {
            capture.folded = text;
            let (from, to) = (
                window.start_unix_s - meta.start_unix_s,
                window.end_unix_s - meta.start_unix_s,
            );
            let (first, last) = (secs(trial.warmup), meta.end_unix_s - meta.start_unix_s);
            (from < first - CAPTURE_SLACK_S || to > last).then(|| {
                format!(
                    "captured from {from:.1} s to {to:.1} s of the trial's traffic, outside \
                     {first} s to {last:.1} s (after warm-up, while traffic flowed)"
                )
            })
        }
    };
    Ok(capture)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trials_flags_become_the_doubt_rules_words() {
        let key = TrialKey::parse("v.nft-stateful.inet4.2").unwrap();
        let meta = TrialMeta {
            flags: vec![
                "unsteady: the DUT forwarded 480000 to 780000 pps".into(),
                "crowded: other programs took 5.7 % of the lab's CPUs' time (more than 1 %)".into(),
            ],
            attempts: 2,
            ..crate::store::tests::meta(&key)
        };
        assert_eq!(troubles(&meta), ["unsteady", CROWDED, "measured twice"]);
    }
}
