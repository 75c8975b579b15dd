//! A version's DUT settings, the same on every lab: its `sysctls` and its `commands`. Each
//! sysctl's value before is remembered and the previous version's are restored first, so a
//! version without a key does not inherit it from the one before (and the DUT is left as it
//! was found). The virtual lab applies them before a version's trials; an SSH lab too, after
//! the reboot of a version that has one (a reboot resets sysctls); and a quick version
//! switched under traffic (the alternating design) applies them the same way on both.

use anyhow::Context;

use crate::config::Version;
use crate::dut::Os;
use crate::transport::{Command, Transport};

/// The sysctls the version in force changed, with their values before, in the order set.
#[derive(Debug, Default)]
pub(crate) struct Restore(Vec<(String, String)>);

/// Puts `version`'s settings on `dut`: the previous version's sysctls restored, this one's
/// set, then its commands.
pub(crate) fn apply(
    dut: &dyn Transport,
    os: Os,
    restore: &mut Restore,
    version: &Version,
) -> anyhow::Result<()> {
    restore_sysctls(dut, os, restore)?;
    set_sysctls(dut, os, restore, version)?;
    run_commands(dut, version)
}

/// Restores the sysctls in `restore` (last set, first restored) and forgets them.
pub(crate) fn restore_sysctls(
    dut: &dyn Transport,
    os: Os,
    restore: &mut Restore,
) -> anyhow::Result<()> {
    for (key, value) in std::mem::take(&mut restore.0).into_iter().rev() {
        dut.check(&Command::new(os.sysctl_argv(&key, &value)))
            .with_context(|| format!("{}: restoring sysctl {key}={value}", dut.host()))?;
    }
    Ok(())
}

/// Sets `version`'s sysctls, each one's value before added to `restore`.
pub(crate) fn set_sysctls(
    dut: &dyn Transport,
    os: Os,
    restore: &mut Restore,
    version: &Version,
) -> anyhow::Result<()> {
    for (key, value) in &version.sysctls {
        let before = dut
            .run(&["sysctl", "-n", key])
            .with_context(|| format!("version `{}`: reading sysctl {key}", version.name))?;
        dut.check(&Command::new(os.sysctl_argv(key, value)))
            .with_context(|| {
                format!(
                    "version `{}`: sysctl {key}={value} cannot be set on {}; check the key and \
                 value (`sysctl -a` lists the keys)",
                    version.name,
                    dut.host()
                )
            })?;
        restore.0.push((key.clone(), before.trim().to_string()));
    }
    Ok(())
}

/// Runs `version`'s `commands` on `dut`, in order.
pub(crate) fn run_commands(dut: &dyn Transport, version: &Version) -> anyhow::Result<()> {
    for argv in &version.commands {
        dut.check(&Command::new(argv.clone()))
            .with_context(|| format!("version `{}`", version.name))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::{MockTransport, Output};

    fn version(toml: &str) -> Version {
        toml::from_str(toml).unwrap()
    }

    #[test]
    fn sysctls_are_set_in_the_os_syntax_and_restored_before_the_next_version() {
        let on = version(
            "name = \"acct-on\"\nsysctls = { \"net.netfilter.nf_conntrack_acct\" = \"1\" }\n\
             commands = [[\"true\"]]",
        );
        let off = version("name = \"acct-off\"");
        for (os, set, back) in [
            (
                Os::Linux,
                "sysctl -q -w net.netfilter.nf_conntrack_acct=1",
                "sysctl -q -w net.netfilter.nf_conntrack_acct=0",
            ),
            (
                Os::FreeBsd,
                "sysctl net.netfilter.nf_conntrack_acct=1",
                "sysctl net.netfilter.nf_conntrack_acct=0",
            ),
        ] {
            let dut = MockTransport::new("dut");
            dut.reply(&["sysctl", "-n"], Output::ok("0\n"));
            let mut restore = Restore::default();
            apply(&dut, os, &mut restore, &on).unwrap();
            apply(&dut, os, &mut restore, &off).unwrap();
            assert_eq!(
                dut.commands(),
                [
                    "sysctl -n net.netfilter.nf_conntrack_acct",
                    set,
                    "true",
                    back
                ]
            );
            assert!(restore.0.is_empty(), "{os:?}: nothing left to restore");
        }
    }

    #[test]
    fn a_refused_sysctl_names_the_version_key_and_host() {
        let dut = MockTransport::new("dut.lab");
        let refused = Output {
            status: Some(1),
            stdout: Vec::new(),
            stderr: "sysctl: unknown oid".into(),
        };
        dut.reply(&["sysctl", "net.bogus=1"], refused);
        let v = version("name = \"bogus\"\nsysctls = { \"net.bogus\" = \"1\" }");
        let err = apply(&dut, Os::FreeBsd, &mut Restore::default(), &v).unwrap_err();
        let text = format!("{err:#}");
        assert!(
            text.contains("version `bogus`: sysctl net.bogus=1 cannot be set on dut.lab")
                && text.contains("unknown oid"),
            "{text}"
        );
    }
}
