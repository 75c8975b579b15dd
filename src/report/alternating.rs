//! The time chart of an alternating run (`alternating.<version>.<profile>.png`): every short
//! window's rate against time, coloured by the config set in force (grey inside a settle
//! time), with a tick at each switch, so that a reader sees the machine's noise and what the
//! design kept of it.

use anyhow::anyhow;
use plotters::prelude::*;

use super::chart::{encode_png, register_font, FONT_FAMILY, HEIGHT, PALETTE, WIDTH};
use super::{Exporter, OutputFile};
use crate::ingest::alternating::AlternatingRun;
use crate::stats::quiet::{MIN_QUIET_SHARE, QUIET_QUANTILE, SLOWED_BELOW};
use crate::stats::PairedEstimate;
use crate::store::{crowded, CROWDED_SHARE};
use crate::units::format_pps;

/// The chart's file name.
pub(crate) fn file_name(run: &AlternatingRun) -> String {
    format!("alternating.{}.{}.png", run.version, run.profile)
}

/// The run's time chart as PNG, its entries named `names` (labels, in the order of
/// `run.sets`); `None` when it has no window to draw.
pub(crate) fn render(
    run: &AlternatingRun,
    title: &str,
    names: &[&str],
) -> anyhow::Result<Option<Vec<u8>>> {
    let drawable: Vec<&(f64, f64, Option<usize>)> = (run.windows.iter())
        .filter(|(t, r, _)| t.is_finite() && r.is_finite() && *r >= 0.0)
        .collect();
    let Some(end) = drawable.iter().map(|w| w.0).reduce(f64::max) else {
        return Ok(None);
    };
    let top = drawable.iter().map(|w| w.1).fold(0.0, f64::max).max(1.0) * 1.1;
    register_font()?;
    let mut rgb = vec![0u8; (WIDTH * HEIGHT * 3) as usize];
    draw(run, (title, names), (&drawable, end, top), &mut rgb)
        .map_err(|e| anyhow!("drawing {}: {e}", file_name(run)))?;
    Ok(Some(encode_png(&rgb)?))
}

type Points<'a> = (&'a [&'a (f64, f64, Option<usize>)], f64, f64);

fn draw(
    run: &AlternatingRun,
    (title, names): (&str, &[&str]),
    (windows, end, top): Points<'_>,
    rgb: &mut [u8],
) -> Result<(), Box<dyn std::error::Error>> {
    let root = BitMapBackend::with_buffer(rgb, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FONT_FAMILY, 36.0))
        .margin(24)
        .x_label_area_size(70)
        .y_label_area_size(150)
        .build_cartesian_2d(0.0..end, 0.0..top)?;
    chart
        .configure_mesh()
        .x_desc("seconds of traffic")
        .y_desc("received, per 0.05 s window")
        .y_label_formatter(&|v| format_pps(*v))
        .label_style((FONT_FAMILY, 24.0))
        .axis_desc_style((FONT_FAMILY, 26.0))
        .draw()?;
    let grey = RGBColor(0xB0, 0xB0, 0xB0);
    chart.draw_series(
        windows
            .iter()
            .filter(|w| w.2.is_none())
            .map(|w| Circle::new((w.0, w.1), 2, grey.filled())),
    )?;
    for (set, &name) in names.iter().enumerate() {
        let colour = PALETTE[set % PALETTE.len()];
        chart
            .draw_series(
                windows
                    .iter()
                    .filter(|w| w.2 == Some(set))
                    .map(|w| Circle::new((w.0, w.1), 3, colour.filled())),
            )?
            .label(name)
            .legend(move |(x, y)| Circle::new((x + 10, y), 6, colour.filled()));
    }
    // A short tick at the top for every switch: many switches, so no full-height lines.
    chart.draw_series(
        run.switches
            .iter()
            .filter(|t| t.is_finite())
            .map(|&t| PathElement::new(vec![(t, top * 0.97), (t, top)], BLACK.stroke_width(1))),
    )?;
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT_FAMILY, 26.0))
        .position(SeriesLabelPosition::LowerRight)
        .draw()?;
    root.present()?;
    Ok(())
}

