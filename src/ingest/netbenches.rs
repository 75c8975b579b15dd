//! Reader for netbenches bench-lab.sh result directories.
//!
//! The harness writes, flat in its results directory (later often moved into `RAW/`),
//! `bench[.IMAGE][.CFG][.PKTGEN].info` once per series and
//! `bench[.IMAGE][.CFG][.PKTGEN].<ITER>.{receiver,sender,…}` per iteration. A series exists when
//! its `.info` does (bench-lab-ministat.sh loops over the `.info` files); series and
//! iterations come in the harness's `ls` order (bytewise: iteration 10 sorts before 2), so the
//! `.pps` files we write list their medians in the same order as the archived ones.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{shown, InputError};
use crate::ingest::{Iteration, Results, Series, Setup, Warning};
use crate::stats::ministat::MIN_POINTS;
use crate::stats::{Flavor, Summary};

/// `.info` parsing and name levels.
pub mod info;
/// pkt-gen log parsing.
pub mod pktgen;
/// pmcstat call graphs (`*.pmc.graph`): the DUT's profiles.
pub(crate) mod pmc;

/// Reads a netbenches results directory: the logs in `dir` itself, in its `RAW/` (or `raw/`)
/// folder, or in subfolders, one per variant of the run (`RAW.1rx`, `RAW.8rx`, or one folder
/// per run, each with its logs or its own `RAW/`).
///
/// A variant becomes part of the config-set level (`forwarding.1rx`, or `1rx` when the run had
/// no config set): the variants of a run differ by a DUT setting, which is what the config-set
/// comparisons show, so one report compares them with Student's t where separate reports could
/// not. An unreadable file or a directory without any `.info` file is an [`InputError`] naming
/// it; broken iterations are left out and reported as [`Warning`]s.
pub fn read_dir(dir: &Path) -> Result<Results, InputError> {
    let mut results = Results {
        method: "the median of the receiver's per-second rates, first 15 and last 10 log lines \
                 dropped (bench-lab-ministat.sh)"
            .to_string(),
        generators: [(String::new(), "pkt-gen sender".to_string())].into(),
        ..Results::default()
    };
    for run in find_logs(dir)? {
        read_run(dir, &run, &mut results)?;
    }
    // `logs_in` reads the first of the folders that holds logs; a second copy is said.
    let mut holding: Vec<PathBuf> = folders_with_logs(dir).map(|(folder, _)| folder).collect();
    // One folder under two names (a file system that ignores case) is no copy.
    holding.dedup_by_key(|folder| folder.canonicalize().ok());
    if let [read, left_out, ..] = holding.as_slice() {
        results.warnings.push(Warning::LogsTwice {
            read: read.display().to_string(),
            left_out: left_out.display().to_string(),
        });
    }
    Ok(results)
}

/// Largest iteration number read from a log's name: a run of more iterations would take weeks,
/// and each missing one is a line of the report.
pub(crate) const MAX_ITERATION: u32 = 10_000;

/// One folder of logs: a whole run, or one variant of it.
#[derive(Debug)]
struct Run {
    /// The folder.
    path: PathBuf,
    /// Its variant name (`1rx` for `RAW.1rx`), `None` for the only folder of a run.
    variant: Option<String>,
    /// Its file names, sorted bytewise.
    names: Vec<String>,
}

impl Run {
    /// A log's name relative to the results directory `dir`.
    fn relative(&self, dir: &Path, name: &str) -> String {
        match self.path.strip_prefix(dir) {
            Ok(sub) if !sub.as_os_str().is_empty() => format!("{}/{name}", sub.display()),
            _ => name.to_string(),
        }
    }

    /// Reads a log: line-based, its lines bounded.
    fn read(&self, name: &str) -> Result<String, InputError> {
        crate::store::read_lines(&self.path, &self.path.join(name))
    }
}

