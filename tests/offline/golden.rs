//! `benchlab report` on the netbenches fixtures (tests/data/netbenches/) writes the same files as
//! the benchlab that recorded tests/data/golden/: text files byte for byte, PNG graphs and SVG
//! flamegraphs by fingerprint (listed in each seed's `binary.fnv`), and no file more or less.
//! It guards refactors: a change of output must be deliberate. `BENCHLAB_BLESS=1` rewrites the
//! expected files from the present output.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The list of binary files' fingerprints in a seed's expected directory.
const BINARY: &str = "binary.fnv";

fn data(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(dir)
}

/// Every file below `dir`, by path relative to it (`flame/….svg`), with its bytes.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).unwrap().to_string_lossy();
                out.insert(rel.replace('\\', "/"), fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Graphs and flamegraphs are large: they are compared by fingerprint, not kept whole.
fn is_binary(name: &str) -> bool {
    name.ends_with(".png") || name.ends_with(".svg")
}

/// FNV-1a, 64 bits: the test's own, so that it does not trust the code it checks.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A report's files as they are kept in tests/data/golden: text files whole, binary ones as
/// lines `<fingerprint> <size> <name>` of one file [`BINARY`].
fn kept(report: BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
    let mut binary = String::new();
    let mut out = BTreeMap::new();
    for (name, bytes) in report {
        if is_binary(&name) {
            binary.push_str(&format!("{:016x} {} {name}\n", fnv(&bytes), bytes.len()));
        } else {
            out.insert(name, bytes);
        }
    }
    out.insert(BINARY.to_string(), binary.into_bytes());
    out
}

fn check(seed: &str) {
    let out = tempfile::tempdir().unwrap();
    let input = data("netbenches").join(seed);
    let run = crate::common::run(&[
        "report",
        input.to_str().unwrap(),
        "-o",
        out.path().to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", crate::common::stderr(&run));
    let got = kept(files(out.path()));
    let expected_dir = data("golden").join(seed);
    if std::env::var_os("BENCHLAB_BLESS").is_some() {
        let _ = fs::remove_dir_all(&expected_dir);
        for (name, bytes) in &got {
            let path = expected_dir.join(name);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, bytes).unwrap();
        }
        return;
    }
    let expected = files(&expected_dir);
    let names = |m: &BTreeMap<String, Vec<u8>>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&got), names(&expected), "{seed}: other files");
    let differs = expected.iter().find(|(name, bytes)| got[*name] != **bytes);
    if let Some((name, _)) = differs {
        // Kept for a diff against the expected file.
        let actual = out
            .keep()
            .join(format!("{}.actual", name.replace('/', "_")));
        fs::write(&actual, &got[name]).unwrap();
        panic!(
            "{seed}/{name} differs from tests/data/golden/{seed}/{name}; the output is in {}; \
             if the change is meant, rerun with BENCHLAB_BLESS=1",
            actual.display()
        );
    }
}

#[test]
fn seed_002_report_is_unchanged() {
    check("002");
}

#[test]
fn seed_003_report_is_unchanged() {
    check("003");
}
