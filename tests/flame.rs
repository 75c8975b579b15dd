//! DUT flamegraphs on the virtual lab (real namespaces, real nftables, real `perf record`):
//! a profiled campaign of two versions × two config sets, and a capture deliberately placed
//! after the traffic. Needs root and perf, like the lab itself.

use std::fs;
use std::path::{Path, PathBuf};

mod common;
use common::{lab_namespaces, run, stderr};

fn write_campaign(dir: &Path, id: &str, body: &str) -> PathBuf {
    let path = dir.join(format!("{id}.toml"));
    fs::write(
        &path,
        format!(
            r#"title = "flamegraphs"
iterations = 1
{body}

[lab]
id = "{id}"

[trial]
duration = 5
warmup = 1
cooldown = 1

[[profiles]]
name = "inet4"
af = "inet4"
"#
        ),
    )
    .unwrap();
    path
}

/// Frames of the stacks of this lab's own DUT threads (the machine may run other labs whose
/// DUTs forward on the same CPU).
fn dut_frames(folded: &str, id: &str) -> std::collections::BTreeSet<String> {
    folded
        .lines()
        .filter(|l| l.starts_with(&format!("napi/bl{id}")))
        .flat_map(|l| {
            let stack = l.rsplit_once(' ').unwrap().0;
            stack.split(';').map(str::to_string).collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn a_profiled_campaign_draws_flamegraphs_and_differential_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let campaign = write_campaign(
        tmp.path(),
        "tf1",
        r#"config_sets = ["forwarding", "nft-stateful"]
profile = true

[[versions]]
name = "acct-off"
label = "accounting off"
sysctls = { "net.netfilter.nf_conntrack_acct" = "0" }

[[versions]]
name = "acct-on"
sysctls = { "net.netfilter.nf_conntrack_acct" = "1" }"#,
    );
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
    assert!(lab_namespaces("tf1").is_empty());

    // One profiling trial per series, each with its stacks and its window inside the traffic.
    for v in ["acct-off", "acct-on"] {
        for c in ["forwarding", "nft-stateful"] {
            let trial = results.join(format!("runs/{v}.{c}.inet4.profile"));
            let meta: serde_json::Value =
                serde_json::from_str(&fs::read_to_string(trial.join("meta.json")).unwrap())
                    .unwrap();
            let start = meta["start_unix_s"].as_f64().unwrap();
            let from = meta["capture"]["start_unix_s"].as_f64().unwrap() - start;
            let to = meta["capture"]["end_unix_s"].as_f64().unwrap() - start;
            let traffic_end = meta["end_unix_s"].as_f64().unwrap() - start;
            // After warm-up, and before the traffic stops (perf may take a moment to stop
            // after the measured window on a loaded machine, never past the traffic).
            assert!(
                from >= 0.9 && to <= traffic_end && to - from > 1.5,
                "capture {from}..{to}, traffic 0..{traffic_end}"
            );
            assert!(trial.join("perf.folded").is_file());
        }
    }
    let folded = |c: &str| {
        fs::read_to_string(results.join(format!("runs/acct-off.{c}.inet4.profile/perf.folded")))
            .unwrap()
    };
    let (fwd, nft) = (
        dut_frames(&folded("forwarding"), "tf1"),
        dut_frames(&folded("nft-stateful"), "tf1"),
    );
    assert!(fwd.contains("ip_forward") && nft.contains("ip_forward"));
    for frame in ["nf_conntrack_in", "nft_do_chain"] {
        assert!(
            nft.contains(frame),
            "{frame} missing from the nft-stateful profile"
        );
        assert!(!fwd.contains(frame), "{frame} in the forwarding profile");
    }

    let readme = fs::read_to_string(results.join("README.md")).unwrap();
    for link in [
        "[accounting off with inet4 forwarding](flame/acct-off.forwarding.inet4.svg)",
        "[acct-on with inet4 nft-stateful](flame/acct-on.nft-stateful.inet4.svg)",
        "[acct-on against accounting off with inet4 nft-stateful]\
         (flame/diff.acct-on.nft-stateful.inet4.svg)",
    ] {
        assert!(readme.contains(link), "{link} not in\n{readme}");
    }
    assert!(!readme.contains("flamegraph not published"), "{readme}");
    let mut svgs: Vec<String> = fs::read_dir(results.join("flame"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    svgs.sort();
    assert_eq!(
        svgs,
        [
            "acct-off.forwarding.inet4.svg",
            "acct-off.nft-stateful.inet4.svg",
            "acct-on.forwarding.inet4.svg",
            "acct-on.nft-stateful.inet4.svg",
            "diff.acct-on.forwarding.inet4.svg",
            "diff.acct-on.nft-stateful.inet4.svg",
        ]
    );
    for svg in &svgs {
        let bytes = fs::read(results.join("flame").join(svg)).unwrap();
        // Every frame FlameGraph draws (0.1 px of 1180): a busy perf capture of the virtual
        // lab's DUT comes to about 1.2 MB, as flamegraph.pl's would.
        assert!(bytes.len() < 3_000_000, "{svg}: {} bytes", bytes.len());
        assert!(String::from_utf8_lossy(&bytes)
            .trim_end()
            .ends_with("</svg>"));
    }

    // Profiling trials are no measurements; their checks are in results.json.
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(results.join("results.json")).unwrap()).unwrap();
    for series in json["series"].as_array().unwrap() {
        assert_eq!(
            series["iterations"].as_array().unwrap().len(),
            1,
            "{series}"
        );
        assert_eq!(series["iterations"][0]["index"], 1);
    }
    let flames = json["flamegraphs"].as_array().unwrap();
    assert_eq!(flames.len(), 4);
    for f in flames {
        assert!(f["check"]["rejected"].is_null(), "{f}");
        assert!(f["check"]["samples"].as_u64().unwrap() >= 100, "{f}");
        assert!(f["svg"].as_str().unwrap().starts_with("flame/"));
    }

    // `benchlab report` draws the same SVGs from the results directory alone.
    let again = tmp.path().join("again");
    let out = run(&[
        "report",
        results.to_str().unwrap(),
        "-o",
        again.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    for svg in &svgs {
        assert_eq!(
            fs::read(results.join("flame").join(svg)).unwrap(),
            fs::read(again.join("flame").join(svg)).unwrap(),
            "{svg}"
        );
    }
}

#[test]
fn a_capture_after_the_traffic_is_reported_not_published() {
    let tmp = tempfile::tempdir().unwrap();
    let campaign = write_campaign(tmp.path(), "tf2", r#"config_sets = ["forwarding"]"#);
    let results = tmp.path().join("results");
    // The window (1 s to 4 s of a 5-second trial) moved 6 s later: wholly after the traffic,
    // the old harness's mistake.
    let out = run(&[
        "run",
        campaign.to_str().unwrap(),
        "-o",
        results.to_str().unwrap(),
        "--profile",
        "--profile-delay",
        "6",
    ]);
    assert!(
        out.status.success(),
        "benchlab run failed: {}",
        stderr(&out)
    );
    assert!(lab_namespaces("tf2").is_empty());
    assert!(results
        .join("runs/default.forwarding.inet4.profile/perf.folded")
        .is_file());
    let readme = fs::read_to_string(results.join("README.md")).unwrap();
    assert!(!readme.contains("## Flamegraphs"), "{readme}");
    let not_measured = &readme[readme
        .find("## Not measured")
        .expect("a Not measured section")..];
    // The capture starts 7 s into the traffic, later on a loaded machine: past the end anyway.
    assert!(
        not_measured.contains(
            "runs/default.forwarding.inet4.profile: flamegraph not published: captured from "
        ),
        "{readme}"
    );
    assert!(not_measured.contains("outside"), "{readme}");
    assert!(!results.join("flame").exists());
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(results.join("results.json")).unwrap()).unwrap();
    let check = &json["flamegraphs"][0]["check"];
    assert!(
        check["rejected"].as_str().unwrap().contains("outside"),
        "{check}"
    );
    assert!(json["flamegraphs"][0]["svg"].is_null());
    assert!(
        stderr(&out).contains("flamegraph not published"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_bad_profile_delay_is_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    let out = run(&[
        "run",
        "-o",
        results.to_str().unwrap(),
        "--profile",
        "--profile-delay=-1",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--profile-delay"), "{}", stderr(&out));
    assert!(!results.exists());
}
