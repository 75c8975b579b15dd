//! One dataset's vitals as ministat computes them: N, min, max, median, mean, standard deviation.
//!
//! Ported from FreeBSD ministat (`usr.bin/ministat/ministat.c`, Poul-Henning Kamp, beerware
//! licence: "as long as you retain this notice you can do whatever you want with this stuff").
//! Every operation is done in ministat's order, so the printed digits match to the last one.

use serde::Serialize;

use super::cfmt::push_g;

/// Which ministat to reproduce: they differ in the median of an even count, the relative
/// confidence interval of a comparison, and a negative rounding residue in the variance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Flavor {
    /// Current FreeBSD ministat: the median of an even count is the mean of the two middle
    /// values; the relative interval propagates both variances; a variance that rounding makes
    /// negative is 0.
    #[default]
    Current,
    /// Debian's ministat 20150715 (FreeBSD's before 2017): the upper middle value is the median,
    /// the relative interval is the absolute one divided by the reference mean, and a negative
    /// variance gives a `-nan` standard deviation.
    Legacy,
    /// Current FreeBSD ministat with an accurately computed variance: the standard deviation
    /// is the exactly rounded sample standard deviation (two passes, double-double), as some
    /// archived tables show it (62.114411 where the one-pass sums give 62.11431).
    Accurate,
}

impl Flavor {
    /// Every flavour, the default first.
    pub(crate) const ALL: [Flavor; 3] = [Flavor::Current, Flavor::Legacy, Flavor::Accurate];

    /// Its name on the command line and in `report.toml`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Flavor::Current => "current",
            Flavor::Legacy => "legacy",
            Flavor::Accurate => "accurate",
        }
    }
}

/// A dataset's values sorted as ministat sorts them, with the sums it accumulates in file order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sample {
    sorted: Vec<f64>,
    sum: f64,
    sum_squares: f64,
}

impl Sample {
    /// Takes the values in file order: the sums are accumulated in that order, then the values
    /// are sorted like ministat's `qsort` (stable, `-0` and `0` equal, NaN equal to anything).
    pub(crate) fn new(mut values: Vec<f64>) -> Sample {
        let (mut sum, mut sum_squares) = (0.0, 0.0);
        for &v in &values {
            // Operand order as in Debian's binary: it decides which NaN a sum keeps.
            sum = sse_add(sum, v);
            sum_squares = sse_add(v * v, sum_squares);
        }
        sort_like_qsort(&mut values);
        Sample {
            sorted: values,
            sum,
            sum_squares,
        }
    }

    /// The values, sorted.
    pub(crate) fn sorted(&self) -> &[f64] {
        &self.sorted
    }

    /// The dataset's vitals.
    pub(crate) fn summary(&self, flavor: Flavor) -> Summary {
        let p = &self.sorted;
        let n = p.len();
        let nf = n as f64;
        let median = match (n, flavor) {
            (0, _) => f64::NAN,
            (_, Flavor::Current | Flavor::Accurate) if n % 2 == 0 => {
                (p[n / 2 - 1] + p[n / 2]) / 2.0
            }
            _ => p[n / 2],
        };
        let mut variance = sse_sub(self.sum_squares, self.sum * self.sum / nf) / (nf - 1.0);
        if flavor != Flavor::Legacy && variance < 0.0 {
            variance = 0.0;
        }
        let mut stddev = c_sqrt(variance);
        if flavor == Flavor::Accurate {
            if let Some((v, s)) = super::accurate::variance_and_stddev(p) {
                (variance, stddev) = (v, s);
            }
        }
        Summary {
            n,
            min: p.first().copied().unwrap_or(f64::NAN),
            max: p.last().copied().unwrap_or(f64::NAN),
            median,
            mean: self.sum / nf,
            stddev,
            variance,
        }
    }
}

