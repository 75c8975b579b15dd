//! The probe receiver: a packet socket on the receiving interface that only probes reach, each
//! with the kernel's arrival time; one-way latency = arrival − stamp, both `CLOCK_REALTIME`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Context;

use super::frame;
use super::seq::{Arrival, Sequence};
use super::sock::{PacketSocket, Queue};
use crate::stats::latency::Latency;
use crate::traffic::{os, IfRef};

/// How often the receiving thread wakes with nothing received, to look at its stop flag.
const POLL: Duration = Duration::from_millis(20);

/// What the receiver saw.
#[derive(Debug, Clone)]
pub(crate) struct ReceiverReport {
    /// One-way latency of each probe's first arrival, ns.
    pub(crate) latency: Latency,
    /// The arrivals' account by sequence number.
    pub(crate) sequence: Sequence,
    /// Probes whose arrival preceded their stamp (the clock stepped): not in `latency`.
    pub(crate) clock_steps: u64,
    /// Probes that came without an arrival time (never with software timestamps on): not in
    /// `latency`.
    pub(crate) unstamped: u64,
}

/// A running probe receiver.
#[derive(Debug)]
pub(crate) struct ProbeReceiver {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<anyhow::Result<ReceiverReport>>,
}

impl ProbeReceiver {
    /// Opens the socket on `iface` (in its namespace) and starts receiving; probes that arrive
    /// from now on are counted.
    pub(crate) fn start(iface: &IfRef, cpu: Option<usize>) -> anyhow::Result<ProbeReceiver> {
        let sock = os::in_netns(iface.netns.as_deref(), || {
            let info = crate::traffic::lookup(&mut crate::traffic::netlink_for(iface)?, iface)?;
            PacketSocket::receiver(info.ifindex, POLL)
                .with_context(|| format!("opening the probe receiver's socket on {iface}"))
        })?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("probe-rx".into())
            .spawn(move || run(&sock, cpu, &flag))
            .context("starting the probe receiver's thread")?;
        Ok(ProbeReceiver { stop, thread })
    }

    /// Waits `drain` for probes still on their way, stops and returns what it saw.
    pub(crate) fn stop(self, drain: Duration) -> anyhow::Result<ReceiverReport> {
        std::thread::sleep(drain);
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the probe receiver's thread panicked")))
    }
}

fn run(
    sock: &PacketSocket,
    cpu: Option<usize>,
    stop: &AtomicBool,
) -> anyhow::Result<ReceiverReport> {
    os::block_stop_signals().context("blocking signals on the probe receiver's thread")?;
    if let Some(cpu) = cpu {
        os::pin_to_cpu(cpu)?;
    }
    let mut report = ReceiverReport {
        latency: Latency::new(),
        sequence: Sequence::new(),
        clock_steps: 0,
        unstamped: 0,
    };
    let mut buf = vec![0u8; 2048];
    loop {
        // Once stopped, what the socket holds is still read, without waiting for more.
        let stopping = stop.load(Ordering::Relaxed);
        let got = sock
            .recv(&mut buf, Queue::Receive { wait: !stopping })
            .context("receiving probes")?;
        let Some((len, arrival)) = got else {
            if stopping {
                return Ok(report);
            }
            continue;
        };
        let Some(probe) = frame::decode(&buf[..len]) else {
            continue;
        };
        if report.sequence.observe(probe.seq) == Arrival::Duplicate {
            continue;
        }
        match arrival.map(|t| t.checked_sub(probe.stamp_ns)) {
            Some(Some(ns)) => report.latency.record(ns),
            Some(None) => report.clock_steps += 1,
            None => report.unstamped += 1,
        }
    }
}
