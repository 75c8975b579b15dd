//! Throughput profiles of a benchlab results directory: each iteration's `search.json` (through
//! `store`) becomes one iteration per goal, the goal a level of the profile (`inet4-NDR`), so
//! that ministat tables and comparisons across versions and config sets work as for
//! saturation series; the searches themselves are kept for the report's NDR/PDR table and
//! charts.

use std::collections::BTreeMap;

use super::{note_status, take_finished, Iteration, Results, Series, Setup, Traffic};
use crate::config::{Campaign, Profile};
use crate::error::InputError;
use crate::store::{SearchRecord, Store, TrialKey, TrialMeta, SEARCH_FILE};

/// How a throughput iteration's figure is computed, for the report's method line.
pub(crate) const METHOD: &str = "for throughput profiles, one search per iteration, each goal's \
    conditional throughput (draft-ietf-bmwg-mlrsearch) its figure";

/// One search of a throughput series, as stored.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SearchRun {
    /// Version name.
    pub(crate) version: String,
    /// Config set name.
    pub(crate) config: String,
    /// Traffic profile name (without the goal).
    pub(crate) profile: String,
    /// Iteration number.
    pub(crate) iteration: u32,
    /// `search.json`.
    pub(crate) record: SearchRecord,
    /// Where it was read, relative to the results directory.
    pub(crate) source: String,
}

/// The series name of a goal of a throughput profile: the goal is a level of the profile.
pub(crate) fn goal_profile(profile: &str, goal: &str) -> String {
    format!("{profile}-{goal}")
}

/// Reads the iterations `keys` of throughput profile `profile` in (`version`, `config`): one
/// series per goal into `results`, every search into `results.searches`.
pub(crate) fn read(
    store: &Store,
    campaign: &Campaign,
    (version, config, profile): (&str, &str, &Profile),
    keys: &[&TrialKey],
    finished: &mut BTreeMap<TrialKey, TrialMeta>,
    results: &mut Results,
) -> Result<(), InputError> {
    let goals: Vec<String> = campaign
        .search()
        .goals
        .into_iter()
        .map(|g| g.name)
        .collect();
    let mut series: Vec<Series> = goals
        .iter()
        .map(|goal| {
            let profile_level = goal_profile(&profile.name, goal);
            Series {
                name: format!("{version}.{config}.{profile_level}"),
                version: version.to_string(),
                config: config.to_string(),
                profile: profile_level,
                setup: Setup {
                    uname: None,
                    traffic: Some(Traffic::of_profile(profile)),
                },
                ..Series::default()
            }
        })
        .collect();
    for key in keys {
        let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
        let Some(meta) = take_finished(key, finished, &names, results) else {
            continue;
        };
        note_status(key, &meta, &mut results.warnings);
        let record = store.read_search(key)?;
        let cell = (version, config, profile.name.as_str());
        super::latency::add_search(store, (cell, key), &record.latency, results)?;
        let source = format!("runs/{key}/{SEARCH_FILE}");
        add_iterations(&mut series, key.iteration, &record, &source);
        results.searches.push(SearchRun {
            version: version.to_string(),
            config: config.to_string(),
            profile: profile.name.clone(),
            iteration: key.iteration,
            record,
            source,
        });
    }
    results.series.extend(series);
    Ok(())
}

/// Adds iteration `index` of a search to its goals' `series`: each goal's conditional
/// throughput, when it has one.
fn add_iterations(series: &mut [Series], index: u32, record: &SearchRecord, source: &str) {
    let Some(result) = &record.result else {
        return;
    };
    let valid = result
        .trials
        .iter()
        .filter(|t| t.valid && !t.warmup)
        .count();
    for (s, goal) in series.iter_mut().zip(&result.goals) {
        if let Some(throughput) = goal.conditional_throughput {
            s.iterations.push(Iteration {
                index,
                median_pps: throughput,
                samples: valid,
                offered_pps: Some(result.max_load),
                source: source.to_string(),
                troubles: Vec::new(),
            });
        }
    }
}