/// Reads the series of one folder of logs into `results`.
fn read_run(dir: &Path, run: &Run, results: &mut Results) -> Result<(), InputError> {
    let first_series = results.series.len();
    // Log names become series names, `.pps` file names and README text.
    let named = (run.names.iter()).find(|n| n.starts_with("bench") && n.contains(char::is_control));
    if let Some(name) = named {
        return Err(InputError::new(format!(
            "'{}/{}': a log name with control characters, which no harness writes; rename \
             or remove the file",
            run.path.display(),
            shown(name)
        )));
    }
    let files = classify(&run.names);
    if let Some(name) = files.out_of_range.first() {
        return Err(InputError::new(format!(
            "'{}': iteration number over {MAX_ITERATION}, more than any run has; \
             rename or remove the file",
            run.path.join(name).display()
        )));
    }
    let mut expected_iterations = 0;
    let mut seen = Vec::new();
    let mut prefixes = Vec::new();
    for prefix in &files.infos {
        let receivers = files
            .receivers
            .get(prefix)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let series = read_series(dir, run, &files, prefix, &mut results.warnings)?;
        if receivers.is_empty() {
            results.warnings.push(Warning::NoIterations {
                series: series.name.clone(),
            });
        } else {
            let indexes: Vec<u32> = receivers.iter().map(|r| r.0).collect();
            expected_iterations = indexes.iter().copied().fold(expected_iterations, u32::max);
            seen.push((results.series.len(), indexes));
            prefixes.push(prefix.as_str());
            results.series.push(series);
        }
    }
    // Every series of a run has the same iteration count, so a gap anywhere shows as missing.
    for (position, indexes) in seen {
        let name = &results.series[position].name;
        for index in (1..=expected_iterations).filter(|i| !indexes.contains(i)) {
            results.warnings.push(Warning::MissingIteration {
                series: name.clone(),
                index,
                why: "no receiver log",
            });
        }
    }
    for (prefix, receivers) in &files.receivers {
        if !files.infos.contains(prefix) {
            results
                .warnings
                .extend(receivers.iter().map(|(_, name)| Warning::NoInfo {
                    file: run.relative(dir, name),
                }));
        }
    }
    let series: Vec<(&str, &Series)> = prefixes
        .into_iter()
        .zip(&results.series[first_series..])
        .collect();
    let graphs = graph_files(dir, run);
    let captures = pmc::captures(&graphs, &series, &mut results.warnings)?;
    results.captures.extend(captures);
    Ok(())
}

/// The pmcstat call graphs of a run: beside its logs, then, for the only run of a directory
/// whose logs are in `RAW/`, beside the README, where the archive keeps them.
fn graph_files(dir: &Path, run: &Run) -> Vec<pmc::GraphFile> {
    let beside_logs = (run.names.iter()).map(|name| pmc::GraphFile {
        root: run.path.clone(),
        path: run.path.join(name),
        name: name.clone(),
        shown: run.relative(dir, name),
    });
    let archived = if run.variant.is_none() && run.path != dir {
        list(dir).unwrap_or_default()
    } else {
        Vec::new()
    };
    let beside_readme = archived.into_iter().map(|name| pmc::GraphFile {
        root: dir.to_path_buf(),
        path: dir.join(&name),
        shown: name.clone(),
        name,
    });
    beside_logs
        .chain(beside_readme)
        .filter(|f| f.name.ends_with(".pmc.graph"))
        .collect()
}

/// The series of one `.info` prefix: its iterations in `ls` order.
fn read_series(
    dir: &Path,
    run: &Run,
    files: &Files,
    prefix: &str,
    warnings: &mut Vec<Warning>,
) -> Result<Series, InputError> {
    let info_file = info_name(prefix);
    let mut info_text = run.read(&info_file)?;
    if let Some(why) = info::damage(&info_text) {
        warnings.push(Warning::BadInfo {
            file: run.relative(dir, &info_file),
            why,
        });
        info_text.clear();
    }
    // The 2016 harness (free-text .info) wrote an empty .pps line for a failed iteration.
    let blank_lines = info::is_free_text(&info_text);
    let info = info::parse_info(&info_text);
    let mut series = new_series(prefix, info, run.variant.as_deref());
    let receivers = files.receivers.get(prefix).map(Vec::as_slice);
    for (index, receiver) in receivers.unwrap_or(&[]) {
        let source = run.relative(dir, receiver);
        let warning = match pktgen::harness_samples(&run.read(receiver)?) {
            Err(line) => Warning::BadSample { file: source, line },
            Ok(samples) => match median(&samples) {
                None => Warning::TooFewSamples {
                    file: source,
                    samples: samples.len(),
                },
                Some(median_pps) => {
                    let mut offered_pps = None;
                    if let Some(sender) = files.senders.get(&(prefix.to_string(), *index)) {
                        let text = run.read(sender)?;
                        let log = pktgen::parse_sender(&text);
                        offered_pps = log.speed_pps.or_else(|| median(&pktgen::rates(&text)));
                        if series.setup.traffic.is_none() {
                            series.setup.traffic = log.traffic;
                        }
                    }
                    series.iterations.push(Iteration {
                        index: *index,
                        median_pps,
                        samples: samples.len(),
                        offered_pps,
                        source,
                        troubles: Vec::new(),
                    });
                    continue;
                }
            },
        };
        warnings.push(warning);
        if blank_lines {
            series
                .pps_blanks
                .push(series.iterations.len() + series.pps_blanks.len());
        }
    }
    Ok(series)
}

