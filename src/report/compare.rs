//! The comparisons of a report: which series each `ministat -s` run compares — an archive's
//! README's tables first, as it made them, then versions per config set and profile, config
//! sets per version and profile, or profiles when nothing else varies, each pair once — at most
//! seven at a time, the reference first, and what ministat says of them.

use crate::stats::doubt::{doubt, Named, TrialValue};
use crate::stats::ministat::MAX_DATASETS;
use crate::stats::{self, Comparison, Confidence, Dataset, MinistatError, MinistatOptions};

use super::select::pairs;
use super::{medians, Report};
use crate::ingest::Series;

/// What one comparison holds fixed, and so what varies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Scope {
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

/// A difference as a verdict prints it: `+4.49% ± 3.77%`.
pub(super) fn difference(c: &Comparison) -> String {
    let decimals = crate::stats::paired::decimals(c.relative_ci_pct, 2);
    format!(
        "{:+.decimals$}% ± {:.decimals$}%",
        c.relative_pct, c.relative_ci_pct
    )
}

/// What the comparison `block` says, in words, after what it holds `fixed`, its members
/// named by `name`.
pub(super) fn block_line<'a>(
    block: &ComparisonBlock,
    fixed: &[impl AsRef<str>],
    name: impl Fn(usize) -> &'a str,
) -> String {
    let fixed: Vec<&str> = fixed.iter().map(AsRef::as_ref).collect();
    let results: Vec<String> = (block.members[1..].iter())
        .zip(&block.comparisons)
        .zip(&block.doubts)
        .map(|((&i, c), doubt)| match (c.significant, doubt) {
            (true, None) => format!("{} {}", name(i), difference(c)),
            // The figure stays visible, but not as a finding.
            (true, Some(why)) => format!(
                "{} no difference shown ({} is unreliable: {why})",
                name(i),
                difference(c)
            ),
            (false, _) => format!("{} no difference proven", name(i)),
        })
        .collect();
    let fixed = if fixed.is_empty() {
        String::new()
    } else {
        format!("{}: ", fixed.join(", "))
    };
    format!(
        "{fixed}{} against {} ({}% confidence):",
        results.join(", "),
        name(block.members[0]),
        block.confidence.percent()
    )
}

impl Scope {
    /// The two names the comparison holds fixed, in the order a verdict names them (an
    /// archive's run without such a level has an empty name there).
    pub(crate) fn fixed(&self) -> [&str; 2] {
        match self {
            Scope::Versions { config, profile } => [config, profile],
            Scope::Configs { version, profile } => [version, profile],
            Scope::Profiles { version, config } => [version, config],
        }
    }
}

/// One `ministat -s` run: a reference series and the series compared with it.
#[derive(Debug, Clone)]
pub(crate) struct ComparisonBlock {
    /// What is held fixed.
    pub(crate) scope: Scope,
    /// Indexes into [`Report::series`]; the first is the reference (`x`).
    pub(crate) members: Vec<usize>,
    /// Student's t comparison of each other member with the reference, in member order.
    pub(crate) comparisons: Vec<Comparison>,
    /// Why each significant comparison is unreliable (`None`: nothing speaks against it), in
    /// member order: trials-design campaigns only ([`stats::doubt`]).
    pub(crate) doubts: Vec<Option<String>>,
    /// ministat's output for these series, byte for byte.
    pub(crate) ministat: String,
    /// The confidence level (95 %, or what an archive's table printed).
    pub(crate) confidence: Confidence,
}

impl Report {
    /// Every difference found unreliable, one line each: `nft-stateful, inet4: acct-on
    /// +4.49 % ± 3.77 % against acct-off is unreliable: …`.
    pub(crate) fn unreliable(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for block in &self.blocks {
            let fixed = self.fixed_labels(&block.scope);
            let reference = &self.series[block.members[0]].legend;
            for ((&k, c), doubt) in (block.members[1..].iter())
                .zip(&block.comparisons)
                .zip(&block.doubts)
            {
                if let Some(why) = doubt {
                    lines.push(format!(
                        "{}: {} {} against {reference} is unreliable: {why}",
                        fixed.join(", "),
                        self.series[k].legend,
                        difference(c)
                    ));
                }
            }
        }
        lines
    }

