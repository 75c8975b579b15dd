//! The one [`Switcher`] of every lab kind. Switching a config set or a quick version under
//! traffic is the same on the virtual lab and over SSH; only the DUT's operating system (which
//! sysctl syntax) and the transport that reaches it differ.
//!
//! [`Switcher`]: crate::campaign::bench::Switcher

use super::bench::Switcher;
use super::settings::{self, Restore};
use crate::config::Version;
use crate::dut::{ConfigSets, Os};
use crate::transport::Transport;

/// Switches a DUT's config sets during an alternating run (rulesets reloaded in place), and its
/// quick versions (sysctls and commands, as between trials).
pub(crate) struct DutSwitcher<'a> {
    /// The bench's config sets and the one in force.
    pub(crate) sets: &'a mut ConfigSets,
    /// The bench's sysctls to restore: a quick version switched under traffic keeps them as
    /// `Bench::set_version` does.
    pub(crate) restore: &'a mut Restore,
    /// The DUT.
    pub(crate) dut: &'a dyn Transport,
    /// The DUT's operating system.
    pub(crate) os: Os,
}

impl Switcher for DutSwitcher<'_> {
    fn switch(&mut self, entry: &str) -> anyhow::Result<()> {
        self.sets.switch(entry, self.dut)
    }

    fn counters(&mut self) -> anyhow::Result<Option<u64>> {
        self.sets.counters(self.dut)
    }

    fn set_version(&mut self, version: &Version) -> anyhow::Result<()> {
        settings::apply(self.dut, self.os, self.restore, version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::{MockTransport, Output};

    #[test]
    fn a_quick_version_switched_under_traffic_sets_its_sysctls_then_runs_its_commands() {
        let on: Version = toml::from_str(
            "name = \"acct-on\"\nsysctls = { \"net.inet.ip.fw.one_pass\" = \"0\" }\n\
             commands = [[\"kldload\", \"-n\", \"ipfw\"]]",
        )
        .unwrap();
        let off: Version = toml::from_str("name = \"acct-off\"").unwrap();
        let dut = MockTransport::new("dut");
        dut.reply(&["sysctl", "-n"], Output::ok("1\n"));
        let (mut sets, mut restore) = (ConfigSets::default(), Restore::default());
        let mut switcher = DutSwitcher {
            sets: &mut sets,
            restore: &mut restore,
            dut: &dut,
            os: Os::FreeBsd,
        };
        switcher.set_version(&on).unwrap();
        switcher.set_version(&off).unwrap();
        assert_eq!(
            dut.commands(),
            [
                "sysctl -n net.inet.ip.fw.one_pass",
                "sysctl net.inet.ip.fw.one_pass=0",
                "kldload -n ipfw",
                "sysctl net.inet.ip.fw.one_pass=1"
            ]
        );
    }
}
