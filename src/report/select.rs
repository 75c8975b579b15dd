//! Choosing and ordering what a report shows: the versions and config sets asked for, in
//! their order, and the pairs of names the comparisons loop over.

use crate::error::InputError;

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
