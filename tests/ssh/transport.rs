//! `SshTransport` against a real sshd (see `tests/sshd/mod.rs`): arguments arrive unchanged
//! through the remote shell, files round-trip, long-running commands stop on the remote side,
//! and an unreachable host or a refused key fails with one line naming the host. Needs root.

use std::time::{Duration, Instant};

use crate::sshd::Sshd;
use benchlab::transport::{Command, SshTransport, Transport, TransportError};

fn transport(sshd: &Sshd, alias: &str) -> SshTransport {
    SshTransport::new(alias)
        .config_file(&sshd.ssh_config)
        .connect_timeout(Duration::from_secs(2))
}

#[test]
fn arguments_arrive_unchanged_and_files_round_trip() {
    let sshd = Sshd::start();
    let dut = transport(&sshd, "blssh-ok");
    let tricky = "it's \"quoted\" $HOME `id` $(id); echo injected & * ?[a] \\back\\slash\\\n\
                  second line\t~ !x #c";
    let file = sshd
        .dir()
        .join("remote file; with $pace")
        .display()
        .to_string();
    let contents: Vec<u8> = (0..=255u8).cycle().take(100_000).collect();
    let (echo, args, got) = sshd.client(|| {
        let echo = dut.run(&["printf", "%s", tricky]).unwrap();
        let args = dut
            .run(&[
                "sh",
                "-c",
                r#"printf '%s|' "$@""#,
                "sh",
                "",
                "a b",
                "*",
                "'",
            ])
            .unwrap();
        dut.put_file(&file, &contents).unwrap();
        (echo, args, dut.get_file(&file).unwrap())
    });
    assert_eq!(echo, tricky);
    assert_eq!(args, "|a b|*|'|");
    assert_eq!(got, contents);
    // The status of the remote command is its own, not ssh's.
    let out = sshd.client(|| dut.exec(&Command::new(["sh", "-c", "exit 7"])).unwrap());
    assert_eq!(out.status, Some(7));
    let err = sshd.client(|| dut.run(&["false"]).unwrap_err().to_string());
    assert_eq!(err, "blssh-ok: `false` failed (exit 1): no message");
    dut.close();
}

#[test]
fn a_spawned_command_is_stopped_on_the_remote_side() {
    let sshd = Sshd::start();
    let dut = transport(&sshd, "blssh-ok");
    sshd.client(|| {
        let mut p = dut
            .spawn(&[
                "sh".into(),
                "-c".into(),
                "trap 'echo bye; exit 0' TERM; echo hi; while :; do sleep 0.05; done".into(),
            ])
            .unwrap();
        let t0 = Instant::now();
        while p.stdout_so_far().is_empty() && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(p.stdout_so_far(), b"hi\n");
        assert!(p.try_wait().unwrap().is_none());
        let pid = p.id().expect("the remote pid").to_string();
        let out = p.stop(Duration::from_secs(5)).unwrap();
        assert_eq!(out.stdout_text(), "hi\nbye\n");
        assert_eq!(out.status, Some(0));
        let alive = dut
            .exec(&Command::new(["kill", "-0", pid.as_str()]))
            .unwrap();
        assert!(!alive.success(), "remote process {pid} survived stop");
    });
    // The shared connection goes with its socket.
    dut.close();
    let sockets = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("benchlab-ssh-"))
        .filter(|e| std::os::unix::net::UnixStream::connect(e.path()).is_err())
        .count();
    assert_eq!(
        sockets, 0,
        "a stale benchlab-ssh- socket is left in the temp directory"
    );
}

fn ssh_error(sshd: &Sshd, alias: &str) -> (TransportError, Duration) {
    let t = transport(sshd, alias);
    sshd.client(|| {
        let t0 = Instant::now();
        let err = t.run(&["true"]).unwrap_err();
        (err, t0.elapsed())
    })
}

#[test]
fn an_unreachable_host_or_a_refused_key_is_one_line_naming_the_host() {
    let sshd = Sshd::start();
    let (err, _) = ssh_error(&sshd, "blssh-down");
    assert!(matches!(err, TransportError::Ssh { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.starts_with("blssh-down: SSH: unreachable: ") && msg.contains("Connection refused"),
        "{msg}"
    );
    assert!(!msg.contains('\n'), "{msg}");

    let (err, took) = ssh_error(&sshd, "blssh-void");
    let msg = err.to_string();
    assert!(
        msg.starts_with("blssh-void: SSH: unreachable: ") && msg.contains("timed out"),
        "{msg}"
    );
    assert!(
        took < Duration::from_secs(15),
        "connect timeout ignored: {took:?}"
    );

    let (err, _) = ssh_error(&sshd, "blssh-badkey");
    let msg = err.to_string();
    assert!(
        msg.starts_with("blssh-badkey: SSH: the host refused the key: ")
            && msg.contains("Permission denied (publickey)"),
        "{msg}"
    );
    assert!(!msg.contains('\n'), "{msg}");
}

#[test]
fn a_campaign_whose_dut_is_unreachable_fails_naming_it_and_leaves_no_results() {
    let sshd = Sshd::start();
    let dir = tempfile::tempdir().unwrap();
    let campaign = dir.path().join("unreachable.toml");
    std::fs::write(
        &campaign,
        format!(
            "[lab.ssh]\nconfig = \"{}\"\nconnect_timeout = 2\n\n\
             [lab.hosts.dut]\ntransport = \"ssh\"\nhost = \"blssh-down\"\n\n\
             [lab.hosts.sender]\ntransport = \"ssh\"\nhost = \"blssh-down\"\n\
             interface = \"eth0\"\ndut_mac = \"02:00:00:00:00:01\"\n\n\
             [lab.hosts.receiver]\ntransport = \"ssh\"\nhost = \"blssh-down\"\n\
             interface = \"eth1\"\n",
            sshd.ssh_config.display()
        ),
    )
    .unwrap();
    let benchlab = |results: &std::path::Path| {
        std::process::Command::new("ip")
            .args(["netns", "exec", &sshd.netns, env!("CARGO_BIN_EXE_benchlab")])
            .args(["run", campaign.to_str().unwrap(), "-q", "-o"])
            .arg(results)
            .output()
            .unwrap()
    };
    // A new results directory is removed: nothing was measured, nothing to resume.
    let results = dir.path().join("results");
    let out = benchlab(&results);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("before any trial finished")
            && err.contains("blssh-down: SSH: unreachable")
            && !err.contains("--resume"),
        "{err}"
    );
    assert!(!results.exists());
    // A directory that was there, empty, is left there, empty.
    std::fs::create_dir(&results).unwrap();
    let out = benchlab(&results);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read_dir(&results).unwrap().count(), 0);
}
