//! Loaded frame-writing programs, kept for the next engine that needs the same one: the
//! verifier takes 35–60 ms to load it here, which a search of 200 one-second trials (a new
//! generator each) paid 200 times.

use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex, PoisonError};

use super::{Mapped, SentLog};

/// Programs kept at most: one per sender of the profile running, a few profiles back.
const KEPT: usize = 8;

/// A loaded program and its state map, mapped into the process.
pub(super) struct Loaded {
    /// The program (which holds its state map).
    pub(crate) prog: OwnedFd,
    /// The state map's value.
    pub(crate) state: Arc<Mapped>,
    /// The log of the probes it carries, for a program that carries them (its device map's
    /// program is bound in its code).
    pub(crate) sent: Option<Arc<Mutex<SentLog>>>,
}

/// Idle programs, each with its instructions (map fd left out), oldest first.
static IDLE: Mutex<Vec<(Vec<u8>, Loaded)>> = Mutex::new(Vec::new());

/// An idle program whose instructions are `key`, if one is kept; its state is as the last
/// engine left it. One whose state a counter of an earlier engine still reads is not idle.
pub(super) fn take(key: &[u8]) -> Option<Loaded> {
    let mut idle = IDLE.lock().unwrap_or_else(PoisonError::into_inner);
    let at = idle
        .iter()
        .rposition(|(k, l)| k == key && Arc::strong_count(&l.state) == 1)?;
    Some(idle.remove(at).1)
}

/// Keeps `loaded` (instructions `key`) for a later engine, dropping the oldest beyond [`KEPT`].
pub(super) fn give(key: Vec<u8>, loaded: Loaded) {
    let mut idle = IDLE.lock().unwrap_or_else(PoisonError::into_inner);
    idle.push((key, loaded));
    let over = idle.len().saturating_sub(KEPT);
    idle.drain(..over);
}
