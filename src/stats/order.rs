//! The balanced order of the alternating design: which config set the DUT runs in each phase
//! (the controller, `campaign::alternating`, follows it through `config::AlternatingPlan`).
//!
//! Traffic runs without a stop while the DUT switches between `k` config sets (index 0 is the
//! baseline). One **block** is one balanced round that yields one value per set; this module
//! says which set each phase of a block runs, so that slow drift and the after-effects of a
//! switch hit every set alike.
//!
//! # Construction
//! Row `r` of the cyclic Williams square on `k` sets is `w(p) + r (mod k)` for positions
//! `p = 0..k`, with `w = 0, 1, k−1, 2, k−2, 3, …` (Williams 1949, *Aust. J. Sci. Res.* 2:149).
//! Block `b` runs a row and then the same row backwards (a *fold*), so every set runs twice per
//! block, at positions `p` and `2k−1−p`. The cycle of `2k` blocks visits rows `0, 1, …, k−1`
//! and then `k−1, …, 1, 0`.
//! For two sets this is ABBA, BAAB, BAAB, ABBA: the Thue–Morse sequence.
//!
//! # Why
//! - **Linear drift cancels inside every block**: each set's two positions average to the
//!   block's centre, so a drift linear in time adds the same amount to every set's block value
//!   (exactly, for a drift added to the rate).
//! - **Quadratic drift cancels over a cycle**: around the block centre a quadratic drift adds
//!   `c·(p − (2k−1)/2)²` to a phase at row position `p`; every set visits every row position once
//!   per `k` blocks, so the sum over a cycle is the same for every set. For two sets,
//!   alternating ABBA with BAAB is what does this (ABBA alone biases B by `−2c` in every block,
//!   BAAB by `+2c`), and the Thue–Morse cycle of 16 phases also cancels cubic drift
//!   (Prouhet–Tarry–Escott).
//! - **First-order carry-over is balanced**: within blocks every ordered pair of distinct sets
//!   is adjacent exactly 4 times per cycle (twice per Williams square, and the fold runs every
//!   pair both ways). The block boundaries of the forward-then-backward cycle join `r` to `r+1`
//!   and `r+1` to `r` once each (plus `0 → 0` and `k−1 → k−1`), so over the sequence every set
//!   precedes the baseline exactly as often as it follows it.
//!
//! The fold puts two phases of the same set next to each other in the middle of a block (and at
//! some block boundaries); the run should switch there too (reload the same set) or at least
//! drop the settle time alike, so that every phase is measured the same way.

use thiserror::Error;

/// Why a balanced order cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum OrderError {
    /// Fewer than two config sets: there is nothing to alternate.
    #[error(
        "the alternating design compares at least 2 config sets, the campaign has {0}; \
         list a baseline and at least one set to compare with it"
    )]
    TooFewSets(usize),
}

/// The balanced order of `k` config sets (index 0 the baseline) over blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BalancedOrder {
    sets: usize,
}

impl BalancedOrder {
    /// The order of `sets` config sets; at least 2.
    pub fn new(sets: usize) -> Result<BalancedOrder, OrderError> {
        if sets < 2 {
            return Err(OrderError::TooFewSets(sets));
        }
        Ok(BalancedOrder { sets })
    }

    /// Number of config sets.
    pub fn sets(self) -> usize {
        self.sets
    }

    /// Phases in one block: every set twice.
    pub fn phases_per_block(self) -> usize {
        Self::phases_for(self.sets)
    }

    /// Phases in one block of `sets` sets (every set twice), whether or not they can alternate.
    pub(crate) const fn phases_for(sets: usize) -> usize {
        2 * sets
    }

    /// Blocks after which the order repeats; the balance properties hold over whole cycles.
    pub(crate) fn cycle_blocks(self) -> usize {
        2 * self.sets
    }

    /// The set of each phase of block `block` (counted from 0 over the whole run).
    pub fn block(self, block: usize) -> Vec<usize> {
        let k = self.sets;
        let i = block % self.cycle_blocks();
        // Forward through the rows, then back, so that block boundaries run both ways.
        let row = if i < k { i } else { 2 * k - 1 - i };
        let forward: Vec<usize> = (0..k).map(|p| (williams(k, p) + row) % k).collect();
        forward
            .iter()
            .chain(forward.iter().rev())
            .copied()
            .collect()
    }
}

