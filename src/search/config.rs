//! The `[search]` table of the campaign file: search goals, load limits and the two presets.
//!
//! Keys are the reference library's (MLRsearch 1.2.1) field names, which are the draft's terms in
//! snake case: `loss_ratio` is the Goal Loss Ratio, `exceed_ratio` the Goal Exceed Ratio,
//! `relative_width` the Goal Width, `initial_trial_duration` / `final_trial_duration` the Goal
//! Initial / Final Trial Duration, `duration_sum` the Goal Duration Sum. A key left out takes the
//! value of the chosen `preset`, so `preset = "rfc2544"` alone gives 60 s zero-loss trials.
//!
//! Its seconds stay `f64`, unlike the rest of the campaign file's (`std::time::Duration` there):
//! the search does arithmetic on them (sums, shares of a sum, a duration between the initial and
//! final ones) the way the reference library does in float seconds, and its results are checked
//! against that library's; they are range-checked here, where the search reads them.
//!
//! ```toml
//! [search]
//! preset = "mlrsearch"         # or "rfc2544": binary search, 60 s trials, loss 0
//! min_load = 10000             # packets/s; max_load defaults to what the generator can send
//! [[search.goals]]
//! name = "NDR"
//! loss_ratio = 0.0
//! [[search.goals]]
//! name = "PDR"
//! loss_ratio = 0.005
//! exceed_ratio = 0.5
//! ```

use serde::{Deserialize, Serialize};

/// Reference defaults (MLRsearch 1.2.1 `SearchGoal` and `Config`, the draft's recommendations).
pub(crate) mod defaults {
    /// Goal Loss Ratio of the NDR goal.
    pub(crate) const NDR_LOSS_RATIO: f64 = 0.0;
    /// Goal Loss Ratio of the PDR goal.
    pub(crate) const PDR_LOSS_RATIO: f64 = 0.005;
    /// Goal Exceed Ratio: the share of trial seconds at a load that may be bad.
    pub(crate) const EXCEED_RATIO: f64 = 0.5;
    /// Goal Width: relative distance between the final lower and upper bound.
    pub(crate) const RELATIVE_WIDTH: f64 = 0.005;
    /// Goal Initial Trial Duration in seconds.
    pub(crate) const INITIAL_TRIAL_DURATION: f64 = 1.0;
    /// Goal Final Trial Duration in seconds.
    pub(crate) const FINAL_TRIAL_DURATION: f64 = 1.0;
    /// Goal Duration Sum in seconds.
    pub(crate) const DURATION_SUM: f64 = 21.0;
    /// Coarser targets searched before the final one.
    pub(crate) const PRECEDING_TARGETS: u32 = 2;
    /// External search multiplies its width by this.
    pub(crate) const EXPANSION_COEFFICIENT: u32 = 2;
    /// Lowest load in packets/s (the reference's 9001).
    pub(crate) const MIN_LOAD: f64 = 9001.0;
    /// Seconds of trials after which the search gives up (MLRsearch preset).
    pub(crate) const SEARCH_DURATION_MAX: f64 = 1200.0;
    /// Seconds of the discarded warm-up trial at max load.
    pub(crate) const WARMUP_DURATION: f64 = 1.0;
    /// Seconds of each RFC 2544 trial.
    pub(crate) const RFC2544_TRIAL_DURATION: f64 = 60.0;
    /// Seconds of trials after which an RFC 2544 search gives up: ~20 trials of 60 s.
    pub(crate) const RFC2544_SEARCH_DURATION_MAX: f64 = 3600.0;
}

/// Which search runs, and the defaults of every key left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    /// MLRsearch (draft-ietf-bmwg-mlrsearch): NDR (loss 0) and PDR (loss 0.005) goals.
    #[default]
    Mlrsearch,
    /// RFC 2544 section 26.1 throughput: a binary search with 60 s trials and zero loss.
    Rfc2544,
}

/// One search goal: what counts as a good trial, and how precisely and surely to bound it.
/// (Deserialized as written in results, every key present; the campaign file goes through the
/// preset's defaults.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Goal {
    /// Name in reports (`NDR`, `PDR`). Default is `NDR` for loss ratio 0, `PDR` otherwise.
    pub(crate) name: String,
    /// Goal Loss Ratio: a trial with a higher loss ratio is bad. Default is 0 (NDR).
    pub(crate) loss_ratio: f64,
    /// Goal Exceed Ratio: share of the duration sum that may be bad at a lower bound.
    /// Default is 0.5 (0 for rfc2544).
    pub(crate) exceed_ratio: f64,
    /// Goal Width: the search ends when (upper - lower) / upper is at most this. Default is 0.005.
    pub(crate) relative_width: f64,
    /// Goal Initial Trial Duration in seconds. Default is 1 (60 for rfc2544).
    pub(crate) initial_trial_duration: f64,
    /// Goal Final Trial Duration in seconds. Default is 1 (60 for rfc2544).
    pub(crate) final_trial_duration: f64,
    /// Goal Duration Sum in seconds: trial time needed to classify a load. Default is 21 (60 for
    /// rfc2544).
    pub(crate) duration_sum: f64,
    /// Coarser targets (2x width each, shorter duration sums) before the final one. Default is 2
    /// (0 for rfc2544).
    pub(crate) preceding_targets: u32,
    /// External search multiplies its step by this. Default is 2.
    pub(crate) expansion_coefficient: u32,
}

