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
//! reach it, the comparison is made at the highest level among the other blocks that does hold
//! that share, and the blocks above it are the ones left out (measured: three 180 s cost runs
//! in which the machine ran at 1.11 Mpps for 4–6 blocks of 27–31 and at 0.76 Mpps for the rest
//! gave nft-stateful −29.5 % ± 0.4 % over the slow level's 23 blocks, against ± 2.5 % over all).
//! When no level holds that share (the rate wandering between 0.5 and 1.1 Mpps beside a build),
//! every block counts.
//!
//! Latency has its quiet level too, a low one ([`quiet_seconds`]): a trial's seconds on such a
//! machine read the DUT's time at one level in its quiet stretches and up to twice that in its
//! disturbed ones, and which of them a run's few trials fell in moved a series' P50 by a fifth
//! from run to run, its quiet seconds' by a few percent (BENCHMARKS.md).
//!
//! [`SLOWED_BELOW`]: crate::stats::quiet::SLOWED_BELOW
//! [`QUIET_QUANTILE`]: crate::stats::quiet::QUIET_QUANTILE
//! [`MIN_QUIET_SHARE`]: crate::stats::quiet::MIN_QUIET_SHARE
//! [`quiet_seconds`]: crate::stats::quiet::quiet_seconds

use super::paired::Block;

/// The quantile of a set's block values taken as its quiet level.
pub(crate) const QUIET_QUANTILE: f64 = 0.9;
/// A block value below this fraction of its set's quiet level is a slowed one.
pub(crate) const SLOWED_BELOW: f64 = 0.9;
/// The smallest share of the blocks a level must hold for a comparison to be made at it.
pub(crate) const MIN_QUIET_SHARE: f64 = 1.0 / 3.0;
/// Fewer blocks than this are all kept: the quantile of so few is their maximum, one lucky
/// block (8 is the stopping rule's first look by default; the quantile is then the second
/// highest).
pub(crate) const MIN_SCREENED: usize = 8;

/// One side of a [`quiet_split`]: the blocks at the level the comparison is made at, or the
/// others.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Side {
    /// Per-block log ratios of the set against the baseline.
    pub(crate) ratios: Vec<f64>,
    /// The baseline's mean block value over these blocks, packets/s (`None` for no block): the
    /// speed level an estimate over them holds at, which a report states because the costs
    /// differ between levels.
    pub(crate) baseline_pps: Option<f64>,
}

/// The blocks of `set` against the baseline, split into those at the level the comparison is
/// made at and the others; `None` for a set the blocks do not have.
pub(crate) fn quiet_split(blocks: &[Block], set: usize) -> Option<(Side, Side)> {
    let ratios = blocks
        .iter()
        .map(|b| b.log_ratio(set))
        .collect::<Option<Vec<f64>>>()?;
    let at = held_level(blocks, set).unwrap_or_else(|| vec![true; blocks.len()]);
    let side = |kept: bool| {
        let mine = || (blocks.iter().zip(&ratios).zip(&at)).filter(move |(_, &a)| a == kept);
        let baseline: Vec<f64> = mine().map(|((b, _), _)| b.values()[0]).collect();
        Side {
            ratios: mine().map(|((_, &r), _)| r).collect(),
            baseline_pps: (!baseline.is_empty())
                .then(|| baseline.iter().sum::<f64>() / baseline.len() as f64),
        }
    };
    Some((side(true), side(false)))
}

