//! Unit tests of `profile::pmcstat` on a mock transport (the whole capture over SSH, with a
//! stand-in pmcstat, is tests/ssh/pmc.rs).

use super::*;
use crate::transport::{MockTransport, Output};

fn failing(stderr: &str) -> Output {
    Output {
        status: Some(1),
        stdout: Vec::new(),
        stderr: stderr.into(),
    }
}

#[test]
fn a_host_with_hwpmc_and_the_event_can_be_profiled() {
    let dut = MockTransport::new("dut");
    assert_eq!(
        PmcstatProfiler::check(&dut, "BU_CPU_CLK_UNHALTED").unwrap(),
        None
    );
    let calls = dut.calls();
    assert_eq!(calls[0].argv, ["sh", "-c", LOAD_HWPMC]);
    assert_eq!(
        calls[1].argv,
        ["sh", "-c", PROBE, "sh", "BU_CPU_CLK_UNHALTED"]
    );
}

#[test]
fn no_hwpmc_or_no_such_event_is_one_line_saying_so_not_an_error() {
    let dut = MockTransport::new("dut");
    dut.reply(
        &["sh", "-c", LOAD_HWPMC],
        failing("kldload: can't load hwpmc: No such file or directory\n"),
    );
    let why = PmcstatProfiler::check(&dut, DEFAULT_EVENT)
        .unwrap()
        .unwrap();
    assert_eq!(
        why,
        "dut has no hwpmc (kldload: can't load hwpmc: No such file or directory): a VM, or a \
         kernel without hwpmc, cannot be profiled"
    );
    assert!(!why.contains('\n'), "{why}");
    // hwpmc missing: pmcstat is not even tried.
    assert_eq!(dut.calls().len(), 1);

    let dut = MockTransport::new("dut");
    dut.reply(
        &["sh", "-c", PROBE],
        failing("pmcstat: ERROR: Cannot allocate system-mode pmc with specification \"x\"\n"),
    );
    let why = PmcstatProfiler::check(&dut, "x").unwrap().unwrap();
    assert!(
        why.starts_with("dut: pmcstat cannot sample x (pmcstat: ERROR"),
        "{why}"
    );
    assert!(why.contains("set pmc_event"), "{why}");
}

#[test]
fn a_pmcstat_that_exits_by_itself_fails_the_capture_and_its_files_are_removed() {
    let dut = MockTransport::new("dut");
    dut.reply(&["mktemp"], Output::ok("/tmp/benchlab-pmc.abc\n"));
    // The mock's processes have exited as soon as they are spawned.
    dut.reply(&["pmcstat", "-S"], failing("pmcstat: ERROR: no PMC\n"));
    let profiler = PmcstatProfiler::new(&dut, "ev");
    let mut recording = profiler.start().unwrap();
    recording.resume().unwrap();
    let err = format!("{:#}", recording.halt().unwrap_err());
    assert!(err.contains("pmcstat stopped before the end"), "{err}");
    assert!(err.contains("no PMC"), "{err}");
    drop(recording);
    let commands = dut.commands();
    assert_eq!(
        commands.first().map(String::as_str),
        Some(format!("sh -c {LOAD_HWPMC}").as_str())
    );
    assert!(commands.contains(&"pmcstat -S ev -O /tmp/benchlab-pmc.abc/pmc.out".to_string()));
    assert_eq!(
        commands.last().map(String::as_str),
        Some("rm -rf /tmp/benchlab-pmc.abc")
    );
}
