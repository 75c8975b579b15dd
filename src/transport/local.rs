//! Commands on this machine, and the child-process plumbing the netns (and later SSH)
//! transports share: they only put their own prefix (`ip netns exec NAME`, `ssh HOST`) in front
//! of the argument vector.

use std::fmt;
use std::io::{Read, Write};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use wait_timeout::ChildExt;

use super::{display_argv, Command, Output, Process, Transport, TransportError};

/// How long a finished command's output pipes may stay open (held by a daemon it started in
/// the background) before benchlab keeps what it read and stops waiting for the rest.
const PIPE_DRAIN: Duration = Duration::from_secs(1);

/// Runs commands on this machine, in benchlab's own namespaces.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct LocalTransport;

impl Transport for LocalTransport {
    fn host(&self) -> &str {
        "localhost"
    }

    fn exec(&self, cmd: &Command) -> Result<Output, TransportError> {
        exec_argv(self.host(), &cmd.argv, cmd)
    }

    fn spawn(&self, argv: &[String]) -> Result<Box<dyn Process>, TransportError> {
        Ok(Box::new(start(self.host(), argv, None)?))
    }
}

/// Runs `argv` (the transport's prefix plus `cmd.argv`) with `cmd`'s input and time limit.
pub(crate) fn exec_argv(
    host: &str,
    argv: &[String],
    cmd: &Command,
) -> Result<Output, TransportError> {
    let child = start(host, argv, cmd.stdin.as_deref())?;
    // Errors name the command the caller asked for, not the transport's prefix.
    Box::new(child).wait(cmd.timeout).map_err(|e| match e {
        TransportError::Timeout { host, timeout, .. } => TransportError::Timeout {
            host,
            command: cmd.to_string(),
            timeout,
        },
        other => other,
    })
}

/// Starts `argv` with its output collected by two threads (so a chatty command never blocks on
/// a full pipe) and `stdin` written then closed.
pub(crate) fn start(
    host: &str,
    argv: &[String],
    stdin: Option<&[u8]>,
) -> Result<ChildProcess, TransportError> {
    let command = display_argv(argv);
    let spawn_error = |source| TransportError::Spawn {
        host: host.to_string(),
        command: command.clone(),
        source,
    };
    let (program, args) = argv.split_first().ok_or_else(|| {
        spawn_error(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "empty command",
        ))
    })?;
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(spawn_error)?;
    let stdout = Collector::new(child.stdout.take());
    let stderr = Collector::new(child.stderr.take());
    if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
        // The output threads already drain the child, so this write cannot deadlock; a command
        // that exits without reading its input is not an error here (its status tells).
        if let Err(e) = pipe.write_all(bytes) {
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                let _ = child.kill();
                let _ = child.wait();
                return Err(spawn_error(e));
            }
        }
    }
    Ok(ChildProcess {
        host: host.to_string(),
        command,
        child,
        stdout,
        stderr,
    })
}

/// Reads one pipe to its end on a thread, keeping everything read so far visible.
struct Collector {
    buf: Arc<Mutex<Vec<u8>>>,
    thread: Option<JoinHandle<()>>,
}

impl Collector {
    fn new(pipe: Option<impl Read + Send + 'static>) -> Self {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let thread = pipe.map(|mut pipe| {
            let buf = Arc::clone(&buf);
            std::thread::spawn(move || {
                let mut chunk = [0u8; 8192];
                while let Ok(n) = pipe.read(&mut chunk) {
                    if n == 0 {
                        break;
                    }
                    buf.lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .extend_from_slice(&chunk[..n]);
                }
            })
        });
        Self { buf, thread }
    }

    fn snapshot(&self) -> Vec<u8> {
        self.buf.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Everything the pipe carried, waiting at most until `deadline` for its end.
    fn finish(&mut self, deadline: Instant) -> Vec<u8> {
        if let Some(thread) = self.thread.take() {
            while !thread.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(2));
            }
            if thread.is_finished() {
                let _ = thread.join();
            }
        }
        self.snapshot()
    }
}

/// A command running on this machine (possibly inside a namespace or an `ssh` client).
pub(crate) struct ChildProcess {
    host: String,
    command: String,
    child: Child,
    stdout: Collector,
    stderr: Collector,
}

impl fmt::Debug for ChildProcess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChildProcess")
            .field("host", &self.host)
            .field("command", &self.command)
            .field("pid", &self.child.id())
            .finish_non_exhaustive()
    }
}

