//! Throughput search: the highest load a DUT forwards with a loss ratio of at most a goal's — NDR
//! (loss 0) and PDR (loss 0.005) — by MLRsearch (draft-ietf-bmwg-mlrsearch) or RFC 2544's
//! binary search.
//!
//! The search is pure: it asks a [`TrialRunner`] for trials (a load in packets/s for a duration
//! in seconds) and gets back what was sent and received; it never prints, sleeps or reads a
//! clock. Its time is the sum of the trial durations it asked for, so a search over a simulated
//! DUT ([`sim::SimulatedDut`]) is deterministic. The runner sees the search's progress (bounds
//! and width per goal) before each trial through [`TrialRunner::progress`].
//!
//! ```
//! use benchlab::search::{search, sim::{LossCurve, SimulatedDut}, SearchConfig};
//! let mut dut = SimulatedDut::new(LossCurve::Cliff { capacity: 1e6 }, 0.0, 7);
//! let result = search(&SearchConfig::mlrsearch(), 2e6, &mut dut).unwrap();
//! let ndr = result.goals[0].relevant_lower_bound.unwrap();
//! assert!(ndr <= 1e6 && ndr > 0.995 * 1e6);
//! ```
//!
//! # MLRsearch, as the draft and the reference (PyPI `MLRsearch` 1.2.1) define it
//! Loads live on a log-spaced grid: integer steps whose size divides every Goal Width (to within
//! 1 %, never wider), so widening and halving are exact. A warm-up trial at max load is discarded; the first
//! real trial at max load gives a forwarding rate, and the next load is that rate (corrected for
//! the smallest goal loss ratio), then once more from that trial. Each goal gets a chain of
//! targets: its final target (Goal Width, Goal Final Trial Duration, Goal Duration Sum) preceded
//! by `preceding_targets` coarser ones (2x width each, duration sums shrinking geometrically to
//! the Goal Initial Trial Duration). Every trial feeds every target's statistics; a load is a
//! lower bound for a target when its bad trial seconds stay within the exceed ratio of the
//! duration sum whatever further trials give, an upper bound when they cannot. Relevant upper
//! bound: the lowest upper bound; relevant lower bound: the highest lower bound below it. One
//! selector per goal nominates a trial (halve, refine, external search, bisect); the lowest load
//! wins. A goal is reached when its final target's relevant bounds are at most its width apart.
//! The conditional throughput is the relevant lower bound times (1 - the exceed-ratio quantile of
//! its trials' loss ratios).
//!
//! With valid trials and no guess (below) the search is the reference's, decision for decision:
//! `benches/search.sh` runs both on the same simulated DUTs and counts the seeds with identical
//! trials and bounds.
//!
//! # Where benchlab deliberately differs from the reference
//! - Time: the search duration limit counts trial seconds, not wall-clock time, so the search is
//!   deterministic and a slow lab does not cut it short; on timeout the search returns what it
//!   has ([`SearchEnd::Timeout`]) instead of raising.
//! - Invalid trials: a trial whose sender did not send the intended load is retried at the same
//!   load (up to [`MAX_ATTEMPTS`] times) and kept in the trace as invalid; the reference instead
//!   counts unsent packets as lost, which would move the bounds because of the generator. The
//!   warm-up, whose result is discarded, runs once whatever the sender sent; and an invalid
//!   trial that lost more than every goal's loss ratio counts as bad at its load (loss grows
//!   with the load, so the load asked would have lost at least as much).
//! - Min load an upper bound: the goal's result has no lower bound (and no conditional
//!   throughput) and the other goals go on; the reference's `fail_fast` aborts the whole search.
//! - A guess from the forwarding rate at the final target: while it has no lower bound, when
//!   the relevant upper bound lost so much that what the DUT forwarded there (corrected for the
//!   goal's loss ratio, as after the max-load trial) lies at least 8 target widths below it and
//!   below the reference's next load, that rate is measured next; once a guess was measured,
//!   the target halves its bracket instead of stepping from its stale initial bounds. On a
//!   shared machine the DUT's speed moves during a search; when it falls after the coarser
//!   targets have found their bounds, the reference steps down from the stale bounds a few
//!   widths at a time, each step taking the duration sum (11 trials at the defaults). A DUT
//!   that forwards less the more it is offered, as the virtual lab's does, is guessed low, and
//!   guessing again from each new upper bound crept up from the lower bound one width per
//!   load. On `benches/search.sh`'s DUTs that slow down after 40 s (100 seeds): by 30 %, 115.3
//!   trials against the reference's 142.4; by 20 %, losing 1.5 times the excess load, 156.1
//!   against 175.2. On its DUTs that keep their speed, the reference's very trials on every
//!   seed.
//! - `received > sent` (a counter read too early) counts as loss of the excess, as the reference
//!   does (absolute value): conservative rather than a negative loss ratio.
//!
//! [`TrialRunner`]: crate::search::TrialRunner
//! [`sim::SimulatedDut`]: crate::search::sim::SimulatedDut
//! [`TrialRunner::progress`]: crate::search::TrialRunner::progress
//! [`SearchEnd::Timeout`]: crate::search::SearchEnd::Timeout
//! [`MAX_ATTEMPTS`]: crate::search::MAX_ATTEMPTS

