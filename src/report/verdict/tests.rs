//! Unit tests of the verdicts and their README table.

use super::*;
use crate::ingest::{Results, Series};
use crate::report::{markdown, ReportOptions};

fn series(version: &str, config: &str, values: &[f64]) -> Series {
    Series::of_medians(version, config, "inet4", values)
}

/// An estimate of `ratios` (log scale) with `of` blocks measured and the baseline at 2.45 Mpps.
fn estimate(ratios: &[f64], of: usize) -> PairedEstimate {
    PairedEstimate {
        of,
        baseline_pps: Some(2.45e6),
        ..PairedEstimate::from_log_ratios(ratios, |_| 2.0, 95.0).unwrap()
    }
}

/// One version, three sets alternated: nft-stateless slower on 4 of 6 blocks, nft-stateful no
/// different, iptables-stateful without an interval.
fn alternating() -> Results {
    let base = [2.4e6, 2.5e6, 2.45e6, 2.42e6, 2.48e6, 2.46e6];
    let sets = [
        "forwarding",
        "nft-stateless",
        "nft-stateful",
        "iptables-stateful",
    ];
    let scale = [1.0, 0.83, 1.0, 0.7];
    let series = (sets.iter().zip(scale))
        .map(|(set, f)| series("default", set, &base.map(|v| v * f)))
        .collect();
    let run = AlternatingRun {
        version: "default".into(),
        profile: "inet4".into(),
        sets: sets.map(String::from).to_vec(),
        series: sets.map(|s| format!("default.{s}.inet4")).to_vec(),
        blocks: 6,
        estimates: vec![
            (
                "nft-stateless".into(),
                Some(estimate(&[-0.18, -0.19, -0.185, -0.18], 6)),
            ),
            (
                "nft-stateful".into(),
                Some(estimate(&[0.01, -0.012, 0.004, -0.003], 4)),
            ),
            ("iptables-stateful".into(), None),
        ],
        versus: Vec::new(),
        versus_entries: Vec::new(),
        slowed: Vec::new(),
        ended: vec!["precise".into()],
        discarded: Vec::new(),
        windows: Vec::new(),
        window_s: 0.05,
        switches: Vec::new(),
        latency: None,
        others_shares: Vec::new(),
    };
    Results {
        series,
        alternating: vec![run],
        ..Results::default()
    }
}

#[test]
fn the_paired_estimates_are_the_verdicts_and_ministat_does_not_repeat_them() {
    let report = Report::build(alternating(), &ReportOptions::default()).unwrap();
    // ministat compares the same three pairs unpaired: covered, not listed again.
    assert_eq!(report.blocks[0].comparisons.len(), 3);
    let v = &report.verdicts;
    assert_eq!(v.len(), 3);
    assert!(v.iter().all(Verdict::paired));
    assert_eq!(
        (v[0].reference.as_str(), v[0].subject.as_str()),
        ("default.forwarding.inet4", "default.nft-stateless.inet4")
    );
    assert_eq!(v[0].context, ["default", "inet4"]);
    assert_eq!(v[0].finding(), Finding::Slower);
    assert_eq!(v[0].used_text(), "4 of 6 blocks");
    assert_eq!(v[0].used().left_out, 2);
    assert_eq!(v[0].speed_text(), "forwarding at 2.45 Mpps");
    assert_eq!(v[1].finding(), Finding::NoDifference);
    assert_eq!(v[1].used_text(), "4 blocks");
    let half = v[1].interval().unwrap().half_width_pct;
    assert_eq!(
        v[1].verdict_text(),
        format!("no difference shown (the run could have shown ±{half:.1} %)")
    );
    assert_eq!(v[2].finding(), Finding::NoEstimate);
    assert_eq!(v[2].change_text(), "—");
    assert!(v[2].interval().is_none());
}

