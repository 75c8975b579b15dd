//! `benchlab run [CAMPAIGN.toml]`: build the lab, run every trial (or what an interrupted run
//! left), then write the report. A progress bar with ETA on a terminal, plain lines otherwise,
//! nothing but errors with `-q`.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::campaign::bench::{Estimates, Event};
use crate::campaign::context::Context;
use crate::campaign::run as campaign_run;
use crate::cancel::Cancel;
use crate::config::{secs, Campaign};
use crate::dut::KNOWN_PRESETS;
use crate::error::InputError;
use crate::profile::PerfProfiler;
use crate::store::{Status, Store, TrialKey, TrialMeta};
use crate::transport::LocalTransport;

/// The campaign to run: file, stored or built-in, and the flags applied.
mod load;
use load::campaign;

/// Arguments of `benchlab run`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Campaign file [default: the built-in default campaign, as examples/default.toml]
    pub(crate) campaign: Option<PathBuf>,

    /// Results directory [default: results/<campaign>-<date>]
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    // The text is --help's, where angle brackets are placeholders, not HTML.
    #[allow(rustdoc::invalid_html_tags)]
    pub(crate) output: Option<PathBuf>,

    /// Iterations per (version, config set, profile), overriding the campaign file
    // A negative number is a value to refuse with its own message, not an unknown option.
    #[arg(
        short = 'n',
        long,
        value_name = "ITERATIONS",
        allow_negative_numbers = true
    )]
    pub(crate) iterations: Option<u32>,

    /// Seconds of traffic per trial, overriding the campaign file
    #[arg(long, value_name = "SECS", allow_negative_numbers = true)]
    pub(crate) duration: Option<f64>,

    /// Continue the interrupted campaign in DIR: only its missing trials run (the campaign is
    /// DIR/campaign.toml unless CAMPAIGN is given, which must then match it)
    #[arg(long, value_name = "DIR", conflicts_with = "output")]
    pub(crate) resume: Option<PathBuf>,

    /// Profile the DUT: one extra, unmeasured trial per series records its CPU with perf
    /// between warm-up and cool-down; the report draws flamegraphs (as `profile = true`)
    #[arg(long)]
    pub(crate) profile: bool,

    /// Test only: start each capture SECS later than the end of warm-up, to check that a
    /// capture outside the traffic is caught
    #[arg(long, value_name = "SECS", hide = true, allow_negative_numbers = true)]
    pub(crate) profile_delay: Option<f64>,

    /// A smoke run (the default campaign: about a minute): 3 iterations of 5-second trials, the
    /// first profile only, throughput searches of at most 60 s to a 2 % width
    #[arg(long)]
    pub(crate) quick: bool,

    /// Print nothing but errors
    #[arg(short, long)]
    pub(crate) quiet: bool,

    /// Only load and check the campaign (with the overrides above), print its design and why,
    /// its trials or runs and an estimate of its wall time, then exit: no lab is built,
    /// nothing is written
    #[arg(long)]
    pub(crate) check: bool,

    /// Record the campaign in this history database once its report is written (as `benchlab
    /// history import DIR`): an SQLite file or a postgres:// URL [default: $BENCHLAB_DB; with
    /// neither, nothing is recorded]
    #[arg(long, value_name = "PATH|URL")]
    pub(crate) db: Option<String>,
}

/// `40 s`, `6 min`, `2 h 05 min`: a wall time estimate, rounded up.
fn minutes(seconds: f64) -> String {
    let s = seconds.max(0.0).ceil() as u64;
    match s {
        0..=89 => format!("{s} s"),
        90..=5399 => format!("{} min", s.div_ceil(60)),
        _ => {
            let m = s.div_ceil(60);
            format!("{} h {:02} min", m / 60, m % 60)
        }
    }
}

/// `results/<campaign name>-<local date and time>`.
fn default_output(args: &Args) -> PathBuf {
    let stem = args
        .campaign
        .as_deref()
        .and_then(Path::file_stem)
        .and_then(|s| s.to_str())
        .unwrap_or(if args.quick { "quick" } else { "default" });
    let now = chrono::Local::now().format("%Y%m%d-%H%M%S");
    PathBuf::from("results").join(format!("{stem}-{now}"))
}

/// How progress is shown.
enum Progress {
    Bar(ProgressBar),
    Lines,
    Quiet,
}

