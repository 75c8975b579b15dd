//! FreeBSD call graphs: the text `pmcstat -R FILE -G GRAPH` writes, folded into [`Folded`].
//!
//! pmcstat(8) writes one section per sampling PMC (system-wide sampling allocates one per CPU),
//! each headed `@ EVENT [N samples]`. In a section, every sampled function is a line at
//! indentation 0, `PCT%  [COUNT]  function @ image`; below it, its callers, one more space of
//! indentation per level, each `PCT%  [COUNT]  caller` with the samples of the callee that came
//! through that caller (the ` @ image` suffix appears only when the image changes):
//!
//! ```text
//! @ BU_CPU_CLK_UNHALTED [6853 samples]
//!
//! 01.20%  [82]       bzero @ /boot/kernel/kernel
//!  29.27%  [24]        fib4_lookup_nh_basic
//!   100.0%  [24]         ip_findroute
//!  28.05%  [23]        ip_tryforward
//! ```
//!
//! Folding follows FlameGraph's `stackcollapse-pmc.pl`, which drew the netbenches archives'
//! flamegraphs, so that a stack's count here is the count in those SVGs: each *outermost* caller
//! (a line with no caller below it) ends one stack, root first, and that stack counts that
//! line's samples. The samples of a function beyond what its callers account for (pmcstat
//! could not walk their call chain further) are left out, as that script leaves them out:
//! 1 sample in 27 000 in seed 002's graphs.
//!
//! A graph that is not pmcstat's text, or that was cut (a section whose entries do not add up
//! to its header, a line cut in the middle, a caller without a callee), is an error naming the
//! file and line; nothing here panics on any input.

use std::collections::BTreeMap;
use std::io::{self, BufRead};

use super::folded::Folded;
use crate::error::shown;

/// The bounds of a stack, the same for pmcstat graphs and `perf.folded`.
pub use super::folded::{MAX_DEPTH, MAX_NAME_BYTES};
/// Longest line read: the indentation, a name and an image path, and the figures.
const MAX_LINE_BYTES: usize = MAX_DEPTH + 2 * MAX_NAME_BYTES + 64;
/// Most bytes of stacks folding may produce, each stack counted every time a line ends one:
/// real graphs fold into a few MB, and this bounds both the memory of the result and the work
/// of joining chains (a 25 MB graph of deep chains of long names would otherwise build GBs).
/// A graph past it is refused rather than cut: a cut profile would draw a flamegraph whose
/// shares are wrong without saying so.
pub const MAX_FOLDED_BYTES: usize = 64 << 20;

/// What is wrong with a call graph, and where.
#[derive(Debug, thiserror::Error)]
pub enum PmcGraphError {
    /// The file could not be read (or is not text) at that line.
    #[error("{file}: line {line}: cannot read: {source}")]
    Read {
        /// The call graph's file name, as given.
        file: String,
        /// 1-based line number.
        line: usize,
        /// The reader's error.
        source: io::Error,
    },
    /// The text is not a complete `pmcstat -G` call graph.
    #[error(
        "{file}: line {line}: {problem}; the call graph is damaged or truncated: \
         write it again with `pmcstat -R FILE -G GRAPH`"
    )]
    Malformed {
        /// The call graph's file name, as given.
        file: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong, in words.
        problem: String,
    },
}

/// One entry of the graph: `PCT%  [COUNT]  function [@ image]` after its indentation.
#[derive(Debug, PartialEq, Eq)]
struct Entry<'a> {
    /// Leading spaces: 0 for a sampled function, 1 for its callers, and so on.
    indent: usize,
    /// Samples.
    count: u64,
    /// Function name (or address when pmcstat had no symbol).
    function: &'a str,
}

/// Reads an entry line; `None` when it does not have pmcstat's shape.
fn entry(line: &str) -> Option<Entry<'_>> {
    let rest = line.trim_start_matches(' ');
    let indent = line.len() - rest.len();
    let (percent, rest) = rest.split_once('%')?;
    if percent.is_empty() || !percent.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let rest = rest.trim_start().strip_prefix('[')?;
    let (count, rest) = rest.split_once(']')?;
    // pmcstat prints counts as unsigned 32-bit integers; anything wider is not its output.
    let count: u32 = count.parse().ok()?;
    let function = rest.split_whitespace().next()?;
    // Symbols hold no control characters, and none longer than MAX_NAME_BYTES is read.
    if function.len() > MAX_NAME_BYTES || function.chars().any(char::is_control) {
        return None;
    }
    Some(Entry {
        indent,
        count: u64::from(count),
        function,
    })
}

/// Reads a section header `@ EVENT [N samples]`: the sample count.
fn header(line: &str) -> Option<u64> {
    let rest = line.strip_prefix('@')?;
    let (_, count) = rest.rsplit_once('[')?;
    let count = count.trim_end().strip_suffix("samples]")?.trim_end();
    count.parse::<u32>().ok().map(u64::from)
}

/// The section being read: its header and what its top-level entries add up to.
struct Section {
    /// Line of the `@` header.
    line: usize,
    /// Samples the header announces.
    announced: u64,
    /// Samples of its sampled functions (indentation 0) so far.
    counted: u64,
}

/// One level of the chain being read: an entry and the samples of its callers read so far.
struct Level {
    function: String,
    count: u64,
    callers: u64,
}

/// The folding state: the chain from the sampled function (index 0) to the caller last read.
#[derive(Default)]
struct Folder {
    file: String,
    chain: Vec<Level>,
    section: Option<Section>,
    stacks: BTreeMap<String, u64>,
    /// Bytes of the stacks ended so far, against [`MAX_FOLDED_BYTES`].
    folded_bytes: usize,
}

