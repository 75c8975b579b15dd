//! Readers that turn raw results into [`Results`]: series of per-iteration medians plus what the
//! logs tell about the setup.
//!
//! Every reader produces the same model, so one report serves archived netbenches pkt-gen logs
//! ([`netbenches`]) and benchlab's own campaigns alike. A series is one (version, config set,
//! traffic profile) cell of the campaign matrix; an [`Iteration`] is one trial reduced to the
//! median of its per-second receive rate. What could not be measured travels as [`Warning`]s,
//! never as errors: a report is still worth having when one iteration out of fifty is broken.
//!
//! [`Results`]: crate::ingest::Results
//! [`netbenches`]: crate::ingest::netbenches
//! [`Iteration`]: crate::ingest::Iteration
//! [`Warning`]: crate::ingest::Warning

use std::collections::BTreeMap;
use std::fmt;

/// Reader for the alternating design's runs in benchlab's results directories.
pub(crate) mod alternating;
/// Reader for benchlab's own results directories.
pub(crate) mod benchlab;
/// Bounded reading of input files (regular files only, size limit), from the base layer.
pub use crate::file;
/// Reader for netbenches bench-lab.sh result directories (pkt-gen logs and `.info` files).
pub mod netbenches;

/// Everything read from one results directory.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Results {
    /// The series, in the order the reader found them (netbenches: the harness's `ls` order).
    pub(crate) series: Vec<Series>,
    /// What could not be measured or was left out, in the order it was found.
    pub(crate) warnings: Vec<Warning>,
    /// How an iteration's figure was computed from its per-second samples, in words.
    pub(crate) method: String,
    /// What sent each profile's traffic (`benchlab gen, xdp engine`), from its first trial;
    /// under the profile `""`, what sent every profile's (`pkt-gen sender`).
    pub(crate) generators: BTreeMap<String, String>,
    /// Profiles of the DUT (benchlab campaigns with `profile = true`), for flamegraphs.
    pub(crate) captures: Vec<Capture>,
    /// The runs of the alternating design, with their paired estimates and time series.
    pub(crate) alternating: Vec<alternating::AlternatingRun>,
    /// Throughput searches (benchlab campaigns with throughput profiles), for the NDR/PDR
    /// table and the loss charts.
    pub(crate) searches: Vec<benchlab::throughput::SearchRun>,
    /// Latency under load (benchlab campaigns that sent probes): one entry per (version,
    /// config set, profile, load).
    pub(crate) latency: Vec<benchlab::latency::LatencySeries>,
    /// The lab's latency floor, when `lab.json` records one.
    pub(crate) latency_floor: Option<benchlab::latency::Floor>,
}

/// A profiling trial's capture of the DUT, as stored: folded stacks, unchecked.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Capture {
    /// Version name.
    pub(crate) version: String,
    /// Config set name.
    pub(crate) config: String,
    /// Traffic profile name.
    pub(crate) profile: String,
    /// The trial directory, relative to the results directory (`runs/….profile`).
    pub(crate) trial: String,
    /// The folded stacks (`perf.folded`); empty when there are none.
    pub(crate) folded: String,
    /// What the reader found wrong with the capture (no stacks, a window outside the traffic),
    /// which rejects it whatever its stacks show.
    pub(crate) problem: Option<String>,
    /// Whether it sampled every CPU of a multi-core DUT (perf `-a` over SSH, the harness's
    /// pmcstat) rather than the one CPU the DUT forwards on (the virtual lab).
    pub(crate) system_wide: bool,
    /// How it was recorded, in words, for the report.
    pub(crate) source: String,
}

/// One (version, config set, traffic profile) cell: the iterations measured for it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Series {
    /// Name of the series, also the stem of its `.pps` file: the non-empty levels joined by
    /// dots (`318516stable.forwarding.inet4`, `299288.fastforwarding`).
    pub(crate) name: String,
    /// Version of the DUT software (netbenches: the image); empty when the run had no such level.
    pub(crate) version: String,
    /// Config set; empty when the run had no such level.
    pub(crate) config: String,
    /// Traffic profile (netbenches: the pkt-gen preset, e.g. `inet4`); empty when absent.
    pub(crate) profile: String,
    /// Measured iterations, in the reader's order (netbenches: 1, 10, 2, … like `ls`).
    /// Iterations that could not be measured are left out and named in [`Results::warnings`].
    pub(crate) iterations: Vec<Iteration>,
    /// Lines of the `.pps` file that are empty, 0-based among its lines: the 2016 harness
    /// wrote one for each iteration without a usable sample, later ones nothing.
    pub(crate) pps_blanks: Vec<usize>,
    /// What the logs tell about the DUT and the traffic of this series.
    pub(crate) setup: Setup,
}

