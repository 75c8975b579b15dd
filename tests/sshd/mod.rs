//! Real OpenSSH servers for tests: `sshd -D` from Debian's openssh-server, listening on an
//! address inside a network namespace of the test's own, with host and client keys generated
//! for the test and an ssh_config (for `ssh -F`) naming each server by an alias. Nothing
//! touches the host's port 22 or `/root/.ssh`. [`Drop`] stops every sshd and deletes the
//! namespaces the fixture created, also when the test fails.
//!
//! [`Sshd`] is one server on the loopback of its own namespace (`blssh-<pid>-<n>`); the ssh
//! client reaches it from a thread moved into that namespace ([`Sshd::client`]). [`Keys`] and
//! [`Daemon`] serve labs whose nodes each run their own sshd.

#![allow(dead_code)] // each test crate uses its own part of this fixture

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The port every test sshd listens on (inside its own namespace).
pub const PORT: u16 = 2222;

/// Runs a command and panics with its stderr when it fails.
pub fn sh(argv: &[&str]) {
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

/// A test's keys and client configuration: host key, an accepted client key (`id_ok`) and a
/// refused one (`id_bad`).
pub struct Keys {
    dir: tempfile::TempDir,
    /// The ssh_config that [`Keys::write_config`] writes.
    pub ssh_config: PathBuf,
}

/// One alias of the generated ssh_config.
pub struct Alias<'a> {
    /// The alias.
    pub name: &'a str,
    /// Where it points.
    pub addr: &'a str,
    /// Its port.
    pub port: u16,
    /// `id_ok` or `id_bad`.
    pub key: &'a str,
}

impl Keys {
    /// Generates the keys in a fresh scratch directory.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        for key in ["host_key", "id_ok", "id_bad"] {
            keygen(&dir.path().join(key));
        }
        fs::copy(
            dir.path().join("id_ok.pub"),
            dir.path().join("authorized_keys"),
        )
        .unwrap();
        let ssh_config = dir.path().join("ssh_config");
        Self { dir, ssh_config }
    }

    /// The scratch directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    fn path(&self, name: &str) -> String {
        self.dir().join(name).to_str().unwrap().to_string()
    }

    /// Writes the ssh_config and a known_hosts that trusts the test's host key at every alias.
    pub fn write_config(&self, aliases: &[Alias<'_>]) {
        let host_pub = fs::read_to_string(self.dir().join("host_key.pub")).unwrap();
        let known: String = aliases
            .iter()
            .map(|a| format!("[{}]:{} {host_pub}", a.addr, a.port))
            .collect();
        fs::write(self.dir().join("known_hosts"), known).unwrap();
        let config: String = aliases
            .iter()
            .map(|a| {
                format!(
                    "Host {}\n  HostName {}\n  Port {}\n  User root\n  IdentityFile {}\n  \
                     IdentitiesOnly yes\n  UserKnownHostsFile {}\n  \
                     GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n  \
                     LogLevel ERROR\n",
                    a.name,
                    a.addr,
                    a.port,
                    self.path(a.key),
                    self.path("known_hosts")
                )
            })
            .collect();
        fs::write(&self.ssh_config, config).unwrap();
    }
}

/// One sshd running inside a namespace.
pub struct Daemon {
    child: Option<Child>,
}

impl Daemon {
    /// Starts sshd in `netns` on `listen`:[`PORT`]; returns once it listens.
    pub fn start(keys: &Keys, netns: &str, listen: &str) -> Self {
        Self::start_with(keys, netns, listen, "")
    }

