//! The lines under a series table that say which of its trials measured something other than
//! the DUT at work: a load that saturated it (after a search, or at `max` and at a fixed rate),
//! the host's stalls, other programs on the lab's CPUs.

use super::share;
use crate::ingest::benchlab::latency::{
    saturation, LatencySeries, Load, ProbeTrial, FULL_QUEUE, OVERLOADED, STALLED,
};
use crate::ingest::benchlab::CROWDED;
use crate::report::latency::load_text;
use crate::report::mean;

/// After a search, the load's % of the NDR and the trials of `s` that had `trouble`; `None`
/// for another load or when none had it.
fn with_trouble<'a>(s: &'a LatencySeries, trouble: &str) -> Option<(u32, Vec<&'a ProbeTrial>)> {
    let Load::Ndr(pct) = s.load else {
        return None;
    };
    let trials: Vec<&ProbeTrial> = (s.trials.iter()).filter(|t| t.had(trouble)).collect();
    (!trials.is_empty()).then_some((pct, trials))
}

/// After a search, a line for a load some of whose trials saturated the DUT (the
/// [`OVERLOADED`] ones: it did not forward the whole load, or its input queue was full);
/// empty when there are none.
pub(super) fn overloaded(s: &LatencySeries) -> String {
    let Some((pct, over)) = with_trouble(s, OVERLOADED) else {
        return String::new();
    };
    // Per cause (load lost, input queue full): the shares of the trials it saturated.
    let (mut lost, mut full) = (Vec::new(), Vec::new());
    for t in &over {
        let [l, f] = saturation(t.load_lost, t.load_dropped);
        lost.extend(l);
        full.extend(f);
    }
    let mean_share = |s: &[f64]| share(mean(s.iter().copied()));
    let mut why = Vec::new();
    if !lost.is_empty() {
        why.push(format!(
            "in {} it did not forward the whole load ({} of it lost)",
            lost.len(),
            mean_share(&lost)
        ));
    }
    if !full.is_empty() {
        why.push(format!(
            "in {} its input queue was full (an interface dropped {} of the load)",
            full.len(),
            mean_share(&full)
        ));
    }
    format!(
        "\nAt {pct} % of the NDR the DUT was saturated in {} of {} trials: {}. {}\n",
        over.len(),
        s.trials.len(),
        why.join("; "),
        saturated_why(s, pct),
    )
}

/// At `max` or a fixed rate, a line for the trials that lost more than [`FULL_QUEUE`] of their
/// load; empty when none did. Such a DUT was saturated, and the probes waited in its full
/// input queue: at `max` (veth's ring alone on the virtual lab) P50 is about the ring's length
/// times the DUT's time per frame, a throughput figure in disguise, not the DUT's latency at
/// work, which a reader of the table would take it for.
pub(super) fn saturating(s: &LatencySeries) -> String {
    let over: Vec<&ProbeTrial> = (s.trials.iter())
        .filter(|t| t.load_lost.is_some_and(|lost| lost > FULL_QUEUE))
        .collect();
    if over.is_empty() || !matches!(s.load, Load::Max | Load::Offered) {
        return String::new();
    }
    let lost: Vec<f64> = over.iter().filter_map(|t| t.load_lost).collect();
    let lost = share(mean(lost.iter().copied()));
    // The probes of those trials: a refused probe is not sent again, unlike the load.
    let (sent, probes_lost) = (over.iter().filter_map(|t| t.established.probes))
        .fold((0, 0), |(sent, lost), p| (sent + p.sent, lost + p.lost));
    let probes = match sent {
        0 => String::new(),
        _ => format!(
            " ({} of the probes lost with it)",
            share(probes_lost as f64 / sent as f64)
        ),
    };
    let (n, of) = (over.len(), s.trials.len());
    match s.load {
        Load::Max => format!(
            "\nAt max the generator keeps the DUT saturated: in {n} of {of} trials it did not \
             forward {lost} of the load{probes}, and the probes waited in its full input queue. \
             Their latency is that queue's (its length times the DUT's time per frame), not the \
             DUT's at work: for that, a fixed `rate` below what it forwards, or the loads after \
             a throughput search (`[latency] loads`).\n"
        ),
        _ => format!(
            "\nAt {} the DUT was saturated in {n} of {of} trials: it did not forward {lost} of \
             the load{probes}. Their latency is that of its full input queue, not of the DUT at \
             that load.\n",
            load_text(s)
        ),
    }
}

/// Why a load at `pct` % of the NDR saturated the DUT: its NDR was itself forwarded with the
/// input queue full ([`ProbeTrial::ndr_dropped`]: the searches' trials there dropped more than
/// [`FULL_QUEUE`] of their load, on average), or else the DUT slowed since the search.
fn saturated_why(s: &LatencySeries, pct: u32) -> String {
    let at_ndr: Vec<f64> = s.trials.iter().filter_map(|t| t.ndr_dropped).collect();
    let refused = mean(at_ndr.iter().copied());
    match refused > FULL_QUEUE {
        true => format!(
            "The searches' trials at the NDR had the DUT's input queue full as well (an \
             interface dropped {} of their load, sent again): the NDR is a rate the DUT \
             forwards saturated, and a steady load at {pct} % of it was at or past the knee \
             where a standing queue forms, whose length follows the machine's speed. Their \
             latency is that of a saturated DUT, not of {pct} % of its capacity.",
            share(refused)
        ),
        false => format!(
            "It forwarded less than during the search, so their latency is that of a \
             saturated DUT, not of {pct} % of its NDR."
        ),
    }
}

