//! Latency by the CPUs' distance: the virtual lab's probes cross from one CPU to another, and
//! on a VM the host moves those CPUs nearer or further apart for seconds to minutes, which
//! moves light-load latency by a microsecond or more ([`crate::lab::distance`]). Each second of
//! a trial at a settled distance has its round trip; the campaign's seconds fall into levels,
//! and each series' P50 is given per level, which moves far less from run to run than the P50
//! over all seconds at light loads (BENCHMARKS.md, `benches/latency.sh load`).
//!
//! Levels: the seconds' round trips sorted, a level starts at the lowest not yet placed and
//! holds every one up to [`APART_RATIO`] times it; a level with less than [`SHOWN_SHARE`] of the
//! seconds (a state the machine passed through) is not shown.
//!
//! [`APART_RATIO`]: crate::stats::doubt::APART_RATIO
//! [`SHOWN_SHARE`]: crate::report::latency::distance::SHOWN_SHARE

use crate::ingest::benchlab::latency::{LatencySeries, ProbeTrial};
use crate::stats::doubt::same_distance;
use crate::stats::upper_median;

/// A level holding less than this share of the campaign's seconds is not shown.
pub(crate) const SHOWN_SHARE: f64 = 0.1;

/// One level of the CPUs' distance: the round trips of the seconds it holds, ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Level {
    /// The shortest.
    pub(crate) low_ns: u32,
    /// The longest.
    pub(crate) high_ns: u32,
}

/// A series' P50 at one level: the median of its seconds' P50s there, and how many seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AtLevel {
    /// The median of the seconds' P50s, ns.
    pub(crate) p50_ns: u64,
    /// Seconds at that level.
    pub(crate) seconds: usize,
}

/// Each measured second of trial `t` at a settled distance: its round trip, and the second's
/// established probes' P50. Settled: the second and the one before it each read one distance,
/// the same within [`APART_RATIO`](crate::stats::doubt::APART_RATIO); a second just after the
/// host moved the vCPUs is left out, as its P50 is of neither state (measured on the project's
/// VM, BENCHMARKS.md: four runs' P50s at one level disagreed by more than 10 % at 10 of 16
/// series-levels with such seconds, at 7 without).
fn trial_seconds(t: &ProbeTrial) -> impl Iterator<Item = (u32, u64)> + Clone + '_ {
    (t.established.seconds.iter()).filter_map(|&(start, p50)| {
        let i = start.as_secs_f64().round() as usize;
        let reading = |i: usize| t.apart_by_second.get(i).copied().flatten();
        let (now, before) = (reading(i)?, reading(i.checked_sub(1)?)?);
        same_distance(now, before).then_some((now, p50))
    })
}

/// The same of every trial of `s`.
fn seconds(s: &LatencySeries) -> impl Iterator<Item = (u32, u64)> + Clone + '_ {
    s.trials.iter().flat_map(trial_seconds)
}

/// The shown levels of `series`' seconds, nearest first; none when no second had a round
/// trip.
pub(crate) fn levels<'a>(series: impl Iterator<Item = &'a LatencySeries>) -> Vec<Level> {
    let mut ns: Vec<u32> = series.flat_map(|s| seconds(s).map(|(ns, _)| ns)).collect();
    ns.sort_unstable();
    let mut levels: Vec<(Level, usize)> = Vec::new();
    let mut rest = ns.as_slice();
    while let Some(&low) = rest.first() {
        let n = rest.partition_point(|&x| same_distance(low, x));
        let level = Level {
            low_ns: low,
            high_ns: rest[n - 1],
        };
        levels.push((level, n));
        rest = &rest[n..];
    }
    (levels.into_iter())
        .filter(|(_, n)| *n as f64 >= SHOWN_SHARE * ns.len() as f64)
        .map(|(level, _)| level)
        .collect()
}

/// How many of `s`'s measured seconds have a round trip.
pub(crate) fn timed_seconds(s: &LatencySeries) -> usize {
    seconds(s).count()
}

/// `s`'s P50 at each of `levels`; `None` at a level none of its seconds fell in.
pub(crate) fn at_levels(s: &LatencySeries, levels: &[Level]) -> Vec<Option<AtLevel>> {
    at(seconds(s), levels)
}

/// Trial `t`'s P50 at each of `levels`, as [`at_levels`].
pub(crate) fn trial_at_levels(t: &ProbeTrial, levels: &[Level]) -> Vec<Option<AtLevel>> {
    at(trial_seconds(t), levels)
}

