//! What a trial leaves in its directory: one [`SampleRow`] per second (`samples.csv`) and its
//! [`TrialMeta`] (`meta.json`), and which of its seconds the analysis keeps ([`measured`]).

use serde::{Deserialize, Serialize};

use crate::config::Trial;

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

/// Parses `samples.csv`; the error is the 1-based line that does not read.
pub fn parse_samples_csv(text: &str) -> Result<Vec<SampleRow>, usize> {
    let mut lines = text.lines();
    if lines.next() != Some(CSV_HEADER) {
        return Err(1);
    }
    lines
        .enumerate()
        .map(|(i, line)| {
            let f: Vec<&str> = line.split(',').collect();
            let row = (|| {
                if f.len() != 5 {
                    return None;
                }
                Some(SampleRow {
                    t_s: f[0].parse().ok()?,
                    tx_pkts: f[1].parse().ok()?,
                    rx_pkts: f[2].parse().ok()?,
                    tx_pps: f[3].parse().ok()?,
                    rx_pps: f[4].parse().ok()?,
                })
            })();
            row.ok_or(i + 2)
        })
        .collect()
}

/// The samples the analysis keeps: those whose whole second lies after the warm-up and before
/// the cool-down (a sample at `t_s` covers the second that ends at `t_s`).
pub fn measured<'a>(samples: &'a [SampleRow], trial: &Trial) -> Vec<&'a SampleRow> {
    let end = trial.duration - trial.cooldown;
    samples
        .iter()
        .filter(|s| s.t_s - 1.0 >= trial.warmup - 1e-6 && s.t_s <= end + 1e-6)
        .collect()
}
