//! Writing a report's files into a directory without ever overwriting a file benchlab did not
//! write: an archive's own README.md, `gnuplot.data`, `.pps` files and PNGs stay as they are.
//!
//! benchlab knows its own files by [`MANIFEST`], the names and content fingerprints of what it
//! wrote into the directory (written last, after the files): a file edited since is no longer
//! benchlab's. Reports written before the manifest existed are known by the marker line of
//! their README. A file whose contents would not change is no overwrite.
//!
//! [`MANIFEST`]: crate::report::output::MANIFEST

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use anyhow::Context;

use crate::error::InputError;
use crate::ingest::file;
use crate::report::{markdown, OutputFile};
use crate::store::lock;

/// The files benchlab wrote into a directory, one `<fingerprint> <name>` a line.
pub(crate) const MANIFEST: &str = "benchlab-report.txt";

/// First line of the manifest, for whoever opens it.
const MANIFEST_HEADER: &str =
    "# Files `benchlab report` wrote here; it overwrites these and no other file.";

/// Writes the files into `dir` (created if missing), all or nothing.
///
/// Every file is staged first: written in full and synced to a temporary file beside its
/// target, then all are renamed into place (README.md and the manifest last). A failure while
/// staging (a full disk, a kill) leaves the previous report as it was, and renames of checked
/// targets do not fail. Temporary files and renames rather than a temporary directory swapped
/// in: the output directory is often the results directory itself, which cannot be replaced.
///
/// Refused before anything is written, as [`InputError`]s: a name that is not a path inside
/// `dir` (absolute, with `..`, or through a symlink leading elsewhere), an output directory
/// that cannot be one, and a file that benchlab did not write and that would change (a
/// hand-written README or an archive's own `gnuplot.data` or graphs).
pub fn write_files(dir: &Path, files: &[OutputFile]) -> anyhow::Result<()> {
    let targets = (files.iter())
        .map(|f| confined(dir, &f.name))
        .collect::<Result<Vec<_>, _>>()?;
    let mut ours = written_before(dir)?;
    check_overwrites(dir, files, &ours)?;
    crate::atomic::create_dir(dir)?;
    for path in &targets {
        // Names may have a directory (`flame/….svg`).
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create '{}'", parent.display()))?;
        }
    }
    // Held while writing; without it (the run that called this holds it, or another report
    // runs) the temporaries found may be another process's, and are left.
    let held = lock::try_lock_existing(dir)?;
    if held.is_some() {
        let parents: BTreeSet<&Path> = targets.iter().filter_map(|p| p.parent()).collect();
        for parent in parents {
            crate::atomic::remove_stale_temps(parent).with_context(|| {
                format!(
                    "cannot remove stale temporary files in '{}'",
                    parent.display()
                )
            })?;
        }
    }
    let mut staged = Vec::with_capacity(files.len() + 1);
    for (file, path) in files.iter().zip(&targets) {
        staged.push((file.name == markdown::README, stage(path, &file.bytes)?));
    }
    // Names of earlier reports stay listed: their files are still benchlab's to replace.
    ours.extend(
        files
            .iter()
            .map(|f| (f.name.clone(), Some(fingerprint(&f.bytes)))),
    );
    let mut manifest = format!("{MANIFEST_HEADER}\n");
    for (name, print) in &ours {
        // A file of an older report that was never fingerprinted gets its present one.
        let print = print.unwrap_or_else(|| {
            fingerprint(&file::read_bytes_in(dir, &dir.join(name)).unwrap_or_default())
        });
        manifest.push_str(&format!("{print:016x} {name}\n"));
    }
    staged.push((true, stage(&dir.join(MANIFEST), manifest.as_bytes())?));
    // The README (and the manifest) go in last: they never name files not there yet.
    staged.sort_by_key(|(last, _)| *last);
    for (_, file) in staged {
        let path = file.path().display().to_string();
        file.commit()
            .with_context(|| format!("cannot write '{path}'"))?;
    }
    Ok(())
}

