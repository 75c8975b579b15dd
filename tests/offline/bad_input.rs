//! Malformed inputs, as a user gives them: campaign files, results directories (benchlab's and
//! netbenches'), ministat data and flags. Every case must end with exit status 2 and exactly
//! one line on stderr, no panic, never hanging (a case still running after 5 s is killed and
//! fails), within 1 GiB of address space. Each case runs in a directory of its own made from
//! small generated files; `PATH` points at an empty directory, so that a case that got past its
//! check could not build a lab (no `ip`, no `nft`) even by mistake.

#[path = "../bad_input/cases.rs"]
pub(crate) mod bad_input_cases;

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use bad_input_cases::{Case, Entry};
use wait_timeout::ChildExt;

/// How long a case may run before it counts as hung and is killed: a case takes milliseconds, so
/// this bound (the "each case under 5 s") is a hang guard, not a speed goal.
const LIMIT: Duration = Duration::from_secs(5);

/// The address space a case may use (`prlimit --as`): past it an allocation fails, the case
/// aborts instead of exiting with 2, and the test names it, so "bounded memory" is checked.
const MEMORY: &str = "--as=1073741824";

/// Writes a case's files into `dir`.
fn lay_out(dir: &Path, files: &[(String, Entry)]) {
    for (name, entry) in files {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        // A damaged file takes the place of the one a copied tree holds.
        match fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => fs::remove_dir_all(&path).unwrap(),
            Ok(_) => fs::remove_file(&path).unwrap(),
            Err(_) => {}
        }
        match entry {
            Entry::Text(text) => fs::write(&path, text).unwrap(),
            Entry::Bytes(bytes) => fs::write(&path, bytes).unwrap(),
            Entry::Fifo => nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU).unwrap(),
            Entry::Link(target) => std::os::unix::fs::symlink(target, &path).unwrap(),
            Entry::Sparse(len) => fs::File::create(&path).unwrap().set_len(*len).unwrap(),
            Entry::Dir => fs::create_dir_all(&path).unwrap(),
            Entry::Tree(from) => copy_tree(from, &path),
        }
    }
}

/// Copies directory `from` to `to`, recursively.
fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// What one case did: its exit status and stderr, or why it did not end.
fn run_case(
    bin: &Path,
    dir: &Path,
    empty_path: &Path,
    args: &[String],
) -> Result<(i32, String), String> {
    let mut child = Command::new("/usr/bin/prlimit")
        .arg(MEMORY)
        .arg("--")
        .arg(bin)
        .args(args)
        .current_dir(dir)
        .env("PATH", empty_path)
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("spawn: {e}"))?;
    let Some(status) = child.wait_timeout(LIMIT).map_err(|e| e.to_string())? else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!("still running after {LIMIT:?}"));
    };
    let mut stderr = String::new();
    let _ = child.stderr.take().unwrap().read_to_string(&mut stderr);
    Ok((status.code().unwrap_or(-1), stderr))
}

/// What is wrong with a case's outcome, if anything. A ministat usage error (`usage`) keeps
/// ministat's usage text after its one line.
fn judge(outcome: Result<(i32, String), String>, usage: bool) -> Option<String> {
    let (code, mut stderr) = match outcome {
        Ok(o) => o,
        Err(why) => return Some(why),
    };
    if usage {
        match stderr.split_once("\nUsage: benchlab ministat ") {
            Some((line, text)) if text.lines().skip(1).all(|l| l.starts_with('\t')) => {
                stderr = format!("{line}\n");
            }
            _ => return Some(format!("no ministat usage text: {stderr:?}")),
        }
    }
    let lines = stderr.lines().count();
    if code != 2 || lines != 1 || !stderr.ends_with('\n') || stderr.contains("panicked") {
        return Some(format!(
            "exit {code}, {lines} line(s) on stderr: {stderr:?}"
        ));
    }
    None
}

/// Where the cases run: a temporary directory, an empty `PATH` directory in it, and the
/// well-formed benchlab results directory the damaged ones copy.
struct Bench {
    tmp: tempfile::TempDir,
    empty_path: PathBuf,
    results: PathBuf,
}

impl Bench {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let empty_path = tmp.path().join("no-tools");
        fs::create_dir(&empty_path).unwrap();
        let results = bad_input_cases::dirs::results_dir(&tmp.path().join("base-results"));
        Self {
            tmp,
            empty_path,
            results,
        }
    }

    /// Lays `case` out in a directory of its own (named `name`) and runs it.
    fn run(&self, case: &Case, name: &str) -> Result<(i32, String), String> {
        let dir = self.tmp.path().join(name);
        fs::create_dir(&dir).unwrap();
        lay_out(&dir, &case.files);
        let bin = Path::new(env!("CARGO_BIN_EXE_benchlab"));
        // Held by this test while the case runs: a concurrent `run --resume`.
        let held =
            (case.locked.as_ref()).map(|d| benchlab::store::lock::lock(&dir.join(d)).unwrap());
        let outcome = run_case(bin, &dir, &self.empty_path, &case.args);
        drop(held);
        outcome
    }
}

#[test]
fn every_malformed_input_is_refused_in_one_line() {
    let bench = Bench::new();
    let cases: Vec<Case> = bad_input_cases::all(&bench.results);
    assert!(cases.len() >= 150, "only {} cases", cases.len());
    let failures: Vec<String> = (cases.iter().enumerate())
        .filter_map(|(i, case)| {
            let outcome = bench.run(case, &format!("case-{i}"));
            judge(outcome, case.usage).map(|why| format!("{}: {why}", case.name))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn the_well_formed_inputs_the_cases_start_from_are_accepted() {
    let bench = Bench::new();
    for case in bad_input_cases::controls(&bench.results) {
        let (code, stderr) = bench.run(&case, &case.name).unwrap();
        assert_eq!(code, 0, "{}: {stderr}", case.name);
        if case.name.contains("1.5e308") {
            assert!(stderr.contains("left out of the graph"), "{stderr}");
        }
    }
}
