//! Campaigns: running the trials of a campaign through a lab, in the order its design asks.

/// The alternating design: config sets switched under continuous traffic, block by block.
pub mod alternating;
/// The lab kind a run drives (`Bench`), config switches under traffic, progress events.
pub mod bench;
/// What a campaign will run, before it runs: design, trials or runs, wall time.
pub mod estimate;
/// Running the trials through a lab, checking and storing them.
pub mod run;
/// A version's DUT settings (sysctls, commands), applied alike by every lab and under traffic.
pub mod settings;
/// A real lab over SSH as a campaign bench: install, reboot and online hooks per version.
pub mod ssh;
/// Throughput profiles: one MLRsearch or RFC 2544 search per iteration, over the trial
/// procedure at fixed rates.
pub mod throughput;
/// The trial procedure, the same for every lab: senders, receiver, profiler and DUT driven
/// through their traits.
pub mod trial;
/// The virtual lab as a bench: versions, config sets and trials in namespaces.
pub mod virt;
