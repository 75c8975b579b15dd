//! What a campaign will run, before anything runs (`benchlab run --check`): its design and why,
//! how many trials or alternating runs, and about how long it takes.

use crate::config::{secs, Alternating, Campaign, Design, Measure, Runs};
use crate::stats::ministat::MIN_POINTS;
use crate::store::{plan, TrialKey};

/// Seconds a trial of the virtual lab costs beyond its traffic: the switch of version or
/// config set, starting and stopping the generator and receiver, writing the results (0.1 to
/// 0.3 s measured in `meta.json`'s `overhead_s`, more on a loaded machine).
const TRIAL_OVERHEAD_S: f64 = 1.0;
/// Seconds an alternating run costs beyond its traffic: building the rig, waiting for the
/// traffic to reach the receiver, writing the last block.
const RUN_OVERHEAD_S: f64 = 5.0;
/// Seconds to build and remove the virtual lab.
const LAB_S: f64 = 5.0;

/// A campaign's plan, in figures.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    /// The design in force.
    pub(crate) design: Design,
    /// Why (`Campaign::design_reason`).
    pub(crate) reason: String,
    /// Trials (trials design, profiling and searches included) or alternating runs.
    pub(crate) count: usize,
    /// What `count` counts, in words.
    pub(crate) unit: String,
    /// Wall time in seconds: expected when nothing is measured twice, or a bound.
    pub(crate) wall_s: f64,
    /// Whether `wall_s` is a bound (alternating runs ending at `max_duration`, searches at
    /// `search_duration_max`) rather than an expectation.
    pub(crate) at_most: bool,
    /// What the estimate leaves out or how the runs end, in words (may be empty).
    pub(crate) caveat: String,
}

/// The plan of `campaign`, as loaded and settled.
pub(crate) fn plan_of(campaign: &Campaign) -> Plan {
    let reason = campaign.design_reason();
    match alternating(campaign) {
        Some(alt) => alternating_plan(campaign, alt, reason),
        None => trials_plan(campaign, reason),
    }
}

/// The alternating design's settings, when `campaign` runs under it; `None`: trials.
fn alternating(campaign: &Campaign) -> Option<&Alternating> {
    match (campaign.design, &campaign.alternating) {
        (Design::Alternating, Some(alt)) => Some(alt),
        _ => None,
    }
}

/// The plan of an alternating campaign: its runs, each at most its `max_duration`.
fn alternating_plan(campaign: &Campaign, alt: &Alternating, reason: String) -> Plan {
    let runs = Runs::of(campaign);
    let count = runs.per_profile() * campaign.profiles.len();
    let warmup = secs(campaign.trial.warmup).max(secs(alt.settle));
    let per_run = secs(alt.max_duration) + warmup;
    let entries = runs.entries(0).len();
    // A profile with latency adds its latency run, `[latency] blocks` blocks long.
    let latency_runs = runs.per_profile()
        * (campaign.profiles.iter())
            .filter(|p| p.latency(&campaign.trial))
            .count();
    let latency_run = f64::from(campaign.latency().blocks) * secs(alt.block_duration(entries))
        + warmup
        + RUN_OVERHEAD_S;
    Plan {
        design: Design::Alternating,
        reason,
        count,
        unit: format!(
            "alternating run{} ({} per profile, {entries} entries switched every {} s)",
            if count == 1 { "" } else { "s" },
            runs.per_profile(),
            secs(alt.phase)
        ),
        wall_s: LAB_S
            + floor_s(campaign)
            + count as f64 * (per_run + RUN_OVERHEAD_S)
            + latency_runs as f64 * latency_run,
        at_most: true,
        caveat: format!(
            "a run ends once every comparison is within ± {} % (after {} blocks of \
             {:.0} s), or after {} s of traffic",
            alt.precision,
            alt.min_blocks,
            secs(alt.block_duration(entries)),
            secs(alt.max_duration)
        ),
    }
}