    /// [`Daemon::start`] with `extra` lines of sshd_config (`SetEnv PATH=…` puts stand-in
    /// commands first on the node's PATH).
    pub fn start_with(keys: &Keys, netns: &str, listen: &str, extra: &str) -> Self {
        let tag = listen.replace(['.', ':'], "_");
        let config = keys.dir().join(format!("sshd_config.{tag}"));
        fs::write(
            &config,
            format!(
                "Port {PORT}\nListenAddress {listen}\nHostKey {}\nPidFile none\n\
                 AuthorizedKeysFile {}\nStrictModes no\nUsePAM no\n\
                 PermitRootLogin prohibit-password\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nLogLevel INFO\n{extra}",
                keys.path("host_key"),
                keys.path("authorized_keys")
            ),
        )
        .unwrap();
        // sshd's privilege separation directory is compiled in; Debian's package creates it at
        // boot, which did not happen in this container.
        fs::create_dir_all("/run/sshd").unwrap();
        let log_path = keys.dir().join(format!("sshd.{tag}.log"));
        let log = fs::File::create(&log_path).unwrap();
        let mut me = Self {
            child: Some(
                Command::new("ip")
                    .args(["netns", "exec", netns, "/usr/sbin/sshd", "-D", "-e", "-f"])
                    .arg(&config)
                    .arg("-h")
                    .arg(keys.dir().join("host_key"))
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(log)
                    .spawn()
                    .unwrap(),
            ),
        };
        let t0 = Instant::now();
        loop {
            let log = fs::read_to_string(&log_path).unwrap_or_default();
            if log.contains("Server listening") {
                return me;
            }
            if let Some(status) = me.child.as_mut().unwrap().try_wait().unwrap() {
                panic!("sshd exited ({status}): {log}");
            }
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "sshd did not start: {log}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // `ip netns exec` execs sshd, so this pid is sshd's own.
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A fresh namespace name of this test process.
pub fn netns_name() -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "blssh-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

/// Deletes a namespace the test created, killing what still runs in it.
pub struct NetnsGuard(pub String);

impl Drop for NetnsGuard {
    fn drop(&mut self) {
        if let Ok(out) = Command::new("ip").args(["netns", "pids", &self.0]).output() {
            for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                let _ = Command::new("kill").args(["-KILL", pid]).status();
            }
        }
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

/// One sshd on the loopback of its own namespace, with aliases `blssh-ok`, `blssh-badkey`
/// (a key it refuses), `blssh-down` (a closed port) and `blssh-void` (an address that never
/// answers).
pub struct Sshd {
    /// The namespace sshd listens in.
    pub netns: String,
    /// The generated ssh_config.
    pub ssh_config: PathBuf,
    // Fields drop in order: sshd first, then its namespace, then the keys.
    daemon: Option<Daemon>,
    _netns: NetnsGuard,
    keys: Keys,
}

impl Sshd {
    /// Creates the namespace and starts sshd in it.
    pub fn start() -> Self {
        let netns = netns_name();
        sh(&["ip", "netns", "add", &netns]);
        let guard = NetnsGuard(netns.clone());
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
        let keys = Keys::new();
        let alias = |name, addr, port, key| Alias {
            name,
            addr,
            port,
            key,
        };
        keys.write_config(&[
            alias("blssh-ok", "127.0.0.1", PORT, "id_ok"),
            alias("blssh-badkey", "127.0.0.1", PORT, "id_bad"),
            alias("blssh-down", "127.0.0.1", PORT + 1, "id_ok"),
            alias("blssh-void", "198.18.255.2", PORT, "id_ok"),
        ]);
        let daemon = Daemon::start(&keys, &netns, "127.0.0.1");
        Self {
            netns,
            ssh_config: keys.ssh_config.clone(),
            daemon: Some(daemon),
            _netns: guard,
            keys,
        }
    }

    /// Runs `f` on a thread inside sshd's namespace, where the ssh client reaches it.
    pub fn client<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        benchlab::traffic::os::in_netns(Some(&self.netns), || Ok(f())).unwrap()
    }

    /// The test's scratch directory.
    pub fn dir(&self) -> &Path {
        self.keys.dir()
    }
}

/// Lab nodes served over SSH: each namespace runs its own sshd, reached from a management
/// namespace of the test's own (veth `blsshm<i>` there, `blsshn<i>` in node i, addresses
/// 198.18.254.(4i+1) and .(4i+2)/30), where `benchlab` itself runs. [`Drop`] stops the sshds,
/// then deletes the management namespace and its links, then the keys.
pub struct SshNodes {
    /// The management namespace.
    pub mgmt: String,
    // Fields drop in order: sshds first, then the management namespace, then the keys.
    _daemons: Vec<Daemon>,
    _mgmt: NetnsGuard,
    /// The keys and the ssh_config naming each node by its alias.
    pub keys: Keys,
}

impl SshNodes {
    /// Serves every `(alias, namespace)` node.
    pub fn start(nodes: &[(&str, &str)]) -> Self {
        Self::start_with(nodes, &[])
    }

    /// [`SshNodes::start`], the nodes whose alias `extra` names getting its sshd_config lines
    /// (see [`Daemon::start_with`]).
    pub fn start_with(nodes: &[(&str, &str)], extra: &[(&str, &str)]) -> Self {
        let mgmt = netns_name();
        sh(&["ip", "netns", "add", &mgmt]);
        let guard = NetnsGuard(mgmt.clone());
        sh(&["ip", "-n", &mgmt, "link", "set", "lo", "up"]);
        let keys = Keys::new();
        let mut addrs = Vec::new();
        for (i, (_, ns)) in nodes.iter().enumerate() {
            let (here, there) = (format!("blsshm{i}"), format!("blsshn{i}"));
            sh(&[
                "ip", "-n", &mgmt, "link", "add", &here, "type", "veth", "peer", "name", &there,
                "netns", ns,
            ]);
            let (a, b) = (
                format!("198.18.254.{}", 4 * i + 1),
                format!("198.18.254.{}", 4 * i + 2),
            );
            let a_net = format!("{a}/30");
            let b_net = format!("{b}/30");
            sh(&["ip", "-n", &mgmt, "addr", "add", &a_net, "dev", &here]);
            sh(&["ip", "-n", ns, "addr", "add", &b_net, "dev", &there]);
            sh(&["ip", "-n", &mgmt, "link", "set", &here, "up"]);
            sh(&["ip", "-n", ns, "link", "set", &there, "up"]);
            addrs.push(b);
        }
        let aliases: Vec<Alias<'_>> = nodes
            .iter()
            .zip(&addrs)
            .map(|((name, _), addr)| Alias {
                name,
                addr,
                port: PORT,
                key: "id_ok",
            })
            .collect();
        keys.write_config(&aliases);
        let daemons = nodes
            .iter()
            .zip(&addrs)
            .map(|((alias, ns), addr)| {
                let lines = extra.iter().find(|(a, _)| a == alias).map_or("", |e| e.1);
                Daemon::start_with(&keys, ns, addr, lines)
            })
            .collect();
        Self {
            mgmt,
            _daemons: daemons,
            _mgmt: guard,
            keys,
        }
    }

    /// The `[lab.ssh]` and `[lab.hosts.*]` tables of a campaign on these nodes: the DUT at
    /// alias `blssh-dut`, then `senders` (see [`sender_toml`]), then the receiver at
    /// `blssh-receiver` counting on `receiver_if` with the benchlab under test.
    pub fn lab_toml(&self, senders: &str, receiver_if: &str) -> String {
        self.lab_toml_at(senders, "blssh-receiver", receiver_if)
    }

    /// [`lab_toml`](Self::lab_toml) with the receiver at alias `receiver`.
    pub fn lab_toml_at(&self, senders: &str, receiver: &str, receiver_if: &str) -> String {
        format!(
            "[lab.ssh]\nconfig = \"{}\"\nconnect_timeout = 2\n\n\
             [lab.hosts.dut]\ntransport = \"ssh\"\nhost = \"blssh-dut\"\n\n{senders}\n\
             [lab.hosts.receiver]\ntransport = \"ssh\"\nhost = \"{receiver}\"\n\
             interface = \"{receiver_if}\"\nbenchlab = \"{}\"\n",
            self.keys.ssh_config.display(),
            env!("CARGO_BIN_EXE_benchlab")
        )
    }

    /// [`lab_toml`](Self::lab_toml) of the virtual lab of `facts` on [`three_nodes`]: its
    /// first sender at `blssh-sender`, with the benchlab under test.
    pub fn three_node_toml(&self, facts: &benchlab::lab::LabFacts) -> String {
        self.lab_toml(
            &sender_toml(
                "[lab.hosts.sender]",
                "blssh-sender",
                &facts.senders[0],
                "benchlab",
            ),
            &facts.receiver.interface,
        )
    }

    /// `benchlab run CAMPAIGN -o RESULTS -q` in the management namespace.
    pub fn run_campaign(&self, campaign: &Path, results: &Path) -> std::process::Output {
        self.benchlab(&[
            "run",
            campaign.to_str().unwrap(),
            "-o",
            results.to_str().unwrap(),
            "-q",
        ])
    }

    /// Runs the benchlab under test with `args` in the management namespace.
    pub fn benchlab(&self, args: &[&str]) -> std::process::Output {
        Command::new("ip")
            .args(["netns", "exec", &self.mgmt, env!("CARGO_BIN_EXE_benchlab")])
            .args(args)
            .output()
            .unwrap()
    }
}

/// The virtual lab `id` (DUT, one sender, receiver), each namespace serving SSH at aliases
/// `blssh-dut`, `blssh-sender` and `blssh-receiver`; `extra` as in [`SshNodes::start_with`].
/// Drop the nodes before the lab.
pub fn three_nodes(id: &str, extra: &[(&str, &str)]) -> (benchlab::lab::Lab, SshNodes) {
    let lab = benchlab::lab::Lab::up(&benchlab::lab::LabConfig {
        id: id.into(),
        ..benchlab::lab::LabConfig::default()
    })
    .unwrap();
    let facts = lab.facts();
    let nodes = SshNodes::start_with(
        &[
            ("blssh-dut", &facts.dut.namespace),
            ("blssh-sender", &facts.senders[0].namespace),
            ("blssh-receiver", &facts.receiver.namespace),
        ],
        extra,
    );
    (lab, nodes)
}

/// The virtual lab `id` in the 2-node layout (the sender's and the receiver's interfaces in one
/// namespace), its DUT serving SSH at alias `blssh-dut` and its generator host at `blssh-gen`.
/// Drop the nodes before the lab.
pub fn two_nodes(id: &str) -> (benchlab::lab::Lab, SshNodes) {
    let lab = benchlab::lab::Lab::up(&benchlab::lab::LabConfig {
        id: id.into(),
        nodes: 2,
        ..benchlab::lab::LabConfig::default()
    })
    .unwrap();
    let facts = lab.facts();
    assert_eq!(facts.senders[0].namespace, facts.receiver.namespace);
    let nodes = SshNodes::start(&[
        ("blssh-dut", &facts.dut.namespace),
        ("blssh-gen", &facts.senders[0].namespace),
    ]);
    (lab, nodes)
}

/// A sender's table (`table`: `[lab.hosts.sender]` or `[[lab.hosts.senders]]`) at SSH alias
/// `alias`, sending out of the virtual lab's sender `s` with `generator`, the benchlab under
/// test.
pub fn sender_toml(
    table: &str,
    alias: &str,
    s: &benchlab::lab::facts::SenderFacts,
    generator: &str,
) -> String {
    format!(
        "{table}\ntransport = \"ssh\"\nhost = \"{alias}\"\ninterface = \"{}\"\n\
         dut_mac = \"{}\"\ngenerator = \"{generator}\"\nbenchlab = \"{}\"\n",
        s.interface,
        s.dut_mac,
        env!("CARGO_BIN_EXE_benchlab")
    )
}
