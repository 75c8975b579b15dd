//! The comparisons of a report: which series each `ministat -s` run compares (versions per
//! config set and profile, config sets per version and profile, or profiles when nothing else
//! varies), at most seven at a time, the reference first, and what ministat says of them.

use crate::stats::ministat::MAX_DATASETS;
use crate::stats::{self, Comparison, Dataset, MinistatError, MinistatOptions};

use super::select::pairs;
use super::{medians, Report};

/// What one comparison holds fixed, and so what varies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The versions compared, for one config set and traffic profile.
    Versions {
        /// The config set.
        config: String,
        /// The traffic profile.
        profile: String,
    },
    /// The config sets compared, for one version and traffic profile.
    Configs {
        /// The version.
        version: String,
        /// The traffic profile.
        profile: String,
    },
    /// The traffic profiles (sizes, settings) compared, when the run has one version and one
    /// config set and so nothing else to compare.
    Profiles {
        /// The version.
        version: String,
        /// The config set.
        config: String,
    },
}

/// One `ministat -s` run: a reference series and the series compared with it.
#[derive(Debug, Clone)]
pub struct ComparisonBlock {
    /// What is held fixed.
    pub scope: Scope,
    /// Indexes into [`Report::series`]; the first is the reference (`x`).
    pub members: Vec<usize>,
    /// Student's t comparison of each other member with the reference, in member order.
    pub comparisons: Vec<Comparison>,
    /// ministat's output for these series, byte for byte.
    pub ministat: String,
}

impl Report {
    pub(super) fn comparison_blocks(&self) -> Result<Vec<ComparisonBlock>, MinistatError> {
        let mut scopes = Vec::new();
        for (config, profile) in pairs(&self.configs, &self.profiles) {
            scopes.push(Scope::Versions { config, profile });
        }
        for (version, profile) in pairs(&self.versions, &self.profiles) {
            scopes.push(Scope::Configs { version, profile });
        }
        // The harness's READMEs compare what varies against the first one: with one version
        // and one config set, that is the traffic profiles.
        if let ([version], [config]) = (self.versions.as_slice(), self.configs.as_slice()) {
            scopes.push(Scope::Profiles {
                version: version.clone(),
                config: config.clone(),
            });
        }
        let mut blocks = Vec::new();
        for scope in scopes {
            let members = self.members(&scope);
            blocks.extend(self.blocks_for(&scope, &members)?);
        }
        Ok(blocks)
    }

    /// The series with statistics that a scope compares, the reference first.
    fn members(&self, scope: &Scope) -> Vec<usize> {
        match scope {
            Scope::Versions { config, profile } => (self.versions.iter())
                .filter_map(|v| self.find(v, config, profile))
                .collect(),
            Scope::Configs { version, profile } => (self.configs.iter())
                .filter_map(|c| self.find(version, c, profile))
                .collect(),
            Scope::Profiles { version, config } => (self.profiles.iter())
                .filter_map(|p| self.find(version, config, p))
                .collect(),
        }
    }

    /// One block per 6 compared series (ministat draws 7 datasets at most), each with the
    /// reference first; none when there is nothing to compare with.
    fn blocks_for(
        &self,
        scope: &Scope,
        members: &[usize],
    ) -> Result<Vec<ComparisonBlock>, MinistatError> {
        let Some((&reference, others)) = members.split_first() else {
            return Ok(Vec::new());
        };
        others
            .chunks(MAX_DATASETS - 1)
            .map(|chunk| {
                let members = std::iter::once(reference).chain(chunk.iter().copied());
                self.block(scope.clone(), members.collect())
            })
            .collect()
    }

    fn block(&self, scope: Scope, members: Vec<usize>) -> Result<ComparisonBlock, MinistatError> {
        let datasets: Vec<Dataset> = members
            .iter()
            .map(|&i| {
                Dataset::new(
                    self.series[i].legend.clone(),
                    medians(&self.series[i].series),
                )
            })
            .collect();
        let options = MinistatOptions {
            flavor: self.flavor,
            separate_bars: true,
            ..MinistatOptions::default()
        };
        let analysis = stats::analyse(&datasets, &options)?;
        Ok(ComparisonBlock {
            scope,
            ministat: analysis.text(),
            comparisons: analysis
                .comparisons
                .into_iter()
                .map(|c| c.comparison)
                .collect(),
            members,
        })
    }
}
