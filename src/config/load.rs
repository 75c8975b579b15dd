//! Reading a campaign file: TOML with line and column in errors, defaults filled in, config
//! set directories made absolute from the file's own directory, the design settled, then
//! validation.

use std::path::Path;

use super::{default_version, Alternating, Campaign, Design};
use crate::error::InputError;
use crate::lab::Topology;

impl Campaign {
    /// Parses and validates a campaign file's text; `origin` names the file in messages and
    /// `known_sets` lists the built-in config sets (anything else must be a directory).
    pub fn from_toml(text: &str, origin: &str, known_sets: &[&str]) -> Result<Self, InputError> {
        let mut campaign = Self::parse(text, origin)?;
        campaign.validate_alternating(origin)?;
        campaign.settle_design();
        campaign.validate(origin, known_sets)?;
        Ok(campaign)
    }

    /// Parses a campaign file's text and fills in its defaults, without validating it or
    /// settling `design = "auto"`: the caller does both once it has resolved what depends on
    /// where the file is (and, for a results directory, what its layout was).
    pub fn parse(text: &str, origin: &str) -> Result<Self, InputError> {
        let mut campaign: Campaign = toml::from_str(text).map_err(|e| {
            let place = e.span().map_or(String::new(), |span| {
                let (line, col) = line_col(text, span.start);
                format!("line {line}, column {col}: ")
            });
            InputError::new(format!(
                "{origin}: {place}{}",
                crate::error::toml_message(&e)
            ))
        })?;
        if campaign.versions.is_empty() {
            campaign.versions.push(default_version());
        }
        if campaign.design == Design::Alternating && campaign.alternating.is_none() {
            campaign.alternating = Some(Alternating::default());
        }
        // Written out in DIR/campaign.toml, so a later change of default is a visible change.
        for p in &mut campaign.profiles {
            p.frame_size = Some(p.frame_size());
        }
        Ok(campaign)
    }

    /// Reads and validates a campaign file (a regular file of bounded size). A config set
    /// directory is relative to the file, not to where benchlab runs, and is recorded as an
    /// absolute path, so that `report` or `--resume` from another directory finds it.
    pub fn load(path: &Path, known_sets: &[&str]) -> Result<Self, InputError> {
        let text = crate::file::read_text(path)?;
        let origin = path.display().to_string();
        let mut campaign = Self::parse(&text, &origin)?;
        // A file in the working directory has an empty parent: its sets are named as written.
        let base = path.parent().unwrap_or(Path::new(""));
        for set in &mut campaign.config_sets {
            if !known_sets.contains(&set.as_str()) {
                let dir = base.join(&*set);
                // A missing one stays relative to the file, for validation to name it.
                let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
                *set = dir.display().to_string();
            }
        }
        campaign.validate_alternating(&origin)?;
        campaign.settle_design();
        campaign.validate(&origin, known_sets)?;
        // A campaign to run is checked against this machine's CPUs too, as the virtual lab
        // will be (a stored one is not: its report may be written on another machine).
        if campaign.lab.hosts.is_none() {
            Topology::resolve(&campaign.lab, crate::lab::virt::online_cpus())
                .map_err(|msg| InputError::new(format!("{origin}: [lab] {msg}")))?;
        }
        Ok(campaign)
    }
}

/// Where a line and column fall in `text`, for messages (1-based).
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}
