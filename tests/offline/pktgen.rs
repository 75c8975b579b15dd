//! pkt-gen command lines built from the seeds' traffic profiles, checked word for word against
//! the first lines of the seeds' raw `.sender`/`.receiver` logs (`tests/data/pktgen/*.head`,
//! copied from `tests/data/netbenches/`), and the one pkt-gen parser reading every log of the
//! fixtures.

use std::fs;
use std::path::{Path, PathBuf};

use benchlab::config::Profile;
use benchlab::ingest::netbenches::pktgen::command_line;
use benchlab::traffic::pktgen::{per_second, sender_summary, PktgenRx, PktgenTx};
use benchlab::transport::ssh::remote_command_line;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// The command of a log's first line as argv: the harness's shell layers left literal quotes
/// around IPv6 ranges, which its remote shell removed before pkt-gen saw them.
fn logged_argv(file: &str) -> Vec<String> {
    let text = fs::read_to_string(data("pktgen").join(file)).unwrap();
    let command = command_line(text.lines().next().unwrap())
        .unwrap()
        .to_string();
    command
        .split_whitespace()
        .map(|w| w.trim_matches('"').to_string())
        .collect()
}

fn profile(toml: &str) -> Profile {
    toml::from_str(toml).unwrap()
}

#[test]
fn sender_command_lines_match_the_seeds_for_every_profile() {
    // Seed 002 (APU2, igb): the dualstack-2k profiles.
    let inet4 = profile(
        r#"name = "inet4"
af = "inet4"
frame_size = 64
src = "198.18.10.1:2000-198.18.10.20"
dst = "198.19.10.1:2000-198.19.10.100""#,
    );
    let inet6 = profile(
        r#"name = "inet6"
af = "inet6"
frame_size = 66
src = "[2001:2:0:10::1]-[2001:2:0:10::14]"
dst = "[2001:2:0:8010::1]-[2001:2:0:8010::64]""#,
    );
    for (profile, file) in [
        (&inet4, "002-inet4.sender.head"),
        (&inet6, "002-inet6.sender.head"),
    ] {
        let mut tx = PktgenTx::from_load(
            &profile.load(std::time::Duration::ZERO),
            "igb2",
            "00:0d:b9:41:ca:3d",
            80_000_000,
        );
        tx.wait_s = 4;
        tx.extra = vec!["-U".into()];
        assert_eq!(tx.argv(), logged_argv(file), "{file}");
        // Through SSH each word is quoted once: the IPv6 ranges need nothing more.
        assert!(!remote_command_line(&tx.argv()).contains('"'));
    }
    // Seed 003 (ix, 2016): no -N, no address family flag.
    let p003 = profile(
        r#"name = "inet4"
af = "inet4"
frame_size = 64
src = "198.18.10.1:2000-198.18.10.20"
dst = "198.19.10.1:2000-198.19.10.10""#,
    );
    let mut tx = PktgenTx::from_load(
        &p003.load(std::time::Duration::ZERO),
        "ix0",
        "00:07:43:2e:e4:70",
        1_000_000_000,
    );
    tx.wait_s = 4;
    tx.no_normalize = false;
    tx.af = None;
    tx.extra = vec!["-U".into()];
    assert_eq!(tx.argv(), logged_argv("003-inet4.sender.head"));
}

#[test]
fn receiver_command_lines_match_the_seeds() {
    let rx = PktgenRx {
        iface: "igb3".into(),
        wait_s: 4,
        no_normalize: true,
    };
    assert_eq!(rx.argv(), logged_argv("002.receiver.head"));
    let rx = PktgenRx {
        iface: "ix1".into(),
        wait_s: 4,
        no_normalize: false,
    };
    assert_eq!(rx.argv(), logged_argv("003.receiver.head"));
}

fn logs(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            logs(&path, out);
        } else if path
            .extension()
            .is_some_and(|e| e == "sender" || e == "receiver")
        {
            out.push(path);
        }
    }
}

#[test]
fn the_parser_reads_every_sender_and_receiver_log_of_the_fixtures() {
    let mut files = Vec::new();
    logs(&data("netbenches"), &mut files);
    assert_eq!(files.len(), 180);
    for path in files {
        let text = fs::read_to_string(&path).unwrap();
        let lines = text.lines().filter(|l| l.contains("main_thread")).count();
        let seconds = per_second(&text);
        assert_eq!(seconds.len(), lines, "{}", path.display());
        assert!(seconds.iter().any(|s| s.pps > 0.0), "{}", path.display());
        assert!(
            seconds
                .iter()
                .all(|s| s.usec > 900_000 && s.usec < 1_500_000),
            "{}",
            path.display()
        );
        if path.extension().unwrap() == "sender" {
            let (sent, speed) = sender_summary(&text);
            // A sender killed before its summary has neither; one that finished has both.
            assert_eq!(
                sent.is_some(),
                text.contains("\nSent "),
                "{}",
                path.display()
            );
            assert_eq!(
                speed.is_some(),
                text.contains("\nSpeed: "),
                "{}",
                path.display()
            );
            if let (Some(sent), Some(speed)) = (sent, speed) {
                assert!(sent > 1_000_000 && speed > 100_000.0, "{}", path.display());
            }
        }
    }
}
