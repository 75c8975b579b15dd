//! `MockTransport`: a transport for unit tests. It records every command (with its input) and
//! answers with canned outputs, so config sets and the lab's command sequences can be tested
//! without root or namespaces.

use std::sync::Mutex;
use std::time::Duration;

use super::{Command, Output, Process, Transport, TransportError};

/// Records commands and answers each with the last canned reply whose argv prefix matches it
/// (or a silent success). Unit tests only.
#[derive(Debug)]
pub(crate) struct MockTransport {
    host: String,
    calls: Mutex<Vec<Command>>,
    replies: Mutex<Vec<(Vec<String>, Output)>>,
}

impl MockTransport {
    /// A mock node called `host`.
    pub(crate) fn new(host: impl Into<String>) -> Self {
        Self {
            host: host.into(),
            calls: Mutex::new(Vec::new()),
            replies: Mutex::new(Vec::new()),
        }
    }

    /// Answers commands starting with `prefix` with `output` (later replies win).
    pub(crate) fn reply(&self, prefix: &[&str], output: Output) {
        let prefix = prefix.iter().map(|s| s.to_string()).collect();
        lock(&self.replies).push((prefix, output));
    }

    /// Every command run or spawned so far, in order (spawned ones with no input).
    pub(crate) fn calls(&self) -> Vec<Command> {
        lock(&self.calls).clone()
    }

    /// The argument vectors of [`calls`](Self::calls), joined with spaces, for short asserts.
    pub(crate) fn commands(&self) -> Vec<String> {
        self.calls().iter().map(|c| c.argv.join(" ")).collect()
    }

    fn answer(&self, cmd: &Command) -> Output {
        lock(&self.calls).push(cmd.clone());
        lock(&self.replies)
            .iter()
            .rev()
            .find(|(prefix, _)| cmd.argv.starts_with(prefix))
            .map(|(_, out)| out.clone())
            .unwrap_or_else(|| Output::ok(""))
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Transport for MockTransport {
    fn host(&self) -> &str {
        &self.host
    }

    fn exec(&self, cmd: &Command) -> Result<Output, TransportError> {
        Ok(self.answer(cmd))
    }

    fn spawn(&self, argv: &[String]) -> Result<Box<dyn Process>, TransportError> {
        Ok(Box::new(MockProcess(
            self.answer(&Command::new(argv.iter().cloned())),
        )))
    }
}

/// A spawned mock command: already finished with its canned output.
#[derive(Debug)]
struct MockProcess(Output);

impl Process for MockProcess {
    fn id(&self) -> Option<u32> {
        None
    }

    fn stdout_so_far(&self) -> Vec<u8> {
        self.0.stdout.clone()
    }

    fn try_wait(&mut self) -> Result<Option<Output>, TransportError> {
        Ok(Some(self.0.clone()))
    }

    fn wait(self: Box<Self>, _timeout: Duration) -> Result<Output, TransportError> {
        Ok(self.0)
    }

    fn stop(self: Box<Self>, _grace: Duration) -> Result<Output, TransportError> {
        Ok(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_matching_reply_wins_and_calls_are_recorded() {
        let t = MockTransport::new("dut");
        t.reply(&["nft"], Output::ok("a"));
        t.reply(&["nft", "-j"], Output::ok("b"));
        assert_eq!(t.run(&["nft", "-j", "list"]).unwrap(), "b");
        assert_eq!(t.run(&["nft", "list"]).unwrap(), "a");
        assert_eq!(t.run(&["true"]).unwrap(), "");
        let p = t.spawn(&["gen".to_string()]).unwrap();
        assert!(p.wait(Duration::ZERO).unwrap().success());
        assert_eq!(t.commands(), ["nft -j list", "nft list", "true", "gen"]);
    }
}
