//! What a throughput search leaves in its iteration's directory: `search.json`, the search's
//! result (goals, bounds, the trace) and every trial as the lab measured it (counters, drops,
//! times), written atomically before the iteration's `meta.json`; and each trial's own files
//! (DUT counters and hook outputs, the senders' and receiver's records) in `trials/<NNN>/`
//! (`calibration/<N>/` for the calibration trials), NNN its 1-based index in `trials`
//! ([`crate::store::search_files`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Store, TrialKey};
use crate::error::InputError;
use crate::search::SearchResult;

/// The file of a search, beside the iteration's `meta.json`.
pub const SEARCH_FILE: &str = "search.json";

/// One trial of a search as the lab ran it (the search's own view is [`SearchResult::trials`],
/// in the same order).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchTrial {
    /// Intended load, packets/s.
    pub load: f64,
    /// Intended seconds of traffic.
    pub duration: f64,
    /// Packets the senders sent, by their own counters.
    pub sent: u64,
    /// Packets the receiver counted once the traffic stopped and drained.
    pub received: u64,
    /// Packets each watched interface (the sender's, the DUT's) and the receiving one dropped
    /// while the receiver counted: where the lost packets went. Empty when the receiver does
    /// not watch any.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub drops: BTreeMap<String, u64>,
    /// False when the senders missed the intended load (or failed): retried, not a loss.
    pub valid: bool,
    /// Why it is invalid, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// Start of traffic, seconds since the Unix epoch.
    pub start_unix_s: f64,
    /// End of traffic, seconds since the Unix epoch.
    pub end_unix_s: f64,
}

/// `search.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchRecord {
    /// What the generator sent at a fixed rate in the last calibration trial, packets/s, when
    /// measured (`None` when the profile's rate or `search.max_load` gave the max load).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator_max: Option<f64>,
    /// The calibration trials (full rate, then that rate asked at a fixed rate), when run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calibration: Vec<SearchTrial>,
    /// The search's result; `None` when it failed.
    pub result: Option<SearchResult>,
    /// Why the search failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// Every trial of the search, in order.
    pub trials: Vec<SearchTrial>,
    /// Wall-clock seconds the search took, setup between trials included.
    pub wall_s: f64,
}

impl Store {
    /// Writes an iteration's `search.json`, atomically (before its `meta.json`).
    pub fn write_search(&self, key: &TrialKey, record: &SearchRecord) -> std::io::Result<()> {
        let json = serde_json::to_string_pretty(record).map_err(std::io::Error::other)? + "\n";
        self.write_trial_file(key, SEARCH_FILE, json.as_bytes())
    }

    /// Reads a finished search iteration's `search.json`.
    pub fn read_search(&self, key: &TrialKey) -> Result<SearchRecord, InputError> {
        let path = self.trial_dir(key).join(SEARCH_FILE);
        let text = crate::file::read_text(&path)?;
        serde_json::from_str(&text).map_err(|e| {
            InputError::new(format!(
                "{}: corrupted search record: {e}; remove that trial's directory to run it again",
                path.display()
            ))
        })
    }
}
