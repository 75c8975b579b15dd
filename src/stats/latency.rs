//! One-way latency as an HDR histogram: nanoseconds, 3 significant digits, its summary
//! (P50, P90, P99, P99.9, max, mean) and the probes' counts.
//!
//! Why HdrHistogram: its buckets keep every value within 0.1 % (3 significant digits) over the
//! whole range, from the floor's microseconds to a queue's milliseconds, in a fixed 216 KB; and
//! its V2 log ([`log`](crate::stats::latency::log)) is a format other tools read (HdrHistogram's Java, C, Python ports,
//! HistogramLogAnalyzer).

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// The HdrHistogram V2 interval log: written, and read back with a corrupt file refused.
pub mod log;

/// Significant digits the histograms keep: every value within 0.1 % of the one reported.
pub const SIGNIFICANT_DIGITS: u8 = 3;

/// The largest latency tracked, in ns (60 s); a larger one is recorded as this (a probe that
/// late has been lost for any purpose, and the histogram stays bounded).
pub(crate) const HIGHEST_NS: u64 = 60_000_000_000;

/// A latency distribution in nanoseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Latency {
    hist: Histogram<u64>,
}

impl Default for Latency {
    fn default() -> Self {
        Latency::new()
    }
}

impl Latency {
    /// An empty distribution: 1 ns to [`HIGHEST_NS`], [`SIGNIFICANT_DIGITS`] digits.
    pub(crate) fn new() -> Latency {
        // The bounds are constants the crate accepts: this cannot fail.
        let hist = Histogram::new_with_bounds(1, HIGHEST_NS, SIGNIFICANT_DIGITS)
            .expect("constant histogram bounds are valid");
        Latency { hist }
    }

    /// Wraps a histogram read from a log (its own bounds and digits, whatever wrote it).
    pub(crate) fn from_histogram(hist: Histogram<u64>) -> Latency {
        Latency { hist }
    }

    /// The histogram itself, for the log writer and for exporters.
    pub fn histogram(&self) -> &Histogram<u64> {
        &self.hist
    }

    /// Records one latency; past [`HIGHEST_NS`] it counts as [`HIGHEST_NS`].
    pub(crate) fn record(&mut self, ns: u64) {
        self.hist.saturating_record(ns);
    }

    /// Adds `other`'s values (a histogram read from a log may have other bounds): a value past
    /// this one's range counts at its top, as [`record`](Self::record) counts it.
    pub(crate) fn add(&mut self, other: &Latency) {
        if self.hist.add(&other.hist).is_err() {
            // The addition refuses a value past the range before changing anything.
            for v in other.hist.iter_recorded() {
                (self.hist).saturating_record_n(v.value_iterated_to(), v.count_at_value());
            }
        }
    }

    /// Number of values recorded.
    pub fn len(&self) -> u64 {
        self.hist.len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.hist.is_empty()
    }

    /// The value at `quantile` (0–1), in ns: the highest value equivalent to it within the
    /// histogram's precision (HdrHistogram's convention).
    pub fn quantile(&self, quantile: f64) -> u64 {
        self.hist.value_at_quantile(quantile)
    }

    /// P50, P90, P99, P99.9, max and mean; `None` when nothing was recorded.
    pub(crate) fn percentiles(&self) -> Option<Percentiles> {
        if self.is_empty() {
            return None;
        }
        Some(Percentiles {
            samples: self.len(),
            p50_ns: self.quantile(0.50),
            p90_ns: self.quantile(0.90),
            p99_ns: self.quantile(0.99),
            p999_ns: self.quantile(0.999),
            max_ns: self.hist.max(),
            mean_ns: self.hist.mean(),
        })
    }

    /// The largest relative error a recorded value can carry from the bucketing: over the
    /// buckets that hold a value, (bucket width − 1) / bucket start. 0 when every value sits in
    /// a bucket of 1 ns (integers are exact), at most 1/1024 ≈ 0.098 % with 3 digits.
    pub fn quantisation(&self) -> f64 {
        self.hist
            .iter_recorded()
            .map(|v| {
                let value = v.value_iterated_to();
                let low = self.hist.lowest_equivalent(value).max(1);
                let width = self.hist.equivalent_range(value);
                width.saturating_sub(1) as f64 / low as f64
            })
            .fold(0.0, f64::max)
    }
}

