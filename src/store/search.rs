//! What a throughput search leaves in its iteration's directory: `search.json`, the search's
//! result (goals, bounds, the trace) and every trial as the lab measured it (counters, drops,
//! times, the DUT CPU's stalls), written atomically before the iteration's `meta.json`; and
//! each trial's own files (DUT counters and hook outputs, the senders' and receiver's records)
//! in `trials/<NNN>/`
//! (`calibration/<N>/` for the calibration trials, `opening/` and `closing/` for the saturating
//! trials before and after the search), NNN its
//! 1-based index in `trials` ([`crate::store::search_files`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Store, TrialKey};
use crate::error::InputError;
use crate::lab::stall::CpuStalls;
use crate::search::{SearchResult, TrialRecord};

/// The file of a search, beside the iteration's `meta.json`.
pub(crate) const SEARCH_FILE: &str = "search.json";

/// One trial of a search as the lab ran it (the search's own view is [`SearchResult::trials`],
/// in the same order).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SearchTrial {
    /// Intended load, packets/s.
    pub(crate) load: f64,
    /// Intended seconds of traffic.
    pub(crate) duration: f64,
    /// Packets the senders sent, by their own counters.
    pub(crate) sent: u64,
    /// Packets counted received: the receiver's count once the traffic stopped and drained,
    /// less the late ones.
    pub(crate) received: u64,
    /// Frames the DUT forwarded only from a backlog beyond its input ring, still queued when
    /// the traffic stopped (the virtual lab at a fixed load, whose deeper queue stands for a
    /// NIC's ring: `lab::virt`): what that ring would have dropped, counted lost.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) late: u64,
    /// Packets each watched interface (the sender's, the DUT's) and the receiving one dropped
    /// while the receiver counted: where the lost packets went. Empty when the receiver does
    /// not watch any.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) drops: BTreeMap<String, u64>,
    /// How long the DUT's CPU stalled during the trial, where the lab watched it (the virtual
    /// lab's trials at a fixed load): whether its loss was the machine's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) dut_cpu: Option<CpuStalls>,
    /// False when the senders missed the intended load (or failed): retried, not a loss.
    pub(crate) valid: bool,
    /// Why it is invalid, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) problem: Option<String>,
    /// Start of traffic, seconds since the Unix epoch.
    pub(crate) start_unix_s: f64,
    /// End of traffic, seconds since the Unix epoch.
    pub(crate) end_unix_s: f64,
}

/// `search.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchRecord {
    /// What the generator sent at a fixed rate in the last calibration trial, packets/s, when
    /// measured (`None` when the profile's rate or `search.max_load` gave the max load).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) generator_max: Option<f64>,
    /// The calibration trials (full rate, then that rate asked at a fixed rate), when run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) calibration: Vec<SearchTrial>,
    /// The search's result; `None` when it failed.
    pub(crate) result: Option<SearchResult>,
    /// Why the search failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) failure: Option<String>,
    /// Every trial of the search, in order.
    pub(crate) trials: Vec<SearchTrial>,
    /// A trial at `max` following the DUT (as the trials and alternating designs load it)
    /// before the search, when its max load was calibrated: the rate the DUT forwards
    /// saturated at the start. `None` otherwise (or in older records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) opening: Option<SearchTrial>,
    /// A trial after the search, as long as the opening one and like it (without an opening
    /// trial: at max load, as long as the search's first trial there): the rate the DUT
    /// forwards saturated at the end, to compare with the start (the machine may have changed
    /// speed in between). `None` when the search failed (or in older records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) closing: Option<SearchTrial>,
    /// Wall-clock seconds the search took, setup between trials included.
    pub(crate) wall_s: f64,
    /// The latency trials after the search, at fractions of its NDR (`[search] latency_loads`),
    /// each with its files and `latency.hlog` in `latency/<pct>/`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) latency: Vec<LatencyLoad>,
    /// Latency probes per second sent on top of every trial of the search (calibration,
    /// opening and closing included) when its NDR sets latency trials' loads: the NDR is then
    /// what the DUT forwards while measured. `None` otherwise (and in records before 2026-11-29).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) probes_pps: Option<u64>,
}

