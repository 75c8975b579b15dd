//! Picking the DUT's profiler by its operating system.

use crate::dut::Os;
use crate::profile::pmcstat::{PmcstatProfiler, DEFAULT_EVENT};
use crate::profile::{PerfProfiler, Profiler};
use crate::transport::Transport;

/// Checks that `dut` can be profiled (perf on Linux; hwpmc, loaded if need be, and
/// pmcstat's `pmc_event` on FreeBSD): `Ok(Some(why))` when a FreeBSD DUT cannot, which
/// leaves the campaign without flamegraphs; a Linux DUT without perf is an error.
pub(crate) fn check_profiler(
    os: Os,
    dut: &dyn Transport,
    pmc_event: Option<&str>,
) -> anyhow::Result<Option<String>> {
    match os {
        Os::Linux => PerfProfiler::check(dut).map(|()| None),
        Os::FreeBsd => PmcstatProfiler::check(dut, pmc_event.unwrap_or(DEFAULT_EVENT)),
    }
}

/// The profiler of a DUT host of its own (all its CPUs are the DUT's).
pub(crate) fn profiler<'a>(
    os: Os,
    dut: &'a dyn Transport,
    pmc_event: Option<&str>,
) -> Box<dyn Profiler + 'a> {
    match os {
        Os::Linux => Box::new(PerfProfiler::new(dut, Vec::new())),
        Os::FreeBsd => Box::new(PmcstatProfiler::new(
            dut,
            pmc_event.unwrap_or(DEFAULT_EVENT),
        )),
    }
}
