//! results.json: every number behind the report, for scripts and later re-analysis, in the
//! schema docs/results-json.md describes
//! ([`SCHEMA_VERSION`](crate::report::json::SCHEMA_VERSION)).
//!
//! Rates are in packets per second, unscaled. Series come in the logs' order; each comparison
//! and verdict names its series by their `.pps` stem (`name`).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::ingest::{Iteration, Traffic};
use crate::report::flame::{self, CaptureCheck};
use crate::report::latency::json as latency;
use crate::report::verdict::{Finding, Verdict};
use crate::report::{Exporter, OutputFile, Report, Scope};
use crate::stats::{Flavor, Summary};

/// File name of the JSON export.
pub(crate) const RESULTS_JSON: &str = "results.json";

/// The version of results.json's schema: raised when a field changes meaning or goes away, not
/// when one is added. 2 added `verdicts` (1 had no `schema_version`).
pub(crate) const SCHEMA_VERSION: u32 = 2;

#[derive(Serialize)]
struct Document<'a> {
    schema_version: u32,
    title: &'a str,
    ministat: Flavor,
    confidence_pct: f64,
    versions: &'a [String],
    configs: &'a [String],
    profiles: &'a [String],
    labels: &'a BTreeMap<String, String>,
    series: Vec<SeriesJson<'a>>,
    comparisons: Vec<BlockJson<'a>>,
    verdicts: Vec<VerdictJson<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    flamegraphs: Vec<FlameJson<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    latency: Vec<latency::LatencyJson<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    latency_floor: Option<latency::FloorJson>,
    warnings: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    flagged: &'a [String],
}

#[derive(Serialize)]
struct FlameJson<'a> {
    version: &'a str,
    config: &'a str,
    profile: &'a str,
    trial: &'a str,
    check: &'a CaptureCheck,
    svg: Option<String>,
    diff_svg: Option<String>,
}

#[derive(Serialize)]
struct SeriesJson<'a> {
    name: &'a str,
    version: &'a str,
    config: &'a str,
    profile: &'a str,
    legend: &'a str,
    uname: Option<&'a str>,
    traffic: Option<TrafficJson<'a>>,
    iterations: Vec<IterationJson<'a>>,
    summary: Option<&'a Summary>,
}

#[derive(Serialize)]
struct TrafficJson<'a> {
    command: &'a str,
    packet_bytes: Option<u32>,
    ip_version: u8,
    source: Option<&'a str>,
    destination: Option<&'a str>,
    flows: Option<u128>,
}

#[derive(Serialize)]
struct IterationJson<'a> {
    index: u32,
    median_pps: f64,
    samples: usize,
    offered_pps: Option<f64>,
    source: &'a str,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    troubles: &'a [String],
}

#[derive(Serialize)]
struct BlockJson<'a> {
    varies: &'static str,
    version: Option<&'a str>,
    config: Option<&'a str>,
    profile: Option<&'a str>,
    reference: &'a str,
    /// The run's confidence: 95, or the level an archive's own table was made at (`-c`).
    confidence_pct: f64,
    compared: Vec<ComparedJson<'a>>,
}

#[derive(Serialize)]
struct ComparedJson<'a> {
    series: &'a str,
    significant: bool,
    difference: f64,
    difference_ci: f64,
    relative_pct: f64,
    relative_ci_pct: f64,
    pooled_s: f64,
    /// Why a significant difference of the trials design is not to be believed.
    #[serde(skip_serializing_if = "Option::is_none")]
    unreliable: Option<&'a str>,
}

#[derive(Serialize)]
struct VerdictJson<'a> {
    metric: &'static str,
    context: &'a [String],
    reference: &'a str,
    subject: &'a str,
    reference_label: &'a str,
    subject_label: &'a str,
    estimate: &'static str,
    confidence_pct: Option<f64>,
    change_pct: Option<f64>,
    low_pct: Option<f64>,
    high_pct: Option<f64>,
    half_width_pct: Option<f64>,
    significant: bool,
    unit: &'static str,
    reference_used: usize,
    subject_used: usize,
    left_out: usize,
    speed_pps: Option<f64>,
    speed_level: Option<String>,
    verdict: Finding,
    text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    unreliable: Option<&'a str>,
}

