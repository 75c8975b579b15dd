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

use crate::traffic::registry;
use crate::traffic::remote::generator::RemoteGenerator;
use crate::transport::ssh::DEFAULT_CONNECT_TIMEOUT;
use crate::transport::SshTransport;

/// How benchlab reaches a node of a real lab.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum TransportKind {
    /// OpenSSH, to the node's `host` alias.
    Ssh,
}

/// What sends the traffic (and counts it on the receiver): a generator of
/// [`registry::GENERATORS`], by its name (`generator = "trafgen"`); it derefs to the generator.
#[derive(Clone, Copy)]
pub(crate) struct Generator(&'static dyn RemoteGenerator);

impl Generator {
    /// The generator `LAB.toml` calls `name`, or a message naming the key and the valid names.
    pub(crate) fn named(name: &str) -> Result<Self, String> {
        registry::find(name)
            .map(Self)
            .ok_or_else(|| format!("generator = {name:?}: use one of {}", registry::names()))
    }
}

impl Default for Generator {
    fn default() -> Self {
        Self(registry::default_generator())
    }
}

impl std::ops::Deref for Generator {
    type Target = dyn RemoteGenerator;

    fn deref(&self) -> &Self::Target {
        self.0
    }
}

impl PartialEq for Generator {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Generator {}

impl std::fmt::Debug for Generator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Generator({:?})", self.name())
    }
}

impl Serialize for Generator {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Generator {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Self::named(&name).map_err(serde::de::Error::custom)
    }
}

/// One node of a real lab.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NodeConfig {
    /// How to reach it (`"ssh"`).
    pub(crate) transport: TransportKind,
    /// Its OpenSSH host alias.
    pub(crate) host: String,
    /// The lab interface traffic leaves (sender) or arrives on (receiver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) interface: Option<String>,
    /// The DUT's lab interfaces, whose counters are kept with each trial.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) interfaces: Vec<String>,
    /// Sender only: the MAC of the DUT's sender-side interface.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) dut_mac: Option<String>,
    /// Sender only: what generates (and counts) the traffic. Default is `benchlab`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) generator: Option<Generator>,
    /// Where `benchlab` is on that node (for `benchlab gen`/`rx`/`probe`). Default: `benchlab`
    /// in PATH.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) benchlab: Option<String>,
    /// Sender only: the CPU the generator sends from (`benchlab gen --cpu`, trafgen's
    /// `cpu(N)`). Default: benchlab gen's own choice, trafgen's first CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cpu: Option<usize>,
    /// DUT only, FreeBSD: the hwpmc event `pmcstat -S` samples for flamegraphs. Default: the
    /// netbenches harness's `BU_CPU_CLK_UNHALTED` (AMD); Intel: `cpu_clk_unhalted.thread_p`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) pmc_event: Option<String>,
}

