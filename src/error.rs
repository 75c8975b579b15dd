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

/// A TOML parse error's message in one line of plain words: toml's own spans lines (`invalid
/// table header` / `expected ...`) and names Rust types (`expected u32`), which a user who
/// wrote `iterations = -1` should not have to translate. The caller adds the file and line.
pub fn toml_message(e: &toml::de::Error) -> String {
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
    fn input_errors_exit_2_even_when_wrapped() {
        let err = anyhow::Error::new(InputError::new("bad key")).context("reading campaign.toml");
        assert_eq!(exit_code(&err), 2);
        assert_eq!(exit_code(&anyhow::anyhow!("DUT did not answer")), 1);
    }
}
