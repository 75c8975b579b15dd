//! The plan of an alternating campaign's runs, derived once from the campaign and the layout of
//! its results directory: what the controller (`campaign::alternating`) measures and what the
//! reader (`ingest::alternating`) reads back are the same entries, phases, order, phase values
//! and stopping rule, from this one place.

use std::time::Duration;

use thiserror::Error;

use super::{Alternating, Runs};
use crate::stats::{BalancedOrder, OrderError, PhaseOptions, StopError, StopRule};

/// Why an alternating plan cannot be made of a campaign.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum PlanError {
    /// Fewer than two entries to alternate.
    #[error(transparent)]
    Order(#[from] OrderError),
    /// Settings no stopping rule takes.
    #[error(transparent)]
    Stop(#[from] StopError),
}

/// An alternating campaign's runs: its settings, entries, balanced order, phase values and
/// stopping rule.
#[derive(Debug, Clone)]
pub struct AlternatingPlan<'c> {
    /// `[alternating]` as the campaign holds it: phase, settle, estimator, stopping settings.
    pub(crate) settings: Alternating,
    /// How the runs are laid out: versions alternated in one run, or in turn.
    pub(crate) runs: Runs<'c>,
    /// A run's entry names (config sets, or `<version>.<set>` pairs), baseline first.
    pub(crate) names: Vec<String>,
    /// Which entry each phase of a block runs.
    pub(crate) order: BalancedOrder,
    /// How a phase's short windows become its value.
    pub(crate) phase_options: PhaseOptions,
    /// When a run has measured enough.
    pub(crate) rule: StopRule,
}

impl<'c> AlternatingPlan<'c> {
    /// The plan of `runs.campaign` in the layout `runs` gives (a new run's, or the one its
    /// results directory holds).
    pub(crate) fn new(runs: Runs<'c>) -> Result<Self, PlanError> {
        // A validated alternating campaign holds its settings; a trials one is never planned.
        let settings = runs.campaign.alternating.clone().unwrap_or_default();
        // Every run has as many entries, named alike: the sets, or every (version, set) pair.
        let names: Vec<String> = (runs.entries(0).into_iter())
            .map(|e| runs.entry_name(e))
            .collect();
        let order = BalancedOrder::new(names.len())?;
        let block = settings.block_duration(names.len());
        Ok(Self {
            rule: StopRule::new(settings.stop_options(), block)?,
            phase_options: settings.phase_options(),
            settings,
            runs,
            names,
            order,
        })
    }

    /// How long a block takes: every entry's two phases.
    pub(crate) fn block_duration(&self) -> Duration {
        self.settings.block_duration(self.names.len())
    }
}