#[cfg(test)]
impl Series {
    /// A series of `version`, `config` and `profile` (each may be empty) whose iterations, 1
    /// onwards, have these medians of 40 samples each: the unit tests' fixture.
    pub(crate) fn of_medians(version: &str, config: &str, profile: &str, medians: &[f64]) -> Self {
        let levels: Vec<&str> = [version, config, profile]
            .into_iter()
            .filter(|l| !l.is_empty())
            .collect();
        Series {
            name: levels.join("."),
            version: version.into(),
            config: config.into(),
            profile: profile.into(),
            iterations: (1..)
                .zip(medians)
                .map(|(index, &median_pps)| Iteration {
                    index,
                    median_pps,
                    samples: 40,
                    offered_pps: None,
                    source: String::new(),
                    troubles: Vec::new(),
                })
                .collect(),
            ..Series::default()
        }
    }
}

/// One trial, reduced to the median of its per-second receive rate.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Iteration {
    /// Iteration number as the run numbered it (1-based).
    pub(crate) index: u32,
    /// Median of the kept per-second samples, in packets per second.
    pub(crate) median_pps: f64,
    /// Number of per-second samples the median was taken over.
    pub(crate) samples: usize,
    /// Rate the sender offered during this trial, in packets per second, when known.
    pub(crate) offered_pps: Option<f64>,
    /// The file the samples came from, relative to the results directory.
    pub(crate) source: String,
    /// What disturbed the trial, one short word each (`unsteady`, `slowed`, `measured
    /// twice`): benchlab's trials design only, empty elsewhere.
    pub(crate) troubles: Vec<String>,
}

/// What the logs tell about the setup of a series.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Setup {
    /// `uname -a` of the DUT, as recorded with the series.
    pub(crate) uname: Option<String>,
    /// The traffic, as the generator's command line describes it.
    pub(crate) traffic: Option<Traffic>,
}

/// The traffic a generator sent, from its command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Traffic {
    /// The generator command line as recorded (without the `CMD on host:` prefix).
    pub(crate) command: String,
    /// Packet length handed to the generator, in bytes, without the 4-byte Ethernet CRC
    /// (pkt-gen `-l`: 60 means 64-byte frames on the wire).
    pub packet_bytes: Option<u32>,
    /// IP version of the traffic: 4 or 6.
    pub(crate) ip_version: u8,
    /// Source address (and port) range.
    pub(crate) source: Option<AddrRange>,
    /// Destination address (and port) range.
    pub(crate) destination: Option<AddrRange>,
}

impl Traffic {
    /// Number of distinct flows: source endpoints times destination endpoints, when both are
    /// known; [`u128::MAX`] stands for that many or more (whole IPv6 ranges).
    pub fn flows(&self) -> Option<u128> {
        let src = self.source.as_ref()?.endpoints();
        let dst = self.destination.as_ref()?.endpoints();
        Some(src.saturating_mul(dst))
    }

    /// The traffic of a benchlab profile in the report's terms (frame size without the FCS, as
    /// pkt-gen's `-l`).
    pub(crate) fn of_profile(profile: &crate::config::Profile) -> Self {
        Traffic {
            command: format!(
                "benchlab gen -l {} -s {} -d {} -r {}",
                profile.frame_size(),
                profile.src(),
                profile.dst(),
                match profile.rate {
                    crate::config::Rate::Max => "max".to_string(),
                    crate::config::Rate::Pps(p) => p.to_string(),
                }
            ),
            packet_bytes: Some(profile.frame_size() - 4),
            ip_version: match profile.af {
                crate::config::Family::Inet4 => 4,
                crate::config::Family::Inet6 => 6,
            },
            source: netbenches::pktgen::parse_range(profile.src()),
            destination: netbenches::pktgen::parse_range(profile.dst()),
        }
    }
}

/// An address range with an optional port range, as pkt-gen's `-s`/`-d` take them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddrRange {
    /// The range as written on the command line.
    pub(crate) text: String,
    /// Number of addresses in the range.
    pub(crate) addresses: u128,
    /// Number of ports in the range (1 when no port range was given).
    pub(crate) ports: u128,
}

impl AddrRange {
    /// Number of (address, port) endpoints.
    pub(crate) fn endpoints(&self) -> u128 {
        self.addresses.saturating_mul(self.ports)
    }
}

