//! The alternating design's latency run read back (issue 35): `latency.json` and
//! `latency.hlog` of a run (`store::alternating::latency`), each entry's phases merged per
//! block — the values the report pairs block by block, as it pairs the rates — and over the
//! whole run.
//!
//! Each entry becomes a [`LatencySeries`] at [`Load::Alternating`] whose trials are the blocks,
//! so that the figures, the first packet's difference, results.json and the charts read it as
//! they read the trials design's. Its record keeps the percentiles of what arrived in each
//! phase's window, not what was sent: the blocks carry no probe counts.
//!
//! [`LatencySeries`]: crate::ingest::benchlab::latency::LatencySeries
//! [`Load::Alternating`]: crate::ingest::benchlab::latency::Load::Alternating

use std::collections::BTreeMap;

use super::AlternatingRun;
use crate::error::{shown, InputError};
use crate::ingest::benchlab::latency::{add_in_dut, LatencySeries, Load, ProbeKind, ProbeTrial};
use crate::ingest::{Series, Warning};
use crate::stats::latency::log::Interval;
use crate::stats::latency::Latency;
use crate::store::alternating::latency::RECORD;
use crate::store::alternating::{self, ALTERNATING};
use crate::store::latency::{
    ESTABLISHED, ESTABLISHED_IN_DUT, FIRST_PACKET, FIRST_PACKET_IN_DUT, LATENCY_FILE,
};
use crate::store::{crowded, AlternatingLatency, LatencyPhase, Store};

/// An alternating run's latency run, read back.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RunLatency {
    /// The load, in percent of the baseline's saturated rate; `None`: the profile's fixed
    /// rate.
    pub(crate) load_pct: Option<u32>,
    /// The baseline's saturated rate, packets/s: the median of its phase values in the run's
    /// throughput blocks.
    pub(crate) baseline_pps: f64,
    /// The load the senders were asked for, packets/s.
    pub(crate) load_pps: f64,
    /// Blocks it finished, less those left out (`crowded`, unless `crowded_kept`).
    pub(crate) blocks: usize,
    /// The share of the lab's CPUs' time other programs took during each block they took
    /// more than [`CROWDED_SHARE`](crate::store::CROWDED_SHARE) of: left out of every figure,
    /// unless every block was.
    pub(crate) crowded: Vec<f64>,
    /// Every block was crowded, so none was left out: the figures are a crowded machine's,
    /// said so, and no comparison of them is a finding.
    pub(crate) crowded_kept: bool,
    /// Why it ended early, when it did: its blocks before are kept.
    pub(crate) failure: Option<String>,
    /// One series per entry, in the order of the run's `sets` (baseline first): its trials
    /// are the blocks (each its phases merged), its histograms the whole run's.
    pub(crate) entries: Vec<LatencySeries>,
}

/// The latency run of `run`, whose entries' series are `series` (in the order of its
/// `sets`), when it has one; a record without its histograms is said in `warnings` and left
/// out, a record that names an entry the run does not have is refused.
pub(super) fn read(
    store: &Store,
    run: &AlternatingRun,
    series: &[Series],
    warnings: &mut Vec<Warning>,
) -> Result<Option<RunLatency>, InputError> {
    let (v, p) = (run.version.as_str(), run.profile.as_str());
    let Some((record, intervals)) = store.read_alternating_latency(v, p)? else {
        return Ok(None);
    };
    let Some(intervals) = intervals else {
        warnings.push(Warning::NoLatencyLog {
            file: format!("{ALTERNATING}/{v}.{p}/{LATENCY_FILE}"),
        });
        return Ok(None);
    };
    if let Some(phase) = (record.phases.iter()).find(|ph| !run.sets.contains(&ph.config)) {
        return Err(InputError::new(format!(
            "{}: phase {} of block {} names `{}`, which the run does not alternate; remove it \
             to measure the run's latency again",
            store.alternating_dir(v, p).join(RECORD).display(),
            phase.phase,
            phase.block,
            shown(&phase.config)
        )));
    }
    let by_tag: BTreeMap<&str, &Interval> = (intervals.iter())
        .filter_map(|i| Some((i.tag.as_deref()?, i)))
        .collect();
    let mut blocks: Vec<u32> = record.phases.iter().map(|ph| ph.block).collect();
    blocks.sort_unstable();
    blocks.dedup();
    let shares: Vec<Option<f64>> = blocks.iter().map(|&b| others_share(&record, b)).collect();
    let left_out: Vec<f64> = (shares.iter().copied())
        .filter(|&share| crowded(share))
        .flatten()
        .collect();
    // With every block crowded, leaving them out would leave no figure at all: they are kept,
    // and what they are is said.
    let crowded_kept = !blocks.is_empty() && left_out.len() == blocks.len();
    if !crowded_kept {
        let mut kept = shares.iter().map(|&share| !crowded(share));
        blocks.retain(|_| kept.next().unwrap_or(true));
    }
    let entries = (run.sets.iter().zip(series))
        .map(|(set, s)| entry(&record, (set, s), &blocks, &by_tag))
        .collect();
    Ok(Some(RunLatency {
        load_pct: record.load_pct,
        baseline_pps: record.baseline_pps,
        load_pps: record.load_pps,
        blocks: blocks.len(),
        crowded: left_out,
        crowded_kept,
        failure: record.failure,
        entries,
    }))
}

