//! Atomic file writes: the bytes go to a temporary file in the target's directory, which is then
//! renamed over the target, so a reader (or a resumed campaign) sees the old file or the new
//! one, never half of one. The directory is synced after the rename too: without it a reboot
//! can lose the rename itself, and with it a trial the results directory says is finished.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Writes `bytes` to `path` atomically (mode 0644), syncing the data before the rename and the
/// directory after it.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut temp = tempfile::Builder::new()
        .prefix(".benchlab-")
        .permissions(std::fs::Permissions::from_mode(0o644))
        .tempfile_in(dir)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_data()?;
    temp.persist(path).map_err(|e| e.error)?;
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    #[test]
    fn replaces_the_file_and_leaves_no_temporary_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("meta.json");
        super::write(&path, b"old").unwrap();
        super::write(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
