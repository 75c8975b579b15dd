//! A campaign is checked once, when it is loaded, before any lab is built or any DUT touched:
//! every number is finite and in range, every name fits a results path, every command is
//! non-empty and every flow range parses. The error names the file and the key.

use std::path::Path;

use super::bounds::MAX_ENTRIES;
use super::profile::min_frame;
use super::seconds::{check, secs};
use super::{bad, defaults, Campaign, Design};
use crate::error::{shown, InputError};

/// The most iterations a campaign may ask for: more would only fill the disk.
pub(crate) const MAX_ITERATIONS: u32 = 10_000;
/// The longest sysctl key or value, in bytes (Linux's own are under 100).
pub(crate) const MAX_SYSCTL: usize = 4096;
impl Campaign {
    /// Checks ranges, names and references; the error names the key.
    pub(crate) fn validate(&self, origin: &str, known_sets: &[&str]) -> Result<(), InputError> {
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
        if self.profiles.is_empty() {
            return Err(bad(origin, "profiles", "list at least one traffic profile"));
        }
        self.validate_size(origin)?;
        self.check_config_sets(origin, known_sets)?;
        self.validate_names(origin)?;
        self.validate_profiles(origin)?;
        self.validate_design(origin)?;
        self.validate_search(origin)?;
        self.validate_latency(origin)?;
        self.validate_settings(origin)
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
        self.validate_blocks_fit(origin)?;
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
        match &self.alternating {
            Some(alt) => alt.validate(origin),
            None => Ok(()),
        }
    }

