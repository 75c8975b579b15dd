//! Unit tests of `linux`.

use super::*;
use crate::transport::{MockTransport, Output};

#[test]
fn nft_counters_add_up_the_passing_rules() {
    let json = r#"{"nftables": [{"metainfo": {}}, {"table": {"family": "inet", "name": "benchlab"}},
          {"rule": {"chain": "forward", "expr": [{"counter": {"packets": 7, "bytes": 1}}, {"accept": null}], "comment": "benchlab-pass-established"}},
          {"rule": {"chain": "forward", "expr": [{"counter": {"packets": 5, "bytes": 1}}, {"accept": null}], "comment": "benchlab-pass-new"}},
          {"rule": {"chain": "forward", "expr": [{"counter": {"packets": 100, "bytes": 1}}, {"drop": null}]}}]}"#;
    assert_eq!(parse_nft_pass_counters(json).unwrap(), (2, 12));
}

#[test]
fn iptables_counters_read_save_output() {
    let saved = "*filter\n:FORWARD ACCEPT [0:0]\n:benchlab-forward - [0:0]\n\
            [40:3360] -A FORWARD -j benchlab-forward\n\
            [3:252] -A benchlab-forward -m conntrack --ctstate RELATED,ESTABLISHED -m comment --comment benchlab-pass-established -j ACCEPT\n\
            [37:3108] -A benchlab-forward -m conntrack --ctstate NEW -m comment --comment benchlab-pass-new -j ACCEPT\n\
            [0:0] -A benchlab-forward -j DROP\nCOMMIT\n";
    assert_eq!(parse_iptables_pass_counters(saved), (2, 40));
}

#[test]
fn nft_apply_replaces_a_leftover_table_atomically() {
    let dut = MockTransport::new("dut");
    Nft { stateful: true }.apply(&dut).unwrap();
    let calls = dut.calls();
    assert_eq!(calls[0].argv, ["nft", "-f", "-"]);
    let script = String::from_utf8(calls[0].stdin.clone().unwrap()).unwrap();
    assert!(script
        .starts_with("table inet benchlab\ndelete table inet benchlab\ntable inet benchlab {\n"));
    assert!(script.contains("ct state new counter accept comment \"benchlab-pass-new\""));
}

#[test]
fn nft_revert_deletes_only_its_own_table_in_one_command() {
    let dut = MockTransport::new("dut");
    Nft { stateful: false }.revert(&dut).unwrap();
    assert_eq!(dut.commands(), ["nft -f -"]);
    assert_eq!(
        dut.calls()[0].stdin.as_deref(),
        Some(&b"table inet benchlab\ndelete table inet benchlab\n"[..])
    );
}

#[test]
fn iptables_revert_removes_the_jump_and_the_chain_in_both_families() {
    let dut = MockTransport::new("dut");
    let saved =
        "*filter\n:benchlab-forward - [0:0]\n[0:0] -A FORWARD -j benchlab-forward\nCOMMIT\n";
    dut.reply(&["iptables-legacy-save"], Output::ok(saved));
    dut.reply(&["ip6tables-legacy-save"], Output::ok("*filter\nCOMMIT\n"));
    Iptables {
        backend: Backend::Legacy,
    }
    .revert(&dut)
    .unwrap();
    assert_eq!(
        dut.commands(),
        [
            "iptables-legacy-save -c -t filter",
            "iptables-legacy-restore -w --noflush",
            "ip6tables-legacy-save -c -t filter",
        ]
    );
    // One transaction: the jump, then the chain.
    assert_eq!(
        dut.calls()[1].stdin.as_deref(),
        Some(&b"*filter\n-D FORWARD -j benchlab-forward\n-F benchlab-forward\n-X benchlab-forward\nCOMMIT\n"[..])
    );
}

#[test]
fn iptables_nft_revert_deletes_a_filter_table_that_is_all_ours() {
    let dut = MockTransport::new("dut");
    let saved = "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n\
                 :benchlab-forward - [0:0]\n[5:300] -A FORWARD -j benchlab-forward\n\
                 [5:300] -A benchlab-forward -j DROP\nCOMMIT\n";
    dut.reply(&["iptables-nft-save"], Output::ok(saved));
    dut.reply(
        &["ip6tables-nft-save"],
        Output::ok("*filter\n:FORWARD ACCEPT [0:0]\nCOMMIT\n"),
    );
    Iptables {
        backend: Backend::Nft,
    }
    .revert(&dut)
    .unwrap();
    assert_eq!(
        dut.commands(),
        [
            "iptables-nft-save -c -t filter",
            "nft delete table ip filter",
            "ip6tables-nft-save -c -t filter",
        ]
    );
}

#[test]
fn iptables_nft_revert_keeps_what_others_put_in_the_filter_table() {
    let dut = MockTransport::new("dut");
    let saved = "*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:benchlab-forward - [0:0]\n\
                 [0:0] -A INPUT -i lo -j ACCEPT\n[5:300] -A FORWARD -j benchlab-forward\nCOMMIT\n";
    dut.reply(&["iptables-nft-save"], Output::ok(saved));
    dut.reply(&["ip6tables-nft-save"], Output::ok("*filter\nCOMMIT\n"));
    dut.reply(
        &["nft", "-j"],
        Output::ok(r#"{"nftables": [{"rule": {}}]}"#),
    );
    Iptables {
        backend: Backend::Nft,
    }
    .revert(&dut)
    .unwrap();
    let commands = dut.commands();
    assert_eq!(commands[1], "iptables-nft-restore -w --noflush");
    assert!(
        !commands.iter().any(|c| c.starts_with("nft delete")),
        "{commands:?}"
    );
}

#[test]
fn a_missing_legacy_backend_is_a_clear_input_error() {
    let dut = MockTransport::new("benchlab-0-dut");
    dut.reply(
        &["iptables-legacy"],
        Output {
            status: Some(3),
            stdout: vec![],
            stderr: "can't initialize iptables table `filter'\n".into(),
        },
    );
    let err = Iptables {
        backend: Backend::Legacy,
    }
    .apply(&dut)
    .unwrap_err();
    assert_eq!(crate::error::exit_code(&err), 2);
    assert!(err.to_string().contains("use iptables-stateful"), "{err}");
}
