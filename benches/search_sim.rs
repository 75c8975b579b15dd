//! benchlab's MLRsearch on the simulated DUTs of `benches/search_cases.json`, side by side with
//! the reference library's results (JSON lines from `benches/search_reference.py`, read from the
//! file named by `BENCHLAB_SEARCH_REFERENCE` when set). Run through `benches/search.sh`.
//!
//! Per case, over `BENCHLAB_SEARCH_SEEDS` seeds (default 20): the true NDR and PDR of the noise-free
//! curve, each implementation's relevant lower bound (median, and the worst relative distance
//! from the truth), mean trials and mean trial seconds.

use std::collections::BTreeMap;
use std::error::Error;

use benchlab::search::sim::{Drift, LossCurve, SimulatedDut};
use benchlab::search::{search, SearchConfig};
use serde::Deserialize;

/// One simulated DUT, as in the cases file.
#[derive(Deserialize)]
struct Case {
    name: String,
    curve: LossCurve,
    noise: f64,
    spike_probability: f64,
    spike_loss: f64,
    min_load: f64,
    max_load: f64,
    /// A change of the DUT's speed during the search; the truth is then the DUT's after it.
    #[serde(default)]
    drift: Option<Drift>,
}

/// One search's figures (the reference's JSON line, or ours).
#[derive(Deserialize, Clone)]
struct Run {
    case: String,
    seed: u64,
    ndr: Option<f64>,
    pdr: Option<f64>,
    trials: usize,
    seconds: f64,
    #[serde(default)]
    error: Option<String>,
}

/// Median, worst relative error against `truth` (in %), failures (no value).
fn summary(values: &[Option<f64>], truth: f64) -> String {
    let mut found: Vec<f64> = values.iter().flatten().copied().collect();
    if found.is_empty() {
        return "-".to_string();
    }
    found.sort_by(f64::total_cmp);
    let median = found[found.len() / 2];
    let worst = found
        .iter()
        .map(|v| (v / truth - 1.0) * 100.0)
        .fold(0.0_f64, |w, e| if e.abs() > w.abs() { e } else { w });
    let missing = values.len() - found.len();
    let missing = if missing > 0 {
        format!(" ({missing} none)")
    } else {
        String::new()
    };
    format!("{median:>9.0} {worst:>+6.2}%{missing}")
}

fn mean(runs: &[Run], f: impl Fn(&Run) -> f64) -> f64 {
    runs.iter().map(f).sum::<f64>() / runs.len().max(1) as f64
}

fn main() -> Result<(), Box<dyn Error>> {
    let dir = env!("CARGO_MANIFEST_DIR");
    let cases: Vec<Case> = serde_json::from_str(&std::fs::read_to_string(format!(
        "{dir}/benches/search_cases.json"
    ))?)?;
    let seeds: u64 = std::env::var("BENCHLAB_SEARCH_SEEDS").map_or(Ok(20), |s| s.parse())?;
    let mut reference: BTreeMap<String, Vec<Run>> = BTreeMap::new();
    if let Ok(path) = std::env::var("BENCHLAB_SEARCH_REFERENCE") {
        for line in std::fs::read_to_string(path)?.lines() {
            let run: Run = serde_json::from_str(line)?;
            reference.entry(run.case.clone()).or_default().push(run);
        }
    }
    let config = SearchConfig::mlrsearch();
    println!(
        "{:<25} {:<4} {:>9} {:>17} {:>17} {:>13} {:>13}",
        "case",
        "goal",
        "true",
        "benchlab (worst)",
        "reference (worst)",
        "trials b / r",
        "seconds b / r"
    );
    for case in &cases {
        let config = SearchConfig {
            min_load: case.min_load,
            ..config.clone()
        };
        let mut ours = Vec::new();
        for seed in 0..seeds {
            let mut dut = SimulatedDut::new(case.curve, case.noise, seed)
                .with_spikes(case.spike_probability, case.spike_loss)
                .with_drift(case.drift);
            let result = search(&config, case.max_load, &mut dut)?;
            ours.push(Run {
                case: case.name.clone(),
                seed,
                ndr: result.goals[0].relevant_lower_bound,
                pdr: result.goals[1].relevant_lower_bound,
                trials: result.trials.len(),
                seconds: result.trial_seconds,
                error: None,
            });
        }
        let theirs = reference.get(&case.name).cloned().unwrap_or_default();
        print_case(case, &ours, &theirs);
    }
    Ok(())
}

/// Prints one case's rows: the truth, both implementations' figures, and their agreement.
fn print_case(case: &Case, ours: &[Run], theirs: &[Run]) {
    let errors = theirs.iter().filter(|r| r.error.is_some()).count();
    let same = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => (a / b - 1.0).abs() < 1e-9,
        (a, b) => a.is_none() && b.is_none(),
    };
    // Seeds where both searches ran the same number of trials to the same bounds.
    let identical = theirs
        .iter()
        .filter(|r| {
            ours.iter().any(|o| {
                o.seed == r.seed && o.trials == r.trials && same(o.ndr, r.ndr) && same(o.pdr, r.pdr)
            })
        })
        .count();
    for (goal, loss) in [("NDR", 0.0), ("PDR", 0.005)] {
        let speed = case.drift.map_or(1.0, |d| d.factor);
        let truth =
            (speed * case.curve.throughput(loss, case.min_load, case.max_load)).min(case.max_load);
        let pick = |runs: &[Run]| -> Vec<Option<f64>> {
            runs.iter()
                .map(|r| if goal == "NDR" { r.ndr } else { r.pdr })
                .collect()
        };
        println!(
            "{:<25} {:<4} {:>9.0} {:>17} {:>17} {:>6.1} / {:<5.1} {:>6.1} / {:<5.1}",
            case.name,
            goal,
            truth,
            summary(&pick(ours), truth),
            summary(&pick(theirs), truth),
            mean(ours, |r| r.trials as f64),
            mean(theirs, |r| r.trials as f64),
            mean(ours, |r| r.seconds),
            mean(theirs, |r| r.seconds),
        );
    }
    if !theirs.is_empty() {
        let raised = if errors > 0 {
            format!("; the reference raised in {errors}")
        } else {
            String::new()
        };
        println!(
            "{:<25} identical to the reference in {identical} of {} seeds{raised}",
            case.name,
            theirs.len()
        );
    }
}
