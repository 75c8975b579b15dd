//! The `.info` file bench-lab.sh writes once per series, and which name level is which.
//!
//! Two formats exist. Since 2016-05: shell assignments (`IMAGE="…"`, `CFG="…"`, `PKTGEN="…"`,
//! optional `BEFORE_CMD`/`DURING_CMD`/`AFTER_CMD`, then `UNAME="…"` without a final newline).
//! Before: free text (`Image: none`, `CFG: <path>/<set>`, the uname line, `Start time: …`,
//! `End time: …`).

/// What a `.info` file says. `None`: the file does not name that level; `Some("")`: the run had
/// no such level (or the file was renamed after the run, as in seed 000).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Info {
    /// The image (version) label.
    pub(crate) image: Option<String>,
    /// The config set name.
    pub(crate) cfg: Option<String>,
    /// The pkt-gen preset name.
    pub(crate) pktgen: Option<String>,
    /// `uname -a` of the DUT.
    pub(crate) uname: Option<String>,
}

/// Parses either `.info` format.
pub(crate) fn parse_info(text: &str) -> Info {
    if is_free_text(text) {
        parse_free_text(text)
    } else {
        parse_shell(text)
    }
}

/// Why `text` is no `.info` the harness wrote, when it is not: empty, or holding bytes that
/// are not text (a damaged or foreign file, whose first line would become the DUT's uname).
pub(crate) fn damage(text: &str) -> Option<&'static str> {
    // Bytes that are not UTF-8 (read as U+FFFD) or a NUL: no shell or uname writes those. Other
    // control characters are text, escaped where they are shown.
    let binary = |c: char| c == char::REPLACEMENT_CHARACTER || c == '\0';
    if text.trim().is_empty() {
        Some("empty")
    } else if text.contains(binary) {
        Some("not text (binary or damaged)")
    } else {
        None
    }
}

/// True for the free-text format of the harness before 2016-05.
pub(crate) fn is_free_text(text: &str) -> bool {
    !text.lines().any(|line| {
        ["IMAGE=", "CFG=", "PKTGEN=", "UNAME="]
            .iter()
            .any(|key| line.starts_with(key))
    })
}

fn parse_shell(text: &str) -> Info {
    let mut info = Info::default();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some((key, raw)) = line.split_once('=') else {
            continue;
        };
        // A quoted value (a hook command) may span lines.
        let mut value = raw.to_string();
        if value.starts_with('"') && (value.len() == 1 || !value.ends_with('"')) {
            for next in lines.by_ref() {
                value.push('\n');
                value.push_str(next);
                if next.ends_with('"') {
                    break;
                }
            }
        }
        let value = unquote(&value).to_string();
        match key {
            "IMAGE" => info.image = Some(value),
            "CFG" => info.cfg = Some(value),
            "PKTGEN" => info.pktgen = Some(value),
            "UNAME" => info.uname = Some(value).filter(|v| !v.is_empty()),
            _ => {}
        }
    }
    info
}

fn unquote(value: &str) -> &str {
    value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(value)
}

fn parse_free_text(text: &str) -> Info {
    let mut info = Info::default();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(image) = line.strip_prefix("Image:") {
            let image = image.trim();
            info.image = Some(if image == "none" { "" } else { image }.to_string());
        } else if let Some(cfg) = line.strip_prefix("CFG:") {
            info.cfg = Some(basename(cfg.trim()).to_string());
        } else if info.uname.is_none()
            && !line.starts_with("Start time:")
            && !line.starts_with("End time:")
        {
            info.uname = Some(line.to_string());
        }
    }
    info
}

fn basename(path: &str) -> &str {
    path.trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(path)
}

/// The three levels of a series, resolved from its file-name prefix and its `.info`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Levels {
    /// Image (version) label, empty when absent.
    pub(crate) image: String,
    /// Config set, empty when absent.
    pub(crate) cfg: String,
    /// pkt-gen preset, empty when absent.
    pub(crate) pktgen: String,
}