/// The README's section on the alternating runs: the design in words, each comparison's paired
/// estimate, how each run ended, and its time chart.
pub(crate) fn section(report: &super::Report) -> String {
    if report.alternating.is_empty() {
        return String::new();
    }
    let mut md = String::from("\n## Paired comparisons (alternating design)\n\n");
    md.push_str(&format!(
        "An iteration is {}. Each line below is the mean of the per-block log ratios against the baseline with Student's t interval, at \
         95 % over the stopping rule's planned looks (99 % at each look), over the blocks where both sets ran at the machine's quiet level \
         (within {:.0} % of their {:.0}th percentile over the run's blocks: disturbance only slows a machine down, and a slowed machine \
         pays different costs); the blocks left out get their own line. When fewer than {:.0} % of the blocks reach that level, the \
         comparison is made at the highest level among the others that holds that share, and when none does, over every block.\n",
        report.method,
        100.0 * (1.0 - SLOWED_BELOW),
        100.0 * QUIET_QUANTILE,
        100.0 * MIN_QUIET_SHARE,
    ));
    for run in &report.alternating {
        let baseline = report.label(&run.sets[0]);
        md.push_str(&format!(
            "\n### {} · {}\n\n",
            report.version_label(&run.version),
            report.label(&run.profile)
        ));
        for (k, (set, estimate)) in run.estimates.iter().enumerate() {
            let line = estimate_line(report.label(set), baseline, estimate.as_ref());
            md.push_str(&format!("- {line}\n"));
            if let Some(e) = run.slowed.get(k).copied().flatten() {
                let level = e
                    .baseline_pps
                    .map(|pps| format!(" ({baseline} at {})", format_pps(pps)))
                    .unwrap_or_default();
                md.push_str(&format!(
                    "  - on the {} blocks at other speed levels{level}: {:.1}\n",
                    e.blocks,
                    e.change()
                ));
            }
        }
        for (version, base, estimate) in &run.versus {
            let line = estimate_line(report.version_label(version), base, estimate.as_ref());
            md.push_str(&format!("- {line}\n"));
        }
        md.push_str(&format!(
            "- {} blocks; the run ended: {}{}\n",
            run.blocks,
            run.ended.join(", then "),
            others(run)
        ));
        for why in &run.discarded {
            md.push_str(&format!("- {why}\n"));
        }
        if !run.windows.is_empty() {
            md.push_str(&format!(
                "\n![{} over time, {} s windows coloured by config set]({})\n",
                report.label(&run.profile),
                run.window_s,
                file_name(run)
            ));
        }
    }
    md
}

/// `; other programs took at most 0.2 % of the lab's CPUs' time in a block`, or in how many
/// blocks they took more than [`CROWDED_SHARE`], where the lab read it (the virtual lab); empty
/// elsewhere.
fn others(run: &AlternatingRun) -> String {
    let Some(most) = run.others_shares.iter().copied().reduce(f64::max) else {
        return String::new();
    };
    let blocks = (run.others_shares.iter())
        .filter(|&&s| crowded(Some(s)))
        .count();
    match blocks {
        0 => format!(
            "; other programs took at most {:.1} % of the lab's CPUs' time in a block",
            100.0 * most
        ),
        _ => format!(
            "; other programs took more than {:.0} % of the lab's CPUs' time during {blocks} of \
             its {} blocks (up to {:.1} %): a machine running them forwards less and its \
             intervals widen, so its costs are those of a crowded machine (run nothing else \
             while benchlab measures)",
            100.0 * CROWDED_SHARE,
            run.others_shares.len(),
            100.0 * most
        ),
    }
}

/// The time charts of the alternating runs.
pub(crate) struct AlternatingExporter;

impl Exporter for AlternatingExporter {
    fn files(&self, report: &super::Report) -> anyhow::Result<Vec<OutputFile>> {
        let mut files = Vec::new();
        for run in &report.alternating {
            let title = format!("{} · {}", report.title, run.profile);
            let names: Vec<&str> = run.sets.iter().map(|s| report.label(s)).collect();
            if let Some(bytes) = render(run, &title, &names)? {
                files.push(OutputFile {
                    name: file_name(run),
                    bytes,
                });
            }
        }
        Ok(files)
    }
}

/// One comparison line: the estimate, whether it proves a difference, or why there is none.
fn estimate_line(set: &str, baseline: &str, estimate: Option<&PairedEstimate>) -> String {
    match estimate {
        Some(e) if e.is_significant() => format!("{:.1}", e.line(set, baseline)),
        Some(e) => format!("{:.1}: no difference proven", e.line(set, baseline)),
        None => format!("{set} vs {baseline}: too few blocks for an interval"),
    }
}
