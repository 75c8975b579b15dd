//! CPU flamegraphs of the DUT: folded stacks from a profiler's output, the check that a capture
//! saw the forwarding path under load, and the SVGs (one per profiled series, plus a
//! differential one of every version against the first).
//!
//! A capture is a set of *folded stacks*: one `frame;frame;…;leaf count` line per distinct stack
//! (Brendan Gregg's format, which inferno reads and writes). Linux `perf script` output is folded
//! by [`fold_perf`]; a FreeBSD DUT's `pmcstat -R … -G` callgraph gets its own folder beside it and
//! everything after folding (checks, SVGs, report) stays the same.
//!
//! The check exists because the old harness's capture window often missed the traffic and
//! published flamegraphs of an idle CPU: a capture whose samples are mostly idle, or that never
//! went through the forwarding path, is not drawn; the report says why instead.
//!
//! Nothing here does I/O beyond the readers and writers it is given.
//!
//! [`fold_perf`]: crate::profile::folded::fold_perf

use std::io;

use serde::Serialize;

use anyhow::Context;

use super::{Exporter, OutputFile, Report};
use crate::error::InputError;
use crate::ingest::Capture;
pub(crate) use crate::profile::folded::{is_idle, Folded};

/// Frames of the forwarding path: receive, the firewall hooks, forward (Linux), and FreeBSD's
/// iflib/ip_tryforward path.
pub(crate) const FORWARDING_FRAMES: &[&str] = &[
    "__netif_receive_skb",
    "__netif_receive_skb_core",
    "__netif_receive_skb_list_core",
    "ip_rcv",
    "ipv6_rcv",
    "ip_list_rcv",
    "ipv6_list_rcv",
    "ip_forward",
    "ip6_forward",
    "ip_forward_finish",
    "ip6_forward_finish",
    "nf_hook_slow",
    "nf_hook_slow_list",
    "nft_do_chain",
    "nf_conntrack_in",
    "ipt_do_table",
    "ip6t_do_table",
    "iflib_rxeof",
    "ether_input",
    "ip_input",
    "ip6_input",
    "ip_tryforward",
    "ip6_tryforward",
    "ip_fastforward",
    "pfil_run_hooks",
    "ipfw_chk",
    "pf_test",
    "pf_test6",
];

/// A capture with more than this share of idle samples missed the traffic.
pub(crate) const MAX_IDLE_SHARE: f64 = 0.5;
/// A capture with less than this share of samples in the forwarding path did not profile the
/// forwarding (a few stray packets on a busy CPU are not the load).
pub(crate) const MIN_FORWARDING_SHARE: f64 = 0.01;
/// Fewer samples than this cannot show where the time goes.
pub(crate) const MIN_SAMPLES: u64 = 100;

/// Width of the SVGs, in pixels: FlameGraph's default, so that the bound below prunes the frames
/// flamegraph.pl prunes.
const IMAGE_WIDTH: usize = 1200;
/// Padding left and right of the frames (FlameGraph's and inferno's `xpad`): frames share the
/// 1180 pixels between.
const X_PAD: usize = 10;
/// flamegraph.pl leaves out frames narrower than 0.1 pixel, too thin to draw.
const MIN_WIDTH_PX: f64 = 0.1;

/// inferno's `min_width` is a percentage of the samples, not pixels: FlameGraph's 0.1 pixel of
/// 1180 is 0.0085 % (0.5 read as a percentage left out every frame under 0.5 % of the samples,
/// 116 of the archive's 656 frames of seed 002's forwarding profile drawn).
fn min_width_pct() -> f64 {
    MIN_WIDTH_PX / (IMAGE_WIDTH - 2 * X_PAD) as f64 * 100.0
}

fn forwarding_frames_in(stack: &str) -> impl Iterator<Item = &str> {
    stack.split(';').filter(|f| FORWARDING_FRAMES.contains(f))
}

/// What a capture shows: how much of it is idle, whether the forwarding path is in it, and
/// whether it is worth drawing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct CaptureCheck {
    /// Samples in the capture.
    pub(crate) samples: u64,
    /// Share of the samples with the CPU idle (0–1).
    pub(crate) idle_share: f64,
    /// Share of the samples in the forwarding path (0–1).
    pub(crate) forwarding_share: f64,
    /// The forwarding-path frames seen ([`FORWARDING_FRAMES`] order).
    pub(crate) forwarding_frames: Vec<String>,
    /// Why the capture is not published; `None` when it is.
    pub(crate) rejected: Option<String>,
}

impl CaptureCheck {
    /// True when the capture is worth a flamegraph.
    pub(crate) fn published(&self) -> bool {
        self.rejected.is_none()
    }
}

