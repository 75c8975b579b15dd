//! Unit tests of the report model.

use super::*;

fn series(version: &str, medians: &[f64]) -> Series {
    Series::of_medians(version, "forwarding", "", medians)
}

#[test]
fn more_than_seven_versions_split_into_blocks_led_by_the_reference() {
    let results = Results {
        series: (0..9)
            .map(|v| series(&format!("v{v}"), &[1e6 + f64::from(v), 1.1e6, 0.9e6]))
            .collect(),
        ..Results::default()
    };
    let report = Report::build(results, &ReportOptions::default()).unwrap();
    let members: Vec<Vec<usize>> = report.blocks.iter().map(|b| b.members.clone()).collect();
    assert_eq!(members, vec![vec![0, 1, 2, 3, 4, 5, 6], vec![0, 7, 8]]);
    assert!(report.blocks[1]
        .ministat
        .starts_with("x v0.forwarding.pps\n+ v7.forwarding.pps\n"));
    assert_eq!(report.blocks[1].comparisons.len(), 2);
}

#[test]
fn series_with_fewer_than_three_iterations_have_no_statistics() {
    let results = Results {
        series: vec![series("a", &[1.0, 2.0, 3.0]), series("b", &[1.0, 2.0])],
        ..Results::default()
    };
    let report = Report::build(results, &ReportOptions::default()).unwrap();
    assert!(report.series[1].summary.is_none());
    assert!(report.blocks.is_empty());
    assert_eq!(report.charts()[0].bars.len(), 1);
    assert!(report.warnings[0].starts_with("b.forwarding: 2 iteration(s) measured"));
    // The harness writes its .pps (one line per iteration) but no gnuplot.data row.
    assert_eq!(harness::pps_files(&report)[1].bytes, b"1\n2\n");
    assert_eq!(
        harness::gnuplot_data(&report),
        "#index median minimum maximum\na.forwarding 2 1 3\n"
    );
}

#[test]
fn flagged_trials_are_listed_apart_from_what_was_not_measured() {
    let results = Results {
        series: vec![series("a", &[1.0, 2.0, 3.0])],
        warnings: vec![
            crate::ingest::Warning::FlaggedTrial {
                trial: "a.forwarding.inet4.2".into(),
                flags: "unsteady: …".into(),
            },
            crate::ingest::Warning::FailedTrial {
                trial: "a.forwarding.inet4.3".into(),
                reason: "generator died".into(),
            },
            crate::ingest::Warning::RemeasuredTrial {
                trial: "a.forwarding.inet4.1".into(),
                reason: "unsteady: …".into(),
            },
        ],
        ..Results::default()
    };
    let report = Report::build(results, &ReportOptions::default()).unwrap();
    assert_eq!(
        report.flagged,
        [
            "a.forwarding.inet4.2: unsteady: …",
            "a.forwarding.inet4.1: measured twice, one attempt left out (unsteady: …)"
        ]
    );
    assert_eq!(report.warnings.len(), 1);
    let md = markdown::readme(&report, &report.charts());
    let flagged = md
        .find("## Flagged or measured twice (counted in the statistics above)")
        .unwrap();
    let not_measured = md.find("## Not measured").unwrap();
    assert!(flagged < md.find("a.forwarding.inet4.2").unwrap());
    assert!(md.find("a.forwarding.inet4.2").unwrap() < not_measured);
    assert!(not_measured < md.find("a.forwarding.inet4.3").unwrap());
}