/// The P50 of `seconds` at each of `levels`.
fn at(seconds: impl Iterator<Item = (u32, u64)> + Clone, levels: &[Level]) -> Vec<Option<AtLevel>> {
    levels
        .iter()
        .map(|l| {
            let p50s: Vec<u64> = (seconds.clone())
                .filter(|&(ns, _)| (l.low_ns..=l.high_ns).contains(&ns))
                .map(|(_, p50)| p50)
                .collect();
            let seconds = p50s.len();
            Some(AtLevel {
                p50_ns: upper_median(p50s)?,
                seconds,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::benchlab::latency::{Load, ProbeKind};
    use crate::stats::latency::Latency;
    use std::time::Duration;

    /// A series of one trial per `(round trip, P50)` list, one second each.
    fn series(trials: &[&[(Option<u32>, u64)]]) -> LatencySeries {
        LatencySeries {
            name: "v.c.p".into(),
            version: "v".into(),
            config: "c".into(),
            profile: "p".into(),
            load: Load::Ndr(10),
            probe_rate_pps: 10_000,
            trials: (trials.iter().enumerate())
                .map(|(i, seconds)| ProbeTrial {
                    iteration: i as u32 + 1,
                    load_pps: 1e5,
                    load_lost: Some(0.0),
                    load_dropped: Some(0.0),
                    ndr_dropped: None,
                    established: ProbeKind {
                        window: None,
                        seconds: (seconds.iter().enumerate())
                            .map(|(s, &(_, p50))| (Duration::from_secs(s as u64), p50))
                            .collect(),
                        probes: None,
                        in_dut: None,
                        in_dut_seconds: Vec::new(),
                    },
                    first_packet: None,
                    troubles: Vec::new(),
                    longest_stall_ms: None,
                    others_share: None,
                    cpu_round_trip_ns: None,
                    apart_by_second: seconds.iter().map(|&(ns, _)| ns).collect(),
                })
                .collect(),
            established: Latency::new(),
            first_packet: None,
            in_dut: None,
            first_packet_in_dut: None,
        }
    }

    #[test]
    fn seconds_fall_into_levels_and_each_level_has_its_p50() {
        let pairs = |ns: [u32; 5], p50: [u64; 5]| -> Vec<(Option<u32>, u64)> {
            ns.map(Some).into_iter().zip(p50).collect()
        };
        let near = pairs([200, 210, 190, 200, 205], [3200, 3300, 3100, 3200, 3250]);
        let far = pairs([410, 400, 420, 410, 405], [5000, 4900, 5100, 5000, 4950]);
        // Each trial's first second has none before it, so it is left out. In the third, the
        // host moves the vCPUs twice: the second just after each move is left out, and one
        // settled second falls between the two levels; one second has no round trip.
        let mixed = [
            (Some(200), 3250),
            (Some(210), 3260),
            (Some(300), 4000),
            (Some(310), 4100),
            (None, 9999),
            (Some(410), 5050),
            (Some(400), 5060),
        ];
        let s = series(&[&near, &far, &mixed]);
        assert_eq!(levels([&series(&[])].into_iter()), vec![]);
        let shown = levels([&s].into_iter());
        assert_eq!(
            shown,
            [
                Level {
                    low_ns: 190,
                    high_ns: 210
                },
                Level {
                    low_ns: 400,
                    high_ns: 420
                }
            ]
        );
        // The settled second at 310 ns is in no shown level: 10 of the 11 are placed.
        let placed: usize = (at_levels(&s, &shown).iter().flatten())
            .map(|a| a.seconds)
            .sum();
        assert_eq!(timed_seconds(&s) - placed, 1);
        assert_eq!(
            at_levels(&s, &shown),
            [
                Some(AtLevel {
                    p50_ns: 3250,
                    seconds: 5
                }),
                Some(AtLevel {
                    p50_ns: 5000,
                    seconds: 5
                })
            ]
        );
        let only_near = series(&[&near]);
        assert_eq!(at_levels(&only_near, &shown)[1], None);
        let third = trial_at_levels(&s.trials[2], &shown);
        let third: Vec<_> = third
            .iter()
            .map(|a| a.map(|a| (a.p50_ns, a.seconds)))
            .collect();
        assert_eq!(third, [Some((3260, 1)), Some((5060, 1))]);
    }
}
