//! Helpers shared by the integration tests.
// Each test crate includes this module and uses only some of its helpers.
#![allow(dead_code)]

use std::process::{Command, Output};

/// The benchlab binary under test.
pub fn benchlab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_benchlab"))
}

/// Runs `benchlab <args>` in-process, as `main` would: (exit status, stdout, stderr).
pub fn in_process(args: &[&str]) -> (i32, String, String) {
    use clap::Parser;
    let cli =
        benchlab::cli::Cli::try_parse_from(std::iter::once("benchlab").chain(args.iter().copied()))
            .expect("valid command line");
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = match benchlab::cli::run(cli, &mut out, &mut err) {
        Ok(status) => status,
        Err(e) => {
            err.extend(format!("benchlab: {e:#}\n").bytes());
            benchlab::error::exit_code(&e)
        }
    };
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (status, text(out), text(err))
}

/// Runs benchlab with `args` to the end.
pub fn run(args: &[&str]) -> Output {
    benchlab().args(args).output().expect("benchlab runs")
}

/// A command's standard error, as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The network namespaces of benchlab lab `id` that exist now, by name, sorted.
pub fn lab_namespaces(id: &str) -> Vec<String> {
    let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(&format!("benchlab-{id}-")))
        .map(str::to_string)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// expand(1): tabs to spaces at 8-column stops (the seeds' text was expanded).
pub fn expand(text: &str) -> String {
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        let mut column = 0;
        for c in line.chars() {
            if c == '\t' {
                let spaces = 8 - column % 8;
                out.extend(std::iter::repeat_n(' ', spaces));
                column += spaces;
            } else {
                out.push(c);
                column = if c == '\n' { 0 } else { column + 1 };
            }
        }
    }
    out
}

/// Copies a directory tree (test fixtures into a temporary directory).
pub fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Writes `toml` as a campaign file in `dir` and runs it to the end into `dir/results`
/// (quietly): the results directory and the run's output.
pub fn run_campaign(dir: &std::path::Path, toml: &str) -> (std::path::PathBuf, Output) {
    let campaign = dir.join("campaign.toml");
    std::fs::write(&campaign, toml).unwrap();
    let results = dir.join("results");
    let out = run(&[
        "run",
        campaign.to_str().unwrap(),
        "-o",
        results.to_str().unwrap(),
        "-q",
    ]);
    (results, out)
}

/// 2000 flows of 64-byte IPv4 frames from a lab's sender to its DUT (the default profile's).
pub fn sender_frames(
    s: &benchlab::lab::facts::SenderFacts,
) -> benchlab::traffic::packet::FrameSpec {
    benchlab::traffic::packet::FrameSpec::new(
        s.mac,
        s.dut_mac,
        "198.18.10.1:2000-198.18.10.20".parse().unwrap(),
        "198.19.10.1:2000-198.19.10.100".parse().unwrap(),
        64,
    )
    .unwrap()
}
