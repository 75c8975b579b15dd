//! A probe thread that stops when asked, and when its owner is dropped without asking (an
//! error or a panic between a stream's start and its stop): the sender then sends no more
//! and the DUT's programs, which the receiving thread holds, leave the DUT.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use anyhow::Context;

/// A running thread of the probes and its stop flag.
#[derive(Debug)]
pub(super) struct Worker<T> {
    stop: Arc<AtomicBool>,
    /// `None` once joined.
    thread: Option<JoinHandle<anyhow::Result<T>>>,
    /// What the thread is, for its errors: "the probe sender".
    what: &'static str,
}

impl<T: Send + 'static> Worker<T> {
    /// Starts `work` on a thread named `name`; it runs until it returns, which it must soon
    /// after the flag it is given is set.
    pub(super) fn spawn(
        name: &str,
        what: &'static str,
        work: impl FnOnce(&AtomicBool) -> anyhow::Result<T> + Send + 'static,
    ) -> anyhow::Result<Worker<T>> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || work(&flag))
            .with_context(|| format!("starting {what}'s thread"))?;
        Ok(Worker {
            stop,
            thread: Some(thread),
            what,
        })
    }

    /// Whether the thread has returned.
    pub(super) fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// Sets the flag, waits for the thread and returns what it returned.
    pub(super) fn stop(mut self) -> anyhow::Result<T> {
        self.stop.store(true, Ordering::Relaxed);
        let what = self.what;
        self.thread
            .take()
            .expect("joined only here, once")
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("{what}'s thread panicked")))
    }
}

impl<T> Drop for Worker<T> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A worker that runs until stopped, then marks `ended`.
    fn until_stopped(ended: Arc<AtomicBool>) -> Worker<u32> {
        Worker::spawn("test", "the test thread", move |stop| {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            ended.store(true, Ordering::Relaxed);
            Ok(7)
        })
        .unwrap()
    }

    #[test]
    fn stop_returns_what_the_thread_returned() {
        let ended = Arc::new(AtomicBool::new(false));
        let worker = until_stopped(ended.clone());
        assert!(!worker.is_finished());
        assert_eq!(worker.stop().unwrap(), 7);
        assert!(ended.load(Ordering::Relaxed));
    }

    #[test]
    fn a_worker_dropped_unstopped_ends_its_thread_before_the_drop_returns() {
        let ended = Arc::new(AtomicBool::new(false));
        drop(until_stopped(ended.clone()));
        assert!(ended.load(Ordering::Relaxed));
    }
}