use serde::{Deserialize, Serialize};

mod binary;
pub(crate) mod config;
mod grid;
mod mlrsearch;
mod selector;
pub mod sim;
mod stats;

pub use config::{Goal, Preset, SearchConfig, SearchConfigError};

/// Attempts at one trial whose sender did not send the intended load before the search gives up.
/// On the virtual lab's shared CPUs the generator misses a load it holds most of the time in
/// streaks: three misses in a row at 763 Kpps, half its ceiling, ended a search after 18 trials.
/// Ten rule out only a load it cannot send; the retries count toward the search's time limit.
pub(crate) const MAX_ATTEMPTS: usize = 10;

/// What a trial gave, as the runner measured it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TrialOutcome {
    /// Load the senders actually offered, packets/s.
    pub(crate) offered_load: f64,
    /// Seconds the traffic ran.
    pub(crate) duration: f64,
    /// Packets the senders sent (their own counters).
    pub(crate) sent: u64,
    /// Packets the receiver counted, read after the traffic stopped and drained.
    pub(crate) received: u64,
    /// False when the senders did not send the intended load: the search retries the trial.
    pub(crate) valid: bool,
}

impl TrialOutcome {
    /// Loss ratio: |sent - received| / sent (0 when nothing was sent).
    pub(crate) fn loss_ratio(&self) -> f64 {
        loss_ratio(self.sent, self.received)
    }
}

/// Loss ratio of a trial: |sent - received| / sent (0 when nothing was sent).
pub(crate) fn loss_ratio(sent: u64, received: u64) -> f64 {
    match sent {
        0 => 0.0,
        sent => sent.abs_diff(received) as f64 / sent as f64,
    }
}

/// Runs trials for a search: the I/O boundary (traffic, counters) lives behind this.
pub trait TrialRunner {
    /// Why a trial could not run at all (the search stops and returns it).
    type Error: std::error::Error + 'static;

    /// Runs one trial at `load` packets/s for `duration` seconds.
    fn run(&mut self, load: f64, duration: f64) -> Result<TrialOutcome, Self::Error>;

    /// Sees the search's state before each trial (e.g. for a progress bar). Default: nothing.
    fn progress(&mut self, _state: &SearchState) {}
}

/// One trial of the search, as kept in its trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    /// Intended load, packets/s.
    pub(crate) load: f64,
    /// Intended duration, seconds.
    pub(crate) duration: f64,
    /// Load the senders offered, packets/s.
    pub(crate) offered_load: f64,
    /// Seconds the traffic ran.
    pub(crate) measured_duration: f64,
    /// Packets sent.
    pub(crate) sent: u64,
    /// Packets received.
    pub(crate) received: u64,
    /// (sent - received) / sent.
    pub(crate) loss_ratio: f64,
    /// False: the sender missed the intended load; the trial was retried and not counted.
    pub(crate) valid: bool,
    /// True for the discarded warm-up trial.
    pub(crate) warmup: bool,
    /// Trial seconds of the search up to and including this trial.
    pub(crate) trial_seconds: f64,
}

