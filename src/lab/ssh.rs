//! Real labs reached over SSH: the `[hosts.dut]`, `[hosts.sender]` and `[hosts.receiver]`
//! tables of `LAB.toml` (`[lab.hosts.…]` in a campaign), each an OpenSSH host alias.
//!
//! ```toml
//! [ssh]
//! config = "lab_ssh_config"   # ssh -F (default: the user's ~/.ssh/config)
//! connect_timeout = 10        # seconds (default 10)
//!
//! [hosts.dut]
//! transport = "ssh"
//! host = "apu2"               # an ssh_config alias; its User, keys, ControlMaster apply
//! interfaces = ["igb1", "igb2"]
//!
//! [hosts.sender]
//! transport = "ssh"
//! host = "gen1"
//! interface = "igb1"
//! dut_mac = "00:0d:b9:41:ca:3d"   # the DUT's sender-side MAC (pkt-gen's -D)
//! generator = "benchlab"      # or "trafgen", or "pkt-gen" (netmap, both ends; never run here)
//! cpu = 2                     # benchlab gen and trafgen: the CPU the sending thread runs on
//!
//! [hosts.receiver]
//! transport = "ssh"
//! host = "gen1"               # the same host as the sender: a 2-node lab
//! interface = "igb2"
//! ```
//!
//! Topologies: 2 nodes (sender and receiver on one host), 3 nodes, and 4 nodes: when one
//! sender cannot fill the link, `[[hosts.senders]]` (an array of tables, each a sender with
//! its own host, interface, dut_mac, generator and cpu) replaces `[hosts.sender]`; a lab names
//! exactly one of the two. An array rather than `sender2`, `sender3`… tables: the senders are
//! alike, their count is free, and each trial splits the profile among them in file order (see
//! [`crate::campaign::ssh`]). A pkt-gen sender needs a pkt-gen receiver, so pkt-gen senders do
//! not mix with the others.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::transport::ssh::DEFAULT_CONNECT_TIMEOUT;
use crate::transport::SshTransport;

/// How benchlab reaches a node of a real lab.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TransportKind {
    /// OpenSSH, to the node's `host` alias.
    Ssh,
}

/// What sends the traffic (and counts it on the receiver).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Generator {
    /// `benchlab gen --json` and `benchlab rx --json`.
    #[default]
    Benchlab,
    /// netmap `pkt-gen -f tx` and `pkt-gen -f rx`.
    PktGen,
    /// netsniff-ng's `trafgen` (Linux), counted by `benchlab rx --tx` on the sender and by
    /// `benchlab rx` on the receiver.
    Trafgen,
}

impl Generator {
    /// The sending tool's name in messages and lab facts.
    pub fn sender_name(self) -> &'static str {
        match self {
            Generator::Benchlab => "benchlab gen",
            Generator::PktGen => "pkt-gen -f tx",
            Generator::Trafgen => "trafgen",
        }
    }
}

/// One node of a real lab.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeConfig {
    /// How to reach it (`"ssh"`).
    pub transport: TransportKind,
    /// Its OpenSSH host alias.
    pub host: String,
    /// The lab interface traffic leaves (sender) or arrives on (receiver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<String>,
    /// The DUT's lab interfaces, whose counters are kept with each trial.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interfaces: Vec<String>,
    /// Sender only: the MAC of the DUT's sender-side interface.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dut_mac: Option<String>,
    /// Sender only: what generates (and counts) the traffic. Default is `benchlab`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator: Option<Generator>,
    /// Where `benchlab` is on that node (for `benchlab gen`/`rx`). Default: `benchlab` in PATH.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub benchlab: Option<String>,
    /// Sender only: the CPU the generator sends from (`benchlab gen --cpu`, trafgen's
    /// `cpu(N)`). Default: benchlab gen's own choice, trafgen's first CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<usize>,
    /// DUT only, FreeBSD: the hwpmc event `pmcstat -S` samples for flamegraphs. Default: the
    /// netbenches harness's `BU_CPU_CLK_UNHALTED` (AMD); Intel: `cpu_clk_unhalted.thread_p`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pmc_event: Option<String>,
}

