//! The results directory (DESIGN.md "Results directory layout"): creating it, writing each
//! trial atomically, and finding what an interrupted campaign still has to run. This is the
//! only code that touches a results directory: the run loop writes through it, `ingest` and the
//! report read through it.
//!
//! A trial is finished when its `meta.json` exists: it is written last, by rename, after
//! `samples.csv` and the hook outputs. A trial directory without it is what an interruption left
//! and is removed before the trial runs again; a finished trial is never rewritten.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::config::{Campaign, Design};
use crate::error::InputError;

/// What an alternating run leaves: phases, short-window series, segments.
pub(crate) mod alternating;
/// `lab.json`: the lab's record.
pub mod lab;
/// What latency probes leave: `latency.hlog`, `meta.json`'s `latency`, the lab's floor.
pub mod latency;
/// One campaign at a time in a results directory (a `flock`), and directories made atomically.
pub mod lock;
/// The trials of a campaign, their order and their directory names.
pub mod plan;
/// What a trial leaves: its seconds (`samples.csv`) and its `meta.json`.
pub(crate) mod record;
/// What a throughput search leaves: `search.json`.
pub(crate) mod search;
/// The files of each trial of a throughput search: `trials/<NNN>/`, `calibration/<N>/`.
pub(crate) mod search_files;
/// Which seconds of a trial the analysis keeps: after the warm-up, before the cool-down.
pub(crate) mod window;

pub use alternating::latency::{AlternatingLatency, LatencyPhase};
pub use alternating::{PhaseRow, SegmentMeta, StoredBlock};
pub(crate) use lab::{LabRecord, VersionRecord};
pub use latency::{read_latency, FloorRecord, TrialLatency};
pub use plan::{plan, TrialKey, PROFILING};
pub use record::{
    measured, parse_samples_csv, read_lines, samples_csv, SampleRow, SamplesError, Status,
    TrialMeta, MAX_LINES, MAX_LINE_BYTES,
};
pub(crate) use search::{
    crowded, Crowded, LatencyLoad, Saturated, SearchRecord, SearchTrial, CROWDED_SHARE, SEARCH_FILE,
};
pub(crate) use search_files::SearchTrialId;

/// A results directory, opened for a campaign.
#[derive(Debug)]
pub struct Store {
    dir: PathBuf,
    origin: Origin,
    /// Held while a campaign writes here (`create`, `resume`); `None` when only reading.
    _lock: Option<lock::DirLock>,
}

/// How a [`Store`] came to be open: what it may remove if nothing gets measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// Made by [`Store::create`]: its contents are this run's; the directory too unless it
    /// was there (empty) before.
    Created { dir_existed: bool },
    /// Resumed or opened for reading: the user's.
    Existing,
}

const CAMPAIGN_FILE: &str = "campaign.toml";
/// The lab's facts: hosts, CPUs, kernels, tools, rulesets, and each version's kernel.
pub(crate) const LAB_FILE: &str = "lab.json";
const RUNS: &str = "runs";
const META: &str = "meta.json";
/// A profiling trial's folded stacks, beside its `meta.json`.
pub(crate) const FOLDED_FILE: &str = "perf.folded";

