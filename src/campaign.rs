//! Campaigns: the plan of trials, the results directory, and running them.

/// Facts about a host for lab.json and reports.
pub mod host;
/// The balanced order of config sets in the alternating design.
pub mod order;
/// The trials of a campaign and their order.
pub mod plan;
/// Profiling the DUT inside a trial's traffic window.
pub mod profile;
/// Running the trials through a lab, checking and storing them.
pub mod run;
/// A real lab over SSH as a campaign bench: install, reboot and online hooks per version.
pub mod ssh;
/// The results directory: layout, atomic writes, resume.
pub mod store;
/// The virtual lab as a bench: versions, config sets and trials in namespaces.
pub mod virt;
