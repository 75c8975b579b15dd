//! The files bench-lab-ministat.sh writes, byte for byte: `<series>.pps` (one `%.8g` median per
//! iteration, in `ls` order) and `gnuplot.data` (`#index median minimum maximum`, one row per
//! series with statistics, the fields of `ministat -n` printed `%.8g`).

use crate::report::{Exporter, OutputFile, Report};
use crate::stats::fmt_g;

/// A median as its `.pps` line gives it back: `%.8g`, read again as ministat reads it.
pub(crate) fn as_written(median: f64) -> f64 {
    crate::stats::strtod::strtod(fmt_g(median, 8).as_bytes()).0
}

/// File name of the per-series summary table.
pub(crate) const GNUPLOT_DATA: &str = "gnuplot.data";

/// One `.pps` file per series: a line per iteration ministat accepted, an empty line where the
/// 2016 harness wrote one, so a series without any value has a 0-byte file (the harness's
/// `>>` creates it all the same).
pub(crate) fn pps_files(report: &Report) -> Vec<OutputFile> {
    report
        .series
        .iter()
        .map(|s| {
            let mut text = String::new();
            let mut values = s.series.iterations.iter();
            for line in 0..s.series.iterations.len() + s.series.pps_blanks.len() {
                if !s.series.pps_blanks.contains(&line) {
                    if let Some(iteration) = values.next() {
                        text.push_str(&fmt_g(iteration.median_pps, 8));
                    }
                }
                text.push('\n');
            }
            OutputFile {
                name: format!("{}.pps", s.series.name),
                bytes: text.into_bytes(),
            }
        })
        .collect()
}

/// `gnuplot.data`: `ministat -n X.pps | tail -n -1 | awk '{print id " " $5 " " $3 " " $4}'` for
/// every series, so only series ministat accepts (3 iterations or more) have a row.
pub(crate) fn gnuplot_data(report: &Report) -> String {
    let mut text = String::from("#index median minimum maximum\n");
    for (series, summary) in report.summarised() {
        let fields = [summary.median, summary.min, summary.max].map(|v| fmt_g(v, 8));
        text.push_str(&format!("{} {}\n", series.series.name, fields.join(" ")));
    }
    text
}

/// The harness's files: the `.pps` files, then `gnuplot.data`.
pub(crate) struct HarnessExporter;

impl Exporter for HarnessExporter {
    fn files(&self, report: &Report) -> anyhow::Result<Vec<OutputFile>> {
        let mut files = pps_files(report);
        files.push(OutputFile {
            name: GNUPLOT_DATA.to_string(),
            bytes: gnuplot_data(report).into_bytes(),
        });
        Ok(files)
    }
}
