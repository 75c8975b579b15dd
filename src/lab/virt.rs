//! The virtual lab on this machine: network namespaces joined by veth pairs.
//!
//! Veths are created directly inside their namespaces, so nothing of the lab ever exists in the
//! host's own namespace and deleting the namespaces removes everything. The CPU placement is
//! the one measured in `notes/virtual-lab.md`: with TSO off on the sender's veth and GRO on the
//! DUT's ingress veth, veth hands frames to NAPI, which runs threaded, in a kthread pinned to
//! the DUT's CPU; otherwise the DUT forwards in the sender's softirq on the generator's CPU.
//! At a fixed load the DUT's input queue is a NIC's, not veth's 256 frames: the generator
//! holds [`INPUT_QUEUE_FRAMES`](crate::lab::virt::INPUT_QUEUE_FRAMES) more while the DUT's
//! CPU is away (the constant says why and how).

use std::path::Path;

use anyhow::{bail, Context, Result};
use nix::sched::{sched_setaffinity, CpuSet};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use super::addressing::{Plan, Port};
use super::topology::{Placement, Role, Topology};
use super::NAMESPACE_PREFIX;
use crate::error::InputError;
use crate::transport::{Command, LocalTransport, NetnsTransport, Transport};

/// Where `ip netns` keeps its namespace handles.
const NETNS_DIR: &str = "/var/run/netns";

/// Sysctls of every lab namespace, set before its interfaces exist so they inherit the
/// `default` values: no DAD, router advertisements or solicitations, reverse-path filter or
/// ICMP redirects — nothing that sends or drops packets behind the benchmark's back.
pub(super) const NODE_SYSCTLS: &[&str] = &[
    "net.ipv4.conf.all.rp_filter=0",
    "net.ipv4.conf.default.rp_filter=0",
    "net.ipv4.conf.all.send_redirects=0",
    "net.ipv4.conf.default.send_redirects=0",
    "net.ipv4.conf.all.accept_redirects=0",
    "net.ipv4.conf.default.accept_redirects=0",
    "net.ipv6.conf.all.accept_redirects=0",
    "net.ipv6.conf.default.accept_redirects=0",
    "net.ipv6.conf.all.accept_dad=0",
    "net.ipv6.conf.default.accept_dad=0",
    "net.ipv6.conf.all.accept_ra=0",
    "net.ipv6.conf.default.accept_ra=0",
    "net.ipv6.conf.all.router_solicitations=0",
    "net.ipv6.conf.default.router_solicitations=0",
    // Interfaces coming up (and forwarding, joining all-routers) send unsolicited MLD
    // reports and repeat them for up to 10 s: repeat them within a millisecond instead, so
    // that the lab is silent by the time a trial counts packets.
    "net.ipv6.conf.all.mldv1_unsolicited_report_interval=1",
    "net.ipv6.conf.default.mldv1_unsolicited_report_interval=1",
    "net.ipv6.conf.all.mldv2_unsolicited_report_interval=1",
    "net.ipv6.conf.default.mldv2_unsolicited_report_interval=1",
];

/// Sysctls of the receiver's namespace: no ICMP error ever leaves it (no global credit for
/// them, echo replies exempt). The latency probes are sent to the receiver's address on their
/// own link; the trials' probes end at the DUT's egress, but `benchlab probe --at` without
/// `--stamp-egress` reads them by a raw socket (`traffic::latency`), UDP finds no socket of
/// theirs, and each probe would otherwise cost a port-unreachable error sent back through the DUT.
pub(super) const RECEIVER_SYSCTLS: &[&str] =
    &["net.ipv4.icmp_msgs_per_sec=0", "net.ipv4.icmp_msgs_burst=0"];

/// Sysctls of the DUT once its interfaces exist.
const DUT_SYSCTLS: &[&str] = &[
    "net.ipv4.conf.all.forwarding=1",
    "net.ipv6.conf.all.forwarding=1",
];

/// The SCHED_FIFO priority of the DUT's NAPI kthreads (the kernel's own threaded IRQ
/// handlers run at 50; the DUT's forwarding is the same kind of work).
pub(crate) const NAPI_PRIORITY: i32 = 50;

