//! Blocks at the machine's quiet level: the alternating design's answer to a machine that
//! changes speed for minutes at a time.
//!
//! On a shared 2-vCPU VM the whole machine runs at one of a few levels for seconds to minutes
//! (measured, `benches/alternating.sh`: forwarding at 1.12 Mpps for 80 s, then at 0.72 Mpps
//! for 50 s, the sender's own rate falling by the same third). The config sets' costs are not
//! the same at both levels — nft-stateful against forwarding was −37 % at the high level and
//! −31 % at the low one, each within ± 1 % over its own blocks — so a run that mixed the levels
//! gave an interval of ± 3–5 % around whatever mix it happened to get, and three runs
//! disagreed by more than their intervals.
//!
//! Disturbance only subtracts, so the machine's quiet level is its highest one. A comparison
//! keeps the blocks where both of its sets ran at their quiet level: within [`SLOWED_BELOW`]
//! of the set's [`QUIET_QUANTILE`] over the run's blocks (an upper quantile, not the maximum,
//! so that one lucky block does not set the level). The screen looks at the levels of both
//! sets, never at their ratio, so it cannot favour one side: in an A/A comparison a slowed
//! block is left out whichever side it slowed. Blocks left out are counted in the estimate
//! (`11 of 15 blocks`) and their own estimate is reported beside it, so that the cost on a
//! slowed machine is not hidden either.
//!
//! A quiet level is one the machine held: when fewer than [`MIN_QUIET_SHARE`] of the blocks
//! reach it, the upper quantile is the tail of a spread, not a level (measured: with a build
//! running beside the lab, an A/A run's rate wandered between 0.5 and 1.1 Mpps and 12 of 82
//! blocks passed the screen, for ± 6 % against ± 3.7 % over the rest), and every block is kept.

use super::paired::Block;

/// The quantile of a set's block values taken as its quiet level.
pub const QUIET_QUANTILE: f64 = 0.9;
/// A block value below this fraction of its set's quiet level is a slowed one.
pub const SLOWED_BELOW: f64 = 0.9;
/// The smallest share of the blocks at the quiet level for the screen to apply; below it every
/// block is kept.
pub const MIN_QUIET_SHARE: f64 = 1.0 / 3.0;
/// Fewer blocks than this are all kept: the quantile of so few is their maximum, one lucky
/// block (8 is the stopping rule's first look by default; the quantile is then the second
/// highest).
pub const MIN_SCREENED: usize = 8;

/// The per-block log ratios of `set` against the baseline, split into the blocks at the quiet
/// level and the slowed ones; `None` for a set the blocks do not have.
pub fn quiet_split(blocks: &[Block], set: usize) -> Option<(Vec<f64>, Vec<f64>)> {
    let ratios = blocks
        .iter()
        .map(|b| b.log_ratio(set))
        .collect::<Option<Vec<f64>>>()?;
    if blocks.len() < MIN_SCREENED {
        return Some((ratios, Vec::new()));
    }
    let level = |i: usize| quiet_level(blocks.iter().map(|b| b.values()[i]));
    let (base, other) = (level(0), level(set));
    let (mut quiet, mut slowed) = (Vec::new(), Vec::new());
    for (b, ratio) in blocks.iter().zip(ratios) {
        let v = b.values();
        if v[0] >= SLOWED_BELOW * base && v[set] >= SLOWED_BELOW * other {
            quiet.push(ratio);
        } else {
            slowed.push(ratio);
        }
    }
    if (quiet.len() as f64) < MIN_QUIET_SHARE * blocks.len() as f64 {
        let all = blocks.iter().map(|b| b.log_ratio(set));
        return Some((all.collect::<Option<Vec<f64>>>()?, Vec::new()));
    }
    Some((quiet, slowed))
}