/// A latency trial after a search: probes on top of a fixed load, a fraction of the NDR.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct LatencyLoad {
    /// The load in percent of the NDR (0: probes only).
    pub(crate) pct: u32,
    /// The trial as the lab ran it (its load: `pct` % of the NDR, packets/s).
    pub(crate) trial: SearchTrial,
    /// The probes' latency.
    pub(crate) latency: super::TrialLatency,
}

impl Store {
    /// Writes an iteration's `search.json`, atomically (before its `meta.json`).
    pub(crate) fn write_search(
        &self,
        key: &TrialKey,
        record: &SearchRecord,
    ) -> std::io::Result<()> {
        let json = serde_json::to_string_pretty(record).map_err(std::io::Error::other)? + "\n";
        self.write_trial_file(key, SEARCH_FILE, json.as_bytes())
    }

    /// Reads a finished search iteration's `search.json`.
    pub fn read_search(&self, key: &TrialKey) -> Result<SearchRecord, InputError> {
        let path = self.trial_dir(key).join(SEARCH_FILE);
        let text = super::record::read_lines(&self.dir, &path)?;
        let record: Result<SearchRecord, String> =
            serde_json::from_str(&text).map_err(|e| e.to_string());
        let record = record.and_then(|r| r.out_of_range().map_or(Ok(r), Err));
        record.map_err(|e| {
            InputError::new(format!(
                "{}: corrupted search record: {}; remove that trial's directory to run it again",
                path.display(),
                crate::error::shown(&e)
            ))
        })
    }
}

impl SearchRecord {
    /// The first trial whose figures its writer never records (a negative or infinite load,
    /// duration or time, an end before its start), in words.
    fn out_of_range(&self) -> Option<String> {
        for (list, trials) in [("calibration", &self.calibration), ("trials", &self.trials)] {
            for (i, t) in trials.iter().enumerate() {
                let bad_number = [t.load, t.duration, t.start_unix_s]
                    .iter()
                    .any(|v| !(v.is_finite() && *v >= 0.0));
                if bad_number || t.end_unix_s < t.start_unix_s {
                    return Some(format!("{list}[{i}]: load, duration or times out of range"));
                }
            }
        }
        None
    }
}

/// Whether a count is zero: a field left out of the JSON.
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The share of the lab's CPUs' time above which the programs that took it
/// ([`CpuStalls::others`]) make a trial, or a search over its trials, crowded: its figures
/// are the machine's other work as much as the DUT's. `benches/crowded.sh` on a 2-vCPU VM
/// (2026-11-28, 16:06 UTC): with nothing else running, at most 0.2 % of a latency trial (10 s)
/// and 0.14 % of a search; beside a build at the lowest priority, 3.1–16 % of a latency trial
/// and 5.7–6.6 % of a search, and the time in the DUT doubled even at 3 %: a little of a
/// build's time spoils much of the DUT's.
pub(crate) const CROWDED_SHARE: f64 = 0.01;

/// Whether a span (a trial, a block of the alternating design) of which other programs took
/// `share` of the lab's CPUs' time, where read, is crowded: more than [`CROWDED_SHARE`].
pub(crate) fn crowded(share: Option<f64>) -> bool {
    share.is_some_and(|share| share > CROWDED_SHARE)
}

/// Relative change of the DUT's saturated forwarding between the start of a search and its
/// end, beyond which the machine changed speed during the search. On the
/// virtual lab's VM, two searches that held one speed level saw 4.6 % and 5.0 % between the
/// two (747 → 783 Kpps, 512 → 539 Kpps); its levels differ by 30–50 % (`benches/search-lab.sh`).
pub(crate) const SPEED_CHANGE: f64 = 0.1;