    /// `min_blocks` blocks of every alternated entry, each twice, within `max_duration`: the
    /// stopping rule never looks before `min_blocks`, so a run would overrun its budget.
    fn validate_blocks_fit(&self, origin: &str) -> Result<(), InputError> {
        let Some(alt) = &self.alternating else {
            return Ok(());
        };
        let entries = self.alternated_entries();
        let block = secs(alt.block_duration(entries));
        let needed = alt.min_blocks as f64 * block;
        if needed <= secs(alt.max_duration) {
            return Ok(());
        }
        Err(bad(
            origin,
            "alternating.min_blocks",
            format!(
                "{} blocks of {block} s ({entries} entries × 2 phases of {} s) take {needed} s, \
                 more than max_duration = {} s: fewer blocks, shorter phases or a longer \
                 max_duration",
                alt.min_blocks,
                secs(alt.phase),
                secs(alt.max_duration)
            ),
        ))
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
            check(origin, key, secs(value))?;
        }
        // A campaign of throughput searches runs no fixed-load trial: its trials are the latency
        // trials after each search, which leave out their first second, not warm-up and
        // cool-down (`store::latency::search_latency_window`).
        let searches_only = (self.profiles.iter()).all(|p| p.measure == super::Measure::Throughput);
        if searches_only && secs(t.duration) < 2.0 {
            return Err(bad(
                origin,
                "trial.duration",
                format!(
                    "{}s: a latency trial after a search leaves out its first second, so it \
                     needs 2 s or more; make the trial longer",
                    secs(t.duration)
                ),
            ));
        }
        if !searches_only && t.measured_seconds() < defaults::MIN_MEASURED_S {
            return Err(bad(
                origin,
                "trial.duration",
                format!(
                    "{}s of traffic leaves {} whole second(s) once warm-up ({}s) and cool-down \
                     ({}s) are dropped, {} needed; make the trial longer",
                    secs(t.duration),
                    t.measured_seconds(),
                    secs(t.warmup),
                    secs(t.cooldown),
                    defaults::MIN_MEASURED_S
                ),
            ));
        }
        for (i, v) in self.versions.iter().enumerate() {
            if let Some(timeout) = v.online_timeout {
                check(
                    origin,
                    &format!("versions[{i}].online_timeout"),
                    secs(timeout),
                )?;
            }
        }
        Ok(())
    }

    /// The config sets a run needs: each built-in (`known_sets`) or a directory with its
    /// `apply` script. Resuming a stored campaign checks them again: a directory may be gone.
    pub(crate) fn check_config_sets(
        &self,
        origin: &str,
        known_sets: &[&str],
    ) -> Result<(), InputError> {
        if self.config_sets.is_empty() {
            return Err(bad(origin, "config_sets", "list at least one config set"));
        }
        for (i, set) in self.config_sets.iter().enumerate() {
            if !known_sets.contains(&set.as_str()) && !Path::new(set).is_dir() {
                return Err(bad(
                    origin,
                    &format!("config_sets[{i}]"),
                    format!(
                        "`{}` is neither a built-in config set ({}) nor a directory",
                        shown(set),
                        known_sets.join(", ")
                    ),
                ));
            }
            // A user set is a directory with its `apply` script (`dut::user`): said at load,
            // not once the lab is up (`config_sets = [""]` is the campaign file's directory).
            if !known_sets.contains(&set.as_str()) && !Path::new(set).join("apply").is_file() {
                return Err(bad(
                    origin,
                    &format!("config_sets[{i}]"),
                    format!(
                        "directory `{}` has no `apply` script: a user config set is a \
                         directory with one; put the commands that configure the DUT in it",
                        shown(set)
                    ),
                ));
            }
        }
        Ok(())
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
                let key = format!("profiles[{i}].{key}");
                let flows = (range.parse::<crate::traffic::packet::FlowRange>())
                    .map_err(|e| bad(origin, &key, e.0))?;
                if flows.family() != p.af {
                    return Err(bad(
                        origin,
                        &key,
                        format!(
                            "`{}` is an {} range and the profile's af = \"{}\": give {} \
                             addresses or change af",
                            shown(range),
                            flows.family(),
                            p.af,
                            p.af
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Every version's sysctls and commands, and the hooks, runnable as written.
    fn validate_settings(&self, origin: &str) -> Result<(), InputError> {
        for (i, v) in self.versions.iter().enumerate() {
            let at = |key: &str| format!("versions[{i}].{key}");
            if v.sysctls.len() > MAX_ENTRIES {
                let many = format!("{} entries, at most {MAX_ENTRIES}", v.sysctls.len());
                return Err(bad(origin, &at("sysctls"), many));
            }
            for (key, value) in &v.sysctls {
                check_sysctl(key, value).map_err(|e| bad(origin, &at("sysctls"), e))?;
            }
            check_commands(origin, &at("commands"), &v.commands)?;
            check_commands(origin, &at("install"), &v.install)?;
            for (key, argv) in [("reboot", &v.reboot), ("online", &v.online)] {
                // Empty: the version has none.
                if !argv.is_empty() {
                    check_argv(argv).map_err(|e| bad(origin, &at(key), e))?;
                }
            }
        }
        for (key, list) in [
            ("hooks.before", &self.hooks.before),
            ("hooks.during", &self.hooks.during),
            ("hooks.after", &self.hooks.after),
        ] {
            check_commands(origin, key, list)?;
        }
        Ok(())
    }
}

/// A list of commands: at most [`MAX_ENTRIES`], each one runnable ([`check_argv`]).
fn check_commands(origin: &str, key: &str, list: &[Vec<String>]) -> Result<(), InputError> {
    if list.len() > MAX_ENTRIES {
        let many = format!("{} commands, at most {MAX_ENTRIES}", list.len());
        return Err(bad(origin, key, many));
    }
    for (c, argv) in list.iter().enumerate() {
        check_argv(argv).map_err(|e| bad(origin, &format!("{key}[{c}]"), e))?;
    }
    Ok(())
}

/// A command as an argv list: a program name, then at most [`MAX_ENTRIES`] arguments, none
/// holding a NUL byte (which no program can receive).
fn check_argv(argv: &[String]) -> Result<(), String> {
    match argv.first() {
        None => Err(
            "empty command: give the program and its arguments, as [\"sysctl\", \
                     \"-a\"], or remove it"
                .into(),
        ),
        Some(program) if program.trim().is_empty() => Err(format!(
            "the program name `{}` is blank: give the program first, as [\"sysctl\", \"-a\"]",
            shown(program)
        )),
        Some(_) if argv.len() > MAX_ENTRIES + 1 => Err(format!(
            "{} arguments, at most {MAX_ENTRIES}",
            argv.len() - 1
        )),
        Some(_) => match argv.iter().find(|a| a.contains('\0')) {
            Some(arg) => Err(format!("`{}` holds a NUL byte: remove it", shown(arg))),
            None => Ok(()),
        },
    }
}

/// A sysctl as `sysctl -w key=value` and `/proc/sys/<key>` take it: the key names separated
/// by `.` or `/`, none empty or `..`, no `=`, space or control character, not starting with
/// `-`; the value on one line.
fn check_sysctl(key: &str, value: &str) -> Result<(), String> {
    const RULE: &str = "a sysctl key is names separated by `.` (or `/`), as \
                        `net.ipv4.ip_forward`, without `=`, spaces or control characters";
    let bad_char = key
        .chars()
        .find(|c| *c == '=' || c.is_whitespace() || c.is_control());
    let problem = if let Some(c) = bad_char {
        Some(format!("holds `{}`", shown(&c.to_string())))
    } else if key
        .split(['.', '/'])
        .any(|part| part.is_empty() || part == "..")
    {
        Some("has an empty component (`..`, or a leading or trailing `.` or `/`)".to_string())
    } else if key.starts_with('-') {
        Some("starts with `-`".to_string())
    } else if key.len() > MAX_SYSCTL {
        Some(format!("is {} bytes long, at most {MAX_SYSCTL}", key.len()))
    } else {
        None
    };
    if let Some(problem) = problem {
        return Err(format!("key `{}` {problem}: {RULE}", shown(key)));
    }
    match value.chars().find(|c| *c != '\t' && c.is_control()) {
        Some(_) => Err(format!(
            "the value of `{}`, `{}`, holds a line break or control character: give it on one \
             line",
            shown(key),
            shown(value)
        )),
        None if value.len() > MAX_SYSCTL => Err(format!(
            "the value of `{}` is {} bytes long, at most {MAX_SYSCTL}",
            shown(key),
            value.len()
        )),
        None => Ok(()),
    }
}
