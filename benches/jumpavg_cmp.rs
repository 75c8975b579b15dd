//! benchlab's jumpavg grouping against the reference's (JSON lines from
//! `benches/jumpavg_reference.py`, read from the file named by `BENCHLAB_JUMPAVG_REFERENCE`).
//! Run through `benches/jumpavg.sh`.
//!
//! Per series: the same groups (start, length, comment) and the same bit counts (total and per
//! group) and averages within 1e-9 relative. Prints the series compared, the identical
//! groupings, the worst relative bit-count difference, and the first mismatches (exit 1 if any).
//! A series the reference refused (it raised) is counted apart and must give here no group
//! (empty series) or one group of 0 bits.

use std::error::Error;
use std::process::ExitCode;

use benchlab::stats::jumpavg::{classify, Grouping, RunStats, Trend};
use serde::Deserialize;

/// One run as the reference script writes it.
#[derive(Deserialize)]
#[serde(untagged)]
enum Run {
    /// One sample.
    Single(f64),
    /// Several samples.
    Samples { samples: Vec<f64> },
    /// A run known by its statistics.
    Summary {
        avg: f64,
        stdev: f64,
        size: u64,
        max: f64,
    },
}

impl Run {
    fn stats(&self) -> RunStats {
        match self {
            Run::Single(value) => RunStats::single(*value),
            Run::Samples { samples } => RunStats::of(samples),
            Run::Summary {
                avg,
                stdev,
                size,
                max,
            } => RunStats {
                avg: *avg,
                stdev: *stdev,
                size: *size,
                max: *max,
            },
        }
    }
}

/// One group of the reference.
#[derive(Deserialize)]
struct RefGroup {
    start: usize,
    len: usize,
    avg: f64,
    size: u64,
    bits: f64,
    comment: String,
}

/// One series and the reference's grouping of it.
#[derive(Deserialize)]
struct Series {
    name: String,
    runs: Vec<Run>,
    unit: Option<f64>,
    sbits: Option<f64>,
    #[serde(default)]
    groups: Vec<RefGroup>,
    bits: Option<f64>,
    error: Option<String>,
}

/// |a − b| relative to the larger magnitude, at least 1 (a bit count near 0 has no meaningful
/// relative difference).
fn relative(a: f64, b: f64) -> f64 {
    if a == b {
        return 0.0;
    }
    (a - b).abs() / a.abs().max(b.abs()).max(1.0)
}

fn comment(trend: Trend) -> &'static str {
    match trend {
        Trend::Normal => "normal",
        Trend::Regression => "regression",
        Trend::Progression => "progression",
    }
}

/// Why our grouping differs from the reference's, if it does; and the worst bit difference.
fn compare(series: &Series, ours: &Grouping) -> (Option<String>, f64) {
    let Some(total) = series.bits else {
        let refused = ours.groups.len() <= 1 && ours.bits == 0.0;
        let why = (!refused).then(|| format!("reference refused ({:?})", series.error));
        return (why, 0.0);
    };
    let mut worst = relative(ours.bits, total);
    if ours.groups.len() != series.groups.len() {
        let why = format!(
            "{} groups, reference {}",
            ours.groups.len(),
            series.groups.len()
        );
        return (Some(why), worst);
    }
    let mut why = None;
    for (i, (o, r)) in ours.groups.iter().zip(&series.groups).enumerate() {
        worst = worst.max(relative(o.bits, r.bits));
        let same = o.start == r.start
            && o.len == r.len
            && o.size == r.size
            && comment(o.trend) == r.comment
            && relative(o.avg, r.avg) <= 1e-9;
        if !same && why.is_none() {
            why = Some(format!(
                "group {i}: ours start {} len {} avg {} {}, reference start {} len {} avg {} {}",
                o.start,
                o.len,
                o.avg,
                comment(o.trend),
                r.start,
                r.len,
                r.avg,
                r.comment
            ));
        }
    }
    if why.is_none() && worst > 1e-9 {
        why = Some(format!("bits differ by {worst:.3e} relative"));
    }
    (why, worst)
}

fn main() -> Result<ExitCode, Box<dyn Error>> {
    let path = std::env::var("BENCHLAB_JUMPAVG_REFERENCE")
        .map_err(|_| "BENCHLAB_JUMPAVG_REFERENCE names no file: run benches/jumpavg.sh")?;
    let (mut compared, mut identical, mut refused, mut worst) = (0usize, 0usize, 0usize, 0.0_f64);
    let mut mismatches = Vec::new();
    for line in std::fs::read_to_string(path)?.lines() {
        let series: Series = serde_json::from_str(line)?;
        let runs: Vec<RunStats> = series.runs.iter().map(Run::stats).collect();
        let ours = classify(&runs, series.unit, series.sbits);
        let (why, bits) = compare(&series, &ours);
        compared += 1;
        refused += usize::from(series.error.is_some());
        worst = worst.max(bits);
        match why {
            None => identical += 1,
            Some(why) => mismatches.push(format!("{} ({} runs): {why}", series.name, runs.len())),
        }
    }
    println!("series compared:       {compared} ({refused} refused by the reference)");
    println!("identical groupings:   {identical}");
    println!("worst relative bits:   {worst:.3e}");
    for mismatch in mismatches.iter().take(5) {
        println!("MISMATCH {mismatch}");
    }
    if mismatches.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        println!("{} mismatches", mismatches.len());
        Ok(ExitCode::FAILURE)
    }
}
