//! Student's t test of two datasets' means, as ministat's `Relative` computes and prints it.
//!
//! Ported from FreeBSD ministat (`usr.bin/ministat/ministat.c`, Poul-Henning Kamp, beerware
//! licence: "as long as you retain this notice you can do whatever you want with this stuff").
//! The test assumes equal variances (pooled s); the difference is significant when it exceeds
//! its confidence half-interval.

use std::fmt;

use serde::Serialize;

use super::cfmt::fmt_g;
use super::student::Confidence;
use super::summary::{c_sqrt, sse_add, sse_div, sse_sub, Flavor, Summary};

/// A dataset compared with the reference dataset (ministat's first).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct Comparison {
    /// Difference of the means, other − reference.
    pub(crate) difference: f64,
    /// Half-width of the difference's confidence interval: t · s_pooled · √(1/n₀ + 1/n₁).
    pub(crate) difference_ci: f64,
    /// The difference in percent of the reference mean.
    pub(crate) relative_pct: f64,
    /// Half-width of the relative difference's interval, in percent (formula by [`Flavor`]).
    pub(crate) relative_ci_pct: f64,
    /// Pooled standard deviation √(((n₁−1)·Var₁ + (n₀−1)·Var₀) / (n₀+n₁−2)).
    pub(crate) pooled_s: f64,
    /// Whether |difference| > difference_ci: "Difference at …" rather than "No difference proven".
    pub(crate) significant: bool,
    /// The confidence level of the intervals.
    pub(crate) confidence: Confidence,
}

/// Compares `other` with `reference` at `confidence`, as ministat does for each dataset after
/// the first (Student's t with n₀+n₁−2 degrees of freedom, pooled variance).
pub(crate) fn compare(
    reference: &Summary,
    other: &Summary,
    confidence: Confidence,
    flavor: Flavor,
) -> Comparison {
    let (n0, n1) = (reference.n, other.n);
    let df = (n0 + n1).saturating_sub(2);
    let t = confidence.student_t(df);
    let (v0, v1) = (reference.variance, other.variance);
    let (a0, a1) = (reference.mean, other.mean);
    let (n0f, n1f) = (n0 as f64, n1 as f64);
    // Operand order as in Debian's binary where two NaNs can meet.
    let pooled_s = c_sqrt(sse_add(v0 * (n0f - 1.0), v1 * (n1f - 1.0)) / df as f64);
    let s = pooled_s * (1.0 / n1f + 1.0 / n0f).sqrt();
    let difference = sse_sub(a1, a0);
    let difference_ci = t * s;
    let relative_ci = match flavor {
        Flavor::Legacy => difference_ci,
        Flavor::Current | Flavor::Accurate => {
            let mut re = (n1f - 1.0) * v1 + (n0f - 1.0) * v0 * (a1 * a1) / (a0 * a0);
            re *= (n1 + n0) as f64 / ((n1 * n0) as f64 * (n1f + n0f - 2.0));
            t * c_sqrt(re)
        }
    };
    Comparison {
        difference,
        difference_ci,
        relative_pct: sse_div(difference * 100.0, a0),
        relative_ci_pct: sse_div(relative_ci * 100.0, a0),
        pooled_s,
        significant: difference.abs() > difference_ci,
        confidence,
    }
}

impl fmt::Display for Comparison {
    /// ministat's result lines, each ending with a newline: "Difference at 95.0% confidence",
    /// `\t%g +/- %g`, `\t%g%% +/- %g%%`, `\t(Student's t, pooled s = %g)`; or the single line
    /// "No difference proven at 95.0% confidence".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.significant {
            writeln!(f, "Difference at {} confidence", self.confidence)?;
            writeln!(
                f,
                "\t{} +/- {}",
                fmt_g(self.difference, 6),
                fmt_g(self.difference_ci, 6)
            )?;
            writeln!(
                f,
                "\t{}% +/- {}%",
                fmt_g(self.relative_pct, 6),
                fmt_g(self.relative_ci_pct, 6)
            )?;
            writeln!(f, "\t(Student's t, pooled s = {})", fmt_g(self.pooled_s, 6))
        } else {
            writeln!(f, "No difference proven at {} confidence", self.confidence)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summaries(flavor: Flavor) -> (Summary, Summary) {
        (
            Summary::of(&[0.1, 0.1, 0.1], flavor),
            Summary::of(&[1.0, 2.0, 3.0, 4.0], flavor),
        )
    }

    #[test]
    fn legacy_like_debian_ministat() {
        // `ministat a b` with a = 0.1 0.1 0.1 and b = 1 2 3 4 (Debian 20150715).
        let (a, b) = summaries(Flavor::Legacy);
        let c = compare(&a, &b, Confidence::P95, Flavor::Legacy);
        assert_eq!(
            c.to_string(),
            "Difference at 95.0% confidence\n\t2.4 +/- 1.96363\n\t2400% +/- 1963.63%\n\
             \t(Student's t, pooled s = 1)\n"
        );
    }

    #[test]
    fn current_relative_interval_propagates_both_variances() {
        let a = Summary::of(&[100.0, 102.0, 98.0, 101.0, 99.0], Flavor::Current);
        let b = Summary::of(&[110.0, 113.0, 108.0, 111.0, 109.0], Flavor::Current);
        let c = compare(&a, &b, Confidence::P95, Flavor::Current);
        let t = 2.306;
        let re = t
            * ((4.0 * b.variance + 4.0 * a.variance * b.mean * b.mean / (a.mean * a.mean)) * 10.0
                / (25.0 * 8.0))
                .sqrt();
        assert!((c.relative_ci_pct - re * 100.0 / a.mean).abs() < 1e-12);
        let legacy = compare(&a, &b, Confidence::P95, Flavor::Legacy);
        assert_eq!(
            legacy.relative_ci_pct,
            legacy.difference_ci * 100.0 / a.mean
        );
        assert_eq!(c.difference_ci, legacy.difference_ci);
        assert!(c.significant);
        assert!((c.relative_pct - 10.2).abs() < 1e-9);
    }

    #[test]
    fn no_difference() {
        let a = Summary::of(&[1.0, 2.0, 3.0, 5.0], Flavor::Legacy);
        let b = Summary::of(&[1.0, 2.0, 3.0, 4.0], Flavor::Legacy);
        let c = compare(&a, &b, Confidence::P95, Flavor::Legacy);
        assert!(!c.significant);
        assert_eq!(c.to_string(), "No difference proven at 95.0% confidence\n");
        let c = compare(&a, &b, Confidence::P99_5, Flavor::Legacy);
        assert_eq!(c.to_string(), "No difference proven at 99.5% confidence\n");
    }
}
