//! Reports: from [`Results`] to the files a results directory gets — README.md (the verdicts
//! first, then ministat tables), one PNG chart per traffic profile (and the latency charts),
//! results.json, and the netbenches harness's own `.pps` and `gnuplot.data`.
//!
//! [`from_dir`] is the whole pipeline: read a directory, settle the options, build, write.
//! [`Report::build`] selects and orders the series and computes every statistic once; the
//! [`EXPORTERS`] ([`harness`], [`chart`], [`flame`], [`markdown`], [`json`], …) turn that one
//! model into files. Nothing here prints; [`write_files`] writes atomically.
//!
//! ```no_run
//! # fn main() -> anyhow::Result<()> {
//! use benchlab::{ingest, report};
//! let dir = std::path::Path::new("results/fbsd12-head-vs-11-stable");
//! let results = ingest::netbenches::read_dir(dir)?;
//! let report = report::Report::build(results, &report::ReportOptions::default())?;
//! report::write_files(dir, &report.files()?)?;
//! # Ok(()) }
//! ```
//!
//! [`Results`]: crate::ingest::Results
//! [`from_dir`]: crate::report::pipeline::from_dir
//! [`Report::build`]: crate::report::Report::build
//! [`EXPORTERS`]: crate::report::EXPORTERS
//! [`harness`]: crate::report::harness
//! [`chart`]: crate::report::chart
//! [`flame`]: crate::report::flame
//! [`markdown`]: crate::report::markdown
//! [`json`]: crate::report::json
//! [`write_files`]: crate::report::output::write_files

use std::collections::BTreeMap;

use crate::error::InputError;
use crate::ingest::alternating::AlternatingRun;
use crate::ingest::{Results, Series};
use crate::stats::ministat::MIN_POINTS;
use crate::stats::{Flavor, Summary};
use select::{by_age, distinct, select};

/// The alternating design's section of the README and its time charts.
pub(crate) mod alternating;
/// The comparisons an archive's own README made.
pub(crate) mod archive;
/// PNG charts.
pub(crate) mod chart;
/// The comparisons: which series each `ministat -s` run compares.
pub(crate) mod compare;
/// The trait every exporter implements.
pub(crate) mod export;
/// Flamegraph SVGs of the DUT and the checks of their captures.
pub(crate) mod flame;
/// The netbenches harness's files: `<series>.pps` and `gnuplot.data`.
pub(crate) mod harness;
/// How the report words a host's facts.
pub(crate) mod host;
/// results.json.
pub(crate) mod json;
/// Latency under load: comparisons, first packet against established, charts.
pub(crate) mod latency;
/// README.md.
pub(crate) mod markdown;
/// Writing the files without overwriting anyone else's.
pub(crate) mod output;
/// The pipeline: a directory read, its report built and written.
pub(crate) mod pipeline;
/// Which ministat generation made an archive's own README.
pub(crate) mod reproduce;
/// Choosing and ordering the versions and config sets to report.
mod select;
/// `report.toml`.
pub(crate) mod settings;
/// The NDR/PDR table and the loss charts of throughput searches.
pub(crate) mod throughput;
/// The one-line description of a traffic profile.
pub(crate) mod traffic;
/// Each comparison once, with its best interval and a one-word verdict.
pub(crate) mod verdict;

pub(crate) use compare::{ComparisonBlock, Scope};
pub(crate) use export::Exporter;
pub use output::write_files;
pub(crate) use pipeline::{from_dir, Overrides, Written};

/// Every exporter, in the order their files are written: an exporter is a file implementing
/// [`Exporter`] and its line here.
pub(crate) const EXPORTERS: &[&dyn Exporter] = &[
    &harness::HarnessExporter,
    &chart::ChartExporter,
    &flame::FlameExporter,
    &alternating::AlternatingExporter,
    &throughput::ThroughputExporter,
    &latency::LatencyExporter,
    &markdown::MarkdownExporter,
    &json::JsonExporter,
];

/// A default title names this many versions at most.
const MAX_TITLE_NAMES: usize = 4;