/// Checks a capture: rejected when it has too few samples, or when the forwarding path is
/// (nearly) absent ([`MIN_FORWARDING_SHARE`]). A capture of the one CPU the DUT forwards on is
/// also rejected when idle is most of it ([`MAX_IDLE_SHARE`]): the traffic saturates that CPU,
/// so an idle one means the window missed the traffic. A `system_wide` capture sampled every
/// CPU of a multi-core DUT, most of which may idle while one queue forwards: its idle share is
/// reported, and its forwarding share is counted among the samples that were not idle.
pub(crate) fn check(folded: &Folded, system_wide: bool) -> CaptureCheck {
    let samples = folded.samples();
    let (mut idle, mut forwarding) = (0u64, 0u64);
    let mut seen = std::collections::BTreeSet::new();
    for (stack, &count) in &folded.stacks {
        if is_idle(stack) {
            idle = idle.saturating_add(count);
        }
        let mut frames = forwarding_frames_in(stack).peekable();
        if frames.peek().is_some() {
            forwarding = forwarding.saturating_add(count);
        }
        seen.extend(frames);
    }
    let share = |n: u64, of: u64| if of == 0 { 0.0 } else { n as f64 / of as f64 };
    let (idle_share, forwarding_share) = (share(idle, samples), share(forwarding, samples));
    let busy = if system_wide {
        samples.saturating_sub(idle)
    } else {
        samples
    };
    let rejected = if busy < MIN_SAMPLES {
        Some(match system_wide {
            true => format!("only {busy} samples of work (at least {MIN_SAMPLES} needed)"),
            false => format!("only {samples} samples (at least {MIN_SAMPLES} needed)"),
        })
    } else if !system_wide && idle_share > MAX_IDLE_SHARE {
        Some(format!(
            "{:.0}% of the samples are idle: the capture missed the traffic",
            idle_share * 100.0
        ))
    } else if share(forwarding, busy) < MIN_FORWARDING_SHARE {
        Some(format!(
            "the forwarding path (ip_forward, nf_hook_slow, …) is in {:.1}% of the {}samples: \
             the capture did not profile the forwarding",
            share(forwarding, busy) * 100.0,
            if system_wide { "non-idle " } else { "" }
        ))
    } else {
        None
    };
    CaptureCheck {
        samples,
        idle_share,
        forwarding_share,
        forwarding_frames: (FORWARDING_FRAMES.iter())
            .filter(|f| seen.contains(**f))
            .map(|f| f.to_string())
            .collect(),
        rejected,
    }
}

fn options<'a>(title: &str, subtitle: &str) -> inferno::flamegraph::Options<'a> {
    let mut opt = inferno::flamegraph::Options::default();
    opt.title = title.to_string();
    opt.subtitle = Some(subtitle.to_string());
    opt.image_width = Some(IMAGE_WIDTH);
    opt.min_width = min_width_pct();
    // Colours from the frame names, so that regenerating a report gives the same bytes.
    opt.hash = true;
    opt.count_name = "samples".to_string();
    opt
}

/// A flamegraph of a capture, idle stacks left out, as SVG bytes.
pub(crate) fn render(folded: &Folded, title: &str, subtitle: &str) -> io::Result<Vec<u8>> {
    let text = folded.without_idle().to_text();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options(title, subtitle), text.lines(), &mut svg)?;
    Ok(svg)
}

/// A differential flamegraph: `after`'s stacks, red where they take a larger share of the
/// samples than in `before`, blue where smaller (idle left out of both, counts normalized so
/// that captures of different lengths compare).
pub(crate) fn render_diff(
    before: &Folded,
    after: &Folded,
    title: &str,
    subtitle: &str,
) -> io::Result<Vec<u8>> {
    let (before, after) = (
        before.without_idle().to_text(),
        after.without_idle().to_text(),
    );
    let mut diff = Vec::new();
    let opt = inferno::differential::Options {
        normalize: true,
        strip_hex: true,
    };
    inferno::differential::from_readers(opt, before.as_bytes(), after.as_bytes(), &mut diff)?;
    let diff = String::from_utf8_lossy(&diff);
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options(title, subtitle), diff.lines(), &mut svg)?;
    Ok(svg)
}

/// A profiled (version, config set, traffic profile): its capture, checked.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Flame {
    /// Version name.
    pub(crate) version: String,
    /// Config set name.
    pub(crate) config: String,
    /// Traffic profile name.
    pub(crate) profile: String,
    /// The profiling trial, relative to the results directory (`runs/….profile`).
    pub(crate) trial: String,
    /// The stacks.
    pub(crate) folded: Folded,
    /// Its check.
    pub(crate) check: CaptureCheck,
    /// How it was recorded, in words.
    pub(crate) source: String,
}