fn stage(path: &Path, bytes: &[u8]) -> anyhow::Result<crate::atomic::Staged> {
    crate::atomic::stage(path, bytes).with_context(|| format!("cannot write '{}'", path.display()))
}

/// `dir/name`, refused unless `name` is a relative path of plain components whose directories
/// inside `dir` are directories (not symlinks): every write stays inside `dir`.
fn confined(dir: &Path, name: &str) -> Result<PathBuf, InputError> {
    let rel = Path::new(name);
    let plain = !name.is_empty() && rel.components().all(|c| matches!(c, Component::Normal(_)));
    if !plain {
        return Err(InputError::new(format!(
            "output file {name:?} is not a name inside '{}' (empty, absolute or with ..); \
             rename what it is named after",
            dir.display()
        )));
    }
    let mut at = dir.to_path_buf();
    for part in rel.parent().into_iter().flat_map(Path::components) {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.is_dir() => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
            _ => {
                return Err(InputError::new(format!(
                    "'{}' is in the way of the report (not a directory: a symlink or a file); \
                     remove it or write the report elsewhere with -o OUT",
                    at.display()
                )))
            }
        }
    }
    Ok(dir.join(rel))
}

/// What benchlab wrote here before: name → the fingerprint of what it wrote, `None` for any
/// contents (a report by an older benchlab, known by its README's marker: every file present
/// is then taken as benchlab's).
type Written = BTreeMap<String, Option<u64>>;

/// The files benchlab wrote into `dir` before, from its manifest or its README.
fn written_before(dir: &Path) -> Result<Written, InputError> {
    let manifest = dir.join(MANIFEST);
    if manifest.exists() {
        let text = file::read_text_in(dir, &manifest)?;
        return Ok(text
            .lines()
            .filter_map(|line| {
                let (print, name) = line.split_once(' ')?;
                let print = u64::from_str_radix(print, 16).ok()?;
                Some((name.to_string(), Some(print)))
            })
            .collect());
    }
    // A FIFO in the README's place is not waited on (and is no report of benchlab's).
    let readme = file::read_text_in(dir, &dir.join(markdown::README)).unwrap_or_default();
    if !readme.contains(markdown::MARKER) {
        return Ok(Written::new());
    }
    let names = std::fs::read_dir(dir)
        .map_err(|e| InputError::new(format!("cannot read directory '{}': {e}", dir.display())))?;
    Ok(names
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .map(|name| (name, None))
        .collect())
}

/// Refuses when a file to write exists, is not benchlab's (or was edited since) and would
/// change.
fn check_overwrites(dir: &Path, files: &[OutputFile], ours: &Written) -> Result<(), InputError> {
    let foreign: Vec<String> = (files.iter())
        .filter_map(|f| {
            let path = dir.join(&f.name);
            let existing = std::fs::symlink_metadata(&path).ok()?;
            // Past the input bound, a file is not read to be compared: it is not benchlab's.
            let bytes = existing
                .is_file()
                .then(|| file::read_bytes_in(dir, &path).ok())
                .flatten();
            let benchlabs = match (ours.get(&f.name), &bytes) {
                (Some(None), Some(_)) => true,
                (Some(Some(print)), Some(bytes)) => fingerprint(bytes) == *print,
                _ => false,
            };
            let unchanged = bytes.is_some_and(|b| b == f.bytes);
            (!benchlabs && !unchanged).then(|| path.display().to_string())
        })
        .collect();
    let Some(first) = foreign.first() else {
        return Ok(());
    };
    let more = match foreign.len() {
        1 => String::new(),
        n => format!(" (and {} more files)", n - 1),
    };
    Err(InputError::new(format!(
        "'{first}'{more} was not written by benchlab, or was edited since, and would be \
         overwritten; write the report elsewhere with -o OUT, or move the file away"
    )))
}

