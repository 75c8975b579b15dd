//! The pure pipeline of the alternating design on simulated receiver counters:
//! order → phase values → blocks → paired estimates → stopping rule.
//!
//! The simulator (test-only) follows notes/noise.md: 0.1 s counter samples of a DUT forwarding
//! about 1.57 Mpps, quiet stretches within ±2 %, disturbed stretches (1 s to a minute, a few per
//! run) that cut each 0.1 s by 10–60 %, a slow drift, and a dip for 0.15 s after each switch;
//! each config set costs a known fraction of the rate.

use std::time::Duration;

use benchlab::stats::BalancedOrder;
use benchlab::stats::{
    paired, phase_values, Block, Confidence, CounterSample, Decision, Estimator, PhaseOptions,
    PhaseSpan, StopOptions, StopRule,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Rate factors of the simulated sets: forwarding, itself under another name (A/A),
/// nft-stateless, nft-stateful.
const TRUTH: [f64; 4] = [1.0, 1.0, 0.83, 0.68];
/// Seconds a switch takes before the new set is verified.
const SWITCH_S: f64 = 0.02;

/// A standard normal deviate (Box–Muller).
fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
    let v: f64 = rng.random();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// A simulated run: the receiver's samples and the phases as the run recorded them.
struct Run {
    samples: Vec<CounterSample>,
    spans: Vec<PhaseSpan>,
}

/// Simulates `blocks` blocks of `phase_s` phases of the order over `TRUTH`.
fn simulate(rng: &mut ChaCha8Rng, order: BalancedOrder, phase_s: f64, blocks: usize) -> Run {
    let sets: Vec<usize> = (0..blocks).flat_map(|b| order.block(b)).collect();
    let spans: Vec<PhaseSpan> = sets
        .iter()
        .enumerate()
        .map(|(i, &set)| PhaseSpan {
            set,
            switched_s: i as f64 * phase_s + SWITCH_S,
            end_s: (i + 1) as f64 * phase_s,
        })
        .collect();
    // The factor of the set running at `t`, with the post-switch dip.
    let factor = |t: f64| {
        let i = ((t / phase_s) as usize).min(sets.len() - 1);
        let since = t - spans[i].switched_s;
        match since {
            s if s < 0.0 => TRUTH[sets[i.saturating_sub(1)]],
            s if s < 0.15 => TRUTH[sets[i]] * 0.7,
            _ => TRUTH[sets[i]],
        }
    };
    let steps = (sets.len() as f64 * phase_s * 10.0) as usize;
    let (mut total, mut drift, mut disturbed_left) = (0.0, 0.0, 0usize);
    let mut samples = vec![CounterSample {
        t_s: 0.0,
        rx_pkts: 0,
    }];
    for step in 0..steps {
        drift = 0.995 * drift + 0.001 * normal(rng);
        if disturbed_left == 0 && rng.random::<f64>() < 0.1 / 40.0 {
            // Log-uniform from 1 s to 60 s.
            disturbed_left = (10.0 * 60f64.powf(rng.random::<f64>())) as usize;
        }
        let cut = if disturbed_left > 0 {
            disturbed_left -= 1;
            rng.random_range(0.4..0.9)
        } else {
            1.0
        };
        let level = 1.57e6 * (drift + 0.01 * normal(rng)).exp() * cut;
        let t0 = step as f64 * 0.1;
        let forwarded: f64 = (0..10)
            .map(|sub| level * factor(t0 + 0.01 * (sub as f64 + 0.5)) * 0.01)
            .sum();
        total += forwarded;
        samples.push(CounterSample {
            t_s: t0 + 0.1 + rng.random_range(-0.002..0.002),
            rx_pkts: total as u64,
        });
    }
    Run { samples, spans }
}

/// The blocks of a run; incomplete blocks are left out (and counted).
fn blocks_of(run: &Run, order: BalancedOrder, options: &PhaseOptions) -> (Vec<Block>, usize) {
    let values = phase_values(&run.samples, &run.spans, options).unwrap();
    let mut incomplete = 0;
    let blocks = values
        .chunks(order.phases_per_block())
        .filter_map(|phases| {
            let block = Block::from_phases(phases, order.sets()).ok();
            incomplete += usize::from(block.is_none());
            block
        })
        .collect();
    (blocks, incomplete)
}

/// Whether an interval (log scale) contains the true log ratio of `set`.
fn covers(mean: f64, half: f64, set: usize) -> bool {
    (mean - TRUTH[set].ln()).abs() <= half
}

#[test]
fn the_stopped_interval_contains_the_truth() {
    let order = BalancedOrder::new(TRUTH.len()).unwrap();
    let phase_s = 1.0;
    let block = Duration::from_millis((1000.0 * phase_s) as u64 * order.phases_per_block() as u64);
    let stop = StopOptions {
        precision_pct: 1.0,
        max_duration: Duration::from_secs(180),
        min_blocks: 8,
    };
    let rule = StopRule::new(stop, block).unwrap();
    let max = *rule.looks().last().unwrap();
    let options = PhaseOptions::default();
    let mut rng = ChaCha8Rng::seed_from_u64(2024);
    let (runs, mut covered, mut fixed_covered, mut stopped) = (150, 0, 0, [0usize; 2]);
    for _ in 0..runs {
        let run = simulate(&mut rng, order, phase_s, max);
        let (blocks, _) = blocks_of(&run, order, &options);
        let n = (1..=blocks.len())
            .find(|&n| rule.decide(&blocks[..n], block * n as u32) != Decision::Continue)
            .unwrap_or(blocks.len());
        let decision = rule.decide(&blocks[..n], block * n as u32);
        stopped[usize::from(decision == Decision::Precise)] += 1;
        for (i, e) in rule.estimates(&blocks[..n]).iter().enumerate() {
            let e = e.unwrap();
            covered += usize::from(covers(e.mean_log, e.half_width_log, i + 1));
        }
        for set in 1..TRUTH.len() {
            let e = paired(&blocks, set, Confidence::P95).unwrap();
            fixed_covered += usize::from(covers(e.mean_log, e.half_width_log, set));
        }
    }
    let intervals = (runs * (TRUTH.len() - 1)) as f64;
    let (coverage, fixed) = (covered as f64 / intervals, fixed_covered as f64 / intervals);
    eprintln!(
        "coverage: stopped (corrected) {:.1} %, all blocks at 95 % {:.1} %; runs precise {} time up {}",
        100.0 * coverage,
        100.0 * fixed,
        stopped[1],
        stopped[0]
    );
    // Nominal 95 %: the corrected rule is conservative; the fixed-length interval near 95 %.
    assert!(coverage >= 0.95, "{coverage}");
    assert!((0.91..=0.99).contains(&fixed), "{fixed}");
}

#[test]
fn a_short_run_finds_each_sets_cost() {
    let order = BalancedOrder::new(TRUTH.len()).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let run = simulate(&mut rng, order, 1.0, 20);
    let (blocks, incomplete) = blocks_of(&run, order, &PhaseOptions::default());
    assert_eq!((blocks.len(), incomplete), (20, 0));
    let e = paired(&blocks, 3, Confidence::P95).unwrap();
    assert!(
        (e.change_pct + 32.0).abs() < 3.0,
        "{}",
        e.line("nft-stateful", "forwarding")
    );
    assert!(e.is_significant());
}

/// Estimator × phase length × settle time on simulated 3-minute runs: the mean half-width of
/// the fixed-length 95 % interval, its coverage, and the mean error of the estimates, over all
/// three comparisons. Run with `cargo test --release --test offline alternating_sim -- --ignored
/// --nocapture`.
#[test]
#[ignore]
fn compare_estimators() {
    let order = BalancedOrder::new(TRUTH.len()).unwrap();
    println!(
        "estimator phase_s settle_s | blocks | half-width % | coverage % | bias % | incomplete"
    );
    for phase_s in [0.5, 1.0, 2.0] {
        for settle_s in [0.1, 0.2, 0.3] {
            for name in ["mean", "median", "p75", "p90"] {
                let estimator: Estimator = name.parse().unwrap();
                let options = PhaseOptions {
                    settle_s,
                    estimator,
                    min_windows: 2,
                    min_window_s: 0.0,
                };
                let mut rng = ChaCha8Rng::seed_from_u64(99);
                let blocks_per_run = (180.0 / (phase_s * order.phases_per_block() as f64)) as usize;
                let (runs, mut half, mut hit, mut bias, mut lost, mut count) =
                    (60, 0.0, 0, 0.0, 0, 0);
                for _ in 0..runs {
                    let run = simulate(&mut rng, order, phase_s, blocks_per_run);
                    let (blocks, incomplete) = blocks_of(&run, order, &options);
                    lost += incomplete;
                    for (set, truth) in TRUTH.iter().enumerate().skip(1) {
                        if let Some(e) = paired(&blocks, set, Confidence::P95) {
                            half += e.half_width_pct();
                            hit += usize::from(covers(e.mean_log, e.half_width_log, set));
                            bias += e.change_pct - 100.0 * (truth - 1.0);
                            count += 1;
                        }
                    }
                }
                let c = count.max(1) as f64;
                println!(
                    "{name:>9} {phase_s:>7} {settle_s:>8} | {blocks_per_run:>6} | {:>12.2} | {:>10.1} | {:>6.2} | {lost}",
                    half / c,
                    100.0 * hit as f64 / c,
                    bias / c
                );
            }
        }
    }
}
