//! One selector per goal nominates the next trial for that goal (the reference's `Selector`,
//! `TargetedExpander` and its six strategies, after benchlab's guess at the final target). A
//! selector works on its goal's coarsest target first and moves to the next finer one once the
//! current one is reached, starting it from the bounds just found.

use super::grid::{handle, middle, Grid, Load, Width};
use super::stats::{Bounds, Database};

/// The strategies, in order of priority: the reference's, after benchlab's `Guess`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strategy {
    /// Where the relevant upper bound's forwarding rate says the bound is, while there is no
    /// lower bound and that is further down than the reference's next step would go (not in the
    /// reference).
    Guess,
    /// The middle between the initial bounds, when they are 1 to 2 target widths apart.
    Halve,
    /// The initial lower bound, re-measured at this target's duration.
    RefineLo,
    /// The initial upper bound, re-measured at this target's duration.
    RefineHi,
    /// External search downwards: no lower bound yet.
    ExtendLo,
    /// External search upwards: no upper bound yet.
    ExtendHi,
    /// Internal search between both bounds (or an external step, when closer).
    Bisect,
}

/// How many target widths below the upper bound a guess must land to be taken (4 % at the
/// default width): closer, a guess from a few per cent of loss did no better than the reference's
/// steps on the simulated DUTs of `benches/search.sh`, and a DUT that loses more under overload
/// than a cliff does (forwarding less the more it is offered) is guessed too low.
const GUESS_WIDTHS: Width = 8;

const STRATEGIES: [Strategy; 7] = [
    Strategy::Guess,
    Strategy::Halve,
    Strategy::RefineLo,
    Strategy::RefineHi,
    Strategy::ExtendLo,
    Strategy::ExtendHi,
    Strategy::Bisect,
];

/// A trial a selector asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Nomination {
    /// Grid load.
    pub(crate) load: Load,
    /// Seconds.
    pub(crate) duration: f64,
    /// The global width to set when this nomination wins.
    pub(crate) width: Width,
}

impl Nomination {
    /// The reference's `Candidate` order: lower load first (conservative), then longer trials,
    /// then the wider step; on a tie the earlier goal's nomination stays.
    pub(crate) fn beats(&self, other: &Nomination) -> bool {
        self.load < other.load
            || (self.load == other.load && self.duration > other.duration)
            || (self.load == other.load
                && self.duration == other.duration
                && self.width > other.width)
    }
}

/// The selector of one goal.
#[derive(Debug, Clone)]
pub(crate) struct Selector {
    /// Database indices of the goal's targets, coarsest first.
    targets: Vec<usize>,
    /// Position of the current target in `targets`.
    level: usize,
    /// Lower of the loads this target started from (the preceding target's relevant bound).
    initial_lower: Option<Load>,
    /// Upper of the loads this target started from.
    initial_upper: Option<Load>,
    /// The expander's next external-search width.
    next_width: Width,
    /// Bisect chose an upward external step: widen when it becomes the lower bound.
    expand_on_clo: bool,
    /// Bisect chose a downward external step: widen when it becomes the upper bound.
    expand_on_chi: bool,
    /// The strategy of the last nomination.
    current: Option<Strategy>,
    /// The current target's relevant bounds, refreshed before each decision.
    bounds: Bounds,
    /// A guess was nominated at this target: the DUT moved since the initial bounds were found,
    /// so they say nothing of where this target's bound lies.
    guessed: bool,
}

impl Selector {
    /// A selector over `targets` (database indices, coarsest first) starting from the loads of the
    /// initial trials.
    pub(crate) fn new(db: &Database, targets: Vec<usize>, lower: Load, upper: Load) -> Self {
        let mut selector = Self {
            targets,
            level: 0,
            initial_lower: Some(lower),
            initial_upper: Some(upper),
            next_width: 0,
            expand_on_clo: false,
            expand_on_chi: false,
            current: None,
            bounds: Bounds::default(),
            guessed: false,
        };
        selector.restart(db);
        selector
    }

    /// Database index of the target the selector works on now.
    pub(crate) fn current_target(&self) -> usize {
        self.targets[self.level]
    }

