//! Choosing and ordering what a report shows: the versions and config sets asked for, in
//! their order, and the pairs of names the comparisons loop over.

use crate::error::InputError;
use crate::ingest::Series;

/// Every (a, b) pair, `a` the outer loop.
pub(super) fn pairs(a: &[String], b: &[String]) -> Vec<(String, String)> {
    (a.iter())
        .flat_map(|x| b.iter().map(move |y| (x.clone(), y.clone())))
        .collect()
}

/// Distinct values in first-seen order.
pub(super) fn distinct<'a>(values: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for v in values {
        if !seen.contains(v) {
            seen.push(v.clone());
        }
    }
    seen
}

/// The names to report: `wanted` in its order, each of which must exist, or all of them.
pub(super) fn select(
    what: &str,
    available: Vec<String>,
    wanted: Option<&[String]>,
) -> Result<Vec<String>, InputError> {
    let Some(wanted) = wanted else {
        return Ok(available);
    };
    let named: Vec<&str> = (available.iter())
        .filter(|n| !n.is_empty())
        .map(String::as_str)
        .collect();
    let have = if named.is_empty() {
        format!(
            "the logs have no {what} level (their file names carry no {what} name); \
             leave out --{}",
            plural(what)
        )
    } else {
        format!("the logs have: {}", named.join(", "))
    };
    let mut selected: Vec<String> = Vec::new();
    for name in wanted {
        if !available.contains(name) {
            return Err(InputError::new(format!(
                "{what} '{name}' is in no series (check --{} or report.toml); {have}",
                plural(what),
            )));
        }
        if selected.contains(name) {
            return Err(InputError::new(format!("{what} '{name}' is listed twice")));
        }
        selected.push(name.clone());
    }
    if selected.is_empty() {
        return Err(InputError::new(format!("the list of {what}s is empty")));
    }
    Ok(selected)
}

fn plural(what: &str) -> &str {
    if what == "version" {
        "versions"
    } else {
        "configs"
    }
}

/// The versions of `series`, oldest first: by the source revision their `uname` or name carries
/// (`r318516`, `n245565`; Subversion's before git's), then by release (`11.1-PRERELEASE`
/// before `12.0-CURRENT` at one revision), when every version has a revision; else, and for
/// ties, in the logs' order. The oldest is the reference, as the harness's READMEs take it: the
/// logs' order is alphabetical, which made `318516current` the reference of `318516stable`.
pub(super) fn by_age(series: &[Series]) -> Vec<String> {
    let versions = distinct(series.iter().map(|s| &s.version));
    let age = |version: &String| {
        let unames = (series.iter())
            .filter(|s| &s.version == version)
            .filter_map(|s| s.setup.uname.as_deref());
        let mut unames = unames.peekable();
        let uname = unames.peek().copied();
        let revision = uname.and_then(revision).or_else(|| revision(version))?;
        Some((revision, uname.and_then(release)))
    };
    let ages: Option<Vec<_>> = versions.iter().map(age).collect();
    let Some(ages) = ages else {
        return versions;
    };
    let mut order: Vec<usize> = (0..versions.len()).collect();
    order.sort_by_key(|&i| ages[i]);
    order.into_iter().map(|i| versions[i].clone()).collect()
}

/// The source revision a `uname` or a version name carries: (0, N) for Subversion's `rN`, (1, N)
/// for git's `nN` (FreeBSD's commit count, which began after the last `r`), or a name's leading
/// number (`318516current`). Five digits at least, so that `r1` or `13` is no revision.
fn revision(text: &str) -> Option<(u8, u64)> {
    let number = |digits: &str| {
        let digits: String = digits.chars().take_while(char::is_ascii_digit).collect();
        (digits.len() >= 5).then(|| digits.parse().ok()).flatten()
    };
    let words = text.split(|c: char| !c.is_ascii_alphanumeric());
    for word in words {
        for (prefix, era) in [("r", 0), ("n", 1)] {
            if let Some(n) = word.strip_prefix(prefix).and_then(number) {
                return Some((era, n));
            }
        }
    }
    // A name that is a revision and a tag (`318516current`), as the 2017 harness named images.
    number(text).map(|n| (0, n))
}

/// The release of a FreeBSD `uname -a` (its third word, `12.0-CURRENT` → (12, 0)).
fn release(uname: &str) -> Option<(u32, u32)> {
    let word = uname.split_whitespace().nth(2)?;
    let (major, rest) = word.split_once('.')?;
    let minor: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some((major.parse().ok()?, minor.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::Setup;

    fn series(version: &str, uname: Option<&str>) -> Series {
        Series {
            version: version.into(),
            setup: Setup {
                uname: uname.map(str::to_string),
                traffic: None,
            },
            ..Series::default()
        }
    }

    #[test]
    fn the_older_version_comes_first_never_the_alphabetical_one() {
        // Seed 002: one revision, 11-stable older than 12-head.
        let current = "FreeBSD apu2 12.0-CURRENT FreeBSD 12.0-CURRENT #16 r318516M: Fri May 19";
        let stable = "FreeBSD apu2 11.1-PRERELEASE FreeBSD 11.1-PRERELEASE #0 r318516: Thu";
        let s = [
            series("318516current", Some(current)),
            series("318516stable", Some(stable)),
        ];
        assert_eq!(by_age(&s), ["318516stable", "318516current"]);
        // Revisions from the names; a patched build after its base, in the logs' order.
        let s = [
            series("r368606", None),
            series("r368287D27401v2", None),
            series("r368287", None),
        ];
        assert_eq!(by_age(&s), ["r368287D27401v2", "r368287", "r368606"]);
        // git's count after Subversion's revisions.
        let s = [series("main-n245565", None), series("r368287", None)];
        assert_eq!(by_age(&s), ["r368287", "main-n245565"]);
        // A version without a revision: the logs' order.
        let s = [series("new", None), series("r368287", None)];
        assert_eq!(by_age(&s), ["new", "r368287"]);
    }
}
