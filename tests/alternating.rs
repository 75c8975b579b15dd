//! The alternating design on the virtual lab (root, namespaces, nftables): a short run killed
//! with -9 after its first block, then `--resume`: the blocks already measured are kept as they
//! were, the run goes on in a new segment of traffic, and the report gives the paired estimate
//! and the time chart.

mod common;

use std::fs;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{benchlab, lab_namespaces, run, run_campaign, stderr};

#[test]
fn kill_9_after_a_block_then_resume_keeps_it_and_reports_the_paired_estimate() {
    let tmp = tempfile::tempdir().unwrap();
    let campaign = tmp.path().join("alt.toml");
    fs::write(
        &campaign,
        r#"title = "alternating"
design = "alternating"
config_sets = ["forwarding", "nft-stateful"]

[lab]
id = "ta1"

# A loaded machine switches slowly (1 s a switch seen on CI) and may lose a block: the time cap
# leaves room for the blocks an interval needs, the loose precision ends a fast run as early.
[alternating]
max_duration = 30
min_blocks = 2
precision = 10

[trial]
warmup = 1

[[profiles]]
name = "inet4"
af = "inet4"
"#,
    )
    .unwrap();
    let results = tmp.path().join("results");
    let phases = results.join("alternating/default.inet4/phases.csv");
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
    let deadline = Instant::now() + Duration::from_secs(60);
    while !phases.exists() {
        assert!(Instant::now() < deadline, "no block finished in time");
        assert!(
            child.try_wait().unwrap().is_none(),
            "benchlab run ended early"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().unwrap(); // SIGKILL: no cleanup of any kind
    child.wait().unwrap();
    let before = fs::read_to_string(&phases).unwrap();
    let out = run(&["run", "--resume", results.to_str().unwrap(), "-q"]);
    assert!(out.status.success(), "resume failed: {}", stderr(&out));
    let after = fs::read_to_string(&phases).unwrap();
    assert!(
        after.starts_with(&before),
        "a block measured before the kill changed"
    );
    assert!(
        after.lines().any(|l| l.starts_with("2,")),
        "the resumed run has no second segment:\n{after}"
    );
    let readme = fs::read_to_string(results.join("README.md")).unwrap();
    assert!(
        readme.contains("## Paired comparisons (alternating design)"),
        "{readme}"
    );
    let line = readme
        .lines()
        .find(|l| l.starts_with("- nft-stateful vs forwarding: "))
        .unwrap_or_else(|| panic!("no paired estimate:\n{readme}"));
    // nft-stateful costs a third of the rate here: whatever the noise, the sign is right.
    assert!(line.contains(": \u{2212}"), "{line}\n{readme}\n{after}");
    assert!(line.contains("(paired, 95 %, "), "{line}");
    assert!(results.join("alternating.default.inet4.png").is_file());
    assert!(lab_namespaces("ta1").is_empty());
}

/// Issue 12: two quick versions (a sysctl each) alternate with two config sets in one run:
/// the report has a series per (version, set) and each version against the first within a set.
#[test]
fn quick_versions_alternate_with_the_config_sets() {
    let tmp = tempfile::tempdir().unwrap();
    let (results, out) = run_campaign(
        tmp.path(),
        r#"title = "quick versions"
design = "alternating"
config_sets = ["forwarding", "nft-stateful"]

[lab]
id = "tq1"

# Four entries make a block of eight 0.5 s phases (4.7 s with the switches): 12 s hold two.
[alternating]
max_duration = 12
min_blocks = 2
precision = 10

[trial]
warmup = 1

[[versions]]
name = "acct-off"
sysctls = { "net.netfilter.nf_conntrack_acct" = "0" }

[[versions]]
name = "acct-on"
sysctls = { "net.netfilter.nf_conntrack_acct" = "1" }

[[profiles]]
name = "inet4"
af = "inet4"
"#,
    );
    assert!(out.status.success(), "run failed: {}", stderr(&out));
    assert!(results
        .join("alternating/acct-off+acct-on.inet4/phases.csv")
        .is_file());
    let readme = fs::read_to_string(results.join("README.md")).unwrap();
    for series in [
        "acct-off.forwarding.inet4",
        "acct-off.nft-stateful.inet4",
        "acct-on.forwarding.inet4",
        "acct-on.nft-stateful.inet4",
    ] {
        assert!(readme.contains(series), "no {series}:\n{readme}");
    }
    assert!(
        readme
            .lines()
            .any(|l| l.starts_with("- acct-on vs acct-off (nft-stateful)")),
        "{readme}"
    );
    // lab.json names each alternated version with the sysctl its switches set.
    let lab = fs::read_to_string(results.join("lab.json")).unwrap();
    let lab: serde_json::Value = serde_json::from_str(&lab).unwrap();
    let acct = |v: &str| lab["versions"][v]["sysctls"]["net.netfilter.nf_conntrack_acct"].clone();
    assert_eq!(
        (acct("acct-off"), acct("acct-on")),
        ("0".into(), "1".into())
    );
    // The versions' sysctls lived in the DUT's namespace, gone with the lab.
    assert!(lab_namespaces("tq1").is_empty());
}
