//! What an alternating run leaves (`design = "alternating"`), one directory per version and
//! profile (per profile under `<v1>+<v2>`, the versions' names joined, when quick versions
//! alternate; a directory started before they did keeps one per version:
//! [`Store::alternates_versions`]):
//!
//! ```text
//! DIR/alternating/<version>.<profile>/
//!     phases.csv             segment, block, phase, config, switched_s, end_s, others_ms: every
//!                            phase of every finished block (rewritten atomically after each
//!                            block; others_ms, other programs' time on the lab's CPUs during
//!                            the phase, is empty where not read and absent from older runs)
//!     segment-<N>/series.csv t_s, rx_pkts: the receiver's cumulative count every 0.05 s, seconds
//!                            since that segment's traffic started (the raw short windows)
//!     segment-<N>/meta.json  start and end, why it ended, what sent the traffic
//!     segment-<N>/samples.csv, dut-before.txt, …: the segment's seconds and files
//! ```
//!
//! A segment is one stretch of continuous traffic: a run interrupted and resumed has two. A
//! block counts once its phases are in `phases.csv`, which is written after the series that
//! holds its windows, so a kill -9 loses at most the block in progress. Block values are
//! always recomputed from `series.csv`, so a report can be regenerated with another estimator.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Store;
use crate::config::{Campaign, Runs};
use crate::error::{shown, InputError};
use crate::stats::{phase_values, Block, CounterSample, PhaseOptions, PhaseSpan, PhaseValue};

/// The directory of all alternating runs in a results directory.
pub(crate) const ALTERNATING: &str = "alternating";
const PHASES: &str = "phases.csv";
const SERIES: &str = "series.csv";
const PHASES_HEADER: &str = "segment,block,phase,config,switched_s,end_s,others_ms";
/// `phases.csv`'s header before it kept other programs' time (runs before 2026-11-28).
const PHASES_HEADER_V1: &str = "segment,block,phase,config,switched_s,end_s";
const SERIES_HEADER: &str = "t_s,rx_pkts";

/// One phase of a finished block, as `phases.csv` holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseRow {
    /// Segment of continuous traffic, from 1.
    pub segment: u32,
    /// Block, from 1, counted across segments.
    pub block: u32,
    /// Position in the block, from 1.
    pub phase: u32,
    /// Config set name.
    pub config: String,
    /// Seconds since the segment's traffic started at which the switch was verified (the
    /// phase's start when the set before it was the same one: no switch then).
    pub switched_s: f64,
    /// Seconds since the segment's traffic started at which the next switch began.
    pub end_s: f64,
    /// Other programs' time on the lab's CPUs ([`SegmentMeta::others_cpus`]) during the phase,
    /// milliseconds (from the look that switched to it to the one that ended it); `None` where
    /// not read (a lab over SSH, older runs).
    pub others_ms: Option<f64>,
}

/// A segment's `meta.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SegmentMeta {
    /// Start of traffic, seconds since the Unix epoch.
    pub(crate) start_unix_s: f64,
    /// End of traffic, seconds since the Unix epoch (`None` while it runs).
    pub(crate) end_unix_s: Option<f64>,
    /// Why it ended: `precise`, `time up`, or what failed.
    pub(crate) ended: Option<String>,
    /// What sent the traffic.
    pub(crate) generator: Option<String>,
    /// The lab's CPUs whose time other programs took ([`PhaseRow::others_ms`]); empty where
    /// not read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) others_cpus: Vec<usize>,
}

/// A finished block read back: its phases with their values, and one value per set.
#[derive(Debug, Clone)]
pub struct StoredBlock {
    /// Block number, from 1.
    pub(crate) block: u32,
    /// Segment it ran in.
    pub(crate) segment: u32,
    /// Its phases, in order, with the windows they kept.
    pub(crate) phases: Vec<PhaseValue>,
    /// One value per set (campaign order), or why the block has none.
    pub(crate) values: Result<Block, String>,
    /// The share of the lab's CPUs' time that other programs took during the block, where
    /// every phase of it read theirs ([`PhaseRow::others_ms`]).
    pub(crate) others_share: Option<f64>,
}

impl Store {
    /// The directory of the alternating run of `version` and `profile`.
    pub fn alternating_dir(&self, version: &str, profile: &str) -> PathBuf {
        self.dir
            .join(ALTERNATING)
            .join(format!("{version}.{profile}"))
    }

    /// The directory of segment `n` of a run, created if needed.
    pub fn begin_segment(&self, version: &str, profile: &str, n: u32) -> std::io::Result<PathBuf> {
        let dir = self
            .alternating_dir(version, profile)
            .join(format!("segment-{n}"));
        if dir.exists() {
            fs::remove_dir_all(&dir)?;
        }
        fs::create_dir_all(&dir)?;
        Ok(dir)
    }

    /// Writes one file of segment `n`, atomically.
    pub fn write_segment_file(
        &self,
        (version, profile, n): (&str, &str, u32),
        name: &str,
        bytes: &[u8],
    ) -> std::io::Result<()> {
        let dir = self
            .alternating_dir(version, profile)
            .join(format!("segment-{n}"));
        crate::atomic::write(&dir.join(name), bytes)
    }

