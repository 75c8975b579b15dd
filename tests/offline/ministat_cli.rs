//! `benchlab ministat` beyond ministat: `--json`, `--help`, and the exit status of a missing
//! file (the comparison with ministat itself is in ministat_differential.rs).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn seed_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/netbenches-pps/002")
}

fn ministat(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_benchlab"))
        .arg("ministat")
        .args(args)
        .current_dir(seed_dir())
        .output()
        .expect("benchlab runs")
}

const STABLE: &str = "318516stable.forwarding.inet4.pps";
const CURRENT: &str = "318516current.forwarding.inet4.pps";

#[test]
fn json_holds_the_numbers_of_the_table() {
    let output = ministat(&["--json", STABLE, CURRENT]);
    assert!(output.status.success(), "{output:?}");
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("valid JSON");
    assert_eq!(json["flavor"], "current");
    assert_eq!(json["confidence"], 95.0);
    let stable = &json["datasets"][0];
    assert_eq!(stable["name"], STABLE);
    assert_eq!(stable["n"], 5);
    assert_eq!(stable["min"], 681208.0);
    assert_eq!(stable["max"], 710973.0);
    assert_eq!(stable["median"], 689737.0);
    assert_eq!(stable["mean"], 692206.4);
    let stddev = stable["stddev"].as_f64().expect("a number");
    assert!((stddev - 11661.571).abs() < 1e-3, "{stddev}");
    let c = &json["comparisons"][0];
    assert_eq!(c["dataset"], CURRENT);
    assert_eq!(c["reference"], STABLE);
    assert_eq!(c["significant"], true);
    assert_eq!(c["confidence"], 95.0);
    // The seed's table: -217764 +/- 12075.2, -31.4594% +/- 1.20111%, pooled s = 8279.54.
    for (key, value, tolerance) in [
        ("difference", -217764.2, 1e-6),
        ("difference_ci", 12075.2, 0.05),
        ("relative_pct", -31.4594, 5e-5),
        ("relative_ci_pct", 1.20111, 5e-6),
        ("pooled_s", 8279.54, 5e-3),
    ] {
        let got = c[key].as_f64().expect("a number");
        assert!((got - value).abs() < tolerance, "{key}: {got}");
    }
}

#[test]
fn json_follows_the_flags() {
    let output = ministat(&["--json", "--legacy", "-n", "-c", "99", STABLE, CURRENT]);
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("valid JSON");
    assert_eq!(json["flavor"], "legacy");
    assert_eq!(json["confidence"], 99.0);
    assert_eq!(json["comparisons"].as_array().map(Vec::len), Some(0));
}

#[test]
fn help_shows_ministat_usage_and_the_additions() {
    let output = ministat(&["--help"]);
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).expect("UTF-8");
    assert!(
        text.starts_with("Usage: benchlab ministat [-C column]"),
        "{text}"
    );
    assert!(
        text.contains("--legacy") && text.contains("--json"),
        "{text}"
    );
}

#[test]
fn help_ministat_documents_each_flag() {
    let output = Command::new(env!("CARGO_BIN_EXE_benchlab"))
        .args(["help", "ministat"])
        .output()
        .expect("benchlab runs");
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).expect("UTF-8");
    for flag in [
        "-A",
        "-C",
        "-c",
        "-d",
        "-n",
        "-s",
        "-w",
        "--legacy",
        "--accurate",
        "--json",
        "--help",
    ] {
        assert!(text.contains(&format!("\t{flag} : ")), "{flag} in:\n{text}");
    }
    // ministat's own -h is not a flag: a usage error, as ministat's.
    let output = ministat(&["-h"]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn missing_file_is_bad_input() {
    let output = ministat(&[STABLE, "no-such-file.pps"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "benchlab: Cannot open no-such-file.pps: No such file or directory\n"
    );
}
