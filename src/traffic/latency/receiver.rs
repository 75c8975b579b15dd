//! The probe receiver: a packet socket on the receiving interface that only probes reach, each
//! with the kernel's arrival time (`CLOCK_REALTIME`), handed to the [`Matcher`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Context;

use super::frame;
use super::matcher::{lock, Matcher};
use super::sock::{PacketSocket, Queue};
use crate::traffic::{os, IfRef};

/// How often the receiving thread wakes with nothing received, to look at its stop flag.
const POLL: Duration = Duration::from_millis(20);

/// A running probe receiver.
#[derive(Debug)]
pub(crate) struct ProbeReceiver {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<anyhow::Result<()>>,
}

impl ProbeReceiver {
    /// Opens the socket on `iface` (in its namespace) and starts receiving: probes that arrive
    /// from now on go to `matcher`.
    pub(crate) fn start(
        iface: &IfRef,
        cpu: Option<usize>,
        matcher: Arc<Mutex<Matcher>>,
    ) -> anyhow::Result<ProbeReceiver> {
        let sock = os::in_netns(iface.netns.as_deref(), || {
            let info = crate::traffic::lookup(&mut crate::traffic::netlink_for(iface)?, iface)?;
            PacketSocket::receiver(info.ifindex, POLL)
                .with_context(|| format!("opening the probe receiver's socket on {iface}"))
        })?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("probe-rx".into())
            .spawn(move || run(&sock, cpu, &matcher, &flag))
            .context("starting the probe receiver's thread")?;
        Ok(ProbeReceiver { stop, thread })
    }

    /// Waits `drain` for probes still on their way, then stops.
    pub(crate) fn stop(self, drain: Duration) -> anyhow::Result<()> {
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
    matcher: &Mutex<Matcher>,
    stop: &AtomicBool,
) -> anyhow::Result<()> {
    os::block_stop_signals().context("blocking signals on the probe receiver's thread")?;
    if let Some(cpu) = cpu {
        os::pin_to_cpu(cpu)?;
    }
    let mut buf = vec![0u8; 2048];
    loop {
        // Once stopped, what the socket holds is still read, without waiting for more.
        let stopping = stop.load(Ordering::Relaxed);
        let got = sock
            .recv(&mut buf, Queue::Receive { wait: !stopping })
            .context("receiving probes")?;
        let Some((len, arrival)) = got else {
            if stopping {
                return Ok(());
            }
            continue;
        };
        if let Some(probe) = frame::decode(&buf[..len]) {
            lock(matcher).arrived(probe, arrival);
        }
    }
}
