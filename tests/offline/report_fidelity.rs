//! Fidelity of `benchlab report` on netbenches archives: every README table is byte for byte
//! what `ministat -s` (the report's flavour) prints for the `.pps` files written beside it, the
//! flavour that reproduces an archive's own README is picked, and the harness's files match.

use crate::common::copy_dir;
use std::path::{Path, PathBuf};

fn data(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(dir)
}

/// Runs the benchlab binary in `cwd`; returns (status, stdout, stderr).
fn benchlab_in(cwd: &Path, args: &[&str]) -> (i32, String, String) {
    let out = crate::common::benchlab()
        .current_dir(cwd)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        crate::common::stderr(&out),
    )
}

/// The fenced blocks of a README that are ministat outputs (they start with the `x` legend).
fn ministat_blocks(readme: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut block: Option<String> = None;
    for line in readme.split_inclusive('\n') {
        match (&mut block, line == "```\n") {
            (None, true) => block = Some(String::new()),
            (Some(text), true) => {
                if text.starts_with("x ") {
                    blocks.push(std::mem::take(text));
                }
                block = None;
            }
            (Some(text), false) => text.push_str(line),
            (None, false) => {}
        }
    }
    blocks
}

/// The `benchlab ministat` flag of the flavour the README's Statistics line names.
fn flavour_flag(readme: &str) -> Option<&'static str> {
    let line = readme
        .lines()
        .find(|l| l.starts_with("  - Statistics: ministat"))
        .expect("a Statistics line");
    if line.contains("legacy relative interval") {
        Some("--legacy")
    } else if line.contains("accurate variance") {
        Some("--accurate")
    } else {
        None
    }
}

/// Reports `input` into a new directory and checks every table against ministat run on the
/// written `.pps` files (benchlab's own, and Debian's for the legacy flavour when installed).
fn assert_tables_are_ministat_of_written_files(input: &Path, extra: &[&str]) -> String {
    let (readme, _, out) = report(input, extra);
    let flag = flavour_flag(&readme);
    let blocks = ministat_blocks(&readme);
    assert!(!blocks.is_empty(), "{readme}");
    for block in blocks {
        let files: Vec<&str> = block
            .lines()
            .take_while(|l| !l.starts_with("+-"))
            .filter_map(|l| l.get(2..))
            .collect();
        let mut args = vec!["ministat", "-s", "-w", "74"];
        args.extend(flag);
        args.extend(&files);
        let (status, ministat, stderr) = benchlab_in(out.path(), &args);
        assert_eq!(status, 0, "{stderr}");
        assert_eq!(ministat, block, "{files:?} with {flag:?}");
        let oracle = Path::new("/usr/bin/ministat");
        if flag == Some("--legacy") && oracle.exists() {
            let mut command = std::process::Command::new(oracle);
            let output = command
                .current_dir(out.path())
                .args(["-s", "-w", "74"])
                .args(&files)
                .output()
                .unwrap();
            assert_eq!(String::from_utf8_lossy(&output.stdout), block, "{files:?}");
        }
    }
    readme
}

#[test]
fn every_table_is_ministat_of_the_written_pps_files() {
    for fixture in [
        "netbenches/002",
        "netbenches/003",
        "netbenches-archive/xeon",
    ] {
        for flavour in ["current", "legacy", "accurate"] {
            assert_tables_are_ministat_of_written_files(&data(fixture), &["--ministat", flavour]);
        }
        assert_tables_are_ministat_of_written_files(&data(fixture), &[]);
    }
}