    /// Records finished blocks: the segment's series first, then every phase so far.
    pub fn write_blocks(
        &self,
        (version, profile, n): (&str, &str, u32),
        series: &[CounterSample],
        phases: &[PhaseRow],
    ) -> std::io::Result<()> {
        let mut text = format!("{SERIES_HEADER}\n");
        for s in series {
            text.push_str(&format!("{:.6},{}\n", s.t_s, s.rx_pkts));
        }
        self.write_segment_file((version, profile, n), SERIES, text.as_bytes())?;
        let mut text = format!("{PHASES_HEADER}\n");
        for p in phases {
            let others = p.others_ms.map_or(String::new(), |ms| format!("{ms:.0}"));
            text.push_str(&format!(
                "{},{},{},{},{:.6},{:.6},{others}\n",
                p.segment, p.block, p.phase, p.config, p.switched_s, p.end_s
            ));
        }
        crate::atomic::write(
            &self.alternating_dir(version, profile).join(PHASES),
            text.as_bytes(),
        )
    }

    /// Every phase of the finished blocks of a run (none before its first block).
    pub fn read_phases(&self, version: &str, profile: &str) -> Result<Vec<PhaseRow>, InputError> {
        phases_at(&self.alternating_dir(version, profile))
    }

    /// Segment `n`'s short-window series.
    pub fn read_series(
        &self,
        version: &str,
        profile: &str,
        n: u32,
    ) -> Result<Vec<CounterSample>, InputError> {
        series_at(&self.alternating_dir(version, profile), n)
    }

    /// The finished blocks of a run, their values recomputed from the series with `options`;
    /// `sets` are the campaign's config set names, baseline first.
    pub(crate) fn read_blocks(
        &self,
        version: &str,
        profile: &str,
        sets: &[&str],
        options: &PhaseOptions,
    ) -> Result<Vec<StoredBlock>, InputError> {
        let rows = self.read_phases(version, profile)?;
        let mut by_segment: BTreeMap<u32, Vec<&PhaseRow>> = BTreeMap::new();
        for row in &rows {
            by_segment.entry(row.segment).or_default().push(row);
        }
        let mut blocks = Vec::new();
        for (segment, rows) in by_segment {
            let series = self.read_series(version, profile, segment)?;
            let spans = rows
                .iter()
                .map(|r| {
                    let set = sets.iter().position(|s| *s == r.config).ok_or_else(|| {
                        InputError::new(format!(
                            "{}: config set `{}` is not in the campaign",
                            self.alternating_dir(version, profile).display(),
                            shown(&r.config)
                        ))
                    })?;
                    Ok(PhaseSpan {
                        set,
                        switched_s: r.switched_s,
                        end_s: r.end_s,
                    })
                })
                .collect::<Result<Vec<_>, InputError>>()?;
            let values = phase_values(&series, &spans, options)
                .map_err(|e| InputError::new(format!("{version}.{profile}: {e}")))?;
            let cpus = (self.read_segment_meta(version, profile, segment))
                .map_or(0, |m| m.others_cpus.len());
            let mut start = 0;
            while start < rows.len() {
                let block = rows[start].block;
                let end = start
                    + rows[start..]
                        .iter()
                        .take_while(|r| r.block == block)
                        .count();
                let phases = values[start..end].to_vec();
                blocks.push(StoredBlock {
                    block,
                    segment,
                    values: Block::from_phases(&phases, sets.len()).map_err(|e| e.to_string()),
                    others_share: others_share(&rows[start..end], cpus),
                    phases,
                });
                start = end;
            }
        }
        Ok(blocks)
    }

    /// Segment `n`'s `meta.json`, when it is there and reads.
    pub(crate) fn read_segment_meta(
        &self,
        version: &str,
        profile: &str,
        n: u32,
    ) -> Option<SegmentMeta> {
        let path = self
            .alternating_dir(version, profile)
            .join(format!("segment-{n}"))
            .join("meta.json");
        serde_json::from_str(&super::record::read_lines(&self.dir, &path).ok()?).ok()
    }

    /// Whether this directory's alternating runs alternate `campaign`'s versions in one run per
    /// profile (stored under their names joined by `+`): when the campaign alternates them,
    /// unless the directory was started before they did, with a run of each version in turn
    /// (`alternating/<version>.<profile>/`): then it stays in that layout, so that `--resume`
    /// neither measures those runs again nor mixes the two layouts, and a report reads them.
    pub(crate) fn alternates_versions(&self, campaign: &Campaign) -> Result<bool, InputError> {
        if !campaign.alternates_versions() {
            return Ok(false);
        }
        // A run exists once its directory does (its first segment made it).
        let started = |version: &str| {
            (campaign.profiles.iter())
                .map(|p| self.alternating_dir(version, &p.name))
                .find(|dir| fs::symlink_metadata(dir).is_ok())
        };
        let combined = started(&Runs::of(campaign).run_version(0));
        let in_turn = campaign.versions.iter().find_map(|v| started(&v.name));
        match (combined, in_turn) {
            (Some(a), Some(b)) => Err(InputError::new(format!(
                "{} and {}: this results directory holds runs of the versions alternated and \
                 measured in turn; move one of them out of {}, or start a new results directory",
                a.display(),
                b.display(),
                self.dir.join(ALTERNATING).display()
            ))),
            (_, in_turn) => Ok(in_turn.is_none()),
        }
    }

