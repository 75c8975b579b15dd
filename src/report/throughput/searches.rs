//! One row per search: what the DUT forwarded saturated at the search's start and end, each
//! goal's conditional throughput, the trials, the invalid ones, and the trials that lost
//! packets at loads the DUT forwards — how the machine's noise showed in that search.

use std::collections::BTreeMap;

use crate::ingest::benchlab::throughput::SearchRun;
use crate::store::{Saturated, SearchTrial};
use crate::units::format_pps;

/// What the machine's noise did to one search: the trials at or below its lowest relevant lower
/// bound (loads the DUT forwards without loss in most trials) that still lost packets.
#[derive(Debug, Clone, PartialEq)]
pub struct Disturbed {
    /// Valid trials at such loads (the warm-up left out).
    pub trials: usize,
    /// Those of them that lost packets.
    pub lossy: usize,
    /// Median of their lost packets.
    pub median_lost: u64,
    /// The watched interface that dropped most of them, when the receiver watched any.
    pub at: Option<String>,
}

/// The trials of `run` at or below its lowest relevant lower bound, and those that lost
/// packets; `None` without a result or a lower bound.
pub fn disturbed(run: &SearchRun) -> Option<Disturbed> {
    let result = run.record.result.as_ref()?;
    let bound = (result.goals.iter())
        .filter_map(|g| g.relevant_lower_bound)
        .reduce(f64::min)?;
    let below: Vec<&SearchTrial> = (run.record.paired_trials())
        .filter(|(t, _)| t.valid && !t.warmup && t.load <= bound)
        .map(|(_, lab)| lab)
        .collect();
    let mut lost: Vec<u64> = (below.iter())
        .map(|t| t.sent.saturating_sub(t.received))
        .filter(|&n| n > 0)
        .collect();
    lost.sort_unstable();
    let mut drops: BTreeMap<&str, u64> = BTreeMap::new();
    for (iface, n) in below.iter().flat_map(|t| &t.drops) {
        *drops.entry(iface).or_default() += n;
    }
    // A veth pair counts a drop at both ends; on a tie the first name (the virtual lab's
    // `…-dut/…` before `…-sender/…`) is kept.
    let most = drops.values().copied().max().filter(|&n| n > 0);
    let at = (drops.iter())
        .find(|&(_, &n)| Some(n) == most)
        .map(|(iface, _)| iface.to_string());
    Some(Disturbed {
        trials: below.len(),
        lossy: lost.len(),
        median_lost: lost.get(lost.len() / 2).copied().unwrap_or(0),
        at,
    })
}

fn saturated(at: Option<Saturated>) -> String {
    at.map_or_else(
        || "–".to_string(),
        |a| {
            let limit = if a.saturated { "" } else { " (no loss)" };
            format!("{}{limit}", format_pps(a.forwarded))
        },
    )
}

