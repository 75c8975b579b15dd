//! The files of each trial of a throughput search, kept as a normal trial keeps its own (the
//! DUT's counters and the `[hooks]` outputs in `dut-before.txt`, `dut-during.txt`,
//! `dut-after.txt`; the senders' `generator*` and the receiver's `receiver*` records), one
//! directory per trial under the iteration's: `trials/<NNN>/` for the search's trials (NNN the
//! trial's 1-based index in `search.json`'s `trials`, three digits so that `ls` sorts them),
//! `calibration/<N>/` for the calibration trials (N the 1-based index in its `calibration`)
//! and `closing/` for the trial at max load after the search. Each file is written atomically
//! as its trial ends, as the search's next trial (the runner takes a calibration or closing
//! trial off the search's list afterwards: its directory is moved, by one rename); a trial
//! that failed to run has none. Like the iteration's other files, they count only once its
//! `meta.json` is written, and [`Store::begin_trial`] removes them with the rest of an
//! interrupted iteration.

use std::path::{Component, Path, PathBuf};

use super::{Store, TrialKey};

/// The directory, in a search iteration's, of the search's trials.
pub(crate) const SEARCH_TRIALS_DIR: &str = "trials";
/// The directory, in a search iteration's, of the calibration trials.
pub(crate) const CALIBRATION_DIR: &str = "calibration";
/// The directory, in a search iteration's, of the closing trial (saturating, after the search).
pub(crate) const CLOSING_DIR: &str = "closing";
/// The directory, in a search iteration's, of the opening trial (saturating, before the search).
pub(crate) const OPENING_DIR: &str = "opening";
/// The directory, in a search iteration's, of the latency trials after the search
/// (`latency/<pct>/`).
pub(crate) const LATENCY_DIR: &str = "latency";

/// Which trial of a search: its list in `search.json` and its 1-based index in that list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SearchTrialId {
    /// The search's trial number n (`trials[n - 1]`).
    Trial(usize),
    /// The calibration trial number n (`calibration[n - 1]`).
    Calibration(usize),
    /// The saturating trial before the search (`opening`).
    Opening,
    /// The saturating trial after the search (`closing`).
    Closing,
    /// The latency trial at this percentage of the NDR (`latency`).
    Latency(u32),
}

impl SearchTrialId {
    /// Its directory relative to the iteration's: `trials/007`, `calibration/2`; `None` for
    /// index 0, which names no trial.
    fn relative_dir(self) -> Option<PathBuf> {
        match self {
            Self::Trial(0) | Self::Calibration(0) => None,
            Self::Trial(n) => Some(Path::new(SEARCH_TRIALS_DIR).join(format!("{n:03}"))),
            Self::Calibration(n) => Some(Path::new(CALIBRATION_DIR).join(n.to_string())),
            Self::Opening => Some(PathBuf::from(OPENING_DIR)),
            Self::Closing => Some(PathBuf::from(CLOSING_DIR)),
            Self::Latency(pct) => Some(Path::new(LATENCY_DIR).join(pct.to_string())),
        }
    }
}

impl std::fmt::Display for SearchTrialId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Trial(n) => write!(f, "search trial {n}"),
            Self::Calibration(n) => write!(f, "calibration trial {n}"),
            Self::Opening => write!(f, "the opening trial"),
            Self::Closing => write!(f, "the closing trial"),
            Self::Latency(pct) => write!(f, "the latency trial at {pct} % of the NDR"),
        }
    }
}

impl Store {
    /// The directory of one search trial's files in iteration `key`.
    pub(crate) fn search_trial_dir(
        &self,
        key: &TrialKey,
        id: SearchTrialId,
    ) -> std::io::Result<PathBuf> {
        let rel = id.relative_dir().ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{key}: {id} names no trial: search trials are numbered from 1"),
            )
        })?;
        Ok(self.trial_dir(key).join(rel))
    }

    /// Writes the files of search trial `id` of iteration `key` (name and content, as the trial
    /// procedure returns them), each atomically, into its own directory; refuses a name that is
    /// not a plain file name, which would land elsewhere.
    pub(crate) fn write_search_trial_files(
        &self,
        key: &TrialKey,
        id: SearchTrialId,
        files: &[(String, String)],
    ) -> std::io::Result<()> {
        let dir = self.search_trial_dir(key, id)?;
        if let Some((name, _)) = files.iter().find(|(name, _)| !plain_name(name)) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{}: `{name}` is not a file name", dir.display()),
            ));
        }
        std::fs::create_dir_all(&dir)?;
        for (name, text) in files {
            crate::atomic::write(&dir.join(name), text.as_bytes())?;
        }
        Ok(())
    }

    /// Moves the files of search trial `from` of iteration `key` to search trial `to`'s
    /// directory, by one rename (atomic): a trial taken off the search's list into another
    /// (calibration, closing). A trial without files (it failed to run) has nothing to move.
    pub(crate) fn move_search_trial_files(
        &self,
        key: &TrialKey,
        from: SearchTrialId,
        to: SearchTrialId,
    ) -> std::io::Result<()> {
        let (from, to) = (
            self.search_trial_dir(key, from)?,
            self.search_trial_dir(key, to)?,
        );
        if !from.exists() {
            return Ok(());
        }
        let parent = to.parent().unwrap_or(&to);
        std::fs::create_dir_all(parent)?;
        std::fs::rename(&from, &to)?;
        // Like every atomic write here: without the sync, a reboot can lose the rename.
        std::fs::File::open(parent)?.sync_all()
    }
}