/// Builds the lab of `t` as `plan` lays it out. On error the caller removes what was built.
pub(crate) fn build(t: &Topology, plan: &Plan) -> Result<()> {
    let host = LocalTransport;
    for ns in t.namespaces() {
        host.run(&["ip", "netns", "add", &ns])?;
        sysctl(&NetnsTransport::new(&ns), NODE_SYSCTLS)?;
    }
    sysctl(
        &NetnsTransport::new(t.namespace(Role::Receiver)),
        RECEIVER_SYSCTLS,
    )?;
    for (a, b) in &plan.links {
        add_veth(a, b)?;
    }
    for ns in t.namespaces() {
        configure_addresses(&ns, plan)?;
    }
    let dut = NetnsTransport::new(t.namespace(Role::Dut));
    sysctl(&dut, DUT_SYSCTLS)?;
    for (a, b) in &plan.links {
        for port in [a, b] {
            set_offloads(t, port)?;
        }
    }
    if t.placement == Placement::Separate {
        for k in 1..=t.senders {
            thread_napi(t, &dut, &t.dut_in_if(k))?;
        }
    }
    Ok(())
}

/// Frames of the DUT's input ring at a fixed load, in front of veth's own
/// ([`VETH_QUEUE_FRAMES`]): a server NIC's largest common receive ring (ixgbe, i40e, ice: 4096
/// descriptors). The generator holds them ([`crate::traffic::requeue`]): frames veth's full
/// ring refused are sent again once it takes frames, and what it still holds beyond this when
/// the traffic stops is dropped, as such a ring would have, and counts as lost
/// (`campaign::trial::TrialData::late_pkts`).
///
/// Why: veth's ring holds 256 frames, 0.5 ms at 500 Kpps, and on a cloud VM the hypervisor
/// takes the DUT's CPU away for 3–20 ms at a time, or slows it for a tenth of a second
/// (`lab::stall`, BENCHMARKS.md): at any fixed load a quarter to nine tenths of the 1 s
/// trials lost frames, so the search measured the hypervisor, not the DUT.
///
/// Why deeper while the traffic runs (up to [`BUFFER_FRAMES`]): a queue that drops at 4096
/// slowed the DUT once it fell behind (measured with the earlier qdisc model, alternating a
/// 4096-frame limit with the deep one: runs without loss at 480 and 560 Kpps 7/8 and 6/8
/// against 4/8 and 4/8). A backlog the DUT works
/// off before the traffic stops (a hypervisor stall, a slow stretch) costs nothing; in a
/// steady overload the count lost is the one a ring of 4096 frames drops.
///
/// Why the generator holds them and not a qdisc in front of veth's ring (the model before,
/// which needed Linux 6.16's veth backpressure): the kernel refilled veth's ring from the
/// qdisc on the DUT's CPU (`perf`: 16–17 % of it in `net_tx_action` while backlogged), so a
/// DUT with a backlog forwarded less, and just below its saturated rate a calm DUT kept up
/// while one set back by a stall did not catch up (`benches/backlog.sh`: at 500–550 Kpps 7 of
/// 8 calm runs ended without a backlog, 2 of 8 after a stall; that stall was some 0.2 s, not
/// the 30 ms meant, its spinner's Python start-up running at real-time priority too, which
/// the script no longer does). Redirected frames enter the ring as a NIC's DMA fills one, and
/// any kernel with veth XDP takes them.
///
/// [`VETH_QUEUE_FRAMES`]: crate::lab::stall::VETH_QUEUE_FRAMES
/// [`BUFFER_FRAMES`]: crate::traffic::requeue::BUFFER_FRAMES
pub const INPUT_QUEUE_FRAMES: u64 = 4096;

/// The veth pair from `a` to `b`, each end created in its own namespace.
pub(super) fn add_veth(a: &Port, b: &Port) -> Result<()> {
    let host = LocalTransport;
    let (amac, bmac) = (a.mac.to_string(), b.mac.to_string());
    let out = host.exec(&Command::new([
        "ip", "link", "add", &a.name, "netns", &a.ns, "address", &amac, "type", "veth", "peer",
        "name", &b.name, "netns", &b.ns, "address", &bmac,
    ]))?;
    if out.success() {
        return Ok(());
    }
    if out.stderr.contains("Unknown device type") {
        bail!(InputError::new(
            "this kernel has no veth driver (CONFIG_VETH): `modprobe veth`, or boot a kernel with it"
        ));
    }
    Err(crate::transport::failed(
        host.host(),
        &["ip".into(), "link".into(), "add".into(), a.name.clone()],
        &out,
    )
    .into())
}

