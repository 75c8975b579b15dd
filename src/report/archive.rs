//! The comparisons an archive's own README made. The harness's author ran `ministat` by hand
//! on the `.pps` files and pasted its tables: their legends (`x`, `+`, `*`…) name the files
//! compared, the first the reference, and their result lines the confidence level (`-c`). A
//! report of that archive makes the same comparisons in the same order before its own, and
//! lists the README's difference lines it cannot reproduce, with the reason.
//!
//! A legend is matched to a series by the `.pps` name it gives, or, where the author relabelled
//! it by hand, by the values of its vitals row (N, Min, Max, Avg: the same in every ministat
//! generation), which only that series' `.pps` file gives.

use crate::ingest::{Results, Series};
use crate::report::{markdown, medians, Report};
use crate::stats::{self, fmt_g, Confidence, Dataset, Flavor, MinistatOptions, Summary};

/// A table of the archive's README as the report makes it again.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The series compared ([`Series::name`]), the reference first.
    pub(crate) series: Vec<String>,
    /// The confidence level the table printed.
    pub(crate) confidence: Confidence,
}

/// What an archive's README tells about its comparisons.
#[derive(Debug, Clone, Default)]
pub(crate) struct Plan {
    /// The tables whose every legend names a series, in the README's order.
    pub(crate) tables: Vec<Table>,
    /// Every table read: its difference lines and, when it matches no series, why.
    read: Vec<ReadTable>,
}

/// One ministat table of the README, as read.
#[derive(Debug, Clone)]
struct ReadTable {
    /// Legend text per dataset, in symbol order.
    legends: Vec<String>,
    /// The vitals row's six fields per dataset, in symbol order.
    rows: Vec<Vec<String>>,
    /// `(dataset index, "P% +/- Q%")`: the relative difference lines, trimmed.
    differences: Vec<(usize, String)>,
    /// The confidence level its result lines name.
    confidence: Confidence,
    /// The series matched, or why a legend matches none.
    matched: Result<Vec<String>, String>,
}

/// ministat's dataset symbols, in order.
const SYMBOLS: &str = "x+*%#@O";

impl Plan {
    /// The comparisons of an archive's `readme` ([`super::reproduce::archive_readme`]), when it
    /// holds at least one ministat table; `None` otherwise.
    pub(crate) fn read(readme: &str, results: &Results) -> Option<Plan> {
        let mut read: Vec<ReadTable> = (super::reproduce::fenced_blocks(readme).iter())
            .filter_map(|block| parse_table(block))
            .collect();
        if read.is_empty() {
            return None;
        }
        let summaries: Vec<(&Series, Summary)> = (results.series.iter())
            .filter(|s| s.iterations.len() >= stats::ministat::MIN_POINTS)
            .map(|s| (s, Summary::of(&medians(s), Flavor::Current)))
            .collect();
        for table in &mut read {
            table.matched = match_series(table, &summaries, &results.series);
        }
        let tables = (read.iter())
            .filter_map(|t| {
                let series = t.matched.as_ref().ok()?;
                Some(Table {
                    series: series.clone(),
                    confidence: t.confidence,
                })
            })
            .collect();
        Some(Plan { tables, read })
    }

    /// In words for the README: where the comparisons come from.
    pub(crate) fn reason(&self, report: &Report) -> String {
        let all = self.tables.len();
        let made = (self.tables.iter())
            .filter(|t| report.table_members(&t.series).len() >= 2)
            .count();
        let readme = markdown::README;
        match made {
            0 => format!(
                "Comparisons: benchlab's own; the {all} ministat table(s) of the archive's \
                 {readme} compare series this report leaves out"
            ),
            _ if made < all => format!(
                "Comparisons: {made} of the {all} ministat tables of the archive's {readme} \
                 that name series of the logs (the others compare series this report leaves \
                 out), with its references and in its order, then benchlab's own"
            ),
            _ => format!(
                "Comparisons: the {all} ministat table(s) of the archive's {readme} that name \
                 series of the logs, with its references and in its order, then benchlab's own"
            ),
        }
    }

    /// The README's difference lines (`P% +/- Q%`) that no table of `report` prints, one line
    /// each with the reason.
    pub(crate) fn unreproduced(&self, report: &Report) -> Vec<String> {
        let printed: Vec<&str> = (report.blocks.iter())
            .flat_map(|b| b.ministat.lines())
            .map(str::trim)
            .collect();
        let mut lines = Vec::new();
        for (number, table) in self.read.iter().enumerate() {
            for (dataset, line) in &table.differences {
                if printed.contains(&line.as_str()) {
                    continue;
                }
                let why = match &table.matched {
                    Err(why) => why.clone(),
                    Ok(series) => other_generation(report, series, *dataset, table, line),
                };
                lines.push(format!(
                    "table {} of the archive's {}, `{}` against `{}`: {line}: {why}",
                    number + 1,
                    markdown::README,
                    symbol(*dataset),
                    symbol(0)
                ));
            }
        }
        lines
    }
}

fn symbol(dataset: usize) -> char {
    SYMBOLS.chars().nth(dataset).unwrap_or('?')
}