/// A series without iterations, its levels from its prefix and `.info`, and its variant in
/// the config-set level.
fn new_series(prefix: &str, info: info::Info, variant: Option<&str>) -> Series {
    let levels = info::resolve_levels(prefix, &info);
    let config = [levels.cfg.as_str(), variant.unwrap_or("")]
        .into_iter()
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(".");
    let parts = [&levels.image, &config, &levels.pktgen];
    let name = if parts.iter().all(|p| p.is_empty()) {
        "bench".to_string()
    } else {
        (parts.iter())
            .filter(|p| !p.is_empty())
            .map(|p| p.as_str())
            .collect::<Vec<_>>()
            .join(".")
    };
    Series {
        name,
        version: levels.image,
        config,
        profile: levels.pktgen,
        iterations: Vec::new(),
        pps_blanks: Vec::new(),
        setup: Setup {
            uname: info.uname,
            traffic: None,
        },
    }
}

/// Median of per-second rates (even counts averaged, as FreeBSD's ministat and the archive);
/// `None` below ministat's minimum, where the harness silently skips the iteration.
fn median(samples: &[f64]) -> Option<f64> {
    (samples.len() >= MIN_POINTS).then(|| Summary::of(samples, Flavor::Current).median)
}

fn info_name(prefix: &str) -> String {
    if prefix.is_empty() {
        "bench.info".to_string()
    } else {
        format!("bench.{prefix}.info")
    }
}

/// The harness's files in a directory, by role.
#[derive(Debug, Default)]
struct Files {
    /// Prefixes with a `.info` file, sorted bytewise.
    infos: Vec<String>,
    /// Receiver logs per prefix: (iteration, file name), in `ls` order.
    receivers: BTreeMap<String, Vec<(u32, String)>>,
    /// Sender log per (prefix, iteration).
    senders: BTreeMap<(String, u32), String>,
    /// Logs whose iteration number is over [`MAX_ITERATION`].
    out_of_range: Vec<String>,
}

/// Sorts the directory's file names by role; `names` must be sorted bytewise.
fn classify(names: &[String]) -> Files {
    let mut files = Files::default();
    for name in names {
        let Some(rest) = name.strip_prefix("bench") else {
            continue;
        };
        let rest = rest.strip_prefix('.').unwrap_or(rest);
        if let Some(prefix) = rest.strip_suffix("info") {
            if prefix.is_empty() || prefix.ends_with('.') {
                files.infos.push(prefix.trim_end_matches('.').to_string());
            }
            continue;
        }
        let (stem, receiver) = if let Some(stem) = rest.strip_suffix(".receiver") {
            (stem, true)
        } else if let Some(stem) = rest.strip_suffix(".sender") {
            (stem, false)
        } else {
            continue;
        };
        let (prefix, iteration) = stem.rsplit_once('.').unwrap_or(("", stem));
        let index = match iteration.parse::<u32>() {
            Ok(index) => index,
            // All digits but past a u32: an iteration out of range too, not a stray file.
            Err(_) if !iteration.is_empty() && iteration.bytes().all(|b| b.is_ascii_digit()) => {
                u32::MAX
            }
            Err(_) => continue,
        };
        if index > MAX_ITERATION {
            files.out_of_range.push(name.clone());
            continue;
        }
        if receiver {
            files
                .receivers
                .entry(prefix.to_string())
                .or_default()
                .push((index, name.clone()));
        } else {
            files
                .senders
                .insert((prefix.to_string(), index), name.clone());
        }
    }
    files
}

