//! The MLRsearch controller: initial trials, then the selectors' nominations until every goal is
//! reached (the reference's `MultipleLossRatioSearch`).

use super::grid::{handle, Grid, Load, Width};
use super::selector::{Nomination, Selector};
use super::stats::{targets_of, Database, Target};
use super::{GoalProgress, GoalResult, SearchConfig, SearchEnd, SearchError, Session, TrialRunner};

/// The search's working state.
struct Mlr<'c> {
    config: &'c SearchConfig,
    grid: Grid,
    db: Database,
    /// Per goal: database indices of its targets, coarsest first.
    chains: Vec<Vec<usize>>,
}

/// Runs MLRsearch between `config.min_load` and `max_load`.
pub(crate) fn run<R: TrialRunner>(
    config: &SearchConfig,
    max_load: f64,
    session: &mut Session<'_, R>,
) -> Result<(Vec<GoalResult>, SearchEnd), SearchError<R::Error>> {
    let widths: Vec<f64> = config.goals.iter().map(|g| g.relative_width).collect();
    let grid = Grid::new(config.min_load, max_load, &widths);
    let mut targets: Vec<Target> = Vec::new();
    let mut chains = Vec::new();
    for goal in &config.goals {
        let chain = targets_of(goal, &grid);
        chains.push((targets.len()..targets.len() + chain.len()).collect());
        targets.extend(chain);
    }
    let mut mlr = Mlr {
        config,
        grid,
        db: Database::new(targets),
        chains,
    };
    let (load0, load1) = mlr.initial_trials(session)?;
    let end = mlr.main_loop(session, load0.min(load1), load0.max(load1))?;
    Ok((mlr.results(), end))
}

impl Mlr<'_> {
    /// Measures `load` for `duration` seconds into the database; returns the loss ratio.
    fn measure<R: TrialRunner>(
        &mut self,
        session: &mut Session<'_, R>,
        load: Load,
        duration: f64,
    ) -> Result<f64, SearchError<R::Error>> {
        let progress = self.progress(|chain| chain[0]);
        let pps = self.grid.pps(load);
        let (loss_ratio, seconds) = session.trial(pps, duration, false, progress)?;
        self.db.add(load, duration, seconds, loss_ratio);
        Ok(loss_ratio)
    }

    /// The reference's `run_initial_trials`: warm-up, max load, then the (corrected) forwarding
    /// rates; returns the last two loads measured (or one twice).
    fn initial_trials<R: TrialRunner>(
        &mut self,
        session: &mut Session<'_, R>,
    ) -> Result<(Load, Load), SearchError<R::Error>> {
        // The coarsest targets: the smallest loss ratio, the longest duration, the widest width.
        let firsts: Vec<&Target> = self.chains.iter().map(|c| self.db.target(c[0])).collect();
        let ratio = firsts
            .iter()
            .map(|t| t.loss_ratio)
            .fold(f64::INFINITY, f64::min);
        let duration = firsts.iter().map(|t| t.trial_duration).fold(0.0, f64::max);
        let width: Width = firsts.iter().map(|t| t.width).max().unwrap_or(1);
        let max = self.grid.max();
        if self.config.warmup_duration > 0.0 {
            let progress = self.progress(|chain| chain[0]);
            let max_pps = self.grid.pps(max);
            session.trial(max_pps, self.config.warmup_duration, true, progress)?;
        }
        let loss0 = self.measure(session, max, duration)?;
        // The forwarding rate is a good guess of the zero-loss load.
        let corrected = self.grid.forwarded(max, loss0, ratio);
        if corrected >= max {
            return Ok((max, max));
        }
        let Some(mrr) = handle(&self.grid, corrected, width, None, Some(max)) else {
            return Ok((max, max));
        };
        let loss1 = self.measure(session, mrr, duration)?;
        let mrr2 = if loss1 > ratio {
            let rate = self.grid.forwarded(mrr, loss1, ratio);
            handle(&self.grid, rate, width, None, Some(mrr))
        } else {
            handle(&self.grid, mrr + width, width, Some(mrr), Some(max))
        };
        let Some(mrr2) = mrr2 else {
            return Ok((mrr, mrr));
        };
        self.measure(session, mrr2, duration)?;
        Ok((mrr, mrr2))
    }

    /// Measures the winning nomination until no selector nominates or time runs out.
    fn main_loop<R: TrialRunner>(
        &mut self,
        session: &mut Session<'_, R>,
        lower: Load,
        upper: Load,
    ) -> Result<SearchEnd, SearchError<R::Error>> {
        // Keeps external search steps of all goals in step: no interleaved upward searches.
        let mut global_width: Width = upper - lower;
        let mut selectors: Vec<Selector> = self
            .chains
            .iter()
            .map(|chain| Selector::new(&self.db, chain.clone(), lower, upper))
            .collect();
        while !session.timed_out() {
            let mut winner: Option<(Nomination, usize)> = None;
            for (i, selector) in selectors.iter_mut().enumerate() {
                if let Some(n) = selector.nominate(&self.db, &self.grid, global_width) {
                    if winner.is_none_or(|(w, _)| n.beats(&w)) {
                        winner = Some((n, i));
                    }
                }
            }
            let Some((nomination, i)) = winner else {
                return Ok(SearchEnd::GoalsReached);
            };
            let current: Vec<usize> = selectors.iter().map(Selector::current_target).collect();
            let progress = self.progress_at(&current);
            let pps = self.grid.pps(nomination.load);
            let (loss, seconds) = session.trial(pps, nomination.duration, false, progress)?;
            self.db
                .add(nomination.load, nomination.duration, seconds, loss);
            global_width = nomination.width;
            selectors[i].won(nomination.load, &self.db, &mut global_width);
        }
        Ok(SearchEnd::Timeout)
    }

    /// Progress of every goal at the target `pick` chooses from its chain.
    fn progress(&self, pick: impl Fn(&[usize]) -> usize) -> Vec<GoalProgress> {
        let targets: Vec<usize> = self.chains.iter().map(|c| pick(c)).collect();
        self.progress_at(&targets)
    }

    /// Progress of every goal at the given database targets (one per goal).
    fn progress_at(&self, targets: &[usize]) -> Vec<GoalProgress> {
        self.config
            .goals
            .iter()
            .zip(targets)
            .map(|(goal, &t)| {
                let b = self.db.bounds(t);
                let pps = |load: Option<Load>| load.map(|l| self.grid.pps(l));
                GoalProgress::new(goal, pps(b.clo), pps(b.chi))
            })
            .collect()
    }

    /// The result per goal, from its final target.
    fn results(&self) -> Vec<GoalResult> {
        let finals: Vec<usize> = self.chains.iter().map(|c| c[c.len() - 1]).collect();
        let progress = self.progress_at(&finals);
        self.config
            .goals
            .iter()
            .zip(finals)
            .zip(progress)
            .map(|((goal, t), p)| {
                let clo = self.db.bounds(t).clo;
                let target = self.db.target(t);
                let conditional_throughput = clo.map(|clo| {
                    let ratio = self.db.stat(clo, t).pessimistic_loss_ratio(target);
                    self.grid.pps(clo) * (1.0 - ratio)
                });
                GoalResult {
                    goal: goal.clone(),
                    conditional_throughput,
                    relevant_lower_bound: p.lower_bound,
                    relevant_upper_bound: p.upper_bound,
                    achieved_width: p.width,
                }
            })
            .collect()
    }
}
