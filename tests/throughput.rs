//! A throughput search end to end on the virtual lab (real namespaces, benchlab's generator and
//! receiver): `benchlab run` of one config set with a small, wide search, then its
//! `search.json`, the README's NDR/PDR table and the loss chart. Needs root, like the lab.

use std::fs;

use benchlab::lab::stall::VETH_QUEUE_FRAMES;
use benchlab::lab::virt::INPUT_QUEUE_FRAMES;

mod common;
use common::{lab_namespaces, run, stderr};

/// One iteration of forwarding, inet4, a search of wide goals with half-second trials, its max
/// load fixed (no calibration) well within what the generator sends.
const CAMPAIGN: &str = r#"title = "throughput search"
iterations = 1
config_sets = ["forwarding"]

[lab]
id = "tt1"

[[profiles]]
name = "inet4"
af = "inet4"
rate = 150000
measure = "throughput"

[search]
min_load = 10000
search_duration_max = 20
warmup_duration = 0.5
[[search.goals]]
name = "NDR"
loss_ratio = 0.0
relative_width = 0.25
initial_trial_duration = 0.5
final_trial_duration = 0.5
duration_sum = 1
preceding_targets = 1
[[search.goals]]
name = "PDR"
loss_ratio = 0.005
relative_width = 0.25
initial_trial_duration = 0.5
final_trial_duration = 0.5
duration_sum = 1
preceding_targets = 1
"#;

#[test]
fn a_search_on_the_virtual_lab_ends_with_its_trials_table_and_chart() {
    let tmp = tempfile::tempdir().unwrap();
    let campaign = tmp.path().join("throughput.toml");
    fs::write(&campaign, CAMPAIGN).unwrap();
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
    assert!(lab_namespaces("tt1").is_empty());
    let trial = results.join("runs/default.forwarding.inet4.1");
    let meta: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(trial.join("meta.json")).unwrap()).unwrap();
    let search: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(trial.join("search.json")).unwrap()).unwrap();
    let trials = search["trials"].as_array().unwrap();
    assert!(!trials.is_empty(), "{search}");
    // Every trial that ran keeps its files, numbered as in `search.json`: the DUT's counters
    // before and after, the generator's and the receiver's records.
    let ran = |t: &serde_json::Value| !t["problem"].as_str().is_some_and(|p| p.contains("failed"));
    let kept = fs::read_dir(trial.join("trials")).unwrap().count();
    assert_eq!(kept, trials.iter().filter(|t| ran(t)).count());
    for (n, _) in (1..).zip(trials).filter(|(_, t)| ran(t)) {
        let dir = trial.join(format!("trials/{n:03}"));
        // The DUT's CPU watched for stalls too: they say whether a loss was the machine's.
        for name in [
            "dut-before.txt",
            "dut-after.txt",
            "receiver.json",
            "dut-cpu.json",
        ] {
            assert!(dir.join(name).is_file(), "{}/{name}", dir.display());
        }
    }
    for t in trials {
        // Counted after the drain: the receiver never counts more than was sent.
        assert!(t["received"].as_u64() <= t["sent"].as_u64(), "{t}");
        assert!(t["drops"].as_object().is_some_and(|d| !d.is_empty()), "{t}");
        if ran(t) {
            // The watch woke about every millisecond of the trial (more than half of them,
            // however busy the machine) and saw how late, at most, it woke.
            let cpu = &t["dut_cpu"];
            let wakes = cpu["wakes"].as_u64().unwrap();
            assert!(
                wakes as f64 > 0.5e3 * t["duration"].as_f64().unwrap(),
                "{t}"
            );
            assert!(cpu["longest_ms"].as_f64().is_some_and(|l| l >= 0.0), "{t}");
            // veth's ring and the ring the generator's queue stands for.
            let queue = VETH_QUEUE_FRAMES + INPUT_QUEUE_FRAMES;
            assert_eq!(cpu["queue_frames"], queue, "{t}");
        }
    }
    let readme = fs::read_to_string(results.join("README.md")).unwrap();
    if meta["status"] == "failed" {
        // A machine busy enough that the generator held no rate: said, not hidden.
        let failure = meta["failure"].as_str().unwrap();
        assert!(
            failure.contains("senders") || failure.contains("generator"),
            "{failure}"
        );
        eprintln!("warning: the search failed on this machine: {failure}");
        return;
    }
    let result = &search["result"];
    assert_eq!(result["max_load"], 150000.0);
    for (goal, name) in result["goals"]
        .as_array()
        .unwrap()
        .iter()
        .zip(["NDR", "PDR"])
    {
        assert_eq!(goal["goal"]["name"], name);
        let lower = goal["relevant_lower_bound"].as_f64().unwrap();
        assert!((10000.0..=150000.0).contains(&lower), "{goal}");
    }
    // One more trial at max load closed the search, and the searches' table shows it.
    assert_eq!(search["closing"]["load"], 150000.0, "{search}");
    assert!(readme.contains("## Throughput (NDR/PDR)"), "{readme}");
    // The setup names the load the searches went up to, not a load of their own.
    assert!(readme.contains("; max load 150 Kpps ("), "{readme}");
    assert!(
        readme.contains("| default.forwarding.inet4.1 | 150 Kpps |"),
        "{readme}"
    );
    assert!(
        readme.contains("| default | forwarding | inet4 | NDR | 0 % | 1 |"),
        "{readme}"
    );
    assert!(
        readme.contains("search.default.forwarding.inet4.png"),
        "{readme}"
    );
    let png = fs::read(results.join("search.default.forwarding.inet4.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG"));
}
