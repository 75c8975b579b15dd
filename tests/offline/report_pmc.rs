//! `benchlab report` on a netbenches directory with the harness's DUT profiles
//! (`RAW/bench.*.1.pmc.graph`, seed 002's twelve pmcstat call graphs): each is folded, checked
//! like benchlab's own captures, and drawn with a differential flamegraph of the second version
//! against the first when its check passes; the harness's files and tables are unchanged
//! (tests/offline/report_netbenches.rs checks those on the same directory).

use std::path::{Path, PathBuf};

use benchlab::cli::{self, Cli};
use clap::Parser;

fn seed_002() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/netbenches/002")
}

/// Runs `benchlab report DIR -o OUT --versions stable,current` in-process; returns OUT, the
/// README and results.json.
fn report(dir: &Path) -> (tempfile::TempDir, String, serde_json::Value) {
    let out = tempfile::tempdir().unwrap();
    let args = [
        "benchlab",
        "report",
        dir.to_str().unwrap(),
        "-o",
        out.path().to_str().unwrap(),
        "--versions",
        "318516stable,318516current",
    ];
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let status = cli::run(Cli::try_parse_from(args).unwrap(), &mut stdout, &mut stderr).unwrap();
    assert_eq!(status, 0, "{}", String::from_utf8_lossy(&stderr));
    let readme = std::fs::read_to_string(out.path().join("README.md")).unwrap();
    let json = serde_json::from_slice(&std::fs::read(out.path().join("results.json")).unwrap());
    (out, readme, json.unwrap())
}

const SERIES: [&str; 6] = [
    "forwarding.inet4",
    "forwarding.inet6",
    "ipfw-statefull.inet4",
    "ipfw-statefull.inet6",
    "pf-statefull.inet4",
    "pf-statefull.inet6",
];

/// The harness's pmcstat sampled every CPU of the 4-core DUT for 20 s, so 80–98% of each
/// capture is FreeBSD's idle thread: a system-wide capture is judged on its non-idle samples,
/// which hold the forwarding path, and all twelve are drawn, with the six differential ones of
/// the second version against the first, linked as the seed does.
#[test]
fn seed_002_profiles_get_twelve_flamegraphs_and_six_differential_ones() {
    let (out, readme, json) = report(&seed_002());
    let flames = json["flamegraphs"].as_array().unwrap();
    assert_eq!(flames.len(), 12);
    // Samples of seed 002's first graph (4 CPUs), as stackcollapse-pmc.pl folds it.
    let first = &flames[0];
    assert_eq!(
        first["trial"],
        "RAW/bench.318516current.forwarding.inet4.1.pmc.graph"
    );
    assert_eq!(first["check"]["samples"], 221_263);
    for flame in flames {
        let check = &flame["check"];
        let idle = check["idle_share"].as_f64().unwrap();
        assert!((0.79..0.99).contains(&idle), "{flame}");
        assert!(check["forwarding_frames"]
            .as_array()
            .unwrap()
            .contains(&"ether_input".into()));
        assert!(check["rejected"].is_null(), "{flame}");
    }
    let section = readme.split("## Flamegraphs").nth(1).unwrap();
    let links: Vec<&str> = (section.lines())
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| l.starts_with("  - ["))
        .collect();
    assert_eq!(links.len(), 18, "{section}");
    let mut expected = Vec::new();
    for version in ["318516stable", "318516current"] {
        for series in SERIES {
            let (config, family) = series.split_once('.').unwrap();
            expected.push(format!(
                "  - [{version} with {family} {config}](flame/{version}.{series}.svg)"
            ));
        }
    }
    for series in SERIES {
        let (config, family) = series.split_once('.').unwrap();
        expected.push(format!(
            "  - [318516current against 318516stable with {family} {config}]\
             (flame/diff.318516current.{series}.svg)"
        ));
    }
    assert_eq!(links, expected);
    for link in &expected {
        let file = link.rsplit_once('(').unwrap().1.trim_end_matches(')');
        let svg = std::fs::read_to_string(out.path().join(file)).unwrap();
        assert!(svg.trim_end().ends_with("</svg>"), "{file}");
        assert!(svg.contains("ether_input"), "{file}");
    }
}