/// Splits a file-name prefix (`318516stable.forwarding.inet4`) into image, config set and
/// pkt-gen preset. The `.info` decides: the split whose parts agree best with its values wins,
/// so `bench.fastforwarding.1.receiver` is a config set when the `.info` says `CFG`, and a
/// renamed `bench.STABLE12.forwarding.inet6` with `IMAGE=""` still gets its image. With no
/// guidance at all, parts fill image, then config set, then preset.
pub(crate) fn resolve_levels(prefix: &str, info: &Info) -> Levels {
    let known = [&info.image, &info.cfg, &info.pktgen];
    let named: Vec<&str> = known
        .iter()
        .filter_map(|v| v.as_deref())
        .filter(|v| !v.is_empty())
        .collect();
    if !named.is_empty() && named.join(".") == prefix && known.iter().all(|v| v.is_some()) {
        let level = |v: &Option<String>| v.clone().unwrap_or_default();
        return Levels {
            image: level(&info.image),
            cfg: level(&info.cfg),
            pktgen: level(&info.pktgen),
        };
    }
    let parts: Vec<&str> = if prefix.is_empty() {
        Vec::new()
    } else {
        prefix.split('.').collect()
    };
    let n = parts.len();
    let mut best: Option<(i64, [usize; 3])> = None;
    for a in 0..=n {
        for b in a..=n {
            let cuts = [(0, a), (a, b), (b, n)];
            let score: i64 = cuts
                .iter()
                .zip(known)
                .map(|(&(from, to), value)| segment_score(&parts[from..to], value.as_deref()))
                .sum();
            let lengths = [a, b - a, n - b];
            // Ties go to the split that fills the earlier levels (larger lengths first).
            if best.is_none_or(|(s, l)| score > s || (score == s && lengths > l)) {
                best = Some((score, lengths));
            }
        }
    }
    let [a, b, _] = best.map(|(_, l)| l).unwrap_or([0, 0, 0]);
    let b = a + b;
    Levels {
        image: parts[..a].join("."),
        cfg: parts[a..b].join("."),
        pktgen: parts[b..].join("."),
    }
}

/// How well some name parts fit a level the `.info` names `value`.
fn segment_score(parts: &[&str], value: Option<&str>) -> i64 {
    // A level spanning several dot-separated parts is the exception (a dotted name).
    let extra_parts = 2 * parts.len().saturating_sub(1) as i64;
    match (value.filter(|v| !v.is_empty()), parts.is_empty()) {
        (Some(_), true) => -2,
        (Some(value), false) => {
            let joined = parts.join(".");
            if candidates(value).any(|c| c == joined) {
                4
            } else {
                -3 - extra_parts
            }
        }
        (None, true) => 0,
        (None, false) => -1 - extra_parts,
    }
}

