//! Mock senders and receivers for unit tests of the trial procedure and the run loop: they
//! hand out scripted seconds at once, fail or never end on demand, and need no root.

use std::time::Duration;

use crate::traffic::endpoint::{
    Receiver, ReceiverRecord, Sender, SenderRecord, SenderState, StopReason, Tick,
};

/// What a mock sender does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MockSend {
    /// Sends its seconds and ends.
    Ends,
    /// Fails as soon as it started.
    Fails,
    /// Runs until stopped.
    Hangs,
}

/// A mock sender whose seconds are `ticks`.
#[derive(Debug)]
pub(crate) struct MockSender {
    /// Its seconds.
    pub(crate) ticks: Vec<Tick>,
    /// How it behaves.
    pub(crate) send: MockSend,
    /// Why it was stopped, if it was.
    pub(crate) stopped: Option<StopReason>,
    /// Seconds past the trial it may run.
    pub(crate) grace: Duration,
    /// The files it leaves.
    pub(crate) files: Vec<(String, String)>,
    /// Frames it says its input queue dropped beyond its ring at the stop.
    pub(crate) late_pkts: u64,
}

impl MockSender {
    /// A sender of `ticks` behaving as `send`.
    pub(crate) fn new(ticks: Vec<Tick>, send: MockSend) -> Box<Self> {
        Box::new(Self {
            ticks,
            send,
            stopped: None,
            grace: Duration::ZERO,
            files: vec![("generator.log".into(), "sent\n".into())],
            late_pkts: 0,
        })
    }
}

impl Sender for MockSender {
    fn prepare(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
    fn start(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
    fn state(&mut self) -> anyhow::Result<SenderState> {
        Ok(match (self.send, self.stopped) {
            (MockSend::Fails, stopped) => SenderState::Failed {
                stopped: stopped.is_some(),
            },
            (MockSend::Hangs, None) => SenderState::Running,
            _ => SenderState::Ended,
        })
    }
    fn ticks(&mut self) -> anyhow::Result<Vec<Tick>> {
        Ok(self.ticks.clone())
    }
    fn grace(&self) -> Duration {
        self.grace
    }
    fn stop(&mut self, why: StopReason) -> anyhow::Result<()> {
        self.stopped = Some(why);
        Ok(())
    }
    fn failure(&self) -> anyhow::Error {
        anyhow::anyhow!("generator died")
    }
    fn finish(self: Box<Self>) -> anyhow::Result<SenderRecord> {
        Ok(SenderRecord {
            ticks: self.ticks,
            description: "mock".into(),
            files: self.files,
            late_pkts: self.late_pkts,
        })
    }
}

/// A mock receiver whose seconds are `ticks`.
#[derive(Debug)]
pub(crate) struct MockReceiver {
    /// Its seconds.
    pub(crate) ticks: Vec<Tick>,
}

impl Receiver for MockReceiver {
    fn start(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
    fn traffic_starts(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
    fn ticks(&mut self) -> anyhow::Result<Vec<Tick>> {
        Ok(self.ticks.clone())
    }
    fn drain(&self) -> Duration {
        Duration::ZERO
    }
    fn finish(self: Box<Self>) -> anyhow::Result<ReceiverRecord> {
        Ok(ReceiverRecord {
            ticks: self.ticks,
            files: vec![("receiver.log".into(), "counted\n".into())],
        })
    }
}

/// `n` seconds at `pps` each.
pub(crate) fn steady(n: usize, pps: f64) -> Vec<Tick> {
    vec![
        Tick {
            pkts: pps as u64,
            pps
        };
        n
    ]
}
