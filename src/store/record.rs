//! What a trial leaves in its directory: one [`SampleRow`] per second (`samples.csv`) and its
//! [`TrialMeta`] (`meta.json`), and which of its seconds the analysis keeps ([`measured`]);
//! and the one bounded reader of the line-based files a results directory holds
//! ([`read_lines`]).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::window::{in_window, measured_window};
use crate::config::Trial;
use crate::error::{shown, InputError};

/// Longest line of a line-based results file (samples, phases, series, pkt-gen logs, `.info`):
/// 64 KiB, a hundred times the longest any writer makes (a pkt-gen command line, a `.info`
/// hook). A longer one is damage; refusing it bounds every message that quotes a line.
pub const MAX_LINE_BYTES: usize = 64 << 10;

/// Most lines of a line-based results file: the longest traffic a campaign asks (a day,
/// `config::MAX_SECONDS`, twice over for an alternating segment's backstop) in the finest
/// windows written (0.05 s), 3,456,000. Bounds the rows held in memory (under 100 MB).
pub const MAX_LINES: usize = 2 * 86_400 * 20;

/// Reads a line-based results file under `root` as text ([`crate::file::read_text_in`]: a
/// regular file of bounded size, not behind a symlink leading out of `root`), refusing a line over [`MAX_LINE_BYTES`] or more than [`MAX_LINES`] lines,
/// with the file and line named.
pub fn read_lines(root: &Path, path: &Path) -> Result<String, InputError> {
    let text = crate::file::read_text_in(root, path)?;
    let damaged = |what: String| {
        InputError::new(format!(
            "{}: {what}, more than benchlab or pkt-gen writes: the file is damaged; remove it \
             (or the trial or run holding it) and measure again",
            path.display()
        ))
    };
    for (i, line) in text.split('\n').enumerate() {
        if i >= MAX_LINES {
            return Err(damaged(format!("over {MAX_LINES} lines")));
        }
        if line.len() > MAX_LINE_BYTES {
            let kib = MAX_LINE_BYTES >> 10;
            return Err(damaged(format!(
                "line {}: {} bytes long, over {kib} KiB",
                i + 1,
                line.len()
            )));
        }
    }
    Ok(text)
}

/// One second of a trial.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SampleRow {
    /// Seconds since traffic started (end of the one-second interval).
    pub t_s: f64,
    /// Packets the sender sent during the interval.
    pub tx_pkts: u64,
    /// Packets the receiver counted during the interval.
    pub rx_pkts: u64,
    /// Sender rate over the interval, packets per second.
    pub tx_pps: f64,
    /// Receiver rate over the interval, packets per second.
    pub rx_pps: f64,
}

/// How a trial ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Measured, every check passed.
    Ok,
    /// Measured, but a check says the figure is not what was asked (see `flags`).
    Flagged,
    /// Not measured (see `failure`).
    Failed,
}

/// `meta.json`: what the trial was, what it achieved, and what went wrong.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialMeta {
    /// `<version>.<config>.<profile>.<iter>`.
    pub trial: String,
    /// Start of traffic, seconds since the Unix epoch.
    pub start_unix_s: f64,
    /// End of traffic, seconds since the Unix epoch.
    pub end_unix_s: f64,
    /// Offered rate asked of the sender (pps); `None` for `max`.
    pub offered_pps: Option<u64>,
    /// Sender's median rate over the measured window (pps).
    pub tx_pps: f64,
    /// Receiver's median rate over the measured window (pps): the trial's figure.
    pub rx_pps: f64,
    /// Packets sent in all.
    pub tx_pkts: u64,
    /// Packets received in all.
    pub rx_pkts: u64,
    /// Packets sent that the receiver did not count: dropped at or in the DUT (per-interface
    /// drop counters are in `receiver.json` when the bench records them).
    pub lost_pkts: u64,
    /// Seconds of samples kept for the figure (after warm-up and cool-down).
    pub measured_samples: usize,
    /// What sent the traffic (`benchlab gen, xdp engine`), when known.
    #[serde(default)]
    pub generator: Option<String>,
    /// Outcome.
    pub status: Status,
    /// Why the figure is flagged (empty when ok).
    #[serde(default)]
    pub flags: Vec<String>,
    /// Why the trial failed, when it did.
    #[serde(default)]
    pub failure: Option<String>,
    /// Attempts made (a failed or unsteady attempt is measured once more).
    pub attempts: u32,
    /// Why the attempt not kept was left out (it failed, or was unsteady), when there were two.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discarded: Option<String>,
    /// Seconds spent outside traffic: applying, starting, stopping, writing.
    pub overhead_s: f64,
    /// When the DUT was profiled (profiling trials only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture: Option<crate::profile::CaptureWindow>,
    /// One-way latency of the probes sent on top of the load (`[trial] latency`), its
    /// histograms in `latency.hlog` beside this file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<super::TrialLatency>,
    /// Other programs' time on the lab's CPUs over the traffic (`others_ms`, `others_cpus`),
    /// where the lab read it (the virtual lab's trials since 2026-11-28).
    #[serde(flatten)]
    pub others: Option<crate::lab::stall::OthersTime>,
}