#[test]
fn the_flavour_that_reproduces_the_archives_readme_is_picked() {
    let input = data("netbenches-archive/xeon");
    let out = tempfile::tempdir().unwrap();
    let (status, _, stderr) = benchlab_in(
        out.path(),
        &[
            "report",
            input.to_str().unwrap(),
            "-o",
            out.path().to_str().unwrap(),
        ],
    );
    assert_eq!(status, 0, "{stderr}");
    assert!(
        stderr.contains("note: ministat accurate: chosen as it reproduces 22 of the 22 table rows"),
        "{stderr}"
    );
    let readme = std::fs::read_to_string(out.path().join("README.md")).unwrap();
    assert_eq!(flavour_flag(&readme), Some("--accurate"));
    // The archive's rows, rounded inputs and exact Stddev, are in the tables.
    for row in [
        "x   5      14816846      14817302      14817116      14817115     174.22399",
        "+   5      14816864      14817034      14816937      14816944     62.114411",
        "%   5      14472528      14472736      14472610      14472637     91.023074",
        "\t-0.00295064% +/- 0.00162077%",
    ] {
        assert!(readme.contains(row), "{row}\n{readme}");
    }
    // The harness's own files, byte for byte.
    let expected = data("netbenches-expected/xeon");
    for entry in std::fs::read_dir(&expected).unwrap() {
        let name = entry.unwrap().file_name();
        let want = std::fs::read(expected.join(&name)).unwrap();
        assert_eq!(
            std::fs::read(out.path().join(&name)).unwrap(),
            want,
            "{name:?}"
        );
    }
    // Asked for, a flavour is used as is.
    let readme = assert_tables_are_ministat_of_written_files(&input, &["--ministat", "current"]);
    assert!(readme.contains("62.11431\n") && !readme.contains("chosen as"));
}

#[test]
fn an_archives_own_files_are_never_overwritten() {
    let archive = tempfile::tempdir().unwrap();
    let dir = archive.path();
    copy_dir(&data("netbenches-archive/xeon"), dir);
    std::fs::remove_file(dir.join("README.md")).unwrap();
    // The archive's graph and a gnuplot.data of the 2016 harness (`#key` header).
    std::fs::write(dir.join("graph.inet4.png"), "the archive's graph").unwrap();
    std::fs::write(dir.join("gnuplot.data"), "#key median minimum maximum\n").unwrap();
    let before: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let (status, _, stderr) = benchlab_in(dir, &["report", dir.to_str().unwrap()]);
    assert_eq!(status, 2, "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("gnuplot.data' (and 1 more files) was not written by benchlab"),
        "{stderr}"
    );
    let after: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(before, after);
    assert_eq!(
        std::fs::read_to_string(dir.join("graph.inet4.png")).unwrap(),
        "the archive's graph"
    );
    // Without them, the report goes beside the logs, and can be run again.
    std::fs::remove_file(dir.join("graph.inet4.png")).unwrap();
    std::fs::remove_file(dir.join("gnuplot.data")).unwrap();
    for _ in 0..2 {
        let (status, _, stderr) = benchlab_in(dir, &["report", dir.to_str().unwrap()]);
        assert_eq!(status, 0, "{stderr}");
    }
    let manifest = std::fs::read_to_string(dir.join("benchlab-report.txt")).unwrap();
    assert!(manifest.contains(" graph.inet4.png\n"), "{manifest}");
}

/// Copies the xeon fixture's logs of `from` (version r368287 or r368606) into `to`, named and
/// labelled as version `as_version`; returns `to`.
fn xeon_logs(from: &str, as_version: &str, to: &Path) -> PathBuf {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(data("netbenches-archive/xeon/RAW")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let Some(rest) = name.strip_prefix(&format!("bench.{from}.")) else {
            continue;
        };
        let text =
            std::fs::read_to_string(data("netbenches-archive/xeon/RAW").join(&name)).unwrap();
        let target = to.join(format!("bench.{as_version}.{rest}"));
        std::fs::write(target, text.replace(from, as_version)).unwrap();
    }
    to.to_path_buf()
}

/// Reports `dir` into a new directory; returns (README, stderr, output directory).
fn report(dir: &Path, extra: &[&str]) -> (String, String, tempfile::TempDir) {
    let out = tempfile::tempdir().unwrap();
    let mut args = vec!["report", dir.to_str().unwrap(), "-o"];
    args.push(out.path().to_str().unwrap());
    args.extend(extra);
    let (status, _, stderr) = benchlab_in(out.path(), &args);
    assert_eq!(status, 0, "{stderr}");
    let readme = std::fs::read_to_string(out.path().join("README.md")).unwrap();
    (readme, stderr, out)
}

