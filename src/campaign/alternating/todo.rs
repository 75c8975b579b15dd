//! The design of an alternating campaign as a directory holds it, and the runs it still has
//! to measure: what `run` measures and `--resume` checks before it builds a lab.

use super::{AlternatingPlan, Campaign, Decision, Design, Profile, Runs, Store};

/// How many alternating runs of `campaign` are still to measure in `store` (none ended by
/// their stopping rule yet): what `--resume` checks before it builds a lab.
pub fn pending(campaign: &Campaign, store: &Store) -> anyhow::Result<usize> {
    Ok(Design::new(campaign, store)?.todo(store)?.len())
}

impl<'c> Design<'c> {
    /// The design of `campaign`, in the layout `store` holds.
    pub(super) fn new(campaign: &'c Campaign, store: &Store) -> anyhow::Result<Self> {
        // A directory started before versions alternated goes on in its own layout.
        let runs = Runs {
            campaign,
            alternates: store.alternates_versions(campaign)?,
        };
        Ok(Design {
            campaign,
            plan: AlternatingPlan::new(runs)?,
        })
    }

    /// The (version index, profile) runs still to measure.
    pub(super) fn todo(&self, store: &Store) -> anyhow::Result<Vec<(usize, &'c Profile)>> {
        let mut todo = Vec::new();
        for version in 0..self.plan.runs.per_profile() {
            for profile in &self.campaign.profiles {
                let key = self.plan.runs.run_version(version);
                // A run its stopping rule ended is over: resuming it measures nothing more.
                if store.run_ended(&key, &profile.name)? {
                    continue;
                }
                let blocks = self.stored(store, &key, &profile.name)?;
                if self.decide(&blocks) == Decision::Continue {
                    todo.push((version, profile));
                }
            }
        }
        Ok(todo)
    }
}
