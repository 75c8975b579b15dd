//! The campaign file: a TOML model, its defaults, and the validation that turns a file into a
//! [`Campaign`] or one clear line naming the key at fault.
//!
//! Every table rejects unknown keys (a typo such as `duratoin` must not silently fall back to a
//! default), numbers are range-checked with the key's full path in the message, and names used in
//! result paths (`runs/<version>.<config>.<profile>.<iter>`) are restricted to characters that
//! cannot break that layout.
//!
//! ```toml
//! title = "Impact of enabling firewalls on forwarding performance"
//! iterations = 5
//! order = "interleaved"          # or "sequential", as the old harness
//! config_sets = ["forwarding", "nft-stateless", "nft-stateful", "iptables-stateful"]
//! profile = false                # true: one extra, unmeasured trial per series profiles the
//!                                # DUT (perf record) for the report's flamegraphs
//!
//! [lab]                          # the virtual lab: the keys of LAB.toml (crate::lab::topology)
//! placement = "separate"         # the DUT forwards on its own CPU
//!
//! [trial]
//! duration = 10                  # seconds of traffic per trial
//! warmup = 2                     # first seconds dropped from the analysis
//! cooldown = 1                   # last seconds dropped from the analysis
//!
//! [[versions]]                   # none: one implicit version named "default"
//! name = "buckets-4k"
//! sysctls = { "net.netfilter.nf_conntrack_buckets" = "4096" }
//!
//! [[profiles]]                   # none: the default inet4 and inet6 profiles
//! name = "inet4"
//! af = "inet4"
//! frame_size = 64
//! src = "198.18.10.1:2000-198.18.10.20"
//! dst = "198.19.10.1:2000-198.19.10.100"
//! rate = "max"                   # or a packet rate, e.g. 500000 or "500k"
//! ```
//!
//! [`Campaign`]: crate::config::Campaign

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::InputError;
use crate::lab::LabConfig;

/// Defaults of the campaign file, shared by the model and the documentation.
pub mod defaults {
    use std::time::Duration;

    /// Title of the default campaign: the question of seeds 001–004.
    pub(crate) const TITLE: &str = "Impact of enabling firewalls on forwarding performance";
    /// Iterations per (version, config set, profile).
    pub(crate) const ITERATIONS: u32 = 5;
    /// Traffic per trial.
    pub(crate) const DURATION: Duration = Duration::from_secs(10);
    /// What is dropped at the start of each trial.
    pub(crate) const WARMUP: Duration = Duration::from_secs(2);
    /// What is dropped at the end of each trial.
    pub const COOLDOWN: Duration = Duration::from_secs(1);
    /// Config sets of the default campaign, the reference first.
    pub const CONFIG_SETS: [&str; 4] = [
        "forwarding",
        "nft-stateless",
        "nft-stateful",
        "iptables-stateful",
    ];
    /// Name of the implicit version of a campaign that declares none.
    pub(crate) const VERSION: &str = "default";
    /// Source flows of the inet4 profile: 20 addresses × 1 port (as the seeds' labs).
    pub(crate) const INET4_SRC: &str = "198.18.10.1:2000-198.18.10.20";
    /// Destination flows of the inet4 profile: 100 addresses × 1 port (2000 flows in all).
    pub(crate) const INET4_DST: &str = "198.19.10.1:2000-198.19.10.100";
    /// Source flows of the inet6 profile (seeds' `dualstack-2k/inet6`).
    pub(crate) const INET6_SRC: &str = "[2001:2:0:10::1]:2000-[2001:2:0:10::14]";
    /// Destination flows of the inet6 profile.
    pub(crate) const INET6_DST: &str = "[2001:2:0:8010::1]:2000-[2001:2:0:8010::64]";
    /// Fewest whole seconds a trial must keep once warm-up and cool-down are dropped: a median
    /// needs a few samples.
    pub(crate) const MIN_MEASURED_S: usize = 3;
}

/// Order in which trials run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// version → config set → profile → iteration, as the old harness.
    Sequential,
    /// iteration → version → config set → profile: drift hits every series alike.
    #[default]
    Interleaved,
}

/// Address family of a traffic profile (the generator's own type: one set of names and sizes).
pub(crate) use crate::traffic::packet::Family;

/// Offered load of a profile (the generator's type: `"max"` or a packet rate in the file).
pub(crate) use crate::traffic::Rate;

