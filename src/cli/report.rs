//! `benchlab report DIR [-o OUT]`: parses the arguments, runs the report pipeline
//! ([`report::from_dir`](crate::report::from_dir)), and prints what it wrote and what could not
//! be measured.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::dut::KNOWN_PRESETS;
use crate::report::settings::MinistatGeneration;
use crate::report::{from_dir, Overrides, Report, Written};

/// Arguments of `benchlab report`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Results directory: netbenches bench.* logs in it, in its RAW/ or raw/ folder, or in one
    /// subfolder per variant (RAW.1rx, RAW.8rx: the variant joins the config set), and an optional
    /// report.toml with keys title, lines (setup bullets), versions, configs, ministat, and a
    /// [labels] table of display names
    // The text is --help's, where brackets name a TOML table, not a link.
    #[allow(rustdoc::broken_intra_doc_links)]
    pub dir: PathBuf,

    /// Write the report into OUT instead of DIR (created if missing)
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<PathBuf>,

    /// Versions (netbenches images) to report, in this order; the first is the reference
    /// [default: report.toml's, else all, oldest first (revision, then release), else in the
    /// logs' order]
    #[arg(long, value_delimiter = ',', value_name = "A,B,…")]
    pub versions: Option<Vec<String>>,

    /// Config sets to report, in this order; the first is the reference
    /// [default: report.toml's, else all in the logs' order]
    #[arg(long, value_delimiter = ',', value_name = "A,B,…")]
    pub configs: Option<Vec<String>>,

    /// ministat generation the archive's tables were made with: current, legacy (the old
    /// relative confidence interval) or accurate (exactly rounded Stddev) [default:
    /// report.toml's, else the one that reproduces the archive's own README.md, else current]
    #[arg(long, value_name = "GENERATION")]
    pub ministat: Option<MinistatGeneration>,
}

/// Prints what the report could not measure, one line each, and how many trials were flagged
/// or measured twice (the README lists them).
pub fn print_warnings(report: &Report, out_dir: &Path, err: &mut dyn Write) -> std::io::Result<()> {
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

/// Runs `benchlab report`.
pub fn run(args: Args, out: &mut dyn Write, err: &mut dyn Write) -> anyhow::Result<i32> {
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
    writeln!(
        out,
        "{} series, {} comparisons: wrote {} files into {}",
        report.series.len(),
        report.blocks.len(),
        files,
        out_dir.display()
    )?;
    Ok(0)
}
