//! An alternating run's part of the "Latency under load" section: its load, each entry's
//! figures over the run (with its time in the DUT where the DUT recorded it) and its paired
//! comparisons, block by block.

use super::{figures, in_dut_p50};
use crate::ingest::alternating::latency::RunLatency;
use crate::ingest::alternating::AlternatingRun;
use crate::report::verdict::{Finding, Metric, Verdict};
use crate::report::Report;
use crate::store::CROWDED_SHARE;
use crate::units::format_pps;

/// An alternating run's latency: its load, each entry's figures over the run, its paired
/// comparisons and how it ended; empty when it has no latency run.
pub(super) fn alternating(report: &Report, run: &AlternatingRun) -> String {
    let Some(latency) = &run.latency else {
        return String::new();
    };
    let baseline = run.sets.first().map_or("", |s| report.label(s));
    let dut = latency.entries.iter().any(|e| e.in_dut.is_some());
    let (in_dut, align) = match dut {
        true => (" P50 in the DUT |", "---:|"),
        false => ("", ""),
    };
    let (load, baseline_pps) = (
        format_pps(latency.load_pps),
        format_pps(latency.baseline_pps),
    );
    let at = match latency.load_pct {
        Some(pct) => format!(
            "At {pct} % of {baseline}'s saturated rate, {load} ({baseline}'s median over the \
             run's throughput blocks: {baseline_pps})"
        ),
        None => format!(
            "At the profile's rate, {load}, which {baseline} forwarded (its median over the \
             run's throughput blocks: {baseline_pps})"
        ),
    };
    let mut md = format!(
        "\n### {} · {}, alternated\n\n\
         {at}, {} blocks: the config sets alternated as in the throughput blocks, each phase's \
         probes counted from the end of its settle time. Percentiles: each config set's phases \
         merged over the run; probes: those that arrived in them.\n\n\
         | config set | P50 |{in_dut} P90 | P99 | P99.9 | max | probes |\n\
         |---|---:|{align}---:|---:|---:|---:|---:|\n",
        report.version_label(&run.version),
        report.label(&run.profile),
        latency.blocks,
    );
    for (set, s) in run.sets.iter().zip(&latency.entries) {
        let [p50, rest @ ..] = figures(s.established.percentiles().as_ref());
        let in_dut = match dut {
            true => format!(" {} |", in_dut_p50(s)),
            false => String::new(),
        };
        md.push_str(&format!(
            "| {} | {p50} |{in_dut} {} | {} |\n",
            report.label(set),
            rest.join(" | "),
            s.established.len()
        ));
    }
    md.push_str(match dut {
        true => {
            "\nEach comparison's P99, P50 and P50 in the DUT, paired block by block (the mean of \
             the per-block log ratios with Student's t), as the rates are:\n\n"
        }
        false => {
            "\nEach comparison's P99 and P50, paired block by block (the mean of the per-block \
             log ratios with Student's t), as the rates are:\n\n"
        }
    });
    for v in report.alternating_latency_verdicts(run) {
        md.push_str(&format!("- {}\n", paired_line(&v)));
    }
    md.push_str(&how_it_ended(latency));
    md
}

/// The lines under an alternating latency run's comparisons: the blocks other programs crowded
/// (left out, or kept when every one was) and why the run ended early; empty when neither.
fn how_it_ended(latency: &RunLatency) -> String {
    let mut md = String::new();
    if let Some(&most) = latency.crowded.iter().max_by(|a, b| a.total_cmp(b)) {
        let (share, most) = (100.0 * CROWDED_SHARE, 100.0 * most);
        md.push_str(&match latency.crowded_kept {
            true => format!(
                "- other programs took more than {share:.0} % of the lab's CPUs' time during \
                 every one of its {} blocks (up to {most:.1} %): kept, as none was left, so these \
                 figures are a crowded machine's and no comparison of them is a finding; measure \
                 again with nothing else running\n",
                latency.blocks
            ),
            false => format!(
                "- {} of its {} blocks left out: other programs took more than {share:.0} % of \
                 the lab's CPUs' time during them (up to {most:.1} %)\n",
                latency.crowded.len(),
                latency.finished_blocks()
            ),
        });
    }
    if let Some(why) = &latency.failure {
        md.push_str(&format!(
            "- the latency run ended early: {why}; its {} blocks before are kept\n",
            latency.blocks
        ));
    }
    md
}

/// `nft-stateful vs forwarding: P99 +134.0 % ± 20.0 % (paired, 95 %, 6 blocks): higher
/// latency`.
fn paired_line(v: &Verdict) -> String {
    let quantile = match v.metric {
        Metric::Latency(q) => q.name(),
        Metric::Throughput => "",
    };
    let head = format!("{} vs {}: {quantile}", v.subject_label, v.reference_label);
    match (v.finding(), v.interval()) {
        (Finding::NoEstimate, _) | (_, None) => format!("{head}: too few blocks for an interval"),
        (_, Some(i)) => format!(
            "{head} {} ({}, {} %, {}): {}",
            v.change_text(),
            v.kind(),
            i.confidence_pct,
            v.used_text(),
            v.verdict_text()
        ),
    }
}