    /// The name of series `i` by what `scope` varies: its version, config set or profile.
    pub(super) fn varying_label(&self, scope: &Scope, i: usize) -> &str {
        let s = &self.series[i].series;
        self.level_label(scope, [&s.version, &s.config, &s.profile])
    }

    /// The name of the level `scope` varies of a (version, config set, profile).
    pub(super) fn level_label<'a>(&'a self, scope: &Scope, [v, c, p]: [&'a str; 3]) -> &'a str {
        match scope {
            Scope::Versions { .. } => self.version_label(v),
            Scope::Configs { .. } => self.label(c),
            Scope::Profiles { .. } => self.label(p),
        }
    }

    /// The labels of what `scope` holds fixed, levels without a name left out.
    pub(super) fn fixed_labels<'a>(&'a self, scope: &'a Scope) -> Vec<&'a str> {
        (scope.fixed().into_iter())
            .filter(|name| !name.is_empty())
            .map(|name| self.label(name))
            .collect()
    }

    pub(super) fn comparison_blocks(&self) -> Result<Vec<ComparisonBlock>, MinistatError> {
        let mut blocks = Vec::new();
        for table in &self.tables {
            let members = self.table_members(&table.series);
            if let (Some(scope), true) = (self.scope_of(&members), members.len() >= 2) {
                blocks.push(self.block(scope, members, table.confidence)?);
            }
        }
        // A pair an archive's table compared is not compared again, whichever of the two its
        // table took for the reference.
        let made: Vec<(usize, usize)> = (blocks.iter())
            .flat_map(|b| b.members[1..].iter().map(|&k| (b.members[0], k)))
            .collect();
        let compared = |a: usize, b: usize| made.contains(&(a, b)) || made.contains(&(b, a));
        for scope in self.scopes() {
            let mut members = self.members(&scope);
            if let Some(&reference) = members.first() {
                members.retain(|&k| k == reference || !compared(reference, k));
            }
            blocks.extend(self.blocks_for(&scope, &members)?);
        }
        Ok(blocks)
    }

    /// The series of an archive's table (its `series` names) that this report holds with
    /// statistics, in the table's order: it is made again when there are two or more.
    pub(super) fn table_members(&self, series: &[String]) -> Vec<usize> {
        (series.iter())
            .filter_map(|name| self.series.iter().position(|s| &s.series.name == name))
            .filter(|&i| self.series[i].summary.is_some())
            .collect()
    }

    /// benchlab's own comparisons: versions, then config sets, then profiles.
    fn scopes(&self) -> Vec<Scope> {
        let mut scopes = self.level_scopes(&self.profiles);
        // The harness's READMEs compare what varies against the first one: with one version
        // and one config set, that is the traffic profiles.
        if let ([version], [config]) = (self.versions.as_slice(), self.configs.as_slice()) {
            scopes.push(Scope::Profiles {
                version: version.clone(),
                config: config.clone(),
            });
        }
        scopes
    }

    /// The versions compared per config set and profile of `profiles`, then the config sets
    /// per version and profile.
    pub(super) fn level_scopes(&self, profiles: &[String]) -> Vec<Scope> {
        let mut scopes = Vec::new();
        for (config, profile) in pairs(&self.configs, profiles) {
            scopes.push(Scope::Versions { config, profile });
        }
        for (version, profile) in pairs(&self.versions, profiles) {
            scopes.push(Scope::Configs { version, profile });
        }
        scopes
    }

    /// The (version, config set, profile) of each level `scope` compares, in the report's
    /// order: the reference first.
    pub(super) fn cells<'a>(&'a self, scope: &'a Scope) -> Vec<[&'a str; 3]> {
        match scope {
            Scope::Versions { config, profile } => (self.versions.iter())
                .map(|v| [v.as_str(), config, profile])
                .collect(),
            Scope::Configs { version, profile } => (self.configs.iter())
                .map(|c| [version.as_str(), c, profile])
                .collect(),
            Scope::Profiles { version, config } => (self.profiles.iter())
                .map(|p| [version.as_str(), config, p])
                .collect(),
        }
    }