/// What to report and how. Default: every version and config set in the logs' order, current
/// ministat, a title made from the names.
#[derive(Debug, Clone, Default)]
pub struct ReportOptions {
    /// Versions to report, in order (the first is the reference). Default is all of them.
    pub versions: Option<Vec<String>>,
    /// Config sets to report, in order (the first is the reference). Default is all of them.
    pub configs: Option<Vec<String>>,
    /// ministat generation for summaries and comparisons. Default is [`Flavor::Current`].
    pub flavor: Flavor,
    /// Title of the README and the graphs. Default is made from the version and config names.
    pub title: Option<String>,
    /// Setup lines the logs cannot tell (hardware, NICs, tuning). Default is none.
    pub lines: Vec<String>,
    /// Display names by name in the logs. Default is none.
    pub labels: BTreeMap<String, String>,
    /// For benchlab's trials design: what to advise when a difference is unreliable; its
    /// differences are then checked for it ([`stats::doubt`](crate::stats::doubt)). Default is
    /// none: the harness's archives and the alternating design's blocks are not checked.
    pub trials_advice: Option<String>,
    /// Comparisons to make first, in order: an archive's README's tables. Default is none.
    pub tables: Vec<archive::Table>,
}

/// A series as the report shows it.
#[derive(Debug, Clone)]
pub(crate) struct ReportedSeries {
    /// The series as read.
    pub(crate) series: Series,
    /// Its ministat legend: the `.pps` file name, with labels applied to its levels.
    pub(crate) legend: String,
    /// ministat's vitals of its iteration medians; `None` with fewer than 3 iterations.
    pub(crate) summary: Option<Summary>,
}

impl ReportedSeries {
    /// Summarises a series; what keeps it out of the statistics or the graph is a warning.
    fn new(s: Series, options: &ReportOptions, warnings: &mut Vec<String>) -> ReportedSeries {
        let medians = medians(&s);
        let summary = (medians.len() >= MIN_POINTS).then(|| Summary::of(&medians, options.flavor));
        if summary.is_none() {
            warnings.push(format!(
                "{}: {} iteration(s) measured, ministat needs {MIN_POINTS}; \
                 no statistics, left out of graphs and comparisons",
                s.name,
                medians.len()
            ));
        }
        if summary.is_some_and(|s| !chart::drawable(&s)) {
            warnings.push(format!(
                "{}: a value is not finite or too large to draw (inf, nan or near \
                 1.8e308 in the logs); left out of the graph",
                s.name
            ));
        }
        let levels: Vec<String> = [&s.version, &s.config, &s.profile]
            .into_iter()
            .filter(|l| !l.is_empty())
            .map(|l| label(&options.labels, l).to_string())
            .collect();
        let stem = if levels.is_empty() {
            s.name.clone()
        } else {
            levels.join(".")
        };
        ReportedSeries {
            legend: format!("{stem}.pps"),
            series: s,
            summary,
        }
    }
}