/// Router-like offloads on `port`: nothing aggregates packets. The one exception is GRO on
/// the DUT's ingress in separate placement, which is what makes veth use NAPI; UDP is still
/// not aggregated there (rx-udp-gro-forwarding off).
fn set_offloads(t: &Topology, port: &Port) -> Result<()> {
    let ingress = (1..=t.senders).any(|k| t.dut_in_if(k) == port.name);
    let gro = if ingress && t.placement == Placement::Separate {
        "on"
    } else {
        "off"
    };
    NetnsTransport::new(&port.ns).run(&[
        "ethtool",
        "-K",
        &port.name,
        "tso",
        "off",
        "gso",
        "off",
        "gro",
        gro,
        "rx-udp-gro-forwarding",
        "off",
        "rx-gro-list",
        "off",
    ])?;
    Ok(())
}

/// Threaded NAPI on the DUT's ingress `dev`, its kthreads pinned to the DUT's CPU, real-time.
fn thread_napi(t: &Topology, dut: &NetnsTransport, dev: &str) -> Result<()> {
    dut.put_file(&format!("/sys/class/net/{dev}/threaded"), b"1")?;
    let threads = find_napi_threads(dev);
    if threads.is_empty() {
        bail!(
            "{}: no NAPI kthread appeared for {dev} after enabling threaded NAPI; \
             use placement = \"shared\" on this kernel",
            dut.host()
        );
    }
    let mut cpus = CpuSet::new();
    cpus.set(t.dut_cpu)
        .with_context(|| format!("CPU {} cannot be used", t.dut_cpu))?;
    for (pid, name) in threads {
        sched_setaffinity(Pid::from_raw(pid), &cpus).with_context(|| {
            format!(
                "cannot pin the NAPI kthread {name} (pid {pid}) to CPU {}",
                t.dut_cpu
            )
        })?;
        // Real-time, so that whatever else runs on this machine (a compiler, CI)
        // cannot preempt the DUT and overflow its 256-frame veth ring; the kernel's
        // RT throttling still leaves 5 % of the CPU to others.
        LocalTransport.run(&[
            "chrt",
            "-f",
            "-p",
            &NAPI_PRIORITY.to_string(),
            &pid.to_string(),
        ])?;
    }
    Ok(())
}

/// Sets `settings` (`key=value`) in `t`'s namespace, in one `sysctl` call.
pub(super) fn sysctl(t: &NetnsTransport, settings: &[&str]) -> Result<()> {
    let mut argv = vec!["sysctl", "-q", "-w"];
    argv.extend_from_slice(settings);
    t.run(&argv)?;
    Ok(())
}

/// Links up, addresses, static routes and neighbours of one namespace, in one `ip -batch`.
fn configure_addresses(ns: &str, plan: &Plan) -> Result<()> {
    let mut batch = String::from("link set lo up\n");
    for port in plan.ports_in(ns) {
        batch += &format!("link set {} up\n", port.name);
        for addr in &port.addrs {
            let nodad = if addr.addr.is_ipv6() { " nodad" } else { "" };
            batch += &format!("addr add {addr} dev {}{nodad}\n", port.name);
        }
    }
    for (_, r) in plan.routes.iter().filter(|(n, _)| n == ns) {
        batch += &format!("route add {} via {} dev {}\n", r.dst, r.via, r.dev);
    }
    for (_, n) in plan.neighbours.iter().filter(|(n, _)| n == ns) {
        batch += &format!(
            "neigh replace {} lladdr {} dev {} nud permanent\n",
            n.addr, n.mac, n.dev
        );
    }
    LocalTransport.check(&Command::new(["ip", "-n", ns, "-batch", "-"]).stdin(batch))?;
    Ok(())
}