/// The times of each trial: traffic, and what the analysis drops at both ends (float seconds
/// in the file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Trial {
    /// Traffic per trial. Default is 10 s.
    #[serde(with = "seconds")]
    pub(crate) duration: Duration,
    /// What is dropped at the start. Default is 2 s.
    #[serde(with = "seconds")]
    pub(crate) warmup: Duration,
    /// What is dropped at the end. Default is 1 s.
    #[serde(with = "seconds")]
    pub(crate) cooldown: Duration,
    /// Send latency probes on top of each trial's load (the `[latency]` table says how).
    /// Default is false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) latency: bool,
}

impl Trial {
    /// Whole seconds of samples the analysis keeps: those after the warm-up and before the
    /// cool-down.
    pub(crate) fn measured_seconds(&self) -> usize {
        let last = (secs(self.duration) - secs(self.cooldown)).floor();
        let first = secs(self.warmup).ceil() + 1.0;
        (last - first + 1.0).max(0.0) as usize
    }
}

impl Default for Trial {
    fn default() -> Self {
        Self {
            duration: defaults::DURATION,
            warmup: defaults::WARMUP,
            cooldown: defaults::COOLDOWN,
            latency: false,
        }
    }
}

/// A DUT software version. On the virtual lab: a named set of DUT settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Version {
    /// Name used in results paths and reports.
    pub(crate) name: String,
    /// Label shown in reports instead of the name. Default is the name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) label: Option<String>,
    /// Sysctls set on the DUT before this version's trials (`key = "value"`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) sysctls: BTreeMap<String, String>,
    /// Commands (argv lists) run on the DUT before this version's trials.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) commands: Vec<Vec<String>>,
    /// Real labs: commands (argv lists) that install this version on the DUT (copy and apply
    /// an image), run before `reboot`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) install: Vec<Vec<String>>,
    /// Real labs: the command that reboots the DUT into this version (its connection may drop).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) reboot: Vec<String>,
    /// Real labs: a command on the DUT that succeeds once it forwards again (pings through it,
    /// routes present), retried until `online_timeout`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) online: Vec<String>,
    /// How long `online` may take to succeed after a reboot. Default is 300 s.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "seconds::option"
    )]
    pub(crate) online_timeout: Option<Duration>,
}

/// Commands run on the DUT around each trial; their output is kept with the trial.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Hooks {
    /// Before traffic starts (output in `dut-before.txt`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) before: Vec<Vec<String>>,
    /// Once traffic flows, after warm-up (output in `dut-during.txt`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) during: Vec<Vec<String>>,
    /// After traffic stops (output in `dut-after.txt`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) after: Vec<Vec<String>>,
}

/// A campaign as written in its file; [`Campaign::from_toml`] validates it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Campaign {
    /// Report title.
    #[serde(default = "default_title")]
    pub title: String,
    /// Free-text lines added to the report's setup list.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Iterations per (version, config set, profile). Default is 5.
    #[serde(default = "default_iterations")]
    pub iterations: u32,
    /// Trial order. Default is interleaved.
    #[serde(default)]
    pub order: Order,
    /// Measurement design: `auto` (the default), `trials` or `alternating`; never `auto` once
    /// loaded ([`Campaign::settle_design`]), and always written in `DIR/campaign.toml`, where
    /// its absence means `trials` (a directory from before the key had another default).
    #[serde(default)]
    pub design: Design,
    /// Whether benchlab chose the design (`auto`), written in `DIR/campaign.toml` for the
    /// report: it says why.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub design_auto: bool,
    /// The alternating design's phases and stopping rule (filled in at load when the design
    /// is alternating, so that `campaign.toml` records them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alternating: Option<Alternating>,
    /// Profile the DUT: one extra trial per (version, config set, profile), not measured,
    /// records the DUT's CPU between warm-up and cool-down (`runs/….profile/perf.folded`) for
    /// the report's flamegraphs. Default is false.
    #[serde(default)]
    pub profile: bool,
    /// The virtual lab (the keys of `LAB.toml`, see [`crate::lab::topology`]). Default: the
    /// seeds' 3-node lab, the DUT on its own CPU.
    #[serde(default)]
    pub lab: LabConfig,
    /// Seconds of each trial.
    #[serde(default)]
    pub trial: Trial,
    /// DUT versions; none means one implicit version named `default`.
    #[serde(default)]
    pub versions: Vec<Version>,
    /// Config set names (built-in) or directories (a user set), the reference first.
    #[serde(default = "default_config_sets")]
    pub config_sets: Vec<String>,
    /// Traffic profiles; none means the built-in `inet4` and `inet6`.
    #[serde(default = "default_profiles")]
    pub profiles: Vec<Profile>,
    /// Commands run on the DUT around each trial.
    #[serde(default)]
    pub hooks: Hooks,
    /// The throughput search of the profiles with `measure = "throughput"` (goals, loads,
    /// durations; [`crate::search::config`]). Default: the `mlrsearch` preset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<crate::search::SearchConfig>,
    /// How latency is measured where asked (`[latency]`: probe rate, loads after a search,
    /// the alternating design's load, the floor). Default: [`LatencyConfig`]'s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencyConfig>,
}

