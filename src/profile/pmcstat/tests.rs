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

/// What pmcstat(8) (FreeBSD's manual, shared/reference/pmcstat.8) says of the flags benchlab
/// passes, and of two it leaves out, in our words: (flag, what its argument is, meaning).
const MANUAL: &[(&str, Option<&str>, &str)] = &[
    (
        "-S",
        Some("event"),
        "allocates a system-mode sampling PMC for the event",
    ),
    ("-O", Some("log file"), "the file the samples are logged to"),
    (
        "-R",
        Some("log file"),
        "analyses a log already written, instead of sampling",
    ),
    (
        "-z",
        Some("depth"),
        "system-wide call graphs are printed this deep at most",
    ),
    (
        "-G",
        Some("file"),
        "the call chains are printed to this file",
    ),
    (
        "-l",
        Some("seconds"),
        "ends a system-wide measurement after this many seconds",
    ),
    (
        "-N",
        None,
        "toggles call-chain capture for the sampling PMCs given after it (on by default)",
    ),
];

/// Checks an argv against [`MANUAL`]: every flag is one of its own, followed by an argument
/// when it takes one; returns (flag, argument) in order.
fn read_flags(argv: &[String]) -> Vec<(&str, Option<&str>)> {
    assert_eq!(argv[0], "pmcstat");
    let mut flags = Vec::new();
    let mut words = argv[1..].iter();
    while let Some(flag) = words.next() {
        let Some((_, argument, _)) = MANUAL.iter().find(|(f, ..)| f == flag) else {
            panic!("{flag} of {argv:?} is not in the manual's facts");
        };
        let value = argument.map(|_| words.next().expect("the flag's argument").as_str());
        flags.push((flag.as_str(), value));
    }
    flags
}

#[test]
fn the_commands_say_what_the_manual_says() {
    let dut = MockTransport::new("dut");
    let record = PmcstatProfiler::new(&dut, "BU_CPU_CLK_UNHALTED").record_argv("/d/pmc.out");
    // System-wide sampling of the event into the log, and no command after the flags: with
    // neither a command nor target processes, pmcstat measures until interrupted, so SIGINT
    // ends the capture at the window's end. No `-l`: it would end the capture on its own
    // clock, not the window's. No `-N`: it would turn off the call chains the graph is made of.
    assert_eq!(
        read_flags(&record),
        [
            ("-S", Some("BU_CPU_CLK_UNHALTED")),
            ("-O", Some("/d/pmc.out"))
        ]
    );
    // Offline analysis of that log: the call graph, its chains 16 frames deep at most (the
    // harness's `-z16`), written to a file benchlab fetches.
    assert_eq!(
        read_flags(&graph_argv("/d/pmc.out", "/d/pmc.graph")),
        [
            ("-R", Some("/d/pmc.out")),
            ("-z", Some("16")),
            ("-G", Some("/d/pmc.graph"))
        ]
    );
    for left_out in ["-l", "-N"] {
        assert!(!record.iter().any(|w| w == left_out), "{left_out}");
    }
}
