//! What every design of a campaign works with, built once: the validated campaign, its results
//! directory, the lab it runs on (built here, taken down by [`run`]), the cancellation Ctrl-C
//! raises and where progress goes.
//!
//! [`run`]: crate::campaign::run::run

use std::time::Duration;

use anyhow::Context as _;

use super::bench::{Bench, Event};
use super::ssh::SshBench;
use super::virt::VirtualBench;
use crate::cancel::Cancel;
use crate::config::Campaign;
use crate::error::InputError;
use crate::lab::Lab;
use crate::store::Store;

/// A campaign ready to run: its designs measure through the lab into the store, and report
/// progress as [`Event`]s.
pub struct Context<'a> {
    /// The campaign, validated once at load.
    pub(crate) campaign: &'a Campaign,
    /// Its results directory.
    pub store: &'a Store,
    /// The lab kind it runs on.
    pub bench: Box<dyn Bench + 'a>,
    /// Raised by Ctrl-C: the campaign stops between trials, keeping what it measured.
    pub(crate) cancel: &'a Cancel,
    /// Where progress goes (the CLI shows it).
    pub(crate) on_event: &'a mut dyn FnMut(&Event<'_>),
}

impl<'a> Context<'a> {
    /// Builds the campaign's lab (the virtual lab, or its SSH hosts), its profiling captures
    /// starting `capture_delay` late when given (tests that misplace a capture on purpose), and
    /// makes a first Ctrl-C only raise `cancel`.
    pub fn up(
        campaign: &'a Campaign,
        store: &'a Store,
        cancel: &'a Cancel,
        capture_delay: Option<Duration>,
        on_event: &'a mut dyn FnMut(&Event<'_>),
    ) -> anyhow::Result<Self> {
        // First Ctrl-C: finish cleaning up the running trial and stop; a second one: tear the
        // lab down at once.
        crate::lab::stop_gracefully_on_signal(cancel);
        let bench: Box<dyn Bench> = match campaign.lab.ssh_lab().map_err(InputError::new)? {
            Some(lab) => Box::new(SshBench::new(lab, campaign, store.dir())?),
            None => {
                let lab = Lab::up(&campaign.lab).context("building the virtual lab")?;
                let mut bench = VirtualBench::new(lab, campaign)?;
                if let Some(delay) = capture_delay {
                    bench.delay_captures(delay);
                }
                Box::new(bench)
            }
        };
        Ok(Self::new(campaign, store, bench, cancel, on_event))
    }

    /// A campaign on a lab already built (`bench`), which [`run`](super::run::run) takes down.
    pub(crate) fn new(
        campaign: &'a Campaign,
        store: &'a Store,
        bench: Box<dyn Bench + 'a>,
        cancel: &'a Cancel,
        on_event: &'a mut dyn FnMut(&Event<'_>),
    ) -> Self {
        Self {
            campaign,
            store,
            bench,
            cancel,
            on_event,
        }
    }

    /// Reports `event`.
    pub(crate) fn event(&mut self, event: &Event<'_>) {
        (self.on_event)(event)
    }

    /// Takes the lab down, saying what failed.
    pub(crate) fn down(self) -> anyhow::Result<()> {
        self.bench.down()
    }
}