/// Where one goal stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct GoalProgress {
    /// Goal name (`NDR`, `PDR`).
    pub(crate) name: String,
    /// Goal loss ratio.
    pub(crate) loss_ratio: f64,
    /// Relevant lower bound, packets/s.
    pub(crate) lower_bound: Option<f64>,
    /// Relevant upper bound, packets/s.
    pub(crate) upper_bound: Option<f64>,
    /// (upper - lower) / upper, when both bounds exist.
    pub(crate) width: Option<f64>,
}

impl GoalProgress {
    fn new(goal: &Goal, lower_bound: Option<f64>, upper_bound: Option<f64>) -> Self {
        let width = match (lower_bound, upper_bound) {
            (Some(lo), Some(hi)) if hi > 0.0 => Some((hi - lo) / hi),
            _ => None,
        };
        Self {
            name: goal.name.clone(),
            loss_ratio: goal.loss_ratio,
            lower_bound,
            upper_bound,
            width,
        }
    }
}

/// The search's state before a trial, for progress displays.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchState {
    /// Trials run so far (warm-up and invalid ones included).
    pub(crate) trials: usize,
    /// Trial seconds so far.
    pub(crate) trial_seconds: f64,
    /// The search duration limit, seconds.
    pub(crate) search_duration_max: f64,
    /// Load of the coming trial, packets/s.
    pub(crate) load: f64,
    /// Duration of the coming trial, seconds.
    pub(crate) duration: f64,
    /// Each goal's current bounds (of its current target, coarser before the final one).
    pub(crate) goals: Vec<GoalProgress>,
}

/// Why the search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SearchEnd {
    /// Every goal reached its width (or hit min or max load).
    GoalsReached,
    /// The trial seconds reached `search_duration_max`.
    Timeout,
}

/// The result for one goal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GoalResult {
    /// The goal as searched.
    pub(crate) goal: Goal,
    /// Conditional throughput, packets/s: the relevant lower bound times (1 - the loss ratio of
    /// its exceed-ratio quantile trial). None without a lower bound.
    pub(crate) conditional_throughput: Option<f64>,
    /// Relevant lower bound, packets/s. None: even min load loses more than the goal.
    pub relevant_lower_bound: Option<f64>,
    /// Relevant upper bound, packets/s. None: max load is good.
    pub(crate) relevant_upper_bound: Option<f64>,
    /// (upper - lower) / upper, when both bounds exist.
    pub(crate) achieved_width: Option<f64>,
}

/// A finished search: results per goal and every trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResult {
    /// The algorithm that ran.
    pub(crate) preset: Preset,
    /// Min load searched, packets/s.
    pub(crate) min_load: f64,
    /// Max load searched, packets/s.
    pub max_load: f64,
    /// One result per goal, in the configuration's order.
    pub goals: Vec<GoalResult>,
    /// Every trial, in order.
    pub trials: Vec<TrialRecord>,
    /// Why the search ended.
    pub(crate) end: SearchEnd,
    /// Sum of the trial durations, seconds.
    pub trial_seconds: f64,
}

impl SearchResult {
    /// The NDR: the relevant lower bound of the first goal of zero loss (`None` without such a
    /// goal, or when even the min load lost), the load latency trials take their shares of.
    pub(crate) fn ndr(&self) -> Option<f64> {
        (self.goals.iter())
            .filter(|g| g.goal.loss_ratio == 0.0)
            .find_map(|g| g.relevant_lower_bound)
    }

    /// The search's first measured trial at max load (the warm-up left out): what the DUT
    /// did when offered all the search would offer, and its index in [`Self::trials`].
    pub(crate) fn first_at_max_load(&self) -> Option<(usize, &TrialRecord)> {
        (self.trials.iter().enumerate()).find(|(_, t)| !t.warmup && t.load == self.max_load)
    }
}

/// Why a search failed.
#[derive(Debug, thiserror::Error)]
pub enum SearchError<E: std::error::Error + 'static> {
    /// The configuration (or the generator's max load) is out of range.
    #[error(transparent)]
    Config(#[from] SearchConfigError),
    /// The runner could not run a trial.
    #[error("trial at {load:.0} packets/s for {duration} s failed: {source}")]
    Runner {
        /// Intended load, packets/s.
        load: f64,
        /// Intended duration, seconds.
        duration: f64,
        /// The runner's error.
        source: E,
    },
    /// The senders kept missing the intended load.
    #[error(
        "the senders did not send {load:.0} packets/s in {attempts} attempts; \
         lower search.max_load to what the generator can send"
    )]
    InvalidTrials {
        /// Intended load, packets/s.
        load: f64,
        /// Attempts made.
        attempts: usize,
    },
}

