//! How benchlab reaches a node: run a command, spawn a long-running one and stop it, put and
//! get a file.
//!
//! Commands are argument vectors, never shell strings: a caller that truly wants a shell (a
//! user's apply script) asks for `sh -c` itself. Every error names the host (a namespace here,
//! an SSH host alias later) and the command, so the CLI can print one line that says where
//! things went wrong. Files travel through the command channel (`tee`, `cat`), which works the
//! same inside a namespace (where `/sys` shows the namespace's own interfaces) and over SSH.
//!
//! ```no_run
//! use benchlab::transport::{NetnsTransport, Transport};
//! let dut = NetnsTransport::new("benchlab-0-dut");
//! let routes = dut.run(&["ip", "-j", "route"])?;
//! # Ok::<(), benchlab::transport::TransportError>(())
//! ```

/// Commands on this machine, and the child-process plumbing the other transports share.
pub(crate) mod local;
/// A transport for unit tests: records commands, returns canned output.
#[cfg(test)]
pub(crate) mod mock;
/// Commands inside a named network namespace (`ip netns exec`).
pub(crate) mod netns;
/// Commands on a remote node through OpenSSH (an ssh_config host alias).
pub mod ssh;

use std::fmt;
use std::time::Duration;

pub(crate) use local::LocalTransport;
#[cfg(test)]
pub(crate) use mock::MockTransport;
pub use netns::NetnsTransport;
pub use ssh::SshTransport;

/// Time limit of a command when the caller sets none: long enough for `nft -f` of a big
/// ruleset, short enough that a hung command does not stall a campaign for ever.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// One command to run on a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// Program and arguments; the program is looked up in the node's `PATH`.
    pub(crate) argv: Vec<String>,
    /// Bytes written to the command's standard input (closed when `None`).
    pub(crate) stdin: Option<Vec<u8>>,
    /// The command is killed and [`TransportError::Timeout`] returned after this long.
    pub(crate) timeout: Duration,
}

impl Command {
    /// A command from its argument vector, no input, the default time limit.
    pub fn new<I, S>(argv: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            argv: argv.into_iter().map(Into::into).collect(),
            stdin: None,
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// Feeds `bytes` to the command's standard input.
    #[must_use]
    pub(crate) fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(bytes.into());
        self
    }

    /// Sets the time limit.
    #[must_use]
    pub(crate) fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

impl fmt::Display for Command {
    /// The command as a person would type it (arguments quoted where a shell needs it).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&display_argv(&self.argv))
    }
}

/// An argument vector as a person would type it, for messages.
pub(crate) fn display_argv(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            let plain = !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@+%".contains(c));
            if plain {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// What a finished command left.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Output {
    /// Exit status; `None` when a signal ended the command.
    pub status: Option<i32>,
    /// Everything the command wrote on its standard output.
    pub(crate) stdout: Vec<u8>,
    /// Everything the command wrote on its standard error (lossily decoded).
    pub(crate) stderr: String,
}

impl Output {
    /// A successful output that printed `stdout` (canned answers of tests and mocks).
    #[cfg(test)]
    pub(crate) fn ok(stdout: impl Into<Vec<u8>>) -> Self {
        Self {
            status: Some(0),
            stdout: stdout.into(),
            stderr: String::new(),
        }
    }

    /// True when the command exited with status 0.
    pub fn success(&self) -> bool {
        self.status == Some(0)
    }

    /// Standard output as text (invalid UTF-8 replaced).
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// The status as words for messages: "exit 1" or "killed by a signal".
    pub(crate) fn status_text(&self) -> String {
        match self.status {
            Some(code) => format!("exit {code}"),
            None => "killed by a signal".to_string(),
        }
    }
}

/// A failure to run something on a node. Run-time failures (exit 1), not bad input.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// The command could not be started at all.
    #[error("{host}: cannot run `{command}`: {source}")]
    Spawn {
        /// The node.
        host: String,
        /// The command as typed.
        command: String,
        /// Why the operating system refused.
        source: std::io::Error,
    },
    /// The command outlived its time limit and was killed.
    #[error("{host}: `{command}` did not finish within {} s and was killed", .timeout.as_secs())]
    Timeout {
        /// The node.
        host: String,
        /// The command as typed.
        command: String,
        /// Its time limit.
        timeout: Duration,
    },
    /// SSH itself failed: the host is unreachable, refused the key, or its host key is unknown.
    #[error("{host}: SSH: {reason}")]
    Ssh {
        /// The SSH host alias.
        host: String,
        /// What failed and what to check, with ssh's own message.
        reason: String,
    },
    /// The command ran and failed (the checked helpers only: [`Transport::run`] and friends).
    #[error("{host}: `{command}` failed ({status}): {stderr}")]
    Failed {
        /// The node.
        host: String,
        /// The command as typed.
        command: String,
        /// "exit N" or "killed by a signal".
        status: String,
        /// The first line of its standard error (or of its output when stderr was empty).
        stderr: String,
    },
}

