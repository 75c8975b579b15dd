//! What a script (or the campaign, or a report) needs to know of a running lab: namespaces,
//! interfaces, MACs, addresses, routes, neighbours, the generator's parameters and the CPU
//! placement in force. Interfaces, routes, neighbours and NAPI threads are read from the kernel,
//! not from the plan, so `lab status` shows what is really there.

use std::net::IpAddr;

use anyhow::Result;
use nix::sched::{sched_getaffinity, CpuSet};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};

use super::addressing::{self, Mac, Net};
use super::topology::{Placement, Role, Topology};
use super::virt;

/// The namespaces as the kernel has them: interfaces, routes, neighbours (`ip -j`).
mod kernel;
pub(crate) use kernel::read_namespace;
pub use kernel::{InterfaceFacts, NamespaceFacts, NeighbourFacts, RouteFacts};

/// Everything known of a lab (`benchlab lab status --json` prints this).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabFacts {
    /// Lab id.
    pub(crate) id: String,
    /// 2 or 3.
    pub nodes: u8,
    /// Where the DUT forwards and where generators should run.
    pub placement: PlacementFacts,
    /// One entry per sender: what its generator needs.
    pub senders: Vec<SenderFacts>,
    /// The DUT.
    pub dut: DutFacts,
    /// The receiver: where to count.
    pub receiver: ReceiverFacts,
    /// The latency probes' own link from the DUT to the receiver.
    pub probes: ProbeLinkFacts,
    /// Every namespace as the kernel has it.
    pub namespaces: Vec<NamespaceFacts>,
}

impl LabFacts {
    /// The lab as environment variables for user config scripts: `BENCHLAB_LAB_ID`,
    /// `BENCHLAB_DUT_INGRESS` (interfaces, space-separated), `BENCHLAB_DUT_EGRESS`,
    /// `BENCHLAB_DUT_PROBES` (the latency probes' egress: a set that filters on the output
    /// interface passes them there too),
    /// `BENCHLAB_SOURCE4`/`6` (the senders' source networks, space-separated) and
    /// `BENCHLAB_DESTINATION4`/`6`.
    pub fn env(&self) -> Vec<(String, String)> {
        let join = |nets: Vec<String>| nets.join(" ");
        let first = self.senders.first();
        [
            ("BENCHLAB_LAB_ID", self.id.clone()),
            ("BENCHLAB_DUT_INGRESS", self.dut.ingress.join(" ")),
            ("BENCHLAB_DUT_EGRESS", self.dut.egress.clone()),
            ("BENCHLAB_DUT_PROBES", self.probes.dut.clone()),
            (
                "BENCHLAB_SOURCE4",
                join(
                    self.senders
                        .iter()
                        .map(|s| s.inet4.source.to_string())
                        .collect(),
                ),
            ),
            (
                "BENCHLAB_SOURCE6",
                join(
                    self.senders
                        .iter()
                        .map(|s| s.inet6.source.to_string())
                        .collect(),
                ),
            ),
            (
                "BENCHLAB_DESTINATION4",
                first
                    .map(|s| s.inet4.destination.to_string())
                    .unwrap_or_default(),
            ),
            (
                "BENCHLAB_DESTINATION6",
                first
                    .map(|s| s.inet6.destination.to_string())
                    .unwrap_or_default(),
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}

/// The CPU placement in force.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlacementFacts {
    /// `separate` or `shared`.
    pub mode: Placement,
    /// The CPU doing the DUT's forwarding.
    pub dut_cpu: usize,
    /// The CPU generators should be pinned to.
    pub generator_cpu: usize,
    /// The DUT's NAPI kthreads (separate placement) and the CPUs they may run on.
    pub napi_threads: Vec<NapiThread>,
    /// One sentence for reports, e.g. "separate: the DUT forwards on CPU 1 (…)".
    pub summary: String,
}

/// The DUT's input queue in words.
fn input_queue() -> String {
    let ring = super::stall::VETH_QUEUE_FRAMES;
    format!(
        "its input queue at a fixed load: veth's {ring} frames and {} the generator holds and \
         sends again, up to {} (what it holds beyond {} when the traffic stops is lost)",
        super::virt::INPUT_QUEUE_FRAMES,
        crate::traffic::requeue::BUFFER_FRAMES,
        super::virt::INPUT_QUEUE_FRAMES
    )
}

/// A NAPI kthread of the DUT.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NapiThread {
    /// The interface it polls.
    pub(crate) interface: String,
    /// Its name (`napi/<interface>-<id>`, cut to 15 characters).
    pub(crate) name: String,
    /// Its process id.
    pub(crate) pid: i32,
    /// The CPUs it may run on.
    pub cpus: Vec<usize>,
    /// Its SCHED_FIFO priority (0: not real-time).
    pub(crate) rt_priority: u32,
}

/// One sender and what its generator needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SenderFacts {
    /// `sender`, `sender2`, …
    pub(crate) role: Role,
    /// Its namespace.
    pub namespace: String,
    /// The interface to send from.
    pub interface: String,
    /// That interface's MAC (the frames' source).
    pub mac: Mac,
    /// The DUT's MAC on that link (the frames' destination).
    pub dut_mac: Mac,
    /// The CPU to pin the generator to.
    pub cpu: usize,
    /// IPv4 addresses and flow networks.
    pub inet4: FamilyFacts,
    /// IPv6 addresses and flow networks.
    pub inet6: FamilyFacts,
}

