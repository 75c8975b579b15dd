//! Versions on a real DUT: `commands`, then `install` (argv lists run on the DUT), then
//! `reboot`, then `online` retried once a second until `online_timeout`, then `sysctls` (a
//! quick version's, with no install nor reboot, before its commands: `campaign::settings`). Once a version is
//! online its `uname -a` and kernel configuration are recorded with the results, so a report
//! never labels a kernel by an image's file name alone.

use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use super::settings;
use super::SshBench;
use crate::cancel::Cancel;
use crate::config::Version;
use crate::store::VersionRecord;
use crate::transport::{display_argv, Command, Transport};

/// How long `online` may take after a reboot when the version sets no `online_timeout`.
pub(crate) const DEFAULT_ONLINE_TIMEOUT: Duration = Duration::from_secs(300);
/// Time limit of one `install` command (copying and writing an image is slow).
const INSTALL_TIMEOUT: Duration = Duration::from_secs(1800);
/// Time limit of the `reboot` command: it returns at once, or its connection dies with the DUT
/// (and ssh would wait for TCP to give up); `online` tells whether the reboot worked.
const REBOOT_TIMEOUT: Duration = Duration::from_secs(15);

impl SshBench {
    /// Puts `version` on the DUT and records its kernel.
    pub(super) fn install(&mut self, version: &Version, cancel: &Cancel) -> anyhow::Result<()> {
        self.revert_current()?;
        let os = self.os()?;
        settings::restore_sysctls(&self.dut, os, &mut self.restore)?;
        if version.is_quick() {
            // Before its commands, as `settings::apply` does under traffic.
            settings::set_sysctls(&self.dut, os, &mut self.restore, version)?;
        }
        settings::run_commands(&self.dut, version)?;
        for argv in &version.install {
            self.dut
                .check(&Command::new(argv.clone()).timeout(INSTALL_TIMEOUT))
                .with_context(|| format!("installing version `{}`", version.name))?;
        }
        if !version.reboot.is_empty() {
            // The connection may drop as the DUT goes down: only `online` tells if it worked.
            let _ = self
                .dut
                .exec(&Command::new(version.reboot.clone()).timeout(REBOOT_TIMEOUT));
            self.os = None;
        }
        if !version.online.is_empty() {
            let timeout = version.online_timeout.unwrap_or(DEFAULT_ONLINE_TIMEOUT);
            self.wait_online(version, timeout, cancel)?;
        }
        if !version.is_quick() {
            // After the install and reboot (which resets them).
            let os = self.os()?;
            settings::set_sysctls(&self.dut, os, &mut self.restore, version)?;
        }
        self.record_kernel(version)
            .with_context(|| format!("recording the kernel of version `{}`", version.name))
    }

    /// Runs `online` on the DUT once a second until it succeeds or `timeout` has passed.
    fn wait_online(
        &self,
        version: &Version,
        timeout: Duration,
        cancel: &Cancel,
    ) -> anyhow::Result<()> {
        let t0 = Instant::now();
        let mut last = String::from("never tried");
        while t0.elapsed() < timeout {
            cancel.check()?;
            let left = timeout
                .saturating_sub(t0.elapsed())
                .max(Duration::from_secs(1));
            match self
                .dut
                .check(&Command::new(version.online.clone()).timeout(left))
            {
                Ok(_) => return Ok(()),
                Err(e) => last = e.to_string(),
            }
            std::thread::sleep(Duration::from_secs(1).min(timeout.saturating_sub(t0.elapsed())));
        }
        bail!(
            "{}: not online {} s after version `{}` (`{}` never succeeded; last: {last})",
            self.dut.host(),
            timeout.as_secs(),
            version.name,
            display_argv(&version.online)
        )
    }

    /// Records the running kernel of `version` with the results (`lab.json` and
    /// `kernel-config/<name>.txt`).
    fn record_kernel(&mut self, version: &Version) -> anyhow::Result<()> {
        let os = self.os()?;
        let uname = self.dut.run(&["uname", "-a"])?.trim().to_string();
        let text = self
            .dut
            .check(&Command::new(os.kernel_config_argv()))
            .map(|out| out.stdout_text())
            .ok();
        let (source, config) = match &text {
            Some(text) => {
                let (source, config) = text.split_once('\n').unwrap_or((text.as_str(), ""));
                (Some(source.trim()), Some(config))
            }
            None => (None, None),
        };
        let record = VersionRecord {
            uname: Some(uname),
            kernel_config_source: source.map(str::to_string),
            kernel_config: None,
            ..VersionRecord::settings(version)
        };
        self.store.record_version(&version.name, record, config)
    }
}
