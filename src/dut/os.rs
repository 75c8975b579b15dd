//! The DUT's operating system, which picks its built-in config sets and the commands that
//! read its counters and kernel configuration.

use anyhow::bail;

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
    pub(crate) fn of(node: &dyn Transport) -> anyhow::Result<Self> {
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

    /// The command that prints every interface's packet counters.
    pub(crate) fn counters_argv(self) -> Vec<String> {
        let argv: &[&str] = match self {
            Self::Linux => &["ip", "-s", "-s", "link"],
            Self::FreeBsd => &["netstat", "-ndi"],
        };
        argv.iter().map(|s| s.to_string()).collect()
    }

    /// The command that sets sysctl `key` to `value`: `sysctl -q -w k=v` on Linux (quiet: the
    /// new value is not echoed), `sysctl k=v` on FreeBSD.
    pub(crate) fn sysctl_argv(self, key: &str, value: &str) -> Vec<String> {
        let setting = format!("{key}={value}");
        match self {
            Self::Linux => vec!["sysctl".into(), "-q".into(), "-w".into(), setting],
            Self::FreeBsd => vec!["sysctl".into(), setting],
        }
    }

    /// The command that prints the running kernel's configuration, first line its source.
    pub(crate) fn kernel_config_argv(self) -> Vec<String> {
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
