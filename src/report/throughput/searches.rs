//! One row per search: what the DUT forwarded saturated at the search's start and end, each
//! goal's conditional throughput, the trials, the invalid ones, those that lost packets and
//! of them those the DUT's CPU stalls account for (the machine's loss), and the trials that
//! lost packets at loads the DUT forwards — how the machine's noise showed in that search.

use std::collections::BTreeMap;

use crate::ingest::benchlab::throughput::SearchRun;
use crate::store::{Saturated, SearchTrial, CROWDED_SHARE};
use crate::units::format_pps;

/// What the machine's noise did to one search: the trials at or below its lowest relevant lower
/// bound (loads the DUT forwards without loss in most trials) that still lost packets.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Disturbed {
    /// Valid trials at such loads (the warm-up left out).
    pub(crate) trials: usize,
    /// Those of them that lost packets.
    pub(crate) lossy: usize,
    /// Median of their lost packets.
    pub(crate) median_lost: u64,
    /// The watched interface that dropped most of them, when the receiver watched any.
    pub(crate) at: Option<String>,
    /// Those of them whose loss the DUT's CPU stalls account for (the machine's loss:
    /// [`crate::lab::stall`]); `None` when the lab did not watch the DUT's CPU.
    pub(crate) stalled: Option<usize>,
}

/// Where a trial's late frames were lost ([`SearchTrial::late`]), as a place among the
/// interfaces that dropped frames.
const LATE: &str = "the DUT's backlog beyond its input ring when the traffic stopped";

/// The trials of `run` at or below its lowest relevant lower bound, and those that lost
/// packets; `None` without a result or a lower bound.
pub(crate) fn disturbed(run: &SearchRun) -> Option<Disturbed> {
    let result = run.record.result.as_ref()?;
    let bound = (result.goals.iter())
        .filter_map(|g| g.relevant_lower_bound)
        .reduce(f64::min)?;
    let below: Vec<&SearchTrial> = (run.record.paired_trials())
        .filter(|(t, _)| t.valid && !t.warmup && t.load <= bound)
        .map(|(_, lab)| lab)
        .collect();
    let lossy: Vec<&&SearchTrial> = (below.iter()).filter(|t| t.sent > t.received).collect();
    let watched = below.iter().any(|t| t.dut_cpu.is_some());
    let stalled = watched.then(|| lossy.iter().filter(|t| t.lost_to_stalls()).count());
    let mut lost: Vec<u64> = (lossy.iter()).map(|t| t.sent - t.received).collect();
    lost.sort_unstable();
    let mut drops: BTreeMap<&str, u64> = BTreeMap::new();
    for (iface, n) in below.iter().flat_map(|t| &t.drops) {
        *drops.entry(iface).or_default() += n;
    }
    let late: u64 = below.iter().map(|t| t.late).sum();
    if late > 0 {
        *drops.entry(LATE).or_default() += late;
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
        stalled,
    })
}

/// "K of N lossy": of the trials `run` counted that lost packets, those its DUT's CPU stalls
/// account for; "–" when the lab did not watch the DUT's CPU.
fn lost_to_stalls(run: &SearchRun) -> String {
    let counted: Vec<&SearchTrial> = (run.record.paired_trials())
        .filter(|(t, _)| t.valid && !t.warmup)
        .map(|(_, lab)| lab)
        .collect();
    if counted.iter().all(|t| t.dut_cpu.is_none()) {
        return "–".into();
    }
    let lossy = counted.iter().filter(|t| t.sent > t.received);
    let stalled = lossy.clone().filter(|t| t.lost_to_stalls()).count();
    format!("{stalled} of {} lossy", lossy.count())
}

/// "S % (K of N over T %)": the share of the lab's CPUs' time that other programs took over
/// the trials of `run`, and the trials they took more than [`CROWDED_SHARE`] of; "–" unwatched.
fn crowded(run: &SearchRun) -> String {
    run.record.crowded().map_or("–".into(), |c| {
        let over = CROWDED_SHARE * 100.0;
        format!(
            "{:.1} % ({} of {} over {over:.0} %)",
            c.share * 100.0,
            c.trials,
            c.of
        )
    })
}