impl Store {
    /// Creates a new results directory for `campaign` (the directory may exist, empty) and
    /// locks it; refuses one that holds anything.
    pub fn create(dir: &Path, campaign: &Campaign) -> Result<Self, InputError> {
        // A file, a path under one, a symlink loop: said plainly before anything is made.
        crate::atomic::check_output_dir(dir)?;
        let d = dir.display();
        let fail = |e: std::io::Error| InputError::new(format!("{d}: cannot create: {e}"));
        if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs::create_dir_all(parent).map_err(fail)?;
        }
        let dir_existed = match fs::create_dir(dir) {
            Ok(()) => false,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => true,
            Err(e) => return Err(fail(e)),
        };
        if dir_existed && !dir.is_dir() {
            return Err(InputError::new(format!(
                "{d}: exists and is not a directory; choose another -o"
            )));
        }
        Self::create_in(dir, campaign, dir_existed)
    }

    /// Creates a results directory named `base`, or `base-2`, … when that name is taken (two
    /// runs started in the same second), for `campaign`, and locks it.
    pub(crate) fn create_new(base: &Path, campaign: &Campaign) -> Result<Self, InputError> {
        Self::create_in(&lock::create_unique(base)?, campaign, false)
    }

    fn create_in(dir: &Path, campaign: &Campaign, dir_existed: bool) -> Result<Self, InputError> {
        let d = dir.display();
        if dir_existed {
            // A lock file alone is what a run that measured nothing left.
            let empty = fs::read_dir(dir)
                .map_err(|e| InputError::new(format!("{d}: cannot read: {e}")))?
                .all(|e| e.is_ok_and(|e| e.file_name() == lock::LOCK_FILE));
            if !empty {
                return Err(InputError::new(format!(
                    "{d}: results directory exists and is not empty; \
                     use `--resume {d}` to continue it, or choose another -o"
                )));
            }
        }
        let lock = lock::lock(dir)?;
        fs::create_dir_all(dir.join(RUNS))
            .map_err(|e| InputError::new(format!("{d}: cannot create: {e}")))?;
        crate::atomic::write(&dir.join(CAMPAIGN_FILE), campaign.to_toml().as_bytes())
            .map_err(|e| InputError::new(format!("{d}/{CAMPAIGN_FILE}: cannot write: {e}")))?;
        Ok(Self {
            dir: dir.to_path_buf(),
            origin: Origin::Created { dir_existed },
            _lock: Some(lock),
        })
    }

    /// Removes what [`create`](Self::create) and the run put in the directory if no trial
    /// finished (a campaign that failed before measuring anything), so that running it again
    /// needs no `--resume`; the directory itself goes too unless it was there, empty, before.
    /// Returns what it did (`removed`, or `emptied` for a directory that was there before),
    /// `None` when it left everything: a resumed directory, or one with a finished trial, is
    /// never touched.
    pub(crate) fn discard_if_unmeasured(&self) -> anyhow::Result<Option<&'static str>> {
        let Origin::Created { dir_existed } = self.origin else {
            return Ok(None);
        };
        if !self.finished()?.is_empty() || self.has_blocks() {
            return Ok(None);
        }
        let d = self.dir.display();
        let removed = if dir_existed {
            fs::read_dir(&self.dir).and_then(|entries| {
                entries.into_iter().try_for_each(|e| {
                    let path = e?.path();
                    if path.is_dir() {
                        fs::remove_dir_all(path)
                    } else {
                        fs::remove_file(path)
                    }
                })
            })
        } else {
            fs::remove_dir_all(&self.dir)
        };
        removed.with_context(|| format!("{d}: removing the unused results directory"))?;
        Ok(Some(if dir_existed {
            "emptied (it was there, empty, before the run: the directory is kept)"
        } else {
            "removed"
        }))
    }

    /// Reads the campaign a results directory was made with. Its config set directories were
    /// recorded as absolute paths when it ran, and need not exist any more to read its results
    /// (resuming checks them again).
    pub fn stored_campaign(dir: &Path, known_sets: &[&str]) -> Result<Campaign, InputError> {
        let path = dir.join(CAMPAIGN_FILE);
        if !path.is_file() {
            return Err(InputError::new(format!(
                "{}: not a benchlab results directory (no regular file there); give the \
                 directory `benchlab run -o` wrote",
                path.display()
            )));
        }
        let text = crate::file::read_text(&path)?;
        let origin = path.display().to_string();
        let corrupted =
            |e: InputError| InputError::new(format!("corrupted results directory: {e}"));
        let mut campaign = Campaign::parse(&text, &origin).map_err(corrupted)?;
        // Every directory since `auto` records its design; one without the key ran trials.
        if campaign.design == Design::Auto {
            campaign.design = Design::Trials;
        }
        let recorded: Vec<&str> = (campaign.config_sets.iter())
            .map(String::as_str)
            .filter(|s| Path::new(s).is_absolute())
            .collect();
        campaign
            .validate(&origin, &[known_sets, &recorded].concat())
            .map_err(corrupted)?;
        Ok(campaign)
    }

    /// Reopens a results directory to resume it with `campaign`, which must match the stored
    /// one; the error names the first key that differs.
    pub fn resume(
        dir: &Path,
        campaign: &Campaign,
        known_sets: &[&str],
    ) -> Result<Self, InputError> {
        let stored = Self::stored_campaign(dir, known_sets)?;
        if let Some(key) = first_difference(&stored, campaign) {
            return Err(InputError::new(format!(
                "{}: the campaign no longer matches the one this directory was started with \
                 (key `{key}` changed); resume with the original campaign file, or start a new \
                 results directory",
                dir.display()
            )));
        }
        let store = Self {
            dir: dir.to_path_buf(),
            origin: Origin::Existing,
            _lock: Some(lock::lock(dir)?),
        };
        // Before any lab is built: every finished trial's and run's files are read back
        // (damage found now, not after a trial), and a directory holding both alternating
        // layouts is refused.
        store.check_finished()?;
        store.alternates_versions(campaign)?;
        Ok(store)
    }

    /// Reads every finished trial's files back (`meta.json`, `samples.csv`, `search.json`),
    /// `lab.json` and every alternating run's phases and series: `--resume` refuses a damaged
    /// directory before any lab is built, not after a trial.
    pub(crate) fn check_finished(&self) -> Result<(), InputError> {
        for key in self.finished()? {
            self.read_samples(&key)?;
            if self.trial_dir(&key).join(SEARCH_FILE).exists() {
                self.read_search(&key)?;
            }
        }
        self.read_lab()?;
        self.check_alternating()
    }

    /// Opens an existing results directory for reading (no campaign check).
    pub fn open(dir: &Path) -> Result<Self, InputError> {
        let store = Self {
            dir: dir.to_path_buf(),
            origin: Origin::Existing,
            _lock: None,
        };
        store.finished()?;
        Ok(store)
    }

    /// The results directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The directory of one trial.
    pub fn trial_dir(&self, key: &TrialKey) -> PathBuf {
        self.dir.join(RUNS).join(key.to_string())
    }

    /// Trials already finished (their `meta.json` is there and reads back); an unreadable
    /// `meta.json` or a stray entry in `runs/` means the directory was tampered with: refused.
    /// Hidden entries (`.DS_Store`, an editor's swap file) are the system's, not damage: skipped.
    pub(crate) fn finished(&self) -> Result<BTreeSet<TrialKey>, InputError> {
        Ok(self.finished_trials()?.into_keys().collect())
    }

    /// Trials already finished, with their `meta.json`, under the same checks as
    /// [`finished`](Self::finished).
    pub(crate) fn finished_trials(&self) -> Result<BTreeMap<TrialKey, TrialMeta>, InputError> {
        let runs = self.dir.join(RUNS);
        let entries = fs::read_dir(&runs).map_err(|e| {
            InputError::new(format!(
                "{}: corrupted results directory: {e}",
                runs.display()
            ))
        })?;
        let mut done = BTreeMap::new();
        for entry in entries {
            let entry = entry.map_err(|e| InputError::new(format!("{}: {e}", runs.display())))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let Some(key) = TrialKey::parse(&name) else {
                return Err(InputError::new(format!(
                    "{}: corrupted results directory: `{name}` is not a trial; remove it",
                    runs.display()
                )));
            };
            let meta = entry.path().join(META);
            if meta.exists() {
                let meta = self.read_meta(&key)?;
                done.insert(key, meta);
            }
        }
        Ok(done)
    }

    /// Reads one finished trial's `meta.json`.
    pub(crate) fn read_meta(&self, key: &TrialKey) -> Result<TrialMeta, InputError> {
        let path = self.trial_dir(key).join(META);
        let text = record::read_lines(&self.dir, &path)?;
        let meta: Result<TrialMeta, String> =
            serde_json::from_str(&text).map_err(|e| e.to_string());
        let meta = meta.and_then(|m| m.out_of_range().map_or(Ok(m), Err));
        meta.map_err(|e| {
            InputError::new(format!(
                "{}: corrupted results directory: {}; remove that trial's directory to run it \
                 again",
                path.display(),
                crate::error::shown(&e)
            ))
        })
    }

    /// Prepares an empty directory for a trial about to run (removing what an interrupted
    /// attempt left); refuses to touch a finished trial.
    pub fn begin_trial(&self, key: &TrialKey) -> std::io::Result<PathBuf> {
        let dir = self.trial_dir(key);
        if dir.join(META).exists() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                format!("{}: trial already finished", dir.display()),
            ));
        }
        if dir.exists() {
            fs::remove_dir_all(&dir)?;
        }
        fs::create_dir_all(&dir)?;
        Ok(dir)
    }

    /// Writes one file of a trial in progress, atomically.
    pub(crate) fn write_trial_file(
        &self,
        key: &TrialKey,
        name: &str,
        bytes: &[u8],
    ) -> std::io::Result<()> {
        crate::atomic::write(&self.trial_dir(key).join(name), bytes)
    }

    /// Writes `lab.json` (the lab's record) unless an earlier run of the campaign did.
    pub(crate) fn write_lab(
        &self,
        record: impl FnOnce() -> anyhow::Result<LabRecord>,
    ) -> anyhow::Result<()> {
        if self.dir.join(LAB_FILE).exists() {
            return Ok(());
        }
        self.write_lab_record(&record()?)
    }

    /// Records in `lab.json` what version `name` runs, and its kernel configuration in
    /// `kernel-config/<name>.txt` (named in the record) when there is one.
    pub(crate) fn record_version(
        &self,
        name: &str,
        mut version: VersionRecord,
        kernel_config: Option<&str>,
    ) -> anyhow::Result<()> {
        if let Some(config) = kernel_config {
            let rel = format!("kernel-config/{name}.txt");
            let path = self.dir.join(&rel);
            fs::create_dir_all(self.dir.join("kernel-config"))
                .with_context(|| format!("creating {}", self.dir.display()))?;
            crate::atomic::write(&path, config.as_bytes())
                .with_context(|| format!("writing {}", path.display()))?;
            version.kernel_config = Some(rel);
        }
        let mut record = self.read_lab()?.unwrap_or_default();
        record.versions.insert(name.to_string(), version);
        self.write_lab_record(&record)
    }

    /// Reads `lab.json` back; `None` when the campaign stopped before writing it.
    pub(crate) fn read_lab(&self) -> Result<Option<LabRecord>, InputError> {
        let path = self.dir.join(LAB_FILE);
        if !path.exists() {
            return Ok(None);
        }
        let text = record::read_lines(&self.dir, &path)?;
        serde_json::from_str(&text).map(Some).map_err(|e| {
            InputError::new(format!(
                "{}: corrupted: {}; remove it (the report then names no hosts)",
                path.display(),
                crate::error::shown(&e.to_string())
            ))
        })
    }

    pub(crate) fn write_lab_record(&self, record: &LabRecord) -> anyhow::Result<()> {
        let path = self.dir.join(LAB_FILE);
        let text = serde_json::to_string_pretty(record)? + "\n";
        crate::atomic::write(&path, text.as_bytes())
            .with_context(|| format!("writing {}", path.display()))
    }

    /// Finishes a trial: samples first, `meta.json` last, so a trial counts as done only once
    /// everything is on disk.
    pub fn finish_trial(
        &self,
        key: &TrialKey,
        samples: &[SampleRow],
        meta: &TrialMeta,
    ) -> std::io::Result<()> {
        self.write_trial_file(key, "samples.csv", samples_csv(samples).as_bytes())?;
        let json = serde_json::to_string_pretty(meta).expect("meta serializes") + "\n";
        self.write_trial_file(key, META, json.as_bytes())
    }

    /// Reads a finished trial's samples back.
    pub(crate) fn read_samples(&self, key: &TrialKey) -> Result<Vec<SampleRow>, InputError> {
        let path = self.trial_dir(key).join("samples.csv");
        // A finished trial without its samples is damaged as a corrupt one is.
        if !path.exists() {
            return Err(InputError::new(format!(
                "{}: missing, though the trial's meta.json says it finished; remove that \
                 trial's directory to run it again",
                path.display()
            )));
        }
        let text = record::read_lines(&self.dir, &path)?;
        parse_samples_csv(&text).map_err(|e| {
            InputError::new(format!(
                "{}: {e}: corrupted samples; remove that trial's directory to run it again",
                path.display()
            ))
        })
    }
}

/// The dotted path of the first key whose value differs between two campaigns.
fn first_difference(a: &Campaign, b: &Campaign) -> Option<String> {
    let a = toml::Value::try_from(a).expect("campaign serializes");
    let b = toml::Value::try_from(b).expect("campaign serializes");
    diff_value(&a, &b, "")
}

fn diff_value(a: &toml::Value, b: &toml::Value, path: &str) -> Option<String> {
    use toml::Value;
    let join = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        }
    };
    match (a, b) {
        (Value::Table(ta), Value::Table(tb)) => {
            let keys: BTreeSet<&String> = ta.keys().chain(tb.keys()).collect();
            keys.into_iter().find_map(|k| match (ta.get(k), tb.get(k)) {
                (Some(x), Some(y)) => diff_value(x, y, &join(k)),
                _ => Some(join(k)),
            })
        }
        (Value::Array(xa), Value::Array(xb)) if xa.len() == xb.len() => xa
            .iter()
            .zip(xb)
            .enumerate()
            .find_map(|(i, (x, y))| diff_value(x, y, &format!("{path}[{i}]"))),
        _ => (a != b).then(|| path.to_string()),
    }
}

#[cfg(test)]
pub(crate) mod tests;
