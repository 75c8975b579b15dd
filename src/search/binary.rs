//! RFC 2544 (section 26.1) throughput by binary search: a trial at max load, then the geometric
//! middle between the highest good and the lowest bad load until they are at most the goal width
//! apart. One trial decides a load (no exceed ratio); goals are searched one after the other,
//! each starting from every trial so far (a trial is good or bad for every goal).

use super::{GoalProgress, GoalResult, SearchConfig, SearchEnd, SearchError, Session, TrialRunner};

/// A measured load.
#[derive(Debug, Clone, Copy)]
struct Point {
    load: f64,
    loss_ratio: f64,
}

/// The bounds of loss ratio `goal` among `points`: the lowest bad load, and the highest good load
/// below it (higher good loads are ignored: conservative, as MLRsearch's relevant bounds).
fn bounds(points: &[Point], goal: f64) -> (Option<Point>, Option<Point>) {
    let hi = points
        .iter()
        .filter(|p| p.loss_ratio > goal)
        .min_by(|a, b| a.load.total_cmp(&b.load))
        .copied();
    let lo = points
        .iter()
        .filter(|p| p.loss_ratio <= goal && hi.is_none_or(|h| p.load < h.load))
        .max_by(|a, b| a.load.total_cmp(&b.load))
        .copied();
    (lo, hi)
}

/// Runs the binary search of every goal between `config.min_load` and `max_load`.
pub(crate) fn run<R: TrialRunner>(
    config: &SearchConfig,
    max_load: f64,
    session: &mut Session<'_, R>,
) -> Result<(Vec<GoalResult>, SearchEnd), SearchError<R::Error>> {
    let mut points: Vec<Point> = Vec::new();
    let progress = |points: &[Point]| -> Vec<GoalProgress> {
        config
            .goals
            .iter()
            .map(|g| {
                let (lo, hi) = bounds(points, g.loss_ratio);
                GoalProgress::new(g, lo.map(|p| p.load), hi.map(|p| p.load))
            })
            .collect()
    };
    if config.warmup_duration > 0.0 {
        session.trial(max_load, config.warmup_duration, true, progress(&points))?;
    }
    let mut end = SearchEnd::GoalsReached;
    'goals: for goal in &config.goals {
        loop {
            let (lo, hi) = bounds(&points, goal.loss_ratio);
            let measured = |load: f64| points.iter().any(|p| p.load == load);
            let next = match hi {
                None if lo.is_some() => None,
                None => Some(max_load),
                Some(hi) => {
                    let lower = lo.map_or(config.min_load, |p| p.load);
                    if (hi.load - lower) / hi.load > goal.relative_width {
                        Some((lower * hi.load).sqrt())
                    } else {
                        // The min load was assumed good: confirm it once.
                        (lo.is_none() && !measured(config.min_load) && hi.load > config.min_load)
                            .then_some(config.min_load)
                    }
                }
            };
            let Some(load) = next else { break };
            if session.timed_out() {
                end = SearchEnd::Timeout;
                break 'goals;
            }
            let duration = goal.final_trial_duration;
            let (loss_ratio, _) = session.trial(load, duration, false, progress(&points))?;
            points.push(Point { load, loss_ratio });
        }
    }
    let results = config
        .goals
        .iter()
        .zip(progress(&points))
        .map(|(goal, p)| {
            let (lo, _) = bounds(&points, goal.loss_ratio);
            GoalResult {
                goal: goal.clone(),
                conditional_throughput: lo.map(|p| p.load * (1.0 - p.loss_ratio)),
                relevant_lower_bound: p.lower_bound,
                relevant_upper_bound: p.upper_bound,
                achieved_width: p.width,
            }
        })
        .collect();
    Ok((results, end))
}
