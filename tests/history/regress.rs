//! A synthetic history: ten revisions of one series, a −20 % step from r300006 on, and a
//! review on top of r300007; `regressions` finds the one step, `show` orders by revision and
//! keeps the review out of the grouping.

use std::path::Path;

use crate::tree::{self, SYNTH_LAB};
use crate::{trend, trends, versions, TestDb};

on_both!(
    a_step_is_one_regression,
    profiled_runs_get_a_differential_flamegraph
);

/// The history: (image, rate factor). Small deterministic wobbles keep the runs apart; the
/// review is far above its revision, so that it would make a group of its own if it were a
/// point of the series.
fn history() -> Vec<(String, f64)> {
    let mut runs: Vec<(String, f64)> = (1..=10)
        .map(|i| {
            let level = if i >= 6 { 0.8 } else { 1.0 };
            let wobble = [1.0, 1.002, 0.998][i % 3];
            (format!("r3000{i:02}"), level * wobble)
        })
        .collect();
    runs.push(("r300007D12345".to_string(), 1.3));
    runs
}

/// The ten revisions, in order.
fn revisions() -> Vec<String> {
    (1..=10).map(|i| format!("r3000{i:02}")).collect()
}

fn a_step_is_one_regression(db: &TestDb) {
    let history = history();
    let spec: Vec<(&str, f64)> = history.iter().map(|(n, f)| (n.as_str(), *f)).collect();
    let dirs = tree::synthetic(&db.path("archive"), &spec);
    // Imported out of order: the series order comes from the revisions, not the import.
    let order: Vec<&Path> = [9, 2, 7, 0, 10, 4, 1, 8, 5, 3, 6]
        .iter()
        .map(|&i| dirs[i].as_path())
        .collect();
    let summary = db.import(&order);
    assert!(summary.starts_with("11 campaign(s) recorded"), "{summary}");
    shown_in_revision_order(db, history[0].1);
    one_regression_found(db);
    since_and_table(db);
}

/// `show --json`: one trend, the revisions in order, the review beside r300007, two groups.
fn shown_in_revision_order(db: &TestDb, first_factor: f64) {
    let doc = db.show_json(&[]);
    assert_eq!(trends(&doc).len(), 1, "{doc:#}");
    let t = trend(&doc, &[SYNTH_LAB[0], "fastforwarding"]);
    assert_eq!(versions(t), revisions());
    assert_eq!(t["lab"]["cores"], 8);
    let variants = t["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 1);
    assert_eq!(variants[0][0], 6, "the review is beside r300007 (index 6)");
    assert_eq!(variants[0][1]["version"], "r300007D12345");
    assert_eq!(variants[0][1]["revision"]["variant"], "D12345");
    let groups = t["grouping"]["groups"].as_array().unwrap();
    let cuts: Vec<(i64, i64, &str)> = (groups.iter())
        .map(|g| {
            (
                g["start"].as_i64().unwrap(),
                g["len"].as_i64().unwrap(),
                g["trend"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(cuts, [(0, 5, "normal"), (5, 5, "regression")]);
    // The first point's first iteration: the fixture's, scaled (rates rounded to whole pps).
    let first = t["points"][0]["values"][0].as_f64().unwrap();
    assert!((first - 2726647.0 * first_factor).abs() <= 1.0, "{first}");
}

/// `regressions --json`: the one step, −20 %, significant.
fn one_regression_found(db: &TestDb) {
    let regressions = db.regressions_json();
    let changes = regressions["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{regressions:#}");
    let c = &changes[0];
    assert_eq!(c["kind"], "regression");
    assert_eq!(
        (c["before"].as_str(), c["after"].as_str()),
        (Some("r300005"), Some("r300006"))
    );
    let delta = c["delta_pct"].as_f64().unwrap();
    assert!((delta + 20.0).abs() < 0.5, "Δ {delta} %");
    assert_eq!(c["significant"], true);
    assert_eq!(c["iterations"], serde_json::json!([25, 25]));
    assert!(c["ci_pct"].as_f64().unwrap() < 5.0, "{c:#}");
    // Netbenches runs are neither profiled nor quick versions: nothing else to hand out.
    assert_eq!(c["flamegraph"], serde_json::Value::Null);
    assert_eq!(c["confirm"], serde_json::Value::Null);
}

/// `--since` keeps the change at its revision, not after; the text table is in revision
/// order with the review on a line of its own after the points.
fn since_and_table(db: &TestDb) {
    let out = db.path("since");
    let since = |rev: &str| -> usize {
        let args = [
            "regressions",
            "--json",
            "--since",
            rev,
            "-o",
            out.to_str().unwrap(),
        ];
        let doc: serde_json::Value = serde_json::from_str(&db.ok(&args)).unwrap();
        doc["changes"].as_array().unwrap().len()
    };
    assert_eq!((since("r300006"), since("r300007")), (1, 0));

    let text = db.ok(&["show", "-o", db.path("charts").to_str().unwrap()]);
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("{needle} in {text}"))
    };
    let positions: Vec<usize> = (revisions().iter())
        .map(|v| at(&format!("  {v} ")))
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{text}");
    assert!(at("r300007D12345") > positions[9], "{text}");
    assert!(text.contains("regression"), "{text}");
    let text = db.ok(&["regressions", "-o", out.to_str().unwrap()]);
    assert!(text.starts_with("regression "), "{text}");
    assert!(text.contains("r300005 → r300006: -"), "{text}");
}

/// Four revisions of seed 002's 11-stable forwarding series, then four of its 12-head one
/// (−31 %), each with its pmcstat call graph: the change gets the differential flamegraph of
/// the two runs around it.
fn profiled_runs_get_a_differential_flamegraph(db: &TestDb) {
    let raw = crate::data("netbenches/002/RAW");
    let results = db.path("profiled/CPU_P_4Cores/NIC_P/fw/results");
    for i in 1..=8 {
        let (source, image) = (
            if i <= 4 {
                "318516stable"
            } else {
                "318516current"
            },
            format!("r30000{i}"),
        );
        let to = results.join(&image).join("RAW");
        std::fs::create_dir_all(&to).unwrap();
        let prefix = format!("bench.{source}.forwarding.inet4.");
        for entry in std::fs::read_dir(&raw).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            let Some(rest) = name.strip_prefix(&prefix) else {
                continue;
            };
            let text = std::fs::read_to_string(raw.join(&name)).unwrap();
            let text = text.replace(
                &format!("IMAGE=\"{source}\""),
                &format!("IMAGE=\"{image}\""),
            );
            std::fs::write(
                to.join(format!("bench.{image}.forwarding.inet4.{rest}")),
                text,
            )
            .unwrap();
        }
    }
    db.import(&[&db.path("profiled")]);
    let doc = db.regressions_json();
    let changes = doc["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{doc:#}");
    let c = &changes[0];
    assert_eq!(
        (c["before"].as_str(), c["after"].as_str()),
        (Some("r300004"), Some("r300005"))
    );
    let svg = c["flamegraph"].as_str().expect("a differential flamegraph");
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(
        svg.starts_with("<?xml") && svg.contains("r300004 → r300005"),
        "{}",
        &svg[..200]
    );
}
