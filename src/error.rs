//! Errors shared by every layer, and the exit status each one maps to.
//!
//! Exit codes (DESIGN.md): 0 success, 1 run-time failure, 2 usage or bad input. A library layer
//! that rejects what the user gave (a file, a key, a host, a flag) returns an [`InputError`]
//! (directly or as the source of its own error), so that the CLI can map it to status 2 without
//! knowing every layer's error type.
//!
//! [`InputError`]: crate::error::InputError

/// Bad input from the user: the message names the file, key or host and says what to do.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputError(pub String);

impl InputError {
    /// Builds an input error from anything printable.
    pub fn new(msg: impl Into<String>) -> Self {
        Self(msg.into())
    }
}

/// Exit status 2 when bad input caused `err` anywhere in its chain, 1 otherwise.
pub fn exit_code(err: &anyhow::Error) -> i32 {
    if err.chain().any(|cause| cause.is::<InputError>()) {
        2
    } else {
        1
    }
}

/// Values longer than this many characters are shortened in messages ([`shown`]).
const SHOWN_MAX: usize = 60;
/// How many characters of a shortened value [`shown`] keeps.
const SHOWN_KEPT: usize = 40;

/// A value as a message quotes it: one line, control and bidi characters escaped (`\n`,
/// `\x1b`), and past 60 characters its first 40, `…` and its length in bytes.
pub(crate) fn shown(value: &str) -> String {
    let long = value.chars().count() > SHOWN_MAX;
    let kept = if long { SHOWN_KEPT } else { SHOWN_MAX };
    let mut out = String::new();
    for c in value.chars().take(kept) {
        escape(c, &mut out);
    }
    if long {
        out.push_str(&format!("… ({} bytes)", value.len()));
    }
    out
}

/// `text` whole, every character [`shown`] escapes escaped but those of `keep`: what a
/// message, the terminal or a README may hold of a file's words.
pub(crate) fn escaped(text: &str, keep: &[char]) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match keep.contains(&c) {
            true => out.push(c),
            false => escape(c, &mut out),
        }
    }
    out
}

/// Pushes `c` as a message shows it: control and bidi characters escaped.
fn escape(c: char, out: &mut String) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        // Escaped so that `\n` in the message can only mean an escaped newline.
        '\\' => out.push_str("\\\\"),
        c if (c as u32) < 0x80 && c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
        // C1 controls, and the bidi marks that reorder what a terminal shows.
        c if c.is_control()
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') =>
        {
            out.push_str(&format!("\\u{{{:x}}}", c as u32))
        }
        c => out.push(c),
    }
}

/// A whole message as one line of at most `max` characters: every character but `\\` escaped
/// as [`shown`] escapes it, and past `max` its middle cut (`… N characters left out …`), so that
/// what it names (the start) and what to do (the end) both stay. The last guard of a bad-input
/// message, whatever value a layer quoted without [`shown`].
pub fn one_line(message: &str, max: usize) -> String {
    // A backslash is kept: it is already an escape's, from a value [`shown`] quoted.
    let escaped = escaped(message, &['\\']);
    let chars: Vec<char> = escaped.chars().collect();
    if chars.len() <= max {
        return escaped;
    }
    let tail = max / 4;
    let cut = format!(" … {} characters left out … ", chars.len());
    let head = max.saturating_sub(tail + cut.chars().count());
    let start: String = chars[..head].iter().collect();
    let end: String = chars[chars.len() - tail..].iter().collect();
    format!("{start}{cut}{end}")
}

/// A TOML parse error's message in one line of plain words: toml's own spans lines (`invalid
/// table header` / `expected ...`) and names Rust types (`expected u32`), which a user who
/// wrote `iterations = -1` should not have to translate. The caller adds the file and line.
pub(crate) fn toml_message(e: &toml::de::Error) -> String {
    let mut message = e.message().trim().replace('\n', ", ");
    for (rust, words) in [
        ("expected f64", "expected a number"),
        ("expected usize", "expected a whole number ≥ 0"),
        ("expected u64", "expected a whole number ≥ 0"),
        (
            "expected u32",
            "expected a whole number from 0 to 4294967295",
        ),
        ("expected u16", "expected a whole number from 0 to 65535"),
        ("expected u8", "expected a whole number from 0 to 255"),
        ("expected a sequence", "expected a list `[...]`"),
        ("expected a map", "expected a table"),
        ("wanted string or table", "expected a quoted name"),
    ] {
        message = message.replace(rust, words);
    }
    // `expected struct Hosts`: the type's name means nothing in the file.
    if let Some(at) = message.find("expected struct ") {
        let rest = &message[at + "expected struct ".len()..];
        let end = rest
            .find(|c: char| !c.is_alphanumeric())
            .unwrap_or(rest.len());
        message = format!("{}expected a table{}", &message[..at], &rest[end..]);
    }
    message
}

/// An I/O error's `strerror` text, without Rust's `(os error N)`: as `err(3)` and the rest of a
/// refusal print it.
pub(crate) fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(p) => text[..p].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_messages_are_one_line_of_plain_words() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct File {
            n: Option<u32>,
            x: Option<f64>,
            inner: Option<Inner>,
        }
        #[derive(Debug, serde::Deserialize)]
        struct Inner {}
        let message = |text: &str| toml_message(&toml::from_str::<File>(text).unwrap_err());
        assert_eq!(
            message("n = -1"),
            "invalid value: integer `-1`, expected a whole number from 0 to 4294967295"
        );
        assert_eq!(
            message("x = \"ten\""),
            "invalid type: string \"ten\", expected a number"
        );
        assert_eq!(
            message("inner = 3"),
            "invalid type: integer `3`, expected a table"
        );
        assert!(!message("[inner\n").contains('\n'));
    }

    #[test]
    fn shown_values_are_one_short_line() {
        assert_eq!(shown("inet4"), "inet4");
        assert_eq!(shown("a\nb\x1b[31mc\\n"), "a\\nb\\x1b[31mc\\\\n");
        assert_eq!(shown("\u{202e}\u{85}"), "\\u{202e}\\u{85}");
        let sixty = "x".repeat(60);
        assert_eq!(shown(&sixty), sixty);
        let long = format!("{}é{}", "y".repeat(39), "z".repeat(30));
        assert_eq!(
            shown(&long),
            format!("{}é… ({} bytes)", "y".repeat(39), long.len())
        );
        assert_eq!(
            shown(&"\n".repeat(1000)),
            format!("{}… (1000 bytes)", "\\n".repeat(40))
        );
    }

    #[test]
    fn input_errors_exit_2_even_when_wrapped() {
        let err = anyhow::Error::new(InputError::new("bad key")).context("reading campaign.toml");
        assert_eq!(exit_code(&err), 2);
        assert_eq!(exit_code(&anyhow::anyhow!("DUT did not answer")), 1);
    }
}