/// "K of N (P packets, at IF; S to the DUT's CPU stalls)": the search's [`disturbed`] trials;
/// "–" without a lower bound.
fn lossy(run: &SearchRun) -> String {
    disturbed(run).map_or_else(
        || "–".to_string(),
        |d| {
            let at = d.at.map(|a| format!(", at {a}")).unwrap_or_default();
            let stalled = (d.stalled)
                .map(|k| format!("; {k} to the DUT's CPU stalls"))
                .unwrap_or_default();
            match d.lossy {
                0 => format!("0 of {}", d.trials),
                n => format!(
                    "{n} of {} ({} packets{at}{stalled})",
                    d.trials, d.median_lost
                ),
            }
        },
    )
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
pub(crate) fn markdown(runs: &[SearchRun]) -> String {
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
         and where they were dropped (on the virtual lab: the DUT's input queue, whose size \
         the setup's \"Virtual lab\" line gives, or its backlog beyond its input ring when \
         the traffic stopped: the DUT was still behind), and on the \
         virtual lab how many of them the DUT's CPU stalls account for (a watch on the DUT's \
         CPU sees the hypervisor take it away for milliseconds; one stall outlasted what the \
         queue holds at the load, and no more was lost than arrived during them: the \
         machine's loss, not the DUT's). Such a \
         trial is \
         bad for a zero-loss goal; with an exceed ratio of {exceed} a load stays a lower bound as long \
         as no more than {share:.0} % of its trial seconds are bad, so they cost trials rather \
         than move the bound.\n\n\
         Lost to stalls: of the trials the search counted that lost packets, those the DUT's \
         CPU stalls account for (virtual lab). Crowded: the share of the lab's CPUs' time (the \
         DUT's, the generators', the probes'; virtual lab) that other programs took over the \
         search's trials, and the trials they took more than {crowded:.0} % of: the DUT's \
         threads preempt them, but they take the CPUs' caches and delay their wake-ups, so a \
         search they took more than {crowded:.0} % of has bounds that are the machine's other \
         work as much as the DUT's, and counts as disturbed in the comparisons.\n\n\
         | search | max load | saturated: start | end | {} | trials | invalid | lost to stalls | \
         crowded | lossy trials | wall s |\n|---|---|---|---|{}---|---|---|---|---|---|\n",
        names.join(" | "),
        "---|".repeat(names.len()),
        share = 100.0 * exceed,
        crowded = 100.0 * CROWDED_SHARE,
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
        let stalled = lost_to_stalls(run);
        let crowded = crowded(run);
        let lossy = lossy(run);
        md.push_str(&format!(
            "| {name} | {} | {} | {} | {} | {} | {invalid} | {stalled} | {crowded} | {lossy} | \
             {:.0} |\n",
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
    use crate::ingest::benchlab::throughput::tests::run;

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
            .take(3)
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
        // A third one leaves a backlog beyond the DUT's input ring as the traffic stops: late
        // frames, the most lost anywhere.
        let t = &mut run.record.trials[below[2]];
        (t.late, t.received) = (2_000, t.received - 2_000);
        let d = disturbed(&run).unwrap();
        assert_eq!((d.lossy, d.median_lost), (3, 500));
        assert_eq!(d.at.as_deref(), Some(LATE));
        let t = &mut run.record.trials[below[2]];
        (t.late, t.received) = (0, t.received + 2_000);
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

    #[test]
    fn lossy_trials_the_dut_cpu_stalls_account_for_are_counted() {
        let mut run = run();
        let bound = run.record.result.as_ref().unwrap().goals[0]
            .relevant_lower_bound
            .unwrap();
        let watch = |longest_ms| crate::lab::stall::CpuStalls {
            cpu: 1,
            wakes: 1000,
            longest_ms,
            stalls_ms: vec![longest_ms],
            steal_ms: 0.0,
            busy_ms: 0.0,
            others: Some(crate::lab::stall::OthersTime {
                ms: 0.0,
                cpus: Vec::new(),
            }),
            queue_frames: 256,
        };
        for t in &mut run.record.trials {
            t.dut_cpu = Some(watch(0.05));
        }
        let below: Vec<usize> = (run.record.trials.iter().enumerate())
            .filter(|(_, t)| t.load <= bound && t.load > 0.9e6)
            .map(|(i, _)| i)
            .take(2)
            .collect();
        assert_eq!(below.len(), 2);
        // Both lose 100 packets; during the first the DUT's CPU was away for 9 ms (at ~1 Mpps
        // its 256-frame queue lasts 0.26 ms, and some 9,000 packets arrived meanwhile), during
        // the second for 0.1 ms (shorter than the queue lasts).
        for (&i, longest_ms) in below.iter().zip([9.0, 0.1]) {
            let t = &mut run.record.trials[i];
            t.received -= 100;
            t.dut_cpu = Some(watch(longest_ms));
        }
        let d = disturbed(&run).unwrap();
        assert_eq!((d.lossy, d.stalled), (2, Some(1)));
        let run_lossy = run.clone();
        let md = markdown(&[run]);
        assert!(
            md.contains("(100 packets; 1 to the DUT's CPU stalls)"),
            "{md}"
        );
        // Of all the lossy trials the search counted (above capacity too), the one.
        let lossy = (run_lossy.record.paired_trials())
            .filter(|(t, lab)| t.valid && !t.warmup && lab.sent > lab.received)
            .count();
        assert!(md.contains(&format!("| 1 of {lossy} lossy |")), "{md}");
        // No other program on the lab's CPUs; then one taking 3 % of every trial.
        let trials = run_lossy.record.trials.len();
        let none = format!("| 0.0 % (0 of {trials} over 1 %) |");
        assert!(md.contains(&none), "{md}");
        let mut shared = run_lossy;
        for t in &mut shared.record.trials {
            let watched = t.dut_cpu.as_mut().unwrap();
            watched.others.as_mut().unwrap().ms = 30.0 * t.duration;
        }
        let md = markdown(&[shared]);
        let all = format!("| 3.0 % ({trials} of {trials} over 1 %) |");
        assert!(md.contains(&all), "{md}");
        // A lab that does not watch the DUT's CPU says nothing of it.
        let mut unwatched = self::run();
        unwatched
            .record
            .trials
            .iter_mut()
            .for_each(|t| t.dut_cpu = None);
        assert_eq!(disturbed(&unwatched).unwrap().stalled, None);
        assert_eq!(crowded(&unwatched), "–");
    }
}
