//! The history database: every imported campaign remembered, trends across versions, and the
//! changes jumpavg finds in them by itself.
//!
//! One store interface ([`db::Db`](crate::history::db::Db)) over two real back ends that share the schema, its
//! migrations and every query: an SQLite file by default ([`default_db`](crate::history::default_db), nothing to start),
//! PostgreSQL (`postgres://…`) where a team or a fleet of labs shares results. What goes in is
//! what `benchlab report` reads ([`import`](crate::history::import): benchlab results directories and netbenches
//! archives, found recursively), one [`RunRecord`](crate::history::RunRecord) per (version, config set, profile) of a
//! campaign with every iteration's value; what comes out are per-(lab, config set, profile)
//! trends, ordered by revision or date, grouped by jumpavg ([`trend`](crate::history::trend)), drawn ([`chart`](crate::history::chart)), and
//! the changes between groups with a ministat interval ([`regress`](crate::history::regress)).

use std::path::PathBuf;

use serde::Serialize;

/// Trend charts: iterations as points, change-point groups as average lines and bands.
pub(crate) mod chart;
/// What a back end provides, and the values its statements take and give.
pub mod conn;
/// The store interface, the schema and its migrations, over SQLite or PostgreSQL.
pub mod db;
/// `history import`: results directories found, read, hashed and recorded.
pub(crate) mod import;
/// The PostgreSQL back end.
pub(crate) mod postgres;
/// The changes between groups: Δ %, its interval, the flamegraphs and the confirming run.
pub(crate) mod regress;
/// Version names read as revisions (`r318516`, `n245000`, a review on top) to order a series.
pub(crate) mod revision;
/// The SQLite back end.
pub(crate) mod sqlite;
/// Series of runs per (lab, config set, profile), ordered and grouped by jumpavg.
pub mod trend;

/// Where the history lives when neither `--db` nor `BENCHLAB_DB` says:
/// `$XDG_DATA_HOME/benchlab/history.db`, else `~/.local/share/benchlab/history.db`.
pub(crate) fn default_db() -> PathBuf {
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."));
    data.join("benchlab").join("history.db")
}

/// The lab a series was measured on: what makes two series comparable.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub(crate) struct LabId {
    /// CPU model (`lab.json`; netbenches: the path's first level, `Xeon_E5-2650_8Cores`).
    pub(crate) cpu: String,
    /// Cores, when known.
    pub(crate) cores: Option<u32>,
    /// NIC or its driver (`veth`; netbenches: the path's second level, `Chelsio_T540-CR`).
    pub(crate) nic: String,
    /// The DUT's operating system (`FreeBSD`, `Linux`), when known.
    pub(crate) os: String,
}

impl LabId {
    /// The lab in one line, as charts and tables name it.
    pub(crate) fn name(&self) -> String {
        let mut parts = vec![self.cpu.clone()];
        if let Some(cores) = self.cores.filter(|_| !self.cpu.contains("Cores")) {
            parts.push(format!("{cores} cores"));
        }
        parts.push(self.nic.clone());
        if !self.os.is_empty() {
            parts.push(self.os.clone());
        }
        parts.retain(|p| !p.is_empty());
        parts.join(" / ")
    }
}

/// One imported campaign (a results directory), and what was measured in it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CampaignRecord {
    /// Content hash of the directory's raw data: importing the same data twice adds nothing.
    pub(crate) hash: String,
    /// The directory, as found on import (absolute).
    pub(crate) source: String,
    /// `benchlab` or `netbenches`.
    pub(crate) kind: String,
    /// When it ran (RFC 3339), when known: the first trial's start, or the DUT's build date.
    pub(crate) date: Option<String>,
    /// The measurement design (`trials`, `alternating`; netbenches: `trials`).
    pub(crate) design: String,
    /// The lab.
    pub(crate) lab: LabId,
    /// `campaign.toml` as stored (benchlab directories), to write a confirming campaign.
    pub(crate) campaign_toml: Option<String>,
    /// Its series.
    pub(crate) runs: Vec<RunRecord>,
}

/// One (version, config set, profile) of a campaign: a point of a trend.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct RunRecord {
    /// Version name.
    pub(crate) version: String,
    /// The version's label in the campaign, when it has one.
    pub(crate) label: Option<String>,
    /// Config set.
    pub(crate) config: String,
    /// Traffic profile.
    pub(crate) profile: String,
    /// Whether the version only sets sysctls or runs commands (it can alternate under traffic).
    pub(crate) quick: bool,
    /// Each iteration's value (pps), in iteration order.
    pub(crate) values: Vec<f64>,
    /// The DUT's profile as folded stacks, when the campaign recorded one.
    pub(crate) folded: Option<String>,
    /// Its flamegraph: the report's SVG when one was drawn, else where the profile is (the
    /// trial directory, the pmc graph), absolute.
    pub(crate) flamegraph: Option<String>,
}

#[cfg(test)]
mod tests;
