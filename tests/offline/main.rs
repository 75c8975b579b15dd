//! The tests that need no lab, no root and no network: one binary, so that CI links one
//! executable instead of thirteen (each module was its own test file).

#[path = "../common/mod.rs"]
mod common;

mod alternating_sim;
mod architecture;
mod bad_input;
mod config_paths;
mod design;
mod fuzz_files;
mod golden;
mod hostile_config;
mod hostile_fs;
mod hostile_ingest;
mod ministat_cli;
mod ministat_differential;
mod ministat_seeds;
mod parsers_proptest;
mod pktgen;
mod report_alternating_latency;
mod report_archive;
mod report_fidelity;
mod report_latency;
mod report_netbenches;
mod report_pmc;
