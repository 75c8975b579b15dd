//! ministat as a library: read datasets like ministat, analyse them, and print what it prints.
//!
//! Ported from FreeBSD ministat (`usr.bin/ministat/ministat.c`, Poul-Henning Kamp, beerware
//! licence: "as long as you retain this notice you can do whatever you want with this stuff").
//! Output order is ministat's: legend, plot, vitals header, then each dataset's vitals line
//! followed by its comparison with the first dataset.
//!
//! ```
//! use benchlab::stats::{render, Dataset, MinistatOptions};
//!
//! let a = Dataset::new("a", vec![1.0, 2.0, 3.0, 4.0]);
//! let b = Dataset::new("b", vec![11.0, 12.0, 13.0, 14.0]);
//! let text = render(&[a, b], &MinistatOptions { stats_only: true, ..Default::default() })?;
//! assert!(text.contains("Difference at 95.0% confidence"));
//! # Ok::<(), benchlab::stats::MinistatError>(())
//! ```

use std::fmt::Write as _;
use std::io::BufRead;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde::Serialize;

use super::compare::{compare, Comparison};
use super::plot::{Plot, SYMBOLS};
use super::strtod::strtod_full;
use super::student::Confidence;
use super::summary::{Flavor, Sample, Summary, VITALS_HEADER};
use crate::error::io_reason;
use pieces::{field, for_each_piece};

/// ministat's `fgets` loop: pieces of lines, and the field read from each.
mod pieces;

/// ministat's limit: one plot symbol per dataset.
pub(crate) const MAX_DATASETS: usize = 7;

/// Fewest values a dataset may hold.
pub(crate) const MIN_POINTS: usize = 3;

/// Bytes ministat's `fgets` buffer holds per read (BUFSIZ − 1): longer lines count as several.
const LINE_PIECE: usize = 8191;

/// Longest line read, in bytes (1 MiB): ministat's data is a number a line, and a longer line
/// (or a stream without newlines, such as `/dev/zero`) is refused rather than read forever.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// A named series of values, in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// The legend label: the file name as given, or `<stdin>`.
    pub(crate) name: String,
    /// The values in the order read.
    pub(crate) values: Vec<f64>,
}

impl Dataset {
    /// A dataset from values in file order.
    pub fn new(name: impl Into<String>, values: Vec<f64>) -> Dataset {
        Dataset {
            name: name.into(),
            values,
        }
    }

    /// Reads a dataset the way ministat's `ReadSet` does: per line, trailing white space is
    /// dropped, the line is split at runs of delimiters, a field starting with `#` ends the
    /// line, and field `column` must be a number `strtod` reads entirely. Lines without that
    /// field are skipped; fewer than 3 values is an error. A read error ends the data, as
    /// ministat's `fgets` loop does; a line over [`MAX_LINE_BYTES`] is an error.
    pub(crate) fn read(
        mut reader: impl BufRead,
        name: &str,
        options: &ReadOptions,
    ) -> Result<Dataset, MinistatError> {
        let mut is_delimiter = [false; 256];
        for &b in &options.delimiters {
            is_delimiter[usize::from(b)] = true;
        }
        let mut values = Vec::new();
        let too_long = |line| MinistatError::LineTooLong {
            line,
            name: name.to_string(),
        };
        for_each_piece(&mut reader, too_long, |line, piece| {
            let Some(field) = field(piece, options.column, &is_delimiter) else {
                return Ok(());
            };
            let Some(value) = strtod_full(field) else {
                return Err(MinistatError::InvalidData {
                    line,
                    name: name.to_string(),
                });
            };
            values.push(value);
            Ok(())
        })?;
        if values.len() < MIN_POINTS {
            return Err(MinistatError::TooFewPoints {
                name: name.to_string(),
            });
        }
        Ok(Dataset::new(name, values))
    }

    /// Reads the file at `path` with [`Dataset::read`], named `name` (ministat uses the path
    /// as given on its command line).
    pub(crate) fn read_file(
        path: &Path,
        name: &str,
        options: &ReadOptions,
    ) -> Result<Dataset, MinistatError> {
        let open_error = |reason: String| MinistatError::Open {
            name: name.to_string(),
            reason,
        };
        // Opening a FIFO blocks until a writer comes, and a device such as /dev/zero never
        // ends (nor has a newline): only files, and directories, which read as empty as in C.
        let metadata = std::fs::metadata(path).map_err(|e| open_error(io_reason(&e)))?;
        if !(metadata.is_file() || metadata.is_dir()) {
            return Err(open_error(
                "not a regular file (a FIFO or a device); save the data to a file, or give - \
                 to read standard input"
                    .to_string(),
            ));
        }
        // O_NONBLOCK: a FIFO swapped in after the check is not waited on (and gives no data).
        let file = std::fs::File::options()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| open_error(io_reason(&e)))?;
        Dataset::read(
            std::io::BufReader::with_capacity(1 << 18, file),
            name,
            options,
        )
    }
}

