//! Commands inside a named network namespace, through `ip netns exec NAME argv…`, or
//! `nsenter --net=/run/netns/NAME argv…` for short commands that do not touch `/sys`.
//!
//! `ip netns exec` also gives the command a private `/sys` that shows the namespace's own
//! interfaces, which the lab needs (threaded NAPI, counters), and it `exec`s the command, so
//! the process id of a spawned command is the command's own and signals reach it. That private
//! `/sys` costs a mount namespace, an unmount and a mount per command, and an unmount waits for
//! an RCU grace period, which the lab's traffic stretches: under a saturating load `ip netns
//! exec nft list tables` took 85–130 ms against 5–45 ms for the same command already in the
//! namespace, and the alternating design switches config sets with a dozen such commands while
//! traffic runs. So a command that names no `/sys` path only joins the network namespace
//! (`/proc/sys/net` follows the network namespace, so `sysctl` needs no more).

use super::local::{exec_argv, start};
use super::{Command, Output, Process, Transport, TransportError};

/// Runs commands in one network namespace of this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetnsTransport {
    name: String,
}

impl NetnsTransport {
    /// A transport into the namespace `name` (which must exist when commands run).
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into() }
    }

    fn argv(&self, argv: &[String]) -> Vec<String> {
        ["ip", "netns", "exec", &self.name]
            .into_iter()
            .map(str::to_string)
            .chain(argv.iter().cloned())
            .collect()
    }

    /// The argument vector of a short command: `ip netns exec` when it names a `/sys` path,
    /// else `nsenter`, which joins the network namespace only.
    fn exec_argv(&self, argv: &[String]) -> Vec<String> {
        if argv.iter().any(|a| a.contains("/sys/")) {
            return self.argv(argv);
        }
        ["nsenter", &format!("--net=/run/netns/{}", self.name), "--"]
            .into_iter()
            .map(str::to_string)
            .chain(argv.iter().cloned())
            .collect()
    }
}

impl Transport for NetnsTransport {
    fn host(&self) -> &str {
        &self.name
    }

    fn exec(&self, cmd: &Command) -> Result<Output, TransportError> {
        exec_argv(&self.name, &self.exec_argv(&cmd.argv), cmd)
    }

    fn spawn(&self, argv: &[String]) -> Result<Box<dyn Process>, TransportError> {
        Ok(Box::new(start(&self.name, &self.argv(argv), None)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn only_commands_naming_sys_pay_for_a_private_sys() {
        let t = NetnsTransport::new("bl-dut");
        assert_eq!(
            t.exec_argv(&strings(&["nft", "list", "tables"])),
            strings(&[
                "nsenter",
                "--net=/run/netns/bl-dut",
                "--",
                "nft",
                "list",
                "tables"
            ])
        );
        assert_eq!(
            t.exec_argv(&strings(&["tee", "/sys/class/net/a/threaded"]))[..4],
            strings(&["ip", "netns", "exec", "bl-dut"])
        );
    }
}
