//! `benchlab run` end to end on the virtual lab (real namespaces, real nftables): a short
//! campaign ending with its report, kill -9 then `--resume`, and the refusals of bad campaign
//! files and results directories. Needs root, like the lab itself.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

mod common;
use common::{benchlab, lab_namespaces, run, stderr};

/// A short campaign on lab `id`: 2 config sets × inet4 × `iterations`, 5-second trials.
fn short_campaign(dir: &Path, id: &str, iterations: u32) -> PathBuf {
    let path = dir.join(format!("short-{id}.toml"));
    fs::write(
        &path,
        format!(
            r#"title = "short campaign"
iterations = {iterations}
design = "trials"
config_sets = ["forwarding", "nft-stateful"]

[lab]
id = "{id}"

[trial]
duration = 5
warmup = 1
cooldown = 1

[[profiles]]
name = "inet4"
af = "inet4"

[hooks]
before = [["nft", "list", "ruleset"]]
"#
        ),
    )
    .unwrap();
    path
}

fn trial_dirs(results: &Path) -> BTreeSet<String> {
    fs::read_dir(results.join("runs")).map_or(BTreeSet::new(), |dir| {
        dir.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    })
}

fn finished_trials(results: &Path) -> usize {
    trial_dirs(results)
        .iter()
        .filter(|t| results.join("runs").join(t).join("meta.json").exists())
        .count()
}

#[test]
fn a_short_campaign_ends_with_its_report_and_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let campaign = short_campaign(tmp.path(), "tc1", 3);
    let results = tmp.path().join("results");
    let out = run(&[
        "run",
        campaign.to_str().unwrap(),
        "-o",
        results.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "benchlab run failed: {}",
        stderr(&out)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("README.md"));
    assert_eq!(trial_dirs(&results).len(), 6);
    assert_eq!(finished_trials(&results), 6);
    for file in [
        "campaign.toml",
        "lab.json",
        "README.md",
        "graph.png",
        "results.json",
    ] {
        assert!(results.join(file).is_file(), "{file} missing");
    }
    let trial = results.join("runs/default.nft-stateful.inet4.1");
    let before = fs::read_to_string(trial.join("dut-before.txt")).unwrap();
    assert!(before.contains("$ nft list ruleset"), "{before}");
    let samples = fs::read_to_string(trial.join("samples.csv")).unwrap();
    assert!(samples.starts_with("t_s,tx_pkts,rx_pkts,tx_pps,rx_pps\n"));
    assert!(samples.lines().count() >= 4, "{samples}");
    let readme = fs::read_to_string(results.join("README.md")).unwrap();
    assert!(
        readme.contains("Difference at 95.0% confidence")
            || readme.contains("No difference proven at 95.0% confidence"),
        "{readme}"
    );
    assert!(readme.contains("default.nft-stateful.inet4"), "{readme}");
    let lab: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(results.join("lab.json")).unwrap()).unwrap();
    assert!(lab.pointer("/lab/placement/mode").is_some(), "{lab}");
    assert!(lab.pointer("/config_sets/nft-stateful").is_some(), "{lab}");
    assert!(lab_namespaces("tc1").is_empty());
    // The report is regenerated from the raw samples, identically.
    let again = tmp.path().join("again");
    let out = run(&[
        "report",
        results.to_str().unwrap(),
        "-o",
        again.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        fs::read(results.join("results.json")).unwrap(),
        fs::read(again.join("results.json")).unwrap()
    );
}

#[test]
fn kill_9_then_resume_gives_the_same_trials_without_rewriting_finished_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let campaign = short_campaign(tmp.path(), "tc2", 3);
    let results = tmp.path().join("results");
    let mut child = benchlab()
        .args([
            "run",
            campaign.to_str().unwrap(),
            "-o",
            results.to_str().unwrap(),
            "-q",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while finished_trials(&results) < 2 {
        assert!(Instant::now() < deadline, "no trial finished in time");
        assert!(
            child.try_wait().unwrap().is_none(),
            "benchlab run ended early"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    child.kill().unwrap(); // SIGKILL: no cleanup of any kind
    child.wait().unwrap();
    let done_before: Vec<(String, Vec<u8>)> = trial_dirs(&results)
        .into_iter()
        .filter_map(|t| {
            fs::read(results.join("runs").join(&t).join("meta.json"))
                .ok()
                .map(|m| (t, m))
        })
        .collect();
    assert!(done_before.len() >= 2 && done_before.len() < 6);
    // The next start removes the stale lab the killed run left.
    let out = run(&["run", "--resume", results.to_str().unwrap(), "-q"]);
    assert!(out.status.success(), "resume failed: {}", stderr(&out));
    let expected: BTreeSet<String> = ["forwarding", "nft-stateful"]
        .iter()
        .flat_map(|c| (1..=3).map(move |i| format!("default.{c}.inet4.{i}")))
        .collect();
    assert_eq!(trial_dirs(&results), expected);
    assert_eq!(finished_trials(&results), 6);
    for (trial, meta) in done_before {
        let now = fs::read(results.join("runs").join(&trial).join("meta.json")).unwrap();
        assert_eq!(now, meta, "{trial} was rewritten");
    }
    assert!(results.join("README.md").is_file());
    assert!(lab_namespaces("tc2").is_empty());
}

#[test]
fn malformed_campaign_files_give_one_line_naming_the_key() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        ("syntax", "iterations = = 3", "line 1"),
        (
            "unknown-key",
            "[trial]\nduratoin = 5",
            "unknown field `duratoin`",
        ),
        (
            "unknown-set",
            "config_sets = [\"pf-stateful\"]",
            "`pf-stateful`",
        ),
        ("negative", "[trial]\nduration = -5", "trial.duration"),
        ("zero", "iterations = 0", "iterations"),
    ];
    for (name, text, want) in cases {
        let path = tmp.path().join(format!("{name}.toml"));
        fs::write(&path, text).unwrap();
        let results = tmp.path().join(format!("out-{name}"));
        let out = run(&[
            "run",
            path.to_str().unwrap(),
            "-o",
            results.to_str().unwrap(),
        ]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(
            err.contains(want) && err.contains(path.to_str().unwrap()),
            "{name}: {err}"
        );
        assert!(!results.exists(), "{name}: a results directory was started");
    }
}

#[test]
fn mismatched_or_corrupted_results_directories_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let campaign = short_campaign(tmp.path(), "tc3", 3);
    let results = tmp.path().join("results");
    // A results directory as an interrupted run leaves it, without running anything.
    fs::create_dir_all(results.join("runs")).unwrap();
    let text = fs::read_to_string(&campaign).unwrap();
    let stored = text.replace("iterations = 3", "iterations = 5");
    fs::write(results.join("campaign.toml"), stored).unwrap();
    let out = run(&[
        "run",
        campaign.to_str().unwrap(),
        "--resume",
        results.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("key `iterations` changed"),
        "{}",
        stderr(&out)
    );

    fs::write(results.join("campaign.toml"), &text).unwrap();
    let trial = results.join("runs/default.forwarding.inet4.1");
    fs::create_dir_all(&trial).unwrap();
    fs::write(trial.join("meta.json"), "{ not json").unwrap();
    let out = run(&["run", "--resume", results.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("corrupted results directory"),
        "{}",
        stderr(&out)
    );

    let out = run(&[
        "run",
        "--resume",
        tmp.path().join("nothing").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("not a benchlab results directory"));
}