/// The per-search table (and what its columns mean), for the README; empty without searches.
pub fn markdown(runs: &[SearchRun]) -> String {
    let Some(goals) = (runs.iter()).find_map(|r| r.record.result.as_ref()) else {
        return String::new();
    };
    let names: Vec<&str> = goals.goals.iter().map(|g| g.goal.name.as_str()).collect();
    let exceed = goals.goals.first().map_or(0.5, |g| g.goal.exceed_ratio);
    let mut md = format!(
        "\n### Searches\n\nSaturated: what the DUT forwarded in a trial before the search and \
         one after it, at `max` following the DUT (offered a little more than it takes, as the \
         other designs load it; with a max load given instead of calibrated, the search's first \
         trial at max load and one more there after its last; \"no loss\": the generator, not \
         the DUT, set the rate). They differ when the machine changed speed during the search. Lossy \
         trials: of the trials at or below the lowest lower bound found (loads the DUT \
         forwards without loss in most trials), those that still lost packets, the median lost \
         and where they were dropped (on the virtual lab: the DUT's input queue, which \
         overflows when its forwarding stalls for a fraction of a millisecond). Such a trial is \
         bad for a zero-loss goal; with an exceed ratio of {exceed} a load stays a lower bound as long \
         as no more than {share:.0} % of its trial seconds are bad, so they cost trials rather \
         than move the bound.\n\n\
         | search | max load | saturated: start | end | {} | trials | invalid | lossy \
         trials | wall s |\n|---|---|---|---|{}---|---|---|---|\n",
        names.join(" | "),
        "---|".repeat(names.len()),
        share = 100.0 * exceed,
    );
    for run in runs {
        let name = format!(
            "{}.{}.{}.{}",
            run.version, run.config, run.profile, run.iteration
        );
        let Some(result) = &run.record.result else {
            let why = run.record.failure.as_deref().unwrap_or("no result");
            md.push_str(&format!("| {name} | failed: {why} |\n"));
            continue;
        };
        let (start, end) = run.record.saturated();
        let figures: Vec<String> = (result.goals.iter())
            .map(|g| g.conditional_throughput.map_or("–".into(), format_pps))
            .collect();
        let invalid = result.trials.iter().filter(|t| !t.valid).count();
        let lossy = disturbed(run).map_or_else(
            || "–".to_string(),
            |d| {
                let at = d.at.map(|a| format!(", at {a}")).unwrap_or_default();
                match d.lossy {
                    0 => format!("0 of {}", d.trials),
                    n => format!("{n} of {} ({} packets{at})", d.trials, d.median_lost),
                }
            },
        );
        md.push_str(&format!(
            "| {name} | {} | {} | {} | {} | {} | {invalid} | {lossy} | {:.0} |\n",
            format_pps(result.max_load),
            saturated(start),
            saturated(end),
            figures.join(" | "),
            result.trials.len(),
            run.record.wall_s,
        ));
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::sim::{LossCurve, SimulatedDut};
    use crate::search::{search, SearchConfig};
    use crate::store::SearchRecord;

    /// A noise-free search of a 1 Mpps DUT, its lab trials made from its trace.
    fn run() -> SearchRun {
        let mut dut = SimulatedDut::new(LossCurve::Cliff { capacity: 1e6 }, 0.0, 7);
        let result = search(&SearchConfig::mlrsearch(), 2e6, &mut dut).unwrap();
        let trials = (result.trials.iter())
            .map(|t| SearchTrial {
                load: t.load,
                duration: t.duration,
                sent: t.sent,
                received: t.received,
                drops: BTreeMap::new(),
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
            },
            source: String::new(),
        }
    }

    #[test]
    fn trials_that_lost_packets_below_the_ndr_are_counted_with_where_they_were_dropped() {
        let mut run = run();
        let ndr = run.record.result.as_ref().unwrap().goals[0]
            .relevant_lower_bound
            .unwrap();
        let clean = disturbed(&run).unwrap();
        assert_eq!((clean.lossy, clean.at), (0, None));
        assert!(clean.trials > 0);
        // Two trials at loads the DUT forwards lose a few hundred packets each, counted at both
        // ends of the veth that dropped them.
        let below: Vec<usize> = (run.record.trials.iter().enumerate())
            .filter(|(_, t)| t.load <= ndr)
            .map(|(i, _)| i)
            .take(2)
            .collect();
        for (&i, lost) in below.iter().zip([300, 500]) {
            let t = &mut run.record.trials[i];
            t.received -= lost;
            t.drops =
                BTreeMap::from([("lab-dut/in".into(), lost), ("lab-sender/out".into(), lost)]);
        }
        let d = disturbed(&run).unwrap();
        assert_eq!((d.trials, d.lossy, d.median_lost), (clean.trials, 2, 500));
        assert_eq!(d.at.as_deref(), Some("lab-dut/in"));
        let md = markdown(&[run]);
        assert!(
            md.contains(&format!(
                "| 2 of {} (500 packets, at lab-dut/in) | 40 |",
                d.trials
            )),
            "{md}"
        );
        assert!(
            md.contains("| v.forwarding.inet4.1 | 2 Mpps | 1 Mpps | – |"),
            "{md}"
        );
    }
}
