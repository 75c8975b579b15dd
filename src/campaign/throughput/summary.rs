//! A finished search's `meta.json`: its figure, its status and the flags that say what it did
//! not reach or what disturbed it.

use super::search::{self, SearchResult};
use crate::store::{
    Crowded, SearchRecord, SearchTrial, Status, TrialKey, TrialMeta, CROWDED_SHARE,
};
use crate::units::format_pps;

/// The iteration's `meta.json` for a search: its figure (`rx_pps`) is the first goal's
/// conditional throughput; what [`flags`] finds flags it.
pub(super) fn summarize(key: &TrialKey, record: &SearchRecord) -> TrialMeta {
    let valid: Vec<&SearchTrial> = record.trials.iter().filter(|t| t.valid).collect();
    let tx_pkts = valid.iter().map(|t| t.sent).sum();
    let rx_pkts = valid.iter().map(|t| t.received).sum();
    let start = record.trials.first().map_or(0.0, |t| t.start_unix_s);
    let end = record.trials.last().map_or(0.0, |t| t.end_unix_s);
    let (status, flags, figure, max) = match &record.result {
        Some(result) => {
            let flags = flags(result, record.speed_change(), record.crowded());
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
        latency: None,
        others: None,
    }
}

/// What a finished search did not reach (its time limit, a goal's lower bound, a bound above
/// what the generator offered), a machine that changed speed during it (`speed`: what the
/// DUT forwarded saturated at the start and at the end), and other programs on the lab's
/// CPUs during its trials (`crowded`).
pub(super) fn flags(
    result: &SearchResult,
    speed: Option<(f64, f64)>,
    crowded: Option<Crowded>,
) -> Vec<String> {
    let mut flags = Vec::new();
    if let Some(c) = crowded.filter(Crowded::is_crowded) {
        flags.push(format!(
            "other programs took {:.1} % of the lab's CPUs' time over its trials (more than \
             {:.0} % in {} of its {}): its bounds are the machine's other work as much as the \
             DUT's; run nothing else while it measures",
            c.share * 100.0,
            CROWDED_SHARE * 100.0,
            c.trials,
            c.of,
        ));
    }
    if let Some((start, end)) = speed {
        flags.push(format!(
            "the machine changed speed during the search: the DUT forwarded {} saturated at \
             its start, {} at its end; its bounds mix both",
            format_pps(start),
            format_pps(end)
        ));
    }
    if result.end == search::SearchEnd::Timeout {
        flags.push(format!(
            "the search stopped at its time limit ({} s of trials) before every goal's width",
            result.trial_seconds
        ));
    }
    // A search cut short by its time limit may lack bounds for no other reason.
    let reached = result.end == search::SearchEnd::GoalsReached;
    let goals = || result.goals.iter().filter(|_| reached);
    for goal in goals().filter(|g| g.relevant_lower_bound.is_none()) {
        flags.push(format!(
            "{}: even min load ({:.0} packets/s) lost more than {} %",
            goal.goal.name,
            result.min_load,
            100.0 * goal.goal.loss_ratio
        ));
    }
    for goal in goals().filter(|g| g.relevant_upper_bound.is_none()) {
        flags.push(format!(
            "{}: max load ({}) lost no more than {} %: the throughput is at least that (a \
             higher search.max_load finds its bound, if the generator can send more)",
            goal.goal.name,
            format_pps(result.max_load),
            100.0 * goal.goal.loss_ratio
        ));
    }
    flags
}
