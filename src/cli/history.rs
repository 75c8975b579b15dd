//! `benchlab history import|show|regressions`: the results database ([`crate::history`]) from
//! the command line. Tables go to stdout (JSON with `--json`), progress and refusals to stderr.

use std::io::Write;
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use crate::dut::KNOWN_PRESETS;
use crate::history::db::{Db, SCHEMA_VERSION};
use crate::history::import::{self, Found, Step};
use crate::history::regress::{self, Change};
use crate::history::trend::{self, Trend};
use crate::history::{chart, default_db};
use crate::stats::jumpavg::Trend as Kind;
use crate::units::format_pps;

/// Arguments of `benchlab history`.
#[derive(Debug, clap::Args)]
pub(crate) struct HistoryArgs {
    /// The history database: an SQLite file, or a postgres://user@host/db URL a team shares
    /// [default: $BENCHLAB_DB, else $XDG_DATA_HOME/benchlab/history.db, else
    /// ~/.local/share/benchlab/history.db]
    #[arg(long, global = true, value_name = "PATH|URL")]
    pub(crate) db: Option<String>,

    /// What to do.
    #[command(subcommand)]
    pub(crate) command: HistoryCommand,
}

/// The history subcommands (names are stable: scripts call them).
#[derive(Debug, clap::Subcommand)]
pub(crate) enum HistoryCommand {
    /// Record results directories (benchlab's, netbenches archives: searched recursively);
    /// importing the same data twice adds nothing
    Import {
        /// Results directories, or folders holding them at any depth
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Print nothing but refusals and errors
        #[arg(short, long)]
        quiet: bool,
    },
    /// Trends per (lab, config set, profile): runs in revision or date order, jumpavg's
    /// groups; a table on stdout and a PNG chart per trend
    Show {
        /// Words every shown series has in its name (lab, config set, profile) or versions
        filter: Vec<String>,
        #[command(flatten)]
        output: Output,
    },
    /// The changes jumpavg found, newest first, with ministat's Δ and interval, the
    /// differential flamegraph and the command that confirms each
    Regressions {
        /// Only changes at or after this revision (r318516, n245000) or date (2024-01-31)
        #[arg(long, value_name = "REVISION|DATE")]
        since: Option<String>,
        #[command(flatten)]
        output: Output,
    },
}

/// Where `show` and `regressions` write, and how they print.
#[derive(Debug, clap::Args)]
pub(crate) struct Output {
    /// Print JSON for scripts instead of tables
    #[arg(long)]
    pub(crate) json: bool,
    /// Where to write the charts (show), flamegraphs and confirming campaigns (regressions)
    #[arg(
        short = 'o',
        long = "output",
        value_name = "DIR",
        default_value = "history"
    )]
    pub(crate) dir: PathBuf,
}

/// The database the user named: `--db`, else `BENCHLAB_DB`; `None` when neither says.
pub(crate) fn configured_db(flag: Option<String>) -> Option<String> {
    flag.or_else(|| std::env::var("BENCHLAB_DB").ok().filter(|s| !s.is_empty()))
}

/// `run --db`'s database (or `BENCHLAB_DB`'s), opened once to check it: one that cannot be
/// opened is said before the lab is built, not after an hour of measuring.
pub(crate) fn checked_db(flag: Option<String>) -> anyhow::Result<Option<String>> {
    let spec = configured_db(flag);
    if let Some(spec) = &spec {
        Db::open(spec, true)?;
    }
    Ok(spec)
}