/// The plan of a campaign of trials: one per key, a throughput search as long as it may last.
fn trials_plan(campaign: &Campaign, reason: String) -> Plan {
    let keys = plan(campaign);
    let search = campaign.search();
    let searches = |k: &&TrialKey| {
        !k.is_profiling()
            && (campaign.profiles.iter())
                .any(|p| p.name == k.profile && p.measure == Measure::Throughput)
    };
    let trial_s = secs(campaign.trial.duration) + TRIAL_OVERHEAD_S;
    // A search with latency adds a trial per `[latency] loads`.
    let latency_trials = |k: &TrialKey| {
        let probed =
            (campaign.profiles.iter()).any(|p| p.name == k.profile && p.latency(&campaign.trial));
        if probed {
            campaign.latency().loads.len()
        } else {
            0
        }
    };
    let seconds: f64 = (keys.iter())
        .map(|k| match searches(&k) {
            true => search.search_duration_max + latency_trials(k) as f64 * trial_s,
            false => trial_s,
        })
        .sum();
    let reboots = campaign.versions.iter().any(|v| !v.reboot.is_empty());
    let mut caveat =
        "each trial the machine disturbs is measured once more, up to twice as long".to_string();
    let searching = keys.iter().any(|k| searches(&k));
    if searching {
        caveat = format!(
            "a throughput search stops at its search_duration_max, {} s, and most end \
             far sooner; {caveat}",
            search.search_duration_max
        );
    }
    if reboots {
        caveat.push_str("; plus each version's install, reboot and wait to go online");
    }
    Plan {
        design: Design::Trials,
        reason,
        count: keys.len(),
        unit: "trials".into(),
        wall_s: LAB_S + floor_s(campaign) + seconds,
        at_most: searching,
        caveat,
    }
}

/// What the report of `campaign` will lack, said before anything is measured: a trials
/// campaign of fewer iterations than ministat takes has every series without statistics, which
/// `benchlab run` would otherwise say only once it is over. (The alternating design's
/// iterations are its blocks, which its stopping rule counts.)
pub(crate) fn note(campaign: &Campaign) -> Option<String> {
    let iterations = campaign.iterations;
    let trials = alternating(campaign).is_none();
    (trials && iterations < MIN_POINTS as u32).then(|| {
        format!(
            "{iterations} iteration(s): ministat needs {MIN_POINTS} per series, so the report \
             will have no statistics and compare nothing (iterations = {MIN_POINTS} or more)"
        )
    })
}

/// Seconds of the latency floor's self-test, when the campaign measures latency: its probes
/// and its own lab's making.
fn floor_s(campaign: &Campaign) -> f64 {
    match campaign.measures_latency() {
        true => secs(campaign.latency().floor_duration) + LAB_S,
        false => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Campaign {
        Campaign::from_toml(text, "c.toml", crate::dut::KNOWN_PRESETS).unwrap()
    }

    #[test]
    fn the_default_campaign_is_two_alternating_runs_of_at_most_150_s() {
        let p = plan_of(&Campaign::builtin());
        assert_eq!((p.design, p.count), (Design::Alternating, 2));
        assert!(p.wall_s > 300.0 && p.wall_s < 360.0, "{}", p.wall_s);
        assert!(p.caveat.contains("within ± 1 %"), "{}", p.caveat);
    }

    #[test]
    fn a_trials_campaign_counts_its_trials() {
        let p = plan_of(&load(
            "design = \"trials\"\niterations = 3\nconfig_sets = [\"forwarding\", \"nft-stateful\"]\n",
        ));
        // 3 iterations × 2 sets × 2 profiles of 10 s.
        assert_eq!((p.design, p.count), (Design::Trials, 12));
        assert_eq!(p.wall_s, LAB_S + 12.0 * (10.0 + TRIAL_OVERHEAD_S));
        assert!(!p.at_most);
        assert_eq!(p.reason, "set in the campaign file");
        assert_eq!(note(&load("design = \"trials\"\niterations = 3\n")), None);
        let two = note(&load("design = \"trials\"\niterations = 2\n"));
        assert!(two.unwrap().starts_with("2 iteration(s): ministat needs 3"));
    }
}