/// Everything a report shows, computed once.
#[derive(Debug, Clone)]
pub struct Report {
    /// Title of the README and graphs.
    pub(crate) title: String,
    /// Setup lines given by the user.
    pub(crate) lines: Vec<String>,
    /// ministat generation used.
    pub(crate) flavor: Flavor,
    /// Why that generation was chosen, when it was not asked for (set by
    /// the pipeline from `reproduce::choose`, which matches an archived README).
    pub(crate) flavor_reason: Option<String>,
    /// Versions in display order (asked for, else oldest first); the first is the reference.
    pub(crate) versions: Vec<String>,
    /// Config sets in display order; the first is the reference.
    pub(crate) configs: Vec<String>,
    /// Traffic profiles, in the logs' order.
    pub(crate) profiles: Vec<String>,
    /// Display names.
    pub(crate) labels: BTreeMap<String, String>,
    /// The selected series, in the logs' order (the harness's `ls` order).
    pub(crate) series: Vec<ReportedSeries>,
    /// The archive README's tables, then versions compared per (config set, profile), then
    /// config sets per (version, profile).
    pub(crate) blocks: Vec<ComparisonBlock>,
    /// Each comparison once, paired where the design has it: what the README opens with.
    pub(crate) verdicts: Vec<verdict::Verdict>,
    /// What could not be measured or compared, one sentence each.
    pub(crate) warnings: Vec<String>,
    /// Trials counted in the statistics whose checks found something (unsteady, DUT not
    /// saturated…) or that were measured twice, one line per trial.
    pub(crate) flagged: Vec<String>,
    /// How an iteration's figure was computed, in words.
    pub(crate) method: String,
    /// What sent each profile's traffic, when known ([`Results::generators`]).
    pub(crate) generators: BTreeMap<String, String>,
    /// Profiles of the DUT of the selected versions and config sets, checked.
    pub(crate) flames: Vec<flame::Flame>,
    /// The runs of the alternating design, when the campaign used it.
    pub(crate) alternating: Vec<AlternatingRun>,
    /// Throughput searches of the selected versions and config sets.
    pub(crate) searches: Vec<crate::ingest::benchlab::throughput::SearchRun>,
    /// Latency under load of the selected versions and config sets, per load.
    pub(crate) latency: Vec<crate::ingest::benchlab::latency::LatencySeries>,
    /// The lab's latency floor, when recorded.
    pub(crate) latency_floor: Option<crate::ingest::benchlab::latency::Floor>,
    /// The comparisons of the latency series' trials (P99, P50).
    pub(crate) latency_blocks: Vec<latency::LatencyBlock>,
    /// [`ReportOptions::trials_advice`].
    pub(crate) trials_advice: Option<String>,
    /// [`ReportOptions::tables`].
    pub(crate) tables: Vec<archive::Table>,
    /// The archive README's difference lines no table reproduces, with the reason, one line
    /// each (set by the pipeline, which read that README).
    pub(crate) unreproduced: Vec<String>,
}

/// A file of the report: its name in the output directory and its contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputFile {
    /// File name, relative to the output directory (`flame/…` for flamegraphs).
    pub(crate) name: String,
    /// Contents.
    pub(crate) bytes: Vec<u8>,
}

impl Report {
    /// Selects, orders and summarises the series and runs every comparison.
    ///
    /// A name in `options.versions`/`configs` that no series has is an [`InputError`].
    pub fn build(results: Results, options: &ReportOptions) -> Result<Report, InputError> {
        let Results {
            series,
            warnings,
            method,
            generators,
            captures,
            alternating,
            searches,
            latency,
            latency_floor,
        } = results;
        let versions = select("version", by_age(&series), options.versions.as_deref())?;
        let configs = select(
            "config set",
            distinct(series.iter().map(|s| &s.config)),
            options.configs.as_deref(),
        )?;
        let (flagged, warnings): (Vec<_>, Vec<_>) =
            (warnings.iter()).partition(|w| w.of_trial().is_some());
        let flagged = by_trial(&flagged);
        let mut warnings: Vec<String> = warnings.iter().map(ToString::to_string).collect();
        let series: Vec<ReportedSeries> = series
            .into_iter()
            .filter(|s| versions.contains(&s.version) && configs.contains(&s.config))
            .map(|s| ReportedSeries::new(s, options, &mut warnings))
            .collect();
        let profiles = distinct(series.iter().map(|s| &s.series.profile));
        let flames = (captures.iter())
            .filter(|c| versions.contains(&c.version) && configs.contains(&c.config))
            .map(flame::Flame::from_capture)
            .collect::<Result<Vec<_>, _>>()?;
        warnings.extend(flames.iter().filter_map(flame::Flame::rejection));
        let searches = (searches.into_iter())
            .filter(|s| versions.contains(&s.version) && configs.contains(&s.config))
            .collect();
        let latency = (latency.into_iter())
            .filter(|s| versions.contains(&s.version) && configs.contains(&s.config))
            .collect();
        let title = (options.title.clone())
            .unwrap_or_else(|| default_title(&options.labels, &versions, &configs));
        let mut report = Report {
            title,
            lines: options.lines.clone(),
            flavor: options.flavor,
            flavor_reason: None,
            versions,
            configs,
            profiles,
            labels: options.labels.clone(),
            series,
            blocks: Vec::new(),
            verdicts: Vec::new(),
            warnings,
            flagged,
            method,
            generators,
            flames,
            alternating,
            searches,
            latency,
            latency_floor,
            latency_blocks: Vec::new(),
            trials_advice: options.trials_advice.clone(),
            tables: options.tables.clone(),
            unreproduced: Vec::new(),
        };
        report.blocks = report.comparison_blocks()?;
        report.latency_blocks = report.latency_blocks()?;
        // The latency verdicts after the throughput ones: the throughput is the result.
        report.verdicts = report.verdict_list();
        report.verdicts.extend(report.latency_verdicts());
        Ok(report)
    }

