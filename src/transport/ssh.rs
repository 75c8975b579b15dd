//! Commands on a remote node through OpenSSH: `ssh -o BatchMode=yes -o ConnectTimeout=N
//! [-F CONFIG] -- ALIAS 'arg0' 'arg1' …`.
//!
//! The node is an OpenSSH host alias, so the user's `ssh_config` (user, port, keys, jump hosts,
//! `ControlMaster` multiplexing) applies unchanged. `BatchMode=yes` makes a missing key fail at
//! once instead of prompting for a password that nobody will type.
//!
//! Quoting: sshd always hands the command line to the remote user's login shell (`$SHELL -c
//! LINE`), whatever the client does. benchlab therefore quotes every argv element exactly once,
//! in single quotes (a `'` inside becomes `'\''`), and joins them with spaces: a POSIX shell
//! (sh, bash, dash, zsh, ksh) turns that line back into the very same argv, with quotes,
//! spaces, `$`, `;`, `*`, backslashes and newlines untouched. There is no other shell layer.
//! The remote login shell must be a POSIX shell: csh/tcsh (root's shell on FreeBSD before 14)
//! reject a newline inside single quotes, so give benchlab's user `/bin/sh` there.
//!
//! Long-running commands (generators) are started as `sh -c 'echo $$; exec "$@"' sh ARGV…`:
//! the first output line is the remote process id, which [`Process::stop`] signals with a
//! second `ssh … kill -TERM PID` (stopping the local `ssh` client alone would leave the remote
//! command running, because no terminal is allocated to carry a hang-up).
//!
//! Connections are shared (`ControlMaster=auto`, `ControlPersist=2`): the first command to a
//! node opens a master connection that later ones reuse for as long as commands keep coming,
//! and that closes itself 2 s after the last. A command then costs one round trip instead of
//! a TCP and SSH handshake: 0.11 s against 0.38 s measured on a loaded machine, which is what
//! lets the alternating design switch an SSH DUT's config set within a phase. The socket
//! (`$TMPDIR/benchlab-ssh-…`) is named after the ssh_config file too, so that two labs whose
//! nodes have the same address in different namespaces never share one.
//!
//! A failure of SSH itself (status 255 and ssh's own message on stderr) becomes
//! [`TransportError::Ssh`], one line naming the host and what to check.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::local::{exec_argv, start, ChildProcess};
use super::{Command, Output, Process, Transport, TransportError};

/// How long benchlab waits for a TCP connection and the SSH handshake when LAB.toml sets none.
pub(crate) const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs commands on a remote node through the OpenSSH client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshTransport {
    alias: String,
    connect_timeout: Duration,
    config: Option<PathBuf>,
}

impl SshTransport {
    /// A transport to the OpenSSH host alias `alias` (a name from ssh_config, or a host name).
    pub fn new(alias: impl Into<String>) -> Self {
        Self {
            alias: alias.into(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            config: None,
        }
    }

    /// Sets how long a connection may take (`-o ConnectTimeout`, whole seconds, at least 1).
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Reads this ssh_config file instead of the user's (`ssh -F`).
    #[must_use]
    pub fn config_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.config = Some(path.into());
        self
    }

    /// The local `ssh` command line that runs `argv` on the node.
    pub(crate) fn ssh_argv(&self, argv: &[String]) -> Vec<String> {
        self.command_line("auto", argv)
    }

    /// The command line with `ControlMaster=master`: a long-running command (`spawn`) uses a
    /// shared connection but never opens one, since stopping it may kill its process group,
    /// and a master killed so leaves its socket behind.
    fn command_line(&self, master: &str, argv: &[String]) -> Vec<String> {
        let mut out = self.options(master);
        out.push("--".into());
        out.push(self.alias.clone());
        out.push(remote_command_line(argv));
        out
    }

    /// `ssh` and its options, up to the alias.
    fn options(&self, master: &str) -> Vec<String> {
        let mut out: Vec<String> = vec!["ssh".into(), "-o".into(), "BatchMode=yes".into()];
        out.push("-o".into());
        out.push(format!(
            "ConnectTimeout={}",
            self.connect_timeout.as_secs().max(1)
        ));
        out.extend(["-o".into(), format!("ControlMaster={master}")]);
        out.extend(["-o".into(), format!("ControlPath={}", self.control_path())]);
        out.extend(["-o".into(), "ControlPersist=2".into()]);
        if let Some(config) = &self.config {
            out.push("-F".into());
            out.push(config.display().to_string());
        }
        out
    }