impl RunLatency {
    /// The blocks it finished, those left out included.
    pub(crate) fn finished_blocks(&self) -> usize {
        match self.crowded_kept {
            true => self.blocks,
            false => self.blocks + self.crowded.len(),
        }
    }
}

/// The share of the lab's CPUs' time other programs took during `block` of `record`, where
/// every phase of it read theirs.
fn others_share(record: &AlternatingLatency, block: u32) -> Option<f64> {
    let phases = (record.phases.iter())
        .filter(|ph| ph.block == block)
        .map(|ph| (ph.from_s, ph.to_s, ph.others_ms));
    alternating::block_share(phases, record.others_cpus.len())
}

/// The series of entry `set` (its throughput series `series`): per block its phases'
/// histograms merged, and all of them.
fn entry(
    record: &AlternatingLatency,
    (set, series): (&str, &Series),
    blocks: &[u32],
    by_tag: &BTreeMap<&str, &Interval>,
) -> LatencySeries {
    // First-packet probes are sent for the whole run or not at all.
    let first_packet = (record.phases.iter()).any(|ph| ph.first_packet.is_some());
    let mut entry = LatencySeries {
        name: series.name.clone(),
        version: series.version.clone(),
        config: series.config.clone(),
        profile: series.profile.clone(),
        load: Load::Alternating(record.load_pct),
        probe_rate_pps: record.probe_rate_pps,
        trials: Vec::new(),
        established: Latency::new(),
        first_packet: first_packet.then(Latency::new),
        in_dut: None,
        first_packet_in_dut: None,
    };
    for &block in blocks {
        let phases: Vec<u32> = (record.phases.iter())
            .filter(|ph| ph.block == block && ph.config == set)
            .map(|ph| ph.phase)
            .collect();
        let merged = |kind: &str| {
            let mut latency = Latency::new();
            for &phase in &phases {
                if let Some(i) = by_tag.get(LatencyPhase::tag(block, phase, kind).as_str()) {
                    latency.add(&i.latency);
                }
            }
            latency
        };
        let established = merged(ESTABLISHED);
        entry.established.add(&established);
        let in_dut = merged(ESTABLISHED_IN_DUT);
        add_in_dut(&mut entry.in_dut, &in_dut);
        let first = (entry.first_packet.as_mut()).map(|whole| {
            let first = merged(FIRST_PACKET);
            whole.add(&first);
            let in_dut = merged(FIRST_PACKET_IN_DUT);
            add_in_dut(&mut entry.first_packet_in_dut, &in_dut);
            figures(&first, &in_dut)
        });
        entry.trials.push(ProbeTrial {
            iteration: block,
            load_pps: record.load_pps,
            load_lost: None,
            load_dropped: None,
            ndr_dropped: None,
            established: figures(&established, &in_dut),
            first_packet: first,
            troubles: Vec::new(),
            longest_stall_ms: None,
            others_share: None,
            cpu_round_trip_ns: None,
            apart_by_second: Vec::new(),
        });
    }
    entry
}

/// A block's figures of one probe kind, its latency and time in the DUT: its phases have no
/// seconds of their own to show.
fn figures(latency: &Latency, in_dut: &Latency) -> ProbeKind {
    ProbeKind {
        window: latency.percentiles(),
        seconds: Vec::new(),
        probes: None,
        in_dut: in_dut.percentiles(),
        in_dut_seconds: Vec::new(),
    }
}
