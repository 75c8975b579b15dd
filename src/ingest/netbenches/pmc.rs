//! The DUT profiles of a netbenches directory: `bench[.IMAGE][.CFG][.PKTGEN].<ITER>.pmc.graph`,
//! the call graph the harness's `-P` option had `pmcstat -R … -G` write beside the logs, folded
//! into a [`Capture`] per series so that the report checks and draws it as it does benchlab's
//! own captures.
//!
//! [`Capture`]: crate::ingest::Capture

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::InputError;
use crate::ingest::{Capture, Series};
use crate::profile::pmc::fold_pmcstat;

/// Suffix of the harness's call graphs.
const GRAPH_SUFFIX: &str = ".pmc.graph";

/// The call graphs in `names` (sorted bytewise), per series prefix: (iteration, file name).
fn graphs(names: &[String]) -> BTreeMap<String, Vec<(u32, String)>> {
    let mut graphs: BTreeMap<String, Vec<(u32, String)>> = BTreeMap::new();
    for name in names {
        let Some(stem) =
            (name.strip_prefix("bench.")).and_then(|rest| rest.strip_suffix(GRAPH_SUFFIX))
        else {
            continue;
        };
        let (prefix, iteration) = stem.rsplit_once('.').unwrap_or(("", stem));
        if let Ok(index) = iteration.parse::<u32>() {
            graphs
                .entry(prefix.to_string())
                .or_default()
                .push((index, name.clone()));
        }
    }
    graphs
}

/// One capture per series that has a call graph: its first iteration's (the harness profiled
/// one iteration, `-P` sets the iteration count to 1). A graph that does not fold gives a
/// capture rejected with the fold's error, so that the report says why and goes on.
///
/// `relative` turns a file name into the name the report shows (`RAW/…`).
pub fn captures(
    logs_dir: &Path,
    names: &[String],
    series: &[Series],
    relative: impl Fn(&str) -> String,
) -> Result<Vec<Capture>, InputError> {
    let graphs = graphs(names);
    let mut captures = Vec::new();
    for s in series {
        let prefix = if s.name == "bench" { "" } else { &s.name };
        let Some(first) = (graphs.get(prefix)).and_then(|g| g.iter().min_by_key(|(i, _)| *i))
        else {
            continue;
        };
        let trial = relative(&first.1);
        let text = crate::ingest::file::read_text(&logs_dir.join(&first.1))?;
        let (folded, problem) = match fold_pmcstat(text.as_bytes(), &trial) {
            Ok(folded) => (folded.to_text(), None),
            Err(e) => (String::new(), Some(e.to_string())),
        };
        captures.push(Capture {
            version: s.version.clone(),
            config: s.config.clone(),
            profile: s.profile.clone(),
            trial,
            folded,
            problem,
            // The harness's pmcstat sampled every CPU of the DUT.
            system_wide: true,
            source: "Every CPU of the DUT as the harness's pmcstat sampled it \
                     (`bench.*.pmc.graph`)"
                .into(),
        });
    }
    Ok(captures)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graphs_are_found_per_series_prefix_and_iteration() {
        let names: Vec<String> = [
            "bench.1.pmc.graph",
            "bench.a.x.1.pmc.graph",
            "bench.a.x.1.pmc.out",
            "bench.a.x.2.pmc.graph",
            "bench.a.x.info",
            "bench.a.x.y.pmc.graph",
            "a.x.pmc.graph",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let g = graphs(&names);
        assert_eq!(g.len(), 2);
        assert_eq!(g[""], [(1, "bench.1.pmc.graph".to_string())]);
        let a: Vec<u32> = g["a.x"].iter().map(|(i, _)| *i).collect();
        assert_eq!(a, [1, 2]);
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
        let names = vec![
            "bench.a.x.1.pmc.graph".to_string(),
            "bench.a.x.2.pmc.graph".to_string(),
            "bench.b.x.1.pmc.graph".to_string(),
        ];
        let series = |name: &str| Series {
            name: name.to_string(),
            version: name.to_string(),
            ..Series::default()
        };
        let found = captures(dir.path(), &names, &[series("a.x"), series("c.x")], |n| {
            format!("RAW/{n}")
        })
        .unwrap();
        assert_eq!(found.len(), 1, "one per series that has a graph: {found:?}");
        assert_eq!(found[0].trial, "RAW/bench.a.x.1.pmc.graph");
        assert_eq!(found[0].folded, "");
        let problem = found[0].problem.as_deref().unwrap();
        assert!(
            problem.starts_with("RAW/bench.a.x.1.pmc.graph: line 2: the section of line 1"),
            "{problem}"
        );
    }
}