/// Records a finished campaign's directory in the history `spec`; a failure keeps what was
/// measured and says how to record it later.
pub(crate) fn record_run(
    spec: &str,
    dir: &Path,
    quiet: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<i32> {
    let dirs = [dir.to_path_buf()];
    import_paths(spec, &dirs, quiet, out, err).map_err(|e| {
        e.context(format!(
            "the campaign is measured and reported in {d} but not recorded in the history; \
             record it with `benchlab history --db {spec} import {d}`",
            d = dir.display()
        ))
    })
}

/// Runs `benchlab history`.
pub(crate) fn run(
    args: HistoryArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<i32> {
    let spec = configured_db(args.db).unwrap_or_else(|| default_db().display().to_string());
    // A bad -o is said before the database is opened, not after the first chart is drawn.
    if let HistoryCommand::Show { output, .. } | HistoryCommand::Regressions { output, .. } =
        &args.command
    {
        crate::atomic::check_output_dir(&output.dir)?;
    }
    match args.command {
        HistoryCommand::Import { paths, quiet } => import_paths(&spec, &paths, quiet, out, err),
        HistoryCommand::Show { filter, output } => {
            show(&spec, &filter.join(" "), output.json, &output.dir, out)
        }
        HistoryCommand::Regressions { since, output } => {
            regressions(&spec, since.as_deref(), output.json, &output.dir, out)
        }
    }
}

/// Imports `paths` into `spec`; prints a line per refused directory and a summary. Returns
/// the exit status: 0, or 1 when some directory was refused.
pub(crate) fn import_paths(
    spec: &str,
    paths: &[PathBuf],
    quiet: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<i32> {
    // Every path is checked before the database is touched: a wrong one writes nothing.
    let mut found: Vec<Found> = Vec::new();
    for path in paths {
        found.extend(import::find(path)?);
    }
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(found.len() as u64).with_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} directories {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        )
    };
    let mut refusals = Vec::new();
    let summary = import::import_all(spec, &found, KNOWN_PRESETS, &mut |dir, step| {
        if let Step::Refused(why) = step {
            refusals.push(format!("refused '{}': {why}", dir.path().display()));
        }
        bar.set_message(dir.path().display().to_string());
        bar.inc(1);
    });
    bar.finish_and_clear();
    let summary = summary?;
    let nothing = summary.added + summary.replaced + summary.known == 0;
    // One directory refused is the one line of a refusal; several get a line each.
    if nothing && refusals.len() == 1 {
        let line = refusals.remove(0);
        return Err(crate::error::InputError::new(format!("{line}; nothing imported")).into());
    }
    for line in &refusals {
        writeln!(err, "benchlab: {line}")?;
    }
    if nothing {
        return Err(crate::error::InputError::new(format!(
            "nothing imported: all {} directories refused",
            summary.refused.len()
        ))
        .into());
    }
    if !quiet {
        writeln!(
            out,
            "{} campaign(s) recorded ({} in place of an older content), {} already known, {} \
             refused: {spec}",
            summary.added + summary.replaced,
            summary.replaced,
            summary.known,
            summary.refused.len()
        )?;
    }
    Ok(if summary.refused.is_empty() { 0 } else { 1 })
}

fn load(spec: &str, filter: &str) -> anyhow::Result<(Db, Vec<Trend>)> {
    let mut db = Db::open(spec, false)?;
    let trends = trend::trends(db.runs()?)
        .into_iter()
        .filter(|t| t.matches(filter))
        .collect();
    Ok((db, trends))
}

fn show(
    spec: &str,
    filter: &str,
    json: bool,
    dir: &Path,
    out: &mut dyn Write,
) -> anyhow::Result<i32> {
    let (_, trends) = load(spec, filter)?;
    let mut charts = Vec::new();
    for t in &trends {
        let path = dir.join(format!("{}.png", t.slug()));
        if let Some(png) = chart::render_png(t)? {
            crate::atomic::create_dir(dir)?;
            crate::atomic::write(&path, &png)?;
            charts.push(Some(path));
        } else {
            charts.push(None);
        }
    }
    if json {
        let list: Vec<_> = (trends.iter().zip(&charts))
            .map(|(t, chart)| json!({"series": t.name(), "trend": t, "chart": chart}))
            .collect();
        let doc = json!({"schema": SCHEMA_VERSION, "db": spec, "trends": list});
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        return Ok(0);
    }
    if trends.is_empty() {
        writeln!(out, "no series in {spec}{}", matching(filter))?;
        return Ok(0);
    }
    for (t, chart) in trends.iter().zip(&charts) {
        write_trend(t, chart.as_deref(), out)?;
    }
    Ok(0)
}

fn matching(filter: &str) -> String {
    if filter.is_empty() {
        String::new()
    } else {
        format!(" matching '{filter}'")
    }
}

fn write_trend(t: &Trend, chart: Option<&Path>, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "{}", t.name())?;
    let names = (t.points.iter()).chain(t.variants.iter().map(|(_, p)| p));
    let width = names.map(|p| p.axis_name().len()).max().unwrap_or(0).max(7);
    writeln!(
        out,
        "  {:<width$}  {:>5}  {:>12}  {:>8}  group",
        "version", "n", "average", "cv"
    )?;
    for (g, group) in t.grouping.groups.iter().enumerate() {
        for p in &t.points[group.start..group.start + group.len] {
            let cv = if p.avg > 0.0 {
                100.0 * p.stdev / p.avg
            } else {
                0.0
            };
            writeln!(
                out,
                "  {:<width$}  {:>5}  {:>12}  {:>7.2}%  {} {}",
                p.axis_name(),
                p.values.len(),
                format_pps(p.avg),
                cv,
                g + 1,
                kind_word(group.trend),
            )?;
        }
    }
    for (_, p) in &t.variants {
        writeln!(
            out,
            "  {:<width$}  {:>5}  {:>12}  {:>8}  review, beside its revision",
            p.axis_name(),
            p.values.len(),
            format_pps(p.avg),
            ""
        )?;
    }
    if let Some(chart) = chart {
        writeln!(out, "  chart: {}", chart.display())?;
    }
    writeln!(out)
}

