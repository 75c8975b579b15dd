//! The alternating design's latency in the report (issue 35): each comparison of a run (each
//! entry against the baseline, then the `versus` lines, as for its rates) on its P99 and its
//! P50, paired block by block — the mean of the per-block log ratios with Student's t at 95 %
//! ([`crate::stats::paired()`]), over the blocks where both entries had probes; lower is better.
//! The latency run has as many blocks as `[latency] blocks` asks, so no stopping rule spreads
//! its confidence over looks, and no quiet level screens its blocks: its load is fixed.

use super::{compared_at, Report};
use crate::ingest::alternating::latency::RunLatency;
use crate::ingest::alternating::AlternatingRun;
use crate::ingest::benchlab::latency::{Load, ProbeTrial};
use crate::report::verdict::{Metric, Quantile, RunPair, Verdict};
use crate::stats::{paired, Block, Confidence, PairedEstimate};
use crate::store::CROWDED_SHARE;

impl Report {
    /// The latency verdicts of `run`, per percentile (P99, then P50, then P50 in the DUT where
    /// the DUT recorded it) each of its comparisons; none without a latency run.
    pub(crate) fn alternating_latency_verdicts(&self, run: &AlternatingRun) -> Vec<Verdict> {
        let Some(latency) = &run.latency else {
            return Vec::new();
        };
        let pairs = self.run_pairs(run);
        let mut verdicts = Vec::new();
        let in_dut = latency.entries.iter().any(|e| e.in_dut.is_some());
        let quantiles = Quantile::COMPARED.into_iter();
        for quantile in quantiles.filter(|&q| q != Quantile::InDutP50 || in_dut) {
            let mut context = self.run_context(run);
            let load = Load::Alternating(latency.load_pct);
            context.push(compared_at(quantile, load, latency.load_pps));
            for pair in &pairs {
                let what = (
                    Metric::Latency(quantile),
                    context.clone(),
                    Some(latency.load_pps),
                );
                let estimate = block_paired(latency, pair, quantile);
                let mut verdict = self.run_verdict(run, pair, what, estimate);
                verdict.unreliable = (estimate.is_none() || latency.crowded_kept)
                    .then(|| crowded(latency))
                    .flatten();
                verdicts.push(verdict);
            }
        }
        verdicts
    }
}

/// Why a latency run's comparisons are no finding when other programs crowded the lab's CPUs:
/// during every block (all kept), or during enough of them (left out) that too few remain for
/// an estimate; `None` when none was crowded.
fn crowded(latency: &RunLatency) -> Option<String> {
    let crowded = latency.crowded.len();
    let share = 100.0 * CROWDED_SHARE;
    (crowded > 0).then(|| match latency.crowded_kept {
        true => format!(
            "other programs took more than {share:.0} % of the lab's CPUs' time during every one \
             of its {crowded} blocks"
        ),
        false => format!(
            "other programs took more than {share:.0} % of the lab's CPUs' time during {crowded} \
             of its {} blocks, left out",
            latency.finished_blocks()
        ),
    })
}

/// The paired estimate of `pair` on `quantile`, the compared entry's blocks against the
/// reference's, over the blocks where both had probes; `None` with fewer than 2 of them.
fn block_paired(
    latency: &RunLatency,
    pair: &RunPair,
    quantile: Quantile,
) -> Option<PairedEstimate> {
    let reference = latency.entries.get(pair.reference)?;
    let subject = latency.entries.get(pair.subject)?;
    let value = |t: &ProbeTrial| Some(quantile.of(t)? as f64);
    // Every entry has a trial per block of the run, in block order: zipped, they pair by block.
    let blocks: Vec<Block> = (reference.trials.iter().zip(&subject.trials))
        .filter_map(|(r, s)| Block::new(vec![value(r)?, value(s)?]).ok())
        .collect();
    paired(&blocks, 1, Confidence::P95)
}

#[cfg(test)]
mod tests;
