//! `benchlab report` on a netbenches directory with the harness's DUT profiles
//! (`RAW/bench.*.1.pmc.graph`, seed 002's twelve pmcstat call graphs): each is folded, checked
//! like benchlab's own captures, and drawn with a differential flamegraph of the second version
//! against the first when its check passes; the harness's files and tables are unchanged
//! (tests/report_netbenches.rs checks those on the same directory).

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

/// The archive's captures are mostly idle (80–98% of the samples in FreeBSD's idle thread:
/// pmcstat ran 20 s from before the traffic started), so the idle check rejects all twelve,
/// and the report says so instead of drawing them.
#[test]
fn seed_002_profiles_are_folded_checked_and_their_rejection_reported() {
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
        let why = check["rejected"].as_str().unwrap();
        assert!(why.contains("of the samples are idle"), "{why}");
        assert!(flame["svg"].is_null() && flame["diff_svg"].is_null());
    }
    assert!(!readme.contains("## Flamegraphs"));
    assert!(readme.contains(
        "  - RAW/bench.318516stable.forwarding.inet4.1.pmc.graph: flamegraph not published: \
         84% of the samples are idle: the capture missed the traffic\n"
    ));
    assert!(!out.path().join("flame").exists());
}

/// A copy of a `pmcstat -G` graph without the sampled functions that the idle thread reached
/// (each section's header recounted), so that its check passes: the graphs a capture strictly
/// inside the load would give are not in the archive.
fn without_idle_functions(graph: &str) -> String {
    let mut sections: Vec<(String, Vec<Vec<&str>>)> = Vec::new();
    for line in graph.lines() {
        if line.starts_with('@') {
            sections.push((line.to_string(), Vec::new()));
        } else if line.starts_with(|c: char| c.is_ascii_digit()) {
            sections.last_mut().unwrap().1.push(vec![line]);
        } else if line.starts_with(' ') {
            sections
                .last_mut()
                .unwrap()
                .1
                .last_mut()
                .unwrap()
                .push(line);
        }
    }
    let count = |line: &str| -> u64 {
        let (_, rest) = line.split_once('[').unwrap();
        rest.split_once(']').unwrap().0.parse().unwrap()
    };
    let mut text = String::new();
    for (header, functions) in sections {
        let kept: Vec<Vec<&str>> = (functions.into_iter())
            .filter(|f| !f.iter().any(|l| l.contains(" sched_idletd")))
            .collect();
        let samples: u64 = kept.iter().map(|f| count(f[0])).sum();
        let event = header.split(" [").next().unwrap();
        text.push_str(&format!("{event} [{samples} samples]\n\n"));
        for function in kept {
            text.push_str(&function.join("\n"));
            text.push_str("\n\n");
        }
    }
    text
}

#[test]
fn captures_that_pass_the_checks_get_flamegraphs_and_differential_ones() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("RAW");
    std::fs::create_dir(&raw).unwrap();
    for entry in std::fs::read_dir(seed_002().join("RAW")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let text = if name.ends_with(".pmc.graph") {
            without_idle_functions(&text)
        } else {
            text
        };
        std::fs::write(raw.join(name), text).unwrap();
    }
    let (out, readme, json) = report(dir.path());
    let flames = json["flamegraphs"].as_array().unwrap();
    assert!(flames.iter().all(|f| f["check"]["rejected"].is_null()));

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
