//! A campaign is checked once, when it is loaded, before any lab is built or any DUT touched:
//! every number is finite and in range, every name fits a results path, every command is
//! non-empty and every flow range parses. The error names the file and the key.

use std::path::Path;

use super::{bad, defaults, min_frame, Campaign, Design};
use crate::error::InputError;

/// The most iterations a campaign may ask for: more would only fill the disk.
pub const MAX_ITERATIONS: u32 = 10_000;
/// The longest trial, warm-up or cool-down, in seconds (a day).
pub const MAX_SECONDS: f64 = 86_400.0;
/// The longest name of a version, config set or profile (it is part of a directory name).
pub const MAX_NAME: usize = 64;

impl Campaign {
    /// Checks ranges, names and references; the error names the key.
    pub fn validate(&self, origin: &str, known_sets: &[&str]) -> Result<(), InputError> {
        self.lab
            .validate()
            .map_err(|msg| InputError::new(format!("{origin}: [lab] {msg}")))?;
        if !(1..=MAX_ITERATIONS).contains(&self.iterations) {
            return Err(bad(
                origin,
                "iterations",
                format!("must be 1 to {MAX_ITERATIONS}, not {}", self.iterations),
            ));
        }
        self.validate_trial(origin)?;
        check_names(
            origin,
            "versions",
            self.versions.iter().map(|v| v.name.as_str()),
        )?;
        if self.profiles.is_empty() {
            return Err(bad(origin, "profiles", "list at least one traffic profile"));
        }
        check_names(
            origin,
            "profiles",
            self.profiles.iter().map(|p| p.name.as_str()),
        )?;
        self.validate_sets(origin, known_sets)?;
        self.validate_profiles(origin)?;
        self.validate_design(origin)?;
        self.validate_search(origin)?;
        self.validate_commands(origin)
    }

    /// The alternating design needs two entries to switch between (config sets, or quick
    /// versions), no throughput search or profiling trial, and settings in range.
    fn validate_design(&self, origin: &str) -> Result<(), InputError> {
        if self.alternating.is_none() {
            return Ok(());
        }
        if self.design != Design::Alternating {
            return Err(bad(
                origin,
                "alternating",
                "is for design = \"alternating\": remove it or set the design",
            ));
        }
        self.validate_alternating(origin)?;
        if self.alternated_entries() < 2 {
            return Err(bad(
                origin,
                "config_sets",
                "the alternating design compares what it switches between: list at least two \
                 config sets, or two versions made of sysctls and commands only; or use \
                 design = \"trials\"",
            ));
        }
        if let Some(p) = (self.profiles.iter()).find(|p| p.measure == super::Measure::Throughput) {
            return Err(bad(
                origin,
                "profiles",
                format!(
                    "profile `{}` searches a throughput, trial by trial: use design = \"trials\"",
                    p.name
                ),
            ));
        }
        if self.profile {
            return Err(bad(
                origin,
                "profile",
                "profiling trials belong to design = \"trials\": run the flamegraphs as a \
                 separate trials campaign",
            ));
        }
        Ok(())
    }

    /// `[alternating]`'s settings in range, whichever design runs: checked before
    /// `design = "auto"` settles, which drops the table when the campaign runs trials.
    pub(super) fn validate_alternating(&self, origin: &str) -> Result<(), InputError> {
        match self.alternating.as_ref().and_then(|alt| alt.problem()) {
            Some((key, problem)) => Err(bad(origin, key, problem)),
            None => Ok(()),
        }
    }

    /// `[search]` in range, used by a throughput profile, below each such profile's fixed rate.
    fn validate_search(&self, origin: &str) -> Result<(), InputError> {
        let search = self.search();
        search
            .validate()
            .map_err(|e| InputError::new(format!("{origin}: {e}")))?;
        let throughput = |p: &&super::Profile| p.measure == super::Measure::Throughput;
        if self.search.is_some() && !self.profiles.iter().any(|p| throughput(&p)) {
            return Err(bad(
                origin,
                "search",
                "no profile has measure = \"throughput\"; add it to a profile or remove [search]",
            ));
        }
        for (i, p) in self
            .profiles
            .iter()
            .enumerate()
            .filter(|(_, p)| throughput(p))
        {
            if let (crate::traffic::Rate::Pps(pps), None) = (p.rate, search.max_load) {
                search.check_max_load(pps as f64).map_err(|e| {
                    bad(
                        origin,
                        &format!("profiles[{i}].rate"),
                        format!("{pps}: the search's max load, {}", e.expected),
                    )
                })?;
            }
        }
        Ok(())
    }

