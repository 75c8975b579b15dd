//! `history import`: the results directories under the given paths found (benchlab's and
//! netbenches', as `benchlab report` reads them), each hashed over its raw data, read and
//! recorded as one transaction. A directory whose hash is known is not read again, so a
//! re-import costs one pass of hashing and an interrupted import resumes where it stopped.

use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

use super::db::{Db, Imported};
use super::{CampaignRecord, LabId, RunRecord};
use crate::error::InputError;
use crate::ingest::{self, Results};

/// A results directory found under an import path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Found {
    /// A benchlab results directory (`campaign.toml` and `runs/`).
    Benchlab(PathBuf),
    /// A netbenches run (bench.* logs in it, its `RAW/`, or `RAW.<variant>/` folders).
    Netbenches(PathBuf),
}

impl Found {
    /// The directory.
    pub(crate) fn path(&self) -> &Path {
        match self {
            Found::Benchlab(p) | Found::Netbenches(p) => p,
        }
    }
}

/// Deepest directory level searched below an import path: an archive is
/// `CPU/NIC/topic/results/<run>/RAW`, and a symlink loop must end somewhere.
const MAX_DEPTH: usize = 12;

/// The results directories under `path`, in path order; bad input when `path` is no
/// directory or holds none.
pub(crate) fn find(path: &Path) -> Result<Vec<Found>, InputError> {
    if !path.is_dir() {
        let what = if path.exists() {
            "not a directory"
        } else {
            "no such directory"
        };
        return Err(InputError::new(format!(
            "'{}': {what}; give benchlab results directories or netbenches archives",
            path.display()
        )));
    }
    let mut found = Vec::new();
    walk(path, 0, &mut found);
    if found.is_empty() {
        return Err(InputError::new(format!(
            "'{}': neither a benchlab results directory (campaign.toml and runs/) nor netbenches \
             logs (bench.*.info), nor has any below it; nothing imported",
            path.display()
        )));
    }
    Ok(found)
}

fn walk(dir: &Path, depth: usize, found: &mut Vec<Found>) {
    if ingest::benchlab::is_results_dir(dir) {
        found.push(Found::Benchlab(dir.to_path_buf()));
        return;
    }
    if ingest::netbenches::holds_logs(dir) {
        found.push(Found::Netbenches(dir.to_path_buf()));
        return;
    }
    if depth >= MAX_DEPTH {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut subdirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        // Symlinked folders are not followed: an archive linking `latest -> r368287` would
        // import that run twice under two names.
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    subdirs.sort();
    for sub in subdirs {
        walk(&sub, depth + 1, found);
    }
}

/// What one directory's import did.
#[derive(Debug)]
pub(crate) enum Step {
    /// Recorded, or already there.
    Done(Imported),
    /// Refused: why, in one line.
    Refused(String),
}

/// Imports one directory: hashed, skipped when `db` knows it, else read and recorded, the
/// database `spec` opened (created) first when `db` is still `None`.
fn import_one(
    db: &mut Option<Db>,
    spec: &str,
    found: &Found,
    known_sets: &[&str],
) -> anyhow::Result<Step> {
    let hash = match content_hash(found) {
        Ok(hash) => hash,
        Err(e) => return Ok(Step::Refused(format!("cannot read it: {e}"))),
    };
    if let Some(db) = db {
        if db.knows(&hash)? {
            return Ok(Step::Done(Imported::Known));
        }
    }
    let record = read(found, hash, known_sets).map_err(|e| super::db::first_line(&e));
    let record = match record.and_then(measured) {
        Ok(record) => record,
        Err(why) => return Ok(Step::Refused(why)),
    };
    let db = match db {
        Some(db) => db,
        None => db.insert(Db::open(spec, true)?),
    };
    Ok(Step::Done(db.import(&record)?))
}

/// What an import did, directory by directory.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Summary {
    /// Campaigns recorded anew.
    pub(crate) added: usize,
    /// Campaigns recorded in place of an older content of their directory.
    pub(crate) replaced: usize,
    /// Directories already recorded.
    pub(crate) known: usize,
    /// Directories refused, with why.
    pub(crate) refused: Vec<(PathBuf, String)>,
}