/// Position `p` of the Williams square's first row: 0, 1, k−1, 2, k−2, 3, …
fn williams(k: usize, p: usize) -> usize {
    match p {
        0 => 0,
        p if p % 2 == 1 => p.div_ceil(2),
        p => k - p / 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The phases of whole cycles, one after the other.
    fn sequence(order: BalancedOrder, cycles: usize) -> Vec<usize> {
        (0..cycles * order.cycle_blocks())
            .flat_map(|b| order.block(b))
            .collect()
    }

    /// Counts of `from → to` adjacencies over one cycle, read cyclically (the cycle repeats).
    fn adjacency(order: BalancedOrder, within_blocks_only: bool) -> Vec<Vec<usize>> {
        let k = order.sets();
        let mut counts = vec![vec![0; k]; k];
        if within_blocks_only {
            for b in 0..order.cycle_blocks() {
                for pair in order.block(b).windows(2) {
                    counts[pair[0]][pair[1]] += 1;
                }
            }
        } else {
            let seq = sequence(order, 1);
            for i in 0..seq.len() {
                counts[seq[i]][seq[(i + 1) % seq.len()]] += 1;
            }
        }
        counts
    }

    #[test]
    fn two_sets_run_thue_morse() {
        let order = BalancedOrder::new(2).unwrap();
        let text: String = sequence(order, 1)
            .iter()
            .map(|&s| if s == 0 { 'A' } else { 'B' })
            .collect();
        assert_eq!(text, "ABBABAABBAABABBA");
        assert_eq!(order.block(4), order.block(0), "the cycle repeats");
        // Thue–Morse: A and B have equal sums of t, t², t³ over the 16 phases of a cycle.
        let seq = sequence(order, 1);
        for power in 0..=3 {
            let sum = |set: usize| -> f64 {
                (0..16)
                    .filter(|&t| seq[t] == set)
                    .map(|t| (t as f64).powi(power))
                    .sum()
            };
            assert_eq!(sum(0), sum(1), "power {power}");
        }
    }

    #[test]
    fn fewer_than_two_sets_are_refused() {
        assert_eq!(BalancedOrder::new(1), Err(OrderError::TooFewSets(1)));
        assert!(BalancedOrder::new(0).is_err());
    }

    #[test]
    fn every_set_runs_twice_per_block_around_the_centre() {
        for k in 2..=9 {
            let order = BalancedOrder::new(k).unwrap();
            for b in 0..order.cycle_blocks() {
                let block = order.block(b);
                assert_eq!(block.len(), order.phases_per_block());
                for set in 0..k {
                    let positions: Vec<usize> =
                        (0..block.len()).filter(|&p| block[p] == set).collect();
                    assert_eq!(positions.len(), 2, "k={k} block {b} set {set}");
                    // Symmetric around the centre: a linear drift averages out in the block.
                    assert_eq!(positions[0] + positions[1], 2 * k - 1, "k={k} block {b}");
                }
            }
        }
    }

    #[test]
    fn every_set_visits_every_row_position_once_per_half_cycle() {
        for k in 2..=9 {
            let order = BalancedOrder::new(k).unwrap();
            for p in 0..k {
                let mut seen: Vec<usize> = (0..k).map(|b| order.block(b)[p]).collect();
                seen.sort_unstable();
                assert_eq!(seen, (0..k).collect::<Vec<_>>(), "k={k} position {p}");
            }
        }
    }

    #[test]
    fn carry_over_is_balanced_within_blocks() {
        for k in 2..=9 {
            let counts = adjacency(BalancedOrder::new(k).unwrap(), true);
            for (i, row) in counts.iter().enumerate() {
                for (j, &n) in row.iter().enumerate() {
                    if i != j {
                        assert_eq!(n, 4, "k={k}: {i} → {j}");
                    }
                }
            }
        }
    }

    #[test]
    fn every_set_precedes_the_baseline_as_often_as_it_follows_it() {
        for k in 2..=9 {
            let counts = adjacency(BalancedOrder::new(k).unwrap(), false);
            for (i, row) in counts.iter().enumerate() {
                for (j, &n) in row.iter().enumerate() {
                    assert_eq!(n, counts[j][i], "k={k}: {i} → {j}");
                }
            }
            for (set, &n) in counts[0].iter().enumerate().skip(1) {
                assert!(n >= 4, "k={k}: set {set} next to the baseline");
            }
        }
    }

    /// Per block of one cycle, each set's mean drift minus the baseline's.
    fn drift_bias(order: BalancedOrder, drift: impl Fn(f64) -> f64) -> Vec<Vec<f64>> {
        let per_block = order.phases_per_block();
        (0..order.cycle_blocks())
            .map(|b| {
                let block = order.block(b);
                let mean = |set: usize| {
                    let values: Vec<f64> = (0..per_block)
                        .filter(|&p| block[p] == set)
                        .map(|p| drift((b * per_block + p) as f64))
                        .collect();
                    values.iter().sum::<f64>() / values.len() as f64
                };
                (0..order.sets()).map(|set| mean(set) - mean(0)).collect()
            })
            .collect()
    }

    #[test]
    fn linear_drift_cancels_in_every_block_and_quadratic_drift_over_a_cycle() {
        for k in 2..=7 {
            let order = BalancedOrder::new(k).unwrap();
            for (b, bias) in drift_bias(order, |t| 2.0 + 0.01 * t).iter().enumerate() {
                assert!(
                    bias.iter().all(|x| x.abs() < 1e-12),
                    "k={k} block {b}: {bias:?}"
                );
            }
            let quadratic = drift_bias(order, |t| 3.0 * t * t - 0.5 * t);
            for set in 1..k {
                let total: f64 = quadratic.iter().map(|bias| bias[set]).sum();
                assert!(
                    total.abs() < 1e-6,
                    "k={k} set {set}: quadratic drift bias {total}"
                );
            }
        }
        // ABBA alone would keep a quadratic bias: the alternation with BAAB is what removes it.
        let abba: f64 = (0..4)
            .map(|b| {
                let t = |p: f64| (4.0 * b as f64 + p).powi(2);
                (t(1.0) + t(2.0)) / 2.0 - (t(0.0) + t(3.0)) / 2.0
            })
            .sum();
        assert_eq!(abba, -8.0);
    }
}
