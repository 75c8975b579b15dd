//! Facts about a host that a report lists (the seeds wrote them by hand): CPU model and cores,
//! kernel and OS, and the versions of the tools a config set relies on. Read through a
//! [`Transport`], so the virtual lab's DUT and an SSH host are asked the same way; a fact that
//! cannot be read is left out, never guessed.
//!
//! [`Transport`]: crate::transport::Transport

use serde::{Deserialize, Serialize};

use crate::transport::Transport;

/// What `lab.json` says of a host; a fact missing from the file reads as unknown.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct HostFacts {
    /// `model name` of /proc/cpuinfo (Linux) or `hw.model` (FreeBSD).
    pub(crate) cpu: Option<String>,
    /// Online CPUs.
    pub(crate) cores: Option<u32>,
    /// `uname -a`.
    pub(crate) kernel: Option<String>,
    /// `PRETTY_NAME` of /etc/os-release.
    pub(crate) os: Option<String>,
    /// First line of `<tool> --version` (or `-V`) for the tools benchlab drives.
    pub(crate) tools: Vec<String>,
}

/// Asks `host` for its facts.
pub(crate) fn facts(host: &dyn Transport) -> HostFacts {
    let text = |argv: &[&str]| {
        host.run(argv)
            .ok()
            .map(|o| o.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    let cpu = text(&["cat", "/proc/cpuinfo"])
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .or_else(|| text(&["sysctl", "-n", "hw.model"]));
    // Not `nproc`: it counts the CPUs the command may run on, and the virtual lab keeps the
    // commands it starts off the DUT's CPU (a 2-CPU machine read as "1 CPUs").
    let cores = text(&["getconf", "_NPROCESSORS_ONLN"])
        .or_else(|| text(&["sysctl", "-n", "hw.ncpu"]))
        .and_then(|n| n.parse().ok());
    let os = text(&["cat", "/etc/os-release"]).and_then(|rel| {
        rel.lines()
            .find_map(|l| l.strip_prefix("PRETTY_NAME="))
            .map(|v| v.trim_matches('"').to_string())
    });
    let tools = [
        &["ip", "-V"][..],
        &["nft", "--version"],
        &["iptables", "--version"],
        &["iptables-legacy", "--version"],
        &["ethtool", "--version"],
    ]
    .iter()
    .filter_map(|argv| text(argv).and_then(|t| t.lines().next().map(str::to_string)))
    .chain(std::iter::once(format!(
        "benchlab {}",
        env!("CARGO_PKG_VERSION")
    )))
    .collect();
    HostFacts {
        cpu,
        cores,
        kernel: text(&["uname", "-a"]),
        os,
        tools,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::{MockTransport, Output};

    #[test]
    fn facts_come_from_the_host_and_missing_ones_are_left_out() {
        let host = MockTransport::new("dut");
        host.reply(
            &["cat", "/proc/cpuinfo"],
            Output::ok("processor\t: 0\nmodel name\t: AMD EPYC 7B13\n"),
        );
        host.reply(&["getconf", "_NPROCESSORS_ONLN"], Output::ok("2\n"));
        host.reply(&["uname", "-a"], Output::ok("Linux dut 6.18.44 x86_64\n"));
        let f = facts(&host);
        assert_eq!(f.cpu.as_deref(), Some("AMD EPYC 7B13"));
        assert_eq!(f.cores, Some(2));
        assert_eq!(f.os, None);
        assert_eq!(f.kernel.as_deref(), Some("Linux dut 6.18.44 x86_64"));
    }

    #[test]
    fn a_freebsd_host_gives_its_cpu_and_cores_through_sysctl() {
        let host = MockTransport::new("dut");
        host.reply(
            &["sysctl", "-n", "hw.model"],
            Output::ok("Intel(R) Xeon(R) E-2186G\n"),
        );
        host.reply(&["sysctl", "-n", "hw.ncpu"], Output::ok("6\n"));
        let f = facts(&host);
        assert_eq!(f.cpu.as_deref(), Some("Intel(R) Xeon(R) E-2186G"));
        assert_eq!(f.cores, Some(6));
    }
}