impl NodeConfig {
    /// What this sender generates with (benchlab's own generator unless it says otherwise).
    pub fn tool(&self) -> Generator {
        self.generator.unwrap_or_default()
    }
}

/// Fails unless the DUT's `pmc_event`, if any, is one event name.
fn check_pmc_event(dut: &NodeConfig) -> Result<(), String> {
    match &dut.pmc_event {
        Some(event)
            if event.is_empty() || event.len() > 128 || event.contains(char::is_whitespace) =>
        {
            Err(format!(
                "[hosts.dut] pmc_event = {event:?}: name one hwpmc event, as `pmcstat -L` lists \
                 them (e.g. \"cpu_clk_unhalted.thread_p\")"
            ))
        }
        _ => Ok(()),
    }
}

/// The SSH client options shared by every node.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SshOptions {
    /// An ssh_config file for `ssh -F`. Default: the user's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<PathBuf>,
    /// Seconds to wait for a connection. Default is 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_timeout: Option<u64>,
}

impl SshOptions {
    /// True when no option is set (the table is left out of saved campaigns).
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// A transport to `node` with these options.
    pub fn transport(&self, node: &NodeConfig) -> SshTransport {
        let timeout = self
            .connect_timeout
            .map_or(DEFAULT_CONNECT_TIMEOUT, Duration::from_secs);
        let t = SshTransport::new(&node.host).connect_timeout(timeout);
        match &self.config {
            Some(path) => t.config_file(path),
            None => t,
        }
    }
}

/// The hosts of a real lab.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hosts {
    /// The device under test.
    pub dut: NodeConfig,
    /// The traffic generator (or `senders`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender: Option<NodeConfig>,
    /// Several generators sending at once, each its share of the profile (or `sender`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub senders: Vec<NodeConfig>,
    /// The node that counts what the DUT forwarded.
    pub receiver: NodeConfig,
}

/// A real lab: its hosts and how to reach them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshLab {
    /// The device under test.
    pub dut: NodeConfig,
    /// The traffic generators (one, or more in a 4-node lab), in file order.
    pub senders: Vec<NodeConfig>,
    /// The node that counts what the DUT forwarded.
    pub receiver: NodeConfig,
    /// SSH client options.
    pub ssh: SshOptions,
}

