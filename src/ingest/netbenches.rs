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

use crate::error::InputError;
use crate::ingest::{Iteration, Results, Series, Setup, Warning};
use crate::stats::ministat::MIN_POINTS;
use crate::stats::{Flavor, Summary};

/// `.info` parsing and name levels.
pub mod info;
/// pkt-gen log parsing.
pub mod pktgen;

/// Reads a netbenches results directory: `dir` itself when it holds `bench.*.info` files,
/// else `dir/RAW`.
///
/// An unreadable file or a directory without any `.info` file is an [`InputError`] naming it;
/// broken iterations are left out and reported as [`Warning`]s.
pub fn read_dir(dir: &Path) -> Result<Results, InputError> {
    let (logs_dir, names) = find_logs(dir)?;
    let relative = |name: &str| match logs_dir.strip_prefix(dir) {
        Ok(sub) if !sub.as_os_str().is_empty() => format!("{}/{name}", sub.display()),
        _ => name.to_string(),
    };
    let files = classify(&names);
    let read = |name: &str| crate::ingest::file::read_text(&logs_dir.join(name));

    let mut results = Results {
        method: "the median of the receiver's per-second rates, first 15 and last 10 log lines \
                 dropped (bench-lab-ministat.sh)"
            .to_string(),
        generator: Some("pkt-gen sender".to_string()),
        ..Results::default()
    };
    let mut expected_iterations = 0;
    let mut seen = Vec::new();
    for prefix in &files.infos {
        let info = info::parse_info(&read(&info_name(prefix))?);
        let levels = info::resolve_levels(prefix, &info);
        let mut series = Series {
            name: if prefix.is_empty() {
                "bench".to_string()
            } else {
                prefix.clone()
            },
            version: levels.image,
            config: levels.cfg,
            profile: levels.pktgen,
            iterations: Vec::new(),
            setup: Setup {
                uname: info.uname,
                traffic: None,
            },
        };
        let receivers = files
            .receivers
            .get(prefix)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        for (index, receiver) in receivers {
            expected_iterations = expected_iterations.max(*index);
            let source = relative(receiver);
            let samples = match pktgen::harness_samples(&read(receiver)?) {
                Ok(samples) => samples,
                Err(line) => {
                    results
                        .warnings
                        .push(Warning::BadSample { file: source, line });
                    continue;
                }
            };
            let Some(median_pps) = median(&samples) else {
                results.warnings.push(Warning::TooFewSamples {
                    file: source,
                    samples: samples.len(),
                });
                continue;
            };
            let mut offered_pps = None;
            if let Some(sender) = files.senders.get(&(prefix.clone(), *index)) {
                let text = read(sender)?;
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
            });
        }
        if receivers.is_empty() {
            results.warnings.push(Warning::NoIterations {
                series: series.name.clone(),
            });
        } else {
            seen.push((
                results.series.len(),
                receivers.iter().map(|r| r.0).collect::<Vec<_>>(),
            ));
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
            });
        }
    }
    for (prefix, receivers) in &files.receivers {
        if !files.infos.contains(prefix) {
            results
                .warnings
                .extend(receivers.iter().map(|(_, name)| Warning::NoInfo {
                    file: relative(name),
                }));
        }
    }
    Ok(results)
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
        let Ok(index) = iteration.parse::<u32>() else {
            continue;
        };
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

/// The directory holding the logs (`dir` or `dir/RAW`) and its file names, sorted bytewise.
fn find_logs(dir: &Path) -> Result<(PathBuf, Vec<String>), InputError> {
    for candidate in [dir.to_path_buf(), dir.join("RAW")] {
        let names = match list(&candidate) {
            Ok(names) => names,
            Err(e) if candidate == dir => {
                return Err(InputError::new(format!(
                    "cannot read directory '{}': {e}",
                    dir.display()
                )))
            }
            Err(_) => continue,
        };
        if !classify(&names).infos.is_empty() {
            return Ok((candidate, names));
        }
    }
    Err(InputError::new(format!(
        "'{}': no netbenches results (bench.*.info) in it or in its RAW/ folder; \
         give the directory that holds the bench.* logs",
        dir.display()
    )))
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
