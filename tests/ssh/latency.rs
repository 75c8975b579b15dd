//! Latency over SSH (issue 35, point 5): a lab whose sender and receiver are one host (the
//! 2-node layout: the virtual lab's sender and receiver interfaces in one namespace, served by
//! one sshd) times its probes with `benchlab probe` on that host, through a stateful DUT; a lab
//! whose sender and receiver are two hosts, two clocks, is refused at load, in one line, before
//! anything runs. Needs root and `sshd` (scripts/setup).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::sshd::{sender_toml, two_nodes, SshNodes};

/// Runs, as `name`, a one-trial campaign with probes at 1 kpps on top of a 5 kpps load (light:
/// the other tests' labs run beside it) on the lab tables `lab`: its file, its results
/// directory, its exit status and what it said.
fn run(nodes: &SshNodes, lab: &str, name: &str) -> (PathBuf, PathBuf, Option<i32>, String) {
    let file = nodes.keys.dir().join(format!("{name}.toml"));
    let text = format!(
        "title = \"latency over SSH\"\niterations = 1\norder = \"sequential\"\n\
         config_sets = [\"nft-stateful\"]\n\n{lab}\n\
         [trial]\nduration = 4\nwarmup = 1\ncooldown = 0\nlatency = true\n\n\
         [latency]\nrate = 1000\nfloor_duration = 1\n\n\
         [[profiles]]\nname = \"inet4\"\naf = \"inet4\"\nrate = 5000\n\n\
         [[versions]]\nname = \"v1\"\n"
    );
    fs::write(&file, text).unwrap();
    let results = nodes.keys.dir().join(name);
    let out = nodes.run_campaign(&file, &results);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (file, results, out.status.code(), err)
}

/// The command lines of the `benchlab probe` processes still running in `netns`.
fn probes_left(netns: &str) -> Vec<String> {
    let out = Command::new("ip")
        .args(["netns", "pids", netns])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|pid| fs::read(format!("/proc/{pid}/cmdline")).ok())
        .map(|argv| String::from_utf8_lossy(&argv).replace('\0', " "))
        .filter(|argv| argv.contains(" probe "))
        .collect()
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn a_one_clock_lab_over_ssh_measures_latency_and_a_two_clock_one_is_refused_at_load() {
    let (lab, nodes) = two_nodes("tl1");
    let facts = lab.facts().clone();
    let s = &facts.senders[0];
    let senders = sender_toml("[lab.hosts.sender]", "blssh-gen", s, "benchlab");
    let receiver_if = &facts.receiver.interface;

    let one_clock = nodes.lab_toml_at(&senders, "blssh-gen", receiver_if);
    let (_, results, status, err) = run(&nodes, &one_clock, "one-clock");
    assert_eq!(status, Some(0), "{err}");
    let trial = results.join("runs/v1.nft-stateful.inet4.1");
    let meta = json(&trial.join("meta.json"));
    let latency = &meta["latency"];
    assert_eq!(latency["probe_rate_pps"], 1000, "{meta}");
    // Both kinds went through the DUT's firewall and came back to the same host, most of
    // them at least on this loaded machine.
    for kind in ["established", "first_packet"] {
        let probes = &latency[kind]["probes"];
        let (sent, received) = (
            probes["sent"].as_u64().unwrap(),
            probes["received"].as_u64().unwrap(),
        );
        assert!(sent > 0 && received * 2 >= sent, "{kind}: {latency}");
        let p50 = latency[kind]["latency"]["p50_ns"].as_u64().unwrap();
        assert!(p50 > 0, "{kind}: {latency}");
    }
    assert!(trial.join("latency.hlog").is_file());
    // The floor needs a cable that bypasses the DUT: an SSH lab has none, and says so.
    let floor = &json(&results.join("lab.json"))["latency_floor"];
    let why = floor["not_measured"].as_str().unwrap();
    assert!(why.contains("bypasses the DUT"), "{floor}");
    // Every probe benchlab started on the host was stopped.
    assert_eq!(probes_left(&s.namespace), Vec::<String>::new());

    // The same lab with its receiver on another host: two clocks, refused before any host is
    // asked or any file written.
    let two_clocks = nodes.lab_toml_at(&senders, "blssh-dut", receiver_if);
    let (file, refused, status, err) = run(&nodes, &two_clocks, "two-clocks");
    assert_eq!(
        (status, err.trim_end().lines().count()),
        (Some(2), 1),
        "{err}"
    );
    let line = format!(
        "benchlab: {}: key `trial.latency`: the sender blssh-gen and the receiver blssh-dut are \
         two hosts, two clocks",
        file.display()
    );
    assert!(err.starts_with(&line), "{err}");
    assert!(!refused.exists());
    drop(nodes);
    drop(lab);
}