    /// The display name of a version, config set or profile.
    pub(crate) fn label<'a>(&'a self, name: &'a str) -> &'a str {
        label(&self.labels, name)
    }

    /// The display name of a version; a run without a version level ran one DUT build.
    pub(crate) fn version_label<'a>(&'a self, version: &'a str) -> &'a str {
        match version {
            "" if !self.labels.contains_key("") => "DUT",
            _ => self.label(version),
        }
    }

    /// Index of the series for a (version, config, profile) cell that has statistics.
    fn find(&self, version: &str, config: &str, profile: &str) -> Option<usize> {
        self.series.iter().position(|s| {
            s.summary.is_some()
                && s.series.version == version
                && s.series.config == config
                && s.series.profile == profile
        })
    }

    /// Every file of the report, in memory: nothing is written until all of them are ready.
    pub fn files(&self) -> anyhow::Result<Vec<OutputFile>> {
        let mut files = Vec::new();
        for exporter in EXPORTERS {
            files.extend(exporter.files(self)?);
        }
        Ok(files)
    }

    /// Series with statistics, in the logs' order.
    pub(crate) fn summarised(&self) -> impl Iterator<Item = (&ReportedSeries, &Summary)> {
        self.series
            .iter()
            .filter_map(|s| s.summary.as_ref().map(|summary| (s, summary)))
    }
}

/// `A vs B vs C: forwarding, pf` from the names, labels applied; runs without a version or
/// config level have nothing to name there.
fn default_title(
    labels: &BTreeMap<String, String>,
    versions: &[String],
    configs: &[String],
) -> String {
    let names = |list: &[String]| -> Vec<String> {
        (list.iter())
            .filter(|name| !name.is_empty() || labels.contains_key(""))
            .map(|name| label(labels, name).to_string())
            .collect()
    };
    let mut versions = names(versions);
    if versions.len() > MAX_TITLE_NAMES {
        let more = format!("… ({} versions)", versions.len());
        versions.truncate(MAX_TITLE_NAMES - 1);
        versions.push(more);
    }
    [versions.join(" vs "), names(configs).join(", ")]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(": ")
}

/// The iteration medians of a series as its `.pps` file holds them (8 significant digits), in
/// its order: every table is then what `ministat` prints for the `.pps` files beside it.
pub(crate) fn medians(series: &Series) -> Vec<f64> {
    (series.iterations.iter())
        .map(|i| harness::as_written(i.median_pps))
        .collect()
}

/// One line per trial flagged or measured twice (a trial may be both), in the order met:
/// `default.forwarding.inet4.3: crowded: …; measured twice, one attempt left out (…)`.
fn by_trial(warnings: &[&crate::ingest::Warning]) -> Vec<String> {
    let mut trials: Vec<(&str, Vec<String>)> = Vec::new();
    for (trial, what) in warnings.iter().filter_map(|w| w.of_trial()) {
        match trials.iter_mut().find(|(t, _)| *t == trial) {
            Some((_, found)) => found.push(what),
            None => trials.push((trial, vec![what])),
        }
    }
    (trials.into_iter())
        .map(|(trial, found)| crate::ingest::escaped(&format!("{trial}: {}", found.join("; "))))
        .collect()
}

/// The mean of `values`; 0 for none (a table cell or a share with nothing to average).
pub(crate) fn mean(values: impl ExactSizeIterator<Item = f64>) -> f64 {
    match values.len() {
        // Not `-0`, which an empty sum of floats is.
        0 => 0.0,
        n => values.sum::<f64>() / n as f64,
    }
}

fn label<'a>(labels: &'a BTreeMap<String, String>, name: &'a str) -> &'a str {
    match labels.get(name) {
        Some(label) => label,
        None if name.is_empty() => "(none)",
        None => name,
    }
}

#[cfg(test)]
mod tests;