/// A sender's addresses in one address family.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FamilyFacts {
    /// The sender's own address on its link.
    pub(crate) address: Net,
    /// The DUT's address on that link.
    pub(crate) gateway: IpAddr,
    /// Where the flows' source addresses must come from (routed back to this sender).
    pub source: Net,
    /// Where the flows' destination addresses must go (routed to the receiver).
    pub destination: Net,
}

/// The DUT.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DutFacts {
    /// Its namespace.
    pub namespace: String,
    /// Its interfaces facing the senders, in sender order.
    pub ingress: Vec<String>,
    /// Its interface facing the receiver.
    pub(crate) egress: String,
    /// The CPU doing its forwarding.
    pub cpu: usize,
}

/// The receiver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceiverFacts {
    /// Its namespace.
    pub namespace: String,
    /// The interface whose counters tell what the DUT forwarded.
    pub interface: String,
    /// That interface's MAC.
    pub mac: Mac,
    /// Its IPv4 address.
    pub inet4: Net,
    /// Its IPv6 address.
    pub(crate) inet6: Net,
    /// The MAC the DUT sends test traffic to (owned by no interface).
    pub(crate) sink_mac: Mac,
    /// How received test traffic is dropped, in words.
    pub(crate) drop: String,
}

/// The latency probes' link: they come in by the load's ingress and leave the DUT by it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeLinkFacts {
    /// The DUT's interface on it: the probes' egress, where they are stamped.
    pub dut: String,
    /// The receiver's interface on it.
    pub receiver: String,
    /// The receiver's IPv4 address on it: the probes' destination.
    pub inet4: Net,
    /// The receiver's IPv6 address on it.
    pub inet6: Net,
}

/// The facts of the lab `t` describes, reading its live parts from the kernel.
pub(crate) fn collect(t: &Topology) -> Result<LabFacts> {
    let rx = addressing::receiver_side();
    let senders = (1..=t.senders).map(|k| sender_facts(t, k)).collect();
    let namespaces = t
        .namespaces()
        .into_iter()
        .map(|ns| {
            let roles = t.roles_in(&ns);
            read_namespace(&ns, roles)
        })
        .collect::<Result<_>>()?;
    Ok(LabFacts {
        id: t.id.clone(),
        nodes: t.nodes,
        placement: placement_facts(t),
        senders,
        dut: DutFacts {
            namespace: t.namespace(Role::Dut),
            ingress: (1..=t.senders).map(|k| t.dut_in_if(k)).collect(),
            egress: t.dut_out_if(),
            cpu: t.dut_cpu,
        },
        receiver: ReceiverFacts {
            namespace: t.namespace(Role::Receiver),
            interface: t.receiver_if(),
            mac: addressing::RECEIVER_MAC,
            inet4: rx.receiver4,
            inet6: rx.receiver6,
            sink_mac: addressing::SINK_MAC,
            drop: format!(
                "the DUT sends test traffic to {} (no interface has it): {} counts it in rx_packets, then the kernel drops it as PACKET_OTHERHOST",
                addressing::SINK_MAC,
                t.receiver_if()
            ),
        },
        probes: ProbeLinkFacts {
            dut: t.dut_probe_if(),
            receiver: t.receiver_probe_if(),
            inet4: addressing::probe_side().receiver4,
            inet6: addressing::probe_side().receiver6,
        },
        namespaces,
    })
}

