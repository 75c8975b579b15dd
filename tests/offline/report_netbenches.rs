//! `benchlab report` on the raw logs of seeds 002 and 003 (tests/data/netbenches/): the harness's
//! files come out byte for byte, every ministat table of the seed is in the README, the graphs
//! show the right bars, and broken input gives one line and exit status 2.

use crate::common::{copy_dir, expand, in_process};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use benchlab::ingest;
use benchlab::report::{Report, ReportOptions};

fn data(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(dir)
}

/// Runs the real binary, for exit statuses and stderr as a user sees them.
fn benchlab_binary(args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_benchlab"))
        .args(args)
        .output()
        .unwrap();
    assert!(output.stdout.is_empty() || output.status.success());
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

fn report_into(input: &Path, extra: &[&str]) -> tempfile::TempDir {
    let out = tempfile::tempdir().unwrap();
    let mut args = vec![
        "report",
        input.to_str().unwrap(),
        "-o",
        out.path().to_str().unwrap(),
    ];
    args.extend(extra);
    let (status, stdout, stderr) = in_process(&args);
    assert_eq!(status, 0, "stderr: {stderr}");
    assert!(stdout.contains("wrote"), "{stdout}");
    out
}

fn names(dir: &Path, suffix: &str) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(suffix))
        .collect()
}

/// Every expected `.pps` and `gnuplot.data` is produced, byte for byte, and no other `.pps`.
fn assert_harness_files(expected: &Path, out: &Path) {
    assert_eq!(names(expected, ".pps"), names(out, ".pps"));
    for name in names(expected, ".pps")
        .into_iter()
        .chain(["gnuplot.data".to_string()])
    {
        let want = std::fs::read(expected.join(&name)).unwrap();
        let got = std::fs::read(out.join(&name)).unwrap();
        assert!(
            want == got,
            "{name} differs:\n--- archived\n{}\n--- regenerated\n{}",
            String::from_utf8_lossy(&want),
            String::from_utf8_lossy(&got)
        );
    }
}

/// The ministat tables of a Markdown text: fenced blocks starting with the `x` legend line,
/// expanded, without trailing blank lines.
fn ministat_tables(markdown: &str) -> Vec<String> {
    let mut tables = Vec::new();
    let mut block: Option<Vec<&str>> = None;
    for line in markdown.lines() {
        match (&mut block, line.trim_end() == "```") {
            (None, true) => block = Some(Vec::new()),
            (Some(lines), true) => {
                while lines.last().is_some_and(|l| l.trim().is_empty()) {
                    lines.pop();
                }
                if lines.first().is_some_and(|l| l.starts_with("x ")) {
                    tables.push(expand(&lines.join("\n")));
                }
                block = None;
            }
            (Some(lines), false) => lines.push(line),
            (None, false) => {}
        }
    }
    tables
}

fn assert_tables_in_readme(seed: &Path, readme: &Path) {
    let seed = std::fs::read_to_string(seed).unwrap();
    let readme = std::fs::read_to_string(readme).unwrap();
    let wanted = ministat_tables(&seed);
    let got = ministat_tables(&readme);
    assert!(!wanted.is_empty());
    for table in &wanted {
        assert!(
            got.contains(table),
            "seed table missing from README:\n{table}\n--- README tables:\n{}",
            got.join("\n\n")
        );
    }
}

#[test]
fn seed_002_harness_files_and_tables() {
    let out = report_into(
        &data("netbenches/002"),
        &["--versions", "318516stable,318516current"],
    );
    assert_harness_files(&data("netbenches-expected/002"), out.path());
    assert_tables_in_readme(
        &data("netbenches-expected/002/seed.txt"),
        &out.path().join("README.md"),
    );
    let readme = std::fs::read_to_string(out.path().join("README.md")).unwrap();
    assert!(readme.contains("![318516stable vs 318516current"));
    assert!(readme.contains("(graph.inet4.png)") && readme.contains("(graph.inet6.png)"));
    assert!(readme.contains("  - 318516current: FreeBSD 12.0-CURRENT #16 r318516M amd64\n"));
    assert!(readme.contains(
        "  - inet4: 2000 flows (20 sources × 100 destinations) of 64-byte frames, IPv4; \
         traffic load 1.49 Mpps (pkt-gen sender)\n"
    ));
    assert!(
        readme.contains("forwarding, inet4: 318516current -31.46% ± 1.20% against 318516stable")
    );
    // Everything was measured; only the archive's DUT profiles are left out (tests/offline/report_pmc.rs).
    let not_measured = readme.split("## Not measured").nth(1).unwrap_or("");
    assert!(not_measured
        .lines()
        .filter(|l| l.starts_with("  - "))
        .all(|l| l.contains(".pmc.graph: flamegraph not published")));
    // No temporary file is left behind.
    assert!(names(out.path(), "").iter().all(|n| !n.starts_with('.')));

    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.path().join("results.json")).unwrap()).unwrap();
    let series = json["series"].as_array().unwrap();
    assert_eq!(series.len(), 12);
    assert_eq!(series[0]["name"], "318516current.forwarding.inet4");
    assert_eq!(series[0]["iterations"][1]["median_pps"], 473408.0);
    assert_eq!(series[0]["iterations"][1]["index"], 2);
    assert!(series[0]["iterations"][1]["samples"].as_u64().unwrap() >= 30);
    assert_eq!(series[0]["summary"]["median"], 474873.0);
    // 6 version comparisons (3 config sets × 2 profiles) and 4 config-set ones (2 × 2).
    let comparisons = json["comparisons"].as_array().unwrap();
    assert_eq!(comparisons.len(), 10);
    assert_eq!(comparisons[0]["reference"], "318516stable.forwarding.inet4");
    assert_eq!(
        comparisons[0]["compared"][0]["pooled_s"]
            .as_f64()
            .unwrap()
            .round(),
        8280.0
    );
}

