//! Phase values of the alternating design: one number per phase from the receiver's short
//! windows.
//!
//! The receiver samples its cumulative counter every 0.1 s or finer; each interval between two
//! consecutive samples is one **short window** whose rate is Δpackets / Δt. A phase keeps the
//! windows that lie wholly between its switch time plus the settle time and its end, so a window
//! that straddles a switch is never used, and reduces them to one value with an [`Estimator`].
//! Disturbance on a shared machine only ever lowers throughput, so an upper quantile of the
//! windows (p75, p90) estimates the undisturbed rate of a phase more steadily than the mean.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// One reading of the receiver's cumulative counter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CounterSample {
    /// Seconds since the start of the run.
    pub t_s: f64,
    /// Packets received since the start of the receiver (cumulative).
    pub rx_pkts: u64,
}

/// One phase as the run recorded it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhaseSpan {
    /// Index of the config set that ran (0 is the baseline).
    pub set: usize,
    /// Seconds since the start of the run at which the switch to this set was verified.
    pub switched_s: f64,
    /// Seconds since the start of the run at which the next switch began (the phase's end).
    pub end_s: f64,
}

/// How a phase's short-window rates become one value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Estimator {
    /// Arithmetic mean of the window rates.
    Mean,
    /// Median of the window rates (the 0.5 quantile).
    Median,
    /// Quantile `q` (0..=1) of the window rates, linearly interpolated between order statistics
    /// (Hyndman & Fan 1996, type 7, R's default): `Quantile(0.9)` is `p90`.
    Quantile(f64),
}

/// Text that does not name an estimator.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error(
    "unknown phase estimator '{0}': use mean, median or pNN (an upper quantile such as p75 or p90)"
)]
pub struct EstimatorParseError(String);

impl FromStr for Estimator {
    type Err = EstimatorParseError;

    /// `mean`, `median`, or `pNN` with NN in 1..=100 (`p75`, `p90`, `p100` the maximum).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let fail = || EstimatorParseError(s.to_string());
        match s {
            "mean" => Ok(Estimator::Mean),
            "median" => Ok(Estimator::Median),
            _ => {
                let percent: u32 = s
                    .strip_prefix('p')
                    .ok_or_else(fail)?
                    .parse()
                    .map_err(|_| fail())?;
                if (1..=100).contains(&percent) {
                    Ok(Estimator::Quantile(f64::from(percent) / 100.0))
                } else {
                    Err(fail())
                }
            }
        }
    }
}

impl fmt::Display for Estimator {
    /// The name [`FromStr`] reads back: `mean`, `median`, `p90`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Estimator::Mean => f.write_str("mean"),
            Estimator::Median => f.write_str("median"),
            Estimator::Quantile(q) => write!(f, "p{}", (q * 100.0).round()),
        }
    }
}

/// Written as its name (`p90`), as a campaign file gives it.
impl serde::Serialize for Estimator {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Read from its name through [`FromStr`]: an unknown one is refused where it is read.
impl<'de> serde::Deserialize<'de> for Estimator {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = <String as serde::Deserialize>::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

impl Estimator {
    /// The estimate of `values` (unsorted), or `None` when there are none.
    pub(crate) fn of(self, values: &[f64]) -> Option<f64> {
        if values.is_empty() {
            return None;
        }
        match self {
            Estimator::Mean => Some(values.iter().sum::<f64>() / values.len() as f64),
            Estimator::Median => Some(quantile(values, 0.5)),
            Estimator::Quantile(q) => Some(quantile(values, q.clamp(0.0, 1.0))),
        }
    }
}

/// Type-7 quantile of a non-empty slice.
fn quantile(values: &[f64], q: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let h = (sorted.len() - 1) as f64 * q;
    // h is within 0..=len-1, so both indices are in range.
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// How phases are reduced to values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhaseOptions {
    /// Seconds dropped after each switch before windows count. Default is 0.2.
    pub settle_s: f64,
    /// The per-phase estimator. Default is `p90`.
    pub estimator: Estimator,
    /// Fewest windows a phase needs for a value; fewer leave it without one. Default is 4.
    pub min_windows: usize,
    /// Shortest window, seconds: a sample taken late is followed by one taken at once, and a
    /// counter read a millisecond after the previous one has not moved (the kernel counts in
    /// batches), so consecutive intervals are joined until they last this long. Default is 0.
    pub min_window_s: f64,
}

impl Default for PhaseOptions {
    fn default() -> Self {
        PhaseOptions {
            settle_s: 0.1,
            estimator: Estimator::Quantile(0.9),
            min_windows: 4,
            min_window_s: 0.0,
        }
    }
}

/// Options that cannot describe a phase reduction.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum PhaseError {
    /// The settle time is negative or not a number.
    #[error("settle time {0} s is not a duration: give a settle time of 0 s or more")]
    Settle(f64),
    /// The quantile is outside 0..=1.
    #[error("phase estimator quantile {0} is outside 0..=1: use p1 to p100")]
    Quantile(f64),
    /// A counter sample's time is not a number or goes backwards.
    #[error("receiver sample {index} at t = {t_s} s is not after the previous one: samples must be in time order")]
    Unordered {
        /// Index of the sample in the series.
        index: usize,
        /// Its time in seconds.
        t_s: f64,
    },
}

/// One phase's value and how it was made.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhaseValue {
    /// The phase as scheduled.
    pub(crate) span: PhaseSpan,
    /// Short windows kept (after the settle time, wholly inside the phase, counter not reset).
    pub(crate) windows: usize,
    /// Windows inside the kept span refused because the counter went backwards (a reset).
    pub(crate) rejected: usize,
    /// The estimator's value in packets per second, or `None` when fewer than
    /// [`PhaseOptions::min_windows`] windows were kept: the phase must not be used.
    pub(crate) value: Option<f64>,
}

