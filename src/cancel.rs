//! The cancellation token: raised by the first Ctrl-C (or a test), read by every long step so
//! that a campaign stops between two of its steps, cleans up and keeps what it measured.
//!
//! A token is passed down to whatever runs long (the run loop, a trial, a wait for a rebooting
//! DUT) instead of a global flag, so that a test can cancel one campaign without touching
//! another running in the same process.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A shared flag that says "stop at the next safe point"; clones share it.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

/// The error a cancelled step returns: callers tell it from a failure by its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("interrupted")]
pub(crate) struct Cancelled;

impl Cancel {
    /// A token nobody has raised yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Raises the token; returns whether it was already raised.
    pub(crate) fn cancel(&self) -> bool {
        self.0.swap(true, Ordering::SeqCst)
    }

    /// Whether the token was raised.
    pub(crate) fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// `Err(Cancelled)` once the token is raised: `cancel.check()?` at each safe point.
    pub(crate) fn check(&self) -> Result<(), Cancelled> {
        if self.is_cancelled() {
            Err(Cancelled)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_flag() {
        let a = Cancel::new();
        let b = a.clone();
        assert!(b.check().is_ok());
        assert!(!a.cancel());
        assert!(b.is_cancelled());
        assert_eq!(b.check(), Err(Cancelled));
        assert!(a.cancel());
    }
}
