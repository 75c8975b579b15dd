//! The text of an alternating run's `phases.csv` and `series.csv`, checked for what their
//! writer guarantees: the header, every line ended (the files are written whole, by rename, so
//! a cut line is damage, as in `samples.csv`), and the order of the rows.

use super::{PhaseRow, PHASES_HEADER, PHASES_HEADER_V1, SERIES_HEADER};
use crate::error::shown;
use crate::stats::CounterSample;

/// A line that does not read: its 1-based number and what is wrong with it.
pub(super) type LineError = (usize, String);

/// The data lines of `text` (1-based numbers) after checking its header (one of `headers`,
/// the current first) and its last newline.
fn data_lines<'t>(
    text: &'t str,
    headers: &[&str],
) -> Result<impl Iterator<Item = (usize, &'t str)>, LineError> {
    if !(text.lines().next()).is_some_and(|first| headers.contains(&first)) {
        return Err((1, format!("the header must be `{}`", headers[0])));
    }
    if !text.ends_with('\n') {
        let last = text.lines().count();
        return Err((last, "cut off (no newline at its end)".into()));
    }
    Ok(text.lines().enumerate().skip(1).map(|(i, l)| (i + 1, l)))
}

/// Parses `phases.csv`: one row per phase of every finished block, in the order they ran, so
/// (block, phase) goes up one step at a time (a block's phases 1, 2, … in one segment, then
/// the next block's from 1) and times go forward within a segment. A duplicated, reordered or
/// missing row would count a block twice or mix its phases: refused, not read.
pub(super) fn parse_phases(text: &str) -> Result<Vec<PhaseRow>, LineError> {
    let mut rows: Vec<PhaseRow> = Vec::new();
    // Every block of a run has as many phases as its first (the balanced order's).
    let mut per_block = None;
    let mut block_ended = |last: Option<&PhaseRow>, n: usize| match (last, per_block) {
        (Some(last), Some(count)) if last.phase != count => Err((
            n,
            format!(
                "block {} has {} phases, block 1 has {count}: rows missing",
                last.block, last.phase
            ),
        )),
        (Some(last), None) => {
            per_block = Some(last.phase);
            Ok(())
        }
        _ => Ok(()),
    };
    let mut lines = 1;
    for (n, line) in data_lines(text, &[PHASES_HEADER, PHASES_HEADER_V1])? {
        let row = phase_row(line).ok_or_else(|| (n, "not a phase record".to_string()))?;
        if let Some(problem) = out_of_order(rows.last(), &row) {
            return Err((n, problem));
        }
        if row.phase == 1 {
            block_ended(rows.last(), n - 1)?;
        }
        rows.push(row);
        lines = n;
    }
    block_ended(rows.last(), lines)?;
    Ok(rows)
}

/// One row of `phases.csv`, its fields in range; `None` when it does not read. Other
/// programs' time may be empty (not read) or absent (an older run).
fn phase_row(line: &str) -> Option<PhaseRow> {
    let f: Vec<&str> = line.split(',').collect();
    let (fields, others) = match f.as_slice() {
        [fields @ .., others] if f.len() == 7 => (fields, Some(*others)),
        fields => (fields, None),
    };
    let [segment, block, phase, config, switched_s, end_s] = fields else {
        return None;
    };
    let seconds = |field: &str| {
        field
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    let others_ms = match others {
        None | Some("") => None,
        Some(ms) => Some(seconds(ms)?),
    };
    let row = PhaseRow {
        segment: segment.parse().ok().filter(|&n| n >= 1)?,
        block: block.parse().ok().filter(|&n| n >= 1)?,
        phase: phase.parse().ok().filter(|&n| n >= 1)?,
        config: config.to_string(),
        switched_s: seconds(switched_s)?,
        end_s: seconds(end_s)?,
        others_ms,
    };
    let plain = !row.config.is_empty() && !row.config.chars().any(char::is_control);
    (plain && row.switched_s <= row.end_s).then_some(row)
}

/// What is wrong with `row` following `last` (`None` for the first row), if anything.
fn out_of_order(last: Option<&PhaseRow>, row: &PhaseRow) -> Option<String> {
    let (segment, block, phase) = (row.segment, row.block, row.phase);
    let Some(last) = last else {
        return (block != 1 || phase != 1).then(|| {
            format!("block {block} phase {phase} first: the first row is block 1 phase 1")
        });
    };
    let next_phase = (last.segment, last.block, last.phase.saturating_add(1));
    let next_block = (last.block.saturating_add(1), 1);
    if (segment, block, phase) == next_phase {
        // Phases of one block follow one another in time.
        return (row.switched_s < last.end_s).then(|| {
            format!(
                "switched_s {} is before the end of the phase before ({})",
                row.switched_s, last.end_s
            )
        });
    }
    let new_segment = segment == last.segment || segment == last.segment.saturating_add(1);
    if (block, phase) == next_block && new_segment {
        return None;
    }
    Some(format!(
        "segment {segment} block {block} phase {phase} after segment {} block {} phase {}: \
         rows duplicated, reordered or missing",
        last.segment, last.block, last.phase
    ))
}

/// Parses `series.csv`: the receiver's cumulative count, every 0.05 s, time going forward and
/// the count never back.
pub(super) fn parse_series(text: &str) -> Result<Vec<CounterSample>, LineError> {
    let mut series: Vec<CounterSample> = Vec::new();
    for (n, line) in data_lines(text, &[SERIES_HEADER])? {
        let sample = line.split_once(',').and_then(|(t, count)| {
            let t_s = t
                .parse::<f64>()
                .ok()
                .filter(|t| t.is_finite() && *t >= 0.0)?;
            let rx_pkts = count.parse().ok()?;
            Some(CounterSample { t_s, rx_pkts })
        });
        let sample = sample.ok_or_else(|| (n, format!("`{}` is not a sample", shown(line))))?;
        if let Some(last) = series.last() {
            if sample.t_s <= last.t_s || sample.rx_pkts < last.rx_pkts {
                return Err((
                    n,
                    "time or count goes back: rows duplicated or reordered".to_string(),
                ));
            }
        }
        series.push(sample);
    }
    Ok(series)
}