/// The `[search]` table, every default filled in from its preset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "SearchFile")]
pub struct SearchConfig {
    /// The algorithm and the defaults. Default is `mlrsearch`.
    pub preset: Preset,
    /// Search goals, searched at once. Default: the preset's (NDR + PDR, or NDR alone).
    pub goals: Vec<Goal>,
    /// Lowest load tried, packets/s. Default is 9001.
    pub min_load: f64,
    /// Highest load tried, packets/s. Default: what the generator can send.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_load: Option<f64>,
    /// Seconds of trials (the sum of their durations) after which the search stops with what it
    /// has. Default is 1200 (3600 for rfc2544).
    pub search_duration_max: f64,
    /// Seconds of the warm-up trial at max load, whose result is discarded; 0: none. Default is 1
    /// (0 for rfc2544).
    pub warmup_duration: f64,
}

/// A key of the `[search]` table out of range; the message names the key and the allowed range.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("key `search.{key}` = {value}: {expected}")]
pub struct SearchConfigError {
    /// Full key below `search` (e.g. `goals[1].exceed_ratio`).
    pub(crate) key: String,
    /// The value given, as written.
    pub(crate) value: String,
    /// What would be accepted.
    pub(crate) expected: String,
}

/// The longest a search may take, and any of its durations, in seconds (11 days): past it a
/// value is a typo, and `1e300` would overflow the durations computed from it.
const MAX_SECONDS: f64 = 1e6;

/// The most goals a search has: each is a series of the report, searched at once.
const MAX_GOALS: usize = 16;

/// Above any generator's rate, in packets/s; the grid also needs a finite log ratio.
const MAX_LOAD: f64 = 1e15;

fn bad(key: impl Into<String>, value: impl ToString, expected: &str) -> SearchConfigError {
    let value = value.to_string();
    // 1e300 would print as 301 digits.
    let value = match value.parse::<f64>() {
        Ok(v) if value.len() > 16 => format!("{v:e}"),
        _ => value,
    };
    SearchConfigError {
        key: key.into(),
        value,
        expected: expected.to_string(),
    }
}

impl Goal {
    /// The MLRsearch goal of loss ratio `loss_ratio` with every other attribute at the reference
    /// default.
    pub(crate) fn mlrsearch(name: &str, loss_ratio: f64) -> Self {
        Self {
            name: name.to_string(),
            loss_ratio,
            exceed_ratio: defaults::EXCEED_RATIO,
            relative_width: defaults::RELATIVE_WIDTH,
            initial_trial_duration: defaults::INITIAL_TRIAL_DURATION,
            final_trial_duration: defaults::FINAL_TRIAL_DURATION,
            duration_sum: defaults::DURATION_SUM,
            preceding_targets: defaults::PRECEDING_TARGETS,
            expansion_coefficient: defaults::EXPANSION_COEFFICIENT,
        }
    }

    /// RFC 2544's goal: one 60 s trial per load, zero loss.
    pub(crate) fn rfc2544() -> Self {
        Self {
            exceed_ratio: 0.0,
            initial_trial_duration: defaults::RFC2544_TRIAL_DURATION,
            final_trial_duration: defaults::RFC2544_TRIAL_DURATION,
            duration_sum: defaults::RFC2544_TRIAL_DURATION,
            preceding_targets: 0,
            ..Self::mlrsearch("NDR", defaults::NDR_LOSS_RATIO)
        }
    }