impl SshLab {
    /// The real lab of a `LAB.toml`'s `[hosts]` and `[ssh]` tables: `Ok(None)` for the virtual
    /// lab (no `[hosts]`), an error naming the missing or wrong key otherwise.
    pub fn from_hosts(hosts: Option<&Hosts>, ssh: &SshOptions) -> Result<Option<Self>, String> {
        let Some(Hosts {
            dut,
            sender,
            senders,
            receiver,
        }) = hosts
        else {
            return Ok(None);
        };
        let (senders, table) = match (sender, senders.is_empty()) {
            (Some(one), true) => (vec![one.clone()], "[hosts.sender]"),
            (None, false) => (senders.clone(), "[[hosts.senders]]"),
            (Some(_), false) => {
                return Err(
                    "[hosts] has both [hosts.sender] and [[hosts.senders]]: keep one".into(),
                )
            }
            (None, true) => {
                return Err(
                    "[hosts] needs [hosts.sender] (or [[hosts.senders]] for several)".into(),
                )
            }
        };
        for s in &senders {
            if s.interface.is_none() {
                return Err(format!(
                    "{table} host = {:?} needs interface = \"IF\" (the lab interface)",
                    s.host
                ));
            }
            if s.dut_mac.is_none() {
                return Err(format!(
                    "{table} host = {:?} needs dut_mac = \"MAC\" (the DUT's sender-side MAC)",
                    s.host
                ));
            }
        }
        let pktgen = senders
            .iter()
            .filter(|s| s.tool() == Generator::PktGen)
            .count();
        if pktgen != 0 && pktgen != senders.len() {
            return Err(format!(
                "{table} generator: pkt-gen senders need a pkt-gen receiver; use \"pkt-gen\" \
                 on every sender or on none"
            ));
        }
        if let Some(s) = senders.iter().find(|s| s.cpu.is_some() && pktgen != 0) {
            return Err(format!(
                "{table} host = {:?}: cpu is for the benchlab and trafgen generators; pin \
                 pkt-gen in its host's own setup",
                s.host
            ));
        }
        if receiver.interface.is_none() {
            return Err("[hosts.receiver] needs interface = \"IF\" (the lab interface)".into());
        }
        let nodes = std::iter::once(("[hosts.dut]", dut))
            .chain(senders.iter().map(|s| (table, s)))
            .chain(std::iter::once(("[hosts.receiver]", receiver)));
        for (table, node) in nodes {
            if node.host.is_empty() || node.host.starts_with('-') {
                return Err(format!(
                    "{table} host = {:?}: use an ssh_config host alias",
                    node.host
                ));
            }
        }
        check_pmc_event(dut)?;
        if ssh.connect_timeout == Some(0) {
            return Err("[ssh] connect_timeout = 0: use 1 second or more".into());
        }
        Ok(Some(Self {
            dut: dut.clone(),
            senders,
            receiver: receiver.clone(),
            ssh: ssh.clone(),
        }))
    }

