//! Version names read as revisions, to order a trend: FreeBSD's Subversion numbers
//! (`r318516`, and the archive's bare `318516current`), its Git commit counts (`n245000`), a
//! branch word after the number (`stable`, `current`: another line of development, its own
//! trend), and a review or patch on top (`D12439`, `D27401v2`: a variant drawn beside its
//! revision, not a later point of the series).

use serde::Serialize;

/// A version name read as a revision.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub(crate) struct Revision {
    /// Sort key: Subversion numbers first, then Git commit counts (FreeBSD moved from one to
    /// the other in December 2020; `n` numbers restart below the last `r`).
    pub(crate) order: i64,
    /// The revision itself: `r318516`, `n245000`.
    pub(crate) base: String,
    /// The branch word after the number (`stable`, `current`), empty for none.
    pub(crate) branch: String,
    /// The review or patch on top (`D27401v2`), empty for the revision itself.
    pub(crate) variant: String,
}

/// Git commit counts sort after every Subversion number.
const GIT_OFFSET: i64 = 1_000_000_000;

impl Revision {
    /// Reads `name`; `None` when it holds no revision (a date orders it then).
    ///
    /// A revision is `r` or `n` and 5–7 digits at the start of the name or after a separator
    /// (`-`, `_`, `.`), or 5–6 bare digits at the start (the archive names its images
    /// `318516current`).
    pub(crate) fn parse(name: &str) -> Option<Revision> {
        let bytes = name.as_bytes();
        for (at, c) in name.char_indices() {
            let boundary = at == 0 || matches!(bytes[at - 1], b'-' | b'_' | b'.' | b'/');
            if !boundary {
                continue;
            }
            let (kind, digits_at) = match c {
                'r' | 'n' => (c, at + 1),
                '0'..='9' if at == 0 => ('r', at),
                _ => continue,
            };
            let digits = name[digits_at..]
                .bytes()
                .take_while(u8::is_ascii_digit)
                .count();
            let enough = if digits_at == at { 5..=6 } else { 5..=7 };
            if !enough.contains(&digits) {
                continue;
            }
            let number: i64 = name[digits_at..digits_at + digits].parse().ok()?;
            let rest = name[digits_at + digits..].trim_start_matches(['-', '_', '.']);
            let (branch, variant) = split_rest(rest);
            return Some(Revision {
                order: if kind == 'n' {
                    GIT_OFFSET + number
                } else {
                    number
                },
                base: format!("{kind}{number}"),
                branch,
                variant,
            });
        }
        None
    }
}

/// What follows the number: a review (`D` and digits, a `v` and digits after) or a patch word
/// containing one is the variant; letters before it are the branch (`stableD123`).
fn split_rest(rest: &str) -> (String, String) {
    let review = rest
        .char_indices()
        .find(|(i, c)| *c == 'D' && rest[i + 1..].starts_with(|d: char| d.is_ascii_digit()));
    match review {
        Some((at, _)) => (
            rest[..at].trim_end_matches(['-', '_', '.']).to_string(),
            rest[at..].to_string(),
        ),
        None => (rest.to_string(), String::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rev(name: &str) -> (String, String, String) {
        let r = Revision::parse(name).unwrap();
        (r.base, r.branch, r.variant)
    }

    #[test]
    fn archive_names_read_as_revisions() {
        let s = |x: &str| x.to_string();
        assert_eq!(rev("r318516"), (s("r318516"), s(""), s("")));
        assert_eq!(rev("318516stable"), (s("r318516"), s("stable"), s("")));
        assert_eq!(rev("299288D8526"), (s("r299288"), s(""), s("D8526")));
        assert_eq!(rev("r368287D27401v2"), (s("r368287"), s(""), s("D27401v2")));
        assert_eq!(rev("r323724D12439"), (s("r323724"), s(""), s("D12439")));
        assert_eq!(
            rev("fbsd12-head.r299288.D8526"),
            (s("r299288"), s(""), s("D8526"))
        );
        assert_eq!(rev("main-n245000"), (s("n245000"), s(""), s("")));
        assert_eq!(Revision::parse("accounting-off"), None);
        assert_eq!(Revision::parse("v6.1"), None);
        assert_eq!(Revision::parse("run1234"), None);
    }

    #[test]
    fn git_counts_sort_after_subversion_numbers() {
        let svn = Revision::parse("r368820").unwrap();
        let git = Revision::parse("n244000").unwrap();
        assert!(svn.order < git.order);
        let a = Revision::parse("r299288").unwrap();
        let b = Revision::parse("r299288D8526").unwrap();
        assert_eq!(a.order, b.order);
    }
}
