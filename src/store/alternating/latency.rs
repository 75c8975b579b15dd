//! What the alternating design's latency run leaves (issue 35): after a run's throughput
//! blocks, each config set's latency at a fixed load (a share of the baseline's saturated
//! rate), the sets alternated in the same balanced order, block by block.
//!
//! ```text
//! DIR/alternating/<run>/latency.json   the load, the probes' rate, every phase (block, set,
//!                                      window) with its summary, and how the run ended
//! DIR/alternating/<run>/latency.hlog   one histogram per phase and probe kind, tagged
//!                                      `<block>.<phase>.<kind>`, starts from the run's start
//! ```
//!
//! Both are written once the run ends (the histograms first): a run interrupted before has
//! neither, and runs again on `--resume`.

use serde::{Deserialize, Serialize};

use crate::error::InputError;
use crate::stats::latency::log::Interval;
use crate::stats::latency::Percentiles;
use crate::store::Store;

/// The run's record.
pub(crate) const RECORD: &str = "latency.json";

/// An alternating latency run, as `latency.json` holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlternatingLatency {
    /// The load in percent of the baseline's saturated rate (`[latency] alternating_load`);
    /// `None`: a fixed-rate profile's own rate, which the baseline forwarded.
    pub load_pct: Option<u32>,
    /// The baseline's saturated rate, packets/s: the median of its phase values in the run's
    /// throughput blocks.
    pub baseline_pps: f64,
    /// The load the senders were asked for, packets/s.
    pub load_pps: f64,
    /// Probes per second on top of it.
    pub probe_rate_pps: u64,
    /// Start of traffic, seconds since the Unix epoch: the base of the phases' times.
    pub start_unix_s: f64,
    /// Every phase of every block, in order.
    pub phases: Vec<LatencyPhase>,
    /// Why the run ended early, when it did (its phases before are kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// The lab's CPUs whose time other programs took ([`LatencyPhase::others_ms`]); empty
    /// where not read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others_cpus: Vec<usize>,
}

/// One phase of an alternating latency run: the set that ran, the window its probes were
/// counted in (the settle time after the switch dropped), and their summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyPhase {
    /// Block, from 1.
    pub block: u32,
    /// Position in the block, from 1.
    pub phase: u32,
    /// The entry that ran (config set, or `<version>.<set>`).
    pub config: String,
    /// Start of the window, seconds since the run's start.
    pub from_s: f64,
    /// End of the window.
    pub to_s: f64,
    /// Probes on an established flow received in the window (`None`: none).
    pub established: Option<Percentiles>,
    /// Probes that each opened a new flow received in the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_packet: Option<Percentiles>,
    /// Other programs' time on the lab's CPUs during the phase (from the look that switched to
    /// it to the one that ended it), milliseconds; `None` where not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_ms: Option<f64>,
}

impl LatencyPhase {
    /// The tag of the histogram of phase `phase` of block `block`, probes of `kind`, in
    /// `latency.hlog`.
    pub fn tag(block: u32, phase: u32, kind: &str) -> String {
        format!("{block}.{phase}.{kind}")
    }
}

/// A run's latency as stored: its record, and its histograms unless `latency.hlog` is missing.
pub type StoredLatency = (AlternatingLatency, Option<Vec<Interval>>);

impl Store {
    /// Writes a run's latency: its histograms, then its record, each atomically.
    pub(crate) fn write_alternating_latency(
        &self,
        (version, profile): (&str, &str),
        record: &AlternatingLatency,
        intervals: &[Interval],
    ) -> anyhow::Result<()> {
        let dir = self.alternating_dir(version, profile);
        std::fs::create_dir_all(&dir)?;
        let base = std::time::SystemTime::UNIX_EPOCH
            + std::time::Duration::from_secs_f64(record.start_unix_s.max(0.0));
        self.write_latency(&dir, base, intervals)?;
        let json = serde_json::to_string_pretty(record)? + "\n";
        crate::atomic::write(&dir.join(RECORD), json.as_bytes())
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", dir.join(RECORD).display()))
    }

    /// Reads a run's latency record and histograms; `None` when it has none (yet), and its
    /// histograms `None` when `latency.hlog` is missing beside the record (which the report
    /// warns of: the run writes it first).
    pub fn read_alternating_latency(
        &self,
        version: &str,
        profile: &str,
    ) -> Result<Option<StoredLatency>, InputError> {
        let dir = self.alternating_dir(version, profile);
        let path = dir.join(RECORD);
        if !path.exists() {
            return Ok(None);
        }
        let text = super::super::record::read_lines(self.dir(), &path)?;
        let record: AlternatingLatency = serde_json::from_str(&text).map_err(|e| {
            InputError::new(format!(
                "{}: corrupted: {}; remove it to measure the run's latency again",
                path.display(),
                crate::error::shown(&e.to_string())
            ))
        })?;
        let hlog = dir.join(super::super::latency::LATENCY_FILE);
        Ok(Some((record, super::super::read_latency(&hlog)?)))
    }
}