    fn validate_trial(&self, origin: &str) -> Result<(), InputError> {
        let t = &self.trial;
        for (key, value) in [
            ("trial.duration", t.duration),
            ("trial.warmup", t.warmup),
            ("trial.cooldown", t.cooldown),
        ] {
            seconds(origin, key, value)?;
        }
        if t.measured_seconds() < defaults::MIN_MEASURED_S {
            return Err(bad(
                origin,
                "trial.duration",
                format!(
                    "{}s of traffic leaves {} whole second(s) once warm-up ({}s) and cool-down \
                     ({}s) are dropped, {} needed; make the trial longer",
                    t.duration,
                    t.measured_seconds(),
                    t.warmup,
                    t.cooldown,
                    defaults::MIN_MEASURED_S
                ),
            ));
        }
        for (i, v) in self.versions.iter().enumerate() {
            if let Some(secs) = v.online_timeout {
                seconds(origin, &format!("versions[{i}].online_timeout"), secs)?;
            }
        }
        Ok(())
    }

    fn validate_sets(&self, origin: &str, known_sets: &[&str]) -> Result<(), InputError> {
        if self.config_sets.is_empty() {
            return Err(bad(origin, "config_sets", "list at least one config set"));
        }
        for set in &self.config_sets {
            if !known_sets.contains(&set.as_str()) && !Path::new(set).is_dir() {
                return Err(bad(
                    origin,
                    "config_sets",
                    format!(
                        "`{}` is neither a built-in config set ({}) nor a directory",
                        set.escape_debug(),
                        known_sets.join(", ")
                    ),
                ));
            }
        }
        check_names(origin, "config_sets", self.config_set_names())
    }

    fn validate_profiles(&self, origin: &str) -> Result<(), InputError> {
        for (i, p) in self.profiles.iter().enumerate() {
            let min = min_frame(p.af);
            let max = crate::traffic::packet::MAX_FRAME as u32;
            if !(min..=max).contains(&p.frame_size()) {
                return Err(bad(
                    origin,
                    &format!("profiles[{i}].frame_size"),
                    format!(
                        "{} is outside {min}…{max} bytes, the {} range (FCS included)",
                        p.frame_size(),
                        p.af
                    ),
                ));
            }
            for (key, range) in [("src", p.src()), ("dst", p.dst())] {
                range
                    .parse::<crate::traffic::packet::FlowRange>()
                    .map_err(|e| bad(origin, &format!("profiles[{i}].{key}"), e.0))?;
            }
        }
        Ok(())
    }

    fn validate_commands(&self, origin: &str) -> Result<(), InputError> {
        const EMPTY_COMMAND: &str =
            "empty command: give the program and its arguments, as [\"sysctl\", \"-a\"], or remove it";
        for (i, v) in self.versions.iter().enumerate() {
            if let Some(c) = v.commands.iter().position(Vec::is_empty) {
                return Err(bad(
                    origin,
                    &format!("versions[{i}].commands[{c}]"),
                    EMPTY_COMMAND,
                ));
            }
        }
        for (key, list) in [
            ("hooks.before", &self.hooks.before),
            ("hooks.during", &self.hooks.during),
            ("hooks.after", &self.hooks.after),
        ] {
            if let Some(c) = list.iter().position(Vec::is_empty) {
                return Err(bad(origin, &format!("{key}[{c}]"), EMPTY_COMMAND));
            }
        }
        Ok(())
    }
}

/// A number of seconds: finite, not negative, at most [`MAX_SECONDS`].
fn seconds(origin: &str, key: &str, value: f64) -> Result<(), InputError> {
    if value.is_finite() && (0.0..=MAX_SECONDS).contains(&value) {
        return Ok(());
    }
    Err(bad(
        origin,
        key,
        // `{:?}` keeps 1e300 short.
        format!("must be a number of seconds from 0 to {MAX_SECONDS}, not {value:?}"),
    ))
}

/// Names end up in `runs/<version>.<config>.<profile>.<iter>`: no dots, slashes or spaces, no
/// duplicates, at most [`MAX_NAME`] characters.
fn check_names<'a>(
    origin: &str,
    key: &str,
    names: impl Iterator<Item = &'a str>,
) -> Result<(), InputError> {
    let mut seen = std::collections::BTreeSet::new();
    for name in names {
        let ok = !name.is_empty()
            && name.len() <= MAX_NAME
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !ok {
            let shown: String = name.chars().take(MAX_NAME).collect();
            return Err(bad(
                origin,
                key,
                format!(
                    "name `{}` must be 1 to {MAX_NAME} letters, digits, `-` and `_`",
                    shown.escape_debug()
                ),
            ));
        }
        if !seen.insert(name) {
            return Err(bad(origin, key, format!("name `{name}` appears twice")));
        }
    }
    Ok(())
}
