//! The throughput part of a report: the NDR/PDR table (per version × config set × profile ×
//! goal: conditional throughput, bounds, trials, trial seconds) and one chart per search series
//! of loss ratio against offered load, its trials and the bounds found ([`chart`]).
//!
//! [`chart`]: crate::report::throughput::chart

use anyhow::Context;

use crate::ingest::benchlab::throughput::SearchRun;
use crate::report::{mean, Exporter, OutputFile, Report};
use crate::stats::{Flavor, Sample};
use crate::units::format_pps;

/// The loss charts of the searches.
pub(crate) mod chart;
/// One row per search: max load at start and end, results, noise.
pub(crate) mod searches;

/// One row of the NDR/PDR table: a goal of one (version, config set, profile), over its
/// searches (iterations).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GoalRow {
    /// Version name.
    pub(crate) version: String,
    /// Config set name.
    pub(crate) config: String,
    /// Traffic profile name.
    pub(crate) profile: String,
    /// Goal name (`NDR`).
    pub(crate) goal: String,
    /// Goal loss ratio.
    pub(crate) loss_ratio: f64,
    /// Conditional throughput of each search that has one, packets/s.
    pub(crate) throughput: Vec<f64>,
    /// Relevant lower and upper bound of the search whose conditional throughput is the
    /// median (the lower of the middle two): one search's pair, so the lower stays below the
    /// upper, which medians taken apart do not ensure. Packets/s.
    pub(crate) bounds: (Option<f64>, Option<f64>),
    /// Searches that finished (with a result).
    pub(crate) searches: usize,
    /// Trials of each search (warm-up and invalid ones included).
    pub(crate) trials: Vec<usize>,
    /// Trial seconds of each search.
    pub(crate) trial_seconds: Vec<f64>,
    /// Wall-clock seconds of each search.
    pub(crate) wall_seconds: Vec<f64>,
}

/// The (version, config set, profile) cells of `searches`, in their order, each with its runs.
pub(crate) fn cells(searches: &[SearchRun]) -> Vec<Vec<&SearchRun>> {
    let mut cells: Vec<Vec<&SearchRun>> = Vec::new();
    for run in searches {
        let same = |c: &&mut Vec<&SearchRun>| {
            let first = c[0];
            (&first.version, &first.config, &first.profile)
                == (&run.version, &run.config, &run.profile)
        };
        match cells.iter_mut().find(same) {
            Some(cell) => cell.push(run),
            None => cells.push(vec![run]),
        }
    }
    cells
}

/// The table's rows: per cell, one per goal of its first finished search.
pub(crate) fn rows(report: &Report) -> Vec<GoalRow> {
    let mut rows = Vec::new();
    for cell in cells(&report.searches) {
        let results: Vec<_> = (cell.iter())
            .filter_map(|r| r.record.result.as_ref().map(|res| (r, res)))
            .collect();
        let Some((first, result)) = results.first() else {
            continue;
        };
        for (g, goal) in result.goals.iter().enumerate() {
            let of = |f: &dyn Fn(&crate::search::GoalResult) -> Option<f64>| -> Vec<f64> {
                (results.iter())
                    .filter_map(|(_, res)| res.goals.get(g).and_then(f))
                    .collect()
            };
            rows.push(GoalRow {
                version: first.version.clone(),
                config: first.config.clone(),
                profile: first.profile.clone(),
                goal: goal.goal.name.clone(),
                loss_ratio: goal.goal.loss_ratio,
                throughput: of(&|g| g.conditional_throughput),
                bounds: middle_bounds(results.iter().filter_map(|(_, res)| res.goals.get(g))),
                searches: results.len(),
                trials: results.iter().map(|(_, res)| res.trials.len()).collect(),
                trial_seconds: results.iter().map(|(_, res)| res.trial_seconds).collect(),
                wall_seconds: results.iter().map(|(r, _)| r.record.wall_s).collect(),
            });
        }
    }
    rows
}