/// A fenced block read as a ministat table: legends up to the plot's frame (or the header), a
/// vitals row per legend, result lines. `None` for any other block.
fn parse_table(block: &str) -> Option<ReadTable> {
    let mut table = ReadTable {
        legends: Vec::new(),
        rows: Vec::new(),
        differences: Vec::new(),
        confidence: Confidence::default(),
        matched: Ok(Vec::new()),
    };
    let mut lines = block.lines().peekable();
    while let Some(line) = lines.next_if(|l| !l.starts_with("+-") && !l.contains("    N  ")) {
        let expected = symbol(table.legends.len());
        match line
            .strip_prefix(expected)
            .and_then(|l| l.strip_prefix(' '))
        {
            Some(legend) => table.legends.push(legend.trim().to_string()),
            None => return None,
        }
    }
    for line in lines {
        let trimmed = line.trim();
        if let Some(level) =
            (trimmed.split(" at ").nth(1)).and_then(|rest| rest.strip_suffix(" confidence"))
        {
            table.confidence = level.parse().unwrap_or_default();
        } else if trimmed.ends_with('%') && trimmed.contains("% +/- ") {
            let dataset = table.rows.len().saturating_sub(1);
            table.differences.push((dataset, trimmed.to_string()));
        } else if let Some(rest) = line.strip_prefix(symbol(table.rows.len())) {
            let fields: Vec<String> = rest.split_whitespace().map(str::to_string).collect();
            if fields.len() == 6 && rest.starts_with(' ') {
                table.rows.push(fields);
            }
        }
    }
    let complete = table.legends.len() >= 2 && table.rows.len() == table.legends.len();
    complete.then_some(table)
}

/// The series of each legend: the one the legend names whose vitals agree, else the only one
/// whose vitals agree; or why a legend has none.
fn match_series(
    table: &ReadTable,
    summaries: &[(&Series, Summary)],
    all: &[Series],
) -> Result<Vec<String>, String> {
    let mut found: Vec<String> = Vec::new();
    for (legend, row) in table.legends.iter().zip(&table.rows) {
        let named = legend.rsplit('/').next().unwrap_or(legend);
        let named = named.strip_suffix(".pps").unwrap_or(named);
        let agrees = |s: &Summary| {
            row[0] == s.n.to_string()
                && [(1, s.min), (2, s.max), (4, s.mean)]
                    .iter()
                    .all(|&(i, v)| row[i] == fmt_g(v, 8))
        };
        let candidates: Vec<&Series> = (summaries.iter())
            .filter(|(s, summary)| agrees(summary) && !found.contains(&s.name))
            .map(|(s, _)| *s)
            .collect();
        let chosen = (candidates.iter().find(|s| s.name == named))
            .or_else(|| (candidates.len() == 1).then(|| &candidates[0]));
        match chosen {
            Some(s) => found.push(s.name.clone()),
            None => return Err(why_unmatched(legend, named, row, all)),
        }
    }
    Ok(found)
}

/// Why a legend's vitals row is no series' of the logs.
fn why_unmatched(legend: &str, named: &str, row: &[String], all: &[Series]) -> String {
    let Some(series) = all.iter().find(|s| s.name == named) else {
        return format!(
            "`{legend}` (N {}, Min {}, Max {}) is no series of the logs: no `.pps` benchlab \
             writes holds its values",
            row[0], row[1], row[2]
        );
    };
    let n = series.iterations.len();
    if row[0] != n.to_string() {
        format!(
            "`{legend}` has {} values where the logs give {n} iterations: iterations left out \
             (or added) by hand",
            row[0]
        )
    } else {
        format!(
            "`{legend}` holds other values than the logs' {n} iterations give: its `.pps` was \
             edited after the fact, or made from other logs"
        )
    }
}

/// Why a matched table's difference line is not printed: the generation that prints it, or
/// none of them.
fn other_generation(
    report: &Report,
    series: &[String],
    dataset: usize,
    table: &ReadTable,
    line: &str,
) -> String {
    let values = |name: &String| {
        (report.series.iter())
            .find(|s| &s.series.name == name)
            .map(|s| medians(&s.series))
    };
    let pair = [series.first(), series.get(dataset)];
    let Some(datasets) = (pair.iter())
        .map(|name| Some(Dataset::new("", values((*name)?)?)))
        .collect::<Option<Vec<_>>>()
    else {
        return "a series it compares is left out of this report (--versions, --configs)".into();
    };
    for flavor in Flavor::ALL.into_iter().filter(|f| *f != report.flavor) {
        let options = MinistatOptions {
            flavor,
            confidence: table.confidence,
            ..MinistatOptions::default()
        };
        let text = stats::analyse(&datasets, &options).map(|a| a.text());
        if text.is_ok_and(|t| t.lines().any(|l| l.trim() == line)) {
            return format!(
                "made by ministat {}, whose relative interval differs from that of the {} \
                 generation the report uses",
                flavor.name(),
                report.flavor.name()
            );
        }
    }
    if report.blocks.iter().all(|b| {
        b.members.first().map(|&i| &report.series[i].series.name) != series.first()
            || !b
                .members
                .iter()
                .any(|&i| Some(&report.series[i].series.name) == series.get(dataset))
    }) {
        return "it compares series that differ in more than one of version, config set and \
                traffic profile; the report compares one level at a time"
            .into();
    }
    // ministat compares each dataset with the first alone (the pooled s of the two), so the
    // other datasets of a table change none of its lines.
    "no ministat generation prints it from the logs' values".into()
}

#[cfg(test)]
mod tests;
