//! One campaign at a time in a results directory: `run` and `--resume` hold an exclusive
//! `flock` on [`LOCK_FILE`] inside it for as long as they run (the kernel releases it when the
//! process ends, even by kill -9), so a second `--resume` refuses instead of running the same
//! trials and removing the first one's trial directories. Default-named directories are made
//! with `create_dir`, which fails when the name is taken: two runs started in the same second
//! get one directory each.
//!
//! [`LOCK_FILE`]: crate::store::lock::LOCK_FILE

use std::fs::{self, File};
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
/// holding it is refused in one line.
pub fn lock(dir: &Path) -> Result<DirLock, InputError> {
    let path = dir.join(LOCK_FILE);
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| {
            InputError::new(format!(
                "{}: cannot create the lock file: {e}; check the directory's permissions",
                path.display()
            ))
        })?;
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(flock) => Ok(DirLock { _flock: flock }),
        Err((_, Errno::EWOULDBLOCK)) => Err(InputError::new(format!(
            "{}: another benchlab is running in this results directory; wait for it to end \
             (or stop it), then try again",
            dir.display()
        ))),
        Err((_, e)) => Err(InputError::new(format!(
            "{}: cannot lock: {e}; use a local file system for results",
            path.display()
        ))),
    }
}

/// Creates a new directory named `base`, or `base-2`, `base-3`, … when that name is taken,
/// and returns its path; its parents are created as needed.
pub fn create_unique(base: &Path) -> Result<PathBuf, InputError> {
    let fail = |dir: &Path, e: std::io::Error| {
        InputError::new(format!(
            "{}: cannot create: {e}; choose another directory with -o",
            dir.display()
        ))
    };
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
}
