//! `benchlab run` over SSH on other topologies and generators than `tests/ssh/campaign.rs`:
//! a 4-node lab whose two senders send at once (each its share of the flows and of the rate),
//! and a trafgen sender. The nodes are the virtual lab's namespaces, each with its own sshd
//! (tests/sshd); benchlab runs in a management namespace and reaches them only over SSH.
//! Needs root, `sshd` and `trafgen` (scripts/setup).

use std::fs;
use std::path::Path;

use crate::sshd::{three_nodes, SshNodes};
use benchlab::lab::{Lab, LabConfig};

/// The rows of a trial's samples.csv: t_s, tx_pkts, rx_pkts, tx_pps, rx_pps.
fn samples(trial: &Path) -> Vec<Vec<f64>> {
    let text = fs::read_to_string(trial.join("samples.csv")).unwrap();
    text.lines()
        .skip(1)
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect()
}

/// A trial's seconds at a `pps` profile on a busy 2-core machine: the middle seconds send
/// near that rate (a paced generator may fall a little behind), and the receiver counted what
/// was sent (per second the two samplers' clocks differ, so compare the totals).
fn check_rows(rows: &[Vec<f64>], pps: f64) {
    assert!(rows.len() >= 4, "{rows:?}");
    for r in &rows[1..rows.len() - 1] {
        assert!((0.75 * pps..=1.05 * pps).contains(&r[1]), "{rows:?}");
    }
    let (tx, rx): (f64, f64) = rows
        .iter()
        .map(|r| (r[1], r[2]))
        .fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1));
    assert!((rx - tx).abs() <= 0.05 * tx, "tx {tx}, rx {rx}: {rows:?}");
}

