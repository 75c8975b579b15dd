//! Unit tests of the SSH bench's switcher against the mock transport.

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
    let mut switcher = SshSwitcher {
        sets: &mut sets,
        dut: &dut,
        os: Os::FreeBsd,
        restore: &mut restore,
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