/// Progress as shown, and how far the campaign is.
struct Shown {
    progress: Progress,
    /// Seconds of traffic per trial (alternating run), the bar's unit.
    per_trial: f64,
    /// What the campaign counts, in words.
    unit: &'static str,
    /// Trials (runs) done.
    done: usize,
}

/// `--profile-delay`, checked.
fn capture_delay(args: &Args) -> Result<Option<Duration>, InputError> {
    let max = crate::config::MAX_SECONDS;
    (args.profile_delay)
        .map(|secs| {
            crate::config::duration(secs).ok_or_else(|| {
                InputError::new(format!(
                    "--profile-delay {secs:?}: expected a number of seconds from 0 to {max}"
                ))
            })
        })
        .transpose()
}

/// Runs `benchlab run`.
pub(crate) fn run(args: Args, out: &mut dyn Write, err: &mut dyn Write) -> anyhow::Result<i32> {
    let campaign = campaign(&args)?;
    let capture_delay = capture_delay(&args)?;
    if args.check {
        return print_check(&args, &campaign, out);
    }
    let db = crate::cli::history::checked_db(args.db.clone())?;
    if let Some(note) = crate::campaign::estimate::note(&campaign) {
        if !args.quiet {
            writeln!(err, "note: {note}")?;
        }
    }
    // A virtual lab is profiled from this host; an SSH DUT is checked once it answers.
    if campaign.profile && campaign.lab.hosts.is_none() {
        PerfProfiler::check(&LocalTransport)?;
    }
    let store = match (&args.resume, &args.output) {
        (Some(dir), _) => Store::resume(dir, &campaign, KNOWN_PRESETS)?,
        (None, Some(dir)) => Store::create(dir, &campaign)?,
        (None, None) => Store::create_new(&default_output(&args), &campaign)?,
    };
    let dir = store.dir().to_path_buf();
    let cancel = Cancel::new();
    let todo = campaign_run::todo(&campaign, &store)?;
    // A finished directory resumed has nothing to measure: no lab is built for it.
    let finished = args.resume.is_some() && todo.is_empty();
    if finished && !args.quiet {
        writeln!(
            err,
            "{}: every trial is measured already; nothing to run",
            dir.display()
        )?;
    }
    let measured = match finished {
        true => Ok(()),
        false => {
            let mut shown = Shown::new(args.quiet, &campaign);
            let mut on_event = |event: &Event<'_>| shown.on_event(event, err);
            let ctx = Context::up(&campaign, &store, &cancel, capture_delay, &mut on_event);
            let outcome = ctx.and_then(|ctx| campaign_run::run(ctx, todo));
            shown.finish();
            outcome.map(drop)
        }
    };
    if let Err(e) = measured {
        let d = dir.display();
        let interrupted = cancel.is_cancelled();
        let stopped = if interrupted {
            "campaign interrupted"
        } else {
            "campaign stopped"
        };
        // A new directory in which nothing was measured is not worth a `--resume`.
        let what = if let Some(done) = store.discard_if_unmeasured()? {
            format!("{stopped} before any trial finished; {d} {done}")
        } else {
            format!(
                "{stopped}; finished trials are kept: continue with `benchlab run --resume {d}`"
            )
        };
        // An interruption is its own reason; anything else says what went wrong.
        return Err(if interrupted {
            anyhow::anyhow!(what)
        } else {
            e.context(what)
        });
    }
    let known = crate::dut::KNOWN_PRESETS;
    let written = crate::report::from_dir(&dir, &dir, Default::default(), known)?;
    let report = written.report;
    if !args.quiet {
        crate::cli::report::print_warnings(&report, &dir, err)?;
        writeln!(out, "report: {}", dir.join("README.md").display())?;
    }
    let recorded = match &db {
        Some(spec) => crate::cli::history::record_run(spec, &dir, args.quiet, out, err),
        None => Ok(0),
    };
    // The verdicts are the terminal's last lines, after the history's, as the README opens
    // with them.
    if !args.quiet {
        crate::cli::report::print_verdicts(&report, out)?;
    }
    recorded
}