    /// Fresh strategies and expander for the current target.
    fn restart(&mut self, db: &Database) {
        let target = db.target(self.current_target());
        self.next_width = target.width;
        if let (Some(lo), Some(hi)) = (self.initial_lower, self.initial_upper) {
            self.next_width = self.next_width.max(hi - lo);
        }
        self.next_width *= target.expansion_coefficient;
        self.expand_on_clo = false;
        self.expand_on_chi = false;
        self.current = None;
        self.guessed = false;
    }

    /// The next trial this goal wants, or `None` when its final target is reached (or min load is
    /// an upper bound, or max load a lower bound).
    pub(crate) fn nominate(
        &mut self,
        db: &Database,
        grid: &Grid,
        global: Width,
    ) -> Option<Nomination> {
        self.bounds = db.bounds(self.current_target());
        self.current = None;
        loop {
            let duration = db.target(self.current_target()).trial_duration;
            for strategy in STRATEGIES {
                if let Some((load, width)) = self.try_strategy(strategy, db, grid, global) {
                    self.current = Some(strategy);
                    self.guessed |= strategy == Strategy::Guess;
                    return Some(Nomination {
                        load,
                        duration,
                        width,
                    });
                }
            }
            if self.level + 1 >= self.targets.len() {
                return None;
            }
            self.level += 1;
            (self.initial_lower, self.initial_upper) = (self.bounds.clo, self.bounds.chi);
            self.bounds = db.bounds(self.current_target());
            self.restart(db);
        }
    }

    /// Tells the selector its nomination at `load` was measured.
    pub(crate) fn won(&mut self, load: Load, db: &Database, global: &mut Width) {
        self.bounds = db.bounds(self.current_target());
        let expand = match self.current {
            Some(Strategy::ExtendHi) => self.bounds.clo == Some(load),
            Some(Strategy::ExtendLo) => self.bounds.chi == Some(load),
            Some(Strategy::Bisect) => {
                (self.expand_on_clo && self.bounds.clo == Some(load))
                    || (self.expand_on_chi && self.bounds.chi == Some(load))
            }
            _ => false,
        };
        if expand {
            // The external step did not find the bound it looked for: take bigger steps, all goals.
            self.next_width *= db.target(self.current_target()).expansion_coefficient;
            *global = self.next_width;
        }
    }

    /// The expander after a narrowing step of `width`.
    fn limit(&mut self, width: Width, db: &Database) {
        let target = db.target(self.current_target());
        self.next_width = width.max(target.width) * target.expansion_coefficient;
    }

    /// Whether measuring `load` can neither create nor improve a relevant bound.
    fn not_worth(&self, load: Load, target_width: Width) -> bool {
        let Bounds { clo, chi } = self.bounds;
        clo.is_some_and(|clo| clo >= load)
            || chi.is_some_and(|chi| chi <= load)
            || matches!((clo, chi), (Some(lo), Some(hi)) if hi - lo <= target_width)
    }

    fn try_strategy(
        &mut self,
        strategy: Strategy,
        db: &Database,
        grid: &Grid,
        global: Width,
    ) -> Option<(Load, Width)> {
        let tw = db.target(self.current_target()).width;
        let Bounds { clo, chi } = self.bounds;
        match strategy {
            Strategy::Guess => {
                // Before the final target, steps are short and the reference's are kept. Once
                // there is a lower bound, the bracket is halved instead: a DUT that forwards
                // less the more it is offered is guessed low, and guesses from each new upper
                // bound crept up from the lower one a width per load, 11 trials each.
                let chi = chi.filter(|_| self.level + 1 == self.targets.len() && clo.is_none())?;
                let load = handle(grid, self.forwarded(chi, db, grid), tw, None, Some(chi))?;
                let next = (chi - self.next_width.max(global)).min(chi - GUESS_WIDTHS * tw);
                // The expander is left as it was: a guess is no step of the external search.
                // Below `next`, the load is well under the upper bound and there is no lower one:
                // always worth measuring.
                (load < next).then_some((load, self.next_width))
            }
            Strategy::Halve => {
                let (lo, hi) = (self.initial_lower?, self.initial_upper?);
                if hi - lo > 2 * tw || hi - lo <= tw {
                    return None;
                }
                let load = middle(lo, hi, tw);
                self.refine(load, tw, db)
            }
            Strategy::RefineLo => self.refine(self.initial_lower?, tw, db),
            Strategy::RefineHi => self.refine(self.initial_upper?, tw, db),
            Strategy::ExtendLo => {
                let chi = chi.filter(|&chi| clo.is_none() && chi > 0)?;
                let width = self.next_width.max(global);
                let load = handle(grid, chi - width, tw, None, Some(chi))?;
                (!self.not_worth(load, tw)).then_some((load, width))
            }
            Strategy::ExtendHi => {
                let clo = clo.filter(|&clo| chi.is_none() && clo < grid.max())?;
                let width = self.next_width.max(global);
                let load = handle(grid, clo + width, tw, Some(clo), None)?;
                (!self.not_worth(load, tw)).then_some((load, width))
            }
            Strategy::Bisect => self.bisect(db, grid, global),
        }
    }

