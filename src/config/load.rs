//! Reading a campaign file: parse (TOML with line and column in errors, seconds and the
//! estimator refused by key, defaults filled in), resolve (config set directories made absolute
//! from the file's own directory), merge the command line's [`Overrides`], settle the design,
//! then validate once.

use std::path::Path;

use super::{default_version, Alternating, Campaign, Design, Overrides};
use crate::error::InputError;
use crate::lab::Topology;

impl Campaign {
    /// Parses and validates a campaign file's text; `origin` names the file in messages and
    /// `known_sets` lists the built-in config sets (anything else must be a directory).
    pub fn from_toml(text: &str, origin: &str, known_sets: &[&str]) -> Result<Self, InputError> {
        Self::parse(text, origin)?.prepare(origin, known_sets, &Overrides::default(), None)
    }

    /// Parses a campaign file's text and fills in its defaults, without validating it or
    /// settling `design = "auto"`: the caller does both once it has resolved what depends on
    /// where the file is (and, for a results directory, what its layout was).
    pub(crate) fn parse(text: &str, origin: &str) -> Result<Self, InputError> {
        let mut campaign: Campaign = toml::from_str(text).map_err(|e| {
            // What the typed parse refused may be a seconds key or an estimator, which
            // `check_file` names by its key; a file the typed parse takes is not read twice.
            if let Err(named) = super::seconds::check_file(text, origin) {
                return named;
            }
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

    /// Reads a campaign file (a regular file of bounded size) and resolves its config set
    /// directories, neither settled nor validated ([`Campaign::prepare`] does both). A
    /// directory is relative to the file, not to where benchlab runs, and is recorded as an
    /// absolute path, so that `report` or `--resume` from another directory finds it;
    /// `builtin` lists the names that are no directory.
    pub(crate) fn read(path: &Path, builtin: &[&str]) -> Result<Self, InputError> {
        let text = crate::file::read_text(path)?;
        let mut campaign = Self::parse(&text, &path.display().to_string())?;
        // A file in the working directory has an empty parent: its sets are named as written.
        let base = path.parent().unwrap_or(Path::new(""));
        for set in &mut campaign.config_sets {
            if !builtin.contains(&set.as_str()) {
                let dir = base.join(&*set);
                // A missing one stays relative to the file, for validation to name it.
                let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
                *set = dir.display().to_string();
            }
        }
        Ok(campaign)
    }

    /// The campaign to run: `overrides` merged, the design settled (as `stored`, the results
    /// directory resumed, has it when benchlab did not choose it), then validated once against
    /// `known_sets`. A fault the overrides brought says so; one of the file alone does not.
    pub(crate) fn prepare(
        mut self,
        origin: &str,
        known_sets: &[&str],
        overrides: &Overrides,
        stored: Option<&Campaign>,
    ) -> Result<Self, InputError> {
        // `[alternating]` as written, before `auto` may drop it for the trials design.
        self.validate_alternating(origin)?;
        let file = (!overrides.is_empty()).then(|| self.clone());
        // Profiling trials belong to the trials design: a design benchlab chose is chosen again.
        self.profile |= overrides.profile;
        self.settle_design();
        if let Some(stored) = stored {
            self.keep_design_of(stored);
        }
        overrides.apply(&mut self);
        let Err(e) = self.validate(origin, known_sets) else {
            return Ok(self);
        };
        let Some(mut file) = file else {
            return Err(e);
        };
        // Only on the way out: whose fault it is, the file's or a flag's.
        file.settle_design();
        file.validate(origin, known_sets)?;
        Err(Overrides::blamed(e))
    }

    /// Reads, settles and validates a campaign file as it is ([`Campaign::read`],
    /// [`Campaign::prepare`] with no override, [`Campaign::check_cpus`]).
    pub fn load(path: &Path, known_sets: &[&str]) -> Result<Self, InputError> {
        let origin = path.display().to_string();
        let campaign = Self::read(path, known_sets)?.prepare(
            &origin,
            known_sets,
            &Overrides::default(),
            None,
        )?;
        campaign.check_cpus(&origin)?;
        Ok(campaign)
    }

    /// A campaign to run is checked against this machine's CPUs too, as the virtual lab will
    /// be (a stored one is not: its report may be written on another machine).
    pub(crate) fn check_cpus(&self, origin: &str) -> Result<(), InputError> {
        if self.lab.hosts.is_none() {
            Topology::resolve(&self.lab, crate::lab::virt::online_cpus())
                .map_err(|msg| InputError::new(format!("{origin}: [lab] {msg}")))?;
        }
        Ok(())
    }
}

/// Where a line and column fall in `text`, for messages (1-based).
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}