/// Which blocks ran at the highest level that both sets held for at least [`MIN_QUIET_SHARE`]
/// of the blocks: the quiet level, or, when too few blocks reach it, the highest level among
/// the rest, and so on. `None` when no level qualifies before fewer than [`MIN_SCREENED`]
/// blocks are left.
fn held_level(blocks: &[Block], set: usize) -> Option<Vec<bool>> {
    let mut candidates: Vec<usize> = (0..blocks.len()).collect();
    while candidates.len() >= MIN_SCREENED {
        let level = |i: usize| quiet_level(candidates.iter().map(|&b| blocks[b].values()[i]));
        let (base, other) = (level(0), level(set));
        let (at, below): (Vec<usize>, Vec<usize>) = candidates.iter().partition(|&&b| {
            let v = blocks[b].values();
            v[0] >= SLOWED_BELOW * base && v[set] >= SLOWED_BELOW * other
        });
        if at.len() as f64 >= MIN_QUIET_SHARE * blocks.len() as f64 {
            let mut mask = vec![false; blocks.len()];
            for b in at {
                mask[b] = true;
            }
            return Some(mask);
        }
        if at.is_empty() {
            return None;
        }
        candidates = below;
    }
    None
}

/// The [`QUIET_QUANTILE`] of `values` (nearest rank).
fn quiet_level(values: impl Iterator<Item = f64>) -> f64 {
    let mut sorted: Vec<f64> = values.collect();
    sorted.sort_by(f64::total_cmp);
    (nearest_rank(QUIET_QUANTILE, sorted.len()))
        .and_then(|rank| sorted.get(rank).copied())
        .unwrap_or(f64::NAN)
}

/// The index of quantile `q` among `len` sorted values (nearest rank); `None` for no value.
fn nearest_rank(q: f64, len: usize) -> Option<usize> {
    Some((q * len.checked_sub(1)? as f64).round() as usize)
}

/// The quantile of a latency's seconds taken as its quiet level. Disturbance only adds to
/// latency, so the quiet level is a low one; the lower quartile rather than the 10 % that would
/// mirror [`QUIET_QUANTILE`]: measured on six runs of `examples/latency.toml` (BENCHMARKS.md),
/// both repeated within 10 % at 10 and 50 % of the NDR, but at 90 %, where the DUT was
/// saturated in most seconds, the 10 % quantile fell on a run's few unsaturated seconds in
/// some runs and not in others (forwarding's three runs 54 % apart), the quartile on the
/// saturated majority (3 %).
pub(crate) const QUIET_LATENCY_QUANTILE: f64 = 0.25;

/// A latency over the seconds at its quiet level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct QuietSeconds {
    /// The median of those seconds' P50s, ns.
    pub(crate) p50_ns: u64,
    /// The seconds at the quiet level.
    pub(crate) seconds: usize,
    /// The seconds there were.
    pub(crate) of: usize,
}