#[test]
fn variants_in_raw_dot_x_siblings_or_run_folders_are_a_config_level() {
    let archive = tempfile::tempdir().unwrap();
    let dir = archive.path();
    xeon_logs("r368287", "r368287", &dir.join("RAW.1rx"));
    xeon_logs("r368606", "r368287", &dir.join("RAW.8rx"));
    std::fs::write(dir.join(".DS_Store"), "stray").unwrap();
    let (readme, _, out) = report(dir, &[]);
    assert!(readme.starts_with("r368287: 1rx, 8rx\n"), "{readme}");
    assert!(
        readme.contains("## Config sets compared\n\nr368287, inet4: 8rx "),
        "{readme}"
    );
    assert!(out.path().join("r368287.8rx.inet6.pps").is_file());
    assert_tables_are_ministat_of_written_files(dir, &[]);

    // One folder per run, each with its own RAW/ (lower case too).
    let runs = tempfile::tempdir().unwrap();
    xeon_logs("r368287", "r368287", &runs.path().join("day1/RAW"));
    xeon_logs("r368606", "r368287", &runs.path().join("day2/raw"));
    let (readme, _, _) = report(runs.path(), &[]);
    assert!(readme.contains("r368287, inet4: day2 "), "{readme}");
}

#[test]
fn logs_in_a_lower_case_raw_folder() {
    let archive = tempfile::tempdir().unwrap();
    xeon_logs("r368287", "r368287", &archive.path().join("raw"));
    let (readme, _, out) = report(archive.path(), &[]);
    assert!(out.path().join("r368287.inet4.pps").is_file());
    // One version and one config set: the traffic profiles are compared, as the harness's
    // READMEs compare what varies against the first one.
    assert!(readme.starts_with("r368287\n"), "{readme}");
    assert!(
        readme.contains(
            "## Traffic profiles compared\n\nr368287: inet6 -2.323% ± 0.001% against inet4"
        ),
        "{readme}"
    );
    assert_tables_are_ministat_of_written_files(archive.path(), &[]);
}

#[test]
fn logs_both_flat_and_in_raw_read_the_flat_ones_and_say_the_other() {
    let archive = tempfile::tempdir().unwrap();
    xeon_logs("r368287", "r368287", archive.path());
    xeon_logs("r368606", "r368287", &archive.path().join("RAW"));
    let (readme, stderr, _) = report(archive.path(), &[]);
    assert!(stderr.contains("RAW holds harness logs too"), "{stderr}");
    assert!(readme.contains("RAW holds harness logs too"), "{readme}");
}

/// Makes every iteration of `series` (a prefix) in `dir` unusable (a receiver log too short).
fn break_iterations(dir: &Path, series: &str, iterations: &[u32]) {
    for i in iterations {
        std::fs::write(dir.join(format!("bench.{series}.{i}.receiver")), "CMD: x\n").unwrap();
    }
}

#[test]
fn pps_files_of_each_harness_generation() {
    // Current harness (shell .info): a failed iteration writes nothing, a series without any
    // value leaves a 0-byte .pps.
    let archive = tempfile::tempdir().unwrap();
    let raw = xeon_logs("r368287", "r368287", &archive.path().join("RAW"));
    break_iterations(&raw, "r368287.inet4", &[2]);
    break_iterations(&raw, "r368287.inet6", &[1, 2, 3, 4, 5]);
    let pps = || {
        let (_, _, out) = report(archive.path(), &[]);
        let read = |af: &str| std::fs::read_to_string(out.path().join(format!("r368287.{af}.pps")));
        [read("inet4").unwrap(), read("inet6").unwrap()]
    };
    assert_eq!(pps(), ["14817302\n14817116\n14817229\n14817082\n", ""]);

    // The 2016 harness (free-text .info): an empty line for the failed iteration.
    for af in ["inet4", "inet6"] {
        std::fs::write(
            raw.join(format!("bench.r368287.{af}.info")),
            "Image: r368287\nCFG: none\nFreeBSD hp 13.0-CURRENT FreeBSD 13.0-CURRENT #0 r368287M: Thu Dec  3 amd64\n",
        )
        .unwrap();
    }
    assert_eq!(
        pps(),
        ["14817302\n\n14817116\n14817229\n14817082\n", "\n\n\n\n\n"]
    );
}