fn default_title() -> String {
    defaults::TITLE.to_string()
}

fn default_iterations() -> u32 {
    defaults::ITERATIONS
}

fn default_config_sets() -> Vec<String> {
    defaults::CONFIG_SETS
        .iter()
        .map(|s| s.to_string())
        .collect()
}

fn default_profiles() -> Vec<Profile> {
    vec![
        Profile::builtin(Family::Inet4),
        Profile::builtin(Family::Inet6),
    ]
}

impl Campaign {
    /// What `benchlab run` runs with no campaign file (examples/default.toml): the default
    /// config sets and profiles, their design settled as a file's (alternated, since config
    /// sets switch under traffic).
    pub fn builtin() -> Self {
        let mut campaign = Self {
            design: Design::Auto,
            ..Self::default()
        };
        campaign.settle_design();
        campaign
    }
}

impl Default for Campaign {
    fn default() -> Self {
        Self {
            title: default_title(),
            notes: Vec::new(),
            iterations: defaults::ITERATIONS,
            order: Order::default(),
            // A campaign built in code runs the design it names; `auto` is a file's default.
            design: Design::Trials,
            design_auto: false,
            alternating: None,
            profile: false,
            lab: LabConfig::default(),
            trial: Trial::default(),
            versions: vec![default_version()],
            config_sets: default_config_sets(),
            profiles: default_profiles(),
            hooks: Hooks::default(),
            search: None,
            latency: None,
        }
    }
}

fn default_version() -> Version {
    Version {
        name: defaults::VERSION.to_string(),
        label: None,
        sysctls: BTreeMap::new(),
        commands: Vec::new(),
        install: Vec::new(),
        reboot: Vec::new(),
        online: Vec::new(),
        online_timeout: None,
    }
}

fn bad(origin: &str, key: &str, what: impl fmt::Display) -> InputError {
    InputError::new(format!("{origin}: key `{key}`: {what}"))
}

impl Campaign {
    /// The campaign as TOML, defaults filled in (what `DIR/campaign.toml` holds).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a validated campaign always serializes")
    }

    /// The search of the throughput profiles: `[search]`, or the `mlrsearch` preset.
    pub(crate) fn search(&self) -> crate::search::SearchConfig {
        self.search.clone().unwrap_or_default()
    }

    /// Config set names as they appear in results paths: a directory's last component.
    pub(crate) fn config_set_names(&self) -> impl Iterator<Item = &str> {
        self.config_sets.iter().map(|s| config_set_name(s))
    }
}

/// The name of a config set entry: itself for a built-in, the last path component for a
/// directory.
pub(crate) fn config_set_name(entry: &str) -> &str {
    Path::new(entry)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(entry)
}

/// `design = "auto"`: which design a campaign gets, and why.
mod auto;
/// The size of a campaign (lists, planned trials) and of its names, checked at load.
mod bounds;
/// The measurement design and the alternating design's settings.
mod design;
/// `[trial] latency` and the `[latency]` table: probes, loads, the floor.
mod latency;
/// Reading a campaign file: parse, defaults, paths relative to the file, validation.
mod load;
/// What the command line changes in a campaign: `-n`, `--duration`, `--quick`, `--profile`.
mod overrides;
/// The plan of an alternating campaign's runs, shared by the controller and the reader.
mod plan;
/// A traffic profile: its family, frames, flows, load and what it measures.
mod profile;
/// Quick versions (sysctls and commands only), which the alternating design alternates.
mod quick;
/// Seconds in the file, durations in the model: the serde helpers and each key's range.
pub(crate) mod seconds;
/// Checking a campaign once, at load: every number, name and command.
mod validate;

pub(crate) use design::{Alternating, Design, ALTERNATING_INTERVAL};
pub use latency::LatencyConfig;
pub(crate) use overrides::Overrides;
pub use plan::{AlternatingPlan, PlanError};
pub(crate) use profile::Measure;
pub use profile::Profile;
pub(crate) use quick::{Entry, Runs};
pub(crate) use seconds::{duration, secs, MAX_SECONDS};

#[cfg(test)]
mod tests;
