//! benchlab measures how fast a router or firewall forwards packets, and says with statistics
//! what changed between software versions and configurations.
//!
//! The pipeline: a campaign (`campaign`) drives a lab (`lab`, over a `transport`) whose DUT gets
//! config sets (`dut`) while generators and receivers (`traffic`) record per-second samples;
//! readers (`ingest`) turn those samples — or archived netbenches pkt-gen logs — into series;
//! `stats` computes ministat-compatible summaries and comparisons; `report` writes Markdown, PNG
//! charts, flamegraphs and JSON. Only `cli` prints.

// The library's API is what the binary, the integration tests and the benches use; the rest is
// `pub(crate)`. The developers' docs (`cargo doc --document-private-items`, run by
// scripts/test) show every item, so a public item's doc may link the crate's own items.
#![allow(rustdoc::private_intra_doc_links)]

/// Atomic file writes (temporary file + rename).
pub mod atomic;
/// Campaigns: the run loop, the trial procedure every lab shares, the lab kinds.
pub mod campaign;
/// The cancellation token raised by Ctrl-C and read by every long step.
pub mod cancel;
/// Command line: argument parsing, dispatch, and the only place that prints.
pub mod cli;
/// The wall clock recorded times are read from.
pub mod clock;
/// The campaign file: TOML model, defaults and validation.
pub mod config;
/// DUT configuration sets: Linux and FreeBSD presets (chosen by the DUT's OS) and user directories.
pub mod dut;
/// Errors shared by every layer and their exit statuses.
pub mod error;
/// Bounded reading of input files: regular files only, with a size limit.
pub mod file;
/// The history database: campaigns remembered, trends, change points and regressions.
pub mod history;
/// Readers: benchlab results and netbenches pkt-gen logs into series of medians.
pub mod ingest;
/// Labs: the virtual lab (namespaces, veths, CPU placement, its watches), SSH labs' hosts.
pub mod lab;
/// Names that become file names (versions, config sets, profiles, goals): the one rule.
pub mod names;
/// Profiling the DUT inside a trial's traffic window: perf capture, its schedule, folding.
pub mod profile;
/// Reports: Markdown with ministat tables, PNG charts, JSON, and netbenches' own files.
pub mod report;
/// Throughput search (NDR/PDR): MLRsearch and RFC 2544's binary search over a trial runner.
pub mod search;
/// ministat-compatible statistics: summaries, Student's t comparisons, the ASCII plot, C `%g`.
pub mod stats;
/// The results directory: layout, trial records, atomic writes, resume; the only code that
/// writes or reads its records.
pub mod store;
/// Traffic: generators, receivers and their counters, the input queue, latency probes.
pub mod traffic;
/// How benchlab reaches a node: commands, long-running processes and files (local, netns, ssh).
pub mod transport;
/// Units for people: rates and times formatted, counts read with a k, M or G suffix.
pub mod units;
