//! The DUT profiles of a netbenches directory: `bench[.IMAGE][.CFG][.PKTGEN][.ITER].pmc.graph`,
//! the call graph the harness's `-P` option had `pmcstat -R … -G` write beside the logs (the
//! archive keeps them beside its README, the logs in `RAW/`), folded into a [`Capture`] per
//! series so that the report checks and draws it as it does benchlab's own captures.
//!
//! [`Capture`]: crate::ingest::Capture

use std::path::PathBuf;

use crate::error::InputError;
use crate::ingest::{Capture, Series, Warning};
use crate::profile::pmc::fold_pmcstat;

/// Suffix of the harness's call graphs.
const GRAPH_SUFFIX: &str = ".pmc.graph";

/// A call graph file found beside the logs or beside the archive's README.
#[derive(Debug, Clone)]
pub(crate) struct GraphFile {
    /// The directory it must stay inside (through symlinks too): its run's, or the results
    /// directory's.
    pub(crate) root: PathBuf,
    /// Its path.
    pub(crate) path: PathBuf,
    /// Its file name.
    pub(crate) name: String,
    /// The name the report shows (relative to the results directory: `RAW/…` or `…`).
    pub(crate) shown: String,
}

/// A graph's series prefix and iteration, read with the rules of the logs' names:
/// `bench[.PREFIX][.ITER].pmc.graph`, where PREFIX is a series' (`.info`) prefix; the
/// iteration is optional (`bench.r368287.inet4.pmc.graph`), as is every level of the prefix
/// (`bench.forwarding.inet4.1.pmc.graph` has no image). `Err`: why it names no series.
fn series_of(name: &str, prefixes: &[&str]) -> Option<Result<(String, Option<u32>), String>> {
    let rest = name.strip_prefix("bench")?.strip_suffix(GRAPH_SUFFIX)?;
    let stem = match rest {
        "" => "",
        _ => rest.strip_prefix('.')?,
    };
    let (head, last) = stem.rsplit_once('.').unwrap_or(("", stem));
    let iteration = last.parse::<u32>().ok();
    if let Some(i) = iteration.filter(|_| prefixes.contains(&head)) {
        return Some(Ok((head.to_string(), Some(i))));
    }
    if prefixes.contains(&stem) {
        return Some(Ok((stem.to_string(), None)));
    }
    let prefix = if iteration.is_some() { head } else { stem };
    Some(Err(format!(
        "no series of the logs is named '{prefix}' (no bench.{prefix}.info with receiver logs)"
    )))
}

/// One capture per series that has a call graph, in `series` order: its lowest iteration's
/// (the harness profiled one iteration, `-P` sets the iteration count to 1), a graph beside
/// the logs before one of the same iteration beside the README. A graph that does not fold
/// gives a capture rejected with the fold's error, so that the report says why and goes on;
/// a graph that names no series, or a series drawn from another graph, is a [`Warning`].
///
/// `series` pairs each series with the `.info` prefix it was read from.
pub(crate) fn captures(
    files: &[GraphFile],
    series: &[(&str, &Series)],
    warnings: &mut Vec<Warning>,
) -> Result<Vec<Capture>, InputError> {
    let prefixes: Vec<&str> = series.iter().map(|(p, _)| *p).collect();
    let mut found: Vec<(&str, Option<u32>, &GraphFile)> = Vec::new();
    for file in files {
        match series_of(&file.name, &prefixes) {
            None => {}
            Some(Err(why)) => warnings.push(Warning::UnmatchedGraph {
                file: file.shown.clone(),
                why,
            }),
            Some(Ok((prefix, iteration))) => {
                let prefix = prefixes
                    .iter()
                    .find(|p| **p == prefix)
                    .copied()
                    .unwrap_or("");
                found.push((prefix, iteration, file));
            }
        }
    }
    let mut captures = Vec::new();
    for (prefix, s) in series {
        let mut graphs: Vec<&(&str, Option<u32>, &GraphFile)> =
            found.iter().filter(|(p, ..)| p == prefix).collect();
        // Stable: a graph beside the logs (listed first) wins a tie.
        graphs.sort_by_key(|(_, iteration, _)| *iteration);
        let Some((_, _, first)) = graphs.first() else {
            continue;
        };
        for (_, _, other) in &graphs[1..] {
            warnings.push(Warning::UnmatchedGraph {
                file: other.shown.clone(),
                why: format!("series {} is drawn from {}", s.name, first.shown),
            });
        }
        captures.push(capture(s, first)?);
    }
    Ok(captures)
}