    /// What a table of series holds fixed, when they differ in one level only (version,
    /// config set or profile); `None` when they differ in several.
    pub(super) fn scope_of(&self, members: &[usize]) -> Option<Scope> {
        let (&first, _) = members.split_first()?;
        let s = |i: usize| &self.series[i].series;
        let varies = |level: fn(&Series) -> &String| {
            (members.iter()).any(|&i| level(s(i)) != level(s(first)))
        };
        let (v, c, p) = (
            varies(|s| &s.version),
            varies(|s| &s.config),
            varies(|s| &s.profile),
        );
        let r = s(first).clone();
        match (v, c, p) {
            (_, false, false) => Some(Scope::Versions {
                config: r.config,
                profile: r.profile,
            }),
            (false, true, false) => Some(Scope::Configs {
                version: r.version,
                profile: r.profile,
            }),
            (false, false, true) => Some(Scope::Profiles {
                version: r.version,
                config: r.config,
            }),
            _ => None,
        }
    }

    /// The series with statistics that a scope compares, the reference first.
    fn members(&self, scope: &Scope) -> Vec<usize> {
        (self.cells(scope).into_iter())
            .filter_map(|[v, c, p]| self.find(v, c, p))
            .collect()
    }

    /// One block per 6 compared series (ministat draws 7 datasets at most), each with the
    /// reference first; none when there is nothing to compare with.
    fn blocks_for(
        &self,
        scope: &Scope,
        members: &[usize],
    ) -> Result<Vec<ComparisonBlock>, MinistatError> {
        (chunks(members).into_iter())
            .map(|members| self.block(scope.clone(), members, Confidence::default()))
            .collect()
    }

    fn block(
        &self,
        scope: Scope,
        members: Vec<usize>,
        confidence: Confidence,
    ) -> Result<ComparisonBlock, MinistatError> {
        let datasets: Vec<Dataset> = members
            .iter()
            .map(|&i| {
                Dataset::new(
                    self.series[i].legend.clone(),
                    medians(&self.series[i].series),
                )
            })
            .collect();
        let trials = |i: usize| -> Vec<TrialValue<'_>> {
            (self.series[i].series.iterations.iter())
                .map(|it| TrialValue {
                    index: it.index,
                    value: it.median_pps,
                    troubles: &it.troubles,
                    apart_ns: None,
                })
                .collect()
        };
        let trials: Vec<(&str, Vec<TrialValue<'_>>)> = (members.iter())
            .map(|&i| (self.varying_label(&scope, i), trials(i)))
            .collect();
        self.compared(scope, members, (&datasets, &trials), confidence)
    }

    /// ministat's comparison of `datasets` (each member's values, the reference first) and the
    /// doubts of its differences, over each member's `trials` by name.
    pub(super) fn compared(
        &self,
        scope: Scope,
        members: Vec<usize>,
        (datasets, trials): (&[Dataset], &[(&str, Vec<TrialValue<'_>>)]),
        confidence: Confidence,
    ) -> Result<ComparisonBlock, MinistatError> {
        let options = MinistatOptions {
            flavor: self.flavor,
            separate_bars: true,
            confidence,
            ..MinistatOptions::default()
        };
        let analysis = stats::analyse(datasets, &options)?;
        let comparisons: Vec<Comparison> = (analysis.comparisons.iter())
            .map(|c| c.comparison)
            .collect();
        let reference = (trials[0].0, trials[0].1.as_slice());
        let doubts = (trials[1..].iter().zip(&comparisons))
            .map(|((name, other), c)| self.doubt(reference, (name, other), c))
            .collect();
        Ok(ComparisonBlock {
            scope,
            ministat: analysis.text(),
            comparisons,
            doubts,
            members,
            confidence,
        })
    }

    /// Why the difference of `other` against `reference` is unreliable, with the advice:
    /// significant differences of the trials design only.
    fn doubt(
        &self,
        reference: Named<'_, '_>,
        other: Named<'_, '_>,
        c: &Comparison,
    ) -> Option<String> {
        let advice = self.trials_advice.as_ref().filter(|_| c.significant)?;
        let why = doubt(reference, other, c.relative_pct)?;
        Some(format!("{why}; {advice}"))
    }
}

/// `members` (the reference first) in groups of the reference and at most 6 others: ministat
/// draws 7 datasets at most. None when there is nothing to compare with.
pub(super) fn chunks(members: &[usize]) -> Vec<Vec<usize>> {
    let Some((&reference, others)) = members.split_first() else {
        return Vec::new();
    };
    (others.chunks(MAX_DATASETS - 1))
        .map(|chunk| {
            std::iter::once(reference)
                .chain(chunk.iter().copied())
                .collect()
        })
        .collect()
}
