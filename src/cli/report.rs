//! `benchlab report DIR [-o OUT]`: reads the logs, builds the report, writes its files, and
//! prints what it wrote and what could not be measured.

use std::io::Write;
use std::path::PathBuf;

use crate::ingest;
use crate::report::settings::{MinistatGeneration, Settings};
use crate::report::{write_files, Report, ReportOptions};

/// Arguments of `benchlab report`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Results directory: netbenches bench.* logs in it or in its RAW/ folder, and an optional
    /// report.toml with keys title, lines (setup bullets), versions, configs, ministat, and a
    /// [labels] table of display names
    pub dir: PathBuf,

    /// Write the report into OUT instead of DIR (created if missing)
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<PathBuf>,

    /// Versions (netbenches images) to report, in this order; the first is the reference
    /// [default: report.toml's, else all in the logs' order]
    #[arg(long, value_delimiter = ',', value_name = "A,B,…")]
    pub versions: Option<Vec<String>>,

    /// Config sets to report, in this order; the first is the reference
    /// [default: report.toml's, else all in the logs' order]
    #[arg(long, value_delimiter = ',', value_name = "A,B,…")]
    pub configs: Option<Vec<String>>,

    /// ministat generation the archive's tables were made with: current, or legacy (the old
    /// relative confidence interval) [default: report.toml's, else current]
    #[arg(long, value_name = "GENERATION")]
    pub ministat: Option<MinistatGeneration>,
}

/// Runs `benchlab report`.
pub fn run(args: Args, out: &mut dyn Write, err: &mut dyn Write) -> anyhow::Result<i32> {
    let settings = Settings::load(&args.dir)?;
    // The command line wins over report.toml, which wins over the defaults.
    let options = ReportOptions {
        versions: args.versions.or(settings.versions),
        configs: args.configs.or(settings.configs),
        flavor: args
            .ministat
            .or(settings.ministat)
            .map(Into::into)
            .unwrap_or_default(),
        title: settings.title,
        lines: settings.lines,
        labels: settings.labels,
    };
    let results = ingest::netbenches::read_dir(&args.dir)?;
    let report = Report::build(results, &options)?;
    let files = report.files()?;
    let out_dir = args.output.unwrap_or(args.dir);
    write_files(&out_dir, &files)?;
    for warning in &report.warnings {
        writeln!(err, "warning: {warning}")?;
    }
    writeln!(
        out,
        "{} series, {} comparisons: wrote {} files into {}",
        report.series.len(),
        report.blocks.len(),
        files.len(),
        out_dir.display()
    )?;
    Ok(0)
}
