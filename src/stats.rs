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
pub(crate) mod cfmt;
/// Student's t test of two means.
pub(crate) mod compare;
/// When a trials-design difference is not to be believed: disturbed trials, pairs that
/// disagree.
pub mod doubt;
/// Change-point grouping of a series of runs (FD.io CSIT's jumpavg).
pub mod jumpavg;
/// One-way latency: HDR histograms (ns, 3 significant digits), their summary, the V2 log.
pub mod latency;
/// Reading datasets and ministat's whole output.
pub(crate) mod ministat;
/// The balanced order of the alternating design's entries over a block's phases.
pub(crate) mod order;
/// Paired estimates of the alternating design's blocks against the baseline.
pub mod paired;
/// Phase values of the alternating design from the receiver's short windows.
pub(crate) mod phase;
/// The ASCII plot.
pub(crate) mod plot;
/// Blocks at the machine's quiet level, and the slowed ones; a latency's quiet seconds.
pub(crate) mod quiet;
/// When an alternating run has measured enough: the stopping rule.
pub(crate) mod sequential;
/// C `strtod`/`strtol` parsing.
pub(crate) mod strtod;
/// Student's t table and confidence levels.
pub(crate) mod student;
/// One dataset's vitals.
pub(crate) mod summary;

pub(crate) use cfmt::fmt_g;
pub(crate) use compare::{compare, Comparison};
pub(crate) use ministat::{analyse, Analysis, ReadOptions};
pub use ministat::{render, Dataset, MinistatError, MinistatOptions};
pub use order::{BalancedOrder, OrderError};
pub use paired::{paired, Block, BlockError, Change, PairedEstimate, PairedLine};
pub use phase::{
    phase_values, window_rates, CounterSample, Estimator, PhaseError, PhaseOptions, PhaseSpan,
    PhaseValue,
};
pub use plot::Plot;
pub use sequential::{Decision, StopError, StopOptions, StopRule};
pub(crate) use student::MeanInterval;
pub use student::{Confidence, ConfidenceError};
pub(crate) use summary::{Flavor, Sample, Summary};

/// The upper median of `values`: the middle one, or the higher of the middle two, so always
/// one of them (a latency, a round trip); `None` when there is none.
pub(crate) fn upper_median<T: Ord + Copy>(mut values: Vec<T>) -> Option<T> {
    values.sort_unstable();
    values.get(values.len() / 2).copied()
}