/// The vitals ministat prints for a dataset (its `Vitals` line).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct Summary {
    /// Number of values.
    pub(crate) n: usize,
    /// Smallest value.
    pub(crate) min: f64,
    /// Largest value.
    pub(crate) max: f64,
    /// Median: the middle value; for an even count the mean of the two middle values
    /// ([`Flavor::Current`]) or the upper one ([`Flavor::Legacy`]).
    pub(crate) median: f64,
    /// Arithmetic mean, Σy / n.
    pub(crate) mean: f64,
    /// Sample standard deviation, √variance.
    pub(crate) stddev: f64,
    /// Sample variance as ministat computes it in one pass: (Σy² − (Σy)²/n) / (n − 1)
    /// ([`Flavor::Accurate`]: two passes, exactly rounded).
    #[serde(skip)]
    pub(crate) variance: f64,
}

impl Summary {
    /// The vitals of `values` given in file order (NaN statistics for an empty slice).
    pub(crate) fn of(values: &[f64], flavor: Flavor) -> Summary {
        Sample::new(values.to_vec()).summary(flavor)
    }

    /// ministat's vitals line without its newline: `x   5       1234567 …` (`%c %3d` then five
    /// `%13.8g`).
    pub(crate) fn vitals_line(&self, symbol: char) -> String {
        let mut line = format!("{symbol} {:>3}", self.n);
        for v in [self.min, self.max, self.median, self.mean, self.stddev] {
            let mut number = String::new();
            push_g(&mut number, v, 8);
            line.push_str(&format!(" {number:>13}"));
        }
        line
    }
}

/// The table header printed above the vitals lines.
pub(crate) const VITALS_HEADER: &str =
    "    N           Min           Max        Median           Avg        Stddev";

// NaN signs show in ministat's output (`nan` or `-nan`) and Rust leaves them unspecified, so
// operations where two NaNs can meet, or where a NaN is born, follow x86-64 SSE explicitly
// (Debian's binary is x86-64 code): the first operand's NaN wins, and an invalid operation
// (inf − inf, √−1) gives the default NaN, whose sign bit is set.

/// The result of `a ∘ b` = `result` as x86-64 SSE gives it, `a` being the first operand.
fn sse(a: f64, b: f64, result: f64) -> f64 {
    if a.is_nan() {
        a
    } else if b.is_nan() {
        b
    } else if result.is_nan() {
        -f64::NAN
    } else {
        result
    }
}

/// `a + b` with x86-64 NaN rules.
pub(crate) fn sse_add(a: f64, b: f64) -> f64 {
    sse(a, b, a + b)
}

/// `a - b` with x86-64 NaN rules.
pub(crate) fn sse_sub(a: f64, b: f64) -> f64 {
    sse(a, b, a - b)
}

/// `a / b` with x86-64 NaN rules.
pub(crate) fn sse_div(a: f64, b: f64) -> f64 {
    sse(a, b, a / b)
}

/// `sqrt` with x86-64 NaN rules: a negative argument gives `-nan`.
pub(crate) fn c_sqrt(x: f64) -> f64 {
    if x < 0.0 {
        -f64::NAN
    } else {
        x.sqrt()
    }
}

/// Sorts as glibc's `qsort` with ministat's comparison (less, greater, else equal). That qsort
/// is a stable merge sort: equal values keep their file order, which shows only for `-0` and
/// `0`, and for NaN, which compares equal to everything and needs the same merge sort.
fn sort_like_qsort(values: &mut [f64]) {
    let (mut nan, mut negative_zero, mut positive_zero) = (false, false, false);
    for &v in values.iter() {
        nan |= v.is_nan();
        if v == 0.0 {
            if v.is_sign_negative() {
                negative_zero = true;
            } else {
                positive_zero = true;
            }
        }
    }
    if nan {
        let mut tmp = vec![0.0; values.len()];
        merge_sort(values, &mut tmp);
        return;
    }
    // Other equal values are identical bits, so a faster unstable sort does, once the zeros'
    // signs are put back in file order.
    let zero_signs: Vec<bool> = if negative_zero && positive_zero {
        values
            .iter()
            .filter(|v| **v == 0.0)
            .map(|v| v.is_sign_negative())
            .collect()
    } else {
        Vec::new()
    };
    values.sort_unstable_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let first_zero = values.partition_point(|v| *v < 0.0);
    for (v, negative) in values[first_zero..].iter_mut().zip(zero_signs) {
        *v = if negative { -0.0 } else { 0.0 };
    }
}

