//! A throughput search over SSH: the virtual lab's namespaces each run their own sshd, and
//! `benchlab run` drives benchlab gen and rx on the remote nodes through them for every trial
//! of a tiny search; `search.json` and the README's NDR/PDR table come out as on the virtual
//! lab. Needs root.

use std::fs;

use crate::sshd::three_nodes;

#[test]
fn a_search_runs_over_ssh_with_benchlab_gen_and_rx_on_the_remote_nodes() {
    let (lab, nodes) = three_nodes("tst", &[]);
    let facts = lab.facts().clone();
    let dir = nodes.keys.dir();
    let campaign = dir.join("ssh-throughput.toml");
    fs::write(
        &campaign,
        format!(
            r#"title = "search over SSH"
iterations = 1
config_sets = ["forwarding"]

{lab}
[[profiles]]
name = "inet4"
af = "inet4"
rate = 100000
measure = "throughput"

[search]
min_load = 10000
search_duration_max = 12
warmup_duration = 1
[[search.goals]]
name = "NDR"
relative_width = 0.3
initial_trial_duration = 1
final_trial_duration = 1
duration_sum = 1
preceding_targets = 0
"#,
            lab = nodes.lab_toml(
                &crate::sshd::sender_toml(
                    "[lab.hosts.sender]",
                    "blssh-sender",
                    &facts.senders[0],
                    "benchlab",
                ),
                &facts.receiver.interface,
            ),
        ),
    )
    .unwrap();
    let results = dir.join("results");
    let out = nodes.run_campaign(&campaign, &results);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let trial = results.join("runs/default.forwarding.inet4.1");
    let search: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(trial.join("search.json")).unwrap()).unwrap();
    let trials = search["trials"].as_array().unwrap();
    assert!(!trials.is_empty(), "{search}");
    // Every trial went through benchlab gen and rx on the remote nodes, counted by both.
    assert!(
        trials.iter().all(|t| t["sent"].as_u64() > Some(0)),
        "{search}"
    );
    let meta = fs::read_to_string(trial.join("meta.json")).unwrap();
    assert!(meta.contains("benchlab gen"), "{meta}");
    let readme = fs::read_to_string(results.join("README.md")).unwrap();
    if search["result"].is_null() {
        // A machine busy enough that the remote generator held no rate: said, not hidden.
        assert!(
            search["failure"].as_str().unwrap().contains("senders"),
            "{search}"
        );
        eprintln!(
            "warning: the search failed on this machine: {}",
            search["failure"]
        );
    } else {
        let ndr = &search["result"]["goals"][0];
        assert!(ndr["relevant_lower_bound"].as_f64() > Some(0.0), "{ndr}");
        assert!(readme.contains("## Throughput (NDR/PDR)"), "{readme}");
    }
    drop(lab);
}