/// Searches with `config` (its `max_load`, else `generator_max` packets/s) over `runner`.
pub fn search<R: TrialRunner>(
    config: &SearchConfig,
    generator_max: f64,
    runner: &mut R,
) -> Result<SearchResult, SearchError<R::Error>> {
    config.validate()?;
    let max_load = config.max_load.unwrap_or(generator_max);
    config.check_max_load(max_load)?;
    let mut session = Session {
        runner,
        trace: Vec::new(),
        seconds: 0.0,
        limit: config.search_duration_max,
        worst_ratio: (config.goals.iter().map(|g| g.loss_ratio)).fold(0.0, f64::max),
    };
    let (goals, end) = match config.preset {
        Preset::Mlrsearch => mlrsearch::run(config, max_load, &mut session)?,
        Preset::Rfc2544 => binary::run(config, max_load, &mut session)?,
    };
    Ok(SearchResult {
        preset: config.preset,
        min_load: config.min_load,
        max_load,
        goals,
        trials: session.trace,
        end,
        trial_seconds: session.seconds,
    })
}

/// Runs trials for a search algorithm: retries invalid ones, keeps the trace and the clock.
pub(crate) struct Session<'r, R: TrialRunner> {
    runner: &'r mut R,
    trace: Vec<TrialRecord>,
    seconds: f64,
    limit: f64,
    /// The largest loss ratio a goal accepts: a trial that lost more is bad for every goal.
    worst_ratio: f64,
}

impl<R: TrialRunner> Session<'_, R> {
    /// Whether the trial seconds reached the search duration limit.
    pub(crate) fn timed_out(&self) -> bool {
        self.seconds >= self.limit
    }

    /// Runs a valid trial at `load` for `duration` (retrying invalid ones) and returns its loss
    /// ratio and measured seconds; `goals` is the progress shown before it.
    pub(crate) fn trial(
        &mut self,
        load: f64,
        duration: f64,
        warmup: bool,
        goals: Vec<GoalProgress>,
    ) -> Result<(f64, f64), SearchError<R::Error>> {
        let mut state = SearchState {
            trials: self.trace.len(),
            trial_seconds: self.seconds,
            search_duration_max: self.limit,
            load,
            duration,
            goals,
        };
        for _ in 0..MAX_ATTEMPTS {
            self.runner.progress(&state);
            let outcome =
                self.runner
                    .run(load, duration)
                    .map_err(|source| SearchError::Runner {
                        load,
                        duration,
                        source,
                    })?;
            self.seconds += duration;
            // Nothing sent means no loss ratio: as invalid as a sender that fell short.
            let valid = outcome.valid && outcome.sent > 0;
            let measured = if outcome.duration.is_finite() && outcome.duration > 0.0 {
                outcome.duration
            } else {
                duration
            };
            self.trace.push(TrialRecord {
                load,
                duration,
                offered_load: outcome.offered_load,
                measured_duration: measured,
                sent: outcome.sent,
                received: outcome.received,
                loss_ratio: outcome.loss_ratio(),
                valid,
                warmup,
                trial_seconds: self.seconds,
            });
            // The warm-up is discarded: a sender that fell short of max load still warmed the
            // DUT up (and on a shared machine it often does, at max load), so it runs once.
            // A sender that fell short offered the DUT less than the load; if the DUT still
            // lost more than any goal accepts, the full load would have lost at least as much.
            let conclusive = outcome.sent > 0 && outcome.loss_ratio() > self.worst_ratio;
            if valid || warmup || conclusive {
                return Ok((outcome.loss_ratio(), measured));
            }
            state.trials = self.trace.len();
            state.trial_seconds = self.seconds;
        }
        Err(SearchError::InvalidTrials {
            load,
            attempts: MAX_ATTEMPTS,
        })
    }
}

#[cfg(test)]
mod tests;
