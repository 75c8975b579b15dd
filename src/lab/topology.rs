//! The lab's shape: the `LAB.toml` model, the roles, and the names of namespaces and interfaces.
//!
//! `LAB.toml` (every key optional; the defaults build the seeds' 3-node lab):
//!
//! ```toml
//! id = "0"                # 1-6 lowercase letters or digits: namespaces benchlab-<id>-<role>,
//!                         # interfaces bl<id>… (tests use their own ids so they never collide)
//! nodes = 3               # 3: sender → dut → receiver; 2: sender and receiver share a namespace
//! senders = 1             # 1-8 senders, each on its own link into the DUT
//! placement = "separate"  # "separate": the DUT forwards on its own CPU (threaded NAPI, pinned);
//!                         # "shared": in the sender's softirq, on the generator's CPU.
//!                         # Default: separate when the machine has 2 CPUs or more.
//! dut_cpu = 1             # the DUT's CPU in separate placement (default: the last CPU)
//! generator_cpu = 0       # the generators' CPU (default: 0)
//! ```

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::ssh::{Hosts, SshLab, SshOptions};
use crate::error::InputError;

/// The most senders a lab has (their interface names must stay unique and short).
pub(crate) const MAX_SENDERS: u8 = 8;

/// A virtual lab as `LAB.toml` (or a campaign's `[lab]` table) describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LabConfig {
    /// Lab id, 1-6 lowercase letters or digits. Default is `"0"`.
    pub id: String,
    /// 3 (sender → DUT → receiver) or 2 (sender and receiver in one namespace). Default is 3.
    pub nodes: u8,
    /// Number of senders, 1-8. Default is 1.
    pub senders: u8,
    /// Where the DUT forwards. Default: separate with 2 CPUs or more, else shared.
    pub placement: Option<Placement>,
    /// The DUT's CPU in separate placement. Default is the last CPU.
    pub dut_cpu: Option<usize>,
    /// The generators' CPU. Default is 0.
    pub generator_cpu: Option<usize>,
    /// A real lab's hosts, reached over SSH (see [`crate::lab::ssh`]); none on the virtual lab.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosts: Option<Hosts>,
    /// SSH client options of a real lab.
    #[serde(skip_serializing_if = "SshOptions::is_default")]
    pub ssh: SshOptions,
}

impl Default for LabConfig {
    fn default() -> Self {
        Self {
            id: "0".to_string(),
            nodes: 3,
            senders: 1,
            placement: None,
            dut_cpu: None,
            generator_cpu: None,
            hosts: None,
            ssh: SshOptions::default(),
        }
    }
}

impl LabConfig {
    /// Parses `LAB.toml` text; `origin` (the file name) starts every error message.
    pub fn parse(text: &str, origin: &str) -> Result<Self, InputError> {
        let cfg: Self = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| format!(":{}", text[..s.start].matches('\n').count() + 1))
                .unwrap_or_default();
            let msg = crate::error::toml_message(&e);
            InputError::new(format!("{origin}{line}: {msg}"))
        })?;
        cfg.validate()
            .map_err(|msg| InputError::new(format!("{origin}: {msg}")))?;
        Ok(cfg)
    }

    /// Reads and parses a `LAB.toml` file (a regular file of bounded size: a FIFO or
    /// `/dev/zero` in its place is refused, not read forever).
    pub(crate) fn load(path: &Path) -> Result<Self, InputError> {
        let text = crate::file::read_text(path)?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Checks the values that do not depend on the machine; the message names the key.
    pub(crate) fn validate(&self) -> Result<(), String> {
        let id_ok = (1..=6).contains(&self.id.len())
            && self
                .id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
        if !id_ok {
            return Err(format!(
                "id = {:?}: use 1 to 6 lowercase letters or digits",
                self.id
            ));
        }
        if !(2..=3).contains(&self.nodes) {
            return Err(format!(
                "nodes = {}: use 3 (sender, dut, receiver) or 2 (sender and receiver together)",
                self.nodes
            ));
        }
        if !(1..=MAX_SENDERS).contains(&self.senders) {
            return Err(format!(
                "senders = {}: use 1 to {MAX_SENDERS}",
                self.senders
            ));
        }
        if let (Some(dut), Some(generator)) = (self.dut_cpu, self.generator_cpu) {
            if dut == generator && self.placement != Some(Placement::Shared) {
                return Err(format!(
                    "dut_cpu = {dut} is also generator_cpu: the DUT forwards on its own CPU; \
                     pick another, or placement = \"shared\""
                ));
            }
        }
        self.ssh_lab().map(drop)
    }

    /// The real lab this describes (see [`SshLab::from_hosts`]): `Ok(None)` for the virtual lab.
    pub(crate) fn ssh_lab(&self) -> Result<Option<SshLab>, String> {
        SshLab::from_hosts(self.hosts.as_ref(), &self.ssh)
    }
}