/// The seconds of `p50s` (each second's P50, ns) at the quiet level — the
/// [`QUIET_LATENCY_QUANTILE`] of them, and every second within [`SLOWED_BELOW`] of it (its P50
/// at most the level divided by it) — and the median of their P50s; `None` for no second.
pub(crate) fn quiet_seconds(mut p50s: Vec<u64>) -> Option<QuietSeconds> {
    p50s.sort_unstable();
    let rank = nearest_rank(QUIET_LATENCY_QUANTILE, p50s.len())?;
    let bound = p50s[rank] as f64 / SLOWED_BELOW;
    let seconds = p50s.partition_point(|&p| p as f64 <= bound);
    Some(QuietSeconds {
        p50_ns: super::upper_median(p50s[..seconds].to_vec())?,
        seconds,
        of: p50s.len(),
    })
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
        assert_eq!((quiet.ratios.len(), slowed.ratios.len()), (6, 4));
        assert!(slowed
            .ratios
            .iter()
            .all(|r| (r - (0.84f64).ln()).abs() < 1e-12));
        // Each side names the baseline's level over its own blocks.
        assert_eq!(
            (quiet.baseline_pps, slowed.baseline_pps),
            (Some(1002.5), Some(700.0))
        );
    }

    #[test]
    fn either_side_slowed_leaves_the_block_out() {
        let mut blocks: Vec<Block> = (0..8).map(|_| block(1000.0, 1000.0)).collect();
        blocks.push(block(500.0, 1000.0));
        blocks.push(block(1000.0, 500.0));
        let (quiet, slowed) = quiet_split(&blocks, 1).unwrap();
        assert_eq!((quiet.ratios.len(), slowed.ratios.len()), (8, 2));
        assert!(quiet.ratios.iter().all(|r| *r == 0.0));
    }

    #[test]
    fn one_fast_block_does_not_set_the_level() {
        // Nine blocks at one level and a single one 50 % faster: the level is the nine's.
        let mut blocks: Vec<Block> = (0..9).map(|_| block(700.0, 600.0)).collect();
        blocks.push(block(1050.0, 900.0));
        let (quiet, slowed) = quiet_split(&blocks, 1).unwrap();
        assert_eq!((quiet.ratios.len(), slowed.ratios.len()), (10, 0));
    }

    #[test]
    fn a_level_few_blocks_reach_gives_way_to_the_one_the_machine_held() {
        // Two blocks of ten at a fast level (−20 %), eight at a slow one (−30 %).
        let mut blocks = vec![block(1000.0, 800.0), block(1000.0, 800.0)];
        blocks.extend((0..8).map(|i| block(700.0 + i as f64, 490.0)));
        let (kept, left) = quiet_split(&blocks, 1).unwrap();
        assert_eq!((kept.ratios.len(), left.ratios.len()), (8, 2));
        assert!(left
            .ratios
            .iter()
            .all(|r| (r - (0.8f64).ln()).abs() < 1e-12));
    }

    #[test]
    fn a_rate_that_held_no_level_keeps_every_block() {
        // Each block 15 % below the one before: no level holds a third of them.
        let blocks: Vec<Block> = (0..10)
            .map(|i| {
                let v = 1000.0 * 0.85f64.powi(i);
                block(v, v * 0.9)
            })
            .collect();
        let (kept, left) = quiet_split(&blocks, 1).unwrap();
        assert_eq!((kept.ratios.len(), left.ratios.len()), (10, 0));
    }

    #[test]
    fn few_blocks_are_all_kept_and_a_missing_set_has_no_split() {
        let mut blocks = vec![block(1000.0, 900.0); 6];
        blocks.push(block(500.0, 450.0));
        assert_eq!(quiet_split(&blocks, 1).unwrap().0.ratios.len(), 7);
        assert!(quiet_split(&blocks, 2).is_none());
    }
    #[test]
    fn a_latency_s_quiet_seconds_are_its_lowest_level() {
        // Six seconds at 650–700 ns, four disturbed at 0.9–1.6 µs: the quartile is 670 ns, a
        // second up to 744 ns is at its level.
        let p50s = vec![1600, 700, 650, 900, 660, 1000, 680, 690, 1300, 670];
        assert_eq!(
            quiet_seconds(p50s),
            Some(QuietSeconds {
                p50_ns: 680,
                seconds: 6,
                of: 10
            })
        );
        // One second is its own level; none, none.
        assert_eq!(quiet_seconds(vec![900]).map(|q| q.p50_ns), Some(900));
        assert_eq!(quiet_seconds(Vec::new()), None);
    }
}

#[cfg(test)]
mod lab_tests {
    use super::*;
    use crate::stats::paired::tests::recorded_blocks;

    #[test]
    fn recorded_runs_are_compared_at_the_level_the_machine_held() {
        // cost: the machine ran fast for 80 s of 150, kept; cost-slowed: fast for 30 s of 140,
        // 3 blocks of 13, too few for a level: the slow level's 10 are kept.
        let fast = recorded_blocks(include_str!("../../tests/data/alternating/blocks-cost.txt"));
        let slow = recorded_blocks(include_str!(
            "../../tests/data/alternating/blocks-cost-slowed.txt"
        ));
        let kept = |blocks: &[Block], set| quiet_split(blocks, set).unwrap().0.ratios.len();
        assert_eq!(
            (1..4).map(|s| kept(&fast, s)).collect::<Vec<_>>(),
            [7, 7, 8]
        );
        assert_eq!(
            (1..4).map(|s| kept(&slow, s)).collect::<Vec<_>>(),
            [10, 10, 10]
        );
    }
}
