//! The design of an alternating campaign as a directory holds it, and the runs it still has
//! to measure: what `run` measures and `--resume` checks before it builds a lab.

use super::{BalancedOrder, Campaign, Decision, Design, Profile, Runs, StopRule, Store};

/// How many alternating runs of `campaign` are still to measure in `store` (none ended by
/// their stopping rule yet): what `--resume` checks before it builds a lab.
pub fn pending(campaign: &Campaign, store: &Store) -> anyhow::Result<usize> {
    Ok(Design::new(campaign, store)?.todo(store)?.len())
}

impl<'c> Design<'c> {
    /// The design of `campaign`, in the layout `store` holds.
    pub(super) fn new(campaign: &'c Campaign, store: &Store) -> anyhow::Result<Self> {
        let settings = campaign.alternating.clone().unwrap_or_default();
        // A directory started before versions alternated goes on in its own layout.
        let runs = Runs {
            campaign,
            alternates: store.alternates_versions(campaign)?,
        };
        let names: Vec<String> = (runs.entries(0).into_iter())
            .map(|e| runs.entry_name(e))
            .collect();
        let order = BalancedOrder::new(names.len())?;
        let block = settings.block_duration(names.len());
        Ok(Design {
            rule: StopRule::new(settings.stop_options(), block)?,
            options: settings.phase_options(),
            campaign,
            settings,
            names,
            runs,
            order,
        })
    }

    /// The (version index, profile) runs still to measure.
    pub(super) fn todo(&self, store: &Store) -> anyhow::Result<Vec<(usize, &'c Profile)>> {
        let mut todo = Vec::new();
        for version in 0..self.runs.per_profile() {
            for profile in &self.campaign.profiles {
                let key = self.runs.run_version(version);
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
