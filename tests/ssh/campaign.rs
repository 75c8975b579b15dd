//! `benchlab run` on a lab reached only over SSH: the virtual lab's three namespaces each run
//! their own sshd on a management link from a namespace of the test's own, where `benchlab
//! run` itself runs (`ip netns exec`). The campaign changes versions with install, reboot (the
//! DUT's management link goes down and up again) and online hooks; a DUT that does not come
//! back fails with one line, keeps the finished trials, and `--resume` continues. Needs root.

use std::fs;
use std::path::Path;

use crate::sshd::{sh, three_nodes};

fn finished_trials(results: &Path) -> Vec<String> {
    let mut done: Vec<String> = fs::read_dir(results.join("runs"))
        .map(|dir| {
            dir.map(|e| e.unwrap().path())
                .filter(|p| p.join("meta.json").exists())
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    done.sort();
    done
}

#[test]
fn a_campaign_over_ssh_changes_versions_and_resumes_after_a_dut_that_did_not_come_back() {
    let (lab, nodes) = three_nodes("ts1", &[]);
    let facts = lab.facts().clone();
    let keys = &nodes.keys;
    let dir = keys.dir();
    let marker = dir.join("v3-breaks-once");
    fs::write(&marker, "").unwrap();
    let receiver_addr = facts.receiver.inet4.to_string();
    let receiver_addr = receiver_addr.split('/').next().unwrap();
    // A "reboot": the DUT's management link goes down before the command returns (so `online`
    // cannot pass before it), and comes back 2 s later. The broken one never comes back: its
    // command hangs on the dead link until benchlab's reboot time limit.
    let reboot =
        "ip link set blsshn0 down; (sleep 2; ip link set blsshn0 up) </dev/null >/dev/null 2>&1 &";
    let broken = format!(
        "if [ -e {m} ]; then rm {m}; ip link set blsshn0 down; else {reboot} fi",
        m = marker.display()
    );
    // Online: the DUT answers over SSH and routes to the receiver (no ping in this container).
    let online = format!(r#"["ip", "route", "get", "{receiver_addr}"]"#);
    let campaign = dir.join("ssh-campaign.toml");
    fs::write(
        &campaign,
        format!(
            r#"title = "campaign over SSH"
iterations = 1
order = "sequential"
config_sets = ["forwarding"]

{lab}
[trial]
duration = 4
warmup = 0
cooldown = 0

[[profiles]]
name = "inet4"
af = "inet4"

[[versions]]
name = "v1"

[[versions]]
name = "v2"
install = [["sh", "-c", "echo v2 > {dir}/installed-v2"]]
reboot = ["sh", "-c", "{reboot}"]
online = {online}
online_timeout = 30

[[versions]]
name = "v3"
reboot = ["sh", "-c", "{broken}"]
online = {online}
online_timeout = 5
"#,
            lab = nodes.three_node_toml(&facts),
            dir = dir.display(),
        ),
    )
    .unwrap();
    let results = dir.join("results");
    let out = nodes.run_campaign(&campaign, &results);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("blssh-dut: not online 5 s after version `v3`") && err.contains("--resume"),
        "{err}"
    );
    assert_eq!(
        finished_trials(&results),
        ["v1.forwarding.inet4.1", "v2.forwarding.inet4.1"]
    );
    assert_eq!(
        fs::read_to_string(dir.join("installed-v2")).unwrap(),
        "v2\n"
    );
    let before =
        fs::read_to_string(results.join("runs/v2.forwarding.inet4.1/dut-before.txt")).unwrap();
    assert!(before.starts_with("$ ip -s -s link\n"), "{before}");
    let samples =
        fs::read_to_string(results.join("runs/v2.forwarding.inet4.1/samples.csv")).unwrap();
    // t_s,tx_pkts,rx_pkts,tx_pps,rx_pps: the DUT forwarded what the sender sent over SSH.
    let rows: Vec<Vec<f64>> = samples
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    assert!(rows.len() >= 3, "{samples}");
    assert!(rows.iter().all(|r| r[1] > 0.0 && r[2] > 0.0), "{samples}");
    let gen =
        fs::read_to_string(results.join("runs/v2.forwarding.inet4.1/generator.jsonl")).unwrap();
    assert!(gen.contains("\"type\":\"summary\""), "{gen}");

    // The operator brings the DUT back; the campaign continues where it stopped.
    sh(&[
        "ip",
        "-n",
        &facts.dut.namespace,
        "link",
        "set",
        "blsshn0",
        "up",
    ]);
    // ... and, as an operator would, sees it answer before resuming: a link just set up may
    // refuse the first connection ("No route to host") while the address is resolved again.
    let answers = || {
        std::process::Command::new("ip")
            .args(["netns", "exec", &nodes.mgmt, "ssh", "-F"])
            .arg(&keys.ssh_config)
            .args([
                "-o",
                "BatchMode=yes",
                "-o",
                "ConnectTimeout=1",
                "blssh-dut",
                "true",
            ])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    assert!(
        (0..30).any(|_| answers() || {
            std::thread::sleep(std::time::Duration::from_millis(500));
            false
        }),
        "the DUT did not answer over SSH once its link was back up"
    );
    let out = nodes.benchlab(&["run", "--resume", results.to_str().unwrap(), "-q"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(finished_trials(&results).len(), 3);
    let readme = fs::read_to_string(results.join("README.md")).unwrap();
    assert!(readme.contains("v3"), "{readme}");
    let lab_json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(results.join("lab.json")).unwrap()).unwrap();
    for v in ["v1", "v2", "v3"] {
        let uname = lab_json["versions"][v]["uname"]
            .as_str()
            .unwrap_or_default();
        assert!(uname.starts_with("Linux "), "{v}: {lab_json}");
        let config = lab_json["versions"][v]["kernel_config"].as_str().unwrap();
        assert!(fs::read_to_string(results.join(config))
            .unwrap()
            .contains("CONFIG_"));
    }
    drop(lab);
}

/// The alternating design over SSH: the DUT's rulesets switched by benchlab while the remote
/// sender sends without a stop, the remote receiver sampling every 0.05 s, blocks stored and
/// reported as on the virtual lab.
#[test]
fn an_alternating_run_over_ssh_switches_rulesets_under_continuous_traffic() {
    let (lab, nodes) = three_nodes("ts2", &[]);
    let facts = lab.facts().clone();
    let dir = nodes.keys.dir();
    let campaign = dir.join("ssh-alternating.toml");
    fs::write(
        &campaign,
        format!(
            r#"title = "alternating over SSH"
design = "alternating"
config_sets = ["forwarding", "nft-stateful"]

[alternating]
phase = 1.0
max_duration = 8
min_blocks = 2

[trial]
warmup = 1

[[profiles]]
name = "inet4"
af = "inet4"

{lab}"#,
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
    let phases = fs::read_to_string(results.join("alternating/default.inet4/phases.csv")).unwrap();
    // A switch over SSH takes several round trips (a second or more on a loaded machine), so
    // this short run may end after its first block.
    assert!(phases.lines().count() >= 5, "one block at least:\n{phases}");
    let series =
        fs::read_to_string(results.join("alternating/default.inet4/segment-1/series.csv")).unwrap();
    // t_s,rx_pkts every 0.05 s from the remote `benchlab rx --interval 0.05`.
    let times: Vec<f64> = (series.lines().skip(1))
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    let steps = times.windows(2).filter(|w| w[1] - w[0] < 0.2).count();
    assert!(steps * 10 >= times.len() * 9, "{series}");
    let readme = fs::read_to_string(results.join("README.md")).unwrap();
    assert!(
        readme.contains("- nft-stateful vs forwarding: "),
        "{readme}"
    );
    // The DUT is left as it was found: no benchlab table.
    let tables = std::process::Command::new("ip")
        .args([
            "netns",
            "exec",
            &facts.dut.namespace,
            "nft",
            "list",
            "tables",
        ])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&tables.stdout).contains("benchlab"));
    drop(lab);
}
