//! Errors shared by every layer, and the exit status each one maps to.
//!
//! Exit codes (DESIGN.md): 0 success, 1 run-time failure, 2 usage or bad input. A library layer
//! that rejects what the user gave (a file, a key, a host, a flag) returns an [`InputError`]
//! (directly or as the source of its own error), so that the CLI can map it to status 2 without
//! knowing every layer's error type.

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_errors_exit_2_even_when_wrapped() {
        let err = anyhow::Error::new(InputError::new("bad key")).context("reading campaign.toml");
        assert_eq!(exit_code(&err), 2);
        assert_eq!(exit_code(&anyhow::anyhow!("DUT did not answer")), 1);
    }
}