/// A latency distribution's summary, in ns.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    /// Values recorded.
    pub samples: u64,
    /// Median.
    pub p50_ns: u64,
    /// 90th percentile.
    pub p90_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// 99.9th percentile.
    pub p999_ns: u64,
    /// Largest value (within the histogram's precision).
    pub max_ns: u64,
    /// Mean.
    pub mean_ns: f64,
}

/// What became of the probes, from their sequence numbers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeCounts {
    /// Probes handed to the interface.
    pub sent: u64,
    /// Distinct probes that arrived.
    pub received: u64,
    /// Sent and never arrived (by the time the receiver stopped).
    pub lost: u64,
    /// Arrivals of a probe that had arrived already.
    pub duplicates: u64,
    /// Probes that arrived after one sent later than them (RFC 4737's reordered packets).
    pub reordered: u64,
    /// Probes whose arrival time preceded their stamp: the clock was stepped between the two.
    /// Counted, never recorded in the histogram.
    pub clock_steps: u64,
}

/// A latency measurement's figures: its distribution's summary and the probes' counts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// P50…max of the one-way latency; `None` when no probe arrived.
    pub latency: Option<Percentiles>,
    /// What became of the probes.
    pub probes: ProbeCounts,
}

impl LatencySummary {
    /// The summary of `latency` with `probes`.
    pub(crate) fn new(latency: &Latency, probes: ProbeCounts) -> LatencySummary {
        LatencySummary {
            latency: latency.percentiles(),
            probes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_a_known_distribution() {
        let mut l = Latency::new();
        assert_eq!(l.percentiles(), None);
        for ns in 1..=10_000u64 {
            l.record(ns * 10);
        }
        let p = l.percentiles().unwrap();
        assert_eq!(p.samples, 10_000);
        // Within 0.1 % of the exact order statistics.
        for (got, want) in [
            (p.p50_ns, 50_000.0),
            (p.p90_ns, 90_000.0),
            (p.p99_ns, 99_000.0),
            (p.p999_ns, 99_900.0),
            (p.max_ns, 100_000.0),
        ] {
            assert!((got as f64 - want).abs() / want <= 0.001, "{got} vs {want}");
        }
        assert!((p.mean_ns - 50_005.0).abs() / 50_005.0 <= 0.001);
    }

    #[test]
    fn quantisation_is_within_three_digits() {
        let mut l = Latency::new();
        l.record(500);
        // Below 2048 ns every bucket is 1 ns wide: exact.
        assert_eq!(l.quantisation(), 0.0);
        for ns in [3_000, 45_678, 1_234_567, 98_765_432] {
            l.record(ns);
        }
        let q = l.quantisation();
        assert!(q > 0.0 && q <= 0.001, "{q}");
    }

    #[test]
    fn histograms_add_up_whatever_their_bounds() {
        let mut a = Latency::new();
        (1..=100).for_each(|ns| a.record(ns * 1000));
        let mut wide = Histogram::new_with_bounds(1, u64::MAX, 2).unwrap();
        wide.record(u64::MAX / 2).unwrap();
        wide.record(5_000).unwrap();
        a.add(&Latency::from_histogram(wide));
        a.add(&Latency::new());
        assert_eq!(a.len(), 102);
        assert!(a.quantile(1.0) >= HIGHEST_NS && a.quantile(1.0) < 2 * HIGHEST_NS);
        let mut b = Latency::new();
        b.add(&a);
        assert_eq!(b, a);
    }

    #[test]
    fn huge_values_saturate() {
        let mut a = Latency::new();
        a.record(u64::MAX);
        assert_eq!(a.len(), 1);
        assert!(a.quantile(1.0) >= HIGHEST_NS);
    }
}
