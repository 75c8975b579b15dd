//! netmap pkt-gen on remote hosts as a trial's [`Sender`] and [`Receiver`]. pkt-gen stops after
//! a packet count, so benchlab stops it once the trial's seconds (after its link wait) have
//! passed; its per-second lines are read by `pktgen::log` (as archived logs are), and its idle
//! seconds before traffic (the netmap link wait) are left out, so that sender and receiver
//! start together.
//!
//! [`Sender`]: crate::traffic::endpoint::Sender
//! [`Receiver`]: crate::traffic::endpoint::Receiver

use std::time::Duration;

use super::{count_for, per_second, PktgenRx, PktgenTx};
use crate::traffic::endpoint::{
    file_name, Load, Receiver, ReceiverRecord, Sender, SenderRecord, SenderState, StopReason, Tick,
};
use crate::traffic::remote::generator::{NewReceiver, RemoteGenerator};
use crate::traffic::remote::{RemoteNode, RemoteRun, DRAIN};

/// The packet count of a pkt-gen sender at `max`: 100 GbE line rate of 64-byte frames.
const MAX_PPS: f64 = 148_809_524.0;
/// pkt-gen waits 2 s for its link and then sends; stopped this long after the trial's time.
const GRACE: Duration = Duration::from_secs(3);

/// The seconds of pkt-gen's output so far (complete lines), from its first second of traffic.
fn pktgen_ticks(out: &[u8]) -> Vec<Tick> {
    let text = String::from_utf8_lossy(out);
    let complete = text.rfind('\n').map_or("", |end| &text[..end]);
    per_second(complete)
        .into_iter()
        .skip_while(|s| s.pps == 0.0)
        .map(|s| Tick {
            pkts: s.pkts,
            pps: s.pps,
        })
        .collect()
}

/// netmap pkt-gen at both ends: `pkt-gen -f tx` on the senders, `pkt-gen -f rx` on the receiver.
pub(crate) struct Pktgen;

impl RemoteGenerator for Pktgen {
    fn name(&self) -> &'static str {
        "pkt-gen"
    }

    fn label(&self) -> &'static str {
        "pkt-gen -f tx"
    }

    fn sender(&self, node: &RemoteNode, load: &Load, k: usize, of: usize) -> Box<dyn Sender> {
        Box::new(PktgenSender::new(node, load, k, of))
    }

    fn receiver(&self) -> Option<NewReceiver> {
        Some(|node| Box::new(PktgenReceiver::new(node)))
    }
}

/// `pkt-gen -f tx` on a remote sender.
#[derive(Debug)]
pub(crate) struct PktgenSender {
    run: RemoteRun,
    /// Which of `of` senders it is, for its file names.
    k: usize,
    of: usize,
}

impl PktgenSender {
    /// Sender `k` of `of`, sending `load` from `node`: enough packets for the trial at the
    /// asked rate (or at 100 GbE line rate).
    pub(crate) fn new(node: &RemoteNode, load: &Load, k: usize, of: usize) -> Self {
        let pps = load.pps().map_or(MAX_PPS, |p| p as f64);
        let count = count_for(load.seconds, pps);
        let argv = PktgenTx::from_load(load, &node.iface, &node.dut_mac, count).argv();
        Self {
            run: RemoteRun::new(node.host.clone(), argv),
            k,
            of,
        }
    }
}

impl Sender for PktgenSender {
    fn prepare(&mut self) -> anyhow::Result<()> {
        Ok(())
    }

    fn start(&mut self) -> anyhow::Result<()> {
        self.run.spawn()
    }

    fn state(&mut self) -> anyhow::Result<SenderState> {
        let stopped = self.run.stopped;
        Ok(match self.run.poll()? {
            None => SenderState::Running,
            Some(out) if out.success() || stopped == Some(StopReason::TimeUp) => SenderState::Ended,
            Some(_) => SenderState::Failed {
                stopped: stopped.is_some(),
            },
        })
    }

    fn ticks(&mut self) -> anyhow::Result<Vec<Tick>> {
        Ok(pktgen_ticks(&self.run.stdout()?))
    }

    fn grace(&self) -> Duration {
        GRACE
    }

    fn stop(&mut self, why: StopReason) -> anyhow::Result<()> {
        self.run.stop(why)
    }

    fn failure(&self) -> anyhow::Error {
        self.run.failure()
    }

    fn finish(mut self: Box<Self>) -> anyhow::Result<SenderRecord> {
        Ok(SenderRecord {
            ticks: self.ticks()?,
            description: format!("netmap pkt-gen on {}", self.run.host.host()),
            // The raw log, first line the command as the old harness wrote it.
            files: vec![(
                file_name("generator", "log", self.k, self.of),
                self.run.log(),
            )],
            late_pkts: 0,
        })
    }
}

/// `pkt-gen -f rx` on a remote receiver.
#[derive(Debug)]
pub(crate) struct PktgenReceiver {
    run: RemoteRun,
}

impl PktgenReceiver {
    /// The receiver counting on `node`'s interface.
    pub(crate) fn new(node: &RemoteNode) -> Self {
        let argv = PktgenRx {
            iface: node.iface.clone(),
            wait_s: 2,
            no_normalize: true,
        }
        .argv();
        Self {
            run: RemoteRun::new(node.host.clone(), argv),
        }
    }
}

impl Receiver for PktgenReceiver {
    fn start(&mut self) -> anyhow::Result<()> {
        self.run.spawn()?;
        // pkt-gen says `Ready...` once its netmap link wait is over.
        self.run
            .wait_ready(&|out| Ok(String::from_utf8_lossy(out).contains("Ready")))
    }

    fn traffic_starts(&mut self) -> anyhow::Result<()> {
        // Its idle seconds are left out by `pktgen_ticks` instead.
        Ok(())
    }

    fn ticks(&mut self) -> anyhow::Result<Vec<Tick>> {
        Ok(pktgen_ticks(&self.run.stdout()?))
    }

    fn drain(&self) -> Duration {
        DRAIN
    }

    fn finish(mut self: Box<Self>) -> anyhow::Result<ReceiverRecord> {
        self.run.stop(StopReason::TimeUp)?;
        Ok(ReceiverRecord {
            ticks: self.ticks()?,
            files: vec![("receiver.log".to_string(), self.run.log())],
        })
    }
}