/// The names a level value may appear under in file names: itself, its basename, and the
/// harness's image label (`cut -d - -f 2` of `BSDRP-293643-upgrade-amd64-serial.img.xz`).
fn candidates(value: &str) -> impl Iterator<Item = &str> {
    let base = basename(value);
    let image_label = base.split('-').nth(1);
    [Some(value), Some(base), image_label].into_iter().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHELL: &str = "IMAGE=\"318516stable\"\nCFG=\"forwarding\"\nPKTGEN=\"inet4\"\n\
        UNAME=\"FreeBSD apu2 11.1-PRERELEASE FreeBSD 11.1-PRERELEASE #0 r318516: Fri May 19  amd64\"";

    fn info(image: &str, cfg: &str, pktgen: &str) -> Info {
        Info {
            image: Some(image.into()),
            cfg: Some(cfg.into()),
            pktgen: Some(pktgen.into()),
            uname: None,
        }
    }

    fn levels(image: &str, cfg: &str, pktgen: &str) -> Levels {
        Levels {
            image: image.into(),
            cfg: cfg.into(),
            pktgen: pktgen.into(),
        }
    }

    #[test]
    fn shell_format() {
        let info = parse_info(SHELL);
        assert_eq!(info.image.as_deref(), Some("318516stable"));
        assert_eq!(info.cfg.as_deref(), Some("forwarding"));
        assert_eq!(info.pktgen.as_deref(), Some("inet4"));
        assert!(info.uname.unwrap().ends_with("r318516: Fri May 19  amd64"));
    }

    #[test]
    fn shell_format_with_a_multi_line_hook() {
        let text = "IMAGE=\"\"\nCFG=\"pf\"\nPKTGEN=\"\"\nBEFORE_CMD=\"netstat -s\nsysctl -a\"\nUNAME=\"FreeBSD x\"";
        let info = parse_info(text);
        assert_eq!(info, {
            let mut i = self::info("", "pf", "");
            i.uname = Some("FreeBSD x".into());
            i
        });
    }

    #[test]
    fn free_text_format() {
        let text = "Image: none\nCFG: /root/netbenches/configs/fastforwarding\n\
                    FreeBSD r1 10.3-RC1 FreeBSD 10.3-RC1 #0 r296213: Tue Mar  1 amd64\n\
                    Start time: Fri Mar 4 10:00:00 CET 2016\nEnd time: Fri Mar 4 12:00:00 CET 2016\n";
        let info = parse_info(text);
        assert_eq!(info.image.as_deref(), Some(""));
        assert_eq!(info.cfg.as_deref(), Some("fastforwarding"));
        assert_eq!(info.pktgen, None);
        assert!(info.uname.unwrap().starts_with("FreeBSD r1 10.3-RC1"));
    }

    #[test]
    fn levels_from_matching_info() {
        let i = info("318516stable", "forwarding", "inet4");
        assert_eq!(
            resolve_levels("318516stable.forwarding.inet4", &i),
            levels("318516stable", "forwarding", "inet4")
        );
        let i = info("299288", "fastforwarding", "");
        assert_eq!(
            resolve_levels("299288.fastforwarding", &i),
            levels("299288", "fastforwarding", "")
        );
        let i = info("r368287", "", "inet4");
        assert_eq!(
            resolve_levels("r368287.inet4", &i),
            levels("r368287", "", "inet4")
        );
        // Dots inside a name are fine when the .info spells it.
        let i = info("11.1", "pf", "inet6");
        assert_eq!(
            resolve_levels("11.1.pf.inet6", &i),
            levels("11.1", "pf", "inet6")
        );
    }

    #[test]
    fn levels_of_renamed_and_old_series() {
        // Seed 000: IMAGE="" in the .info, but the files were renamed to bench.STABLE12.*.
        let i = info("", "forwarding", "inet6");
        assert_eq!(
            resolve_levels("STABLE12.forwarding.inet6", &i),
            levels("STABLE12", "forwarding", "inet6")
        );
        // Old free text: only the config set is known.
        let i = parse_info("Image: none\nCFG: /a/b/fastforwarding\nFreeBSD x\n");
        assert_eq!(
            resolve_levels("fastforwarding", &i),
            levels("", "fastforwarding", "")
        );
        assert_eq!(
            resolve_levels("287478.fastforwarding", &i),
            levels("287478", "fastforwarding", "")
        );
        // An image given as the file the harness took its label from.
        let i = parse_info("Image: /img/BSDRP-293643-upgrade-amd64-serial.img.xz\nCFG: /c/pf\n");
        assert_eq!(resolve_levels("293643.pf", &i), levels("293643", "pf", ""));
    }

    #[test]
    fn levels_without_guidance_fill_from_the_image() {
        let i = Info::default();
        assert_eq!(resolve_levels("a.b", &i), levels("a", "b", ""));
        assert_eq!(resolve_levels("a.b.c", &i), levels("a", "b", "c"));
        assert_eq!(resolve_levels("", &i), levels("", "", ""));
    }
}
