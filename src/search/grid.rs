//! The log-spaced load grid: loads are integers (grid steps above min load), widths are integer
//! differences, so that widening and narrowing are exact (the reference's `LoadRounding`,
//! `DiscreteLoad`, `DiscreteWidth`, `DiscreteInterval` and `LimitHandler`).
//!
//! Step `i` is `min_load * exp(i * unit)`; the unit is chosen so that every goal width is an
//! integer number of steps to within 1 % (never wider), as the reference's quality knobs do.

/// A load on the grid: steps above min load.
pub(crate) type Load = i64;
/// A width on the grid: a number of steps.
pub(crate) type Width = i64;

/// The reference's quality knobs: a goal width rounds to an integer width in
/// [QUALITY_LOWER, QUALITY_UPPER] of itself.
const QUALITY_LOWER: f64 = 0.99;
const QUALITY_UPPER: f64 = 0.999_999;

/// The grid between min and max load.
#[derive(Debug, Clone)]
pub(crate) struct Grid {
    min_load: f64,
    max_load: f64,
    /// The max load's step number (min load is step 0).
    max_int: Load,
    /// Natural log of the ratio of two neighbouring steps.
    unit: f64,
}

impl Grid {
    /// The grid from `min_load` to `max_load` (0 < min < max, both finite) fitting `widths`
    /// (each in (0, 1)).
    pub(crate) fn new(min_load: f64, max_load: f64, widths: &[f64]) -> Self {
        let span = max_load.ln() - min_load.ln();
        let max_int = find_steps(span, widths);
        Self {
            min_load,
            max_load,
            max_int,
            unit: span / max_int as f64,
        }
    }

    /// Step of the max load.
    pub(crate) fn max(&self) -> Load {
        self.max_int
    }

    /// Packets/s of step `load`, min or max load outside the grid.
    pub(crate) fn pps(&self, load: Load) -> f64 {
        if load <= 0 {
            self.min_load
        } else if load >= self.max_int {
            self.max_load
        } else {
            self.min_load * (load as f64 * self.unit).exp()
        }
    }

    /// Highest step at or below `pps` (0 below min load, the max step above max load).
    pub(crate) fn step_down(&self, pps: f64) -> Load {
        if pps.is_nan() || pps <= self.min_load {
            return 0;
        }
        if pps >= self.max_load {
            return self.max_int;
        }
        let mut step = ((pps / self.min_load).ln() / self.unit).floor() as Load;
        // The log and the exp may disagree in the last bit: settle on the exact grid value.
        while step > 0 && self.pps(step) > pps {
            step -= 1;
        }
        while step < self.max_int && self.pps(step + 1) <= pps {
            step += 1;
        }
        step
    }

    /// The highest step at or below what the DUT forwarded at `load` with `loss` lost, scaled up
    /// as if all of the extra load were lost for a goal allowing `goal_loss`: where a goal's
    /// bound likely is when `load` is well above it.
    pub(crate) fn forwarded(&self, load: Load, loss: f64, goal_loss: f64) -> Load {
        self.step_down(self.pps(load) * (1.0 - loss) / (1.0 - goal_loss))
    }

    /// Steps of a relative width `w` ((upper - lower) / upper), rounded down: never wider.
    pub(crate) fn width(&self, relative: f64) -> Width {
        ((-(-relative).ln_1p() / self.unit).floor() as Width).max(1)
    }
}

/// The reference's `_find_ints`: the fewest steps from min to max load such that each goal width
/// is an integer number of steps within the quality knobs.
fn find_steps(span: f64, widths: &[f64]) -> Load {
    let log_goals: Vec<f64> = widths.iter().map(|w| -(-w).ln_1p()).collect();
    let mut candidate: f64 = 1.0;
    // Each round either accepts or jumps past the current failure; 10^7 steps is far beyond any
    // validated configuration (a 0.0001 width over 1 pps..1 Tpps needs ~3*10^5).
    while candidate < 1e7 {
        let unit = span / candidate;
        let mut next = candidate + 1.0;
        let mut acceptable = true;
        for log_goal in &log_goals {
            let units = log_goal / unit;
            let quality = units.floor() / units;
            if !(QUALITY_LOWER..=QUALITY_UPPER).contains(&quality) {
                acceptable = false;
                let target = (units.floor() + 1.0) / QUALITY_UPPER;
                next = next.max(target / units * candidate);
            }
        }
        if acceptable {
            return candidate as Load;
        }
        candidate = next.ceil();
    }
    candidate as Load
}

/// The reference's `DiscreteInterval.middle`: a load between `lo` and `hi` (more than `goal`
/// apart) that splits them unevenly, one half a power-of-two multiple of the goal width, the
/// lower half the smaller one: conservative, and later halvings land on goal multiples.
pub(crate) fn middle(lo: Load, hi: Load, goal: Width) -> Load {
    let width = hi - lo;
    if width == 2 * goal {
        return lo + goal;
    }
    if width < 2 * goal {
        if goal % 2 == 0 && goal > 1 {
            return middle(lo, hi, goal / 2);
        }
        return lo + width / 2;
    }
    let (mut hi_width, mut lo_width) = (goal, width - goal);
    loop {
        let (hi2, lo2) = (hi_width * 2, width - hi_width * 2);
        if lo2 <= hi2 {
            // The more even of the two splits; the lower part is the smaller one.
            let lower = if hi_width * lo_width > hi2 * lo2 {
                hi_width
            } else {
                lo2
            };
            return lo + lower;
        }
        (hi_width, lo_width) = (hi2, lo2);
    }
}

/// The reference's `LimitHandler.handle`: `load` rounded away from the min/max loads and from the
/// bounds `clo`/`chi` by `width`, or `None` when there is no room left for a useful trial.
pub(crate) fn handle(
    grid: &Grid,
    load: Load,
    width: Width,
    clo: Option<Load>,
    chi: Option<Load>,
) -> Option<Load> {
    let load = load.clamp(0, grid.max());
    match (clo, chi) {
        (None, None) => with_excludes(load, width, 0, grid.max(), false, false),
        (None, Some(chi)) => {
            if chi <= 0 || load >= chi {
                return None;
            }
            with_excludes(load, width, 0, chi, false, true)
        }
        (Some(clo), None) => {
            if clo >= grid.max() || load <= clo {
                return None;
            }
            with_excludes(load, width, clo, grid.max(), true, false)
        }
        (Some(clo), Some(chi)) => {
            if !(clo < load && load < chi) {
                return None;
            }
            with_excludes(load, width, clo, chi, true, true)
        }
    }
}

/// Keeps `load` at least `width` from `minimum` and `maximum`; an excluded limit (a bound already
/// measured) cannot be returned, an included one (min or max load) can.
fn with_excludes(
    load: Load,
    width: Width,
    minimum: Load,
    maximum: Load,
    min_ex: bool,
    max_ex: bool,
) -> Option<Load> {
    if width >= maximum - minimum {
        return match (min_ex, max_ex) {
            (false, _) => Some(minimum),
            (true, false) => Some(maximum),
            (true, true) => None,
        };
    }
    let (mut soft_min, mut soft_max) = (minimum + width, maximum - width);
    if soft_min > soft_max {
        let mid = middle(minimum, maximum, width);
        (soft_min, soft_max) = (mid, mid);
    }
    if load < soft_min {
        return Some(if min_ex { soft_min } else { minimum });
    }
    if load > soft_max {
        return Some(if max_ex { soft_max } else { maximum });
    }
    Some(load)
}
