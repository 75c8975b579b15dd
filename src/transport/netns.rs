//! Commands inside a named network namespace, through `ip netns exec NAME argv…`.
//!
//! `ip netns exec` also gives the command a private `/sys` that shows the namespace's own
//! interfaces, which the lab needs (threaded NAPI, counters), and it `exec`s the command, so
//! the process id of a spawned command is the command's own and signals reach it.

use super::local::{exec_argv, start};
use super::{Command, Output, Process, Transport, TransportError};

/// Runs commands in one network namespace of this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetnsTransport {
    name: String,
}

impl NetnsTransport {
    /// A transport into the namespace `name` (which must exist when commands run).
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into() }
    }

    fn argv(&self, argv: &[String]) -> Vec<String> {
        ["ip", "netns", "exec", &self.name]
            .into_iter()
            .map(str::to_string)
            .chain(argv.iter().cloned())
            .collect()
    }
}

impl Transport for NetnsTransport {
    fn host(&self) -> &str {
        &self.name
    }

    fn exec(&self, cmd: &Command) -> Result<Output, TransportError> {
        exec_argv(&self.name, &self.argv(&cmd.argv), cmd)
    }

    fn spawn(&self, argv: &[String]) -> Result<Box<dyn Process>, TransportError> {
        Ok(Box::new(start(&self.name, &self.argv(argv), None)?))
    }
}