    /// Whether a run is over: its last segment ended by the stopping rule (`precise` or
    /// `time up`), which the blocks alone cannot tell (time up counts the block cut short).
    pub fn run_ended(&self, version: &str, profile: &str) -> Result<bool, InputError> {
        let dir = self.alternating_dir(version, profile);
        let last = match fs::read_dir(&dir) {
            Ok(entries) => (entries.flatten())
                .filter_map(|e| {
                    e.file_name()
                        .to_str()?
                        .strip_prefix("segment-")?
                        .parse()
                        .ok()
                })
                .max(),
            Err(_) => None,
        };
        let Some(last) = last else {
            return Ok(false);
        };
        let meta = self.read_segment_meta(version, profile, last);
        let ended = meta.and_then(|m| m.ended);
        Ok(matches!(ended.as_deref(), Some(PRECISE | TIME_UP)))
    }

    /// Reads every alternating run's `phases.csv` and the series of each segment it names,
    /// whatever the campaign: `--resume` refuses a damaged run before any lab is built.
    pub(super) fn check_alternating(&self) -> Result<(), InputError> {
        let Ok(runs) = fs::read_dir(self.dir.join(ALTERNATING)) else {
            return Ok(());
        };
        for run in runs.flatten() {
            let dir = run.path();
            let mut segments: Vec<u32> = phases_at(&dir)?.iter().map(|r| r.segment).collect();
            segments.dedup();
            for n in segments {
                series_at(&dir, n)?;
            }
        }
        Ok(())
    }

    /// Whether any alternating block finished.
    pub(super) fn has_blocks(&self) -> bool {
        fs::read_dir(self.dir.join(ALTERNATING))
            .is_ok_and(|runs| runs.flatten().any(|run| run.path().join(PHASES).is_file()))
    }
}

/// The share of `cpus` CPUs' time that other programs took during a block of these `phases`,
/// from the start of its first to the end of its last; `None` unless every phase read it.
pub(crate) fn others_share(phases: &[&PhaseRow], cpus: usize) -> Option<f64> {
    block_share(
        phases.iter().map(|p| (p.switched_s, p.end_s, p.others_ms)),
        cpus,
    )
}

/// The share of `cpus` CPUs' time that other programs took during a block of phases, each
/// `(start_s, end_s, ms)` in order (a throughput block's, a latency block's), from the start of
/// the first to the end of the last; `None` without phases or unless every phase read it.
pub(crate) fn block_share(
    phases: impl IntoIterator<Item = (f64, f64, Option<f64>)>,
    cpus: usize,
) -> Option<f64> {
    let (mut from, mut to, mut ms) = (None, 0.0, 0.0);
    for (start_s, end_s, phase_ms) in phases {
        from.get_or_insert(start_s);
        to = end_s;
        ms += phase_ms?;
    }
    Some(crate::lab::stall::cpu_share(ms, to - from?, cpus))
}

/// How a segment's `meta.json` says the stopping rule ended the run: precise enough.
pub(crate) const PRECISE: &str = "precise";
/// How a segment's `meta.json` says the stopping rule ended the run: out of time.
pub(crate) const TIME_UP: &str = "time up";

/// The phases of the run in `dir` (none before its first block).
fn phases_at(dir: &Path) -> Result<Vec<PhaseRow>, InputError> {
    let path = dir.join(PHASES);
    // None before the first block; a FIFO or a device in its place is refused, not read.
    if fs::symlink_metadata(&path).is_err() {
        return Ok(Vec::new());
    }
    let text = super::record::read_lines(dir, &path)?;
    csv::parse_phases(&text).map_err(|(line, problem)| {
        InputError::new(format!(
            "{}: line {line}: {problem}: corrupted phase record; remove the file to measure \
             the run again",
            path.display()
        ))
    })
}

/// Segment `n`'s series in the run in `dir`.
fn series_at(dir: &Path, n: u32) -> Result<Vec<CounterSample>, InputError> {
    let path = dir.join(format!("segment-{n}")).join(SERIES);
    let text = super::record::read_lines(dir, &path)?;
    csv::parse_series(&text).map_err(|(line, problem)| {
        InputError::new(format!(
            "{}: line {line}: {problem}: corrupted sample; remove the run's phases.csv to \
             measure it again",
            path.display()
        ))
    })
}

/// `phases.csv` and `series.csv` as text, checked.
mod csv;
/// The alternating design's latency run: `latency.json` and `latency.hlog`.
pub mod latency;
#[cfg(test)]
mod tests;