/// Where the DUT's forwarding work runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Placement {
    /// On its own CPU: threaded NAPI on the DUT's ingress veths, kthreads pinned to `dut_cpu`.
    Separate,
    /// In the sender's softirq, on the generator's CPU: the figure mixes both costs.
    Shared,
}

impl fmt::Display for Placement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Separate => "separate",
            Self::Shared => "shared",
        })
    }
}

/// A node's job in the lab.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// The k-th sender (1-based): `sender`, `sender2`, …
    Sender(u8),
    /// The device under test.
    Dut,
    /// The node that counts what the DUT forwarded.
    Receiver,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sender(1) => f.write_str("sender"),
            Self::Sender(k) => write!(f, "sender{k}"),
            Self::Dut => f.write_str("dut"),
            Self::Receiver => f.write_str("receiver"),
        }
    }
}

impl FromStr for Role {
    type Err = InputError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "dut" => Ok(Self::Dut),
            "receiver" => Ok(Self::Receiver),
            "sender" => Ok(Self::Sender(1)),
            _ => s
                .strip_prefix("sender")
                .and_then(|k| k.parse::<u8>().ok())
                .filter(|k| (2..=MAX_SENDERS).contains(k))
                .map(Self::Sender)
                .ok_or_else(|| {
                    InputError::new(format!(
                        "unknown role {s:?}: use sender, sender2…, dut or receiver"
                    ))
                }),
        }
    }
}

impl Serialize for Role {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Role {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// A [`LabConfig`] resolved against this machine: every name and CPU decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topology {
    /// Lab id.
    pub(crate) id: String,
    /// 2 or 3.
    pub(crate) nodes: u8,
    /// Number of senders.
    pub(crate) senders: u8,
    /// Where the DUT forwards.
    pub(crate) placement: Placement,
    /// The CPU doing the DUT's forwarding (the generator's in shared placement).
    pub(crate) dut_cpu: usize,
    /// The CPU the generators should run on.
    pub(crate) generator_cpu: usize,
}

impl Topology {
    /// Decides placement and CPUs for a machine with `cpus` CPUs (numbered from 0).
    pub(crate) fn resolve(cfg: &LabConfig, cpus: usize) -> Result<Self, String> {
        cfg.validate()?;
        let last = cpus.saturating_sub(1);
        let check_cpu = |key: &str, cpu: usize| {
            if cpu < cpus {
                Ok(cpu)
            } else {
                Err(format!(
                    "{key} = {cpu}: this machine has CPUs 0 to {last}; pick one of them"
                ))
            }
        };
        let generator_cpu = check_cpu("generator_cpu", cfg.generator_cpu.unwrap_or(0))?;
        let placement = cfg.placement.unwrap_or(if cpus >= 2 {
            Placement::Separate
        } else {
            Placement::Shared
        });
        let dut_cpu = match placement {
            Placement::Shared => generator_cpu,
            Placement::Separate => {
                if cpus < 2 {
                    return Err(
                        "placement = \"separate\" needs 2 CPUs and this machine has 1: use \"shared\""
                            .to_string(),
                    );
                }
                let default = if generator_cpu == last { 0 } else { last };
                let cpu = check_cpu("dut_cpu", cfg.dut_cpu.unwrap_or(default))?;
                if cpu == generator_cpu {
                    return Err(format!(
                        "dut_cpu = {cpu} is also generator_cpu: in separate placement they differ"
                    ));
                }
                cpu
            }
        };
        Ok(Self {
            id: cfg.id.clone(),
            nodes: cfg.nodes,
            senders: cfg.senders,
            placement,
            dut_cpu,
            generator_cpu,
        })
    }

    /// The roles of this lab, senders first.
    pub(crate) fn roles(&self) -> Vec<Role> {
        (1..=self.senders)
            .map(Role::Sender)
            .chain([Role::Dut, Role::Receiver])
            .collect()
    }

    /// The namespace a role lives in (in a 2-node lab the receiver shares the first sender's).
    pub(crate) fn namespace(&self, role: Role) -> String {
        let role = match role {
            Role::Receiver if self.nodes == 2 => Role::Sender(1),
            other => other,
        };
        namespace_name(&self.id, role)
    }

    /// Every namespace of the lab, each once, senders first.
    pub(crate) fn namespaces(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for role in self.roles() {
            let ns = self.namespace(role);
            if !names.contains(&ns) {
                names.push(ns);
            }
        }
        names
    }