#[test]
fn seed_003_with_legacy_ministat_and_labels_from_report_toml() {
    let out = report_into(&data("netbenches/003"), &["--ministat", "legacy"]);
    assert_harness_files(&data("netbenches-expected/003"), out.path());
    // The seed's first table was relabelled by hand (forwarding for fastforwarding): without
    // labels, the table is the same under the file's own name.
    let seed = std::fs::read_to_string(data("netbenches-expected/003/seed.txt")).unwrap();
    let relabelled = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        relabelled.path(),
        seed.replace("forwarding.pps", "fastforwarding.pps"),
    )
    .unwrap();
    assert_tables_in_readme(relabelled.path(), &out.path().join("README.md"));
    assert!(out.path().join("graph.png").exists());

    // With the label in report.toml, the seed's tables come out exactly.
    let input = tempfile::tempdir().unwrap();
    copy_dir(&data("netbenches/003"), input.path());
    std::fs::write(
        input.path().join("report.toml"),
        "title = \"Impact of D8526 on forwarding performance\"\n\
         lines = [\"HP ProLiant DL360p Gen8\"]\nministat = \"legacy\"\n\
         [labels]\nfastforwarding = \"forwarding\"\n",
    )
    .unwrap();
    let out = report_into(input.path(), &[]);
    assert_tables_in_readme(
        &data("netbenches-expected/003/seed.txt"),
        &out.path().join("README.md"),
    );
    let readme = std::fs::read_to_string(out.path().join("README.md")).unwrap();
    // The title, the verdicts, then the setup.
    assert!(readme.starts_with("Impact of D8526 on forwarding performance\n\n## Verdicts\n"));
    assert!(readme.contains("\n## Setup\n\n  - HP ProLiant DL360p Gen8\n"));
    // The .pps names stay the harness's.
    assert_harness_files(&data("netbenches-expected/003"), out.path());
}

#[test]
fn charts_show_medians_with_min_max_whiskers() {
    let results = ingest::netbenches::read_dir(&data("netbenches/002")).unwrap();
    let options = ReportOptions {
        versions: Some(vec!["318516stable".into(), "318516current".into()]),
        ..ReportOptions::default()
    };
    let report = Report::build(results, &options).unwrap();
    let charts = report.charts();
    let files: Vec<&str> = charts.iter().map(|c| c.file_name.as_str()).collect();
    assert_eq!(files, ["graph.inet4.png", "graph.inet6.png"]);
    let inet4 = &charts[0];
    assert_eq!(
        inet4.groups,
        ["forwarding", "ipfw-statefull", "pf-statefull"]
    );
    assert_eq!(inet4.members, ["318516stable", "318516current"]);
    assert_eq!(inet4.bars.len(), 6);
    let bar = |group: usize, member: usize| {
        let b = inet4
            .bars
            .iter()
            .find(|b| b.group == group && b.member == member)
            .unwrap();
        (b.median, b.min, b.max)
    };
    // gnuplot.data: 318516stable.forwarding.inet4 689737 681208 710973
    assert_eq!(bar(0, 0), (689737.0, 681208.0, 710973.0));
    // 318516current.pf-statefull.inet4 275959 274431 279499
    assert_eq!(bar(2, 1), (275959.0, 274431.0, 279499.0));
    assert!(inet4.subtitle.starts_with("inet4: 2000 flows"));

    let out = report_into(&data("netbenches/002"), &[]);
    for name in files {
        let decoder = png::Decoder::new(std::fs::File::open(out.path().join(name)).unwrap());
        let mut reader = decoder.read_info().unwrap();
        let mut pixels = vec![0; reader.output_buffer_size()];
        let frame = reader.next_frame(&mut pixels).unwrap();
        assert_eq!((frame.width, frame.height), (1920, 1080));
    }
}