/// Something that could not be measured, or input that was left out; the report prints each one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Warning {
    /// An iteration kept fewer than 3 per-second samples (ministat's minimum): skipped.
    TooFewSamples {
        /// The receiver log.
        file: String,
        /// Samples it kept.
        samples: usize,
    },
    /// A kept per-second line had no number where the rate belongs: the iteration is skipped,
    /// as the harness's ministat rejects the whole iteration.
    BadSample {
        /// The receiver log.
        file: String,
        /// 1-based line number.
        line: usize,
    },
    /// An iteration that other series of the same run have is missing from this one.
    MissingIteration {
        /// Series name.
        series: String,
        /// The missing iteration number.
        index: u32,
        /// What is missing, and what to do: `no receiver log`.
        why: &'static str,
    },
    /// A series announced by its `.info` file has no receiver log at all.
    NoIterations {
        /// Series name.
        series: String,
    },
    /// A receiver log with no `.info` file for its series: not part of any series.
    NoInfo {
        /// The receiver log.
        file: String,
    },
    /// Harness logs in two of a directory's folders (itself, `RAW/`, `raw/`): the first read,
    /// the other left out.
    LogsTwice {
        /// The folder read.
        read: String,
        /// The folder left out.
        left_out: String,
    },
    /// A series' `.info` file is empty or not text: its levels come from its name alone.
    BadInfo {
        /// The `.info` file.
        file: String,
        /// What is wrong with it: `empty`, `not text (binary or damaged)`.
        why: &'static str,
    },
    /// A benchlab trial failed twice: left out.
    FailedTrial {
        /// `<version>.<config>.<profile>.<iter>`.
        trial: String,
        /// Why it failed.
        reason: String,
    },
    /// A benchlab trial measured something other than what was asked: kept, and said.
    FlaggedTrial {
        /// `<version>.<config>.<profile>.<iter>`.
        trial: String,
        /// What its checks found.
        flags: String,
    },
    /// The DUT could not be profiled (a FreeBSD DUT without hwpmc): no flamegraphs.
    NoProfiler {
        /// Why, as the campaign found it.
        reason: String,
    },
    /// A netbenches pmcstat call graph the report does not draw.
    UnmatchedGraph {
        /// The graph, relative to the results directory.
        file: String,
        /// Why: it names no series, or its series is drawn from another graph.
        why: String,
    },
    /// A benchlab trial's record says it measured latency but its histograms are missing.
    NoLatencyLog {
        /// The missing `latency.hlog`, relative to the results directory.
        file: String,
    },
    /// A benchlab trial was measured twice: the attempt kept is counted, the other left out.
    RemeasuredTrial {
        /// `<version>.<config>.<profile>.<iter>`.
        trial: String,
        /// Why the other attempt was left out.
        reason: String,
    },
}

/// Text read from a results file with its control characters (but tabs) escaped as
/// [`crate::error::shown`] escapes them, its length kept: what a report or the terminal
/// prints of such text whole (a reader bounds its lines, `store::MAX_LINE_BYTES`), so that no
/// escape sequence from a file reaches either raw.
pub(crate) fn escaped(text: &str) -> String {
    // Not `\`, which prose and paths hold, nor a tab, which ministat's output holds and which
    // moves no cursor.
    crate::error::escaped(text, &['\\', '\t'])
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", escaped(&self.words()))
    }
}

impl Warning {
    /// The warning in words, as read (unescaped).
    fn words(&self) -> String {
        let f = &mut String::new();
        self.write_words(f).expect("writing to a String");
        std::mem::take(f)
    }

    fn write_words(&self, f: &mut String) -> fmt::Result {
        use std::fmt::Write;
        match self {
            Self::TooFewSamples { file, samples } => write!(
                f,
                "{file}: only {samples} per-second sample(s) left after the harness trim \
                 (3 needed); iteration skipped"
            ),
            Self::BadSample { file, line } => write!(
                f,
                "{file}:{line}: per-second line without a rate in field 4; iteration skipped"
            ),
            Self::MissingIteration { series, index, why } => {
                write!(f, "{series}: iteration {index} missing ({why})")
            }
            Self::NoIterations { series } => {
                write!(
                    f,
                    "{series}: .info present but no receiver log; series left out"
                )
            }
            Self::NoInfo { file } => {
                write!(f, "{file}: no matching .info file; log left out")
            }
            Self::LogsTwice { read, left_out } => write!(
                f,
                "{left_out} holds harness logs too; only those of {read} are read (move the \
                 copy away if it is the one to report)"
            ),
            Self::BadInfo { file, why } => write!(
                f,
                "{file}: {why}, not what the harness writes; the series is named from the file \
                 name alone and the DUT's uname is not known"
            ),
            Self::FailedTrial { trial, reason } => {
                write!(f, "{trial}: failed twice ({reason}); left out")
            }
            Self::FlaggedTrial { trial, .. } | Self::RemeasuredTrial { trial, .. } => {
                let (_, what) = self.of_trial().expect("a trial's warning");
                write!(f, "{trial}: {what}")
            }
            Self::NoProfiler { reason } => write!(f, "no flamegraphs: {reason}"),
            Self::UnmatchedGraph { file, why } => {
                write!(f, "{file}: pmcstat call graph not drawn: {why}")
            }
            Self::NoLatencyLog { file } => write!(
                f,
                "{file}: missing, though the trial's record holds latency; left out of the \
                 latency figures"
            ),
        }
    }

    /// A trial counted in the statistics though flagged or measured twice: its name and what
    /// was found, in words (unescaped); `None` for other warnings.
    pub(crate) fn of_trial(&self) -> Option<(&str, String)> {
        match self {
            Self::FlaggedTrial { trial, flags } => Some((trial, flags.clone())),
            Self::RemeasuredTrial { trial, reason } => Some((
                trial,
                format!("measured twice, one attempt left out ({reason})"),
            )),
            _ => None,
        }
    }
}
