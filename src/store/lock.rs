//! One campaign at a time in a results directory: `run` and `--resume` hold an exclusive
//! `flock` on [`LOCK_FILE`] inside it for as long as they run (the kernel releases it when the
//! process ends, even by kill -9), so a second `--resume` refuses instead of running the same
//! trials and removing the first one's trial directories. Default-named directories are made
//! with `create_dir`, which fails when the name is taken: two runs started in the same second
//! get one directory each.
//!
//! [`LOCK_FILE`]: crate::store::lock::LOCK_FILE

use std::fs::{self, File};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

use crate::error::InputError;

/// The lock file inside a results directory.
pub const LOCK_FILE: &str = ".benchlab.lock";

/// Suffixes tried after a default name is taken (`-2` … `-999`): more runs than that started
/// in one second is not a use.
const MAX_SUFFIX: u32 = 999;

/// An exclusive lock on a results directory, released when dropped.
#[derive(Debug)]
pub struct DirLock {
    /// Held, never read: dropping it unlocks.
    _flock: Flock<File>,
}

/// Takes the exclusive lock of results directory `dir`, without waiting: another benchlab
/// holding it is refused in one line. Holding it, this process is the only benchlab writing
/// there: the temporary files found in the directory's tree are what a killed one left, and
/// are removed.
pub fn lock(dir: &Path) -> Result<DirLock, InputError> {
    let lock = try_lock(dir)?.ok_or_else(|| {
        InputError::new(format!(
            "{}: another benchlab is running in this results directory; wait for it to end \
             (or stop it), then try again",
            dir.display()
        ))
    })?;
    remove_stale_temps_under(dir, MAX_DEPTH).map_err(|e| {
        InputError::new(format!(
            "{}: cannot remove the temporary files a killed benchlab left: {e}; check the \
             directory's permissions",
            dir.display()
        ))
    })?;
    Ok(lock)
}

/// Takes an exclusive lock on directory `dir` for a writer that makes no lock file (a report:
/// an output directory holds the report and nothing else): the lock file's where there is one
/// (a campaign's directory, to exclude a run), else the directory's own `flock`. `None` when
/// another benchlab, or this one, holds it.
pub(crate) fn try_lock_existing(dir: &Path) -> Result<Option<DirLock>, InputError> {
    if fs::symlink_metadata(dir.join(LOCK_FILE)).is_ok() {
        return try_lock(dir);
    }
    let file = File::open(dir).map_err(|e| {
        InputError::new(format!(
            "{}: cannot open: {e}; check the directory's permissions",
            dir.display()
        ))
    })?;
    Ok(Flock::lock(file, FlockArg::LockExclusiveNonblock)
        .ok()
        .map(|flock| DirLock { _flock: flock }))
}

/// Deepest directory of a results tree searched for stale temporary files: benchlab writes
/// a few levels down at most (`runs/<trial>/trials/<NNN>/`); deeper ones are not its own.
const MAX_DEPTH: usize = 6;

/// [`crate::atomic::remove_stale_temps`] in `dir` and its subdirectories (symlinks are not
/// followed), `depth` levels down.
fn remove_stale_temps_under(dir: &Path, depth: usize) -> std::io::Result<()> {
    crate::atomic::remove_stale_temps(dir)?;
    if depth == 0 {
        return Ok(());
    }
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            remove_stale_temps_under(&entry.path(), depth - 1)?;
        }
    }
    Ok(())
}

/// Takes the exclusive lock of directory `dir` if no one holds it (`None` when another
/// benchlab, or this one, does). The lock file is opened without following a symlink and
/// without waiting on a FIFO, and must be a regular file: anything else is refused in one line
/// saying to remove it.
pub(crate) fn try_lock(dir: &Path) -> Result<Option<DirLock>, InputError> {
    let path = dir.join(LOCK_FILE);
    let not_a_file = || {
        InputError::new(format!(
            "{}: not a regular file (a symlink, FIFO, directory or device); remove it and try \
             again",
            path.display()
        ))
    };
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o644)
        // O_NOFOLLOW: a symlink would create or lock its target; O_NONBLOCK: opening a FIFO
        // for writing would wait for a reader forever.
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&path)
        .map_err(|e| match Errno::from_raw(e.raw_os_error().unwrap_or(0)) {
            Errno::ELOOP | Errno::ENXIO | Errno::EISDIR | Errno::ENODEV => not_a_file(),
            _ => InputError::new(format!(
                "{}: cannot create the lock file: {e}; check the directory's permissions",
                path.display()
            )),
        })?;
    // A FIFO with a reader, or a device, opens: what it is, the open file says.
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err(not_a_file());
    }
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(flock) => Ok(Some(DirLock { _flock: flock })),
        Err((_, Errno::EWOULDBLOCK)) => Ok(None),
        Err((_, e)) => Err(InputError::new(format!(
            "{}: cannot lock: {e}; use a local file system for results",
            path.display()
        ))),
    }
}

/// Creates a new directory named `base`, or `base-2`, `base-3`, … when that name is taken,
/// and returns its path; its parents are created as needed.
pub(crate) fn create_unique(base: &Path) -> Result<PathBuf, InputError> {
    let fail = |dir: &Path, e: std::io::Error| {
        InputError::new(format!(
            "{}: cannot create: {e}; choose another directory with -o",
            dir.display()
        ))
    };
    crate::atomic::check_output_dir(base)?;
    if let Some(parent) = base.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(|e| fail(parent, e))?;
    }
    for n in 1..=MAX_SUFFIX {
        let dir = match n {
            1 => base.to_path_buf(),
            _ => {
                let mut name = base.as_os_str().to_os_string();
                name.push(format!("-{n}"));
                PathBuf::from(name)
            }
        };
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(fail(&dir, e)),
        }
    }
    Err(InputError::new(format!(
        "{}: this name and {MAX_SUFFIX} suffixed ones are taken; choose a directory with -o",
        base.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_name_gets_a_suffix() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().join("results/default-20260101-000000");
        let first = create_unique(&base).unwrap();
        let second = create_unique(&base).unwrap();
        assert_eq!(first, base);
        assert_eq!(second, tmp.path().join("results/default-20260101-000000-2"));
    }

    #[test]
    fn a_second_lock_is_refused_until_the_first_is_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let held = lock(tmp.path()).unwrap();
        let e = lock(tmp.path()).unwrap_err().to_string();
        assert!(e.contains("another benchlab is running"), "{e}");
        drop(held);
        lock(tmp.path()).unwrap();
    }

    #[test]
    fn a_lock_file_that_is_not_a_file_is_refused_at_once() {
        let tmp = tempfile::tempdir().unwrap();
        let lock_file = tmp.path().join(LOCK_FILE);
        let target = tmp.path().join("target");
        std::os::unix::fs::symlink(&target, &lock_file).unwrap();
        let refused = |dir: &Path| lock(dir).unwrap_err().to_string();
        assert!(refused(tmp.path()).ends_with("remove it and try again"));
        assert!(!target.exists(), "the symlink's target was created");
        fs::remove_file(&lock_file).unwrap();
        nix::unistd::mkfifo(&lock_file, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(refused(tmp.path()).contains("not a regular file"));
        fs::remove_file(&lock_file).unwrap();
        fs::create_dir(&lock_file).unwrap();
        assert!(refused(tmp.path()).contains("not a regular file"));
    }
}
