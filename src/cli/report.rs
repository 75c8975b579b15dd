//! `benchlab report DIR [-o OUT]`: parses the arguments, runs the report pipeline
//! ([`report::from_dir`](crate::report::from_dir)), and prints what it wrote and what could not
//! be measured.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::dut::KNOWN_PRESETS;
use crate::ingest::escaped;
use crate::report::settings::MinistatGeneration;
use crate::report::verdict::{shared_level, Finding};
use crate::report::{from_dir, Overrides, Report, Written};

/// Arguments of `benchlab report`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Results directory: netbenches bench.* logs in it, in its RAW/ or raw/ folder, or in one
    /// subfolder per variant (RAW.1rx, RAW.8rx: the variant joins the config set), and an optional
    /// report.toml with keys title, lines (setup bullets), versions, configs, ministat, and a
    /// [labels] table of display names
    // The text is --help's, where brackets name a TOML table, not a link.
    #[allow(rustdoc::broken_intra_doc_links)]
    pub(crate) dir: PathBuf,

    /// Write the report into OUT instead of DIR (created if missing)
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub(crate) output: Option<PathBuf>,

    /// Versions (netbenches images) to report, in this order; the first is the reference
    /// [default: report.toml's, else all, oldest first (revision, then release), else in the
    /// logs' order]
    #[arg(long, value_delimiter = ',', value_name = "A,B,…")]
    pub(crate) versions: Option<Vec<String>>,

    /// Config sets to report, in this order; the first is the reference
    /// [default: report.toml's, else all in the logs' order]
    #[arg(long, value_delimiter = ',', value_name = "A,B,…")]
    pub(crate) configs: Option<Vec<String>>,

    /// ministat generation the archive's tables were made with: current, legacy (the old
    /// relative confidence interval) or accurate (exactly rounded Stddev) [default:
    /// report.toml's, else the one that reproduces the archive's own README.md, else current]
    #[arg(long, value_name = "GENERATION")]
    pub(crate) ministat: Option<MinistatGeneration>,
}

/// Prints what the report could not measure, one line each, and how many trials were flagged
/// or measured twice (the README lists them).
pub(crate) fn print_warnings(
    report: &Report,
    out_dir: &Path,
    err: &mut dyn Write,
) -> std::io::Result<()> {
    for warning in &report.warnings {
        writeln!(err, "warning: {warning}")?;
    }
    for line in report.unreliable() {
        writeln!(err, "warning: {line}")?;
    }
    if !report.flagged.is_empty() {
        writeln!(
            err,
            "note: {} trial(s) flagged or measured twice, counted in the statistics: see {}",
            report.flagged.len(),
            out_dir.join("README.md").display()
        )?;
    }
    Ok(())
}

/// Prints the verdicts, one line each, as the README's first table has them: the last lines of
/// `benchlab run` and `benchlab report`. Nothing when nothing was compared.
pub(crate) fn print_verdicts(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    if report.verdicts.is_empty() {
        return Ok(());
    }
    let level = match shared_level(&report.verdicts) {
        Some(l) => format!("{l} % confidence"),
        None => "each at its confidence".to_string(),
    };
    writeln!(out, "verdicts ({level}; the README opens with them):")?;
    for v in &report.verdicts {
        let mut facts = vec![v.kind().to_string(), v.used_text()];
        facts.extend(v.speed_pps.map(|_| v.speed_text()));
        // A spoiled difference shows no figure here: the line would read as a finding.
        let figure = match v.finding() {
            Finding::Unreliable | Finding::NoEstimate => String::new(),
            _ => format!(", {} ({})", v.change_text(), facts.join(", ")),
        };
        let context = match v.context.is_empty() {
            true => String::new(),
            false => format!("{}: ", v.context.join(", ")),
        };
        let line = format!(
            "  {context}{} vs {}: {}{figure}",
            v.subject_label,
            v.reference_label,
            v.verdict_text()
        );
        // Names come from results files: no control character of theirs reaches the terminal.
        writeln!(out, "{}", escaped(&line))?;
    }
    Ok(())
}

/// Runs `benchlab report`.
pub(crate) fn run(args: Args, out: &mut dyn Write, err: &mut dyn Write) -> anyhow::Result<i32> {
    let overrides = Overrides {
        versions: args.versions,
        configs: args.configs,
        ministat: args.ministat,
    };
    let out_dir = args.output.as_deref().unwrap_or(&args.dir).to_path_buf();
    let Written { report, files } = from_dir(&args.dir, &out_dir, overrides, KNOWN_PRESETS)?;
    print_warnings(&report, &out_dir, err)?;
    if let Some(why) = &report.flavor_reason {
        writeln!(err, "note: ministat {}: {why}", report.flavor.name())?;
    }
    let latency = match report.latency_blocks.len() {
        0 => String::new(),
        n => format!(" and {n} of latency"),
    };
    let comparisons = match report.blocks.len() {
        1 => "1 comparison".to_string(),
        n => format!("{n} comparisons"),
    };
    writeln!(
        out,
        "{} series, {comparisons}{latency}: wrote {} files into {}",
        report.series.len(),
        files,
        out_dir.display()
    )?;
    print_verdicts(&report, out)?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::{Results, Series};
    use crate::report::ReportOptions;

    /// A series whose first `troubled` iterations were unsteady.
    fn series(version: &str, values: &[f64], troubled: usize) -> Series {
        let mut s = Series::of_medians(version, "forwarding", "", values);
        for it in s.iterations.iter_mut().take(troubled) {
            it.troubles = vec!["unsteady".into()];
        }
        s
    }

    fn printed(series: Vec<Series>, advice: Option<&str>) -> String {
        let options = ReportOptions {
            trials_advice: advice.map(String::from),
            ..ReportOptions::default()
        };
        let results = Results {
            series,
            ..Results::default()
        };
        let report = Report::build(results, &options).unwrap();
        let mut out = Vec::new();
        print_verdicts(&report, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn each_verdict_is_one_line_and_a_spoiled_one_shows_no_figure() {
        let off = [1.0e6, 1.02e6, 0.99e6, 1.01e6, 1.0e6];
        let on = [1.1e6, 1.12e6, 1.09e6, 1.11e6, 1.1e6];
        let clean = vec![series("off", &off, 0), series("on", &on, 0)];
        assert_eq!(
            printed(clean, None),
            "verdicts (95 % confidence; the README opens with them):\n  \
             forwarding: on vs off: faster, +9.96 % ± 1.74 % (unpaired, 5 iterations each, \
             off at 1 Mpps)\n"
        );
        let spoiled = vec![series("off", &off, 0), series("on", &on, 4)];
        let text = printed(spoiled, Some("re-run"));
        assert!(
            text.ends_with(
                "  forwarding: on vs off: unreliable, no verdict: 4 of 5 on trials unsteady; \
                 re-run\n"
            ),
            "{text}"
        );
        assert!(printed(vec![series("off", &off, 0)], None).is_empty());
    }
}
