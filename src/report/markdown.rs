//! README.md in the seeds' layout, opened by the verdicts: a title line, the verdicts table
//! (each comparison once), a bullet list of the setup, the graphs, the throughput searches,
//! latency under load, the paired comparisons of the alternating design, then one fenced
//! `ministat -s` block per comparison, each introduced by its verdict in words, and finally
//! what could not be measured.

use crate::ingest::escaped;
use crate::report::chart::Chart;
use crate::report::compare::block_line;
use crate::report::verdict::{shared_level, Finding};
use crate::report::{ComparisonBlock, Exporter, OutputFile, Report, Scope};
use crate::stats::Flavor;

/// File name of the report.
pub(crate) const README: &str = "README.md";
/// Start of the last line of every README benchlab writes; a README without it was written by
/// hand and is never overwritten.
pub(crate) const MARKER: &str = "<!-- benchlab report";

/// The whole README.
pub(crate) fn readme(report: &Report, charts: &[Chart]) -> String {
    let mut md = format!("{}\n", report.title);
    // The verdicts first: a reader takes the first figure for the result.
    if !report.verdicts.is_empty() {
        md.push_str(&verdicts(report));
        md.push_str("\n## Setup\n\n");
    }
    for line in setup_lines(report) {
        md.push_str(&format!("  - {line}\n"));
    }
    md.push('\n');
    for chart in charts {
        md.push_str(&format!(
            "![{}]({})\n",
            chart_alt(report, chart),
            chart.file_name
        ));
    }
    md.push_str(&super::throughput::markdown(report));
    md.push_str(&super::latency::markdown::section(report));
    md.push_str(&super::alternating::section(report));
    md.push_str(&ministat_sections(report));
    md.push_str(&flamegraphs(report));
    for (heading, lines) in [
        (
            "Flagged or measured twice (counted in the statistics above)",
            &report.flagged,
        ),
        ("Not measured", &report.warnings),
        (
            "The archive's difference lines not reproduced",
            &report.unreproduced,
        ),
    ] {
        if !lines.is_empty() {
            md.push_str(&format!("\n## {heading}\n\n"));
            for line in lines {
                md.push_str(&format!("  - {line}\n"));
            }
        }
    }
    md.push_str(&format!(
        "\n{MARKER} wrote this file from the logs; run it again rather than editing it. -->\n"
    ));
    // Where text read from results files (unames, names, flags, failure reasons) leaves for the
    // README: no control character or escape sequence of theirs gets there raw.
    md.split('\n').map(escaped).collect::<Vec<_>>().join("\n")
}

/// The ministat tables, one section per level compared (versions, config sets, profiles).
fn ministat_sections(report: &Report) -> String {
    let mut md = String::new();
    // Under the alternating design the tables are the harness's form of the blocks, not the
    // result: said in their title, since their intervals are the wider ones.
    let unpaired_blocks = match report.alternating.is_empty() {
        true => ("", ""),
        false => (
            ": blocks taken as iterations, unpaired",
            "\nministat's tables in the harness's form: each block's value counts as one \
             iteration and the blocks are compared unpaired, so their intervals are wider than \
             the paired estimates above.\n",
        ),
    };
    let of = |wanted: fn(&Scope) -> bool| -> Vec<&ComparisonBlock> {
        report.blocks.iter().filter(|b| wanted(&b.scope)).collect()
    };
    for (heading, blocks) in [
        (
            "Versions compared",
            of(|s| matches!(s, Scope::Versions { .. })),
        ),
        (
            "Config sets compared",
            of(|s| matches!(s, Scope::Configs { .. })),
        ),
        (
            "Traffic profiles compared",
            of(|s| matches!(s, Scope::Profiles { .. })),
        ),
    ] {
        if blocks.is_empty() {
            continue;
        }
        md.push_str(&format!("\n## {heading}{}\n", unpaired_blocks.0));
        md.push_str(unpaired_blocks.1);
        for block in blocks {
            md.push_str(&format!(
                "\n{}\n```\n{}```\n",
                verdict(report, block),
                block.ministat
            ));
        }
    }
    md
}

