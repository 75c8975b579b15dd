//! Trends: the stored runs cut into series of one (lab, config set, profile, branch), each in
//! revision order (a date where a version names no revision), grouped by jumpavg. A review on
//! top of a revision is a variant: kept beside its revision, out of the grouping, so that a
//! patch under review never reads as the series' next step.

use serde::Serialize;

use super::db::StoredRun;
use super::revision::Revision;
use super::LabId;
use crate::stats::jumpavg::{self, Grouping, RunStats};

/// One run in a trend: a version measured once, with its iterations.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Point {
    /// The run's id in the database.
    pub(crate) run: i64,
    /// Its campaign's id.
    pub(crate) campaign: i64,
    /// The campaign's directory.
    pub(crate) source: String,
    /// Version name.
    pub(crate) version: String,
    /// The version's label in its campaign, when it has one.
    pub(crate) label: Option<String>,
    /// The version read as a revision, when it is one.
    pub(crate) revision: Option<Revision>,
    /// When the campaign ran, when known.
    pub(crate) date: Option<String>,
    /// The campaign's design.
    pub(crate) design: String,
    /// Every iteration's value (pps).
    pub(crate) values: Vec<f64>,
    /// Their average, population standard deviation and count (jumpavg's view of the run).
    pub(crate) avg: f64,
    /// Population standard deviation of the values.
    pub(crate) stdev: f64,
    /// Whether the run has a DUT profile (folded stacks) stored.
    pub(crate) profiled: bool,
    /// Whether its version is quick (sysctls and commands only: it can alternate).
    pub(crate) quick: bool,
    /// Its flamegraph (the report's SVG, else the recorded profile), when it was profiled.
    pub(crate) flamegraph: Option<String>,
}

impl Point {
    /// How the point is named on an axis: its label or version, and its date when it has no revision.
    pub(crate) fn axis_name(&self) -> String {
        let name = self.label.as_deref().unwrap_or(&self.version);
        match (&self.revision, &self.date) {
            (None, Some(date)) => format!("{name} ({})", &date[..date.len().min(10)]),
            _ => name.to_string(),
        }
    }
}

/// The runs of one (lab, config set, profile, branch), in order, and their groups.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Trend {
    /// The lab.
    pub(crate) lab: LabId,
    /// Config set.
    pub(crate) config: String,
    /// Traffic profile.
    pub(crate) profile: String,
    /// The versions' branch (`stable`, `current`), empty for none.
    pub(crate) branch: String,
    /// The runs in series order.
    pub(crate) points: Vec<Point>,
    /// Reviews and patches on top of a revision, each with the index in `points` of the last
    /// run at or before its revision (`None`: before the first).
    pub(crate) variants: Vec<(Option<usize>, Point)>,
    /// jumpavg's groups over `points`.
    pub(crate) grouping: Grouping,
}

impl Trend {
    /// The series in one line: `lab · config set · profile [branch]`.
    pub(crate) fn name(&self) -> String {
        let mut parts = vec![self.lab.name()];
        parts.extend(
            [&self.config, &self.profile, &self.branch]
                .into_iter()
                .filter(|s| !s.is_empty())
                .cloned(),
        );
        parts.join(" · ")
    }

    /// A file name for the series (`[A-Za-z0-9._-]` only).
    pub(crate) fn slug(&self) -> String {
        let raw = format!(
            "{}_{}_{}_{}_{}",
            self.lab.cpu, self.lab.nic, self.config, self.profile, self.branch
        );
        file_safe(&raw)
            .trim_matches('_')
            .chars()
            .take(120)
            .collect()
    }

    /// Whether every word of `filter` appears in the series' name or one of its versions
    /// (case ignored); an empty filter takes every series.
    pub(crate) fn matches(&self, filter: &str) -> bool {
        let name = self.name().to_lowercase();
        filter.split_whitespace().all(|word| {
            let word = word.to_lowercase();
            name.contains(&word) || self.points.iter().any(|p| p.version.to_lowercase() == word)
        })
    }
}

/// `text` with every character but `[A-Za-z0-9._-]` made `_`: a part of a file name.
pub(super) fn file_safe(text: &str) -> String {
    (text.chars())
        .map(|c| match c.is_ascii_alphanumeric() || "._-".contains(c) {
            true => c,
            false => '_',
        })
        .collect()
}

/// What jumpavg is given of a run: its average, one value, as CSIT feeds it. The groups'
/// spread is then the runs' spread, which on a shared machine moves from one run to the next
/// more than a run's iterations do (`benches/history_detect.rs`: at a 2 % run-to-run CV, 56 of
/// 200 stable histories read as changed when runs were given as their samples, 0 as their
/// averages).
pub fn run_stats(values: &[f64]) -> RunStats {
    RunStats::single(RunStats::of(values).avg)
}

/// Cuts `runs` into trends, orders and groups each; trends in lab, config set, profile order.
pub(crate) fn trends(runs: Vec<StoredRun>) -> Vec<Trend> {
    let mut by_series: std::collections::BTreeMap<_, Vec<StoredRun>> = Default::default();
    for run in runs.into_iter().filter(|r| !r.run.values.is_empty()) {
        let branch = (run.revision.as_ref()).map_or(String::new(), |r| r.branch.clone());
        let key = (
            run.lab.clone(),
            run.run.config.clone(),
            run.run.profile.clone(),
            branch,
        );
        by_series.entry(key).or_default().push(run);
    }
    by_series
        .into_iter()
        .map(|((lab, config, profile, branch), runs)| {
            let (points, variants) = order(runs);
            let stats: Vec<RunStats> = points.iter().map(|p| run_stats(&p.values)).collect();
            Trend {
                grouping: jumpavg::classify(&stats, None, None),
                lab,
                config,
                profile,
                branch,
                points,
                variants,
            }
        })
        .collect()
}

/// Series order: revisions by number, runs without one by date, then by campaign; a run of a
/// review goes beside the last run at or before its revision.
fn order(runs: Vec<StoredRun>) -> (Vec<Point>, Vec<(Option<usize>, Point)>) {
    let (mut main, reviews): (Vec<_>, Vec<_>) = runs
        .into_iter()
        .map(point)
        .partition(|p| p.revision.as_ref().is_none_or(|r| r.variant.is_empty()));
    let key = |p: &Point| {
        (
            p.revision.as_ref().map_or(i64::MAX, |r| r.order),
            p.date.clone().unwrap_or_default(),
            p.campaign,
            p.run,
        )
    };
    main.sort_by_key(key);
    let variants = reviews
        .into_iter()
        .map(|v| {
            let at = v.revision.as_ref().map_or(i64::MAX, |r| r.order);
            let before = main
                .iter()
                .rposition(|p| p.revision.as_ref().is_some_and(|r| r.order <= at));
            (before, v)
        })
        .collect();
    (main, variants)
}

fn point(r: StoredRun) -> Point {
    let stats = RunStats::of(&r.run.values);
    Point {
        run: r.id,
        campaign: r.campaign,
        source: r.source,
        version: r.run.version,
        label: r.run.label,
        revision: r.revision,
        date: r.date,
        design: r.design,
        avg: stats.avg,
        stdev: stats.stdev,
        values: r.run.values,
        profiled: r.run.folded.is_some(),
        quick: r.run.quick,
        flamegraph: r.run.flamegraph,
    }
}
