//! Statistics as FreeBSD's ministat(1) computes and prints them: every table of benchlab's
//! reports comes from here.
//!
//! Ported from FreeBSD ministat (`usr.bin/ministat/ministat.c`, Poul-Henning Kamp, beerware
//! licence: "as long as you retain this notice you can do whatever you want with this stuff").
//! Two generations are reproduced, chosen by [`Flavor`](crate::stats::Flavor):
//! - `Current` (the default): FreeBSD's ministat since 2017 (the mean of the two middle values
//!   as the median of an even count, a relative interval that propagates both variances),
//!   with the one-pass sums of that time; it reproduces the tables of seed 002 (2017). A
//!   variance that rounding makes negative is 0 here.
//! - `Legacy`: Debian's ministat 20150715 (FreeBSD's before 2017), byte for byte what
//!   `/usr/bin/ministat` prints, `-nan` included.
//! - `Accurate`: `Current` with the exactly rounded sample standard deviation (two passes in
//!   double-double), which some archived tables show.
//!
//! Entry points: `Summary` (N, min, max, median, mean, standard deviation of one dataset),
//! `compare` → `Comparison` (Student's t test of two means), `Plot` (the ASCII plot),
//! `render` / `analyse` (ministat's whole output, or its numbers), `fmt_g` (C's `%g`, the one
//! number formatter of the crate). Nothing here prints; functions return values and errors.

/// The accurately computed variance of the `Accurate` flavour.
mod accurate;
/// C `printf` number formatting (`%g`, `%.8g`, `%13.8g`).
pub mod cfmt;
/// Student's t test of two means.
pub mod compare;
/// When a trials-design difference is not to be believed: disturbed trials, pairs that
/// disagree.
pub mod doubt;
/// Change-point grouping of a series of runs (FD.io CSIT's jumpavg).
pub mod jumpavg;
/// One-way latency: HDR histograms (ns, 3 significant digits), their summary, the V2 log.
pub mod latency;
/// Reading datasets and ministat's whole output.
pub mod ministat;
/// Paired estimates of the alternating design's blocks against the baseline.
pub mod paired;
/// Phase values of the alternating design from the receiver's short windows.
pub mod phase;
/// The ASCII plot.
pub mod plot;
/// Blocks at the machine's quiet level, and the slowed ones.
pub mod quiet;
/// When an alternating run has measured enough: the stopping rule.
pub mod sequential;
/// C `strtod`/`strtol` parsing.
pub mod strtod;
/// Student's t table and confidence levels.
pub mod student;
/// One dataset's vitals.
pub mod summary;

pub use cfmt::{fmt_g, fmt_g_width};
pub use compare::{compare, Comparison};
pub use ministat::{
    analyse, read_datasets, render, Analysis, Dataset, MinistatError, MinistatOptions,
    NamedComparison, NamedSummary, ReadOptions,
};
pub use paired::{paired, Block, BlockError, Change, PairedEstimate, PairedLine};
pub use phase::{
    phase_values, window_rates, CounterSample, Estimator, PhaseError, PhaseOptions, PhaseSpan,
    PhaseValue,
};
pub use plot::Plot;
pub use sequential::{Decision, StopError, StopOptions, StopRule};
pub use student::{Confidence, ConfidenceError};
pub use summary::{Flavor, Sample, Summary};