/// glibc's `msort_with_tmp`: top-down, left half of odd lengths shorter, ties to the left.
fn merge_sort(b: &mut [f64], tmp: &mut [f64]) {
    let n = b.len();
    if n <= 1 {
        return;
    }
    let n1 = n / 2;
    merge_sort(&mut b[..n1], tmp);
    merge_sort(&mut b[n1..], tmp);
    let (mut i, mut j, mut k) = (0, n1, 0);
    while i < n1 && j < n {
        // ministat's comparison returns > 0 only for a strictly greater left value.
        if b[i] > b[j] {
            tmp[k] = b[j];
            j += 1;
        } else {
            tmp[k] = b[i];
            i += 1;
        }
        k += 1;
    }
    // What is left of the right half is already in place.
    tmp[k..k + n1 - i].copy_from_slice(&b[i..n1]);
    k += n1 - i;
    b[..k].copy_from_slice(&tmp[..k]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_by_flavor() {
        let even = [4.0, 1.0, 3.0, 2.0];
        assert_eq!(Summary::of(&even, Flavor::Current).median, 2.5);
        assert_eq!(Summary::of(&even, Flavor::Legacy).median, 3.0);
        let odd = [5.0, 1.0, 3.0];
        assert_eq!(Summary::of(&odd, Flavor::Current).median, 3.0);
        assert_eq!(Summary::of(&odd, Flavor::Legacy).median, 3.0);
    }

    #[test]
    fn vitals_like_ministat() {
        // `printf '1\n2\n3\n5\n' | ministat -n`
        let s = Summary::of(&[1.0, 2.0, 3.0, 5.0], Flavor::Legacy);
        assert_eq!(
            s.vitals_line('x'),
            "x   4             1             5             3          2.75     1.7078251"
        );
        assert_eq!((s.n, s.min, s.max, s.mean), (4, 1.0, 5.0, 2.75));
    }

    #[test]
    fn variance_is_one_pass_in_file_order() {
        let values = [0.1, 0.7, 1e8, 0.3];
        let (mut sy, mut syy) = (0.0, 0.0);
        for v in values {
            sy += v;
            syy += v * v;
        }
        let expected = (syy - sy * sy / 4.0) / 3.0;
        assert_eq!(Summary::of(&values, Flavor::Legacy).variance, expected);
    }

    #[test]
    fn negative_variance_residue() {
        // Three equal values that are not binary fractions leave a negative residue: Debian's
        // ministat prints -nan, the current flavor 0.
        let s = Summary::of(&[0.1, 0.1, 0.1], Flavor::Legacy);
        assert!(s.variance < 0.0);
        assert!(s.stddev.is_nan() && s.stddev.is_sign_negative());
        assert!(s.vitals_line('x').ends_with("          -nan"));
        let s = Summary::of(&[0.1, 0.1, 0.1], Flavor::Current);
        assert_eq!((s.variance, s.stddev), (0.0, 0.0));
    }

    #[test]
    fn zeros_keep_file_order() {
        // ministat: `-0 0 5 -0` has min -0 and median -0; `0 -0 5` has min 0 and median -0.
        let s = Summary::of(&[-0.0, 0.0, 5.0, -0.0], Flavor::Legacy);
        assert!(s.min.is_sign_negative() && s.median.is_sign_negative());
        let s = Summary::of(&[0.0, -0.0, 5.0], Flavor::Legacy);
        assert!(s.min.is_sign_positive() && s.median.is_sign_negative());
    }

    #[test]
    fn nan_sorts_like_glibc_merge_sort() {
        // ministat -n on `3 nan 1 2 -nan 0`: min 2, max 0, median 1.
        let s = Summary::of(&[3.0, f64::NAN, 1.0, 2.0, -f64::NAN, 0.0], Flavor::Legacy);
        assert_eq!((s.min, s.max, s.median), (2.0, 0.0, 1.0));
    }

    #[test]
    fn empty_and_single() {
        let s = Summary::of(&[], Flavor::Current);
        assert_eq!(s.n, 0);
        assert!(s.min.is_nan() && s.median.is_nan() && s.mean.is_nan());
        let s = Summary::of(&[7.0], Flavor::Current);
        assert_eq!((s.min, s.median, s.mean), (7.0, 7.0, 7.0));
        assert!(s.stddev.is_nan());
    }
}
