//! Atomic file writes: the bytes go to a temporary file in the target's directory, which is then
//! renamed over the target, so a reader (or a resumed campaign) sees the old file or the new
//! one, never half of one. The directory is synced after the rename too: without it a reboot
//! can lose the rename itself, and with it a trial the results directory says is finished.
//!
//! Temporary files are named [`TEMP_PREFIX`](crate::atomic::TEMP_PREFIX) and six random letters or
//! digits, created with `O_EXCL` (a symlink or FIFO of that name is never opened, another name is
//! drawn); a killed process leaves them behind, and
//! [`remove_stale_temps`](crate::atomic::remove_stale_temps) removes exactly those names. Output
//! directories are checked before anything is written
//! ([`check_output_dir`](crate::atomic::check_output_dir)) and made with
//! [`create_dir`](crate::atomic::create_dir): a bad one is the user's input, refused in one line
//! (exit 2).

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use crate::error::{io_reason, InputError};

/// The start of every temporary file's name.
pub const TEMP_PREFIX: &str = ".benchlab-";

/// Random characters after [`TEMP_PREFIX`] (set, not tempfile's default, so that
/// [`remove_stale_temps`] matches the names exactly).
const TEMP_RANDOM: usize = 6;

/// A file written in full (and synced) beside its target, not yet in place: dropped, it is
/// removed and the target is untouched.
#[derive(Debug)]
pub(crate) struct Staged {
    temp: NamedTempFile,
    path: PathBuf,
}

impl Staged {
    /// The target the file is renamed to.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Renames the file over its target, then syncs the directory.
    pub(crate) fn commit(self) -> std::io::Result<()> {
        self.temp.persist(&self.path).map_err(|e| e.error)?;
        std::fs::File::open(parent(&self.path))?.sync_all()
    }
}

/// Writes `bytes` (mode 0644) to a temporary file beside `path`, synced, to be renamed over
/// `path` by [`Staged::commit`].
pub(crate) fn stage(path: &Path, bytes: &[u8]) -> std::io::Result<Staged> {
    let mut temp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .rand_bytes(TEMP_RANDOM)
        .permissions(std::fs::Permissions::from_mode(0o644))
        .tempfile_in(parent(path))?;
    temp.write_all(bytes)?;
    temp.as_file().sync_data()?;
    Ok(Staged {
        temp,
        path: path.to_path_buf(),
    })
}

/// Writes `bytes` to `path` atomically (mode 0644), syncing the data before the rename and the
/// directory after it.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    stage(path, bytes)?.commit()
}

fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Removes the temporary files a killed benchlab left in `dir` (regular files named exactly
/// like [`stage`]'s) and returns how many. The caller holds the directory's lock
/// (`store::lock`): another benchlab's file being written is not stale.
pub(crate) fn remove_stale_temps(dir: &Path) -> std::io::Result<usize> {
    let mut removed = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let is_temp = (name.to_str())
            .and_then(|n| n.strip_prefix(TEMP_PREFIX))
            .is_some_and(|r| {
                r.len() == TEMP_RANDOM && r.bytes().all(|b| b.is_ascii_alphanumeric())
            });
        if is_temp && entry.file_type()?.is_file() {
            std::fs::remove_file(entry.path())?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Refuses, before anything is written, an output directory that cannot be one: an existing
/// file, a path under a file, a symlink loop, an unreadable place.
pub(crate) fn check_output_dir(dir: &Path) -> Result<(), InputError> {
    let refuse = |what: String| {
        InputError::new(format!(
            "'{}': {what}; choose another output directory (-o)",
            dir.display()
        ))
    };
    // The nearest part of the path that exists must be a directory (followed through
    // symlinks: a loop is an error here; a dangling one is refused when made).
    let mut at = dir;
    loop {
        match std::fs::metadata(at) {
            Ok(m) if m.is_dir() => return Ok(()),
            Ok(_) if at == dir => return Err(refuse("exists and is not a directory".into())),
            Ok(_) => return Err(refuse(format!("'{}' is not a directory", at.display()))),
            // Not a directory: some part further up is a file, named below.
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => {
                match at.parent() {
                    Some(p) if !p.as_os_str().is_empty() => at = p,
                    _ => return Ok(()),
                }
            }
            Err(e) => return Err(refuse(io_reason(&e))),
        }
    }
}

/// Makes output directory `dir` (and its parents) after [`check_output_dir`], and checks a file
/// can be created in it (`/proc/…` is a directory nothing can be written into): each failure is
/// the user's choice of directory, refused in one line.
pub(crate) fn create_dir(dir: &Path) -> Result<(), InputError> {
    check_output_dir(dir)?;
    let refuse = |e: std::io::Error| {
        InputError::new(format!(
            "'{}': cannot write there: {}; choose another output directory (-o)",
            dir.display(),
            io_reason(&e)
        ))
    };
    std::fs::create_dir_all(dir).map_err(refuse)?;
    stage(&dir.join("probe"), b"").map(drop).map_err(refuse)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("meta.json");
        write(&path, b"old").unwrap();
        write(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // Staged and dropped: the target keeps its contents, no temporary is left.
        drop(stage(&path, b"newer").unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn only_benchlabs_own_temporaries_are_stale() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let left = stage(&d.join("x"), b"half").unwrap();
        // Kept on disk as a killed process would leave it.
        let (_, kept) = left.temp.keep().unwrap();
        for other in [
            ".benchlab-abc",
            ".benchlab-abcdefg",
            ".benchlab.lock",
            "benchlab-abcdef",
        ] {
            std::fs::write(d.join(other), "").unwrap();
        }
        std::fs::create_dir(d.join(".benchlab-dir123")).unwrap();
        assert_eq!(remove_stale_temps(d).unwrap(), 1);
        assert!(!kept.exists());
        assert_eq!(std::fs::read_dir(d).unwrap().count(), 5);
    }

    #[test]
    fn bad_output_directories_are_refused_before_writing() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "").unwrap();
        let lp = dir.path().join("loop");
        std::os::unix::fs::symlink(&lp, &lp).unwrap();
        for (bad, says) in [
            (file.clone(), "exists and is not a directory"),
            (file.join("sub/dir"), "f' is not a directory"),
            (lp.join("x"), "symbolic links"),
            (PathBuf::from("/proc/benchlab-none"), "cannot write there"),
            (PathBuf::from("/proc/self"), "cannot write there"),
        ] {
            let e = create_dir(&bad).unwrap_err().to_string();
            assert!(e.contains(says) && e.ends_with("(-o)"), "{e}");
        }
        create_dir(&dir.path().join("new/out")).unwrap();
        assert_eq!(
            std::fs::read_dir(dir.path().join("new/out"))
                .unwrap()
                .count(),
            0
        );
    }
}
