//! The exporters: each turns the one [`Report`] model into files of one kind, and
//! [`EXPORTERS`] lists them all, so that adding an exporter is a file implementing
//! [`Exporter`] and a line in that list.

use super::{alternating, chart, flame, harness, json, markdown, throughput};
use super::{OutputFile, Report};

/// Turns a report into files of one kind.
pub trait Exporter {
    /// The files of this kind for `report`, in memory; none when it has nothing to show.
    fn files(&self, report: &Report) -> anyhow::Result<Vec<OutputFile>>;
}

/// Every exporter, in the order their files are written.
pub const EXPORTERS: &[&dyn Exporter] = &[
    &harness::HarnessExporter,
    &chart::ChartExporter,
    &flame::FlameExporter,
    &alternating::AlternatingExporter,
    &throughput::ThroughputExporter,
    &markdown::MarkdownExporter,
    &json::JsonExporter,
];

impl Report {
    /// Every file of the report, in memory: nothing is written until all of them are ready.
    pub fn files(&self) -> anyhow::Result<Vec<OutputFile>> {
        let mut files = Vec::new();
        for exporter in EXPORTERS {
            files.extend(exporter.files(self)?);
        }
        Ok(files)
    }
}