/// The short windows that lie wholly inside `from_s..=to_s` as (end time, rate in pps), each
/// window joining consecutive intervals until it lasts `min_window_s`, and how many were
/// refused because the counter went backwards. `samples` must be in time order.
pub fn window_rates(
    samples: &[CounterSample],
    (from_s, to_s): (f64, f64),
    min_window_s: f64,
) -> (Vec<(f64, f64)>, usize) {
    let first = samples.partition_point(|s| s.t_s < from_s);
    let mut rates = Vec::new();
    let mut rejected = 0;
    let mut start = match samples.get(first) {
        Some(s) => *s,
        None => return (rates, rejected),
    };
    for &b in &samples[first + 1..] {
        if b.t_s > to_s {
            break;
        }
        if b.t_s - start.t_s < min_window_s || b.t_s <= start.t_s {
            continue;
        }
        match b.rx_pkts.checked_sub(start.rx_pkts) {
            Some(packets) => rates.push((b.t_s, packets as f64 / (b.t_s - start.t_s))),
            None => rejected += 1,
        }
        start = b;
    }
    (rates, rejected)
}

/// The value of every phase of `phases` from the receiver's `samples` (in time order).
pub fn phase_values(
    samples: &[CounterSample],
    phases: &[PhaseSpan],
    options: &PhaseOptions,
) -> Result<Vec<PhaseValue>, PhaseError> {
    if !(options.settle_s >= 0.0 && options.settle_s.is_finite()) {
        return Err(PhaseError::Settle(options.settle_s));
    }
    if let Estimator::Quantile(q) = options.estimator {
        if !(0.0..=1.0).contains(&q) {
            return Err(PhaseError::Quantile(q));
        }
    }
    // Strictly increasing times make every window's Δt positive (and rule out NaN).
    for (index, pair) in samples.windows(2).enumerate() {
        if pair[1].t_s.partial_cmp(&pair[0].t_s) != Some(std::cmp::Ordering::Greater) {
            let t_s = pair[1].t_s;
            return Err(PhaseError::Unordered {
                index: index + 1,
                t_s,
            });
        }
    }
    Ok(phases
        .iter()
        .map(|&span| {
            let (windows, rejected) = window_rates(
                samples,
                (span.switched_s + options.settle_s, span.end_s),
                options.min_window_s,
            );
            let rates: Vec<f64> = windows.iter().map(|w| w.1).collect();
            let value = if rates.len() >= options.min_windows.max(1) {
                options.estimator.of(&rates)
            } else {
                None
            };
            PhaseValue {
                span,
                windows: rates.len(),
                rejected,
                value,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples every 0.1 s of a counter whose rate is `rate(t)` (pps) over each interval.
    fn counter(seconds: f64, rate: impl Fn(f64) -> f64) -> Vec<CounterSample> {
        let mut total = 0.0;
        let steps = (seconds * 10.0).round() as usize;
        let mut samples = vec![CounterSample {
            t_s: 0.0,
            rx_pkts: 0,
        }];
        for i in 1..=steps {
            let t = i as f64 / 10.0;
            total += rate(t - 0.05) * 0.1;
            samples.push(CounterSample {
                t_s: t,
                rx_pkts: total.round() as u64,
            });
        }
        samples
    }

    #[test]
    fn estimators_by_hand() {
        let v = [4.0, 1.0, 3.0, 2.0, 10.0];
        assert_eq!(Estimator::Mean.of(&v), Some(4.0));
        assert_eq!(Estimator::Median.of(&v), Some(3.0));
        // type 7: h = 4 × 0.75 = 3 → the 4th smallest; p90: h = 3.6 → 4 + 0.6 × (10 − 4).
        assert_eq!(Estimator::Quantile(0.75).of(&v), Some(4.0));
        assert!((Estimator::Quantile(0.9).of(&v).unwrap() - 7.6).abs() < 1e-12);
        assert_eq!(Estimator::Median.of(&[1.0, 2.0]), Some(1.5));
        assert_eq!(Estimator::Mean.of(&[]), None);
    }

    #[test]
    fn estimator_names_round_trip() {
        for name in ["mean", "median", "p75", "p90", "p100"] {
            assert_eq!(name.parse::<Estimator>().unwrap().to_string(), name);
        }
        for bad in ["p0", "p101", "q90", "p", "P90", ""] {
            let err = bad.parse::<Estimator>().unwrap_err();
            assert!(err.to_string().contains("use mean, median or pNN"), "{bad}");
        }
    }

    #[test]
    fn settle_time_and_switch_straddling_windows_are_dropped() {
        // Set 0 at 1000 pps until 1.0 s, set 1 at 500 pps after; a dip right after the switch.
        let samples = counter(2.0, |t| match t {
            t if t < 1.0 => 1000.0,
            t if t < 1.2 => 100.0,
            _ => 500.0,
        });
        let phases = [
            PhaseSpan {
                set: 0,
                switched_s: 0.0,
                end_s: 1.0,
            },
            PhaseSpan {
                set: 1,
                switched_s: 1.0,
                end_s: 2.0,
            },
        ];
        let options = PhaseOptions {
            settle_s: 0.2,
            estimator: Estimator::Mean,
            min_windows: 4,
            min_window_s: 0.0,
        };
        let values = phase_values(&samples, &phases, &options).unwrap();
        // 0.2..1.0 holds 8 windows, 1.2..2.0 holds 8: the dip is inside the settle time.
        assert_eq!(values[0].windows, 8);
        assert_eq!(values[1].windows, 8);
        assert!((values[0].value.unwrap() - 1000.0).abs() < 1e-6);
        assert!((values[1].value.unwrap() - 500.0).abs() < 1e-6);
        // A phase end between two samples: the window across it belongs to no phase.
        let phases = [PhaseSpan {
            set: 0,
            switched_s: 0.0,
            end_s: 0.95,
        }];
        assert_eq!(
            phase_values(&samples, &phases, &options).unwrap()[0].windows,
            7
        );
    }

    #[test]
    fn a_phase_with_too_few_windows_has_no_value() {
        let samples = counter(1.0, |_| 1000.0);
        let phases = [PhaseSpan {
            set: 1,
            switched_s: 0.6,
            end_s: 1.0,
        }];
        let options = PhaseOptions::default();
        let value = phase_values(&samples, &phases, &options).unwrap()[0];
        assert_eq!((value.windows, value.value), (3, None));
    }

    #[test]
    fn a_counter_reset_is_refused_not_used() {
        let mut samples = counter(1.0, |_| 1000.0);
        for s in &mut samples[6..] {
            s.rx_pkts -= 600;
        }
        let phases = [PhaseSpan {
            set: 0,
            switched_s: 0.0,
            end_s: 1.0,
        }];
        let options = PhaseOptions {
            settle_s: 0.0,
            ..PhaseOptions::default()
        };
        let value = phase_values(&samples, &phases, &options).unwrap()[0];
        assert_eq!((value.windows, value.rejected), (9, 1));
        assert!((value.value.unwrap() - 1000.0).abs() < 1e-6);
    }

    #[test]
    fn bad_options_and_unordered_samples_are_errors() {
        let samples = counter(1.0, |_| 1000.0);
        let bad_settle = PhaseOptions {
            settle_s: f64::NAN,
            ..PhaseOptions::default()
        };
        assert!(phase_values(&samples, &[], &bad_settle).is_err());
        let bad_q = PhaseOptions {
            estimator: Estimator::Quantile(1.5),
            ..PhaseOptions::default()
        };
        assert_eq!(
            phase_values(&samples, &[], &bad_q),
            Err(PhaseError::Quantile(1.5))
        );
        let mut unordered = samples.clone();
        unordered[3].t_s = 0.1;
        let err = phase_values(&unordered, &[], &PhaseOptions::default()).unwrap_err();
        assert_eq!(err, PhaseError::Unordered { index: 3, t_s: 0.1 });
        assert!(err.to_string().contains("receiver sample 3 at t = 0.1 s"));
    }
}
