//! The virtual lab and the DUT config sets, for real: namespaces, veths, nftables, iptables.
//! Needs root (CI runs as root). Lab ids `t1`… are this file's own; the tests run one at a
//! time because stale-lab removal is machine-wide.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use benchlab::dut::{self, ConfigSet};
use benchlab::lab::{self, Lab, LabConfig, Owner, Placement, Role};
use benchlab::traffic::{self, Engine, GenConfig, IfRef, Limit};

mod common;
use common::{benchlab, lab_namespaces};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn config(toml: &str) -> LabConfig {
    LabConfig::parse(toml, "test").unwrap()
}

/// Nothing of lab `id` is left: namespaces, host interfaces, records.
fn assert_gone(id: &str) {
    assert_eq!(lab_namespaces(id), Vec::<String>::new());
    let links = Command::new("ip").args(["-o", "link"]).output().unwrap();
    let links = String::from_utf8_lossy(&links.stdout);
    assert!(
        !links.contains(&format!(": bl{id}")),
        "host interfaces of lab {id} left: {links}"
    );
    for ext in ["pid", "json"] {
        assert!(!std::path::Path::new(&format!("/run/benchlab/{id}.{ext}")).exists());
    }
}

/// The receiver's rx_packets counter.
fn received(lab: &Lab) -> u64 {
    let f = lab.facts();
    let rx = lab.node(Role::Receiver).unwrap();
    let path = format!(
        "/sys/class/net/{}/statistics/rx_packets",
        f.receiver.interface
    );
    String::from_utf8(rx.get_file(&path).unwrap())
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Sends `n` UDP datagrams over IPv4 and `n` over IPv6 from the first sender, through the DUT,
/// to the flow destination networks (the receiver drops them).
fn send_udp(lab: &Lab, n: u32) {
    let script = format!(
        "for i in $(seq {n}); do echo x > /dev/udp/198.19.10.1/9; echo x > /dev/udp/2001:2:0:8010::1/9; done"
    );
    lab.node(Role::Sender(1))
        .unwrap()
        .run(&["bash", "-c", &script])
        .unwrap();
}

#[test]
fn a_three_node_lab_forwards_through_the_dut_on_its_own_cpu_and_leaves_nothing() {
    let _serial = serial();
    let lab = Lab::up(&config("id = \"t1\"")).unwrap();
    let f = lab.facts().clone();
    assert_eq!(
        lab_namespaces("t1").len(),
        3,
        "sender, dut and receiver namespaces"
    );
    assert_eq!(f.senders[0].interface, "blt1s1");
    assert_eq!(f.senders[0].dut_mac.to_string(), "02:62:6c:02:01:00");
    assert_eq!(f.senders[0].inet4.source.to_string(), "198.18.10.0/24");
    assert_eq!(
        f.senders[0].inet6.destination.to_string(),
        "2001:2:0:8010::/64"
    );
    let dut = f
        .namespaces
        .iter()
        .find(|n| n.name == "benchlab-t1-dut")
        .unwrap();
    assert_eq!(
        dut.routes.len(),
        4,
        "two static routes per family: {:?}",
        dut.routes
    );
    assert!(
        dut.neighbours.len() >= 6,
        "static neighbours: {:?}",
        dut.neighbours
    );
    if f.placement.mode == Placement::Separate {
        assert_eq!(f.placement.napi_threads.len(), 1, "{:?}", f.placement);
        assert_eq!(f.placement.napi_threads[0].cpus, [f.placement.dut_cpu]);
    }
    let before = received(&lab);
    send_udp(&lab, 5);
    assert_eq!(
        received(&lab) - before,
        10,
        "every datagram crossed the DUT"
    );
    lab.down().unwrap();
    assert_gone("t1");
}

/// A sender interface counter of `lab`'s first sender.
fn sender_counter(lab: &Lab, name: &str) -> u64 {
    let f = &lab.facts().senders[0];
    let path = format!("/sys/class/net/{}/statistics/{name}", f.interface);
    String::from_utf8(lab.node(Role::Sender(1)).unwrap().get_file(&path).unwrap())
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn max_following_the_dut_saturates_it_without_burying_it() {
    let _serial = serial();
    let lab = Lab::up(&config("id = \"t15\"")).unwrap();
    let f = lab.facts().clone();
    if f.placement.mode != Placement::Separate {
        // One CPU: the DUT forwards on the generator's, and its queue never fills.
        return lab.down().unwrap();
    }
    let s = &f.senders[0];
    let spec = common::sender_frames(s);
    // Sent per packet received and frames refused by the DUT's input queue, with max as all
    // the engine can and as following the DUT, on the same lab one after the other.
    let mut runs = Vec::new();
    for follow in [false, true] {
        let mut cfg = GenConfig::new(
            IfRef {
                netns: Some(s.namespace.clone()),
                name: s.interface.clone(),
            },
            spec.clone(),
        );
        cfg.limit = Limit::Duration(Duration::from_secs(2));
        cfg.cpu = Some(s.cpu);
        cfg.engine = Engine::Xdp;
        cfg.follow = follow;
        let (rx0, refused0) = (received(&lab), sender_counter(&lab, "tx_dropped"));
        let mut g = traffic::builtin(cfg).unwrap();
        g.start().unwrap();
        while !g.is_finished() {
            g.next_sample(Duration::from_millis(50));
        }
        let summary = g.stop().unwrap();
        std::thread::sleep(Duration::from_millis(300));
        let through = received(&lab) - rx0;
        assert_eq!(
            summary.follow_margin,
            follow.then_some(traffic::follow::MARGIN)
        );
        runs.push((
            summary.tx_pkts as f64 / through as f64,
            sender_counter(&lab, "tx_dropped") - refused0,
        ));
    }
    lab.down().unwrap();
    let [(all, _), (followed, refusals)] = runs[..] else {
        unreachable!()
    };
    // Saturated: its full queue refused frames. Not buried: far fewer sent per packet through.
    assert!(
        refusals > 0,
        "following, the DUT's queue never filled: {runs:?}"
    );
    assert!(
        followed < 2.0 && followed < all,
        "sent per packet received: {followed:.2} following, {all:.2} all the engine can"
    );
}

#[test]
fn a_two_node_lab_with_shared_placement_forwards_and_leaves_nothing() {
    let _serial = serial();
    let lab = Lab::up(&config(
        "id = \"t2\"\nnodes = 2\nsenders = 2\nplacement = \"shared\"",
    ))
    .unwrap();
    assert_eq!(
        lab_namespaces("t2"),
        [
            "benchlab-t2-dut",
            "benchlab-t2-sender",
            "benchlab-t2-sender2"
        ]
    );
    let f = lab.facts();
    assert_eq!(f.receiver.namespace, "benchlab-t2-sender");
    assert_eq!(f.senders[1].inet4.source.to_string(), "198.18.11.0/24");
    assert!(f.placement.napi_threads.is_empty());
    assert!(f.placement.summary.starts_with("shared: "));
    let before = received(&lab);
    send_udp(&lab, 3);
    assert_eq!(received(&lab) - before, 6);
    // Dropping the guard tears the lab down too.
    drop(lab);
    assert_gone("t2");
}

#[test]
fn the_cli_brings_a_lab_up_shows_it_as_json_and_takes_it_down() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("LAB.toml");
    std::fs::write(&file, "id = \"t3\"\nnodes = 3\n").unwrap();
    let up = benchlab().args(["lab", "up"]).arg(&file).output().unwrap();
    assert_eq!(
        up.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    assert!(String::from_utf8_lossy(&up.stdout).starts_with("lab t3 is up"));

    let status = benchlab()
        .args(["lab", "status", "--json", "--id", "t3"])
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(json["owner"], "manual");
    assert_eq!(json["senders"][0]["namespace"], "benchlab-t3-sender");
    assert_eq!(json["senders"][0]["interface"], "blt3s1");
    assert_eq!(json["receiver"]["interface"], "blt3r");
    assert_eq!(json["dut"]["ingress"][0], "blt3d1");
    let ns = json["namespaces"].as_array().unwrap();
    assert_eq!(ns.len(), 3);
    assert_eq!(ns[0]["interfaces"][0]["mac"], "02:62:6c:01:01:00");
    assert!(json["placement"]["summary"].is_string());

    let down = benchlab()
        .args(["lab", "down"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(down.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&down.stdout).lines().next(),
        Some("lab t3 is down")
    );
    assert_gone("t3");
    let status = benchlab()
        .args(["lab", "status", "--id", "t3"])
        .output()
        .unwrap();
    // A lab id that is not up is the user's slip: exit 2, one line (naming the labs that are
    // up, which other tests may have built meanwhile).
    assert_eq!(status.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&status.stderr);
    assert!(stderr.starts_with("benchlab: lab t3 is not up"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn a_bad_lab_toml_exits_2_with_one_line_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    for (text, expected) in [
        (
            "id = \"t9\"\nsender = 2\n",
            ":2: unknown field `sender`, expected one of",
        ),
        ("id = \"t9\"\nnodes = [1, \n", ":3: invalid array"),
        (
            "id = \"t9\"\nnodes = 4\n",
            ": nodes = 4: use 3 (sender, dut, receiver) or 2",
        ),
        (
            "placement = \"apart\"\n",
            ":1: unknown variant `apart`, expected `separate` or `shared`",
        ),
    ] {
        let file = dir.path().join("LAB.toml");
        std::fs::write(&file, text).unwrap();
        let out = benchlab().args(["lab", "up"]).arg(&file).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{text:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(&format!("benchlab: {}{expected}", file.display())),
            "{text:?}: {stderr}"
        );
    }
    assert_eq!(lab_namespaces("t9"), Vec::<String>::new());
}

/// Starts `benchlab lab up --hold` for lab `id` and waits until the lab is up.
fn hold(id: &str) -> std::process::Child {
    let mut child = benchlab()
        .args(["lab", "up", "--hold", "--id", id])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert_eq!(first, format!("lab {id} is up until Ctrl-C\n"));
    // Keep reading: a closed pipe would make the holder fail and remove its lab.
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    child
}

#[test]
fn a_lab_whose_owner_was_killed_is_removed_by_the_next_start() {
    let _serial = serial();
    let mut child = hold("t4");
    assert_eq!(lab::owner("t4"), Owner::Process(child.id() as i32));
    // A generator left running in the lab must go with it.
    let sleeper = Command::new("ip")
        .args(["netns", "exec", "benchlab-t4-sender", "sleep", "60"])
        .spawn()
        .unwrap();
    child.kill().unwrap(); // SIGKILL: no handler runs
    child.wait().unwrap();
    assert_eq!(
        lab_namespaces("t4").len(),
        3,
        "a killed owner leaves its lab"
    );
    assert_eq!(lab::owner("t4"), Owner::Stale);

    let next = Lab::up(&config("id = \"t5\"")).unwrap();
    assert_gone("t4");
    let mut sleeper = sleeper;
    let t0 = Instant::now();
    while sleeper.try_wait().unwrap().is_none() {
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "the lab's processes were killed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    next.down().unwrap();
    assert_gone("t5");
}

#[test]
fn sigterm_or_ctrl_c_tears_the_lab_down() {
    let _serial = serial();
    for (id, signal, status) in [("t6", "TERM", 143), ("t7", "INT", 130)] {
        let mut child = hold(id);
        Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert_eq!(child.wait().unwrap().code(), Some(status));
        assert_gone(id);
    }
}

#[test]
fn a_lab_in_use_is_refused_and_left_alone() {
    let _serial = serial();
    let lab = Lab::up(&config("id = \"t8\"")).unwrap();
    let err = Lab::up(&config("id = \"t8\"")).unwrap_err();
    assert_eq!(benchlab::error::exit_code(&err), 2);
    assert!(
        err.to_string().starts_with("lab t8 is in use by process "),
        "{err}"
    );
    assert_eq!(lab_namespaces("t8").len(), 3);
    lab.down().unwrap();
    assert_gone("t8");
}

/// Applies, verifies, counts and reverts one set; every datagram sent must be counted by the
/// set's passing rules and reach the receiver.
fn exercise(lab: &Lab, set: &dyn ConfigSet) {
    let dut = lab.node(Role::Dut).unwrap();
    set.apply(dut)
        .unwrap_or_else(|e| panic!("{}: apply: {e:#}", set.name()));
    set.verify(dut)
        .unwrap_or_else(|e| panic!("{}: verify: {e:#}", set.name()));
    let before = received(lab);
    send_udp(lab, 4);
    assert_eq!(received(lab) - before, 8, "{}: all forwarded", set.name());
    let counted = set.counters(dut).unwrap();
    if set.name() != "forwarding" {
        assert_eq!(
            counted,
            Some(8),
            "{}: the passing rules saw them",
            set.name()
        );
    }
    set.revert(dut).unwrap();
    assert_eq!(
        dut.run(&["nft", "list", "ruleset"]).unwrap(),
        "",
        "{}: reverted",
        set.name()
    );
    assert!(set.verify(dut).is_err() || set.name() == "forwarding");
}

#[test]
fn every_linux_config_set_applies_counts_and_reverts_exactly() {
    let _serial = serial();
    let lab = Lab::up(&config("id = \"t10\"")).unwrap();
    // forwarding after the nft/iptables-nft sets: its verify fails on any leftover rule.
    // iptables-legacy last: its hooks stay registered in the namespace after revert.
    for name in [
        "nft-stateless",
        "nft-stateful",
        "iptables-stateful",
        "forwarding",
        "iptables-legacy-stateful",
    ] {
        exercise(&lab, dut::preset(name).unwrap().as_ref());
    }
    let saved = lab
        .node(Role::Dut)
        .unwrap()
        .run(&["iptables-legacy-save", "-t", "filter"])
        .unwrap();
    assert!(!saved.contains("benchlab"), "{saved}");

    // A user set: its own nft table, its scripts run with the lab's facts in the environment.
    let dir = tempfile::tempdir().unwrap();
    let set_dir = dir.path().join("my-nft");
    std::fs::create_dir(&set_dir).unwrap();
    std::fs::write(
        set_dir.join("apply"),
        "nft add table inet mine\n\
         nft add chain inet mine forward '{ type filter hook forward priority 0; policy drop; }'\n\
         nft add rule inet mine forward iifname \"$BENCHLAB_DUT_INGRESS\" counter accept\n",
    )
    .unwrap();
    std::fs::write(
        set_dir.join("counters"),
        "nft list table inet mine | sed -n 's/.*counter packets \\([0-9]*\\).*/\\1/p'\n",
    )
    .unwrap();
    std::fs::write(set_dir.join("revert"), "nft delete table inet mine\n").unwrap();
    let set = dut::config_set(set_dir.to_str().unwrap(), &lab.facts().env()).unwrap();
    assert_eq!(set.name(), "my-nft");
    exercise(&lab, set.as_ref());
    lab.down().unwrap();
    assert_gone("t10");
}

#[test]
fn without_root_the_lab_refuses_with_one_line_saying_what_to_do() {
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_benchlab"))
        .args(["lab", "up", "--id", "t12"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "benchlab: the virtual lab needs root to create network namespaces: run benchlab as root (sudo)\n"
    );
}

#[test]
fn a_lab_up_killed_while_building_is_removed_by_the_next_start() {
    let _serial = serial();
    let mut child = benchlab()
        .args(["lab", "up", "--id", "t13"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // Building takes a few hundred milliseconds: wait for the first namespace, then kill.
    let t0 = Instant::now();
    while lab_namespaces("t13").is_empty() && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(1));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // The `ip` command it was running is not killed with it: let it finish.
    std::thread::sleep(Duration::from_millis(300));
    if lab::owner("t13") == Owner::Manual {
        // It finished before the kill: nothing is stale, it is a lab built by hand.
        lab::down("t13", false).unwrap();
        return;
    }
    let next = Lab::up(&config("id = \"t14\"")).unwrap();
    assert_gone("t13");
    next.down().unwrap();
    assert_gone("t14");
}