#[test]
fn messages_name_what_is_missing() {
    let expect_2 = |dir: &Path, args: &[&str], needle: &str| {
        let mut all = vec!["report", dir.to_str().unwrap()];
        all.extend(args);
        let (status, _, stderr) = benchlab_in(dir, &all);
        assert_eq!(status, 2, "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(needle), "{stderr}");
    };
    // Logs without a version level.
    let archive = tempfile::tempdir().unwrap();
    let raw = archive.path().join("RAW");
    std::fs::create_dir(&raw).unwrap();
    for entry in std::fs::read_dir(data("netbenches-archive/xeon/RAW")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if let Some(rest) = name.strip_prefix("bench.r368287.") {
            std::fs::copy(
                data("netbenches-archive/xeon/RAW").join(&name),
                raw.join(format!("bench.{rest}")),
            )
            .unwrap();
            std::fs::write(
                raw.join("bench.inet4.info"),
                "IMAGE=\"\"\nCFG=\"\"\nPKTGEN=\"inet4\"\n",
            )
            .unwrap();
            std::fs::write(
                raw.join("bench.inet6.info"),
                "IMAGE=\"\"\nCFG=\"\"\nPKTGEN=\"inet6\"\n",
            )
            .unwrap();
        }
    }
    expect_2(
        archive.path(),
        &["--versions", "foo"],
        "version 'foo' is in no series (check --versions or report.toml); the logs have no \
         version level (their file names carry no version name); leave out --versions",
    );
    let (readme, _, _) = report(archive.path(), &[]);
    assert!(
        !readme.lines().next().unwrap().contains("(none)"),
        "{readme}"
    );

    // A logged iteration number no run has.
    std::fs::write(raw.join("bench.inet4.20000000.receiver"), "").unwrap();
    expect_2(
        archive.path(),
        &[],
        "bench.inet4.20000000.receiver': iteration number over 10000",
    );

    // A FIFO in place of a log or of report.toml is refused, not waited on.
    std::fs::remove_file(raw.join("bench.inet4.20000000.receiver")).unwrap();
    for name in ["RAW/bench.inet4.6.receiver", "report.toml"] {
        let fifo = archive.path().join(name);
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        // Reading a FIFO would block for ever: returning at all is the check.
        expect_2(
            archive.path(),
            &[],
            "': not a regular file (a FIFO, device or directory)",
        );
        std::fs::remove_file(fifo).unwrap();
    }

    // A benchlab results directory without its campaign.toml.
    let results = tempfile::tempdir().unwrap();
    std::fs::create_dir(results.path().join("runs")).unwrap();
    expect_2(
        results.path(),
        &[],
        "has runs but is no complete benchlab results directory: it needs both campaign.toml",
    );
}

#[test]
fn rates_too_large_to_draw_are_left_out_of_the_graph() {
    let archive = tempfile::tempdir().unwrap();
    let raw = xeon_logs("r368287", "r368287", &archive.path().join("RAW"));
    for i in 1..=5 {
        let path = raw.join(format!("bench.r368287.inet4.{i}.receiver"));
        let text = std::fs::read_to_string(&path).unwrap();
        let huge: String = text
            .split_inclusive('\n')
            .map(|line| match line.split(' ').nth(3) {
                Some(rate) if line.contains("main_thread") && rate != "0" => {
                    line.replacen(&format!(" {rate} pps"), " 1.5e308 pps", 1)
                }
                _ => line.to_string(),
            })
            .collect();
        std::fs::write(&path, huge).unwrap();
    }
    let (_, stderr, out) = report(archive.path(), &[]);
    assert!(
        stderr.contains("warning: r368287.inet4: a value is not finite or too large to draw"),
        "{stderr}"
    );
    assert!(out.path().join("graph.inet4.png").is_file());
}

#[test]
fn the_seeds_own_readmes_pick_their_ministat() {
    // Seed 002's tables take 318516stable as the reference: made in the README's order, every
    // row of them comes out (18 of 30, its vitals only, while the logs' order made
    // 318516current the reference).
    for (seed, flavour, rows) in [
        ("002", "current", "30 of the 30"),
        ("003", "legacy", "15 of the 15"),
    ] {
        let archive = tempfile::tempdir().unwrap();
        copy_dir(&data(&format!("netbenches/{seed}")), archive.path());
        let readme = data(&format!("netbenches-archive/{seed}-README.md"));
        std::fs::copy(readme, archive.path().join("README.md")).unwrap();
        let (_, stderr, _) = report(archive.path(), &[]);
        let note = format!("note: ministat {flavour}: chosen as it reproduces {rows} table rows");
        assert!(stderr.contains(&note), "{seed}: {stderr}");
    }
}