/// Imports every directory of `found` into the database `spec`, calling `step` after each.
/// A database that does not exist yet is created only when a directory is to be recorded in
/// it: an import that refuses everything writes nothing.
pub(crate) fn import_all(
    spec: &str,
    found: &[Found],
    known_sets: &[&str],
    step: &mut dyn FnMut(&Found, &Step),
) -> anyhow::Result<Summary> {
    let is_file = !super::db::is_postgres(spec);
    let mut db = if is_file && !Path::new(spec).exists() {
        None
    } else {
        Some(Db::open(spec, true)?)
    };
    let mut summary = Summary::default();
    for dir in found {
        let done = import_one(&mut db, spec, dir, known_sets)?;
        match &done {
            Step::Done(Imported::Added) => summary.added += 1,
            Step::Done(Imported::Replaced) => summary.replaced += 1,
            Step::Done(Imported::Known) => summary.known += 1,
            Step::Refused(why) => summary
                .refused
                .push((dir.path().to_path_buf(), why.clone())),
        }
        step(dir, &done);
    }
    Ok(summary)
}

/// The record, unless it holds no measured iteration or text no database can store.
fn measured(record: CampaignRecord) -> Result<CampaignRecord, String> {
    if record.runs.iter().all(|r| r.values.is_empty()) {
        return Err("no measured iteration in it".to_string());
    }
    if has_nul(&record) {
        return Err("its files hold NUL bytes (zeroed by a crash?): restore them".to_string());
    }
    Ok(record)
}

/// Whether a text of the record holds a NUL byte: what a file zeroed by a crash reads as.
/// PostgreSQL refuses it in text, SQLite would keep it, and neither should hold a damaged
/// directory's words.
fn has_nul(c: &CampaignRecord) -> bool {
    let lab = [&c.lab.cpu, &c.lab.nic, &c.lab.os];
    let mut texts = [&c.source, &c.kind, &c.design].into_iter().chain(lab);
    let runs = c.runs.iter().flat_map(|r| {
        [&r.version, &r.config, &r.profile]
            .into_iter()
            .chain([&r.label, &r.folded, &r.flamegraph].into_iter().flatten())
    });
    let optional = [&c.date, &c.campaign_toml].into_iter().flatten();
    texts.any(|t| t.contains('\0')) || optional.chain(runs).any(|t| t.contains('\0'))
}

/// SHA-256 over the raw data the readers use, file by file (relative path, length, bytes):
/// `campaign.toml`, `lab.json` and `runs/` of a benchlab directory, the `bench.*` logs of a
/// netbenches run. Reports written beside them (README.md, graphs) change nothing.
pub(crate) fn content_hash(found: &Found) -> std::io::Result<String> {
    let dir = found.path();
    let mut files = Vec::new();
    match found {
        Found::Benchlab(_) => {
            for name in ["campaign.toml", "lab.json"] {
                if dir.join(name).is_file() {
                    files.push(PathBuf::from(name));
                }
            }
            list_files(dir, Path::new("runs"), &mut |_| true, &mut files)?;
        }
        Found::Netbenches(_) => {
            list_files(
                dir,
                Path::new(""),
                &mut |n| n.starts_with("bench."),
                &mut files,
            )?;
        }
    }
    files.sort();
    let mut hasher = Sha256::new();
    for rel in &files {
        let bytes =
            crate::file::read_bytes_in(dir, &dir.join(rel)).map_err(std::io::Error::other)?;
        hasher.update(rel.to_string_lossy().as_bytes());
        hasher.update([0]);
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// The regular files under `dir/rel` whose names `keep` accepts, relative to `dir`.
fn list_files(
    dir: &Path,
    rel: &Path,
    keep: &mut dyn FnMut(&str) -> bool,
    out: &mut Vec<PathBuf>,
) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir.join(rel))? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let path = rel.join(entry.file_name());
        if kind.is_dir() {
            list_files(dir, &path, keep, out)?;
        } else if kind.is_file() && keep(&entry.file_name().to_string_lossy()) {
            out.push(path);
        }
    }
    Ok(())
}