impl ChildProcess {
    fn io_error(&self, source: std::io::Error) -> TransportError {
        TransportError::Spawn {
            host: self.host.clone(),
            command: self.command.clone(),
            source,
        }
    }

    fn output(&mut self, status: std::process::ExitStatus) -> Output {
        let deadline = Instant::now() + PIPE_DRAIN;
        Output {
            status: status.code(),
            stdout: self.stdout.finish(deadline),
            stderr: String::from_utf8_lossy(&self.stderr.finish(deadline)).into_owned(),
        }
    }

    fn kill_and_reap(&mut self) -> Result<std::process::ExitStatus, TransportError> {
        // Already gone is fine: kill() only fails for a reaped child.
        let _ = self.child.kill();
        self.child.wait().map_err(|e| self.io_error(e))
    }
}

impl Process for ChildProcess {
    fn id(&self) -> Option<u32> {
        Some(self.child.id())
    }

    fn stdout_so_far(&self) -> Vec<u8> {
        self.stdout.snapshot()
    }

    fn try_wait(&mut self) -> Result<Option<Output>, TransportError> {
        match self.child.try_wait().map_err(|e| self.io_error(e))? {
            None => Ok(None),
            Some(status) => Ok(Some(self.output(status))),
        }
    }

    fn wait(mut self: Box<Self>, timeout: Duration) -> Result<Output, TransportError> {
        match self
            .child
            .wait_timeout(timeout)
            .map_err(|e| self.io_error(e))?
        {
            Some(status) => Ok(self.output(status)),
            None => {
                self.kill_and_reap()?;
                Err(TransportError::Timeout {
                    host: self.host.clone(),
                    command: self.command.clone(),
                    timeout,
                })
            }
        }
    }

    fn stop(mut self: Box<Self>, grace: Duration) -> Result<Output, TransportError> {
        if let Ok(Some(status)) = self.child.try_wait() {
            return Ok(self.output(status));
        }
        let pid = i32::try_from(self.child.id()).expect("process ids fit in pid_t");
        // ESRCH means it exited between the two calls; the wait below reaps it either way.
        let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
        let status = match self
            .child
            .wait_timeout(grace)
            .map_err(|e| self.io_error(e))?
        {
            Some(status) => status,
            None => self.kill_and_reap()?,
        };
        Ok(self.output(status))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn exec_captures_output_status_and_input() {
        let out = LocalTransport
            .exec(&Command::new(["sh", "-c", "cat; echo err >&2; exit 3"]).stdin("in"))
            .unwrap();
        assert_eq!(out.status, Some(3));
        assert_eq!(out.stdout, b"in");
        assert_eq!(out.stderr, "err\n");
    }

    #[test]
    fn run_fails_with_the_host_and_the_command() {
        let err = LocalTransport.run(&["false"]).unwrap_err().to_string();
        assert_eq!(err, "localhost: `false` failed (exit 1): no message");
        let err = LocalTransport
            .run(&["/nonexistent/x"])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("localhost: cannot run `/nonexistent/x`: "),
            "{err}"
        );
    }

    #[test]
    fn a_command_past_its_time_limit_is_killed() {
        let cmd = Command::new(["sleep", "10"]).timeout(Duration::from_millis(100));
        let t0 = Instant::now();
        let err = LocalTransport.exec(&cmd).unwrap_err();
        assert!(matches!(err, TransportError::Timeout { .. }), "{err}");
        assert!(t0.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn a_spawned_process_is_stopped_with_sigterm_and_keeps_its_output() {
        let mut p = LocalTransport
            .spawn(&argv(&[
                "sh",
                "-c",
                "trap 'echo bye; exit 0' TERM; echo hi; while :; do sleep 0.05; done",
            ]))
            .unwrap();
        let t0 = Instant::now();
        while p.stdout_so_far().is_empty() && t0.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(p.try_wait().unwrap().is_none());
        let out = p.stop(Duration::from_secs(5)).unwrap();
        assert_eq!(out.stdout_text(), "hi\nbye\n");
        assert_eq!(out.status, Some(0));
    }

    #[test]
    fn a_process_deaf_to_sigterm_is_killed_after_the_grace() {
        let p = LocalTransport
            .spawn(&argv(&["sh", "-c", "trap '' TERM; echo hi; exec sleep 10"]))
            .unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let out = p.stop(Duration::from_millis(200)).unwrap();
        assert_eq!(out.status, None);
    }
}