#[test]
fn the_readme_opens_with_the_verdicts_and_titles_the_unpaired_tables() {
    let report = Report::build(alternating(), &ReportOptions::default()).unwrap();
    let md = markdown::readme(&report, &report.charts());
    let at = |text: &str| md.find(text).unwrap_or_else(|| panic!("{text} in {md}"));
    assert!(md.starts_with("default: forwarding, nft-stateless"), "{md}");
    assert_eq!(md.lines().nth(2), Some("## Verdicts"));
    let row = format!(
        "| default, inet4 | nft-stateless vs forwarding | {} | paired | yes | 4 of 6 blocks | \
         forwarding at 2.45 Mpps | **slower** |",
        report.verdicts[0].change_text()
    );
    assert!(at(&row) < at("## Setup"));
    assert!(at("## Setup") < at("## Paired comparisons (alternating design)"));
    assert!(
        at("## Paired comparisons")
            < at("## Config sets compared: blocks taken as iterations, unpaired\n")
    );
    assert!(md.contains("| no estimate: too few blocks for an interval |"));
}

#[test]
fn a_spoiled_trials_difference_gets_no_verdict_and_no_direction() {
    let mut on = series(
        "acct-on",
        "forwarding",
        &[1.1e6, 1.12e6, 1.09e6, 1.11e6, 1.1e6],
    );
    for it in &mut on.iterations[..4] {
        it.troubles = vec!["unsteady".into()];
    }
    let off = series(
        "acct-off",
        "forwarding",
        &[1.0e6, 1.02e6, 0.99e6, 1.01e6, 1.0e6],
    );
    let results = Results {
        series: vec![off, on],
        ..Results::default()
    };
    let options = ReportOptions {
        trials_advice: Some("re-run with design = \"alternating\"".into()),
        ..ReportOptions::default()
    };
    let report = Report::build(results, &options).unwrap();
    let [v] = report.verdicts.as_slice() else {
        panic!("{:?}", report.verdicts)
    };
    assert!(!v.paired());
    assert!(v.significant());
    assert_eq!(v.finding(), Finding::Unreliable);
    assert_eq!(v.used_text(), "5 iterations each");
    assert!(v
        .verdict_text()
        .starts_with("unreliable, no verdict: 4 of 5 acct-on trials unsteady"));
    let md = markdown::readme(&report, &report.charts());
    let row = md
        .lines()
        .find(|l| l.starts_with("| forwarding, inet4 |"))
        .unwrap();
    assert!(
        row.contains("| unpaired | — | 5 iterations each |"),
        "{row}"
    );
    assert!(!row.contains("**"), "{row}");
}

#[test]
fn a_difference_ministat_does_not_prove_says_what_the_run_could_have_shown() {
    let a = series("a", "forwarding", &[1.0e6, 1.1e6, 0.9e6]);
    let b = series("b", "forwarding", &[1.01e6, 1.09e6, 0.92e6, 0.98e6]);
    let results = Results {
        series: vec![a, b],
        ..Results::default()
    };
    let report = Report::build(results, &ReportOptions::default()).unwrap();
    let v = &report.verdicts[0];
    assert_eq!(v.finding(), Finding::NoDifference);
    assert_eq!(v.used_text(), "3 and 4 iterations");
    assert_eq!(v.speed_text(), "a at 1 Mpps");
    let half = v.interval().unwrap().half_width_pct;
    assert!(v.verdict_text().ends_with(&format!("±{half:.2} %)")));
}

#[test]
fn a_versus_line_names_the_entries_it_compares() {
    let mut results = alternating();
    let run = &mut results.alternating[0];
    // As when versions alternate: one version's set against another's, from the same blocks.
    let e = estimate(&[0.05, 0.06, 0.055], 3);
    run.versus = vec![("acct-on".into(), "acct-off (nft-stateless)".into(), Some(e))];
    run.versus_entries = vec![(2, 1)];
    let report = Report::build(results, &ReportOptions::default()).unwrap();
    let v = &report.verdicts[3];
    assert_eq!(
        (v.reference.as_str(), v.subject.as_str()),
        ("default.nft-stateless.inet4", "default.nft-stateful.inet4")
    );
    assert_eq!(
        (v.subject_label.as_str(), v.reference_label.as_str()),
        ("acct-on", "acct-off (nft-stateless)")
    );
    assert_eq!(v.finding(), Finding::Faster);
    assert_eq!(v.speed_text(), "acct-off (nft-stateless) at 2.45 Mpps");
}
