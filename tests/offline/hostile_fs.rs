//! A hostile file system (issue 33): FIFOs, devices, directories and escaping symlinks where
//! benchlab reads a file; lock files that are not files; output paths that cannot be
//! directories; a report killed or failing while it writes; a stream without newlines given to
//! ministat. Each is refused at once (the real binary, under a timeout: no hang) with exit
//! status 2 and one line, or leaves what was there untouched.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use benchlab::config::{defaults::CONFIG_SETS, Campaign};
use benchlab::store::lock::LOCK_FILE as LOCK_FILE_NAME;
use wait_timeout::ChildExt;

use crate::bad_input::bad_input_cases::dirs::results_dir;
use crate::bad_input::bad_input_cases::CAMPAIGN;
use crate::common::copy_dir;
use benchlab::store::{plan, Store};

const BIN: &str = env!("CARGO_BIN_EXE_benchlab");

/// Runs `command` to its end within 30 s (a hang fails the test): (status, stderr).
fn finish(mut command: Command) -> (Option<i32>, String) {
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let Some(status) = child.wait_timeout(Duration::from_secs(30)).unwrap() else {
        child.kill().unwrap();
        panic!("{command:?} hung");
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    (status.code(), err)
}

fn benchlab(args: &[&Path]) -> (Option<i32>, String) {
    let mut command = Command::new(BIN);
    command.args(args).stdin(Stdio::null());
    finish(command)
}

/// Asserts exit status 2 and one line of stderr naming `what`.
fn refused((status, err): (Option<i32>, String), what: &str) {
    assert_eq!(status, Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(what), "{what} not in: {err}");
}

/// The kinds of non-files put where a file is read; `escape` is a regular file outside.
fn plant(path: &Path, kind: &str, escape: &Path) {
    let _ = fs::remove_file(path);
    let _ = fs::remove_dir_all(path);
    match kind {
        "fifo" => nix::unistd::mkfifo(path, nix::sys::stat::Mode::S_IRWXU).unwrap(),
        "dir" => fs::create_dir(path).unwrap(),
        "zero" => symlink("/dev/zero", path).unwrap(),
        "null" => symlink("/dev/null", path).unwrap(),
        "escape" => symlink(escape, path).unwrap(),
        "loop" => symlink(path, path).unwrap(),
        _ => unreachable!(),
    }
}

const KINDS: [&str; 6] = ["fifo", "dir", "zero", "null", "escape", "loop"];

fn data(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(dir)
}

#[test]
fn non_files_in_an_archive_or_its_report_toml_are_refused_without_waiting() {
    let tmp = tempfile::tempdir().unwrap();
    let escape = tmp.path().join("secret");
    fs::write(&escape, "title = \"secret\"\n").unwrap();
    for name in [
        "report.toml",
        "bench.299288.fastforwarding.2.receiver",
        "bench.299288.fastforwarding.2.pmc.graph",
        "README.md",
    ] {
        for kind in KINDS {
            let archive = tmp.path().join("archive");
            let _ = fs::remove_dir_all(&archive);
            copy_dir(&data("netbenches/003"), &archive);
            plant(&archive.join(name), kind, &escape);
            let out = tmp.path().join("out");
            let _ = fs::remove_dir_all(&out);
            let got = benchlab(&["report".as_ref(), &archive, "-o".as_ref(), &out]);
            // An archive's README is only a hint (which ministat made its tables): any
            // non-file there is no README, and the report goes on.
            if name == "README.md" {
                assert_eq!(got.0, Some(0), "{kind}: {}", got.1);
                continue;
            }
            refused(got, name);
            assert!(!out.exists(), "{kind} {name}: a report was written");
        }
    }
}

fn campaign() -> Campaign {
    Campaign::from_toml(CAMPAIGN, "campaign.toml", &CONFIG_SETS).unwrap()
}

#[test]
fn non_files_in_a_results_directory_or_as_the_campaign_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let escape = tmp.path().join("secret");
    fs::write(&escape, "").unwrap();
    let first = plan(&campaign())[0].to_string();
    let meta = format!("runs/{first}/meta.json");
    for name in ["campaign.toml", meta.as_str(), "lab.json"] {
        // Results files are read through the store, whose files are not confined yet; a
        // `meta.json` or `lab.json` that does not resolve (a loop) is one not written yet to
        // the store (see the report of issue 33).
        let skipped = |k: &&str| *k == "escape" || (*k == "loop" && name != "campaign.toml");
        for kind in KINDS.into_iter().filter(|k| !skipped(k)) {
            let results = tmp.path().join("results");
            let _ = fs::remove_dir_all(&results);
            results_dir(&results);
            plant(&results.join(name), kind, &escape);
            let out = tmp.path().join("out");
            let _ = fs::remove_dir_all(&out);
            let got = benchlab(&["report".as_ref(), &results, "-o".as_ref(), &out]);
            refused(got, name.rsplit('/').next().unwrap());
            assert!(!out.exists(), "{kind} {name}: a report was written");
        }
    }
    // The campaign file the user names may be a symlink, to a file only.
    for kind in KINDS.into_iter().filter(|k| *k != "escape") {
        let file = tmp.path().join("c.toml");
        plant(&file, kind, &escape);
        let got = benchlab(&["run".as_ref(), &file, "--check".as_ref()]);
        refused(got, "c.toml");
    }
}