    /// Closes the shared connection now (`ssh -O exit`) rather than 2 s after the last
    /// command, and removes this ssh_config's sockets that no master holds any more (a master
    /// whose peer vanished, a rebooted DUT, leaves its socket): benchlab leaves nothing behind.
    /// Nothing to close is not an error.
    pub fn close(&self) {
        let mut argv = self.options("no");
        argv.extend(["-O".into(), "exit".into(), "--".into(), self.alias.clone()]);
        let _ = std::process::Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
        let prefix = self.control_path().trim_end_matches("%C").to_string();
        let Ok(dir) = std::fs::read_dir(std::env::temp_dir()) else {
            return;
        };
        for entry in dir.flatten() {
            let path = entry.path();
            let stale = path.display().to_string().starts_with(&prefix)
                && std::os::unix::net::UnixStream::connect(&path).is_err();
            if stale {
                let _ = std::fs::remove_file(&path);
            }
        }
    }

    /// The shared connection's socket: `%C` (ssh's hash of user, host and port) and a hash of
    /// the ssh_config file in use.
    fn control_path(&self) -> String {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.config.hash(&mut h);
        std::env::temp_dir()
            .join(format!("benchlab-ssh-{:08x}-%C", h.finish() as u32))
            .display()
            .to_string()
    }

    /// Maps an output whose status and stderr say that SSH itself failed to its error.
    fn check_ssh(&self, out: Output) -> Result<Output, TransportError> {
        match ssh_failure(&out) {
            Some(reason) => Err(TransportError::Ssh {
                host: self.alias.clone(),
                reason,
            }),
            None => Ok(out),
        }
    }
}

