//! Reading input files with bounds: regular files only (a FIFO would block forever, a device
//! such as `/dev/zero` never ends) and at most [`MAX_FILE_BYTES`], each refusal one line naming
//! the file and what to do.
//!
//! [`MAX_FILE_BYTES`]: crate::file::MAX_FILE_BYTES

use std::io::Read;
use std::path::Path;

use crate::error::InputError;

/// Largest input file read, in bytes: a pkt-gen log of a day-long run is a few MB.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// Reads a regular file of at most [`MAX_FILE_BYTES`] as text; bytes that are not UTF-8 (a
/// crashed run's garbage) become U+FFFD instead of making the whole file unreadable.
pub fn read_text(path: &Path) -> Result<String, InputError> {
    let bytes = read_bytes(path)?;
    Ok(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// Reads a regular file of at most [`MAX_FILE_BYTES`].
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, InputError> {
    let fail = |what: String| InputError::new(format!("cannot read '{}': {what}", path.display()));
    let metadata = std::fs::metadata(path).map_err(|e| fail(format!("{e}; check the file")))?;
    if !metadata.is_file() {
        return Err(fail(
            "not a regular file (a FIFO, device or directory); remove it or put a regular file \
             in its place"
                .to_string(),
        ));
    }
    let file = std::fs::File::open(path).map_err(|e| fail(format!("{e}; check the file")))?;
    let mut bytes = Vec::new();
    // The size may change after the check: the read itself is bounded too.
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| fail(format!("{e}; check the file")))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(fail(format!(
            "larger than {} MiB, more than any input benchlab reads; remove it or cut it",
            MAX_FILE_BYTES >> 20
        )));
    }
    Ok(bytes)
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
        let big = dir.path().join("big");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(MAX_FILE_BYTES + 1)
            .unwrap();
        let e = read_text(&big).unwrap_err().to_string();
        assert!(e.contains("larger than 64 MiB"), "{e}");
        assert!(!e.contains('\n'));
    }
}