fn kind_word(kind: Kind) -> &'static str {
    match kind {
        Kind::Normal => "",
        Kind::Regression => "regression",
        Kind::Progression => "progression",
    }
}

fn regressions(
    spec: &str,
    since: Option<&str>,
    json: bool,
    dir: &Path,
    out: &mut dyn Write,
) -> anyhow::Result<i32> {
    let (mut db, trends) = load(spec, "")?;
    let mut changes = regress::changes(&trends, since);
    regress::attach(&mut db, &mut changes, dir)?;
    if json {
        let doc = json!({"schema": SCHEMA_VERSION, "db": spec, "changes": changes});
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        return Ok(0);
    }
    if changes.is_empty() {
        writeln!(out, "no change found in {} series of {spec}", trends.len())?;
        return Ok(0);
    }
    for c in &changes {
        write_change(c, out)?;
    }
    Ok(0)
}

fn write_change(c: &Change, out: &mut dyn Write) -> std::io::Result<()> {
    let decimals = crate::stats::paired::decimals(c.ci_pct, 2);
    let change = format!("{:+.decimals$}% ± {:.decimals$}%", c.delta_pct, c.ci_pct);
    let verdict = if c.significant {
        change
    } else {
        format!("{change}, not confirmed by ministat at 95 %")
    };
    writeln!(
        out,
        "{} {}: {} → {}: {verdict} ({} → {}, {} vs {} iterations){}",
        kind_word(c.kind),
        c.series,
        c.before,
        c.after,
        format_pps(c.before_avg),
        format_pps(c.after_avg),
        c.iterations.0,
        c.iterations.1,
        c.date
            .as_deref()
            .map(|d| format!(", {d}"))
            .unwrap_or_default(),
    )?;
    if let Some(svg) = &c.flamegraph {
        writeln!(out, "  flamegraph: {}", svg.display())?;
    }
    if let Some(command) = &c.confirm {
        writeln!(out, "  confirm: {command}")?;
    }
    Ok(())
}