/// `run --check`: the campaign's design and why, its runs, and its wall time.
fn print_check(args: &Args, campaign: &Campaign, out: &mut dyn Write) -> anyhow::Result<i32> {
    let name = (args.campaign.as_deref())
        .or(args.resume.as_deref())
        .map_or("built-in campaign".into(), |p| p.display().to_string());
    let plan = crate::campaign::estimate::plan_of(campaign);
    writeln!(out, "{name}: campaign ok")?;
    writeln!(out, "  design: {} ({})", plan.design, plan.reason)?;
    writeln!(out, "  runs:   {} {}", plan.count, plan.unit)?;
    writeln!(
        out,
        "  time:   {} {} ({})",
        if plan.at_most { "at most" } else { "about" },
        minutes(plan.wall_s),
        plan.caveat
    )?;
    // A directory to resume: what is left of it (the time above is the whole campaign's).
    if let Some(dir) = &args.resume {
        let store = Store::resume(dir, campaign, KNOWN_PRESETS)?;
        let (left, total) = campaign_run::todo(campaign, &store)?.left();
        let unit = match campaign.design {
            crate::config::Design::Alternating => "alternating runs",
            _ => "trials",
        };
        writeln!(
            out,
            "  left:   {left} of {total} {unit} ({} finished, kept)",
            total - left
        )?;
    }
    if let Some(note) = crate::campaign::estimate::note(campaign) {
        writeln!(out, "  note:   {note}")?;
    }
    Ok(0)
}

impl Shown {
    /// Progress of `campaign` as `benchlab run` shows it: nothing with `quiet`, a bar on a
    /// terminal, lines otherwise.
    fn new(quiet: bool, campaign: &Campaign) -> Self {
        let progress = if quiet {
            Progress::Quiet
        } else if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(0).with_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {wide_bar} ETA {eta} {msg}",
                )
                .expect("valid template"),
            );
            Progress::Bar(bar)
        } else {
            Progress::Lines
        };
        let (per_trial, unit) = match &campaign.alternating {
            Some(alt) => (
                secs(alt.max_duration),
                "alternating runs (version × profile)",
            ),
            None => (secs(campaign.trial.duration), "trials"),
        };
        Self {
            progress,
            per_trial,
            unit,
            done: 0,
        }
    }

    /// Clears the bar once the campaign ended, whatever happened.
    fn finish(&self) {
        if let Progress::Bar(bar) = &self.progress {
            bar.finish_and_clear();
        }
    }

    /// Shows `event`.
    fn on_event(&mut self, event: &Event<'_>, err: &mut dyn Write) {
        let (per_trial, unit) = (self.per_trial, self.unit);
        let done = &mut self.done;
        match (event, &self.progress) {
            (_, Progress::Quiet) => {}
            (Event::Start { total, todo }, Progress::Bar(bar)) => {
                // Progress in seconds of traffic, so the ETA counts what takes time.
                bar.set_length((*todo as f64 * per_trial) as u64);
                bar.enable_steady_tick(Duration::from_millis(200));
                bar.println(format!("{todo} of {total} {unit} to run"));
            }
            (Event::Start { total, todo }, Progress::Lines) => {
                let _ = writeln!(err, "{todo} of {total} {unit} to run");
            }
            (Event::TrialStart { key, attempt }, Progress::Bar(bar)) => {
                let again = if *attempt > 1 { " (retry)" } else { "" };
                bar.set_message(format!("{key}{again}"));
                bar.set_position((*done as f64 * per_trial) as u64);
            }
            (Event::Second { sample }, Progress::Bar(bar)) => {
                let msg = bar.message();
                let trial = msg.split(" · ").next().unwrap_or_default().to_string();
                bar.set_message(format!(
                    "{trial} · {}",
                    crate::units::format_pps(sample.rx_pps)
                ));
                bar.set_position(
                    ((*done as f64 + (sample.t_s / per_trial).min(1.0)) * per_trial) as u64,
                );
            }
            (Event::Search { key, state }, Progress::Bar(bar)) => {
                bar.set_message(format!("{key} {}", search_bounds(state)));
            }
            (Event::Retry { key, reason }, p) => say(p, err, format!("{key}: {reason}; retrying")),
            (Event::Block { .. } | Event::RunDone { .. }, p) => {
                let Some(line) = alternating_line(event, done) else {
                    return;
                };
                match (event, p) {
                    (Event::Block { .. }, Progress::Bar(bar)) => bar.set_message(line),
                    _ => say(p, err, line),
                }
            }
            (Event::Floor { floor }, p) => say(p, err, floor_line(floor)),
            (Event::TrialDone { key, meta }, p) => {
                *done += 1;
                say(p, err, trial_line(key, meta));
            }
            _ => {}
        }
    }
}