/// Reads a directory into the record its import stores.
pub(crate) fn read(
    found: &Found,
    hash: String,
    known_sets: &[&str],
) -> anyhow::Result<CampaignRecord> {
    let dir = found.path();
    let source = std::path::absolute(dir)?.display().to_string();
    match found {
        Found::Benchlab(_) => {
            let read = ingest::benchlab::read_dir(dir, known_sets)?;
            let host = read.lab.host.clone().unwrap_or_default();
            let lab = LabId {
                cpu: host.cpu.unwrap_or_else(|| "unknown CPU".to_string()),
                cores: host.cores,
                nic: (read.lab.nic_driver.clone()).unwrap_or_else(|| "unknown NIC".to_string()),
                os: (host.kernel.as_deref())
                    .and_then(|k| k.split_whitespace().next())
                    .unwrap_or_default()
                    .to_string(),
            };
            let campaign = &read.campaign;
            let mut runs = runs_of(&read.results, dir, "");
            for run in &mut runs {
                let version = campaign.versions.iter().find(|v| v.name == run.version);
                run.quick = version.is_some_and(|v| v.is_quick());
                run.label = version.and_then(|v| v.label.clone());
                // The report's flamegraph, when it was drawn, is the link a reader wants.
                let svg = (dir.join("flame")).join(format!(
                    "{}.{}.{}.svg",
                    run.version, run.config, run.profile
                ));
                if run.folded.is_some() && svg.is_file() {
                    run.flamegraph = Some(svg.display().to_string());
                }
            }
            Ok(CampaignRecord {
                hash,
                source,
                kind: "benchlab".to_string(),
                date: benchlab_date(dir),
                design: campaign.design.to_string(),
                lab,
                campaign_toml: crate::file::read_text_in(dir, &dir.join("campaign.toml")).ok(),
                runs,
            })
        }
        Found::Netbenches(_) => {
            let results = ingest::netbenches::read_dir(dir)?;
            let name = dir.file_name().unwrap_or_default().to_string_lossy();
            let runs = runs_of(&results, dir, &name);
            let uname = (results.series.iter()).find_map(|s| s.setup.uname.clone());
            Ok(CampaignRecord {
                hash,
                source,
                kind: "netbenches".to_string(),
                date: uname.as_deref().and_then(build_date),
                design: "trials".to_string(),
                lab: netbenches_lab(dir, uname.as_deref()),
                campaign_toml: None,
                runs,
            })
        }
    }
}

/// One run per series, its iterations' values and its capture; a series without a version
/// level takes `fallback` (a netbenches run's folder name, `fbsd12-head.r299288`).
fn runs_of(results: &Results, dir: &Path, fallback: &str) -> Vec<RunRecord> {
    (results.series.iter())
        .map(|s| {
            let capture = (results.captures.iter()).find(|c| {
                c.problem.is_none()
                    && (c.version.as_str(), c.config.as_str(), c.profile.as_str())
                        == (s.version.as_str(), s.config.as_str(), s.profile.as_str())
            });
            RunRecord {
                version: if s.version.is_empty() {
                    fallback.to_string()
                } else {
                    s.version.clone()
                },
                config: s.config.clone(),
                profile: s.profile.clone(),
                label: None,
                quick: false,
                values: s.iterations.iter().map(|i| i.median_pps).collect(),
                folded: capture.map(|c| c.folded.clone()).filter(|f| !f.is_empty()),
                flamegraph: capture.map(|c| dir.join(&c.trial).display().to_string()),
            }
        })
        .collect()
}