impl TrialMeta {
    /// The share of the lab's CPUs' time over the traffic that other programs took, where read
    /// ([`TrialMeta::others`]).
    pub(crate) fn others_share(&self) -> Option<f64> {
        let seconds = self.end_unix_s - self.start_unix_s;
        self.others.as_ref().map(|o| o.share(seconds))
    }

    /// What is out of range in a `meta.json` read back (a negative rate, an end before its
    /// start), which its writer never records; `None` when nothing is.
    pub(crate) fn out_of_range(&self) -> Option<String> {
        let rates = [
            ("tx_pps", self.tx_pps),
            ("rx_pps", self.rx_pps),
            ("overhead_s", self.overhead_s),
            ("start_unix_s", self.start_unix_s),
        ];
        if let Some((name, value)) = rates.iter().find(|(_, v)| !(v.is_finite() && *v >= 0.0)) {
            return Some(format!("{name} is {value}, not a number ≥ 0"));
        }
        (self.end_unix_s < self.start_unix_s).then(|| {
            format!(
                "end_unix_s {} is before start_unix_s {}",
                self.end_unix_s, self.start_unix_s
            )
        })
    }
}

const CSV_HEADER: &str = "t_s,tx_pkts,rx_pkts,tx_pps,rx_pps";

/// `samples.csv` text: a header and one row per second.
pub fn samples_csv(samples: &[SampleRow]) -> String {
    let mut out = format!("{CSV_HEADER}\n");
    for s in samples {
        out.push_str(&format!(
            "{:.3},{},{},{:.1},{:.1}\n",
            s.t_s, s.tx_pkts, s.rx_pkts, s.tx_pps, s.rx_pps
        ));
    }
    out
}

/// A line of `samples.csv` that does not read: its 1-based number and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {problem}")]
pub struct SamplesError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong, in words.
    pub(crate) problem: String,
}

/// Parses `samples.csv`. Every field must be a plain decimal number (no sign, exponent, `inf`
/// or `nan`: the writer never writes one, so such a field is damage, and a NaN or negative rate
/// would go into the medians unseen); a last line without its newline was cut off.
pub fn parse_samples_csv(text: &str) -> Result<Vec<SampleRow>, SamplesError> {
    let bad = |line: usize, problem: String| SamplesError { line, problem };
    let mut lines = text.lines();
    if lines.next() != Some(CSV_HEADER) {
        return Err(bad(1, format!("the header must be `{CSV_HEADER}`")));
    }
    if !text.ends_with('\n') {
        return Err(bad(
            text.lines().count(),
            "cut off (no newline at its end)".into(),
        ));
    }
    let mut rows: Vec<SampleRow> = Vec::new();
    for (i, line) in lines.enumerate() {
        let row = parse_row(line).map_err(|problem| bad(i + 2, problem))?;
        // The writer adds a row per interval, in time order: time going back is damage (two
        // files spliced, rows moved), which would put seconds in the wrong window.
        if let Some(last) = rows.last().filter(|last| row.t_s <= last.t_s) {
            return Err(bad(
                i + 2,
                format!(
                    "t_s {} does not follow the row before ({})",
                    row.t_s, last.t_s
                ),
            ));
        }
        rows.push(row);
    }
    Ok(rows)
}

/// One row of `samples.csv`.
fn parse_row(line: &str) -> Result<SampleRow, String> {
    let f: Vec<&str> = line.split(',').collect();
    let [t_s, tx_pkts, rx_pkts, tx_pps, rx_pps] = f[..] else {
        return Err(format!("{} fields, 5 expected (`{CSV_HEADER}`)", f.len()));
    };
    let number = |name: &str, field: &str| {
        let plain = !field.is_empty()
            && field.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            && field.bytes().filter(|&b| b == b'.').count() <= 1
            && !field.starts_with('.')
            && !field.ends_with('.');
        match field.parse::<f64>() {
            Ok(v) if plain && v.is_finite() => Ok(v),
            _ => Err(format!(
                "{name} `{}` is not a decimal number ≥ 0",
                shown(field)
            )),
        }
    };
    let count = |name: &str, field: &str| {
        field
            .parse::<u64>()
            .ok()
            .filter(|_| field.bytes().all(|b| b.is_ascii_digit()))
            .ok_or_else(|| format!("{name} `{}` is not a whole number ≥ 0", shown(field)))
    };
    Ok(SampleRow {
        t_s: number("t_s", t_s)?,
        tx_pkts: count("tx_pkts", tx_pkts)?,
        rx_pkts: count("rx_pkts", rx_pkts)?,
        tx_pps: number("tx_pps", tx_pps)?,
        rx_pps: number("rx_pps", rx_pps)?,
    })
}

/// The samples the analysis keeps: those whose whole second lies after the warm-up and before
/// the cool-down (a sample at `t_s` covers the second that ends at `t_s`).
pub fn measured<'a>(samples: &'a [SampleRow], trial: &Trial) -> Vec<&'a SampleRow> {
    let window = measured_window(trial);
    samples
        .iter()
        .filter(|s| in_window(s.t_s - 1.0, s.t_s, window))
        .collect()
}