/// The folders of logs of `dir`: itself, its `RAW/` or `raw/`, else every subfolder holding
/// logs (itself or in its `RAW/`), named after it (`RAW.1rx` → variant `1rx`).
fn find_logs(dir: &Path) -> Result<Vec<Run>, InputError> {
    let names = list(dir).map_err(|e| {
        InputError::new(format!(
            "cannot read directory '{}': {e}; give a benchlab results directory or one of \
                 netbenches logs",
            dir.display()
        ))
    })?;
    if let Some((path, names)) = logs_in(dir) {
        return Ok(vec![Run {
            path,
            variant: None,
            names,
        }]);
    }
    let runs: Vec<Run> = (names.iter())
        .filter(|name| !["RAW", "raw"].contains(&name.as_str()))
        .filter_map(|name| {
            let (path, names) = logs_in(&dir.join(name))?;
            let variant = name.strip_prefix("RAW.").unwrap_or(name);
            Some(Run {
                path,
                variant: Some(variant.to_string()),
                names,
            })
        })
        .collect();
    if !runs.is_empty() {
        return Ok(runs);
    }
    let benchlab = ["runs", "lab.json", "campaign.toml"]
        .iter()
        .find(|name| names.contains(&name.to_string()));
    Err(InputError::new(match benchlab {
        Some(found) => format!(
            "'{}' has {found} but is no complete benchlab results directory: it needs both \
             campaign.toml (the campaign as run) and runs/; restore the missing one",
            dir.display()
        ),
        None => format!(
            "'{}': no netbenches results (bench.*.info) in it, in its RAW/ folder or in a \
             subfolder, and no benchlab results (campaign.toml, runs/); give the directory \
             that `benchlab run` wrote or that holds the bench.* logs",
            dir.display()
        ),
    }))
}

/// Whether `dir` holds one run's logs as [`read_dir`] reads them: in itself, in its `RAW/` or
/// `raw/` folder, or in `RAW.<variant>/` folders (a folder of whole runs, each in a folder of
/// its own, does not: `benchlab history import` takes each of those as a run).
pub(crate) fn holds_logs(dir: &Path) -> bool {
    logs_in(dir).is_some()
        || list(dir).is_ok_and(|names| {
            (names.iter()).any(|n| n.starts_with("RAW.") && logs_in(&dir.join(n)).is_some())
        })
}

/// The folders among `dir`, `dir/RAW` and `dir/raw` that hold `.info` files, in the order
/// they are looked in, with their names.
fn folders_with_logs(dir: &Path) -> impl Iterator<Item = (PathBuf, Vec<String>)> {
    [dir.to_path_buf(), dir.join("RAW"), dir.join("raw")]
        .into_iter()
        .filter_map(|candidate| {
            let names = list(&candidate).ok()?;
            (!classify(&names).infos.is_empty()).then_some((candidate, names))
        })
}

/// The first of [`folders_with_logs`]: the one read.
fn logs_in(dir: &Path) -> Option<(PathBuf, Vec<String>)> {
    folders_with_logs(dir).next()
}

fn list(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        if let Ok(name) = entry?.file_name().into_string() {
            names.push(name);
        }
    }
    names.sort_unstable();
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify_by_role_in_ls_order() {
        let mut names: Vec<String> = [
            "bench.a.x.info",
            "bench.a.x.1.receiver",
            "bench.a.x.10.receiver",
            "bench.a.x.2.receiver",
            "bench.a.x.2.sender",
            "bench.a.x.2.sender_2",
            "bench.a.x.2.pmc.graph",
            "bench.a.x.info.bak",
            "bench.info",
            "bench.1.receiver",
            "bench.b.x.1.receiver",
            "a.x.pps",
            "README.md",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        names.sort_unstable();
        let files = classify(&names);
        // Bytewise, as `ls` in the C locale: "bench.a.x.info" < "bench.info".
        assert_eq!(files.infos, vec!["a.x", ""]);
        let order: Vec<u32> = files.receivers["a.x"].iter().map(|r| r.0).collect();
        assert_eq!(order, vec![1, 10, 2]);
        assert_eq!(
            files.receivers[""],
            vec![(1, "bench.1.receiver".to_string())]
        );
        assert_eq!(files.senders.len(), 1);
        assert!(files.receivers.contains_key("b.x"));
    }
}
