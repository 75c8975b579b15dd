//! Campaigns: running the trials of a campaign through a lab, in the order its design asks.

/// The alternating design: config sets switched under continuous traffic, block by block.
pub(crate) mod alternating;
/// The lab kind a run drives (`Bench`), config switches under traffic, progress events.
pub mod bench;
/// What every design of a campaign works with, built once: campaign, store, lab, cancellation,
/// progress.
pub mod context;
/// The measurement designs behind one trait, and the units they measure.
pub(crate) mod design;
/// What a campaign will run, before it runs: design, trials or runs, wall time.
pub(crate) mod estimate;
/// What a trial's latency probes leave: histograms per second, summaries, the lab's floor.
pub(crate) mod latency;
/// Running a campaign: each unit's design chosen once, the lab's version and config set put
/// before it, the lab taken down at the end.
pub(crate) mod run;
/// A version's DUT settings (sysctls, commands), applied alike by every lab and under traffic.
pub(crate) mod settings;
/// A real lab over SSH as a campaign bench: install, reboot and online hooks per version.
pub(crate) mod ssh;
/// The one `Switcher` of every lab kind, parameterised by the DUT's OS and transport.
pub(crate) mod switcher;
/// Throughput profiles: one MLRsearch or RFC 2544 search per iteration, over the trial
/// procedure at fixed rates.
pub(crate) mod throughput;
/// The trial procedure, the same for every lab: senders, receiver, profiler and DUT driven
/// through their traits.
pub(crate) mod trial;
/// The trials design: a trial, judged and measured once more when disturbed, then stored.
pub(crate) mod trials;
/// The virtual lab as a bench: versions, config sets and trials in namespaces.
pub(crate) mod virt;
