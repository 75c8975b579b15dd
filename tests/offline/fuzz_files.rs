//! Generated damage to every results file `benchlab report` reads, through the real binary:
//! a benchlab directory (`campaign.toml`, `lab.json`, a trial's `samples.csv` and `meta.json`;
//! the one `tests/bad_input/dirs.rs` writes through the library)
//! and a netbenches run (pkt-gen `.sender`, `.receiver`, `.info`, pmcstat `.pmc.graph`), each
//! file given one to three edits (bytes inserted, a range replaced, the file cut, a line
//! doubled or dropped, the whole replaced by noise) of text that mixes digits, separators,
//! multibyte and control characters. Whatever the damage, the report ends with status 0 or 2
//! (one line of at most 300 characters), within 10 s and 1 GiB of address space.
//!
//! `BENCHLAB_FUZZ_CASES` sets the cases per file (default 16: seconds in CI);
//! `benches/fuzz.sh` runs thousands.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use proptest::prelude::*;
use wait_timeout::ChildExt;

use crate::common::copy_dir;

/// A case still running after this is a hang: a report of these files takes milliseconds.
const LIMIT: Duration = Duration::from_secs(10);

fn cases() -> u32 {
    std::env::var("BENCHLAB_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(16)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// One edit of a file's bytes; positions are taken modulo the file's length.
#[derive(Debug, Clone)]
enum Edit {
    Insert(usize, String),
    Replace(usize, usize, String),
    Cut(usize),
    DoubleLine(usize),
    DropLine(usize),
    Noise(Vec<u8>),
}

/// Text where parsers break: digits and signs, separators, line ends, multibyte and control
/// characters, escape sequences.
fn nasty() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[0-9]{1,24}",
        Just("-".to_string()),
        Just(",".to_string()),
        Just(" ".to_string()),
        Just("\n".to_string()),
        Just("é€😀".to_string()),
        Just("\u{0}".to_string()),
        Just("\u{1b}[31m".to_string()),
        Just("\r".to_string()),
        Just("@".to_string()),
        Just("[".to_string()),
        Just("\"".to_string()),
        Just("1e308".to_string()),
        Just("NaN".to_string()),
        Just("inf".to_string()),
    ];
    prop::collection::vec(piece, 1..12).prop_map(|v| v.concat())
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), nasty()).prop_map(|(p, t)| Edit::Insert(p, t)),
        (any::<usize>(), 0usize..64, nasty()).prop_map(|(p, n, t)| Edit::Replace(p, n, t)),
        any::<usize>().prop_map(Edit::Cut),
        any::<usize>().prop_map(Edit::DoubleLine),
        any::<usize>().prop_map(Edit::DropLine),
        prop::collection::vec(any::<u8>(), 0..2048).prop_map(Edit::Noise),
    ]
}

/// The byte index at or before `at` that starts a character, so that edits of valid UTF-8
/// stay valid (noise is what tries invalid bytes).
fn boundary(text: &[u8], at: usize) -> usize {
    let mut at = at % (text.len() + 1);
    while at > 0 && at < text.len() && (text[at] & 0xC0) == 0x80 {
        at -= 1;
    }
    at
}

fn apply(bytes: &mut Vec<u8>, edit: &Edit) {
    let lines = |b: &Vec<u8>| {
        b.split(|c| *c == b'\n')
            .map(<[u8]>::to_vec)
            .collect::<Vec<_>>()
    };
    match edit {
        Edit::Insert(p, t) => {
            let at = boundary(bytes, *p);
            bytes.splice(at..at, t.bytes());
        }
        Edit::Replace(p, n, t) => {
            let at = boundary(bytes, *p);
            let end = boundary(bytes, (at + n).min(bytes.len()));
            bytes.splice(at..end.max(at), t.bytes());
        }
        Edit::Cut(p) => bytes.truncate(boundary(bytes, *p)),
        Edit::DoubleLine(p) | Edit::DropLine(p) => {
            let mut all = lines(bytes);
            let at = p % all.len();
            if matches!(edit, Edit::DoubleLine(_)) {
                all.insert(at, all[at].clone());
            } else {
                all.remove(at);
            }
            *bytes = all.join(&b'\n');
        }
        Edit::Noise(noise) => *bytes = noise.clone(),
    }
}

/// Runs `benchlab report IN -o OUT` under the limits; fails the case on a hang, a crash, a
/// status other than 0 and 2, or a refusal that is not one short line.
fn report(dir: &Path) -> Result<(), TestCaseError> {
    let out = dir.join("out");
    let mut child = Command::new("prlimit")
        .args(["--as=1073741824", "--"])
        .arg(env!("CARGO_BIN_EXE_benchlab"))
        .arg("report")
        .arg(dir.join("in"))
        .arg("-o")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = match child.wait_timeout(LIMIT).unwrap() {
        Some(status) => status,
        None => {
            let _ = child.kill();
            return Err(TestCaseError::fail("hung: still running after 10 s"));
        }
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    let code = status.code();
    prop_assert!(matches!(code, Some(0 | 2)), "status {status}: {stderr}");
    if code == Some(2) {
        let lines: Vec<&str> = stderr.lines().collect();
        prop_assert_eq!(lines.len(), 1, "{}", stderr);
        prop_assert!(
            lines[0].chars().count() <= 300,
            "{} chars: {}",
            lines[0].len(),
            &stderr
        );
    }
    Ok(())
}

/// Copies `template` into a fresh `in/`, edits the file `rel` of it and reports.
fn damaged(template: &Path, rel: &str, edits: &[Edit]) -> Result<(), TestCaseError> {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    copy_dir(template, &input);
    let path = input.join(rel);
    let mut bytes = fs::read(&path).unwrap_or_default();
    for e in edits {
        apply(&mut bytes, e);
    }
    fs::write(&path, bytes).unwrap();
    report(tmp.path())
}

/// The two templates, made once per test binary.
fn templates() -> &'static (tempfile::TempDir, PathBuf, PathBuf) {
    static T: std::sync::OnceLock<(tempfile::TempDir, PathBuf, PathBuf)> =
        std::sync::OnceLock::new();
    T.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let ours = tmp.path().join("benchlab");
        crate::bad_input::bad_input_cases::dirs::results_dir(&ours);
        let netbenches = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/netbenches/002");
        (tmp, ours, netbenches)
    })
}

const BENCHLAB_FILES: [&str; 4] = [
    "campaign.toml",
    "lab.json",
    "runs/default.forwarding.inet4.1/samples.csv",
    "runs/default.forwarding.inet4.1/meta.json",
];

const NETBENCHES_FILES: [&str; 4] = [
    "RAW/bench.318516current.forwarding.inet4.1.sender",
    "RAW/bench.318516current.forwarding.inet4.1.receiver",
    "RAW/bench.318516current.forwarding.inet4.info",
    "RAW/bench.318516current.forwarding.inet4.1.pmc.graph",
];

proptest! {
    #![proptest_config(config())]

    #[test]
    fn damaged_benchlab_files_are_reported_or_refused(
        file in 0..BENCHLAB_FILES.len(),
        edits in prop::collection::vec(edit(), 1..4),
    ) {
        let (_, ours, _) = templates();
        damaged(ours, BENCHLAB_FILES[file], &edits)?;
    }

    #[test]
    fn damaged_netbenches_files_are_reported_or_refused(
        file in 0..NETBENCHES_FILES.len(),
        edits in prop::collection::vec(edit(), 1..4),
    ) {
        let (_, _, netbenches) = templates();
        damaged(netbenches, NETBENCHES_FILES[file], &edits)?;
    }
}