    /// Where the upper bound `chi` says this target's bound is, from what the DUT forwarded
    /// there (the reference's guess after the max-load trial, made again at the final target
    /// while it has no lower bound): a DUT whose speed fell since the bounds before were found,
    /// as a shared machine's does, is met in one step rather than in steps of a few widths that
    /// each take the duration sum.
    fn forwarded(&self, chi: Load, db: &Database, grid: &Grid) -> Load {
        let target = db.target(self.current_target());
        db.stat(chi, self.current_target())
            .typical_loss_ratio(target)
            .map_or(chi, |loss| grid.forwarded(chi, loss, target.loss_ratio))
    }

    /// Halve and the refinements: nominate `load` at the target width if still worth it.
    fn refine(&mut self, load: Load, tw: Width, db: &Database) -> Option<(Load, Width)> {
        if self.not_worth(load, tw) {
            return None;
        }
        self.limit(tw, db);
        Some((load, tw))
    }

    /// Internal search, unless an external step from the initial bounds would land closer to
    /// them than the middle does (bounds found for another goal may be far from this one's).
    /// After a guess, the middle: the initial bounds are stale, and the reference's steps down
    /// from them took a few widths per load where halving the bracket takes it all.
    fn bisect(&mut self, db: &Database, grid: &Grid, global: Width) -> Option<(Load, Width)> {
        let tw = db.target(self.current_target()).width;
        let clo = self.bounds.clo.filter(|&clo| clo < grid.max())?;
        let chi = self.bounds.chi.filter(|&chi| chi > 0)?;
        if chi - clo <= tw {
            return None;
        }
        let mid = middle(clo, chi, tw);
        if !self.guessed {
            if let Some(step) = self.external_step(clo, chi, mid, (grid, global), tw) {
                return Some(step);
            }
        }
        if self.not_worth(mid, tw) {
            return None;
        }
        (self.expand_on_clo, self.expand_on_chi) = (false, false);
        let step = (mid - clo).min(chi - mid);
        self.limit(step, db);
        Some((mid, step))
    }

    /// The reference's external step inside the bracket `clo`..`chi`: down from the upper bound
    /// or up from the lower one, when it lands between the middle `mid` and the initial bound.
    fn external_step(
        &mut self,
        clo: Load,
        chi: Load,
        mid: Load,
        (grid, global): (&Grid, Width),
        tw: Width,
    ) -> Option<(Load, Width)> {
        let width = self.next_width.max(global);
        if let Some(upper) = self.initial_upper.filter(|&upper| mid < upper) {
            let load = handle(grid, chi - width, tw, Some(clo), Some(chi));
            if let Some(load) = load.filter(|&load| load > mid && load < upper) {
                (self.expand_on_clo, self.expand_on_chi) = (false, true);
                return Some((load, width));
            }
        }
        if let Some(lower) = self.initial_lower.filter(|&lower| mid > lower) {
            let load = handle(grid, clo + width, tw, Some(clo), Some(chi));
            if let Some(load) = load.filter(|&load| load < mid && load > lower) {
                (self.expand_on_clo, self.expand_on_chi) = (true, false);
                return Some((load, width));
            }
        }
        None
    }
}