/// How to read a dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReadOptions {
    /// Field to read, counted from 1 (`-C`). Default is 1.
    pub(crate) column: usize,
    /// Field delimiter bytes; runs of them separate fields (`-d`). Default is space and tab.
    pub(crate) delimiters: Vec<u8>,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            column: 1,
            delimiters: b" \t".to_vec(),
        }
    }
}

/// What to compute and print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MinistatOptions {
    /// Plot width in columns, frame excluded (`-w`). Default is 74.
    pub width: usize,
    /// One bar line per dataset instead of a shared one (`-s`). Default is false.
    pub separate_bars: bool,
    /// No plot, statistics and comparisons only (`-A`). Default is false.
    pub stats_only: bool,
    /// Vitals only: no plot, no comparison (`-n`). Default is false.
    pub summary_only: bool,
    /// Confidence level of the comparisons (`-c`). Default is 95 %.
    pub confidence: Confidence,
    /// Which ministat to reproduce. Default is [`Flavor::Current`].
    pub flavor: Flavor,
}

impl Default for MinistatOptions {
    fn default() -> Self {
        MinistatOptions {
            width: 74,
            separate_bars: false,
            stats_only: false,
            summary_only: false,
            confidence: Confidence::P95,
            flavor: Flavor::Current,
        }
    }
}

/// Reading or analysing datasets failed; messages are ministat's.
#[derive(Debug, thiserror::Error)]
pub enum MinistatError {
    /// The file cannot be opened.
    #[error("Cannot open {name}: {reason}")]
    Open {
        /// The file as named by the user.
        name: String,
        /// The system's reason (`No such file or directory`).
        reason: String,
    },
    /// A line's field is not a number.
    #[error("Invalid data on line {line} in {name}")]
    InvalidData {
        /// Line number, from 1.
        line: usize,
        /// The dataset's name.
        name: String,
    },
    /// A line over [`MAX_LINE_BYTES`]: not ministat data (benchlab's addition).
    #[error(
        "{name}:{line}: a line longer than 1 MiB, not data ministat reads; give one value a line"
    )]
    LineTooLong {
        /// Line number (whole lines, not `fgets` pieces), from 1.
        line: usize,
        /// The dataset's name.
        name: String,
    },
    /// Fewer than [`MIN_POINTS`] values.
    #[error("Dataset {name} must contain at least 3 data points")]
    TooFewPoints {
        /// The dataset's name.
        name: String,
    },
    /// More than [`MAX_DATASETS`] datasets.
    #[error("Too many datasets.")]
    TooManyDatasets,
}

impl From<MinistatError> for crate::error::InputError {
    /// Every ministat error is about the user's data or files: exit status 2.
    fn from(e: MinistatError) -> Self {
        crate::error::InputError::new(e.to_string())
    }
}

/// A dataset's name and vitals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct NamedSummary {
    /// The dataset's name.
    pub(crate) name: String,
    /// Its vitals.
    #[serde(flatten)]
    pub(crate) summary: Summary,
}

/// A dataset compared with the reference dataset, with both names.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct NamedComparison {
    /// The dataset compared.
    pub(crate) dataset: String,
    /// The reference dataset (the first one).
    pub(crate) reference: String,
    /// The test's result.
    #[serde(flatten)]
    pub(crate) comparison: Comparison,
}

/// Everything ministat computes for a set of datasets; [`Analysis::text`] prints it as
/// ministat does, serde serialises the numbers (without the plot).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Analysis {
    /// Which ministat computed the numbers.
    pub(crate) flavor: Flavor,
    /// Confidence level of the comparisons.
    pub(crate) confidence: Confidence,
    /// The datasets in the order given; the first is the reference.
    pub(crate) datasets: Vec<NamedSummary>,
    /// Each later dataset compared with the first; empty with `summary_only`.
    pub(crate) comparisons: Vec<NamedComparison>,
    /// The plot; `None` with `stats_only` or `summary_only`.
    #[serde(skip)]
    pub(crate) plot: Option<Plot>,
}

