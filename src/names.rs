//! Names that become file and directory names (versions, config sets, profiles, search goals):
//! one rule, checked once at load by every layer that reads such a name, so that no name can
//! leave the directory it is joined to or make a file name the file system refuses.

/// The longest name, in bytes: three of them, a goal's and the dots of the longest file name
/// built from them (`search.<version>.<config>.<profile>.png`, `<…>-<goal>.pps`) stay within
/// [`MAX_FILE_NAME`] unless they are all this long, which `config` checks on the combination.
pub(crate) const MAX_NAME: usize = 64;

/// The longest file name (one path component) Linux and FreeBSD file systems take, in bytes.
pub(crate) const MAX_FILE_NAME: usize = 255;

/// What a name may hold, for messages.
pub(crate) const RULE: &str =
    "a name is 1 to 64 ASCII letters, digits, `-` or `_`, not starting with \
                        `-` (it becomes part of file names)";

/// Checks that `name` is a safe path component: 1 to [`MAX_NAME`] ASCII letters, digits, `-`
/// and `_`, not starting with `-` (a tool would read it as an option). This excludes `/`, NUL,
/// `.` and `..`, control characters and the `.` that separates names in trial directories.
/// The error says what is wrong without the name, for the caller to quote it
/// ([`crate::error::shown`]) after the file and key.
pub(crate) fn check(name: &str) -> Result<(), String> {
    let problem = if name.is_empty() {
        "is empty".to_string()
    } else if name.len() > MAX_NAME {
        format!("is {} bytes long", name.len())
    } else if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
    {
        format!("holds `{}`", crate::error::shown(&c.to_string()))
    } else if name.starts_with('-') {
        "starts with `-`".to_string()
    } else {
        return Ok(());
    };
    Err(format!("{problem}: {RULE}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_plain_path_components() {
        for good in ["inet4", "linux-6_12", "NDR", "a", &"x".repeat(MAX_NAME)] {
            assert_eq!(check(good), Ok(()), "{good}");
        }
        for bad in [
            "",
            ".",
            "..",
            "x/../../../escaped",
            "a\0b",
            "a\nb",
            "a.b",
            "a b",
            "-n",
            "é",
            &"x".repeat(MAX_NAME + 1),
        ] {
            let err = check(bad).unwrap_err();
            assert!(err.ends_with(RULE) && !err.contains('\n'), "{err}");
        }
        assert_eq!(check("x/y").unwrap_err(), format!("holds `/`: {RULE}"));
    }
}