    /// What the receiver runs: pkt-gen for pkt-gen senders, `benchlab rx` otherwise.
    pub fn receiver_tool(&self) -> Generator {
        match self.senders[0].tool() {
            Generator::PktGen => Generator::PktGen,
            Generator::Benchlab | Generator::Trafgen => Generator::Benchlab,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::LabConfig;

    #[test]
    fn node_tables_make_a_real_lab_and_missing_keys_are_named() {
        let lab = LabConfig::parse(
            r#"
[ssh]
config = "cfg"
connect_timeout = 3
[hosts.dut]
transport = "ssh"
host = "apu2"
interfaces = ["igb1", "igb2"]
[hosts.sender]
transport = "ssh"
host = "gen1"
interface = "igb1"
dut_mac = "00:0d:b9:41:ca:3d"
[hosts.receiver]
transport = "ssh"
host = "gen1"
interface = "igb2"
"#,
            "LAB.toml",
        )
        .unwrap();
        let real = lab.ssh_lab().unwrap().unwrap();
        assert_eq!(real.dut.host, "apu2");
        let t = real.ssh.transport(&real.senders[0]);
        let line = t.ssh_argv(&["true".into()]).join(" ");
        assert!(
            line.starts_with("ssh -o BatchMode=yes -o ConnectTimeout=3 "),
            "{line}"
        );
        assert!(line.ends_with(" -F cfg -- gen1 'true'"), "{line}");
        assert_eq!(LabConfig::default().ssh_lab(), Ok(None));

        let err = LabConfig::parse(
            "[hosts.dut]\ntransport = \"ssh\"\nhost = \"a\"\n",
            "LAB.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("LAB.toml:1: missing field `receiver`"),
            "{err}"
        );
        let err = LabConfig::parse(
            "[hosts.dut]\ntransport = \"telnet\"\nhost = \"a\"\n",
            "LAB.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("LAB.toml:2: unknown variant `telnet`"),
            "{err}"
        );
    }

    #[test]
    fn a_dut_pmc_event_is_one_event_name() {
        let lab = |event: &str| {
            LabConfig::parse(
                &format!(
                    "[hosts.dut]\ntransport = \"ssh\"\nhost = \"bsd\"\npmc_event = \"{event}\"\n\
                     [hosts.sender]\ntransport = \"ssh\"\nhost = \"g\"\ninterface = \"e0\"\n\
                     dut_mac = \"02:00:00:00:00:01\"\n\
                     [hosts.receiver]\ntransport = \"ssh\"\nhost = \"g\"\ninterface = \"e1\"\n"
                ),
                "LAB.toml",
            )
        };
        let real = lab("cpu_clk_unhalted.thread_p").unwrap().ssh_lab();
        let event = real.unwrap().unwrap().dut.pmc_event;
        assert_eq!(event.as_deref(), Some("cpu_clk_unhalted.thread_p"));
        let err = lab("two events").unwrap_err().to_string();
        assert!(
            err.starts_with("LAB.toml: [hosts.dut] pmc_event = \"two events\""),
            "{err}"
        );
    }

    #[test]
    fn several_senders_replace_the_one_sender_and_exactly_one_form_is_named() {
        let hosts = |senders: &str| {
            format!(
                "[hosts.dut]\ntransport = \"ssh\"\nhost = \"dut\"\n{senders}\n\
                 [hosts.receiver]\ntransport = \"ssh\"\nhost = \"rx\"\ninterface = \"r0\"\n"
            )
        };
        let one = |table: &str, host: &str, generator: &str| {
            format!(
                "[{table}]\ntransport = \"ssh\"\nhost = \"{host}\"\ninterface = \"s0\"\n\
                 dut_mac = \"02:00:00:00:00:01\"\ngenerator = \"{generator}\"\n"
            )
        };
        let two =
            one("[hosts.senders]", "gen1", "trafgen") + &one("[hosts.senders]", "gen2", "benchlab");
        let lab = LabConfig::parse(&hosts(&two), "LAB.toml").unwrap();
        let real = lab.ssh_lab().unwrap().unwrap();
        let names: Vec<_> = real
            .senders
            .iter()
            .map(|s| (s.host.as_str(), s.tool()))
            .collect();
        assert_eq!(
            names,
            [("gen1", Generator::Trafgen), ("gen2", Generator::Benchlab)]
        );
        assert_eq!(real.receiver_tool(), Generator::Benchlab);

        let err = |text: &str| LabConfig::parse(text, "LAB.toml").unwrap_err().to_string();
        let both = one("hosts.sender", "gen1", "benchlab") + &two;
        assert_eq!(
            err(&hosts(&both)),
            "LAB.toml: [hosts] has both [hosts.sender] and [[hosts.senders]]: keep one"
        );
        assert_eq!(
            err(&hosts("")),
            "LAB.toml: [hosts] needs [hosts.sender] (or [[hosts.senders]] for several)"
        );
        let mixed =
            one("[hosts.senders]", "gen1", "pkt-gen") + &one("[hosts.senders]", "gen2", "trafgen");
        assert!(err(&hosts(&mixed)).contains("[[hosts.senders]] generator: pkt-gen senders"));
        let no_mac =
            "[[hosts.senders]]\ntransport = \"ssh\"\nhost = \"gen3\"\ninterface = \"s0\"\n";
        assert_eq!(
            err(&hosts(&(two + no_mac))),
            "LAB.toml: [[hosts.senders]] host = \"gen3\" needs dut_mac = \"MAC\" (the DUT's \
             sender-side MAC)"
        );
    }

    #[test]
    fn the_example_campaign_describes_a_real_lab() {
        let text = include_str!("../../examples/ssh-lab.toml");
        let c = crate::config::Campaign::from_toml(text, "ssh-lab.toml", crate::dut::KNOWN_PRESETS)
            .unwrap();
        let lab = c.lab.ssh_lab().unwrap().unwrap();
        assert_eq!(
            (lab.dut.host.as_str(), lab.senders[0].host.as_str()),
            ("dut1", "gen1")
        );
        assert_eq!(c.versions[1].reboot, ["systemctl", "reboot"]);
        assert_eq!(c.versions[1].online_timeout, Some(300.0));
    }
}
