//! The design of an alternating campaign as a directory holds it, and the runs it still has
//! to measure: what `run` measures and `--resume` checks before it builds a lab.

use super::{AlternatingPlan, Alternation, Campaign, Decision, Runs, Store, Unit};
use crate::store::TrialKey;

impl<'c> Alternation<'c> {
    /// The design of `campaign`, in the layout `store` holds.
    pub(crate) fn new(campaign: &'c Campaign, store: &Store) -> anyhow::Result<Self> {
        // A directory started before versions alternated goes on in its own layout.
        let runs = Runs {
            campaign,
            alternates: store.alternates_versions(campaign)?,
        };
        Ok(Alternation {
            campaign,
            plan: AlternatingPlan::new(runs)?,
        })
    }

    /// The runs of the campaign: one per version and profile, or one per profile when the
    /// versions alternate.
    pub(crate) fn runs(&self) -> usize {
        self.plan.runs.per_profile() * self.campaign.profiles.len()
    }

    /// Whether the run of `version` and `profile` has blocks left to measure: its stopping rule
    /// has not ended it.
    pub(super) fn blocks_left(
        &self,
        store: &Store,
        version: &str,
        profile: &str,
    ) -> anyhow::Result<bool> {
        Ok(!store.run_ended(version, profile)?
            && self.decide(&self.stored(store, version, profile)?) == Decision::Continue)
    }

    /// The runs still to measure (none ended by their stopping rule yet, or their latency run
    /// left): what `--resume` checks before it builds a lab.
    pub(crate) fn todo(&self, store: &Store) -> anyhow::Result<Vec<Unit<'c>>> {
        let mut todo = Vec::new();
        for version in 0..self.plan.runs.per_profile() {
            for profile in &self.campaign.profiles {
                let key = self.plan.runs.run_version(version);
                let unit = Unit {
                    key: TrialKey {
                        version: key,
                        config: self.plan.names.join("+"),
                        profile: profile.name.clone(),
                        iteration: 0,
                    },
                    // Alternated versions are applied by the switches, under traffic.
                    version: (!self.plan.runs.alternates).then_some(version),
                    config: None,
                    profile,
                };
                // A run its stopping rule ended is over: resuming it measures no more blocks,
                // only its latency run if that is left.
                let (v, p) = (unit.key.version.as_str(), profile.name.as_str());
                if self.blocks_left(store, v, p)? || self.latency_todo(store, &unit)? {
                    todo.push(unit);
                }
            }
        }
        Ok(todo)
    }
}