/// Other programs on the lab's CPUs during a search's trials.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Crowded {
    /// The share of the lab's CPUs' time they took over the trials.
    pub(crate) share: f64,
    /// The trials they took more than [`CROWDED_SHARE`] of.
    pub(crate) trials: usize,
    /// The trials whose CPUs the lab watched.
    pub(crate) of: usize,
}

impl Crowded {
    /// Whether they took more than [`CROWDED_SHARE`] over the search: judged over all its
    /// trials, since a 1 s trial's share counts in ticks of 1 % of a CPU.
    pub(crate) fn is_crowded(&self) -> bool {
        self.share > CROWDED_SHARE
    }
}

/// What the DUT did in a saturating trial (opening, closing, or at max load): the rate it
/// forwarded and whether it lost more than every goal allows (it, not the generator, set the
/// rate).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Saturated {
    /// Packets/s received over the trial's seconds.
    pub(crate) forwarded: f64,
    /// The loss ratio was above every goal's: the DUT was saturated.
    pub(crate) saturated: bool,
}

impl SearchTrial {
    /// The trial's loss ratio, |sent − received| / sent (0 when nothing was sent).
    pub(crate) fn loss_ratio(&self) -> f64 {
        crate::search::loss_ratio(self.sent, self.received)
    }

    /// The share of the load the DUT did not forward: what the receiver counted short of what
    /// was sent, over what was sent (0 when nothing was). A count above what was sent is no
    /// loss: a latency trial's count is the load's once the probes are taken out of it, and
    /// that take-out missed up to a few hundred frames in 10 s at light loads here.
    pub(crate) fn load_lost(&self) -> f64 {
        match self.sent {
            0 => 0.0,
            sent => self.sent.saturating_sub(self.received) as f64 / sent as f64,
        }
    }

    /// The share of the load that the watched interface dropping the most dropped, over what
    /// was sent (0 when nothing was). On the virtual lab that is the DUT's input ring refusing
    /// frames the generator then sent again, so a trial can drop without losing load: its
    /// queue was full ([`SearchTrial::most_dropped`]).
    pub(crate) fn load_dropped(&self) -> f64 {
        match self.sent {
            0 => 0.0,
            sent => self.most_dropped() as f64 / sent as f64,
        }
    }

    /// Whether the DUT's CPU stalls, where the lab watched them, account for the packets the
    /// trial lost ([`CpuStalls::explain`], at the rate the senders sent): the machine's loss.
    pub(crate) fn lost_to_stalls(&self) -> bool {
        self.stalls_explain(self.sent.saturating_sub(self.received))
    }

    /// Whether the DUT's CPU stalls account for what the trial lost or what the watched
    /// interface dropping the most dropped, the larger ([`CpuStalls::explain`]): a queue the
    /// machine filled, not the load. On the virtual lab the generator sends again what the
    /// DUT's full input ring refused, so a stall can drop frames without losing any.
    pub(crate) fn full_to_stalls(&self) -> bool {
        let lost = self.sent.saturating_sub(self.received);
        self.stalls_explain(lost.max(self.most_dropped()))
    }

    /// The share of the lab's CPUs' time over the trial that other programs took, where read
    /// ([`CpuStalls::others_share`]).
    pub(crate) fn others_share(&self) -> Option<f64> {
        (self.dut_cpu.as_ref()).and_then(|c| c.others_share(self.duration))
    }

    /// Whether other programs took more than [`CROWDED_SHARE`] of the lab's CPUs' time over the
    /// trial.
    pub(crate) fn crowded(&self) -> bool {
        crowded(self.others_share())
    }

    /// What the watched interface dropping the most dropped (0 when none was watched): a veth
    /// pair counts a drop at both ends, hence the largest, not the sum.
    fn most_dropped(&self) -> u64 {
        self.drops.values().max().copied().unwrap_or(0)
    }