impl Folder {
    fn malformed(&self, line: usize, problem: impl Into<String>) -> PmcGraphError {
        PmcGraphError::Malformed {
            file: self.file.clone(),
            line,
            problem: problem.into(),
        }
    }

    /// Ends the chain's current stack when its last entry is an outermost caller, then keeps
    /// the chain's first `depth` levels; refuses a graph that folds past [`MAX_FOLDED_BYTES`].
    fn unwind(&mut self, line: usize, depth: usize) -> Result<(), PmcGraphError> {
        if self.chain.len() > depth {
            if let Some(last) = self.chain.last() {
                let count = last.count;
                let bytes: usize = self.chain.iter().map(|l| l.function.len() + 1).sum();
                self.folded_bytes = self.folded_bytes.saturating_add(bytes);
                if self.folded_bytes > MAX_FOLDED_BYTES {
                    let mib = MAX_FOLDED_BYTES >> 20;
                    return Err(self.malformed(
                        line,
                        format!("the stacks fold into more than {mib} MiB, more than a profile"),
                    ));
                }
                let stack: Vec<&str> = self.chain.iter().rev().map(|l| &*l.function).collect();
                let total = self.stacks.entry(stack.join(";")).or_default();
                *total = total.saturating_add(count);
            }
        }
        self.chain.truncate(depth);
        Ok(())
    }

    /// Ends the current section: its entries must add up to its header.
    fn end_section(&mut self, line: usize) -> Result<(), PmcGraphError> {
        self.unwind(line, 0)?;
        match self.section.take() {
            Some(s) if s.counted != s.announced => Err(self.malformed(
                line,
                format!(
                    "the section of line {} announces {} samples but its functions have {}",
                    s.line, s.announced, s.counted
                ),
            )),
            _ => Ok(()),
        }
    }

    fn add(&mut self, line: usize, e: &Entry) -> Result<(), PmcGraphError> {
        let Some(section) = self.section.as_mut() else {
            return Err(self.malformed(line, "an entry before any `@ EVENT [N samples]` header"));
        };
        if e.indent > self.chain.len() {
            return Err(self.malformed(
                line,
                format!(
                    "'{}' is indented {} levels below the function it calls",
                    shown(e.function),
                    e.indent - self.chain.len()
                ),
            ));
        }
        if e.indent >= MAX_DEPTH {
            let problem = format!("a call chain deeper than {MAX_DEPTH} frames (hwpmc's most)");
            return Err(self.malformed(line, problem));
        }
        if e.indent == 0 {
            section.counted = section.counted.saturating_add(e.count);
        }
        // A line followed by its own caller (indented further) does not end a stack; any
        // other line ends the one the chain holds.
        self.unwind(line, e.indent)?;
        if let Some(callee) = self.chain.last_mut() {
            callee.callers = callee.callers.saturating_add(e.count);
            if callee.callers > callee.count {
                let problem = format!(
                    "the callers of '{}' have more samples ({}) than it has ({})",
                    shown(&callee.function),
                    callee.callers,
                    callee.count
                );
                return Err(self.malformed(line, problem));
            }
        }
        self.chain.push(Level {
            function: e.function.to_string(),
            count: e.count,
            callers: 0,
        });
        Ok(())
    }
}

/// Folds a `pmcstat -R FILE -G GRAPH` call graph; `file` names it in errors.
///
/// Every section (one per CPU with system-wide sampling) adds to the same stacks, as
/// `stackcollapse-pmc.pl` does.
pub fn fold_pmcstat(graph: impl BufRead, file: &str) -> Result<Folded, PmcGraphError> {
    let mut folder = Folder {
        file: file.to_string(),
        ..Folder::default()
    };
    let mut graph = graph;
    let mut text = String::new();
    let mut number = 0;
    loop {
        text.clear();
        number += 1;
        // Bounded: a line past MAX_LINE_BYTES is refused below, not read whole.
        let read = io::Read::take(&mut graph, MAX_LINE_BYTES as u64 + 1)
            .read_line(&mut text)
            .map_err(|source| PmcGraphError::Read {
                file: file.to_string(),
                line: number,
                source,
            })?;
        if read == 0 {
            break;
        }
        if text.len() > MAX_LINE_BYTES {
            let problem = format!("a line longer than {MAX_LINE_BYTES} bytes");
            return Err(folder.malformed(number, problem));
        }
        // pmcstat ends every line; a last line without its newline was cut in the middle.
        let Some(line) = text.strip_suffix('\n') else {
            return Err(folder.malformed(number, "the last line is cut (no newline at its end)"));
        };
        if line.trim().is_empty() {
            continue;
        }
        if line.starts_with('@') {
            let announced = header(line).ok_or_else(|| {
                folder.malformed(number, "a header that is not `@ EVENT [N samples]`")
            })?;
            folder.end_section(number)?;
            folder.section = Some(Section {
                line: number,
                announced,
                counted: 0,
            });
            continue;
        }
        let e = entry(line).ok_or_else(|| {
            folder.malformed(
                number,
                format!(
                    "'{}' is not a `PERCENT%  [SAMPLES]  FUNCTION` line",
                    shown(line.trim())
                ),
            )
        })?;
        folder.add(number, &e)?;
    }
    if folder.section.is_none() && folder.stacks.is_empty() {
        return Err(folder.malformed(number, "no `@ EVENT [N samples]` section"));
    }
    folder.end_section(number)?;
    Ok(Folded {
        stacks: folder.stacks,
    })
}

#[cfg(test)]
mod tests;