    /// Checks the goal's ranges (the reference's `SearchGoal.validate`); `at` is its key prefix.
    fn validate(&self, at: &str) -> Result<(), SearchConfigError> {
        let unit = |key: &str, v: f64, lo_open: bool| -> Result<(), SearchConfigError> {
            let ok = v.is_finite() && v < 1.0 && (v > 0.0 || (!lo_open && v == 0.0));
            let range = if lo_open { "0 < x < 1" } else { "0 <= x < 1" };
            ok.then_some(())
                .ok_or_else(|| bad(format!("{at}.{key}"), v, &format!("expected {range}")))
        };
        unit("loss_ratio", self.loss_ratio, false)?;
        unit("exceed_ratio", self.exceed_ratio, false)?;
        unit("relative_width", self.relative_width, true)?;
        let seconds = |key: &str, v: f64, min: f64, what: &str| {
            (v.is_finite() && v >= min && v > 0.0 && v <= MAX_SECONDS)
                .then_some(())
                .ok_or_else(|| bad(format!("{at}.{key}"), v, what))
        };
        let initial = self.initial_trial_duration;
        seconds(
            "initial_trial_duration",
            initial,
            0.0,
            "expected seconds > 0, at most 1e6",
        )?;
        seconds(
            "final_trial_duration",
            self.final_trial_duration,
            initial,
            "expected seconds >= initial_trial_duration, at most 1e6",
        )?;
        seconds(
            "duration_sum",
            self.duration_sum,
            self.final_trial_duration,
            "expected seconds >= final_trial_duration, at most 1e6",
        )?;
        if self.expansion_coefficient < 2 {
            let key = format!("{at}.expansion_coefficient");
            return Err(bad(key, self.expansion_coefficient, "expected 2 or more"));
        }
        // Without a preceding target the first trials must already be final ones.
        if self.preceding_targets == 0 && initial < self.duration_sum {
            let key = format!("{at}.preceding_targets");
            let what = "expected 1 or more while initial_trial_duration < duration_sum";
            return Err(bad(key, 0, what));
        }
        if self.preceding_targets > 16 {
            let key = format!("{at}.preceding_targets");
            return Err(bad(key, self.preceding_targets, "expected at most 16"));
        }
        Ok(())
    }
}

impl SearchConfig {
    /// The MLRsearch preset: NDR (loss 0) and PDR (loss 0.005) at the reference defaults.
    pub fn mlrsearch() -> Self {
        Self {
            preset: Preset::Mlrsearch,
            goals: vec![
                Goal::mlrsearch("NDR", defaults::NDR_LOSS_RATIO),
                Goal::mlrsearch("PDR", defaults::PDR_LOSS_RATIO),
            ],
            min_load: defaults::MIN_LOAD,
            max_load: None,
            search_duration_max: defaults::SEARCH_DURATION_MAX,
            warmup_duration: defaults::WARMUP_DURATION,
        }
    }

    /// The RFC 2544 preset: binary search, one 60 s trial per load, zero loss, no warm-up.
    pub(crate) fn rfc2544() -> Self {
        Self {
            preset: Preset::Rfc2544,
            goals: vec![Goal::rfc2544()],
            search_duration_max: defaults::RFC2544_SEARCH_DURATION_MAX,
            warmup_duration: 0.0,
            ..Self::mlrsearch()
        }
    }

    /// The search shrunk for a smoke run (`benchlab run --quick`): trials of a second, a load
    /// decided on 3 s of them (one trial without preceding targets), a 2 % width, at most 60 s
    /// of trials. It checks that the search runs and reports, not its precision: at MLRsearch's
    /// 21 s per load a search stopped at 30 s had found no bound at all.
    pub(crate) fn quicken(&mut self) {
        for g in &mut self.goals {
            g.initial_trial_duration = g.initial_trial_duration.min(1.0);
            g.final_trial_duration = g.final_trial_duration.min(1.0);
            g.duration_sum = match g.preceding_targets {
                0 => g.initial_trial_duration,
                _ => g.duration_sum.min(3.0),
            }
            .max(g.final_trial_duration);
            g.relative_width = g.relative_width.max(0.02);
        }
        self.search_duration_max = self.search_duration_max.min(60.0);
    }

    /// The preset's configuration.
    pub(crate) fn preset(preset: Preset) -> Self {
        match preset {
            Preset::Mlrsearch => Self::mlrsearch(),
            Preset::Rfc2544 => Self::rfc2544(),
        }
    }

