//! benchlab measures how fast a router or firewall forwards packets, and says with statistics
//! what changed between software versions and configurations.
//!
//! The pipeline: a campaign (`campaign`) drives a lab (`lab`, over a `transport`) whose DUT gets
//! config sets (`dut`) while generators and receivers (`traffic`) record per-second samples;
//! readers (`ingest`) turn those samples — or archived netbenches pkt-gen logs — into series;
//! `stats` computes ministat-compatible summaries and comparisons; `report` writes Markdown, PNG
//! charts, flamegraphs and JSON. Only `cli` prints.

/// Command line: argument parsing, dispatch, and the only place that prints.
pub mod cli;
/// DUT configuration sets: Linux presets (forwarding, nftables, iptables) and user directories.
pub mod dut;
/// Errors shared by every layer and their exit statuses.
pub mod error;
/// The virtual lab: namespaces, veths, addressing, CPU placement; `lab up|down|status`.
pub mod lab;
/// Traffic: the packet generator (`benchlab gen`) and the receiver's counter sampler (`benchlab rx`).
pub mod traffic;
/// How benchlab reaches a node: commands, long-running processes and files (netns, mock).
pub mod transport;
