//! Hostile campaign files and flags (issue 33, sections 2 and 3): names that would leave the
//! results directory or make a file name too long, sysctls and commands that cannot run, address
//! families against ranges, CPUs, MACs, alternating blocks that cannot fit, plans too large to
//! hold, and `--resume` with flags it cannot honour. Each class is several generated variants;
//! every one must end with exit status 2 and one stderr line of at most 300 characters naming
//! the key, with nothing written.

use std::fs;
use std::path::Path;
use std::process::Command;

mod cases;

use cases::*;

/// Runs `benchlab run --check` on a case in an empty directory of its own: (status, stderr,
/// what the directory holds afterwards besides what the case put there).
fn run(case: &Case, dir: &Path) -> (i32, String, Vec<String>) {
    fs::create_dir(dir).unwrap();
    // Each a user config set: a directory with its `apply` script.
    for d in &case.dirs {
        fs::create_dir_all(dir.join(d)).unwrap();
        fs::write(dir.join(d).join("apply"), "#!/bin/sh\n").unwrap();
    }
    let mut args: Vec<String> = vec!["run".into(), "--check".into()];
    // A `--resume` case reads no campaign file: the flags are refused first.
    if !case.args.iter().any(|a| a == "--resume") {
        fs::write(dir.join("campaign.toml"), &case.toml).unwrap();
        args.push("campaign.toml".into());
    }
    args.extend(case.args.iter().cloned());
    let out = Command::new(env!("CARGO_BIN_EXE_benchlab"))
        .args(&args)
        .current_dir(dir)
        .output()
        .unwrap();
    let mut left: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "campaign.toml" && n != "sets")
        .collect();
    left.sort();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap_or(-1), stderr, left)
}

/// What is wrong with a case's outcome, if anything.
fn judge(case: &Case, (code, stderr, left): (i32, String, Vec<String>)) -> Option<String> {
    let line = stderr.strip_suffix('\n').unwrap_or(&stderr);
    let problem = if code != 2 {
        format!("exit {code}")
    } else if line.contains('\n') || !stderr.ends_with('\n') {
        "not one line".to_string()
    } else if line.contains("    ") {
        // A run of spaces is a source line break left inside the message's text.
        "a run of spaces in the text".to_string()
    } else if line.chars().count() > 300 {
        format!("{} characters", line.chars().count())
    } else if !line.contains(&case.key) {
        format!("does not name `{}`", case.key)
    } else if !left.is_empty() {
        format!("wrote {left:?}")
    } else {
        return None;
    };
    Some(format!("{}: {problem}: {stderr:?}", case.name))
}

fn check_class(class: &str, cases: Vec<Case>) {
    assert!(cases.len() >= 4, "{class}: only {} cases", cases.len());
    let tmp = tempfile::tempdir().unwrap();
    let failures: Vec<String> = (cases.iter().enumerate())
        .filter_map(|(i, c)| judge(c, run(c, &tmp.path().join(format!("{class}-{i}")))))
        .collect();
    assert!(
        failures.is_empty(),
        "{class}: {} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn names_that_would_leave_the_directory_or_overflow_a_file_name_are_refused() {
    check_class("names", names());
}

#[test]
fn sysctls_and_commands_that_cannot_run_are_refused() {
    check_class("settings", settings());
}

#[test]
fn ranges_of_the_other_address_family_are_refused() {
    check_class("families", families());
}

#[test]
fn cpus_shared_or_absent_are_refused() {
    check_class("cpus", cpus());
}

#[test]
fn macs_that_are_not_six_octets_are_refused() {
    check_class("macs", macs());
}

#[test]
fn alternating_blocks_that_cannot_fit_are_refused() {
    check_class("alternating", alternating());
}

#[test]
fn plans_too_large_to_hold_are_refused() {
    check_class("sizes", sizes());
}

#[test]
fn resume_flags_it_cannot_honour_are_refused() {
    check_class("resume", resume());
}

/// The bounds are not off by one: what sits right at them loads.
#[test]
fn inputs_at_the_bounds_are_accepted() {
    let long = |c: char| c.to_string().repeat(64);
    let tmp = tempfile::tempdir().unwrap();
    let ok = [
        format!("{BASE}{}{}", version(&long('v')), profile(&long('p'))),
        format!("{BASE}{}", goal(&long('g'))),
        format!("{BASE}{}{}", version("v1"), version("v2")),
        format!("{BASE}[[versions]]\nname = \"v\"\nsysctls = {{ \"net.ipv4.conf.eth0/100.forwarding\" = \"1\\t2\" }}\n"),
        format!("{BASE}design = \"alternating\"\n[alternating]\nmax_duration = 16\nmin_blocks = 8\n"),
        format!("iterations = 1000\ndesign = \"trials\"\nconfig_sets = [\"forwarding\"]\n{}{}", list(100, version, "v"), profile("p")),
    ];
    for (i, toml) in ok.iter().enumerate() {
        let c = case(format!("ok {i}"), toml.clone(), "");
        let (code, stderr, left) = run(&c, &tmp.path().join(format!("ok-{i}")));
        assert_eq!((code, left.len()), (0, 0), "{toml}\n{stderr}");
    }
}

/// A results directory holding a campaign past the bounds is refused by `report` too: it is
/// read through the same validation.
#[test]
fn report_refuses_a_stored_campaign_past_the_bounds() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("results");
    fs::create_dir_all(dir.join("runs")).unwrap();
    let versions = list(300, version, "v");
    fs::write(
        dir.join("campaign.toml"),
        format!("iterations = 10000\ndesign = \"trials\"\n{versions}"),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_benchlab"))
        .args(["report", "results", "-o", "out"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("`versions`"), "{stderr}");
    assert!(!tmp.path().join("out").exists());
}
