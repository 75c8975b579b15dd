//! Calibration before a search whose max load is not given: the highest fixed rate the
//! generator holds on this machine, of which the search's max load is a share.

use super::{SearchRunner, TrialError};
use crate::config::Rate;
use crate::store::{SearchRecord, SearchTrialId};
use crate::units::format_pps;

/// Share of the highest fixed rate the generator held in calibration taken as the max load: on
/// a shared machine what it holds moves by several percent from one trial to the next, and a
/// max load it cannot send makes every trial there invalid. At 0.95 the virtual lab's generator,
/// having held 1.53 Mpps, sent 97–98 % of the 1.44 Mpps max load in three trials running (under
/// the 99 % a trial needs): two of six searches failed at their first trial.
pub(crate) const GENERATOR_SHARE: f64 = 0.9;
/// A calibration trial whose senders sent at least this share of the rate asked holds it (the
/// runner asks a little more than a trial's load to make up the rest:
/// [`MAX_CORRECTION`](super::aim::MAX_CORRECTION)).
pub(crate) const HELD_SHARE: f64 = 0.95;
/// Calibration trials before giving up on finding a rate the generator holds.
pub(crate) const CALIBRATIONS: usize = 8;

/// The search's shortest trial, seconds: its shortest initial trial duration or warm-up.
pub(super) fn shortest_trial(config: &crate::search::SearchConfig) -> f64 {
    (config.goals.iter().map(|g| g.initial_trial_duration))
        .chain([config.warmup_duration].into_iter().filter(|&w| w > 0.0))
        .fold(f64::INFINITY, f64::min)
}

/// The highest fixed rate the generator holds, from calibration trials: one at full rate (`max`:
/// the largest bursts), then fixed rates, each a tenth below what the senders sent in the previous
/// one ([`sending_rate`](super::sending_rate), else the count), until one is held ([`HELD_SHARE`]);
/// the max load is a share of what the senders sent in that one. The senders are asked for more
/// than each fixed rate as they fell short so far, as in the search's trials (a generator that
/// sends 90 % of every rate asked never holds one a tenth lower, and failed a calibration on a busy
/// machine: 894 Kpps sent of 987 Kpps at its eighth trial). A fixed rate sends less than full rate
/// (smaller bursts, a due time per burst), and on the virtual lab less again as the DUT's
/// forwarding shares the machine's two CPUs with the sender. Each lasts as long as the search's
/// shortest trial.
pub(super) fn calibrate(
    runner: &mut SearchRunner<'_, '_>,
    record: &mut SearchRecord,
    config: &crate::search::SearchConfig,
) -> Result<f64, TrialError> {
    let seconds = shortest_trial(config);
    let mut rate = Rate::Max;
    for _ in 0..CALIBRATIONS {
        let load = match rate {
            Rate::Pps(pps) => Some(pps as f64),
            Rate::Max => None,
        };
        let (trial, sending) = match load {
            Some(pps) => runner.fixed(pps, seconds)?,
            None => runner.measure(rate, false, seconds, load)?,
        };
        runner.take_last(SearchTrialId::Calibration(record.calibration.len() + 1))?;
        record.calibration.push(trial.clone());
        if trial.sent == 0 {
            let problem = trial.problem.unwrap_or_else(|| "nothing was sent".into());
            return Err(TrialError(anyhow::anyhow!(
                "measuring what the generator can send: {problem}"
            )));
        }
        let sent = sending.unwrap_or(trial.sent as f64 / seconds);
        if matches!(rate, Rate::Pps(pps) if sent >= HELD_SHARE * pps as f64) {
            record.generator_max = Some(sent);
            if GENERATOR_SHARE * sent <= config.min_load {
                break;
            }
            return Ok(GENERATOR_SHARE * sent);
        }
        let next = if rate == Rate::Max { sent } else { 0.9 * sent };
        rate = Rate::Pps(next.round().max(1.0) as u64);
    }
    let tried = (record.calibration.iter().skip(1))
        .map(|t| {
            format!(
                "{} sent of {}",
                format_pps(t.sent as f64 / t.duration),
                format_pps(t.load)
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let why = match record.generator_max {
        Some(held) => format!(
            "the generator held {} at most, not above search.min_load ({})",
            format_pps(held),
            format_pps(config.min_load)
        ),
        None => format!(
            "the generator sent under {:.0} % of every fixed rate asked in {} calibration trials",
            HELD_SHARE * 100.0,
            record.calibration.len()
        ),
    };
    Err(TrialError(anyhow::anyhow!(
        "{why} ({tried}): it lost its CPU too often; run on a quieter machine, or set \
         search.max_load to a rate it can send"
    )))
}
