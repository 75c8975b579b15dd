//! The arithmetic under jumpavg's grouping: merging runs' statistics and the bit count of one
//! group. Both follow jumpavg 0.4.2 operation for operation, so that the comparisons of bit counts
//! that choose the groups see the same floating-point values as the reference.

use std::f64::consts::PI;

/// Population statistics of a group of samples (jumpavg's `AvgStdevStats`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Moments {
    /// Number of samples.
    pub(crate) size: u64,
    /// Population average.
    pub(crate) avg: f64,
    /// Population standard deviation.
    pub(crate) stdev: f64,
}

impl Moments {
    /// No samples: what jumpavg returns for an empty sequence.
    pub(crate) const EMPTY: Moments = Moments {
        size: 0,
        avg: 0.0,
        stdev: 0.0,
    };

    /// Merges parts (each a count, an average and a population stdev) in order, by Welford's
    /// update extended to whole parts; parts of no samples are skipped.
    pub(crate) fn merge(parts: impl IntoIterator<Item = Moments>) -> Moments {
        let mut size: u64 = 0;
        let mut avg = 0.0_f64;
        let mut moment_2 = 0.0_f64;
        for part in parts {
            if part.size < 1 {
                continue;
            }
            let old_size = size as f64;
            let part_size = part.size as f64;
            let delta = part.avg - avg;
            size = size.saturating_add(part.size);
            let total = size as f64;
            // The same association as the reference: its rounding decides near ties later.
            avg += delta * part_size / total;
            moment_2 += part.stdev * part.stdev * part_size;
            moment_2 += delta * delta * old_size * part_size / total;
        }
        if size < 1 {
            return Moments::EMPTY;
        }
        Moments {
            size,
            avg,
            stdev: (moment_2 / size as f64).sqrt(),
        }
    }

    /// One sample.
    pub(crate) fn single(value: f64) -> Moments {
        Moments {
            size: 1,
            avg: value,
            stdev: 0.0,
        }
    }
}

/// `log2` as the reference computes it (natural logarithms divided), not `f64::log2`, whose
/// last bit can differ.
fn log2(x: f64) -> f64 {
    x.ln() / 2.0_f64.ln()
}

/// The constants shared by every group of one classification.
#[derive(Debug, Clone, Copy)]
pub(super) struct Scale {
    /// The largest sample of the series (never below 0).
    pub(crate) max_value: f64,
    /// The resolution values are counted in.
    pub(crate) unit: f64,
}

impl Scale {
    /// Bits needed to encode a group's samples given the previous group's average, under the
    /// reference's model: the size with probability 1/(k(k+1)), the average uniform on
    /// [0, max] for the first group or an inverted triangle around the previous average, the
    /// stdev like the size, cut at max, then the samples on the sphere that the average and the
    /// stdev leave them.
    pub(crate) fn bits(&self, group: Moments, prev_avg: Option<f64>) -> f64 {
        let mut bits = 0.0_f64;
        if group.size < 1 {
            // An empty group costs nothing, so empty runs do not change the grouping.
            return bits;
        }
        let size = group.size as f64;
        let max_value = self.max_value / self.unit;
        let avg = group.avg / self.unit;
        bits += log2(size * (size + 1.0));
        match prev_avg {
            None => bits += log2(max_value + 1.0),
            Some(prev) => {
                let prev = prev / self.unit;
                let mut norm = prev * prev;
                norm -= (prev - 1.0) * max_value;
                norm += max_value * max_value / 2.0;
                bits -= log2(((avg - prev).abs() + 1.0) / norm);
            }
        }
        if group.size < 2 {
            return bits;
        }
        let stdev = group.stdev / self.unit;
        bits += log2((stdev + 1.0) * (stdev + 2.0));
        bits += log2(1.0 - 1.0 / (max_value + 2.0));
        let mut sphere_ln = 2.0_f64.ln();
        sphere_ln += PI.ln() * ((size - 1.0) / 2.0);
        sphere_ln -= ln_gamma((size - 1.0) / 2.0);
        sphere_ln += (stdev + 1.0).ln() * (size - 2.0);
        sphere_ln += size.ln() * ((size - 2.0) / 2.0);
        bits + sphere_ln / 2.0_f64.ln()
    }
}

/// ln Γ(x) for x > 0 (here half-integers from 0.5): Stirling's series from 15 up, reached from
/// smaller x by Γ(x+1) = xΓ(x). Absolute error below 1e-14, far inside the comparison's 1e-9.
pub(super) fn ln_gamma(x: f64) -> f64 {
    if x.is_nan() || x <= 0.0 || x.is_infinite() {
        // Not reached from a group of two samples or more; NaN rather than a loop or a panic.
        return if x == f64::INFINITY { x } else { f64::NAN };
    }
    let mut shifted = x;
    let mut product = 1.0_f64;
    while shifted < 15.0 {
        product *= shifted;
        shifted += 1.0;
    }
    let inv = 1.0 / shifted;
    let inv2 = inv * inv;
    // Bernoulli terms B(2k) / (2k (2k-1) x^(2k-1)), k = 1..6.
    let series = inv
        * (1.0 / 12.0
            - inv2
                * (1.0 / 360.0
                    - inv2
                        * (1.0 / 1260.0
                            - inv2
                                * (1.0 / 1680.0
                                    - inv2 * (1.0 / 1188.0 - inv2 * 691.0 / 360360.0)))));
    let stirling = (shifted - 0.5) * shifted.ln() - shifted + 0.5 * (2.0 * PI).ln() + series;
    stirling - product.ln()
}
