//! Campaigns: the plan of trials, the results directory, and running them.

/// The trials of a campaign and their order.
pub mod plan;
/// The results directory: layout, atomic writes, resume.
pub mod store;