/// The JSON document, pretty-printed.
pub(crate) fn results_json(report: &Report) -> serde_json::Result<Vec<u8>> {
    let series = report
        .series
        .iter()
        .map(|s| SeriesJson {
            name: &s.series.name,
            version: &s.series.version,
            config: &s.series.config,
            profile: &s.series.profile,
            legend: &s.legend,
            uname: s.series.setup.uname.as_deref(),
            traffic: s.series.setup.traffic.as_ref().map(traffic),
            iterations: s.series.iterations.iter().map(iteration).collect(),
            summary: s.summary.as_ref(),
        })
        .collect();
    let comparisons = comparisons(report);
    let document = Document {
        schema_version: SCHEMA_VERSION,
        title: &report.title,
        ministat: report.flavor,
        confidence_pct: 95.0,
        versions: &report.versions,
        configs: &report.configs,
        profiles: &report.profiles,
        labels: &report.labels,
        series,
        comparisons,
        verdicts: report.verdicts.iter().map(verdict).collect(),
        flamegraphs: flamegraphs(report),
        latency: latency::series(report),
        latency_floor: latency::floor(report.latency_floor.as_ref()),
        warnings: &report.warnings,
        flagged: &report.flagged,
    };
    let mut bytes = serde_json::to_vec_pretty(&document)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Each comparison block: what varies, what is fixed, and each member against the reference.
fn comparisons(report: &Report) -> Vec<BlockJson<'_>> {
    let name = |i: usize| report.series[i].series.name.as_str();
    report
        .blocks
        .iter()
        .map(|block| {
            let (varies, version, config, profile) = match &block.scope {
                Scope::Versions { config, profile } => (
                    "version",
                    None,
                    Some(config.as_str()),
                    Some(profile.as_str()),
                ),
                Scope::Configs { version, profile } => (
                    "config",
                    Some(version.as_str()),
                    None,
                    Some(profile.as_str()),
                ),
                Scope::Profiles { version, config } => (
                    "profile",
                    Some(version.as_str()),
                    Some(config.as_str()),
                    None,
                ),
            };
            BlockJson {
                varies,
                version,
                config,
                profile,
                reference: name(block.members[0]),
                confidence_pct: block.confidence.percent(),
                compared: (block.members[1..].iter())
                    .zip(&block.comparisons)
                    .zip(&block.doubts)
                    .map(|((&i, c), doubt)| ComparedJson {
                        series: name(i),
                        significant: c.significant,
                        difference: c.difference,
                        difference_ci: c.difference_ci,
                        relative_pct: c.relative_pct,
                        relative_ci_pct: c.relative_ci_pct,
                        pooled_s: c.pooled_s,
                        unreliable: doubt.as_deref(),
                    })
                    .collect(),
            }
        })
        .collect()
}

/// One verdict: what results.json's `verdicts` holds for a script to act on.
fn verdict(v: &Verdict) -> VerdictJson<'_> {
    let interval = v.interval();
    let used = v.used();
    VerdictJson {
        metric: v.metric.name(),
        context: &v.context,
        reference: &v.reference,
        subject: &v.subject,
        reference_label: &v.reference_label,
        subject_label: &v.subject_label,
        estimate: v.kind(),
        confidence_pct: interval.map(|i| i.confidence_pct),
        change_pct: interval.map(|i| i.change_pct),
        low_pct: interval.map(|i| i.low_pct),
        high_pct: interval.map(|i| i.high_pct),
        half_width_pct: interval.map(|i| i.half_width_pct),
        significant: v.significant(),
        unit: if v.paired() { "blocks" } else { "iterations" },
        reference_used: used.reference,
        subject_used: used.subject,
        left_out: used.left_out,
        speed_pps: v.speed_pps,
        speed_level: v.speed_pps.map(|_| v.speed_text()),
        verdict: v.finding(),
        text: v.verdict_text(),
        unreliable: v.unreliable.as_deref(),
    }
}

/// Every capture with its check, and the SVGs drawn of it.
fn flamegraphs(report: &Report) -> Vec<FlameJson<'_>> {
    let links = flame::links(report);
    let file = |i: usize, diff: bool| {
        (links.iter())
            .find(|l| l.flame == i && l.against.is_some() == diff)
            .map(|l| l.file.clone())
    };
    (report.flames.iter().enumerate())
        .map(|(i, f)| FlameJson {
            version: &f.version,
            config: &f.config,
            profile: &f.profile,
            trial: &f.trial,
            check: &f.check,
            svg: file(i, false),
            diff_svg: file(i, true),
        })
        .collect()
}

fn traffic(t: &Traffic) -> TrafficJson<'_> {
    TrafficJson {
        command: &t.command,
        packet_bytes: t.packet_bytes,
        ip_version: t.ip_version,
        source: t.source.as_ref().map(|r| r.text.as_str()),
        destination: t.destination.as_ref().map(|r| r.text.as_str()),
        flows: t.flows(),
    }
}

fn iteration(i: &Iteration) -> IterationJson<'_> {
    IterationJson {
        index: i.index,
        median_pps: i.median_pps,
        samples: i.samples,
        offered_pps: i.offered_pps,
        source: &i.source,
        troubles: &i.troubles,
    }
}

/// results.json.
pub(crate) struct JsonExporter;

impl Exporter for JsonExporter {
    fn files(&self, report: &Report) -> anyhow::Result<Vec<OutputFile>> {
        Ok(vec![OutputFile {
            name: RESULTS_JSON.to_string(),
            bytes: results_json(report)?,
        }])
    }
}