#[test]
fn damaged_archives_report_what_could_not_be_measured() {
    let input = tempfile::tempdir().unwrap();
    copy_dir(&data("netbenches/003"), input.path());
    let dir = input.path();
    // A missing iteration, a log cut short by a crash, and five iterations 6..10 so that `ls`
    // order (1, 10, 2, …) shows.
    std::fs::remove_file(dir.join("bench.299288.pf-statefull.3.receiver")).unwrap();
    let log = std::fs::read_to_string(dir.join("bench.299288.ipfw-statefull.2.receiver")).unwrap();
    let cut: String = log.split_inclusive('\n').take(27).collect();
    std::fs::write(dir.join("bench.299288.ipfw-statefull.2.receiver"), cut).unwrap();
    for i in 1..=5 {
        for kind in ["receiver", "sender"] {
            std::fs::copy(
                dir.join(format!("bench.299288D8526.pf-statefull.{i}.{kind}")),
                dir.join(format!("bench.299288D8526.pf-statefull.{}.{kind}", i + 5)),
            )
            .unwrap();
        }
    }
    let out = tempfile::tempdir().unwrap();
    let (status, _, stderr) = in_process(&[
        "report",
        dir.to_str().unwrap(),
        "-o",
        out.path().to_str().unwrap(),
    ]);
    assert_eq!(status, 0, "{stderr}");
    let readme = std::fs::read_to_string(out.path().join("README.md")).unwrap();
    let not_measured = &readme[readme
        .find("## Not measured")
        .expect("a Not measured section")..];
    assert!(not_measured
        .contains("bench.299288.ipfw-statefull.2.receiver: only 2 per-second sample(s) left"));
    assert!(not_measured.contains("299288.pf-statefull: iteration 3 missing"));
    // Iterations 6..10 exist elsewhere in the run, so every other series misses them.
    assert!(not_measured.contains("299288.fastforwarding: iteration 10 missing"));
    assert!(stderr.contains("warning: 299288.pf-statefull: iteration 3 missing"));

    let pps = |name: &str| std::fs::read_to_string(out.path().join(name)).unwrap();
    let archived =
        |name: &str| std::fs::read_to_string(data("netbenches-expected/003").join(name)).unwrap();
    let lines = |text: String| text.lines().map(str::to_string).collect::<Vec<_>>();
    assert_eq!(pps("299288.ipfw-statefull.pps").lines().count(), 4);
    assert_eq!(pps("299288.pf-statefull.pps").lines().count(), 4);
    // ls order: 1, 10, 2, 3, 4, 5, 6, 7, 8, 9 where 6..10 repeat 1..5.
    let original = lines(archived("299288D8526.pf-statefull.pps"));
    let order = [0, 4, 1, 2, 3, 4, 0, 1, 2, 3];
    let expected: Vec<String> = order.iter().map(|&i| original[i].clone()).collect();
    assert_eq!(lines(pps("299288D8526.pf-statefull.pps")), expected);
}

