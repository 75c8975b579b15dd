//! When a trials-design verdict is not to be believed (issue 37): a difference ministat proves
//! between two series of trials is called unreliable when the machine visibly disturbed their
//! trials, or when the trials measured side by side (the same iteration, one after the other
//! under the interleaved order) do not show it; a latency difference also when the two series'
//! trials ran with the virtual lab's CPUs at different distances ([`APART_RATIO`]).
//!
//! [`APART_RATIO`]: crate::stats::doubt::APART_RATIO
//!
//! Why both: a shared machine's speed moves between levels for seconds to minutes, so a series
//! whose trials fell in a slow stretch looks slower as a whole, and Student's t test, which
//! takes the trials as independent, calls it a difference. The trial checks see part of that
//! (a trial whose seconds varied by over 10 %, a sender slowed with the DUT, a trial measured
//! twice); the pairs see the rest: under interleaved order iteration `i` of both series ran
//! within seconds of each other, at one speed level most of the time, and a real difference
//! shows in every pair. The thresholds were set from A/A campaigns of the trials design on the
//! project's 2-vCPU VM (two or four identical versions, `benches/design.sh`, README
//! "Two measurement designs").

use super::{Confidence, PairedEstimate};

/// A comparison is unreliable when at least this share of either series' trials were
/// disturbed (flagged unsteady, slowed or unsaturated, or measured twice).
pub(crate) const DISTURBED_SHARE: f64 = 0.5;

/// What the doubt rule needs of one trial.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TrialValue<'a> {
    /// The iteration: trials of two series with the same one ran side by side.
    pub(crate) index: u32,
    /// The trial's figure (median receive rate).
    pub(crate) value: f64,
    /// What disturbed it, one short word each (`unsteady`, `measured twice`); empty when
    /// nothing did.
    pub(crate) troubles: &'a [String],
    /// How far apart the probes' CPU and the DUT's were (a latency trial on the virtual lab:
    /// its median round trip, ns, [`crate::lab::distance`]); `None` where not watched.
    pub(crate) apart_ns: Option<u32>,
}

/// Two series whose trials' CPUs were, at the median, more than this many times as far apart
/// as each other's were measured in different states of the machine (on the project's VM,
/// 100–140 ns against 180–210 ns), which moves the latency by as much as a DUT change.
pub(crate) const APART_RATIO: f64 = 1.25;

/// Whether two round trips between the CPUs, ns, are of one distance: within [`APART_RATIO`]
/// of each other.
pub(crate) fn same_distance(a: u32, b: u32) -> bool {
    f64::from(a.max(b)) <= APART_RATIO * f64::from(a.min(b))
}