#[test]
fn a_lock_file_that_is_not_a_file_is_refused_and_never_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("target");
    for kind in ["fifo", "dir", "escape", "zero", "loop"] {
        // A run into an empty directory holding it, and a report writing into one.
        let dir = tmp.path().join(format!("run-{kind}"));
        fs::create_dir(&dir).unwrap();
        plant(&dir.join(LOCK_FILE_NAME), kind, &target);
        let e = Store::create(&dir, &campaign()).unwrap_err().to_string();
        assert!(e.ends_with("remove it and try again"), "{kind}: {e}");
        let out = tmp.path().join(format!("out-{kind}"));
        fs::create_dir(&out).unwrap();
        plant(&out.join(LOCK_FILE_NAME), kind, &target);
        let archive = data("netbenches/003");
        let got = benchlab(&["report".as_ref(), &archive, "-o".as_ref(), &out]);
        refused(got, LOCK_FILE_NAME);
        assert_eq!(fs::read_dir(&out).unwrap().count(), 1, "{kind}: written");
        assert!(!target.exists(), "{kind}: the symlink's target was created");
    }
}

#[test]
fn output_paths_that_cannot_be_directories_are_refused_before_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file");
    fs::write(&file, "mine").unwrap();
    let lp = tmp.path().join("loop");
    symlink(&lp, &lp).unwrap();
    let archive = data("netbenches/003");
    let campaign = data("../../examples/default.toml");
    for bad in [
        file.clone(),
        file.join("sub"),
        file.join("sub/deeper"),
        lp.clone(),
        lp.join("x"),
        PathBuf::from("/proc/benchlab-none"),
        PathBuf::from("/proc/self"),
        PathBuf::from("/proc/version"),
    ] {
        let shown = bad.display().to_string();
        refused(
            benchlab(&["report".as_ref(), &archive, "-o".as_ref(), &bad]),
            &shown,
        );
        let db = tmp.path().join("none.db");
        let history = ["history", "--db", db.to_str().unwrap(), "show", "-o"];
        let mut args: Vec<&Path> = history.iter().map(Path::new).collect();
        args.push(&bad);
        // `/proc/benchlab-none` is found when the first chart is written (a database is
        // needed first); either way exit 2, one line.
        let got = benchlab(&args);
        assert_eq!(got.0, Some(2), "{shown}: {}", got.1);
        assert_eq!(got.1.lines().count(), 1, "{}", got.1);
        // Exit 2, said before any lab is built (`/proc/self` exists and is not empty).
        let got = benchlab(&["run".as_ref(), &campaign, "-o".as_ref(), &bad]);
        assert_eq!(got.0, Some(2), "{shown}: {}", got.1);
        assert!(
            got.1.contains(&shown) && got.1.lines().count() == 1,
            "{}",
            got.1
        );
    }
    assert_eq!(fs::read_to_string(&file).unwrap(), "mine");
    assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 2);
}

