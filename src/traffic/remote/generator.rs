//! What a generator of a real lab is to benchlab: its `LAB.toml` name, how it sends, what
//! counts on the receiver. Each generator implements [`RemoteGenerator`] in its own file and
//! has one line in [`crate::traffic::registry::GENERATORS`]; benchlab's own comes first.
//!
//! [`RemoteGenerator`]: crate::traffic::remote::generator::RemoteGenerator

use super::{RemoteGen, RemoteNode, RemoteRx};
use crate::error::InputError;
use crate::traffic::endpoint::{Load, Receiver, Sender};

/// Builds a generator's own receiver on a node.
pub(crate) type NewReceiver = fn(&RemoteNode) -> Box<dyn Receiver>;

/// A traffic generator that a real lab's senders run over SSH.
pub(crate) trait RemoteGenerator: Sync {
    /// Its name in `LAB.toml` (`generator = "..."`) and in campaign files.
    fn name(&self) -> &'static str;

    /// The sending tool in messages and lab facts (`"benchlab gen"`).
    fn label(&self) -> &'static str;

    /// Sender `k` of `of`, sending `load` from `node`.
    fn sender(&self, node: &RemoteNode, load: &Load, k: usize, of: usize) -> Box<dyn Sender>;

    /// Its own receiver, when `benchlab rx` cannot count what it sends (netmap pkt-gen's
    /// traffic reaches a netmap port). `None`, the default, counts with `benchlab rx`; a lab's
    /// senders then all use generators without one, or all this one.
    fn receiver(&self) -> Option<NewReceiver> {
        None
    }

    /// Whether it sends from the CPU a sender's `cpu` names; without, `cpu` is an error.
    fn pins_cpu(&self) -> bool {
        false
    }

    /// Checks that it can send `load` from `node` before any host is asked (trafgen: the
    /// profile fits its configuration); the message names the value and what to do.
    fn check(&self, _node: &RemoteNode, _load: &Load) -> Result<(), InputError> {
        Ok(())
    }
}

/// benchlab's own generator: `benchlab gen --json`, counted by `benchlab rx --json`.
pub(crate) struct Benchlab;

impl RemoteGenerator for Benchlab {
    fn name(&self) -> &'static str {
        "benchlab"
    }

    fn label(&self) -> &'static str {
        "benchlab gen"
    }

    fn sender(&self, node: &RemoteNode, load: &Load, k: usize, of: usize) -> Box<dyn Sender> {
        Box::new(RemoteGen::new(node, load, k, of))
    }

    fn pins_cpu(&self) -> bool {
        true
    }
}

/// The receiver of generators without their own: `benchlab rx --json` once a second.
pub(crate) fn fallback_receiver(node: &RemoteNode) -> Box<dyn Receiver> {
    Box::new(RemoteRx::new(node))
}