    /// Whether the stalls the watch saw account for `packets` at the rate the senders sent.
    fn stalls_explain(&self, packets: u64) -> bool {
        let sent_rate = self.sent as f64 / self.duration;
        (self.dut_cpu.as_ref()).is_some_and(|c| c.explain(sent_rate, packets))
    }

    fn saturated(&self, worst_goal: f64) -> Saturated {
        Saturated {
            forwarded: self.received as f64 / self.duration,
            saturated: self.loss_ratio() > worst_goal,
        }
    }
}

impl SearchRecord {
    /// The DUT saturated at the start of the search (the opening trial; without one, the
    /// search's first measured trial at max load) and at its end (the closing trial); `None`
    /// where there was no such trial.
    pub(crate) fn saturated(&self) -> (Option<Saturated>, Option<Saturated>) {
        let Some(result) = &self.result else {
            return (None, None);
        };
        let worst = (result.goals.iter()).fold(0.0, |w: f64, g| w.max(g.goal.loss_ratio));
        let first = self
            .opening
            .as_ref()
            .or_else(|| (result.first_at_max_load()).and_then(|(i, _)| self.trials.get(i)));
        let at = |t: &SearchTrial| t.saturated(worst);
        (first.map(at), self.closing.as_ref().map(at))
    }

    /// The share of the load an interface dropped over the search's trials at its NDR
    /// ([`SearchResult::ndr`], [`SearchTrial::load_dropped`]): on the virtual lab, what the
    /// DUT's full input ring refused there and the generator sent again. `None` without an NDR
    /// or where no interface was watched.
    pub(crate) fn ndr_dropped(&self) -> Option<f64> {
        let ndr = self.result.as_ref()?.ndr()?;
        let at: Vec<&SearchTrial> = (self.trials.iter())
            .filter(|t| !t.drops.is_empty() && (t.load - ndr).abs() <= 1e-9 * ndr)
            .collect();
        let sent: u64 = at.iter().map(|t| t.sent).sum();
        let dropped: u64 = at.iter().map(|t| t.most_dropped()).sum();
        (sent > 0).then(|| dropped as f64 / sent as f64)
    }

    /// Each trial of the search's trace with the lab's record of it: they are the same
    /// trials, in the same order. Empty without a result.
    pub(crate) fn paired_trials(&self) -> impl Iterator<Item = (&TrialRecord, &SearchTrial)> {
        (self.result.iter()).flat_map(|r| r.trials.iter().zip(&self.trials))
    }

    /// What other programs took of the lab's CPUs over its trials where the lab watched them
    /// (and the trials they crowded, [`SearchTrial::crowded`]); `None` when it watched none.
    pub(crate) fn crowded(&self) -> Option<Crowded> {
        let watched: Vec<(f64, f64)> = (self.trials.iter())
            .filter_map(|t| Some((t.others_share()?, t.duration)))
            .collect();
        let seconds: f64 = watched.iter().map(|(_, d)| d).sum();
        (!watched.is_empty()).then(|| Crowded {
            share: watched.iter().map(|(s, d)| s * d).sum::<f64>() / seconds.max(f64::EPSILON),
            trials: (self.trials.iter()).filter(|t| t.crowded()).count(),
            of: watched.len(),
        })
    }

    /// What the DUT forwarded saturated at the start and at the end of the search, when the
    /// two differ by more than [`SPEED_CHANGE`] and the DUT was saturated in at least one: the
    /// machine changed speed while the search ran, and its bounds mix both speeds.
    pub(crate) fn speed_change(&self) -> Option<(f64, f64)> {
        let (Some(start), Some(end)) = self.saturated() else {
            return None;
        };
        let (a, b) = (start.forwarded, end.forwarded);
        let moved = (a - b).abs() > SPEED_CHANGE * a.max(b);
        (moved && (start.saturated || end.saturated)).then_some((a, b))
    }
}