/// Analyses up to [`MAX_DATASETS`] datasets of at least [`MIN_POINTS`] values each (copies
/// them; [`Analysis::new`] takes them over).
pub(crate) fn analyse(
    datasets: &[Dataset],
    options: &MinistatOptions,
) -> Result<Analysis, MinistatError> {
    Analysis::new(datasets.to_vec(), options)
}

/// Runs `f` on every item, one thread each (datasets are few and may be large); results in
/// the items' order.
fn parallel_map<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .into_iter()
            .map(|item| scope.spawn(move || f(item)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

/// Reads the datasets ministat's command line names: a path `-` is standard input (named
/// `<stdin>`, read in order: a second `-` finds it empty), any other a file named as given.
/// Files are read in parallel; the error reported is that of the first failing path, as when
/// ministat reads them one after the other.
pub(crate) fn read_datasets(
    paths: &[&Path],
    options: &ReadOptions,
) -> Result<Vec<Dataset>, MinistatError> {
    let is_stdin = |p: &Path| p.as_os_str() == "-";
    std::thread::scope(|scope| {
        let files: Vec<_> = paths
            .iter()
            .map(|&path| {
                (!is_stdin(path)).then(|| {
                    scope.spawn(move || Dataset::read_file(path, &path.to_string_lossy(), options))
                })
            })
            .collect();
        files
            .into_iter()
            .map(|file| match file {
                Some(handle) => handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                None => Dataset::read(std::io::stdin().lock(), "<stdin>", options),
            })
            .collect()
    })
}

impl Analysis {
    /// Analyses up to [`MAX_DATASETS`] datasets of at least [`MIN_POINTS`] values each: the
    /// first is the reference of the comparisons.
    pub(crate) fn new(
        datasets: Vec<Dataset>,
        options: &MinistatOptions,
    ) -> Result<Analysis, MinistatError> {
        if datasets.len() > MAX_DATASETS {
            return Err(MinistatError::TooManyDatasets);
        }
        if let Some(d) = datasets.iter().find(|d| d.values.len() < MIN_POINTS) {
            return Err(MinistatError::TooFewPoints {
                name: d.name.clone(),
            });
        }
        let (names, values): (Vec<String>, Vec<Vec<f64>>) =
            datasets.into_iter().map(|d| (d.name, d.values)).unzip();
        let samples = parallel_map(values, Sample::new);
        let summaries: Vec<Summary> = samples.iter().map(|s| s.summary(options.flavor)).collect();
        let plot = (!options.stats_only && !options.summary_only)
            .then(|| Plot::of(&samples, &summaries, options.width, options.separate_bars));
        let comparisons = if options.summary_only {
            Vec::new()
        } else {
            names
                .iter()
                .zip(&summaries)
                .skip(1)
                .map(|(name, s)| NamedComparison {
                    dataset: name.clone(),
                    reference: names[0].clone(),
                    comparison: compare(&summaries[0], s, options.confidence, options.flavor),
                })
                .collect()
        };
        Ok(Analysis {
            flavor: options.flavor,
            confidence: options.confidence,
            datasets: names
                .into_iter()
                .zip(summaries)
                .map(|(name, summary)| NamedSummary { name, summary })
                .collect(),
            comparisons,
            plot,
        })
    }

    /// The legend lines: `x name` per dataset.
    pub(crate) fn legend(&self) -> Vec<String> {
        self.datasets
            .iter()
            .zip(&SYMBOLS[1..])
            .map(|(d, symbol)| format!("{symbol} {}", d.name))
            .collect()
    }

    /// The whole output, byte for byte what ministat prints.
    pub(crate) fn text(&self) -> String {
        let mut out = String::new();
        for line in self.legend() {
            out.push_str(&line);
            out.push('\n');
        }
        for line in self.plot.iter().flat_map(|p| &p.lines) {
            out.push_str(line);
            out.push('\n');
        }
        out.push_str(VITALS_HEADER);
        out.push('\n');
        for (i, (d, symbol)) in self.datasets.iter().zip(&SYMBOLS[1..]).enumerate() {
            out.push_str(&d.summary.vitals_line(*symbol));
            out.push('\n');
            if let Some(c) = i.checked_sub(1).and_then(|j| self.comparisons.get(j)) {
                // Writing to a String cannot fail.
                let _ = write!(out, "{}", c.comparison);
            }
        }
        out
    }
}

/// What ministat prints for `datasets` (legend, plot, vitals, comparisons).
pub fn render(datasets: &[Dataset], options: &MinistatOptions) -> Result<String, MinistatError> {
    Ok(analyse(datasets, options)?.text())
}

#[cfg(test)]
mod tests;
