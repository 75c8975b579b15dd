//! The latency trials after a throughput search (issue 35): probes on top of fixed loads at
//! shares of the search's NDR (`[latency] loads`, FD.io CSIT's 0, 10, 50 and 90 % by default),
//! 0 % being the probes alone. Each lasts as long as a campaign trial, its first second left
//! out of the figures as the load settles, and keeps its files and `latency.hlog` in
//! `latency/<pct>/` of the iteration ([`SearchTrialId::Latency`]).
//!
//! They run from the highest load down. The NDR holds for the machine's speed during the
//! search, and a shared machine's speed moves by a fifth within a minute
//! (BENCHMARKS.md, `benches/search-lab.sh`): at 90 % of the NDR, a load that runs right after the search's
//! last trials (near the NDR) is the likeliest to still be under what the DUT forwards. A load
//! that saturated the DUT anyway is said in the report (`SearchTrial::load_lost` and
//! `load_dropped`, the trouble `overloaded`).

use std::time::Duration;

use super::{SearchRunner, TrialError};
use crate::campaign::latency;
use crate::config::{Rate, Trial};
use crate::search::SearchResult;
use crate::store::{LatencyLoad, SearchTrialId};

/// Runs the latency trials of a search that found `result`; none without an NDR (no goal
/// of zero loss, or no load without loss).
pub(super) fn loads(
    runner: &mut SearchRunner<'_, '_>,
    result: &SearchResult,
) -> Result<Vec<LatencyLoad>, TrialError> {
    let Some(ndr) = result.ndr() else {
        return Ok(Vec::new());
    };
    let cfg = runner.ctx.campaign.latency();
    let duration = runner.ctx.campaign.trial.duration;
    // The figures leave out the first second, as the load's rate settles.
    let window = Trial {
        duration,
        warmup: Duration::from_secs(1),
        cooldown: Duration::ZERO,
        latency: true,
    };
    // The probes run already: the search ran with them (`run_search`).
    let mut loads = cfg.loads.clone();
    loads.sort_unstable_by(|a, b| b.cmp(a));
    let mut done = Vec::new();
    for pct in loads {
        let load = ndr * f64::from(pct) / 100.0;
        let seconds = duration.as_secs_f64();
        let measured = match pct {
            0 => runner.measure(Rate::Pps(0), false, seconds, None),
            _ => runner.fixed(load, seconds),
        };
        let (mut trial, _) = measured?;
        let id = SearchTrialId::Latency(pct);
        runner.take_last(id)?;
        trial.load = load;
        let Some(probes) = runner.probed.take() else {
            continue;
        };
        let dir = (runner.ctx.store.search_trial_dir(runner.key, id))
            .map_err(|e| TrialError(e.into()))?;
        std::fs::create_dir_all(&dir).map_err(|e| TrialError(e.into()))?;
        let latency = latency::store_trial(
            runner.ctx.store,
            &dir,
            (&probes, runner.round_trips.take().as_ref()),
            trial.start_unix_s,
            &window,
            cfg.rate,
            Some(pct),
        )
        .map_err(TrialError)?;
        done.push(LatencyLoad {
            pct,
            trial,
            latency,
        });
    }
    done.sort_unstable_by_key(|l| l.pct);
    Ok(done)
}
