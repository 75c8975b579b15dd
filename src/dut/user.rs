//! User config sets: a directory holding an `apply` script, optionally `revert` (undo what
//! apply did) and `counters` (print the number of packets the passing rules saw), plus any
//! files the scripts use.
//!
//! Scripts run on the DUT in their directory, through `sh` unless they are executable (then
//! their `#!` line chooses), with the lab's facts in the environment (see
//! [`LabFacts::env`](crate::lab::LabFacts::env)). The virtual lab's namespaces share this
//! machine's files, so the directory is used in place; SSH DUTs will get a copy first.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::ConfigSet;
use crate::error::InputError;
use crate::transport::{Command, Transport};

/// A config set from a user directory.
#[derive(Debug, Clone)]
pub(crate) struct UserSet {
    name: String,
    dir: PathBuf,
    env: Vec<(String, String)>,
}

impl UserSet {
    /// The set in directory `dir` (named after it); `env` is given to its scripts.
    pub(crate) fn load(dir: &Path, env: &[(String, String)]) -> Result<Self, InputError> {
        let dir = dir
            .canonicalize()
            .map_err(|e| InputError::new(format!("config set {}: {e}", dir.display())))?;
        if !dir.join("apply").is_file() {
            return Err(InputError::new(format!(
                "config set {}: no apply script; put the commands that configure the DUT in {}",
                dir.display(),
                dir.join("apply").display()
            )));
        }
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "user".to_string());
        Ok(Self {
            name,
            dir,
            env: env.to_vec(),
        })
    }

    fn has(&self, script: &str) -> bool {
        self.dir.join(script).is_file()
    }

    /// Runs one of the set's scripts on the DUT and returns its standard output.
    fn script(&self, dut: &dyn Transport, script: &str) -> Result<String> {
        let mut argv = vec!["env".to_string()];
        argv.extend(self.env.iter().map(|(k, v)| format!("{k}={v}")));
        argv.extend([
            "sh".to_string(),
            "-c".to_string(),
            format!(
                "cd \"$1\" && if [ -x ./{script} ]; then exec ./{script}; else exec sh ./{script}; fi"
            ),
            format!("benchlab-{script}"),
            self.dir.display().to_string(),
        ]);
        let out = dut
            .check(&Command::new(argv))
            .with_context(|| format!("config set {}: {script} failed", self.name))?;
        Ok(out.stdout_text())
    }
}

impl ConfigSet for UserSet {
    fn name(&self) -> &str {
        &self.name
    }

    fn ruleset(&self) -> String {
        ["apply", "revert", "counters"]
            .iter()
            .filter(|s| self.has(s))
            .map(|s| {
                let text = crate::file::read_text(&self.dir.join(s)).unwrap_or_default();
                format!("# {}/{s}\n{text}", self.dir.display())
            })
            .collect()
    }

    fn apply(&self, dut: &dyn Transport) -> Result<()> {
        self.script(dut, "apply").map(drop)
    }

    fn verify(&self, dut: &dyn Transport) -> Result<()> {
        self.counters(dut).map(drop)
    }

    fn counters(&self, dut: &dyn Transport) -> Result<Option<u64>> {
        if !self.has("counters") {
            return Ok(None);
        }
        let text = self.script(dut, "counters")?;
        match text.trim().parse() {
            Ok(n) => Ok(Some(n)),
            Err(_) => bail!(
                "config set {}: counters printed {:?}; it must print one number (packets the passing rules saw)",
                self.name,
                text.trim()
            ),
        }
    }

    fn revert(&self, dut: &dyn Transport) -> Result<()> {
        if self.has("revert") {
            self.script(dut, "revert")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::{LocalTransport, MockTransport, Output};

    fn set_dir(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        dir
    }

    #[test]
    fn scripts_run_in_their_directory_with_the_lab_environment() {
        let dir = set_dir(&[
            ("apply", "echo \"$BENCHLAB_X\" > state\n"),
            ("counters", "cat state\n"),
            ("revert", "rm state\n"),
        ]);
        let env = vec![("BENCHLAB_X".to_string(), "42".to_string())];
        let set = UserSet::load(dir.path(), &env).unwrap();
        set.apply(&LocalTransport).unwrap();
        assert_eq!(set.counters(&LocalTransport).unwrap(), Some(42));
        set.verify(&LocalTransport).unwrap();
        set.revert(&LocalTransport).unwrap();
        assert!(!dir.path().join("state").exists());
        assert!(set.ruleset().contains("echo \"$BENCHLAB_X\" > state"));
    }

    #[test]
    fn a_directory_without_apply_is_refused_with_what_to_do() {
        let dir = set_dir(&[("revert", "true\n")]);
        let err = UserSet::load(dir.path(), &[]).unwrap_err().to_string();
        assert!(err.contains(": no apply script; put the commands"), "{err}");
    }

    #[test]
    fn a_failing_script_names_the_set_and_the_script() {
        let dir = set_dir(&[("apply", "exit 1\n"), ("counters", "echo many\n")]);
        let set = UserSet::load(dir.path(), &[]).unwrap();
        let mock = MockTransport::new("dut");
        mock.reply(
            &["env"],
            Output {
                status: Some(1),
                stdout: vec![],
                stderr: "nope".into(),
            },
        );
        let err = format!("{:#}", set.apply(&mock).unwrap_err());
        assert!(err.contains(": apply failed: dut: "), "{err}");
        let err = set.counters(&LocalTransport).unwrap_err().to_string();
        assert!(err.ends_with("counters printed \"many\"; it must print one number (packets the passing rules saw)"), "{err}");
    }
}