/// Sender `k`: where it lives and the addresses it sends from and to.
fn sender_facts(t: &Topology, k: u8) -> SenderFacts {
    let rx = addressing::receiver_side();
    let s = addressing::sender_side(k);
    SenderFacts {
        role: Role::Sender(k),
        namespace: t.namespace(Role::Sender(k)),
        interface: t.sender_if(k),
        mac: addressing::sender_mac(k),
        dut_mac: addressing::dut_in_mac(k),
        cpu: t.generator_cpu,
        inet4: FamilyFacts {
            address: s.sender4,
            gateway: s.dut4.addr,
            source: s.source4,
            destination: rx.destination4,
        },
        inet6: FamilyFacts {
            address: s.sender6,
            gateway: s.dut6.addr,
            source: s.source6,
            destination: rx.destination6,
        },
    }
}

/// Which CPUs forward and generate, the DUT's NAPI threads read from the kernel.
fn placement_facts(t: &Topology) -> PlacementFacts {
    let napi_threads = match t.placement {
        Placement::Separate => napi_threads(t),
        Placement::Shared => Vec::new(),
    };
    let summary = match t.placement {
        Placement::Separate => format!(
            "separate: the DUT forwards on CPU {} (threaded NAPI: {}), generators on CPU {}; {}",
            t.dut_cpu,
            napi_threads
                .iter()
                .map(|n| format!(
                    "{} on CPU {}, SCHED_FIFO {}",
                    n.name,
                    cpu_list(&n.cpus),
                    n.rt_priority
                ))
                .collect::<Vec<_>>()
                .join(", "),
            t.generator_cpu,
            input_queue(),
        ),
        Placement::Shared => format!(
            "shared: the DUT forwards in the sender's softirq, on the generators' CPU {}",
            t.generator_cpu
        ),
    };
    PlacementFacts {
        mode: t.placement,
        dut_cpu: t.dut_cpu,
        generator_cpu: t.generator_cpu,
        napi_threads,
        summary,
    }
}

/// CPUs as a short list: "1", "0,1", "none".
fn cpu_list(cpus: &[usize]) -> String {
    if cpus.is_empty() {
        return "none".to_string();
    }
    cpus.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
}
/// The NAPI kthreads of the DUT's ingress interfaces and the CPUs they may run on.
pub(crate) fn napi_threads(t: &Topology) -> Vec<NapiThread> {
    (1..=t.senders)
        .flat_map(|k| {
            let dev = t.dut_in_if(k);
            virt::find_napi_threads(&dev)
                .into_iter()
                .map(move |(pid, name)| NapiThread {
                    interface: dev.clone(),
                    name,
                    pid,
                    rt_priority: rt_priority(pid),
                    cpus: sched_getaffinity(Pid::from_raw(pid))
                        .map(|set| {
                            (0..CpuSet::count())
                                .filter(|c| set.is_set(*c).unwrap_or(false))
                                .collect()
                        })
                        .unwrap_or_default(),
                })
        })
        .collect()
}

/// The real-time priority of process `pid` (field 40 of `/proc/<pid>/stat`; 0 when not RT).
fn rt_priority(pid: i32) -> u32 {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            // The command name (field 2) may hold spaces: count from the last ')'.
            let rest = &stat[stat.rfind(')')? + 1..];
            rest.split_whitespace().nth(37)?.parse().ok()
        })
        .unwrap_or(0)
}