#[test]
fn a_trials_difference_the_machine_spoiled_is_not_a_finding() {
    let mut b = series("acct-on", &[1.1e6, 1.12e6, 1.09e6, 1.11e6, 1.1e6]);
    for it in &mut b.iterations[..4] {
        it.troubles = vec!["unsteady".into()];
    }
    let results = Results {
        series: vec![
            series("acct-off", &[1.0e6, 1.02e6, 0.99e6, 1.01e6, 1.0e6]),
            b,
        ],
        ..Results::default()
    };
    let advice = "re-run with design = \"alternating\"";
    let options = ReportOptions {
        trials_advice: Some(advice.into()),
        ..ReportOptions::default()
    };
    let report = Report::build(results.clone(), &options).unwrap();
    let why = "4 of 5 acct-on trials unsteady; re-run with design = \"alternating\"";
    assert!(report.blocks[0].comparisons[0].significant);
    assert_eq!(report.blocks[0].doubts, [Some(why.to_string())]);
    let md = markdown::readme(&report, &report.charts());
    assert!(
        md.contains(&format!(
            "acct-on no difference shown (+9.96% ± 1.74% is unreliable: {why})"
        )),
        "{md}"
    );
    assert_eq!(report.unreliable().len(), 1);
    let json = String::from_utf8(json::results_json(&report).unwrap()).unwrap();
    assert!(json.contains("\"unreliable\": \"4 of 5 acct-on"), "{json}");
    // An archive's or the alternating design's series are not judged: no advice, no doubt.
    let report = Report::build(results, &ReportOptions::default()).unwrap();
    assert_eq!(report.blocks[0].doubts, [None]);
}

/// The report of versions r100 and r200 whose archive README held one table of `table` (the
/// versions, the reference first) at `confidence`.
fn archive_report(table: [&str; 2], confidence: crate::stats::Confidence) -> Report {
    let results = Results {
        series: vec![
            series("r100", &[1.0e6, 1.1e6, 0.9e6]),
            series("r200", &[2.0e6, 2.1e6, 1.9e6]),
        ],
        ..Results::default()
    };
    let options = ReportOptions {
        tables: vec![archive::Table {
            series: table.iter().map(|v| format!("{v}.forwarding")).collect(),
            confidence,
        }],
        ..ReportOptions::default()
    };
    Report::build(results, &options).unwrap()
}

#[test]
fn a_pair_an_archive_table_compared_is_not_compared_again_in_the_other_order() {
    // The archive's table took the newer version as its reference; benchlab's own order
    // puts the older one first.
    let report = archive_report(["r200", "r100"], crate::stats::Confidence::default());
    let members: Vec<&[usize]> = report.blocks.iter().map(|b| b.members.as_slice()).collect();
    assert_eq!(members, [&[1, 0][..]]);
}

#[test]
fn the_verdicts_name_the_level_an_archive_table_was_made_at() {
    let report = archive_report(["r100", "r200"], crate::stats::Confidence::P99);
    assert_eq!(
        crate::report::verdict::shared_level(&report.verdicts),
        Some(99.0)
    );
    let readme = markdown::readme(&report, &[]);
    assert!(readme.contains("at 99 % confidence") && readme.contains("| change (99 %) |"));
}

/// Profiles sent differently (at `max` following the DUT, at a fixed rate) are each described
/// by their own generator, not by the campaign's first trial's.
#[test]
fn each_profile_names_what_sent_its_own_traffic() {
    let profile = |name: &str, pps: f64| {
        let mut s = Series::of_medians("a", "forwarding", name, &[pps; 3]);
        s.iterations
            .iter_mut()
            .for_each(|i| i.offered_pps = Some(pps));
        s
    };
    let at_max = "benchlab gen, xdp engine, at max offering 5 % more than the DUT took";
    let results = Results {
        series: vec![profile("max", 9e5), profile("300k", 3e5)],
        generators: [
            ("max".to_string(), at_max.to_string()),
            ("300k".to_string(), "benchlab gen, xdp engine".to_string()),
        ]
        .into(),
        ..Results::default()
    };
    let report = Report::build(results, &ReportOptions::default()).unwrap();
    assert_eq!(
        traffic::traffic_summary(&report, "300k"),
        "300k: traffic load 300 Kpps (benchlab gen, xdp engine)"
    );
    assert!(traffic::traffic_summary(&report, "max").ends_with(&format!("900 Kpps ({at_max})")));
}