/// Whether `name` is one ordinary path component (no `/`, `..`, or root).
fn plain_name(name: &str) -> bool {
    let mut parts = Path::new(name).components();
    matches!(
        (parts.next(), parts.next()),
        (Some(Component::Normal(_)), None)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Campaign;

    fn key() -> TrialKey {
        TrialKey::parse("default.forwarding.inet4.1").unwrap()
    }

    fn files() -> Vec<(String, String)> {
        vec![
            ("dut-before.txt".into(), "before\n".into()),
            ("receiver.json".into(), "{}\n".into()),
        ]
    }

    /// A results directory in `tmp` with [`key`]'s iteration begun.
    fn begun(tmp: &tempfile::TempDir) -> Store {
        let store = Store::create(tmp.path(), &Campaign::default()).unwrap();
        store.begin_trial(&key()).unwrap();
        store
    }

    #[test]
    fn each_trial_lands_in_its_numbered_directory_with_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let (store, key) = (begun(&tmp), key());
        for id in [
            SearchTrialId::Trial(1),
            SearchTrialId::Trial(12),
            SearchTrialId::Calibration(2),
        ] {
            store.write_search_trial_files(&key, id, &files()).unwrap();
        }
        let iteration = store.trial_dir(&key);
        for rel in ["trials/001", "trials/012", "calibration/2"] {
            let dir = iteration.join(rel);
            assert_eq!(
                std::fs::read_to_string(dir.join("dut-before.txt")).unwrap(),
                "before\n"
            );
            // Written through a temporary file renamed over the target: none is left behind.
            let mut names: Vec<String> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            assert_eq!(names, ["dut-before.txt", "receiver.json"], "{rel}");
        }
        assert_eq!(
            store
                .search_trial_dir(&key, SearchTrialId::Trial(12))
                .unwrap(),
            iteration.join("trials/012")
        );
        // The iteration is not finished by its trials' files.
        assert!(store.finished().unwrap().is_empty());
    }

    #[test]
    fn a_trial_taken_into_the_calibration_moves_its_files_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let (store, key) = (begun(&tmp), key());
        let (from, to) = (SearchTrialId::Trial(1), SearchTrialId::Calibration(1));
        store
            .write_search_trial_files(&key, from, &files())
            .unwrap();
        store.move_search_trial_files(&key, from, to).unwrap();
        let iteration = store.trial_dir(&key);
        assert!(iteration.join("calibration/1/receiver.json").is_file());
        assert!(!iteration.join("trials/001").exists());
        // A failed trial left no files: nothing to move, and nothing made.
        let none = SearchTrialId::Calibration(2);
        store.move_search_trial_files(&key, from, none).unwrap();
        assert!(!iteration.join("calibration/2").exists());
    }

    #[test]
    fn index_zero_and_names_outside_the_directory_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let (store, key) = (begun(&tmp), key());
        let err =
            (store.write_search_trial_files(&key, SearchTrialId::Trial(0), &files())).unwrap_err();
        assert!(err.to_string().contains("numbered from 1"), "{err}");
        for name in ["../meta.json", "/tmp/x", "a/b", "..", ""] {
            let bad = [(name.to_string(), String::new())];
            let err =
                (store.write_search_trial_files(&key, SearchTrialId::Trial(1), &bad)).unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{name}");
        }
        assert!(!store.trial_dir(&key).join("trials").exists());
    }

    #[test]
    fn a_search_resumed_after_an_interruption_starts_with_no_trial_files() {
        let tmp = tempfile::tempdir().unwrap();
        let (store, key) = (begun(&tmp), key());
        let id = SearchTrialId::Trial(3);
        store.write_search_trial_files(&key, id, &files()).unwrap();
        // Ctrl-C: no `meta.json`; the campaign is resumed and the iteration begins again.
        drop(store);
        let store = Store::resume(
            tmp.path(),
            &Campaign::default(),
            &crate::config::defaults::CONFIG_SETS,
        )
        .unwrap();
        assert!(store.finished().unwrap().is_empty());
        store.begin_trial(&key).unwrap();
        assert_eq!(std::fs::read_dir(store.trial_dir(&key)).unwrap().count(), 0);
    }
}
