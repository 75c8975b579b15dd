//! The exporter trait: each exporter turns the one [`Report`] model into files of one kind;
//! [`EXPORTERS`](crate::report::EXPORTERS) lists them all, so that adding an exporter is a file
//! implementing [`Exporter`] and a line in that list. The trait lives alone here so that the
//! exporters and their list import each other through no cycle.

use super::{OutputFile, Report};

/// Turns a report into files of one kind.
pub(crate) trait Exporter {
    /// The files of this kind for `report`, in memory; none when it has nothing to show.
    fn files(&self, report: &Report) -> anyhow::Result<Vec<OutputFile>>;
}
