//! The sample variance computed accurately, for the ministat generation whose Stddev is the
//! exactly rounded sample standard deviation ([`Flavor::Accurate`](crate::stats::summary::Flavor::Accurate)).
//!
//! Two passes (mean, then squared deviations) in double-double arithmetic: every sum, product
//! and quotient carries its rounding error in a second `f64`, so the ~106-bit result rounds to
//! the nearest `f64` except within about 2⁻¹⁰⁰ of a tie. The one-pass formula ministat used
//! for years, (Σy² − (Σy)²/n)/(n − 1), loses the low digits to cancellation on large values
//! (62.11431 instead of 62.114411 for five rates near 14.8 Mpps).

/// A double-double: `hi + lo` with `|lo| ≤ ulp(hi)/2`.
#[derive(Debug, Clone, Copy)]
struct Dd {
    hi: f64,
    lo: f64,
}

impl Dd {
    fn new(hi: f64) -> Dd {
        Dd { hi, lo: 0.0 }
    }

    /// Knuth's TwoSum: `a + b` exactly, as a rounded sum and its error.
    fn two_sum(a: f64, b: f64) -> Dd {
        let s = a + b;
        let bb = s - a;
        let e = (a - (s - bb)) + (b - bb);
        Dd { hi: s, lo: e }
    }

    fn add(self, other: Dd) -> Dd {
        let s = Dd::two_sum(self.hi, other.hi);
        let lo = s.lo + self.lo + other.lo;
        Dd::two_sum(s.hi, lo)
    }

    fn mul(self, other: Dd) -> Dd {
        let p = self.hi * other.hi;
        // The fused multiply-add gives the product's rounding error exactly.
        let e = self.hi.mul_add(other.hi, -p) + (self.hi * other.lo + self.lo * other.hi);
        Dd::two_sum(p, e)
    }

    fn div(self, d: f64) -> Dd {
        let q1 = self.hi / d;
        let r = self.add(Dd::new(-q1).mul(Dd::new(d)));
        let q2 = r.hi / d;
        Dd::two_sum(q1, q2)
    }

    fn sqrt(self) -> Dd {
        if self.hi <= 0.0 {
            return Dd::new(self.hi.sqrt());
        }
        // One Newton step from the f64 root doubles its precision.
        let s = self.hi.sqrt();
        let residue = self.add(Dd::new(-s).mul(Dd::new(s)));
        Dd::two_sum(s, residue.hi / (2.0 * s))
    }

    fn value(self) -> f64 {
        self.hi + self.lo
    }
}

/// The sample variance Σ(y − ȳ)²/(n − 1) and its square root, each correctly rounded; `None`
/// when ministat's own formula must decide (fewer than 2 values, or a value not finite, whose
/// NaN sign ministat's output shows).
pub(crate) fn variance_and_stddev(values: &[f64]) -> Option<(f64, f64)> {
    if values.len() < 2 || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let n = values.len() as f64;
    let sum = values.iter().fold(Dd::new(0.0), |s, &v| s.add(Dd::new(v)));
    let mean = sum.div(n);
    let squares = values.iter().fold(Dd::new(0.0), |s, &v| {
        let d = Dd::two_sum(v, -mean.hi).add(Dd::new(-mean.lo));
        s.add(d.mul(d))
    });
    let variance = squares.div(n - 1.0);
    Some((variance.value(), variance.sqrt().value()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stddev_of_the_archived_tables() {
        // The xeon-e5-2650-fbsd13-D27401 archive: r368287D27401v2.inet4 and
        // r368606D27401v3.inet6, whose README says 62.114411 and 91.023074.
        let v2 = [14816964.0, 14817034.0, 14816937.0, 14816922.0, 14816864.0];
        let (_, s) = variance_and_stddev(&v2).unwrap();
        assert_eq!(crate::stats::fmt_g(s, 8), "62.114411");
        let v3 = [14472610.0, 14472736.0, 14472726.0, 14472584.0, 14472528.0];
        let (_, s) = variance_and_stddev(&v3).unwrap();
        assert_eq!(crate::stats::fmt_g(s, 8), "91.023074");
    }

    #[test]
    fn exact_on_small_cases() {
        let (v, s) = variance_and_stddev(&[1.0, 2.0, 3.0, 5.0]).unwrap();
        assert_eq!(v, 35.0 / 12.0);
        assert_eq!(s, (35.0f64 / 12.0).sqrt());
        // Equal values that are not binary fractions: exactly 0, no negative residue.
        assert_eq!(variance_and_stddev(&[0.1, 0.1, 0.1]), Some((0.0, 0.0)));
        assert_eq!(variance_and_stddev(&[1.0]), None);
        assert_eq!(variance_and_stddev(&[1.0, f64::INFINITY]), None);
    }
}