/// The bounds of the goal result with the median conditional throughput (the lower of the
/// middle two; results without one sort first).
fn middle_bounds<'r>(
    results: impl Iterator<Item = &'r crate::search::GoalResult>,
) -> (Option<f64>, Option<f64>) {
    let mut results: Vec<_> = results.collect();
    let key = |g: &crate::search::GoalResult| g.conditional_throughput.unwrap_or(f64::MIN);
    results.sort_by(|a, b| key(a).total_cmp(&key(b)));
    results
        .get(results.len().saturating_sub(1) / 2)
        .map_or((None, None), |g| {
            (g.relevant_lower_bound, g.relevant_upper_bound)
        })
}

fn median(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| Sample::new(values.to_vec()).summary(Flavor::Current).median)
}

fn pps_or_dash(value: Option<f64>) -> String {
    value.map_or_else(|| "–".to_string(), format_pps)
}

/// The README's throughput section: the NDR/PDR table and the loss charts; empty without
/// searches.
pub(crate) fn markdown(report: &Report) -> String {
    let rows = rows(report);
    if report.searches.is_empty() {
        return String::new();
    }
    let mut md = String::from(
        "\n## Throughput (NDR/PDR)\n\nOne search per iteration (draft-ietf-bmwg-mlrsearch, or \
         RFC 2544's binary search). Conditional throughput: the median over the searches \
         (min – max); bounds: the relevant lower and upper bound of the median search; trials, \
         trial seconds and wall seconds: the mean per search.\n\n\
         | version | config set | profile | goal | loss ≤ | searches | conditional throughput \
         | min – max | lower bound | upper bound | trials | trial s | wall s |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for row in &rows {
        let lo = row.throughput.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = row.throughput.iter().copied().fold(0.0, f64::max);
        let range = if row.throughput.is_empty() {
            "–".to_string()
        } else {
            format!("{} – {}", format_pps(lo), format_pps(hi))
        };
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} % | {} | {} | {range} | {} | {} | {:.1} | {:.0} | {:.0} |\n",
            report.label(&row.version),
            report.label(&row.config),
            row.profile,
            row.goal,
            100.0 * row.loss_ratio,
            row.searches,
            pps_or_dash(median(&row.throughput)),
            pps_or_dash(row.bounds.0),
            pps_or_dash(row.bounds.1),
            mean(row.trials.iter().map(|&n| n as f64)),
            mean(row.trial_seconds.iter().copied()),
            mean(row.wall_seconds.iter().copied()),
        ));
    }
    md.push_str(&searches::markdown(&report.searches));
    md.push('\n');
    for c in chart::charts(report) {
        md.push_str(&format!("![{}]({})\n", c.title, c.file_name));
    }
    md
}

/// The loss charts of the throughput searches, as PNG files.
pub(crate) struct ThroughputExporter;

impl Exporter for ThroughputExporter {
    fn files(&self, report: &Report) -> anyhow::Result<Vec<OutputFile>> {
        let png = |c: &chart::LossChart| -> anyhow::Result<OutputFile> {
            Ok(OutputFile {
                name: c.file_name.clone(),
                bytes: chart::render_png(c).context("drawing the loss charts")?,
            })
        };
        chart::charts(report).iter().map(png).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::{Goal, GoalResult};

    #[test]
    fn the_bounds_shown_are_one_searchs_pair_so_lower_stays_below_upper() {
        let result = |ct: f64, lo: f64, hi: f64| GoalResult {
            goal: Goal::mlrsearch("PDR", 0.005),
            conditional_throughput: Some(ct),
            relevant_lower_bound: Some(lo),
            relevant_upper_bound: Some(hi),
            achieved_width: None,
        };
        // Medians taken apart would give 626 K and 565 K.
        let results = [result(688e3, 688e3, 691e3), result(561e3, 563e3, 565e3)];
        assert_eq!(middle_bounds(results.iter()), (Some(563e3), Some(565e3)));
        let three = [
            results[0].clone(),
            results[1].clone(),
            result(600e3, 601e3, 604e3),
        ];
        assert_eq!(middle_bounds(three.iter()), (Some(601e3), Some(604e3)));
        assert_eq!(middle_bounds([].iter()), (None, None));
    }
}