/// The NAPI kthreads of interface `dev` (pid, name). Their names are `napi/<dev>-<id>`, cut
/// to 15 characters; lab interface names are unique and short enough for the prefix to tell.
pub(crate) fn find_napi_threads(dev: &str) -> Vec<(i32, String)> {
    let mut prefix = format!("napi/{dev}-");
    prefix.truncate(15);
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found: Vec<(i32, String)> = entries
        .filter_map(|e| {
            let pid: i32 = e.ok()?.file_name().to_str()?.parse().ok()?;
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
            let comm = comm.trim_end();
            comm.starts_with(&prefix).then(|| (pid, comm.to_string()))
        })
        .collect();
    found.sort();
    found
}

/// Every namespace whose name carries benchlab's prefix.
pub(crate) fn benchlab_namespaces() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(NETNS_DIR)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.starts_with(NAMESPACE_PREFIX))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The namespaces of lab `id` that exist.
pub(crate) fn namespaces_of(id: &str) -> Vec<String> {
    let prefix = format!("{NAMESPACE_PREFIX}{id}-");
    benchlab_namespaces()
        .into_iter()
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

/// Kills every process left in lab `id`'s namespaces (a generator of a killed benchlab, a
/// daemon of a user config set), then deletes the namespaces and with them every veth.
pub(crate) fn remove_namespaces(id: &str) -> Result<()> {
    let mut first_error = None;
    for ns in namespaces_of(id) {
        if let Ok(pids) = LocalTransport.run(&["ip", "netns", "pids", &ns]) {
            for pid in pids
                .split_whitespace()
                .filter_map(|p| p.parse::<i32>().ok())
            {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
        }
        // Two runs starting at once may both remove the same stale lab: a namespace the other
        // one deleted first is gone, as asked, and not an error.
        if let Err(e) = LocalTransport.run(&["ip", "netns", "del", &ns]) {
            if Path::new(NETNS_DIR).join(&ns).exists() {
                first_error.get_or_insert(e);
            }
        }
    }
    match first_error {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}

/// The number of CPUs of this machine (numbered from 0).
pub(crate) fn online_cpus() -> usize {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|s| {
            s.trim()
                .split(',')
                .filter_map(|range| {
                    let end = range.rsplit('-').next()?;
                    end.parse::<usize>().ok()
                })
                .max()
        })
        .map(|max| max + 1)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// What building a lab and applying the Linux config sets need: (tool, Debian package).
pub(crate) const LAB_TOOLS: &[(&str, &str)] = &[
    ("ip", "iproute2"),
    ("tc", "iproute2"),
    ("ethtool", "ethtool"),
    ("sysctl", "procps"),
    ("chrt", "util-linux"),
    ("nft", "nftables"),
    ("iptables", "iptables"),
];

/// What looking at or removing a lab needs.
pub(crate) const INSPECT_TOOLS: &[(&str, &str)] = &[("ip", "iproute2")];

/// Start checks: root, `tools`, network namespaces. Bad environments are input errors (exit
/// 2) whose message says what to install or do.
pub(crate) fn preflight(tools: &[(&str, &str)]) -> Result<(), InputError> {
    if !nix::unistd::geteuid().is_root() {
        return Err(InputError::new(
            "the virtual lab needs root to create network namespaces: run benchlab as root (sudo)",
        ));
    }
    let missing: Vec<&(&str, &str)> = tools
        .iter()
        .filter(|(tool, _)| find_in_path(tool).is_none())
        .collect();
    if !missing.is_empty() {
        let names: Vec<String> = missing
            .iter()
            .map(|(tool, pkg)| format!("{tool} (package {pkg})"))
            .collect();
        // Several tools come in one package (ip and tc: iproute2), wherever they are listed.
        let mut packages: Vec<&str> = Vec::new();
        for (_, pkg) in &missing {
            if !packages.contains(pkg) {
                packages.push(pkg);
            }
        }
        return Err(InputError::new(format!(
            "the virtual lab needs {}: install them (Debian: apt install {})",
            names.join(", "),
            packages.join(" ")
        )));
    }
    if !Path::new("/proc/self/ns/net").exists() {
        return Err(InputError::new(
            "this kernel has no network namespaces (CONFIG_NET_NS): boot a kernel with them",
        ));
    }
    Ok(())
}

/// The path of `tool` in `PATH` (plus the sbin directories root usually has).
pub(crate) fn find_in_path(tool: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin"].map(Into::into))
        .map(|dir| dir.join(tool))
        .find(|p| p.is_file())
}
