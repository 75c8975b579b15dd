//! The size of a campaign and of the names it holds, checked at load: a campaign plans at
//! most [`MAX_TRIALS`] trials over bounded lists (a 20 kB file must not plan a billion trials
//! and abort the run at 3 GB), and every name is one path component
//! ([`crate::names::check`]) whose file names fit [`MAX_FILE_NAME`] once combined.
//!
//! [`MAX_FILE_NAME`]: crate::names::MAX_FILE_NAME
//! [`MAX_TRIALS`]: crate::config::bounds::MAX_TRIALS

use super::{bad, Campaign, Measure};
use crate::error::{shown, InputError};
use crate::names::MAX_FILE_NAME;

/// The most versions a campaign lists.
pub(crate) const MAX_VERSIONS: usize = 100;
/// The most config sets a campaign lists.
pub(crate) const MAX_CONFIG_SETS: usize = 100;
/// The most traffic profiles a campaign lists.
pub(crate) const MAX_PROFILES: usize = 100;
/// The most trials a campaign plans (versions × config sets × profiles × iterations, plus
/// the profiling trials): each is a directory of files and a line of the plan.
pub(crate) const MAX_TRIALS: u64 = 100_000;
/// The longest title, note or version label, in characters.
pub(crate) const MAX_TEXT: usize = 500;
/// The most entries of any other list (notes, sysctls and commands of a version, hooks, the
/// arguments of a command).
pub(crate) const MAX_ENTRIES: usize = 1_000;

impl Campaign {
    /// The lists within their bounds and the trials they plan within [`MAX_TRIALS`].
    pub(super) fn validate_size(&self, origin: &str) -> Result<(), InputError> {
        for (key, len, max) in [
            ("versions", self.versions.len(), MAX_VERSIONS),
            ("config_sets", self.config_sets.len(), MAX_CONFIG_SETS),
            ("profiles", self.profiles.len(), MAX_PROFILES),
            ("notes", self.notes.len(), MAX_ENTRIES),
        ] {
            if len > max {
                return Err(bad(
                    origin,
                    key,
                    format!("{len} entries, at most {max}: split the campaign into several"),
                ));
            }
        }
        // Free text goes whole into the README and the terminal: a line, not a file.
        let texts = std::iter::once(("title".to_string(), &self.title))
            .chain((self.notes.iter().enumerate()).map(|(i, n)| (format!("notes[{i}]"), n)))
            .chain((self.versions.iter().enumerate()).filter_map(|(i, v)| {
                v.label
                    .as_ref()
                    .map(|l| (format!("versions[{i}].label"), l))
            }));
        for (key, text) in texts {
            if text.chars().count() > MAX_TEXT || text.contains(['\n', '\r']) {
                return Err(bad(
                    origin,
                    &key,
                    format!(
                        "`{}`: one line of at most {MAX_TEXT} characters; shorten it",
                        shown(text)
                    ),
                ));
            }
        }
        let per_series = u64::from(self.iterations) + u64::from(self.profile);
        let trials = (self.versions.len() * self.config_sets.len() * self.profiles.len()) as u64
            * per_series;
        if trials > MAX_TRIALS {
            return Err(bad(
                origin,
                "iterations",
                format!(
                    "{} versions × {} config sets × {} profiles × {per_series} trials plan \
                     {trials} trials, at most {MAX_TRIALS}: fewer iterations, or split the \
                     campaign",
                    self.versions.len(),
                    self.config_sets.len(),
                    self.profiles.len()
                ),
            ));
        }
        Ok(())
    }

    /// Every name a path component, no two alike in a list, and the longest file names built
    /// from them within [`MAX_FILE_NAME`].
    pub(super) fn validate_names(&self, origin: &str) -> Result<(), InputError> {
        let versions: Vec<&str> = self.versions.iter().map(|v| v.name.as_str()).collect();
        let sets: Vec<&str> = self.config_set_names().collect();
        let profiles: Vec<&str> = self.profiles.iter().map(|p| p.name.as_str()).collect();
        check_names(origin, "versions", ".name", &versions)?;
        check_names(origin, "config_sets", "", &sets)?;
        check_names(origin, "profiles", ".name", &profiles)?;
        self.validate_file_names(origin, &versions, &profiles)
    }

    /// The file names that join several names: a throughput series' `<version>.<config>.
    /// <profile>-<goal>.pps`, and the chart of quick versions alternated in one run,
    /// `alternating.<v1>+…+<vN>.<profile>.png`. (Three names and the dots of the others,
    /// `search.<version>.<config>.<profile>.png` the longest, fit whatever their length.)
    fn validate_file_names(
        &self,
        origin: &str,
        versions: &[&str],
        profiles: &[&str],
    ) -> Result<(), InputError> {
        let longest = |names: &[&str]| names.iter().map(|n| n.len()).max().unwrap_or(0);
        let (v, c, p) = (
            longest(versions),
            self.config_set_names().map(str::len).max().unwrap_or(0),
            longest(profiles),
        );
        let throughput = self
            .profiles
            .iter()
            .any(|p| p.measure == Measure::Throughput);
        if throughput {
            let goals = self.search().goals;
            if let Some((i, g)) = (goals.iter().enumerate()).max_by_key(|(_, g)| g.name.len()) {
                let bytes = v + c + p + g.name.len() + ".".len() * 2 + "-.pps".len();
                if bytes > MAX_FILE_NAME {
                    return Err(bad(
                        origin,
                        &format!("search.goals[{i}].name"),
                        format!(
                            "`{}` makes `<version>.<config>.<profile>-<goal>.pps` {bytes} \
                             bytes long with the longest names (version {v}, config set {c}, \
                             profile {p}), more than {MAX_FILE_NAME}: shorten the names",
                            shown(&g.name)
                        ),
                    ));
                }
            }
        }
        if self.alternates_versions() {
            let joined: usize = versions.iter().map(|n| n.len() + "+".len()).sum::<usize>() - 1;
            let bytes = "alternating.".len() + joined + ".".len() + p + ".png".len();
            if bytes > MAX_FILE_NAME {
                return Err(bad(
                    origin,
                    "versions",
                    format!(
                        "the {} alternated versions' names joined make \
                         `alternating.<v1>+…+<vN>.<profile>.png` {bytes} bytes long, more than \
                         {MAX_FILE_NAME}: shorten the names or alternate fewer versions",
                        versions.len()
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Each of `names` (the list `list`, an entry's name at `list[i]{field}`) a path component,
/// and none twice.
fn check_names(origin: &str, list: &str, field: &str, names: &[&str]) -> Result<(), InputError> {
    for (i, name) in names.iter().enumerate() {
        let key = format!("{list}[{i}]{field}");
        crate::names::check(name)
            .map_err(|problem| bad(origin, &key, format!("`{}` {problem}", shown(name))))?;
        if names[..i].contains(name) {
            return Err(bad(origin, &key, format!("name `{name}` appears twice")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::names::{MAX_FILE_NAME, MAX_NAME};

    #[test]
    fn three_names_of_any_length_fit_a_file_name() {
        assert!("search.".len() + 3 * MAX_NAME + "..".len() + ".png".len() <= MAX_FILE_NAME);
    }
}