/// Prints `line` above the progress bar, or on its own line without one.
fn say(progress: &Progress, err: &mut dyn Write, line: String) {
    match progress {
        Progress::Bar(bar) => bar.println(line),
        Progress::Lines => {
            let _ = writeln!(err, "{line}");
        }
        Progress::Quiet => {}
    }
}

/// The line of a finished trial: its rate and latency, or why it was flagged or failed.
fn trial_line(key: &TrialKey, meta: &TrialMeta) -> String {
    let latency = (meta.latency.as_ref()).map_or(String::new(), latency_text);
    match meta.status {
        Status::Ok => format!("{key}: {:.0} pps{latency}", meta.rx_pps),
        Status::Flagged => format!(
            "{key}: {:.0} pps{latency}, flagged: {}",
            meta.rx_pps,
            meta.flags.join("; ")
        ),
        Status::Failed => format!(
            "{key}: failed: {}",
            meta.failure.as_deref().unwrap_or("unknown")
        ),
    }
}

/// `, latency P50 12.3 µs P99 45.6 µs` of a trial's established-flow probes.
fn latency_text(latency: &crate::store::TrialLatency) -> String {
    match latency.established.latency {
        Some(p) => format!(
            ", latency P50 {} P99 {}",
            crate::units::format_ns(p.p50_ns as f64),
            crate::units::format_ns(p.p99_ns as f64)
        ),
        None => ", no probe arrived".into(),
    }
}

/// The latency floor's line: what the measurement itself adds, or why it is unknown.
fn floor_line(floor: &crate::store::FloorRecord) -> String {
    match (&floor.measured.and_then(|m| m.latency), &floor.not_measured) {
        (Some(p), _) => format!(
            "latency floor (generator → receiver, no DUT): P50 {}, P99 {}{}",
            crate::units::format_ns(p.p50_ns as f64),
            crate::units::format_ns(p.p99_ns as f64),
            (floor.clock_tick_ns).map_or(String::new(), |ns| format!(
                "; the clock's tick {}",
                crate::units::format_ns(ns as f64)
            ))
        ),
        (None, Some(why)) => format!("latency floor not measured: {why}"),
        (None, None) => "latency floor: no probe arrived".into(),
    }
}

/// The line of an alternating run's block or end; counts the runs done.
fn alternating_line(event: &Event<'_>, done: &mut usize) -> Option<String> {
    Some(match event {
        Event::Block {
            version,
            profile,
            block,
            problem,
            estimates,
        } => match problem {
            Some(problem) => format!("{version}.{profile} block {block} left out: {problem}"),
            None => format!(
                "{version}.{profile} block {block}:{}",
                estimates_text(estimates)
            ),
        },
        Event::RunDone {
            version,
            profile,
            ended,
            estimates,
        } => {
            *done += 1;
            format!(
                "{version}.{profile} ({ended}):{}",
                estimates_text(estimates)
            )
        }
        _ => return None,
    })
}

/// ` nft-stateful −32.4 % ± 0.9 %, …` for the comparisons that have an interval yet.
fn estimates_text(estimates: &Estimates) -> String {
    estimates
        .iter()
        .map(|(name, e)| match e {
            Some(e) => {
                let decimals = crate::stats::paired::decimals(e.half_width_pct(), 1);
                format!(
                    " {name} {:+.decimals$} % ± {:.decimals$} %",
                    e.change_pct,
                    e.half_width_pct()
                )
            }
            None => format!(" {name} (too few blocks)"),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// A search's bounds and width per goal, for the bar (no ` · `: the seconds' rate follows it):
/// `NDR 1.2 Mpps–1.3 Mpps (7.7 %) | PDR ≥ 1.3 Mpps | trial 12, 14 s`.
fn search_bounds(state: &crate::search::SearchState) -> String {
    use crate::units::format_pps;
    let goals: Vec<String> = (state.goals.iter())
        .map(|g| match (g.lower_bound, g.upper_bound, g.width) {
            (Some(lo), Some(hi), Some(w)) => format!(
                "{} {}–{} ({:.1} %)",
                g.name,
                format_pps(lo),
                format_pps(hi),
                100.0 * w
            ),
            (Some(lo), None, _) => format!("{} ≥ {}", g.name, format_pps(lo)),
            (None, Some(hi), _) => format!("{} < {}", g.name, format_pps(hi)),
            _ => format!("{} ?", g.name),
        })
        .collect();
    format!(
        "{} | trial {}, {:.0} s at {}",
        goals.join(" | "),
        state.trials + 1,
        state.trial_seconds,
        format_pps(state.load)
    )
}