/// The [`QUIET_QUANTILE`] of `values` (nearest rank).
fn quiet_level(values: impl Iterator<Item = f64>) -> f64 {
    let mut sorted: Vec<f64> = values.collect();
    sorted.sort_by(f64::total_cmp);
    let rank = (QUIET_QUANTILE * (sorted.len().saturating_sub(1)) as f64).round() as usize;
    sorted.get(rank).copied().unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(base: f64, set: f64) -> Block {
        Block::new(vec![base, set]).unwrap()
    }

    #[test]
    fn blocks_of_a_slowed_machine_are_set_apart() {
        // Six blocks at the quiet level (−20 %), four with the machine a third slower (−16 %).
        let mut blocks: Vec<Block> = (0..6).map(|i| block(1000.0 + i as f64, 800.0)).collect();
        blocks.extend((0..4).map(|_| block(700.0, 588.0)));
        let (quiet, slowed) = quiet_split(&blocks, 1).unwrap();
        assert_eq!((quiet.len(), slowed.len()), (6, 4));
        assert!(slowed.iter().all(|r| (r - (0.84f64).ln()).abs() < 1e-12));
    }

    #[test]
    fn either_side_slowed_leaves_the_block_out() {
        let mut blocks: Vec<Block> = (0..8).map(|_| block(1000.0, 1000.0)).collect();
        blocks.push(block(500.0, 1000.0));
        blocks.push(block(1000.0, 500.0));
        let (quiet, slowed) = quiet_split(&blocks, 1).unwrap();
        assert_eq!((quiet.len(), slowed.len()), (8, 2));
        assert!(quiet.iter().all(|r| *r == 0.0));
    }

    #[test]
    fn one_fast_block_does_not_set_the_level() {
        // Nine blocks at one level and a single one 50 % faster: the level is the nine's.
        let mut blocks: Vec<Block> = (0..9).map(|_| block(700.0, 600.0)).collect();
        blocks.push(block(1050.0, 900.0));
        let (quiet, slowed) = quiet_split(&blocks, 1).unwrap();
        assert_eq!((quiet.len(), slowed.len()), (10, 0));
    }

    #[test]
    fn a_level_few_blocks_reach_is_no_quiet_level() {
        // Two blocks of ten at the top, the rest spread below: all ten kept, in block order.
        let mut blocks = vec![block(1000.0, 1000.0), block(1000.0, 990.0)];
        blocks.extend((0..8).map(|i| block(600.0 + 20.0 * i as f64, 600.0)));
        let (quiet, slowed) = quiet_split(&blocks, 1).unwrap();
        assert_eq!((quiet.len(), slowed.len()), (10, 0));
        assert_eq!(quiet[1], (0.99f64).ln());
    }

    #[test]
    fn few_blocks_are_all_kept_and_a_missing_set_has_no_split() {
        let mut blocks = vec![block(1000.0, 900.0); 6];
        blocks.push(block(500.0, 450.0));
        assert_eq!(quiet_split(&blocks, 1).unwrap().0.len(), 7);
        assert!(quiet_split(&blocks, 2).is_none());
    }
}

#[cfg(test)]
mod lab_tests {
    use super::*;
    use crate::stats::paired::tests::recorded_blocks;

    #[test]
    fn recorded_runs_keep_their_blocks_at_the_high_level() {
        // cost: the machine ran fast for 80 s of 150; cost-slowed: for 30 s of 140, 3 blocks of
        // 13, too few for a level: all kept.
        let fast = recorded_blocks(include_str!("../../tests/data/alternating/blocks-cost.txt"));
        let slow = recorded_blocks(include_str!(
            "../../tests/data/alternating/blocks-cost-slowed.txt"
        ));
        let kept = |blocks: &[Block], set| quiet_split(blocks, set).unwrap().0.len();
        assert_eq!(
            (1..4).map(|s| kept(&fast, s)).collect::<Vec<_>>(),
            [7, 7, 8]
        );
        assert_eq!(
            (1..4).map(|s| kept(&slow, s)).collect::<Vec<_>>(),
            [13, 13, 13]
        );
    }
}