impl NodeConfig {
    /// What this sender generates with (benchlab's own generator unless it says otherwise).
    pub(crate) fn tool(&self) -> Generator {
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

/// Whether `mac` is six hex octets separated by `:` (pkt-gen's `-D` form).
fn is_mac(mac: &str) -> bool {
    let octets: Vec<&str> = mac.split(':').collect();
    octets.len() == 6
        && (octets.iter()).all(|o| o.len() == 2 && o.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The first of `senders`' generators that has its own receiver.
fn receiving_generator(senders: &[NodeConfig]) -> Option<Generator> {
    senders
        .iter()
        .map(NodeConfig::tool)
        .find(|g| g.receiver().is_some())
}

/// Fails when the senders need two receivers (a generator with its own receiver beside
/// another generator), or name a `cpu` for a generator that does not pin one.
fn check_generators(senders: &[NodeConfig], table: &str) -> Result<(), String> {
    if let Some(own) =
        receiving_generator(senders).filter(|own| senders.iter().any(|s| s.tool() != *own))
    {
        let name = own.name();
        return Err(format!(
            "{table} generator: {name} senders need a {name} receiver; use \"{name}\" on \
             every sender or on none"
        ));
    }
    if let Some(s) = senders
        .iter()
        .find(|s| s.cpu.is_some() && !s.tool().pins_cpu())
    {
        let pinning: Vec<&str> = (registry::GENERATORS.iter())
            .filter(|g| g.pins_cpu())
            .map(|g| g.name())
            .collect();
        return Err(format!(
            "{table} host = {:?}: cpu is for the {} generators; pin {} in its host's own setup",
            s.host,
            pinning.join(" and "),
            s.tool().name()
        ));
    }
    Ok(())
}

/// The SSH client options shared by every node.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SshOptions {
    /// An ssh_config file for `ssh -F`. Default: the user's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) config: Option<PathBuf>,
    /// Seconds to wait for a connection. Default is 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) connect_timeout: Option<u64>,
}

impl SshOptions {
    /// True when no option is set (the table is left out of saved campaigns).
    pub(crate) fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// A transport to `node` with these options.
    pub(crate) fn transport(&self, node: &NodeConfig) -> SshTransport {
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
    pub(crate) dut: NodeConfig,
    /// The traffic generator (or `senders`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) sender: Option<NodeConfig>,
    /// Several generators sending at once, each its share of the profile (or `sender`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) senders: Vec<NodeConfig>,
    /// The node that counts what the DUT forwarded.
    pub(crate) receiver: NodeConfig,
}

/// A real lab: its hosts and how to reach them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SshLab {
    /// The device under test.
    pub(crate) dut: NodeConfig,
    /// The traffic generators (one, or more in a 4-node lab), in file order.
    pub(crate) senders: Vec<NodeConfig>,
    /// The node that counts what the DUT forwarded.
    pub(crate) receiver: NodeConfig,
    /// SSH client options.
    pub(crate) ssh: SshOptions,
}

impl SshLab {
    /// The real lab of a `LAB.toml`'s `[hosts]` and `[ssh]` tables: `Ok(None)` for the virtual
    /// lab (no `[hosts]`), an error naming the missing or wrong key otherwise.
    pub(crate) fn from_hosts(
        hosts: Option<&Hosts>,
        ssh: &SshOptions,
    ) -> Result<Option<Self>, String> {
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
            match &s.dut_mac {
                None => {
                    return Err(format!(
                        "{table} host = {:?} needs dut_mac = \"MAC\" (the DUT's sender-side MAC)",
                        s.host
                    ))
                }
                Some(mac) if !is_mac(mac) => {
                    return Err(format!(
                        "{table} host = {:?}: dut_mac = \"{}\" is not a MAC: give six hex \
                         octets, as \"00:0d:b9:41:ca:3d\"",
                        s.host,
                        crate::error::shown(mac)
                    ))
                }
                Some(_) => {}
            }
        }
        check_generators(&senders, table)?;
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

    /// The generator whose receiver counts: the senders' own when they have one (they then
    /// all run it), else none and `benchlab rx` counts.
    pub(crate) fn receiving_generator(&self) -> Option<Generator> {
        receiving_generator(&self.senders)
    }

    /// The sender whose host sends and reads the latency probes (the first: they leave by its
    /// interface toward its `dut_mac` and arrive on the receiver's), or why this lab cannot
    /// time them.
    pub(crate) fn prober(&self) -> Result<&NodeConfig, String> {
        // Both stamps of a probe must come from one clock: two hosts' clocks differ by more
        // than the latency itself.
        if let Some(other) = self.senders.iter().find(|s| s.host != self.receiver.host) {
            return Err(format!(
                "the sender {} and the receiver {} are two hosts, two clocks: one-way latency \
                 needs both ends on one host (the 2-node layout); set latency = false, or \
                 receive on the sender's host",
                other.host, self.receiver.host
            ));
        }
        // netmap takes the interfaces from the kernel's stack, where the probes' sockets are.
        if let Some(netmap) = self.receiving_generator() {
            return Err(format!(
                "{} senders hold the lab's interfaces in netmap mode, which the probes' packet \
                 sockets cannot share; set latency = false, or use another generator",
                netmap.name()
            ));
        }
        Ok(&self.senders[0])
    }
}

#[cfg(test)]
mod tests;