/// A series of trials by its name in the report.
pub(crate) type Named<'n, 't> = (&'n str, &'n [TrialValue<'t>]);

/// Why a significant difference of `other` against `reference`, of `change_pct`, is not to be
/// believed; `None` when nothing speaks against it.
pub(crate) fn doubt(
    reference: Named<'_, '_>,
    other: Named<'_, '_>,
    change_pct: f64,
) -> Option<String> {
    for (name, trials) in [other, reference] {
        let disturbed = trials.iter().filter(|t| !t.troubles.is_empty()).count();
        if !trials.is_empty() && disturbed as f64 >= DISTURBED_SHARE * trials.len() as f64 {
            return Some(troubles(name, trials, disturbed));
        }
    }
    if let (Some(r), Some(o)) = (median_apart(reference.1), median_apart(other.1)) {
        if !same_distance(r, o) {
            return Some(format!(
                "{}'s trials ran with the CPUs {r} ns apart, {}'s {o} ns (median round trips): \
                 the host moved the vCPUs between them",
                reference.0, other.0
            ));
        }
    }
    let pairs = side_by_side(reference.1, other.1)?;
    let agrees = pairs.is_significant() && (pairs.change_pct > 0.0) == (change_pct > 0.0);
    (!agrees).then(|| {
        format!(
            "the trials measured side by side say {} ({} pairs): the series drifted apart \
             over the run",
            pairs.change(),
            pairs.blocks
        )
    })
}

/// The median of the trials' CPU round trips, ns; `None` when none was watched.
fn median_apart(trials: &[TrialValue<'_>]) -> Option<u32> {
    super::upper_median(trials.iter().filter_map(|t| t.apart_ns).collect())
}

/// The paired estimate over the iterations both series have (log ratios, Student's t at
/// 95 %); `None` with fewer than 3 such pairs, too few to say anything.
fn side_by_side(reference: &[TrialValue<'_>], other: &[TrialValue<'_>]) -> Option<PairedEstimate> {
    let ratios: Vec<f64> = (other.iter())
        .filter_map(|o| {
            let r = reference.iter().find(|r| r.index == o.index)?;
            Some((o.value / r.value).ln())
        })
        .collect();
    if ratios.len() < 3 {
        return None;
    }
    let confidence = Confidence::default();
    PairedEstimate::from_log_ratios(&ratios, |df| confidence.student_t(df), confidence.percent())
}

/// `4 of 5 acct-on trials unsteady`, or `4 of 5 acct-on trials disturbed (3 unsteady, 2
/// measured twice)`.
fn troubles(name: &str, trials: &[TrialValue<'_>], disturbed: usize) -> String {
    let mut kinds: Vec<(&str, usize)> = Vec::new();
    for kind in trials.iter().flat_map(|t| t.troubles) {
        match kinds.iter_mut().find(|(k, _)| k == kind) {
            Some((_, n)) => *n += 1,
            None => kinds.push((kind, 1)),
        }
    }
    let of = format!("{disturbed} of {} {name} trials", trials.len());
    match kinds.as_slice() {
        [(kind, _)] => format!("{of} {kind}"),
        _ => {
            let words: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
            format!("{of} disturbed ({})", words.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trials<'a>(values: &[f64], troubles: &'a [String]) -> Vec<TrialValue<'a>> {
        (values.iter().enumerate())
            .map(|(i, &value)| TrialValue {
                index: i as u32 + 1,
                value,
                troubles,
                apart_ns: None,
            })
            .collect()
    }

    #[test]
    fn a_difference_every_pair_shows_on_calm_trials_stands() {
        let a = trials(&[100.0, 104.0, 98.0, 101.0, 103.0], &[]);
        let b = trials(&[90.0, 94.0, 88.5, 91.0, 92.5], &[]);
        assert_eq!(doubt(("a", &a), ("b", &b), -10.0), None);
    }

    #[test]
    fn a_series_mostly_disturbed_spoils_it() {
        let unsteady = ["unsteady".to_string()];
        let a = trials(&[100.0, 104.0, 98.0, 101.0, 103.0], &[]);
        let mut b = trials(&[90.0, 94.0, 88.5, 91.0, 92.5], &unsteady);
        b[4].troubles = &[];
        assert_eq!(
            doubt(("a", &a), ("acct-on", &b), -10.0).unwrap(),
            "4 of 5 acct-on trials unsteady"
        );
        let both = ["unsteady".to_string(), "measured twice".to_string()];
        let mut c = trials(&[90.0, 94.0, 88.5, 91.0, 92.5], &both);
        c[3].troubles = &unsteady;
        c[4].troubles = &[];
        assert_eq!(
            doubt(("a", &a), ("c", &c), -10.0).unwrap(),
            "4 of 5 c trials disturbed (4 unsteady, 3 measured twice)"
        );
        // Two of five is not enough alone: the pairs still agree.
        c[2].troubles = &[];
        c[3].troubles = &[];
        assert_eq!(doubt(("a", &a), ("c", &c), -10.0), None);
    }

    #[test]
    fn pairs_that_disagree_spoil_it() {
        // The second series is slower only in the last two pairs: the machine slowed down.
        let a = trials(&[100.0, 101.0, 99.0, 100.0, 100.0], &[]);
        let b = trials(&[101.0, 100.0, 99.5, 80.0, 82.0], &[]);
        let why = doubt(("a", &a), ("b", &b), -7.7).unwrap();
        assert!(why.contains("5 pairs): the series drifted apart"), "{why}");
        // Too few pairs to say anything.
        assert_eq!(doubt(("a", &a[..2]), ("b", &b[..2]), -7.7), None);
    }

    #[test]
    fn trials_at_different_cpu_distances_spoil_it() {
        let a = trials(&[3.2, 3.3, 3.1], &[]);
        let mut b = trials(&[4.9, 5.0, 4.8], &[]);
        let apart = |t: &mut [TrialValue<'_>], ns: [u32; 3]| {
            t.iter_mut()
                .zip(ns)
                .for_each(|(t, ns)| t.apart_ns = Some(ns));
        };
        apart(&mut b, [190, 200, 120]);
        // Only one side watched: nothing to compare.
        assert_eq!(doubt(("a", &a), ("b", &b), 53.0), None);
        let mut near = a.clone();
        apart(&mut near, [120, 130, 190]);
        assert_eq!(
            doubt(("a", &near), ("b", &b), 53.0).unwrap(),
            "a's trials ran with the CPUs 130 ns apart, b's 190 ns (median round trips): the \
             host moved the vCPUs between them"
        );
        // Within 1.25 times: one state.
        apart(&mut near, [160, 170, 190]);
        assert_eq!(doubt(("a", &near), ("b", &b), 53.0), None);
    }
}
