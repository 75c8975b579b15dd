//! Reading input files with bounds: regular files only (a FIFO would block forever, a device
//! such as `/dev/zero` never ends) and at most [`MAX_FILE_BYTES`], each refusal one line naming
//! the file and what to do. A file found inside a directory being read (a results directory,
//! an archive of logs) is read with [`read_text_in`], which also refuses a symlink leading out
//! of that directory: an archive from elsewhere must not make a report quote `/etc/shadow`.
//!
//! [`MAX_FILE_BYTES`]: crate::file::MAX_FILE_BYTES
//! [`read_text_in`]: crate::file::read_text_in

use std::fs::{File, Metadata};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::error::InputError;

/// Largest input file read, in bytes: a pkt-gen log of a day-long run is a few MB.
pub(crate) const MAX_FILE_BYTES: u64 = 64 << 20;

/// Reads a regular file of at most [`MAX_FILE_BYTES`] as text; bytes that are not UTF-8 (a
/// crashed run's garbage) become U+FFFD instead of making the whole file unreadable.
pub(crate) fn read_text(path: &Path) -> Result<String, InputError> {
    read_bounded(path, None).map(into_text)
}

/// Reads a regular file of at most [`MAX_FILE_BYTES`].
pub(crate) fn read_bytes(path: &Path) -> Result<Vec<u8>, InputError> {
    read_bounded(path, None)
}

/// [`read_text`] of a file found inside directory `root`, refused when it (through symlinks)
/// lies outside `root`.
pub(crate) fn read_text_in(root: &Path, path: &Path) -> Result<String, InputError> {
    read_bounded(path, Some(root)).map(into_text)
}

/// [`read_bytes`] of a file found inside directory `root`, refused when it (through symlinks)
/// lies outside `root`.
pub(crate) fn read_bytes_in(root: &Path, path: &Path) -> Result<Vec<u8>, InputError> {
    read_bounded(path, Some(root))
}

fn into_text(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// The one reader: resolves `path`, checks it stays under `root` (when given) and is a regular
/// file, and reads at most [`MAX_FILE_BYTES`] + 1 bytes of it.
fn read_bounded(path: &Path, root: Option<&Path>) -> Result<Vec<u8>, InputError> {
    let fail = |what: String| InputError::new(format!("cannot read '{}': {what}", path.display()));
    let io = |e: std::io::Error| fail(format!("{e}; check the file"));
    // Resolved once, so that the containment check and the open see the same file.
    let real = path.canonicalize().map_err(io)?;
    if let Some(root) = root {
        let real_root = root.canonicalize().map_err(io)?;
        if !real.starts_with(&real_root) {
            return Err(fail(format!(
                "a symlink to '{}', outside '{}'; put the file itself in its place",
                real.display(),
                root.display()
            )));
        }
    }
    // Checked before opening, so that a device is never opened at all, and again on the open
    // file (fstat), in case it was swapped in between.
    check_regular(&std::fs::metadata(&real).map_err(io)?).map_err(fail)?;
    // O_NONBLOCK: a FIFO swapped in after the check opens at once instead of waiting for a
    // writer; O_NOFOLLOW: `real` has no symlink left, one appearing since is refused.
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(&real)
        .map_err(io)?;
    check_regular(&file.metadata().map_err(io)?).map_err(fail)?;
    let mut bytes = Vec::new();
    // The size may change after the check: the read itself is bounded too.
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(fail(format!(
            "larger than {} MiB, more than any input benchlab reads; remove it or cut it",
            MAX_FILE_BYTES >> 20
        )));
    }
    Ok(bytes)
}

/// Refuses anything but a regular file (the message says what to do).
fn check_regular(metadata: &Metadata) -> Result<(), String> {
    if metadata.is_file() {
        return Ok(());
    }
    Err(
        "not a regular file (a FIFO, device or directory); remove it or put a regular file in \
         its place"
            .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_of_bounded_size() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        std::fs::write(&log, b"ok \xff\n").unwrap();
        assert_eq!(read_text(&log).unwrap(), "ok \u{fffd}\n");
        let e = read_text(dir.path()).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let e = read_text(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let e = read_text(&fifo).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let big = dir.path().join("big");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(MAX_FILE_BYTES + 1)
            .unwrap();
        let e = read_text(&big).unwrap_err().to_string();
        assert!(e.contains("larger than 64 MiB"), "{e}");
        assert!(!e.contains('\n'));
    }

    #[test]
    fn a_symlink_may_not_lead_out_of_the_directory_read() {
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("secret");
        std::fs::write(&secret, "s").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (inside, escape) = (dir.path().join("in"), dir.path().join("out"));
        std::fs::write(dir.path().join("real"), "r").unwrap();
        std::os::unix::fs::symlink("real", &inside).unwrap();
        std::os::unix::fs::symlink(&secret, &escape).unwrap();
        assert_eq!(read_text_in(dir.path(), &inside).unwrap(), "r");
        let e = read_text_in(dir.path(), &escape).unwrap_err().to_string();
        assert!(e.contains("outside"), "{e}");
        // A file the user named may be a symlink anywhere.
        assert_eq!(read_text(&escape).unwrap(), "s");
        let lp = dir.path().join("loop");
        std::os::unix::fs::symlink(&lp, &lp).unwrap();
        let e = read_text(&lp).unwrap_err().to_string();
        assert!(e.starts_with("cannot read '") && !e.contains('\n'), "{e}");
    }
}
