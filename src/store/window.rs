//! Which seconds of a trial the analysis keeps, one rule for its packet rates
//! (`samples.csv`, [`measured`](crate::store::measured)) and its latency histograms
//! (`latency.hlog`): those after the warm-up and before the cool-down.

use crate::config::Trial;

/// The seconds of traffic the analysis keeps of a trial, from its start: after the warm-up,
/// before the cool-down.
pub(crate) fn measured_window(trial: &Trial) -> (f64, f64) {
    let secs = crate::config::secs;
    let end = trial.duration.saturating_sub(trial.cooldown);
    (secs(trial.warmup), secs(end))
}

/// Whether the stretch `from`..`to` (seconds of traffic) lies wholly inside `window`; the
/// microsecond of slack absorbs the files' decimal seconds.
pub(crate) fn in_window(from: f64, to: f64, (first, last): (f64, f64)) -> bool {
    from >= first - 1e-6 && to <= last + 1e-6
}
