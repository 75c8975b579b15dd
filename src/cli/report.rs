//! `benchlab report DIR [-o OUT]`: reads the logs, builds the report, writes its files, and
//! prints what it wrote and what could not be measured.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::dut::KNOWN_PRESETS;
use crate::ingest;
use crate::report::settings::{MinistatGeneration, Settings};
use crate::report::{reproduce, write_files, Report, ReportOptions};

/// Arguments of `benchlab report`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Results directory: netbenches bench.* logs in it, in its RAW/ or raw/ folder, or in one
    /// subfolder per variant (RAW.1rx, RAW.8rx: the variant joins the config set), and an optional
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
    // Said here in one line, before a reader or writer meets them as odder errors.
    if !args.dir.is_dir() {
        let what = if args.dir.exists() {
            "not a directory"
        } else {
            "no such directory"
        };
        return Err(crate::error::InputError::new(format!(
            "'{}': {what}; give a benchlab results directory or one of netbenches logs",
            args.dir.display()
        ))
        .into());
    }
    if out_dir.exists() && !out_dir.is_dir() {
        return Err(crate::error::InputError::new(format!(
            "'{}': exists and is not a directory; choose another -o",
            out_dir.display()
        ))
        .into());
    }
    let (report, files) = write_report(&args.dir, &out_dir, overrides)?;
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

/// What the command line sets over `report.toml` and the campaign.
#[derive(Debug, Default)]
pub struct Overrides {
    /// `--versions`.
    pub versions: Option<Vec<String>>,
    /// `--configs`.
    pub configs: Option<Vec<String>>,
    /// `--ministat`.
    pub ministat: Option<MinistatGeneration>,
}

/// Reads `dir` (benchlab results or netbenches logs), builds the report and writes its files
/// into `out_dir`; returns the report and the number of files written.
pub fn write_report(
    dir: &Path,
    out_dir: &Path,
    overrides: Overrides,
) -> anyhow::Result<(Report, usize)> {
    let settings = Settings::load(dir)?;
    let netbenches = !ingest::benchlab::is_results_dir(dir);
    let (results, defaults) = if netbenches {
        (ingest::netbenches::read_dir(dir)?, ReportOptions::default())
    } else {
        let read = ingest::benchlab::read_dir(dir, KNOWN_PRESETS)?;
        let defaults = crate::report::campaign_options(&read);
        (read.results, defaults)
    };
    let asked = overrides.ministat.or(settings.ministat);
    // The command line wins over report.toml, which wins over what the results say.
    let mut labels = defaults.labels;
    labels.extend(settings.labels);
    let mut options = ReportOptions {
        versions: overrides
            .versions
            .or(settings.versions)
            .or(defaults.versions),
        configs: overrides.configs.or(settings.configs).or(defaults.configs),
        flavor: asked.map(Into::into).unwrap_or(defaults.flavor),
        flavor_reason: None,
        title: settings.title.or(defaults.title),
        lines: if settings.lines.is_empty() {
            defaults.lines
        } else {
            settings.lines
        },
        labels,
    };
    // An archive's own README tells which ministat made its tables, unless one was asked for.
    if asked.is_none() && netbenches {
        if let Some(choice) = reproduce::choose(dir, &results, &options)? {
            options.flavor = choice.flavor;
            options.flavor_reason = Some(choice.reason);
        }
    }
    let report = Report::build(results, &options)?;
    let files = report.files()?;
    write_files(out_dir, &files)?;
    Ok((report, files.len()))
}
