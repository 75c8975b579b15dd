//! The tests against real OpenSSH servers in network namespaces: one binary, so that their
//! waits (trials, reboots, time limits) overlap on the test harness's threads.

#[path = "../common/mod.rs"]
mod common;
#[path = "../sshd/mod.rs"]
mod sshd;

mod campaign;
mod latency;
mod pmc;
mod throughput;
mod topologies;
mod transport;