/// Every file in `dir` and its contents.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    (fs::read_dir(dir).unwrap())
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| {
            (
                e.file_name().into_string().unwrap(),
                fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

fn temporaries(dir: &Path) -> usize {
    (snapshot(dir).keys())
        .filter(|n| n.starts_with(benchlab::atomic::TEMP_PREFIX))
        .count()
}

/// `benchlab report archive -o out` under a file size limit of `blocks` × 512 bytes, the
/// signal it raises ignored or not.
fn report_limited(archive: &Path, out: &Path, blocks: u32, ignore: bool) -> (Option<i32>, String) {
    let trap = if ignore { "trap '' XFSZ; " } else { "" };
    let mut command = Command::new("sh");
    command.arg("-c").arg(format!(
        "{trap}ulimit -f {blocks}; exec \"$0\" report \"$1\" -o \"$2\""
    ));
    command.args([Path::new(BIN), archive, out]);
    finish(command)
}

#[test]
fn a_report_failing_or_killed_midway_leaves_the_previous_one_and_no_temporaries() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    copy_dir(&data("netbenches/003"), &archive);
    let out = tmp.path().join("out");
    let (status, err) = benchlab(&["report".as_ref(), &archive, "-o".as_ref(), &out]);
    assert_eq!(status, Some(0), "{err}");
    let before = snapshot(&out);
    // A new title changes the README: the report that fails would replace it.
    fs::write(archive.join("report.toml"), "title = \"second\"\n").unwrap();
    // The chart (a few hundred kB) exceeds the limit after smaller files were staged.
    let (status, _) = report_limited(&archive, &out, 100, true);
    assert_eq!(status, Some(1), "a write error is no bad input");
    assert_eq!(snapshot(&out), before, "a failed report changed files");
    // Killed by the signal: its temporaries stay, the previous report too.
    let (status, _) = report_limited(&archive, &out, 100, false);
    assert_eq!(status, None, "not killed");
    assert!(temporaries(&out) > 0, "nothing was staged before the kill");
    let mut kept = snapshot(&out);
    kept.retain(|n, _| !n.starts_with(benchlab::atomic::TEMP_PREFIX));
    assert_eq!(kept, before, "a killed report changed files");
    // The next report removes them (and only them) and writes in full.
    fs::write(out.join(".benchlab-mine"), "not a temporary of benchlab's").unwrap();
    let (status, err) = benchlab(&["report".as_ref(), &archive, "-o".as_ref(), &out]);
    assert_eq!(status, Some(0), "{err}");
    assert_eq!(temporaries(&out), 1);
    assert!(String::from_utf8_lossy(&snapshot(&out)["README.md"]).contains("second"));
    // A file of the report's replaced by a directory: refused before anything is written.
    let now = snapshot(&out);
    fs::remove_file(out.join("gnuplot.data")).unwrap();
    fs::create_dir(out.join("gnuplot.data")).unwrap();
    fs::write(archive.join("report.toml"), "title = \"third\"\n").unwrap();
    refused(
        benchlab(&["report".as_ref(), &archive, "-o".as_ref(), &out]),
        "gnuplot.data",
    );
    let mut expected = now;
    expected.remove("gnuplot.data");
    assert_eq!(snapshot(&out), expected);
}

#[test]
fn a_resumed_run_removes_the_temporaries_a_killed_one_left() {
    let tmp = tempfile::tempdir().unwrap();
    let results = results_dir(&tmp.path().join("results"));
    let trial = results.join("runs").join(plan(&campaign())[0].to_string());
    for dir in [&results, &trial] {
        fs::write(dir.join(".benchlab-Ab12cD"), "half").unwrap();
    }
    fs::write(results.join(".benchlab-longer-name"), "mine").unwrap();
    let store = Store::resume(&results, &campaign(), &CONFIG_SETS).unwrap();
    assert_eq!(temporaries(&results), 1);
    assert_eq!(temporaries(&trial), 0);
    drop(store);
}

#[test]
fn ministat_refuses_a_stream_without_newlines_in_bounded_memory() {
    // 200 MB of address space: reading /dev/zero to its end (or to 2 GB) would abort.
    for input in ["/dev/zero", "/dev/urandom"] {
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg("ulimit -v 200000; exec \"$0\" ministat")
            .arg(BIN)
            .stdin(fs::File::open(input).unwrap());
        let (status, err) = finish(command);
        if input == "/dev/zero" {
            assert_eq!(status, Some(2), "{err}");
            assert_eq!(
                err,
                "benchlab: <stdin>:1: a line longer than 1 MiB, not data ministat reads; give \
                 one value a line\n"
            );
        } else {
            // Random bytes hold newlines: invalid data, said at its line.
            assert_eq!(status, Some(2), "{err}");
            assert!(
                err.starts_with("benchlab: ") && err.lines().count() == 1,
                "{err}"
            );
        }
    }
    // Files that are no files are refused at once.
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    for file in [fifo.as_path(), Path::new("/dev/zero")] {
        refused(benchlab(&["ministat".as_ref(), file]), "not a regular file");
    }
}