/// After a search, a line for a load some of whose trials had their input queue filled by the
/// host taking the DUT's CPU away (the [`STALLED`] ones); empty when there are none.
pub(super) fn stalled(s: &LatencySeries) -> String {
    let Some((pct, stalled)) = with_trouble(s, STALLED) else {
        return String::new();
    };
    let longest = (stalled.iter().filter_map(|t| t.longest_stall_ms)).fold(0.0, f64::max);
    let dropped: Vec<f64> = stalled.iter().filter_map(|t| t.load_dropped).collect();
    format!(
        "\nAt {pct} % of the NDR the host took the DUT's CPU away in {} of {} trials, for up to \
         {longest:.0} ms, longer than its input queue holds at that load (an interface dropped \
         {} of the load, no more than arrived meanwhile). The load did not saturate the DUT; the \
         probes of those stretches waited for the machine, and those trials count as disturbed \
         in the comparisons.\n",
        stalled.len(),
        s.trials.len(),
        share(mean(dropped.iter().copied())),
    )
}

/// A line for the trials of a table during which other programs took the lab's CPUs (the
/// [`CROWDED`] ones), after a search naming their loads; empty when there are none.
pub(super) fn crowded(rows: &[&LatencySeries]) -> String {
    let is_crowded = |t: &&ProbeTrial| t.had(CROWDED);
    let crowded: Vec<&ProbeTrial> = rows
        .iter()
        .flat_map(|s| &s.trials)
        .filter(is_crowded)
        .collect();
    if crowded.is_empty() {
        return String::new();
    }
    let of: usize = rows.iter().map(|s| s.trials.len()).sum();
    let most = (crowded.iter().filter_map(|t| t.others_share)).fold(0.0, f64::max);
    let pcts: Vec<String> = (rows.iter())
        .filter(|s| s.trials.iter().any(|t| is_crowded(&t)))
        .filter_map(|s| match s.load {
            Load::Ndr(pct) => Some(pct.to_string()),
            _ => None,
        })
        .collect();
    let after = match pcts.is_empty() {
        true => String::new(),
        false => format!(" after the searches (at {} % of the NDR)", pcts.join(", ")),
    };
    format!(
        "\nOther programs took the lab's CPUs during {} of the {of} trials{after}, up to {} of \
         their time in a trial. The DUT's threads preempt them, but they take the CPUs' caches \
         and delay their wake-ups: those trials measured the machine's other work as much as \
         the DUT, and count as disturbed in the comparisons. Run nothing else while latency is \
         measured.\n",
        crowded.len(),
        share(most),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::latency::ProbeCounts;

    #[test]
    fn a_fixed_load_trial_other_programs_crowded_is_said_under_its_table() {
        let mut series = crate::report::latency::tests::one_trial(&[0; 4]);
        assert_eq!(crowded(&[&series]), "");
        series.trials[0].troubles = vec![CROWDED.into()];
        series.trials[0].others_share = Some(0.057);
        let line = crowded(&[&series]);
        let said = "\nOther programs took the lab's CPUs during 1 of the 1 trials, up to 5.7 % of \
                    their time in a trial.";
        assert!(line.starts_with(said), "{line}");
    }

    #[test]
    fn a_load_that_saturated_the_dut_at_max_or_a_fixed_rate_is_said_under_its_table() {
        let mut series = crate::report::latency::tests::one_trial(&[0; 4]);
        // A fixed load forwarded whole (or nearly): nothing to say.
        series.trials[0].load_lost = Some(0.0001);
        assert_eq!(saturating(&series), "");
        series.trials[0].load_lost = Some(0.142);
        series.trials[0].established.probes = Some(ProbeCounts {
            sent: 1000,
            received: 674,
            lost: 326,
            ..ProbeCounts::default()
        });
        // A trial that forwarded its load: not counted, its probes neither.
        let mut whole = series.trials[0].clone();
        (whole.load_lost, whole.established.probes) = (Some(0.0), Some(ProbeCounts::default()));
        whole.established.probes.as_mut().unwrap().sent = 1000;
        series.trials.push(whole);
        let line = saturating(&series);
        let said = "\nAt 100 Kpps the DUT was saturated in 1 of 2 trials: it did not forward \
                    14.2 % of the load (32.6 % of the probes lost with it). Their latency is \
                    that of its full input queue";
        assert!(line.starts_with(said), "{line}");
        series.load = Load::Max;
        let line = saturating(&series);
        assert!(
            line.starts_with("\nAt max the generator keeps the DUT saturated: in 1 of 2 trials"),
            "{line}"
        );
        // After a search, `overloaded` says it, with its own evidence.
        series.load = Load::Ndr(90);
        assert_eq!(saturating(&series), "");
    }
}
