//! The measurement designs behind one trait: the trials design (a trial, measured once more
//! when disturbed), the throughput search (a search per iteration) and the alternating design
//! (config sets switched under continuous traffic). `run` chooses each unit's design, in one
//! place, and sets the lab's version and config set before handing the unit over.

use std::time::Instant;

use super::context::Context;
use crate::config::Profile;
use crate::store::TrialKey;

/// How a design measures its units.
pub(crate) trait Design {
    /// Before the first unit: records what the whole campaign applies (nothing, for most).
    fn begin(&mut self, _ctx: &mut Context<'_>) -> anyhow::Result<()> {
        Ok(())
    }
    /// Measures `unit`, whose turn came at `since` (before its version and config set were
    /// applied), stores and reports it; returns the trials (blocks) it measured.
    fn measure(
        &mut self,
        ctx: &mut Context<'_>,
        unit: &Unit<'_>,
        since: Instant,
    ) -> anyhow::Result<usize>;
}

/// One unit of a campaign's measurements and what the lab is set to before it.
#[derive(Debug, Clone)]
pub(crate) struct Unit<'c> {
    /// The planned trial (a search's iteration); for an alternating run, its version (the
    /// versions joined by `+` when they alternate), its entries joined by `+` and its profile
    /// (the run numbers its segments).
    pub(crate) key: TrialKey,
    /// The index of the version the lab puts on the DUT first; `None` when the design switches
    /// the versions itself, under traffic.
    pub(crate) version: Option<usize>,
    /// The config set the lab applies first; `None` when the design switches the sets itself.
    pub(crate) config: Option<&'c String>,
    /// The traffic.
    pub(crate) profile: &'c Profile,
}
