//! Which ministat generation made an archive's own README: the one whose tables reproduce the
//! most of its rows.
//!
//! Archived READMEs hold hand-run `ministat -s` tables, made by whatever ministat the author had
//! (old Debian/FreeBSD, current FreeBSD, or one with an accurate variance). The logs cannot tell
//! which; the README can: every [`Flavor`] builds the report, and the one whose tables contain
//! most of the README's vitals and difference rows wins. Legends and symbols are left out of
//! the comparison, as authors relabelled their tables by hand.

use std::path::Path;

use crate::error::InputError;
use crate::ingest::Results;
use crate::report::{markdown, Report, ReportOptions};
use crate::stats::Flavor;

/// The text of `dir/README.md` when the archive's author wrote it (not benchlab); `None` when
/// there is none or it cannot be read: a missing or unreadable README is no archive README.
pub(crate) fn archive_readme(dir: &Path) -> Option<String> {
    let readme = crate::ingest::file::read_text_in(dir, &dir.join(markdown::README)).ok()?;
    (!readme.contains(markdown::MARKER)).then_some(readme)
}

/// The generation that reproduces the archive's `readme` best, and why (`chosen as it
/// reproduces 22 of 22 table rows…`), when at least one of the README's ministat rows comes out
/// of some generation; ties go to the default generation. The generation is the archive's:
/// it is chosen on every series of the logs, whatever `--versions` and `--configs` keep, so
/// that a report of some of them states the same differences as one of all.
pub(crate) fn choose(
    readme: &str,
    results: &Results,
    options: &ReportOptions,
) -> Result<Option<(Flavor, String)>, InputError> {
    let wanted = table_rows(readme);
    if wanted.is_empty() {
        return Ok(None);
    }
    let mut best: Option<(usize, Flavor)> = None;
    for flavor in Flavor::ALL {
        let options = ReportOptions {
            flavor,
            versions: None,
            configs: None,
            ..options.clone()
        };
        let report = Report::build(results.clone(), &options)?;
        let ours: Vec<String> = (report.blocks.iter())
            .flat_map(|b| table_rows_of_block(&b.ministat))
            .collect();
        let matched = wanted.iter().filter(|row| ours.contains(row)).count();
        if best.is_none_or(|(m, _)| matched > m) {
            best = Some((matched, flavor));
        }
    }
    // A README none of whose rows come out (tables of other data) tells nothing.
    Ok(best
        .filter(|(matched, _)| *matched > 0)
        .map(|(matched, flavor)| {
            let why = format!(
                "chosen as it reproduces {matched} of the {} table rows of the archive's {}",
                wanted.len(),
                markdown::README
            );
            (flavor, why)
        }))
}

/// The rows of every fenced block of a Markdown text that a ministat generation decides.
fn table_rows(markdown: &str) -> Vec<String> {
    (fenced_blocks(markdown).iter())
        .flat_map(|block| table_rows_of_block(block))
        .collect()
}

/// The text of every fenced block (between lines starting with ```) of a Markdown text.
pub(super) fn fenced_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut block = String::new();
    let mut inside = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            if inside {
                blocks.push(std::mem::take(&mut block));
            }
            inside = !inside;
        } else if inside {
            block.push_str(line);
            block.push('\n');
        }
    }
    blocks
}

/// A ministat output's vitals rows without their symbol, and its difference lines, trimmed.
fn table_rows_of_block(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let trimmed = line.trim();
            if trimmed.contains("+/-") || trimmed.starts_with("(Student's t") {
                return Some(trimmed.to_string());
            }
            let mut chars = line.chars();
            let symbol = chars.next()?;
            let rest = chars.as_str();
            let numbers = rest.split_whitespace();
            let is_vitals = !symbol.is_whitespace()
                && rest.starts_with(' ')
                && numbers.clone().count() == 6
                && numbers
                    .clone()
                    .all(|w| w.parse::<f64>().is_ok() || w.ends_with("nan"));
            is_vitals.then(|| rest.trim_end().to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_of_fenced_ministat_blocks_without_symbols() {
        let md = "Title\n```\nx a.pps\n+ b.pps\n    N           Min\n\
                  x   5      14816846      14817302      14817116      14817115     174.22399\n\
                  +   5      1      2      3      4     -nan\n\
                  Difference at 95.0% confidence\n\t-437.2 +/- 240.155\n\
                  \t(Student's t, pooled s = 164.665)\n```\n\
                  x   5      1      2      3      4     5\n";
        assert_eq!(
            table_rows(md),
            [
                "   5      14816846      14817302      14817116      14817115     174.22399",
                "   5      1      2      3      4     -nan",
                "-437.2 +/- 240.155",
                "(Student's t, pooled s = 164.665)",
            ]
        );
    }
}