impl Flame {
    /// Checks a capture as read from a results directory; a capture the reader already found
    /// wrong (outside the traffic, missing) is rejected whatever its stacks show.
    pub(crate) fn from_capture(capture: &Capture) -> Result<Self, InputError> {
        let folded = Folded::parse(&capture.folded).map_err(|line| {
            InputError::new(format!(
                "{}/perf.folded: line {line}: not a folded stack (or counts past 2^53 \
                 samples); remove that trial's directory to profile it again",
                capture.trial
            ))
        })?;
        let mut check = check(&folded, capture.system_wide);
        if let Some(problem) = &capture.problem {
            check.rejected = Some(problem.clone());
        }
        Ok(Self {
            version: capture.version.clone(),
            config: capture.config.clone(),
            profile: capture.profile.clone(),
            trial: capture.trial.clone(),
            folded,
            check,
            source: capture.source.clone(),
        })
    }

    /// `flame/<version>.<config>.<profile>.svg`, levels without a name left out.
    pub(crate) fn svg_name(&self) -> String {
        format!("flame/{}.svg", self.stem())
    }

    /// `flame/diff.<version>.<config>.<profile>.svg`, levels without a name left out.
    pub(crate) fn diff_name(&self) -> String {
        format!("flame/diff.{}.svg", self.stem())
    }

    /// The levels that have a name, joined as the harness names a series (`bench` when none
    /// has): an empty one would start the name with a dot, which hides the file from `ls`.
    fn stem(&self) -> String {
        let parts: Vec<&str> = [&self.version, &self.config, &self.profile]
            .into_iter()
            .map(String::as_str)
            .filter(|p| !p.is_empty())
            .collect();
        match parts.is_empty() {
            true => "bench".to_string(),
            false => parts.join("."),
        }
    }

    /// The sentence the report gives for a rejected capture.
    pub(crate) fn rejection(&self) -> Option<String> {
        (self.check.rejected.as_ref())
            .map(|why| format!("{}: flamegraph not published: {why}", self.trial))
    }
}

/// A flamegraph file of the report and what its link says.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FlameLink {
    /// `flame/….svg`.
    pub(crate) file: String,
    /// `<version> with <profile> <config>`, or `<version> against <reference> with …`.
    pub(crate) text: String,
    /// Index into [`Report::flames`] of what it draws.
    pub(crate) flame: usize,
    /// For a differential flamegraph: index into [`Report::flames`] of the reference.
    pub(crate) against: Option<usize>,
}

/// The flamegraphs of a report: one per published capture, in the report's version, config
/// set and profile order, then one differential per published capture of a later version whose
/// first version's capture is published too.
pub(crate) fn links(report: &Report) -> Vec<FlameLink> {
    let find = |v: &str, c: &str, p: &str| {
        (report.flames.iter())
            .position(|f| f.check.published() && f.version == v && f.config == c && f.profile == p)
    };
    let text = |f: &Flame| {
        format!(
            "{} with {} {}",
            report.version_label(&f.version),
            report.label(&f.profile),
            report.label(&f.config)
        )
    };
    let mut plain = Vec::new();
    let mut diffs = Vec::new();
    for version in &report.versions {
        for config in &report.configs {
            for profile in &report.profiles {
                let Some(i) = find(version, config, profile) else {
                    continue;
                };
                let flame = &report.flames[i];
                plain.push(FlameLink {
                    file: flame.svg_name(),
                    text: text(flame),
                    flame: i,
                    against: None,
                });
                let reference = &report.versions[0];
                if version == reference {
                    continue;
                }
                if let Some(r) = find(reference, config, profile) {
                    diffs.push(FlameLink {
                        file: flame.diff_name(),
                        text: format!(
                            "{} against {} with {} {}",
                            report.version_label(version),
                            report.version_label(reference),
                            report.label(profile),
                            report.label(config)
                        ),
                        flame: i,
                        against: Some(r),
                    });
                }
            }
        }
    }
    plain.extend(diffs);
    plain
}

/// The SVG files of [`links`].
pub(crate) fn svg_files(report: &Report) -> io::Result<Vec<OutputFile>> {
    links(report)
        .iter()
        .map(|link| {
            let flame = &report.flames[link.flame];
            let subtitle = format!(
                "{}: {} samples, {:.0}% idle (left out)",
                flame.trial,
                flame.check.samples,
                flame.check.idle_share * 100.0
            );
            let bytes = match link.against {
                None => render(&flame.folded, &link.text, &subtitle)?,
                Some(r) => {
                    let subtitle = format!(
                        "red: larger share of the samples than in {}, blue: smaller",
                        report.flames[r].trial
                    );
                    render_diff(
                        &report.flames[r].folded,
                        &flame.folded,
                        &link.text,
                        &subtitle,
                    )?
                }
            };
            Ok(OutputFile {
                name: link.file.clone(),
                bytes,
            })
        })
        .collect()
}

/// The flamegraph SVGs (`flame/…`).
pub(crate) struct FlameExporter;

impl Exporter for FlameExporter {
    fn files(&self, report: &Report) -> anyhow::Result<Vec<OutputFile>> {
        svg_files(report).context("drawing the flamegraphs")
    }
}

#[cfg(test)]
mod tests;
