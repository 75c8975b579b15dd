use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::stats::paired::paired;

fn rule(precision_pct: f64, max_s: u64, min_blocks: usize, block_s: u64) -> StopRule {
    let options = StopOptions {
        precision_pct,
        max_duration: Duration::from_secs(max_s),
        min_blocks,
    };
    StopRule::new(options, Duration::from_secs(block_s)).unwrap()
}

/// Two-set blocks whose set 1 has the given log ratios to the baseline.
fn blocks(ratios: &[f64]) -> Vec<Block> {
    ratios
        .iter()
        .map(|r| Block::new(vec![1.0e6, 1.0e6 * r.exp()]).unwrap())
        .collect()
}

#[test]
fn looks_are_geometric_from_min_blocks_to_the_time_budget() {
    // 180 s of 4 s blocks: 45 blocks; 8 × (45/8)^(j/4).
    assert_eq!(rule(1.0, 180, 8, 4).looks(), &[8, 12, 19, 29, 45]);
    // A budget shorter than min_blocks still gives one look at min_blocks.
    assert_eq!(rule(1.0, 10, 8, 4).looks(), &[8]);
}

#[test]
fn bad_options_are_refused() {
    let block = Duration::from_secs(4);
    let with = |precision_pct, min_blocks| StopOptions {
        precision_pct,
        min_blocks,
        ..StopOptions::default()
    };
    assert_eq!(
        StopRule::new(with(0.0, 8), block),
        Err(StopError::Precision(0.0))
    );
    assert!(StopRule::new(with(f64::NAN, 8), block).is_err());
    assert_eq!(
        StopRule::new(with(1.0, 1), block),
        Err(StopError::MinBlocks(1))
    );
    assert_eq!(
        StopRule::new(with(1.0, 8), Duration::ZERO),
        Err(StopError::BlockDuration)
    );
}

#[test]
fn stops_precise_only_at_a_look() {
    let rule = rule(1.0, 180, 8, 4);
    // Log ratios alternating ±0.5 % around −30 %: s ≈ 0.53 %, precise at 8 blocks already.
    let ratios: Vec<f64> = (0..12)
        .map(|i| -0.36 + if i % 2 == 0 { 0.005 } else { -0.005 })
        .collect();
    let elapsed = |n: u64| Duration::from_secs(4 * n);
    assert_eq!(
        rule.decide(&blocks(&ratios[..7]), elapsed(7)),
        Decision::Continue
    );
    assert_eq!(
        rule.decide(&blocks(&ratios[..8]), elapsed(8)),
        Decision::Precise
    );
    assert_eq!(
        rule.decide(&blocks(&ratios[..9]), elapsed(9)),
        Decision::Continue
    );
    // The reported interval is the one the decision used: t at 99 %, stated as 95 %.
    let e = rule.estimates(&blocks(&ratios[..8]))[0].unwrap();
    assert_eq!((e.t, e.level_pct), (Confidence::P99.student_t(7), 95.0));
    assert!(e.half_width_pct() <= 1.0);
}

#[test]
fn time_up_when_the_next_block_would_overrun_or_the_looks_are_spent() {
    let rule = rule(0.01, 180, 8, 4);
    let noisy: Vec<f64> = (0..45)
        .map(|i| if i % 2 == 0 { 0.05 } else { -0.05 })
        .collect();
    // 20 blocks in 175 s: the next one (8.75 s) would end after 180 s.
    let at = |n: usize, s: u64| rule.decide(&blocks(&noisy[..n]), Duration::from_secs(s));
    assert_eq!(at(20, 175), Decision::TimeUp);
    assert_eq!(at(20, 80), Decision::Continue);
    assert_eq!(at(45, 100), Decision::TimeUp);
    assert_eq!(at(0, 0), Decision::Continue);
}

/// A standard normal deviate (Box–Muller).
fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
    let v: f64 = rng.random();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// A/A blocks of two equal sets, as an ABBA/BAAB run sees them on a shared machine: the level
/// follows an AR(1) process in log from phase to phase (φ = 0.9, 1 % innovations, so blocks are
/// correlated too); every phase has 1 % quiet noise; disturbance comes in stretches (a Markov
/// chain over phases, entered with probability `enter`, left with 20 %, so about 5 phases long)
/// that cut each phase by 5–50 %.
fn aa_blocks(rng: &mut ChaCha8Rng, count: usize, enter: f64) -> Vec<Block> {
    let (mut level, mut disturbed) = (0.0, false);
    (0..count)
        .map(|b| {
            let mut phase = || {
                level = 0.9 * level + 0.01 * normal(rng);
                disturbed = if disturbed {
                    rng.random::<f64>() > 0.2
                } else {
                    rng.random::<f64>() < enter
                };
                let cut = if disturbed {
                    rng.random_range(0.5..0.95)
                } else {
                    1.0
                };
                1.0e6 * (level + 0.01 * normal(rng)).exp() * cut
            };
            let p: Vec<f64> = (0..4).map(|_| phase()).collect();
            let (outer, inner) = ((p[0] + p[3]) / 2.0, (p[1] + p[2]) / 2.0);
            // ABBA, then BAAB.
            let values = if b % 2 == 0 {
                vec![outer, inner]
            } else {
                vec![inner, outer]
            };
            Block::new(values).unwrap()
        })
        .collect()
}

/// False-positive rates of the naive rule (95 % interval after every block from min_blocks)
/// and of [`StopRule`], over `runs` simulated A/A runs of 4 s blocks.
fn aa_false_positives(
    runs: usize,
    precision_pct: f64,
    min_blocks: usize,
    enter: f64,
) -> (f64, f64) {
    let rule = rule(precision_pct, 180, min_blocks, 4);
    let max = *rule.looks().last().unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(min_blocks as u64);
    let (mut naive, mut corrected) = (0, 0);
    for _ in 0..runs {
        let run = aa_blocks(&mut rng, max, enter);
        let naive_stop = (min_blocks..=max)
            .map(|n| paired(&run[..n], 1, Confidence::P95).unwrap())
            .find(|e| e.half_width_pct() <= precision_pct)
            .unwrap_or_else(|| paired(&run, 1, Confidence::P95).unwrap());
        naive += usize::from(naive_stop.is_significant());
        let n = (1..=max)
            .find(|&n| {
                rule.decide(&run[..n], Duration::from_secs(4 * n as u64)) != Decision::Continue
            })
            .unwrap();
        let e = rule.estimates(&run[..n])[0].unwrap();
        corrected += usize::from(e.is_significant());
    }
    (naive as f64 / runs as f64, corrected as f64 / runs as f64)
}

#[test]
fn the_corrected_rule_keeps_the_aa_false_positive_rate_at_5_percent() {
    // 2000 runs each: the binomial standard error at 5 % is 0.49 %.
    for (min_blocks, enter) in [(4, 0.0), (8, 0.0), (8, 0.01), (8, 0.03)] {
        let (naive, corrected) = aa_false_positives(2000, 1.0, min_blocks, enter);
        eprintln!(
            "min_blocks {min_blocks}, disturbance {enter}: A/A false positives naive {:.1} %, corrected {:.1} %",
            100.0 * naive,
            100.0 * corrected
        );
        assert!(
            corrected <= 0.06,
            "min_blocks {min_blocks}, {enter}: corrected {corrected}"
        );
        assert!(
            naive > corrected,
            "min_blocks {min_blocks}, {enter}: naive {naive}"
        );
    }
}