#[test]
fn writes_into_the_results_directory_by_default_and_keeps_hand_written_readmes() {
    let input = tempfile::tempdir().unwrap();
    copy_dir(&data("netbenches/002"), input.path());
    let dir = input.path().to_str().unwrap();
    let (status, _, stderr) = in_process(&["report", dir]);
    assert_eq!(status, 0, "{stderr}");
    assert!(input
        .path()
        .join("318516stable.pf-statefull.inet6.pps")
        .exists());
    assert!(input.path().join("graph.inet6.png").exists());
    // Its own README is rewritten…
    let (status, _, _) = in_process(&["report", dir]);
    assert_eq!(status, 0);
    // …a hand-written one never is.
    std::fs::write(input.path().join("README.md"), "my notes\n").unwrap();
    let (status, stderr) = benchlab_binary(&["report", dir]);
    assert_eq!(status, 2);
    assert!(
        stderr.contains("README.md' was not written by benchlab"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let readme = std::fs::read_to_string(input.path().join("README.md")).unwrap();
    assert_eq!(readme, "my notes\n");
}

#[test]
fn bad_input_is_one_line_and_status_2() {
    let expect_2 = |args: &[&str], needle: &str| {
        let (status, stderr) = benchlab_binary(args);
        assert_eq!(status, 2, "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    };
    let empty = tempfile::tempdir().unwrap();
    let empty_dir = empty.path().to_str().unwrap();
    expect_2(
        &["report", empty_dir],
        "no netbenches results (bench.*.info)",
    );
    expect_2(
        &["report", "/nonexistent/benchlab"],
        "'/nonexistent/benchlab': no such directory",
    );

    // An unreadable log (a directory in its place reads as an error even for root).
    let input = tempfile::tempdir().unwrap();
    copy_dir(&data("netbenches/003"), input.path());
    let dir = input.path().to_str().unwrap();
    let log = input.path().join("bench.299288.pf-statefull.2.receiver");
    std::fs::remove_file(&log).unwrap();
    std::fs::create_dir(&log).unwrap();
    expect_2(&["report", dir], "cannot read '");
    expect_2(&["report", dir], "bench.299288.pf-statefull.2.receiver");
    std::fs::remove_dir(&log).unwrap();

    std::fs::write(
        input.path().join("report.toml"),
        "title = \"t\"\nlabel = {}\n",
    )
    .unwrap();
    expect_2(
        &["report", dir],
        "report.toml: line 2: unknown field `label`",
    );
    std::fs::remove_file(input.path().join("report.toml")).unwrap();

    expect_2(
        &["report", dir, "--versions", "299288,r1"],
        "version 'r1' is in no series",
    );
    // clap's own usage errors keep clap's format (status 2 as well).
    let (status, stderr) = benchlab_binary(&["report", dir, "--ministat", "old"]);
    assert_eq!(status, 2);
    assert!(
        stderr.contains("use current, legacy or accurate"),
        "{stderr}"
    );
}

#[test]
fn old_info_format_without_image_level_and_config_selection() {
    // A 2016-style run: no image level, the free-text .info of that time.
    let input = tempfile::tempdir().unwrap();
    let source = data("netbenches/003");
    for config in ["fastforwarding", "ipfw-statefull", "pf-statefull"] {
        for i in 1..=5 {
            for kind in ["receiver", "sender"] {
                std::fs::copy(
                    source.join(format!("bench.299288.{config}.{i}.{kind}")),
                    input.path().join(format!("bench.{config}.{i}.{kind}")),
                )
                .unwrap();
            }
        }
        std::fs::write(
            input.path().join(format!("bench.{config}.info")),
            format!(
                "Image: none\nCFG: /root/netbenches/configs/{config}\n\
                 FreeBSD hp 11.0-CURRENT FreeBSD 11.0-CURRENT #0 r290000: Tue Mar  1 amd64\n\
                 Start time: Tue Mar  1 10:00:00 CET 2016\nEnd time: Tue Mar  1 11:00:00 CET 2016\n"
            ),
        )
        .unwrap();
    }
    let out = report_into(input.path(), &["--configs", "pf-statefull,fastforwarding"]);
    assert_eq!(
        names(out.path(), ".pps"),
        BTreeSet::from([
            "fastforwarding.pps".to_string(),
            "pf-statefull.pps".to_string()
        ])
    );
    for config in ["fastforwarding", "pf-statefull"] {
        assert_eq!(
            std::fs::read(out.path().join(format!("{config}.pps"))).unwrap(),
            std::fs::read(data("netbenches-expected/003").join(format!("299288.{config}.pps")))
                .unwrap()
        );
    }
    let gnuplot = std::fs::read_to_string(out.path().join("gnuplot.data")).unwrap();
    assert_eq!(
        gnuplot,
        "#index median minimum maximum\n\
         fastforwarding 2582839 2557918.5 2726647\n\
         pf-statefull 2408092.5 2298524.5 2441315\n"
    );
    let readme = std::fs::read_to_string(out.path().join("README.md")).unwrap();
    assert!(
        readme.starts_with("pf-statefull, fastforwarding\n"),
        "{readme}"
    );
    assert!(
        readme.contains("  - DUT: FreeBSD 11.0-CURRENT #0 r290000 amd64\n"),
        "{readme}"
    );
    assert!(
        readme.contains("\nfastforwarding +9.44% ± 4.51% against pf-statefull"),
        "{readme}"
    );
    assert!(
        readme.contains("x pf-statefull.pps\n+ fastforwarding.pps\n"),
        "{readme}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.path().join("results.json")).unwrap()).unwrap();
    assert_eq!(
        json["configs"],
        serde_json::json!(["pf-statefull", "fastforwarding"])
    );
    assert_eq!(json["series"][0]["config"], "fastforwarding");
    assert_eq!(json["series"][0]["version"], "");
}