    /// Checks every key: finite, in range, min_load < max_load, goals present with unique names.
    pub(crate) fn validate(&self) -> Result<(), SearchConfigError> {
        if self.goals.is_empty() {
            return Err(bad("goals", "[]", "expected at least one goal"));
        }
        if self.goals.len() > MAX_GOALS {
            let what = format!("expected at most {MAX_GOALS} goals");
            return Err(bad("goals", format!("{} goals", self.goals.len()), &what));
        }
        for (i, goal) in self.goals.iter().enumerate() {
            // A goal's name is part of its series' file names (`<…>.<profile>-<goal>.pps`).
            if let Err(problem) = crate::names::check(&goal.name) {
                let key = format!("goals[{i}].name");
                return Err(SearchConfigError {
                    key,
                    value: format!("`{}`", crate::error::shown(&goal.name)),
                    expected: problem,
                });
            }
            goal.validate(&format!("goals[{i}]"))?;
            if self.goals[..i].iter().any(|g| g.name == goal.name) {
                let key = format!("goals[{i}].name");
                return Err(bad(key, &goal.name, "expected a name no other goal has"));
            }
        }
        if !(self.min_load.is_finite() && self.min_load > 0.0 && self.min_load < MAX_LOAD) {
            let what = "expected packets/s > 0, below 1e15";
            return Err(bad("min_load", self.min_load, what));
        }
        if let Some(max) = self.max_load {
            self.check_max_load(max).map_err(|mut e| {
                e.key = "max_load".to_string();
                e
            })?;
        }
        let d = self.search_duration_max;
        if !(d.is_finite() && d > 0.0 && d <= MAX_SECONDS) {
            let what = "expected seconds > 0, at most 1e6";
            return Err(bad("search_duration_max", d, what));
        }
        let w = self.warmup_duration;
        if !(w.is_finite() && (0.0..=MAX_SECONDS).contains(&w)) {
            let what = "expected seconds >= 0 (0: none), at most 1e6";
            return Err(bad("warmup_duration", w, what));
        }
        Ok(())
    }

    /// Checks a max load against min_load: finite and above it. The key named is `max_load`,
    /// also when the value comes from the generator.
    pub(crate) fn check_max_load(&self, max: f64) -> Result<(), SearchConfigError> {
        // The grid needs a finite log ratio and room for at least one goal width.
        if max.is_finite() && max > self.min_load * 1.0001 && max < MAX_LOAD {
            Ok(())
        } else {
            let what = format!(
                "expected packets/s above min_load ({}), below 1e15",
                self.min_load
            );
            Err(bad("max_load", max, &what))
        }
    }
}

impl Default for SearchConfig {
    fn default() -> Self {
        Self::mlrsearch()
    }
}

/// The `[search]` table as written: every key optional, filled in from the preset.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchFile {
    #[serde(default)]
    preset: Preset,
    goals: Option<Vec<GoalFile>>,
    #[serde(default, deserialize_with = "crate::units::de_rate")]
    min_load: Option<f64>,
    #[serde(default, deserialize_with = "crate::units::de_rate")]
    max_load: Option<f64>,
    search_duration_max: Option<f64>,
    warmup_duration: Option<f64>,
}

/// One `[[search.goals]]` entry as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GoalFile {
    name: Option<String>,
    loss_ratio: Option<f64>,
    exceed_ratio: Option<f64>,
    relative_width: Option<f64>,
    initial_trial_duration: Option<f64>,
    final_trial_duration: Option<f64>,
    duration_sum: Option<f64>,
    preceding_targets: Option<u32>,
    expansion_coefficient: Option<u32>,
}

impl GoalFile {
    fn fill(self, preset: &Goal) -> Goal {
        let loss_ratio = self.loss_ratio.unwrap_or(preset.loss_ratio);
        let default_name = if loss_ratio == 0.0 { "NDR" } else { "PDR" };
        Goal {
            name: self.name.unwrap_or_else(|| default_name.to_string()),
            loss_ratio,
            exceed_ratio: self.exceed_ratio.unwrap_or(preset.exceed_ratio),
            relative_width: self.relative_width.unwrap_or(preset.relative_width),
            initial_trial_duration: self
                .initial_trial_duration
                .unwrap_or(preset.initial_trial_duration),
            final_trial_duration: self
                .final_trial_duration
                .unwrap_or(preset.final_trial_duration),
            duration_sum: self.duration_sum.unwrap_or(preset.duration_sum),
            preceding_targets: self.preceding_targets.unwrap_or(preset.preceding_targets),
            expansion_coefficient: self
                .expansion_coefficient
                .unwrap_or(preset.expansion_coefficient),
        }
    }
}

impl TryFrom<SearchFile> for SearchConfig {
    type Error = SearchConfigError;

    fn try_from(file: SearchFile) -> Result<Self, Self::Error> {
        let base = SearchConfig::preset(file.preset);
        // A goal written in the file takes its missing keys from the preset's first goal.
        let template = base.goals[0].clone();
        let config = SearchConfig {
            preset: file.preset,
            goals: match file.goals {
                Some(goals) => goals.into_iter().map(|g| g.fill(&template)).collect(),
                None => base.goals,
            },
            min_load: file.min_load.unwrap_or(base.min_load),
            max_load: file.max_load,
            search_duration_max: file.search_duration_max.unwrap_or(base.search_duration_max),
            warmup_duration: file.warmup_duration.unwrap_or(base.warmup_duration),
        };
        config.validate()?;
        Ok(config)
    }
}