/// The last `"key":N` number of a JSON lines file.
fn last_number(text: &str, key: &str) -> u64 {
    let pat = format!("\"{key}\":");
    let at = text
        .rfind(&pat)
        .unwrap_or_else(|| panic!("no {key} in {text}"));
    text[at + pat.len()..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// A one-trial campaign on the SSH aliases of `nodes`, its senders' tables in `senders`.
fn campaign(nodes: &SshNodes, receiver_if: &str, senders: &str, extra: &str) -> String {
    format!(
        "title = \"SSH topology\"\niterations = 1\norder = \"sequential\"\n{extra}\n\
         {}\n[trial]\nduration = 4\nwarmup = 1\ncooldown = 0\n\n[[versions]]\nname = \"v1\"\n",
        nodes.lab_toml(senders, receiver_if)
    )
}

fn run(nodes: &SshNodes, text: &str) -> std::path::PathBuf {
    let dir = nodes.keys.dir();
    let file = dir.join("campaign.toml");
    fs::write(&file, text).unwrap();
    let results = dir.join("results");
    let out = nodes.run_campaign(&file, &results);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(results.join("README.md").exists());
    results
}

#[test]
fn two_senders_send_at_once_each_its_share_and_the_receiver_counts_the_sum() {
    let lab = Lab::up(&LabConfig {
        id: "ts4".into(),
        senders: 2,
        ..LabConfig::default()
    })
    .unwrap();
    let facts = lab.facts().clone();
    let (s1, s2) = (&facts.senders[0], &facts.senders[1]);
    let nodes = SshNodes::start(&[
        ("blssh-dut", &facts.dut.namespace),
        ("blssh-sender", &s1.namespace),
        ("blssh-sender2", &s2.namespace),
        ("blssh-receiver", &facts.receiver.namespace),
    ]);
    let senders = crate::sshd::sender_toml("[[lab.hosts.senders]]", "blssh-sender", s1, "benchlab")
        + &crate::sshd::sender_toml("[[lab.hosts.senders]]", "blssh-sender2", s2, "benchlab");
    // 30 000 pps in all: 15 000 from each sender, well below what the DUT forwards.
    let profile = "config_sets = [\"forwarding\"]\n\n[[profiles]]\nname = \"inet4\"\naf = \"inet4\"\nrate = 30000\n";
    let results = run(
        &nodes,
        &campaign(&nodes, &facts.receiver.interface, &senders, profile),
    );
    let trial = results.join("runs/v1.forwarding.inet4.1");
    let mut sent = Vec::new();
    for k in 1..=2 {
        let gen = fs::read_to_string(trial.join(format!("generator-{k}.jsonl"))).unwrap();
        let tx = last_number(&gen, "tx_pkts");
        // Each sender ran about 4 s at 15 000 pps.
        assert!((45_000..=75_000).contains(&tx), "sender {k}: {tx}\n{gen}");
        sent.push(tx);
    }
    // Each sender's frames entered the DUT on its own link (the lab is fresh: counters start
    // at zero).
    for (k, ingress) in facts.dut.ingress.iter().enumerate() {
        let path = format!("/sys/class/net/{ingress}/statistics/rx_packets");
        let out = std::process::Command::new("ip")
            .args(["netns", "exec", &facts.dut.namespace, "cat", &path])
            .output()
            .unwrap();
        let rx: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        // veth drops a few frames when the peer's backlog is full on a loaded machine: the
        // point is that each sender's frames took its own link, not that none was lost.
        assert!(
            rx as f64 >= sent[k] as f64 * 0.9,
            "DUT link {ingress}: {rx} < 90 % of {}",
            sent[k]
        );
    }
    // Each second's tx is the two senders' sum, and the receiver counted what they sent.
    let rows = samples(&trial);
    check_rows(&rows, 30_000.0);
    let total: f64 = rows.iter().map(|r| r[1]).sum();
    assert!(
        total >= (sent[0] + sent[1]) as f64 * 0.9,
        "{rows:?} {sent:?}"
    );
    let meta = fs::read_to_string(trial.join("meta.json")).unwrap();
    assert!(
        meta.contains("benchlab gen on blssh-sender,")
            && meta.contains(" + benchlab gen on blssh-sender2,"),
        "{meta}"
    );
    let lab_json = fs::read_to_string(results.join("lab.json")).unwrap();
    let lab_json: serde_json::Value = serde_json::from_str(&lab_json).unwrap();
    let hosts: Vec<&str> = lab_json["lab"]["senders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["host"].as_str().unwrap())
        .collect();
    assert_eq!(hosts, ["blssh-sender", "blssh-sender2"]);
    drop(nodes);
    drop(lab);
}

#[test]
fn a_trafgen_sender_delivers_its_flows_through_the_dut_firewall() {
    let (lab, nodes) = three_nodes("ts3", &[]);
    let facts = lab.facts().clone();
    let s1 = &facts.senders[0];
    let senders = crate::sshd::sender_toml("[lab.hosts.sender]", "blssh-sender", s1, "trafgen");
    // Paced below what the DUT forwards: trafgen gives up when frames queue (notes).
    // Profiled too: perf record on the DUT host, driven over SSH.
    let extra = "config_sets = [\"nft-stateless\"]\nprofile = true\n\n[hooks]\nafter = [[\"nft\", \"list\", \"ruleset\"]]\n\n[[profiles]]\nname = \"inet4\"\naf = \"inet4\"\nrate = 20000\n";
    let results = run(
        &nodes,
        &campaign(&nodes, &facts.receiver.interface, &senders, extra),
    );
    let trial = results.join("runs/v1.nft-stateless.inet4.1");
    let config = fs::read_to_string(trial.join("generator.trafgen")).unwrap();
    // The default profile's 20 sources are packets, its 100 destinations a counter.
    assert_eq!(config.lines().count(), 20, "{config}");
    assert!(config.contains("csumip(14, 33)") && config.contains("dinc(1, 100, 1)"));
    let counted = fs::read_to_string(trial.join("generator.jsonl")).unwrap();
    let tx = last_number(&counted, "tx_pkts");
    assert!((60_000..=100_000).contains(&tx), "{tx}\n{counted}");
    check_rows(&samples(&trial), 20_000.0);
    // The firewall's accept rule counted the frames: their checksums and addresses were right.
    let after = fs::read_to_string(trial.join("dut-after.txt")).unwrap();
    let packets: u64 = after
        .split("counter packets ")
        .skip(1)
        .map(|s| s.split(' ').next().unwrap().parse::<u64>().unwrap())
        .max()
        .unwrap_or(0);
    assert!(packets >= tx * 9 / 10, "{packets} < {tx}: {after}");
    let meta = fs::read_to_string(trial.join("meta.json")).unwrap();
    assert!(meta.contains("trafgen on blssh-sender"), "{meta}");
    // trafgen ran pinned, bounded by the trial's time, and its configuration file is gone.
    let log = fs::read_to_string(trial.join("generator.log")).unwrap();
    let cmd = log.lines().next().unwrap();
    assert!(
        cmd.starts_with("CMD on blssh-sender: timeout -s INT 4 trafgen -o "),
        "{cmd}"
    );
    let path = cmd.split(" -i ").nth(1).unwrap().split(' ').next().unwrap();
    assert!(
        path.contains("benchlab-trafgen.") && !Path::new(path).exists(),
        "{cmd}"
    );
    // The DUT was profiled inside the measured window, perf's control FIFOs are gone.
    let profiled = results.join("runs/v1.nft-stateless.inet4.profile");
    let meta: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(profiled.join("meta.json")).unwrap()).unwrap();
    let start = meta["start_unix_s"].as_f64().unwrap();
    let at = |v: &serde_json::Value| v.as_f64().unwrap() - start;
    let (from, to) = (
        at(&meta["capture"]["start_unix_s"]),
        at(&meta["capture"]["end_unix_s"]),
    );
    let traffic_end = at(&meta["end_unix_s"]);
    assert!(
        from >= 0.9 && to <= traffic_end && to - from > 1.5,
        "capture {from}..{to}, traffic 0..{traffic_end}"
    );
    assert!(meta["capture"]["command"]
        .as_str()
        .unwrap()
        .starts_with("perf record -g -k realtime -D -1 --control fifo:/tmp/benchlab-perf."));
    assert!(profiled.join("perf.folded").is_file());
    assert!(!fs::read_dir("/tmp").unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .starts_with("benchlab-perf.")));
    drop(nodes);
    drop(lab);
}
