//! A simulated DUT: a loss curve, trial-to-trial noise and loss spikes from a seeded generator,
//! and a change of speed during the search if asked. It runs searches without a lab — in unit
//! tests, in `benches/search_sim.rs` and for mock runs — and its random source is a SplitMix64
//! simple enough to rewrite exactly in another language (`benches/search_reference.py` does),
//! so that two search implementations can be run on the very same trials.

use serde::{Deserialize, Serialize};

use super::{TrialOutcome, TrialRunner};

/// Loss ratio as a function of offered load (packets/s), without noise. Every curve is
/// non-decreasing in the load.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossCurve {
    /// An ideal forwarder: forwards up to `capacity` packets/s, loses the rest.
    Cliff {
        /// Forwarding capacity, packets/s.
        capacity: f64,
    },
    /// No loss up to `knee`, then a loss ratio of `slope` x (load / knee - 1), at most 1.
    Linear {
        /// Highest load without loss, packets/s.
        knee: f64,
        /// Loss ratio per relative load above the knee.
        slope: f64,
    },
    /// No loss up to `knee`; a constant loss ratio `floor` up to `capacity`; then a cliff.
    Step {
        /// Highest load without loss, packets/s.
        knee: f64,
        /// Loss ratio between knee and capacity.
        floor: f64,
        /// Forwarding capacity, packets/s.
        capacity: f64,
    },
}

impl LossCurve {
    /// Loss ratio at `load` packets/s.
    pub(crate) fn loss_ratio(&self, load: f64) -> f64 {
        match *self {
            LossCurve::Cliff { capacity } => cliff(load, capacity, 0.0),
            LossCurve::Linear { knee, slope } => (slope * (load / knee - 1.0)).clamp(0.0, 1.0),
            LossCurve::Step {
                knee,
                floor,
                capacity,
            } => {
                if load <= knee {
                    0.0
                } else {
                    floor.max(cliff(load, capacity, floor))
                }
            }
        }
    }

    /// The true throughput for loss ratio `goal` between `min` and `max` load: the highest load
    /// whose loss ratio is at most `goal` (bisection; `min` when even min loses more).
    pub fn throughput(&self, goal: f64, min: f64, max: f64) -> f64 {
        if self.loss_ratio(max) <= goal {
            return max;
        }
        let (mut lo, mut hi) = (min, max);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if self.loss_ratio(mid) <= goal {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

/// Loss ratio of a forwarder of `capacity` packets/s that already loses `floor` of its input.
fn cliff(load: f64, capacity: f64, floor: f64) -> f64 {
    if load <= capacity {
        0.0
    } else {
        1.0 - capacity / load * (1.0 - floor)
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, seedable, identical in any language.
#[derive(Debug, Clone)]
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1): the top 53 bits.
    pub(crate) fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Standard normal (Box-Muller, cosine branch).
    pub(crate) fn gauss(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform();
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

/// A DUT with a loss curve whose capacity varies from trial to trial, occasional loss spikes and
/// a change of speed if asked.
#[derive(Debug, Clone)]
pub struct SimulatedDut {
    curve: LossCurve,
    noise: f64,
    spike_probability: f64,
    spike_loss: f64,
    /// From which trial second on the DUT runs at another speed, and at what share of its own.
    drift: Option<Drift>,
    /// Trial seconds run so far.
    elapsed: f64,
    rng: SplitMix64,
}

/// A DUT whose speed changes once during the search, as a shared machine's does when a neighbour
/// starts or stops: every load at and after `after_s` trial seconds is taken as if the DUT had
/// `factor` times its capacity.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Drift {
    /// Trial seconds (warm-up included) after which the speed changes.
    pub(crate) after_s: f64,
    /// The DUT's speed from then on, relative to before (0.7: 30 % slower).
    pub factor: f64,
}

impl SimulatedDut {
    /// A DUT following `curve`, every trial's loads scaled by 1 + `noise` x a standard normal
    /// draw (e.g. 0.01: 1 % trial noise), with the random source seeded by `seed`.
    pub fn new(curve: LossCurve, noise: f64, seed: u64) -> Self {
        Self {
            curve,
            noise,
            spike_probability: 0.0,
            spike_loss: 0.0,
            drift: None,
            elapsed: 0.0,
            rng: SplitMix64::new(seed),
        }
    }

    /// Adds inconsistent trials: with `probability`, a trial loses at least `loss` of its packets
    /// whatever the load (a disturbed machine).
    pub fn with_spikes(mut self, probability: f64, loss: f64) -> Self {
        self.spike_probability = probability;
        self.spike_loss = loss;
        self
    }

    /// Adds a change of speed during the search (`None`: none).
    pub fn with_drift(mut self, drift: Option<Drift>) -> Self {
        self.drift = drift;
        self
    }

    /// The loss ratio of the next trial at `load` (draws three random numbers, always).
    fn trial_loss_ratio(&mut self, load: f64) -> f64 {
        let speed = match self.drift {
            Some(d) if self.elapsed >= d.after_s => d.factor,
            _ => 1.0,
        };
        let scale = speed * (1.0 + self.noise * self.rng.gauss()).max(1e-3);
        let spike = self.rng.uniform() < self.spike_probability;
        let loss = self.curve.loss_ratio(load / scale);
        if spike {
            loss.max(self.spike_loss)
        } else {
            loss
        }
    }
}

impl TrialRunner for SimulatedDut {
    type Error = std::convert::Infallible;

    fn run(&mut self, load: f64, duration: f64) -> Result<TrialOutcome, Self::Error> {
        let loss_ratio = self.trial_loss_ratio(load);
        self.elapsed += duration;
        // Round half up in both implementations (Python's round() is round-half-even).
        let sent = (load * duration + 0.5).floor() as u64;
        let lost = (sent as f64 * loss_ratio + 0.5).floor() as u64;
        Ok(TrialOutcome {
            offered_load: load,
            duration,
            sent,
            received: sent - lost.min(sent),
            valid: true,
        })
    }
}