/// A series' capture from its call graph.
fn capture(s: &Series, file: &GraphFile) -> Result<Capture, InputError> {
    let text = crate::file::read_text_in(&file.root, &file.path)?;
    let (folded, problem) = match fold_pmcstat(text.as_bytes(), &file.shown) {
        Ok(folded) => (folded.to_text(), None),
        Err(e) => (String::new(), Some(e.to_string())),
    };
    Ok(Capture {
        version: s.version.clone(),
        config: s.config.clone(),
        profile: s.profile.clone(),
        trial: file.shown.clone(),
        folded,
        problem,
        // The harness's pmcstat sampled every CPU of the DUT.
        system_wide: true,
        source: "Every CPU of the DUT as the harness's pmcstat sampled it \
                 (`bench.*.pmc.graph`)"
            .into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(dir: &std::path::Path, names: &[&str]) -> Vec<GraphFile> {
        (names.iter())
            .map(|n| GraphFile {
                root: dir.to_path_buf(),
                path: dir.join(n),
                name: n.to_string(),
                shown: format!("RAW/{n}"),
            })
            .collect()
    }

    #[test]
    fn graph_names_with_or_without_iteration_and_levels() {
        let prefixes = [
            "318516current.forwarding.inet4",
            "r368287.inet4",
            "forwarding.inet4",
            "",
        ];
        let read = |n: &str| series_of(n, &prefixes);
        let ok = |p: &str, i: Option<u32>| Some(Ok((p.to_string(), i)));
        assert_eq!(
            read("bench.318516current.forwarding.inet4.1.pmc.graph"),
            ok("318516current.forwarding.inet4", Some(1))
        );
        assert_eq!(
            read("bench.r368287.inet4.pmc.graph"),
            ok("r368287.inet4", None)
        );
        assert_eq!(
            read("bench.forwarding.inet4.1.pmc.graph"),
            ok("forwarding.inet4", Some(1))
        );
        assert_eq!(read("bench.1.pmc.graph"), ok("", Some(1)));
        assert_eq!(read("bench.pmc.graph"), ok("", None));
        assert_eq!(read("bench.r368287.inet4.1.pmc.out"), None);
        let why = read("bench.r368606.inet4.pmc.graph").unwrap().unwrap_err();
        assert!(
            why.contains("no series of the logs is named 'r368606.inet4'"),
            "{why}"
        );
    }

    #[test]
    fn a_damaged_graph_is_a_rejected_capture_naming_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let good = "@ E [2 samples]\n100.0%  [2]  ip_input @ k\n 100.0%  [2]  ether_input\n";
        std::fs::write(dir.path().join("bench.a.x.2.pmc.graph"), good).unwrap();
        std::fs::write(
            dir.path().join("bench.a.x.1.pmc.graph"),
            "@ E [2 samples]\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("bench.b.x.1.pmc.graph"), good).unwrap();
        let names = [
            "bench.a.x.1.pmc.graph",
            "bench.a.x.2.pmc.graph",
            "bench.b.x.1.pmc.graph",
        ];
        let series = |name: &str| Series {
            name: name.to_string(),
            version: name.to_string(),
            ..Series::default()
        };
        let (a, c) = (series("a.x"), series("c.x"));
        let mut warnings = Vec::new();
        let found = captures(
            &files(dir.path(), &names),
            &[("a.x", &a), ("c.x", &c)],
            &mut warnings,
        )
        .unwrap();
        assert_eq!(found.len(), 1, "one per series that has a graph: {found:?}");
        assert_eq!(found[0].trial, "RAW/bench.a.x.1.pmc.graph");
        assert_eq!(found[0].folded, "");
        let problem = found[0].problem.as_deref().unwrap();
        assert!(
            problem.starts_with("RAW/bench.a.x.1.pmc.graph: line 2: the section of line 1"),
            "{problem}"
        );
        let said: Vec<String> = warnings.iter().map(ToString::to_string).collect();
        assert_eq!(
            said,
            [
                "RAW/bench.b.x.1.pmc.graph: pmcstat call graph not drawn: no series of the logs \
                 is named 'b.x' (no bench.b.x.info with receiver logs)",
                "RAW/bench.a.x.2.pmc.graph: pmcstat call graph not drawn: series a.x is drawn \
                 from RAW/bench.a.x.1.pmc.graph",
            ]
        );
    }
}
