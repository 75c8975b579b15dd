//! A real OpenSSH server for tests: `sshd -D` from Debian's openssh-server, listening on the
//! loopback of a network namespace of the test's own (`blssh-<pid>-<n>`), with host and client
//! keys generated for the test and an ssh_config (for `ssh -F`) that names it `blssh-ok`.
//! Nothing touches the host's port 22 or `/root/.ssh`. The ssh client reaches it only from
//! inside that namespace: run the client side in [`Sshd::client`] (a thread moved into it).
//! [`Drop`] stops sshd and deletes the namespace, also when the test fails.

#![allow(dead_code)] // each test crate uses its own part of this fixture

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The port sshd listens on inside its namespace.
pub const PORT: u16 = 2222;

/// A running sshd in its own namespace, and the client files that reach it.
pub struct Sshd {
    /// The namespace sshd listens in.
    pub netns: String,
    /// The generated ssh_config (aliases `blssh-ok`, `blssh-badkey`, `blssh-down`, `blssh-void`).
    pub ssh_config: PathBuf,
    dir: tempfile::TempDir,
    sshd: Option<Child>,
}

fn sh(argv: &[&str]) {
    let out = Command::new(argv[0]).args(&argv[1..]).output().unwrap();
    assert!(
        out.status.success(),
        "{argv:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn keygen(path: &Path) {
    sh(&[
        "ssh-keygen",
        "-q",
        "-t",
        "ed25519",
        "-N",
        "",
        "-C",
        "benchlab-test",
        "-f",
        path.to_str().unwrap(),
    ]);
}

impl Sshd {
    /// Creates the namespace (loopback up, plus 198.18.255.1/24 on a veth whose other addresses
    /// never answer) and starts sshd in it; returns once sshd listens.
    pub fn start() -> Self {
        static N: AtomicU32 = AtomicU32::new(0);
        let netns = format!(
            "blssh-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        );
        sh(&["ip", "netns", "add", &netns]);
        let mut me = Self {
            netns: netns.clone(),
            ssh_config: PathBuf::new(),
            dir: tempfile::tempdir().unwrap(),
            sshd: None,
        };
        let ns = |args: &[&str]| {
            let mut argv = vec!["ip", "-n", &netns];
            argv.extend_from_slice(args);
            sh(&argv);
        };
        ns(&["link", "set", "lo", "up"]);
        // A veth pair looped inside the namespace, and a neighbour whose MAC nobody has: SYNs
        // to 198.18.255.2 leave and are never answered, like a host that is down.
        ns(&[
            "link", "add", "blsshv0", "type", "veth", "peer", "name", "blsshv1",
        ]);
        ns(&["addr", "add", "198.18.255.1/24", "dev", "blsshv0"]);
        ns(&["link", "set", "blsshv0", "up"]);
        ns(&["link", "set", "blsshv1", "up"]);
        ns(&[
            "neigh",
            "add",
            "198.18.255.2",
            "lladdr",
            "02:00:00:00:00:02",
            "dev",
            "blsshv0",
            "nud",
            "permanent",
        ]);
        let dir = me.dir.path().to_path_buf();
        let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
        keygen(&dir.join("host_key"));
        keygen(&dir.join("id_ok"));
        keygen(&dir.join("id_bad"));
        fs::copy(dir.join("id_ok.pub"), dir.join("authorized_keys")).unwrap();
        let host_pub = fs::read_to_string(dir.join("host_key.pub")).unwrap();
        fs::write(
            dir.join("known_hosts"),
            format!("[127.0.0.1]:{PORT} {host_pub}"),
        )
        .unwrap();
        fs::write(
            dir.join("sshd_config"),
            format!(
                "Port {PORT}\nListenAddress 127.0.0.1\nHostKey {}\nPidFile none\n\
                 AuthorizedKeysFile {}\nStrictModes no\nUsePAM no\n\
                 PermitRootLogin prohibit-password\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nLogLevel INFO\n",
                path("host_key"),
                path("authorized_keys")
            ),
        )
        .unwrap();
        let host = |alias: &str, hostname: &str, port: u16, key: &str| {
            format!(
                "Host {alias}\n  HostName {hostname}\n  Port {port}\n  User root\n  \
                 IdentityFile {}\n  IdentitiesOnly yes\n  UserKnownHostsFile {}\n  \
                 GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n  \
                 LogLevel ERROR\n",
                path(key),
                path("known_hosts")
            )
        };
        me.ssh_config = dir.join("ssh_config");
        fs::write(
            &me.ssh_config,
            [
                host("blssh-ok", "127.0.0.1", PORT, "id_ok"),
                host("blssh-badkey", "127.0.0.1", PORT, "id_bad"),
                host("blssh-down", "127.0.0.1", PORT + 1, "id_ok"),
                host("blssh-void", "198.18.255.2", PORT, "id_ok"),
            ]
            .concat(),
        )
        .unwrap();
        // sshd's privilege separation directory is compiled in; Debian's package creates it at
        // boot, which did not happen in this container.
        fs::create_dir_all("/run/sshd").unwrap();
        let log = fs::File::create(dir.join("sshd.log")).unwrap();
        me.sshd = Some(
            Command::new("ip")
                .args(["netns", "exec", &netns, "/usr/sbin/sshd", "-D", "-e", "-f"])
                .arg(dir.join("sshd_config"))
                .arg("-h")
                .arg(dir.join("host_key"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .unwrap(),
        );
        let t0 = Instant::now();
        loop {
            let log = fs::read_to_string(dir.join("sshd.log")).unwrap_or_default();
            if log.contains("Server listening") {
                break;
            }
            if let Some(status) = me.sshd.as_mut().unwrap().try_wait().unwrap() {
                panic!("sshd exited ({status}): {log}");
            }
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "sshd did not start: {log}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        me
    }

    /// Runs `f` on a thread inside sshd's namespace, where the ssh client reaches it.
    pub fn client<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        benchlab::traffic::os::in_netns(Some(&self.netns), || Ok(f())).unwrap()
    }

    /// The test's scratch directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        if let Some(mut child) = self.sshd.take() {
            // `ip netns exec` execs sshd, so this pid is sshd's own; its per-connection
            // children die with their connections, which the namespace deletion ends.
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = Command::new("ip")
            .args(["netns", "pids", &self.netns])
            .output()
            .map(|out| {
                for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                    let _ = Command::new("kill").args(["-KILL", pid]).status();
                }
            });
        let _ = Command::new("ip")
            .args(["netns", "del", &self.netns])
            .status();
    }
}
