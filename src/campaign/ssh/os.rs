//! The DUT's operating system over SSH, and the commands that differ with it.

use anyhow::bail;

use crate::profile::pmcstat::{PmcstatProfiler, DEFAULT_EVENT};
use crate::profile::{PerfProfiler, Profiler};
use crate::transport::Transport;

/// The DUT's operating system, as its `uname -s` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    /// Linux.
    Linux,
    /// FreeBSD.
    FreeBsd,
}

impl Os {
    /// Asks `node` for its `uname -s`.
    pub fn of(node: &dyn Transport) -> anyhow::Result<Self> {
        let name = node.run(&["uname", "-s"])?;
        match name.trim() {
            "Linux" => Ok(Self::Linux),
            "FreeBSD" => Ok(Self::FreeBsd),
            other => bail!(
                "{}: unsupported operating system {other:?} (Linux or FreeBSD)",
                node.host()
            ),
        }
    }

    /// Checks that `dut` can be profiled (perf on Linux; hwpmc, loaded if need be, and
    /// pmcstat's `pmc_event` on FreeBSD): `Ok(Some(why))` when a FreeBSD DUT cannot, which
    /// leaves the campaign without flamegraphs; a Linux DUT without perf is an error.
    pub fn check_profiler(
        self,
        dut: &dyn Transport,
        pmc_event: Option<&str>,
    ) -> anyhow::Result<Option<String>> {
        match self {
            Self::Linux => PerfProfiler::check(dut).map(|()| None),
            Self::FreeBsd => PmcstatProfiler::check(dut, pmc_event.unwrap_or(DEFAULT_EVENT)),
        }
    }

    /// The profiler of a DUT host of its own (all its CPUs are the DUT's).
    pub fn profiler<'a>(
        self,
        dut: &'a dyn Transport,
        pmc_event: Option<&str>,
    ) -> Box<dyn Profiler + 'a> {
        match self {
            Self::Linux => Box::new(PerfProfiler::new(dut, Vec::new())),
            Self::FreeBsd => Box::new(PmcstatProfiler::new(
                dut,
                pmc_event.unwrap_or(DEFAULT_EVENT),
            )),
        }
    }

    /// The command that prints every interface's packet counters.
    pub fn counters_argv(self) -> Vec<String> {
        let argv: &[&str] = match self {
            Self::Linux => &["ip", "-s", "-s", "link"],
            Self::FreeBsd => &["netstat", "-ndi"],
        };
        argv.iter().map(|s| s.to_string()).collect()
    }

    /// The command that prints the running kernel's configuration, first line its source.
    pub fn kernel_config_argv(self) -> Vec<String> {
        let argv: &[&str] = match self {
            Self::Linux => &[
                "sh",
                "-c",
                r#"if [ -r /proc/config.gz ]; then echo /proc/config.gz; gzip -dc /proc/config.gz
elif [ -r "/boot/config-$(uname -r)" ]; then echo "/boot/config-$(uname -r)"; cat "/boot/config-$(uname -r)"
else echo "no /proc/config.gz nor /boot/config-$(uname -r)" >&2; exit 1; fi"#,
            ],
            Self::FreeBsd => &["sh", "-c", "echo kern.conftxt; sysctl -n kern.conftxt"],
        };
        argv.iter().map(|s| s.to_string()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_and_kernel_config_commands_follow_the_os() {
        assert_eq!(Os::Linux.counters_argv(), ["ip", "-s", "-s", "link"]);
        assert_eq!(Os::FreeBsd.counters_argv(), ["netstat", "-ndi"]);
        assert!(Os::FreeBsd.kernel_config_argv()[2].contains("sysctl -n kern.conftxt"));
        assert!(Os::Linux.kernel_config_argv()[2].contains("/proc/config.gz"));
        let mock = crate::transport::MockTransport::new("dut");
        mock.reply(&["uname", "-s"], crate::transport::Output::ok("FreeBSD\n"));
        assert_eq!(Os::of(&mock).unwrap(), Os::FreeBsd);
        mock.reply(&["uname", "-s"], crate::transport::Output::ok("Darwin\n"));
        assert!(Os::of(&mock).unwrap_err().to_string().contains("Darwin"));
    }
}