/// The verdicts table: each comparison once, its interval (paired where the design has one),
/// whether it shows a difference, on what and at what speed, and the verdict.
fn verdicts(report: &Report) -> String {
    // One level in the heading when every verdict has it (95 %, or an archive's own `-c`),
    // else each change says its own.
    let level = shared_level(&report.verdicts);
    let (at, column) = match level {
        Some(l) => (format!("at {l} % confidence"), format!("change ({l} %)")),
        None => ("each at its confidence".to_string(), "change".to_string()),
    };
    let mut md = format!(
        "\n## Verdicts\n\n\
         Each comparison once, {at}: the paired estimate where the design has one, else \
         ministat's difference of the iterations. A difference is shown when its interval \
         excludes 0; the ± is the smallest difference the run could have shown.\n\n\
         | where | compared | {column} | estimate | significant | used | speed level | \
         verdict |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for v in &report.verdicts {
        let significant = match (v.finding(), v.significant()) {
            (Finding::Unreliable | Finding::NoEstimate, _) => "—",
            (_, true) => "yes",
            (_, false) => "no",
        };
        let cells = [
            v.context.join(", "),
            format!("{} vs {}", v.subject_label, v.reference_label),
            // A spoiled difference is no finding: its figure stays in the details below.
            match (v.finding(), level, v.interval()) {
                (Finding::Unreliable, ..) => "—".to_string(),
                (_, None, Some(i)) => format!("{} ({} %)", v.change_text(), i.confidence_pct),
                _ => v.change_text(),
            },
            v.kind().to_string(),
            significant.to_string(),
            v.used_text(),
            v.speed_text(),
            match v.finding() {
                Finding::Faster
                | Finding::Slower
                | Finding::HigherLatency
                | Finding::LowerLatency => format!("**{}**", v.verdict_text()),
                _ => v.verdict_text(),
            },
        ];
        // A `|` in a name would end its cell.
        let cells: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
        md.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    md
}

/// The "Flamegraphs" section: links to each flamegraph, then to the differential ones; empty
/// when nothing was profiled (or nothing passed the capture check).
fn flamegraphs(report: &Report) -> String {
    let links = crate::report::flame::links(report);
    if links.is_empty() {
        return String::new();
    }
    let (plain, diffs): (Vec<_>, Vec<_>) = links.iter().partition(|l| l.against.is_none());
    let source = report.flames.first().map_or("", |f| f.source.as_str());
    let mut md = format!("\n## Flamegraphs\n\n{source} (idle left out):\n");
    for link in plain {
        md.push_str(&format!("  - [{}]({})\n", link.text, link.file));
    }
    if !diffs.is_empty() {
        md.push_str(
            "\nDifferential flamegraphs against the first version (red: a larger share of the \
             samples, blue: a smaller one):\n",
        );
        for link in diffs {
            md.push_str(&format!("  - [{}]({})\n", link.text, link.file));
        }
    }
    md
}

fn chart_alt(report: &Report, chart: &Chart) -> String {
    match chart.profile.as_str() {
        "" => report.title.clone(),
        profile => format!("{} ({})", report.title, report.label(profile)),
    }
}

/// The bullet list: the user's lines, then what the logs tell.
fn setup_lines(report: &Report) -> Vec<String> {
    let mut lines = report.lines.clone();
    for version in &report.versions {
        let mut unames: Vec<String> = Vec::new();
        for s in report
            .series
            .iter()
            .filter(|s| &s.series.version == version)
        {
            if let Some(uname) = s.series.setup.uname.as_deref().map(compact_uname) {
                if !unames.contains(&uname) {
                    unames.push(uname);
                }
            }
        }
        if !unames.is_empty() {
            lines.push(format!(
                "{}: {}",
                report.version_label(version),
                unames.join("; ")
            ));
        }
    }
    for profile in &report.profiles {
        let summary = super::traffic::traffic_summary(report, profile);
        if !summary.is_empty() {
            lines.push(summary);
        }
    }
    let counts: Vec<usize> = report.summarised().map(|(_, s)| s.n).collect();
    if let (Some(min), Some(max)) = (counts.iter().min(), counts.iter().max()) {
        let iterations = if min == max {
            min.to_string()
        } else {
            format!("{min} to {max}")
        };
        lines.push(format!(
            "{iterations} iterations per series; an iteration counts as {}",
            report.method
        ));
    }
    let mut statistics = match report.flavor {
        Flavor::Current => "Statistics: ministat at 95% confidence".to_string(),
        Flavor::Legacy => {
            "Statistics: ministat at 95% confidence, legacy relative interval (old ministat)"
                .to_string()
        }
        Flavor::Accurate => {
            "Statistics: ministat at 95% confidence, exactly rounded Stddev (accurate variance)"
                .to_string()
        }
    };
    if let Some(why) = &report.flavor_reason {
        statistics.push_str(&format!(" ({why})"));
    }
    lines.push(statistics);
    lines
}

/// `FreeBSD apu2 12.0-CURRENT FreeBSD 12.0-CURRENT #16 r318516M: Fri May 19 … amd64` →
/// `FreeBSD 12.0-CURRENT #16 r318516M amd64`.
pub(crate) fn compact_uname(uname: &str) -> String {
    let words: Vec<&str> = uname.split_whitespace().collect();
    if words.len() < 4 {
        return uname.trim().to_string();
    }
    let mut parts = vec![words[0], words[2]];
    if let Some(build) = words[3..].iter().position(|w| w.starts_with('#')) {
        let build = build + 3;
        if let Some(revision) = words.get(build + 1).and_then(|w| w.strip_suffix(':')) {
            parts.extend([words[build], revision]);
        }
    }
    let machine = match words[words.len() - 1] {
        "GNU/Linux" => words[words.len() - 2],
        last => last,
    };
    parts.push(machine);
    parts.join(" ")
}

/// What a comparison says, in words: `forwarding, inet4: 318516current -31.46% ± 1.20% against
/// 318516stable (95% confidence):`.
fn verdict(report: &Report, block: &ComparisonBlock) -> String {
    let fixed = report.fixed_labels(&block.scope);
    block_line(block, &fixed, |i| report.varying_label(&block.scope, i))
}

/// README.md.
pub(crate) struct MarkdownExporter;

impl Exporter for MarkdownExporter {
    fn files(&self, report: &Report) -> anyhow::Result<Vec<OutputFile>> {
        Ok(vec![OutputFile {
            name: README.to_string(),
            bytes: readme(report, &report.charts()).into_bytes(),
        }])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unames_are_compacted() {
        assert_eq!(
            compact_uname(
                "FreeBSD apu2 12.0-CURRENT FreeBSD 12.0-CURRENT #16 r318516M: Fri May 19 07:58:49 \
                 CEST 2017     olivier@lame4.bsdrp.net:/usr/obj/TESTING.amd64/sys/amd64  amd64"
            ),
            "FreeBSD 12.0-CURRENT #16 r318516M amd64"
        );
        assert_eq!(
            compact_uname(
                "Linux dut 6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 x86_64 GNU/Linux"
            ),
            "Linux 6.1.0-18-amd64 x86_64"
        );
        assert_eq!(compact_uname("FreeBSD x"), "FreeBSD x");
    }
}