    /// The roles living in namespace `ns`.
    pub(crate) fn roles_in(&self, ns: &str) -> Vec<Role> {
        self.roles()
            .into_iter()
            .filter(|r| self.namespace(*r) == ns)
            .collect()
    }

    /// Sender k's interface.
    pub(crate) fn sender_if(&self, k: u8) -> String {
        format!("bl{}s{k}", self.id)
    }

    /// The DUT's interface facing sender k (its ingress).
    pub(crate) fn dut_in_if(&self, k: u8) -> String {
        format!("bl{}d{k}", self.id)
    }

    /// The DUT's interface facing the receiver (its egress).
    pub(crate) fn dut_out_if(&self) -> String {
        format!("bl{}do", self.id)
    }

    /// The receiver's interface.
    pub(crate) fn receiver_if(&self) -> String {
        format!("bl{}r", self.id)
    }

    /// The DUT's interface on the probes' link: the latency probes' egress.
    pub(crate) fn dut_probe_if(&self) -> String {
        format!("bl{}dp", self.id)
    }

    /// The receiver's interface on the probes' link.
    pub(crate) fn receiver_probe_if(&self) -> String {
        format!("bl{}rp", self.id)
    }
}

/// The namespace name of `role` in lab `id`: `benchlab-<id>-<role>`.
pub(crate) fn namespace_name(id: &str, role: Role) -> String {
    format!("{}{id}-{role}", super::NAMESPACE_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_seeds_three_node_lab() {
        let cfg = LabConfig::parse("", "LAB.toml").unwrap();
        let t = Topology::resolve(&cfg, 2).unwrap();
        assert_eq!(t.placement, Placement::Separate);
        assert_eq!((t.generator_cpu, t.dut_cpu), (0, 1));
        assert_eq!(
            t.namespaces(),
            ["benchlab-0-sender", "benchlab-0-dut", "benchlab-0-receiver"]
        );
        assert_eq!(
            [
                t.sender_if(1),
                t.dut_in_if(1),
                t.dut_out_if(),
                t.receiver_if(),
                t.dut_probe_if(),
                t.receiver_probe_if()
            ],
            ["bl0s1", "bl0d1", "bl0do", "bl0r", "bl0dp", "bl0rp"]
        );
        let one_cpu = Topology::resolve(&cfg, 1).unwrap();
        assert_eq!(one_cpu.placement, Placement::Shared);
    }

    #[test]
    fn two_nodes_put_the_receiver_with_the_sender() {
        let cfg = LabConfig::parse("id = \"t1\"\nnodes = 2\nsenders = 2", "x").unwrap();
        let t = Topology::resolve(&cfg, 4).unwrap();
        assert_eq!(
            t.namespaces(),
            [
                "benchlab-t1-sender",
                "benchlab-t1-sender2",
                "benchlab-t1-dut"
            ]
        );
        assert_eq!(
            t.roles_in("benchlab-t1-sender"),
            [Role::Sender(1), Role::Receiver]
        );
        assert_eq!(t.dut_cpu, 3);
    }

    #[test]
    fn errors_name_the_file_line_and_key() {
        let err = LabConfig::parse("id = \"a\"\nnodez = 3\n", "LAB.toml").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("LAB.toml:2: unknown field `nodez`"),
            "{err}"
        );
        let err = LabConfig::parse("id = [", "LAB.toml")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("LAB.toml:1: "), "{err}");
        assert!(!err.contains('\n'), "{err}");
        let err = LabConfig::parse("id = \"Lab-1\"", "LAB.toml").unwrap_err();
        assert_eq!(
            err.to_string(),
            "LAB.toml: id = \"Lab-1\": use 1 to 6 lowercase letters or digits"
        );
        let err = LabConfig::parse("senders = 9", "f").unwrap_err();
        assert_eq!(err.to_string(), "f: senders = 9: use 1 to 8");
        let err = LabConfig::parse("dut_cpu = 0\ngenerator_cpu = 0", "f").unwrap_err();
        assert!(err
            .to_string()
            .starts_with("f: dut_cpu = 0 is also generator_cpu"));
        let cfg = LabConfig::parse("dut_cpu = 5", "f").unwrap();
        assert_eq!(
            Topology::resolve(&cfg, 2).unwrap_err(),
            "dut_cpu = 5: this machine has CPUs 0 to 1; pick one of them"
        );
    }

    #[test]
    fn roles_print_and_parse_alike() {
        for role in [Role::Sender(1), Role::Sender(3), Role::Dut, Role::Receiver] {
            assert_eq!(role.to_string().parse::<Role>().unwrap(), role);
        }
        assert!("sender1".parse::<Role>().is_err());
    }
}