/// FNV-1a, 64 bits: enough to tell an edited file from the one written, with no dependency.
fn fingerprint(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, text: &str) -> OutputFile {
        OutputFile {
            name: name.to_string(),
            bytes: text.as_bytes().to_vec(),
        }
    }

    #[test]
    fn foreign_files_are_kept_and_ours_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("gnuplot.data"), "archive's\n").unwrap();
        std::fs::write(d.join("a.pps"), "1\n").unwrap();
        let e = write_files(d, &[file("a.pps", "1\n"), file("gnuplot.data", "ours\n")])
            .unwrap_err()
            .to_string();
        assert!(e.ends_with("gnuplot.data' was not written by benchlab, or was edited since, and would be overwritten; write the report elsewhere with -o OUT, or move the file away"), "{e}");
        assert_eq!(
            std::fs::read_to_string(d.join("gnuplot.data")).unwrap(),
            "archive's\n"
        );
        // Identical contents are no overwrite; once written, a file is benchlab's.
        std::fs::remove_file(d.join("gnuplot.data")).unwrap();
        write_files(d, &[file("a.pps", "1\n"), file("gnuplot.data", "ours\n")]).unwrap();
        write_files(d, &[file("a.pps", "2\n")]).unwrap();
        let manifest = std::fs::read_to_string(d.join(MANIFEST)).unwrap();
        assert!(manifest.ends_with(&format!("{:016x} gnuplot.data\n", fingerprint(b"ours\n"))));
        assert_eq!(manifest.lines().count(), 3, "{manifest}");
        assert_eq!(std::fs::read_to_string(d.join("a.pps")).unwrap(), "2\n");
        // A file edited since benchlab wrote it is someone else's.
        std::fs::write(d.join("a.pps"), "my edit\n").unwrap();
        assert!(write_files(d, &[file("a.pps", "3\n")]).is_err());
        assert_eq!(
            std::fs::read_to_string(d.join("a.pps")).unwrap(),
            "my edit\n"
        );
    }

    #[test]
    fn names_leading_out_of_the_directory_are_refused_before_writing() {
        let tmp = tempfile::tempdir().unwrap();
        let (d, outside) = (tmp.path().join("out"), tmp.path().join("elsewhere"));
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, tmp.path().join("link")).unwrap();
        std::fs::create_dir(&d).unwrap();
        std::os::unix::fs::symlink(&outside, d.join("flame")).unwrap();
        for name in [
            "x/../../../escaped.pps",
            "/tmp/abs.pps",
            "",
            "flame/a.svg",
            "..",
        ] {
            let e = write_files(&d, &[file("README.md", "r"), file(name, "1\n")]);
            assert!(e.is_err(), "{name}");
        }
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    }

    #[test]
    fn the_run_holding_the_directory_still_writes_its_report() {
        let dir = tempfile::tempdir().unwrap();
        let _run = lock::lock(dir.path()).unwrap();
        std::fs::write(dir.path().join(".benchlab-Ab12cD"), "the run's").unwrap();
        write_files(dir.path(), &[file("README.md", "r")]).unwrap();
        // The run's file being written is not this report's to remove.
        assert!(dir.path().join(".benchlab-Ab12cD").exists());
    }

    #[test]
    fn a_report_of_an_older_benchlab_is_ours() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let readme = format!("t\n{} wrote this -->\n", markdown::MARKER);
        std::fs::write(d.join(markdown::README), &readme).unwrap();
        std::fs::write(d.join("graph.png"), "old").unwrap();
        write_files(d, &[file("graph.png", "new"), file("README.md", "x")]).unwrap();
        std::fs::write(d.join("README.md"), "by hand").unwrap();
        std::fs::remove_file(d.join(MANIFEST)).unwrap();
        assert!(write_files(d, &[file("README.md", "y")]).is_err());
    }
}