/// When a benchlab campaign ran: its first trial's start, else when `campaign.toml` was written.
fn benchlab_date(dir: &Path) -> Option<String> {
    let first = crate::store::Store::open(dir)
        .ok()
        .and_then(|s| s.finished_trials().ok())
        .and_then(|t| {
            (t.values().map(|m| m.start_unix_s))
                .filter(|s| s.is_finite() && *s > 0.0)
                .reduce(f64::min)
        });
    let time = match first {
        Some(s) => chrono::DateTime::from_timestamp(s as i64, 0)?,
        None => std::fs::metadata(dir.join("campaign.toml"))
            .and_then(|m| m.modified())
            .ok()?
            .into(),
    };
    Some(time.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
}

/// The build date in a FreeBSD `uname -a` (`… #16 r318516M: Fri May 19 07:58:49 CEST 2017 …`),
/// as `2017-05-19`: when the image under test was made, the archive's only date.
pub(crate) fn build_date(uname: &str) -> Option<String> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let words: Vec<&str> = uname.split_whitespace().collect();
    words.windows(3).enumerate().find_map(|(i, w)| {
        let month = MONTHS.iter().position(|m| *m == w[1])? as u32 + 1;
        let day: u32 = w[2].parse().ok()?;
        let _weekday = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
            .iter()
            .position(|d| *d == w[0])?;
        let year: i32 = (words[i + 3..].iter().take(3))
            .find_map(|y| (y.len() == 4).then(|| y.parse().ok()).flatten())?;
        let date = chrono::NaiveDate::from_ymd_opt(year, month, day)?;
        Some(date.format("%Y-%m-%d").to_string())
    })
}

/// A netbenches run's lab: `CPU/NIC/topic/results/<run>` in its path, else the README's first
/// two list lines (hardware), else the folder's name; the OS from `uname`.
fn netbenches_lab(dir: &Path, uname: Option<&str>) -> LabId {
    let os = uname
        .and_then(|u| u.split_whitespace().next())
        .unwrap_or_default()
        .to_string();
    let parts: Vec<String> = (std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf()))
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    if let Some(at) = parts
        .iter()
        .rposition(|p| p == "results")
        .filter(|at| *at >= 3)
    {
        let cpu = parts[at - 3].clone();
        return LabId {
            cores: cores_in(&cpu),
            cpu,
            nic: parts[at - 2].clone(),
            os,
        };
    }
    let readme = crate::file::read_text_in(dir, &dir.join("README.md")).unwrap_or_default();
    let mut hardware = readme
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("- "))
        .map(str::trim);
    match (hardware.next(), hardware.next()) {
        (Some(cpu), Some(nic)) => LabId {
            cpu: cpu.to_string(),
            cores: None,
            nic: nic.to_string(),
            os,
        },
        _ => LabId {
            cpu: parts.last().cloned().unwrap_or_default(),
            cores: None,
            nic: String::new(),
            os,
        },
    }
}

/// `8` from `Xeon_E5-2650_8Cores`.
fn cores_in(cpu: &str) -> Option<u32> {
    let at = cpu.find("Cores")?;
    let digits: String = cpu[..at]
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.chars().rev().collect::<String>().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_dates_come_from_uname() {
        let uname = "FreeBSD apu2 12.0-CURRENT FreeBSD 12.0-CURRENT #16 r318516M: Fri May 19 \
                     07:58:49 CEST 2017     olivier@lame4.bsdrp.net:/usr/obj amd64";
        assert_eq!(build_date(uname).as_deref(), Some("2017-05-19"));
        assert_eq!(build_date("Linux dut 6.1.0 #1 SMP PREEMPT_DYNAMIC"), None);
    }

    #[test]
    fn cores_are_read_from_the_archive_cpu_folder() {
        assert_eq!(cores_in("Xeon_E5-2650_8Cores"), Some(8));
        assert_eq!(cores_in("AMD_GX-412TC_4Cores"), Some(4));
        assert_eq!(cores_in("Atom_C2758"), None);
    }
}