/// `argv` as one command line for a POSIX shell: every element single-quoted exactly once.
pub fn remote_command_line(argv: &[String]) -> String {
    argv.iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One word single-quoted for a POSIX shell (`'` becomes `'\''`).
pub(crate) fn shell_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// Why SSH itself failed, as one line with a hint, when `out` is ssh's own failure (status 255
/// with one of ssh's messages) rather than the remote command's.
fn ssh_failure(out: &Output) -> Option<String> {
    if out.status != Some(255) {
        return None;
    }
    let line = out
        .stderr
        .lines()
        .map(str::trim)
        .find(|l| {
            l.starts_with("ssh:")
                || l.contains("Permission denied (")
                || l.starts_with("Host key verification failed")
                || l.starts_with("kex_exchange_identification")
                || l.starts_with("Connection closed by")
                || l.starts_with("Connection timed out")
                || l.starts_with("Connection reset by")
        })?
        .trim_start_matches("ssh: ")
        .to_string();
    let hint = if line.contains("Permission denied") {
        "the host refused the key: check IdentityFile in ssh_config or ssh-agent (BatchMode \
         forbids passwords)"
    } else if line.contains("Host key verification failed") {
        "its host key is unknown or changed: check known_hosts (`ssh` it once by hand)"
    } else if line.contains("Could not resolve hostname") {
        "unknown host: check the alias in ssh_config"
    } else {
        "unreachable: check that it is up and that `ssh` to it works"
    };
    Some(format!("{hint} ({line})"))
}

impl Transport for SshTransport {
    fn host(&self) -> &str {
        &self.alias
    }

    fn exec(&self, cmd: &Command) -> Result<Output, TransportError> {
        let out = exec_argv(&self.alias, &self.ssh_argv(&cmd.argv), cmd)?;
        self.check_ssh(out)
    }

    fn spawn(&self, argv: &[String]) -> Result<Box<dyn Process>, TransportError> {
        let wrapped: Vec<String> = ["sh", "-c", r#"echo $$; exec "$@""#, "sh"]
            .into_iter()
            .map(str::to_string)
            .chain(argv.iter().cloned())
            .collect();
        let child = start(&self.alias, &self.command_line("no", &wrapped), None)?;
        Ok(Box::new(SshProcess {
            transport: self.clone(),
            child: Box::new(child),
        }))
    }

    /// Writes through `cat > PATH` on the node (the contents are not echoed back, unlike `tee`).
    fn put_file(&self, path: &str, contents: &[u8]) -> Result<(), TransportError> {
        self.check(&Command::new(["sh", "-c", r#"cat > "$1""#, "sh", path]).stdin(contents))
            .map(drop)
    }
}

/// A command started on a remote node; its first output line is its remote process id.
#[derive(Debug)]
struct SshProcess {
    transport: SshTransport,
    child: Box<ChildProcess>,
}

/// The command's own output: everything after the wrapper's pid line.
fn strip_pid_line(stdout: &[u8]) -> Vec<u8> {
    match stdout.iter().position(|&b| b == b'\n') {
        Some(i) => stdout[i + 1..].to_vec(),
        None => Vec::new(),
    }
}

impl SshProcess {
    fn remote_pid(&self) -> Option<u32> {
        let out = self.child.stdout_so_far();
        let end = out.iter().position(|&b| b == b'\n')?;
        std::str::from_utf8(&out[..end]).ok()?.trim().parse().ok()
    }

    /// Signals the remote process; its failure (the process already gone) is no error here.
    fn signal(&self, signal: &str, pid: u32) {
        let pid = pid.to_string();
        let _ = self.transport.exec(
            &Command::new(["kill", signal, pid.as_str()]).timeout(self.transport.connect_timeout),
        );
    }
}

/// The wrapped command's output, or the SSH failure it hides.
fn finish(transport: &SshTransport, mut out: Output) -> Result<Output, TransportError> {
    out.stdout = strip_pid_line(&out.stdout);
    transport.check_ssh(out)
}

impl Process for SshProcess {
    fn id(&self) -> Option<u32> {
        self.remote_pid()
    }

    fn stdout_so_far(&self) -> Vec<u8> {
        strip_pid_line(&self.child.stdout_so_far())
    }

    fn try_wait(&mut self) -> Result<Option<Output>, TransportError> {
        match self.child.try_wait()? {
            None => Ok(None),
            Some(out) => finish(&self.transport, out).map(Some),
        }
    }

    fn wait(self: Box<Self>, timeout: Duration) -> Result<Output, TransportError> {
        let this = *self;
        let out = this.child.wait(timeout)?;
        finish(&this.transport, out)
    }

    fn stop(mut self: Box<Self>, grace: Duration) -> Result<Output, TransportError> {
        if let Some(out) = self.child.try_wait()? {
            return finish(&self.transport, out);
        }
        let t0 = Instant::now();
        if let Some(pid) = self.remote_pid() {
            self.signal("-TERM", pid);
            while t0.elapsed() < grace {
                if let Some(out) = self.child.try_wait()? {
                    return finish(&self.transport, out);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            self.signal("-KILL", pid);
        }
        let this = *self;
        let out = this.child.stop(grace)?;
        finish(&this.transport, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn every_argument_is_single_quoted_once() {
        let line = remote_command_line(&argv(&["printf", "%s", "it's $HOME;\n*"]));
        assert_eq!(line, "'printf' '%s' 'it'\\''s $HOME;\n*'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn a_posix_shell_reads_the_line_back_into_the_same_argv() {
        let tricky = argv(&[
            "a b",
            "it's",
            "$HOME",
            "`id`",
            "$(id)",
            "x; echo injected",
            "*",
            "back\\slash\\",
            "new\nline",
            "\"dq\"",
            "",
            "!",
            "~",
        ]);
        let line = remote_command_line(&tricky);
        let script = format!("for a in {line}; do printf '%s\\0' \"$a\"; done");
        let out = std::process::Command::new("sh")
            .args(["-c", &script])
            .output()
            .unwrap();
        let got: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .split_terminator('\0')
            .map(str::to_string)
            .collect();
        assert_eq!(got, tricky);
    }

    #[test]
    fn the_ssh_command_line_names_the_alias_after_the_options() {
        let t = SshTransport::new("dut1")
            .connect_timeout(Duration::from_secs(3))
            .config_file("/tmp/cfg");
        let line = t.ssh_argv(&argv(&["uname", "-a"])).join(" ");
        assert!(
            line.starts_with("ssh -o BatchMode=yes -o ConnectTimeout=3 -o ControlMaster=auto "),
            "{line}"
        );
        assert!(
            line.ends_with(" -o ControlPersist=2 -F /tmp/cfg -- dut1 'uname' '-a'"),
            "{line}"
        );
        // Another ssh_config, another shared connection.
        let other = SshTransport::new("dut1").config_file("/tmp/other");
        assert_ne!(t.control_path(), other.control_path());
        assert!(t.control_path().ends_with("-%C"));
    }

    #[test]
    fn ssh_failures_are_told_apart_from_the_remote_commands_status() {
        let out = |status, stderr: &str| Output {
            status: Some(status),
            stdout: vec![],
            stderr: stderr.into(),
        };
        let refused = out(
            255,
            "ssh: connect to host 10.0.0.1 port 22: Connection refused\n",
        );
        assert_eq!(
            ssh_failure(&refused).unwrap(),
            "unreachable: check that it is up and that `ssh` to it works \
             (connect to host 10.0.0.1 port 22: Connection refused)"
        );
        let key = out(255, "root@10.0.0.1: Permission denied (publickey).\n");
        assert!(ssh_failure(&key)
            .unwrap()
            .starts_with("the host refused the key"));
        // The remote command's own 255, or an ssh-like message with another status, is not SSH's.
        assert_eq!(ssh_failure(&out(255, "my tool failed\n")), None);
        assert_eq!(ssh_failure(&out(1, "ssh: nope\n")), None);
        let err = SshTransport::new("dut1").check_ssh(refused).unwrap_err();
        assert!(
            err.to_string().starts_with("dut1: SSH: unreachable"),
            "{err}"
        );
    }

    #[test]
    fn the_pid_line_is_not_part_of_the_output() {
        assert_eq!(strip_pid_line(b"123\nhello\n"), b"hello\n");
        assert_eq!(strip_pid_line(b"123"), b"");
    }
}
