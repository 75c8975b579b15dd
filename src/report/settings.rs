//! `report.toml`: what the logs cannot tell (title, setup lines, labels) and the default
//! selection, read from the results directory.
//!
//! ```toml
//! title = "Comparing 12-head and 11-stable on forwarding/ipfw/pf performance"
//! lines = ["PC Engines APU2C4 (quad core AMD GX-412T Processor 1 GHz)",
//!          "3 Intel i210AT Gigabit Ethernet ports"]
//! versions = ["318516stable", "318516current"]   # which, in which order; the first is the reference
//! configs = ["forwarding", "ipfw-statefull", "pf-statefull"]
//! ministat = "current"                           # "legacy" (old ministat), "accurate" (exact Stddev)
//!
//! [labels]                                       # display names of versions, config sets, profiles
//! 318516stable = "FreeBSD 11-stable r318516"
//! fastforwarding = "forwarding"
//! ```
//! Every key is optional; an unknown key is an error, so that a typo does not go unnoticed.

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::path::Path;

use serde::Deserialize;

use crate::error::InputError;
use crate::stats::Flavor;

/// File name of the settings, looked up in the results directory.
pub(crate) const FILE_NAME: &str = "report.toml";

/// The contents of `report.toml`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Settings {
    /// Title of the README and of the graphs.
    pub(crate) title: Option<String>,
    /// Setup lines printed first in the README's bullet list (hardware, NICs, tuning…).
    #[serde(default)]
    pub(crate) lines: Vec<String>,
    /// Versions to report, in order; the first is the reference.
    pub(crate) versions: Option<Vec<String>>,
    /// Config sets to report, in order; the first is the reference.
    pub(crate) configs: Option<Vec<String>>,
    /// ministat generation the archive was made with.
    pub(crate) ministat: Option<MinistatGeneration>,
    /// Display names of versions, config sets and traffic profiles, by their name in the logs.
    #[serde(default)]
    pub(crate) labels: BTreeMap<String, String>,
}

/// ministat generations, as `report.toml` and the command line name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum MinistatGeneration {
    /// FreeBSD's ministat since 2017: averaged median, delta-method relative error.
    Current,
    /// The old ministat (Debian's 20150715, FreeBSD before 2017).
    Legacy,
    /// Current with the exactly rounded standard deviation (some archived tables).
    Accurate,
}

impl std::str::FromStr for MinistatGeneration {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "current" => Ok(Self::Current),
            "legacy" => Ok(Self::Legacy),
            "accurate" => Ok(Self::Accurate),
            _ => Err(format!(
                "'{text}' is not a ministat generation: use current, legacy or accurate"
            )),
        }
    }
}

impl From<MinistatGeneration> for Flavor {
    fn from(generation: MinistatGeneration) -> Flavor {
        match generation {
            MinistatGeneration::Current => Flavor::Current,
            MinistatGeneration::Legacy => Flavor::Legacy,
            MinistatGeneration::Accurate => Flavor::Accurate,
        }
    }
}

impl Settings {
    /// Reads `dir/report.toml`; no file means default settings.
    pub(crate) fn load(dir: &Path) -> Result<Settings, InputError> {
        let path = dir.join(FILE_NAME);
        if std::fs::symlink_metadata(&path).is_err_and(|e| e.kind() == ErrorKind::NotFound) {
            return Ok(Settings::default());
        }
        // A FIFO or a huge file in its place is refused, not read forever.
        let text = crate::ingest::file::read_text_in(dir, &path)?;
        Settings::parse(&text).map_err(|e| InputError::new(format!("{}: {e}", path.display())))
    }

    /// Parses the text of a `report.toml`; the error names the offending key.
    pub(crate) fn parse(text: &str) -> Result<Settings, String> {
        toml::from_str(text).map_err(|e| {
            let message = crate::error::toml_message(&e);
            match e
                .span()
                .map(|span| text[..span.start].matches('\n').count() + 1)
            {
                Some(line) => format!("line {line}: {message}"),
                None => message,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key() {
        let text = r#"
            title = "T"
            lines = ["a", "b"]
            versions = ["318516stable", "318516current"]
            configs = ["forwarding"]
            ministat = "legacy"
            [labels]
            fastforwarding = "forwarding"
        "#;
        let s = Settings::parse(text).unwrap();
        assert_eq!(s.title.as_deref(), Some("T"));
        assert_eq!(s.lines, vec!["a", "b"]);
        assert_eq!(s.versions.unwrap()[0], "318516stable");
        assert_eq!(s.configs.unwrap(), vec!["forwarding"]);
        assert_eq!(s.ministat, Some(MinistatGeneration::Legacy));
        assert_eq!(s.labels["fastforwarding"], "forwarding");
    }

    #[test]
    fn unknown_keys_are_named() {
        let err = Settings::parse("title = \"x\"\nversion = [\"a\"]\n").unwrap_err();
        assert!(err.contains("unknown field `version`"), "{err}");
        assert!(err.starts_with("line 2:"), "{err}");
        assert!(!err.contains('\n'), "{err}");
        let err = Settings::parse("ministat = \"old\"\n").unwrap_err();
        assert!(err.contains("old"), "{err}");
    }

    #[test]
    fn missing_file_is_default() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Settings::load(dir.path()).unwrap(), Settings::default());
    }
}
