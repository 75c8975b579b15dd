//! Throughput profiles of a benchlab results directory: each iteration's `search.json` (through
//! `store`) becomes one iteration per goal, the goal a level of the profile (`inet4-NDR`), so
//! that ministat tables and comparisons across versions and config sets work as for
//! saturation series; the searches themselves are kept for the report's NDR/PDR table and
//! charts.

use std::collections::BTreeMap;

use super::{note_status, take_finished, Iteration, Results, Series, Setup, Traffic, CROWDED};
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
        super::latency::add_search(store, (cell, key), &record, results)?;
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

/// What disturbed a search, for the doubt rule: other programs on the lab's CPUs over its
/// trials make its bounds the machine's too ([`CROWDED`]).
fn troubles(record: &SearchRecord) -> Vec<String> {
    let crowded = record.crowded().is_some_and(|c| c.is_crowded());
    crowded.then(|| CROWDED.to_string()).into_iter().collect()
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
    let troubles = troubles(record);
    for (s, goal) in series.iter_mut().zip(&result.goals) {
        if let Some(throughput) = goal.conditional_throughput {
            s.iterations.push(Iteration {
                index,
                median_pps: throughput,
                samples: valid,
                offered_pps: Some(result.max_load),
                source: source.to_string(),
                troubles: troubles.clone(),
            });
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::lab::stall::CpuStalls;
    use crate::search::sim::{LossCurve, SimulatedDut};
    use crate::search::{search, SearchConfig};
    use crate::store::SearchTrial;

    /// A noise-free search of a 1 Mpps DUT, its lab trials made from its trace.
    pub(crate) fn run() -> SearchRun {
        let mut dut = SimulatedDut::new(LossCurve::Cliff { capacity: 1e6 }, 0.0, 7);
        let result = search(&SearchConfig::mlrsearch(), 2e6, &mut dut).unwrap();
        let trials = (result.trials.iter())
            .map(|t| SearchTrial {
                load: t.load,
                duration: t.duration,
                sent: t.sent,
                received: t.received,
                late: 0,
                drops: BTreeMap::new(),
                dut_cpu: None,
                valid: t.valid,
                problem: None,
                start_unix_s: 0.0,
                end_unix_s: 0.0,
            })
            .collect();
        SearchRun {
            version: "v".into(),
            config: "forwarding".into(),
            profile: "inet4".into(),
            iteration: 1,
            record: SearchRecord {
                generator_max: None,
                calibration: Vec::new(),
                result: Some(result),
                failure: None,
                trials,
                opening: None,
                closing: None,
                wall_s: 40.0,
                latency: Vec::new(),
                probes_pps: None,
            },
            source: String::new(),
        }
    }

    #[test]
    fn a_search_crowded_by_other_programs_counts_as_disturbed() {
        let mut record = run().record;
        // Not watched, then watched with nothing else on the DUT's CPU: undisturbed.
        assert!(troubles(&record).is_empty());
        let watch = |others_ms| CpuStalls {
            cpu: 1,
            wakes: 1000,
            longest_ms: 0.1,
            stalls_ms: Vec::new(),
            steal_ms: 0.0,
            busy_ms: 500.0,
            others: Some(crate::lab::stall::OthersTime {
                ms: others_ms,
                cpus: Vec::new(),
            }),
            queue_frames: 256,
        };
        for t in &mut record.trials {
            t.dut_cpu = Some(watch(0.0));
        }
        assert!(troubles(&record).is_empty());
        // One trial of the search a quarter someone else's: 1 % over the search's is not
        // enough; a tenth of every trial is.
        let n = record.trials.len() as f64;
        let t = &mut record.trials[3];
        t.dut_cpu = Some(watch(250.0 * t.duration));
        assert!(n > 25.0 && troubles(&record).is_empty(), "{n} trials");
        for t in &mut record.trials {
            t.dut_cpu = Some(watch(100.0 * t.duration));
        }
        assert_eq!(troubles(&record), [CROWDED]);
    }
}