/// A long-running command started with [`Transport::spawn`].
pub trait Process: Send + fmt::Debug {
    /// Its process id on the machine that runs it, when it has one.
    fn id(&self) -> Option<u32>;
    /// What it has written on its standard output so far.
    fn stdout_so_far(&self) -> Vec<u8>;
    /// `Some(output)` once it has exited by itself; `None` while it runs.
    fn try_wait(&mut self) -> Result<Option<Output>, TransportError>;
    /// Waits for it to exit by itself, killing it after `timeout`.
    fn wait(self: Box<Self>, timeout: Duration) -> Result<Output, TransportError>;
    /// Asks it to stop (SIGTERM), kills it after `grace`, and returns what it left.
    fn stop(self: Box<Self>, grace: Duration) -> Result<Output, TransportError>;
}

/// A way to run commands on one node (a namespace now, an SSH host later).
pub trait Transport: Send + Sync + fmt::Debug {
    /// The node's name as errors and reports show it (namespace name, SSH host alias).
    fn host(&self) -> &str;

    /// Runs a command to completion and returns what it left, whatever its exit status.
    fn exec(&self, cmd: &Command) -> Result<Output, TransportError>;

    /// Starts a long-running command (a generator, a sampler); output is collected as it comes.
    fn spawn(&self, argv: &[String]) -> Result<Box<dyn Process>, TransportError>;

    /// Runs a command and fails unless it exits with status 0; returns its output.
    fn check(&self, cmd: &Command) -> Result<Output, TransportError> {
        let out = self.exec(cmd)?;
        if out.success() {
            Ok(out)
        } else {
            Err(failed(self.host(), &cmd.argv, &out))
        }
    }

    /// Runs `argv` and fails unless it exits with status 0; returns its standard output as text.
    fn run(&self, argv: &[&str]) -> Result<String, TransportError> {
        self.check(&Command::new(argv.iter().copied()))
            .map(|out| out.stdout_text())
    }

    /// Writes `contents` to `path` on the node (through `tee`, so it works in `/sys` too).
    fn put_file(&self, path: &str, contents: &[u8]) -> Result<(), TransportError> {
        self.check(&Command::new(["tee", path]).stdin(contents))
            .map(drop)
    }

    /// Reads the file at `path` on the node.
    fn get_file(&self, path: &str) -> Result<Vec<u8>, TransportError> {
        self.check(&Command::new(["cat", path]))
            .map(|out| out.stdout)
    }
}

/// The error for a command that exited with a failure status.
pub(crate) fn failed(host: &str, argv: &[String], out: &Output) -> TransportError {
    let first_line = |s: &str| s.lines().find(|l| !l.trim().is_empty()).map(str::to_owned);
    let stderr = first_line(&out.stderr)
        .or_else(|| first_line(&out.stdout_text()))
        .unwrap_or_else(|| "no message".to_string());
    TransportError::Failed {
        host: host.to_string(),
        command: display_argv(argv),
        status: out.status_text(),
        stderr,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_display_as_typed() {
        let cmd = Command::new(["nft", "-f", "-", "add rule x"]);
        assert_eq!(cmd.to_string(), "nft -f - 'add rule x'");
        assert_eq!(display_argv(&["it's".into()]), r"'it'\''s'");
    }

    #[test]
    fn failures_name_host_command_and_first_error_line() {
        let out = Output {
            status: Some(1),
            stdout: vec![],
            stderr: "\nError: no such table\nmore".into(),
        };
        let err = failed("benchlab-0-dut", &["nft".into(), "list".into()], &out);
        assert_eq!(
            err.to_string(),
            "benchlab-0-dut: `nft list` failed (exit 1): Error: no such table"
        );
    }

    #[test]
    fn put_and_get_go_through_tee_and_cat() {
        let t = MockTransport::new("node");
        t.reply(&["cat", "/x"], Output::ok("hello"));
        t.put_file("/sys/class/net/a/threaded", b"1").unwrap();
        assert_eq!(t.get_file("/x").unwrap(), b"hello");
        let calls = t.calls();
        assert_eq!(calls[0].argv, ["tee", "/sys/class/net/a/threaded"]);
        assert_eq!(calls[0].stdin.as_deref(), Some(&b"1"[..]));
        assert_eq!(calls[1].argv, ["cat", "/x"]);
    }
}
