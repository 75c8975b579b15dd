//! The probe receiver: each probe with its arrival time (`CLOCK_REALTIME`), read from a socket
//! that only probes reach or from the DUT's egress log, handed to the [`Matcher`].

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;

use super::egress::EgressLog;
use super::frame::Probe;
use super::ingress::IngressStamper;
use super::matcher::{lock, Matcher};
use super::on_interface;
use super::sock::{self, Batch, ProbeSocket, Queue, BATCH};
use super::worker::Worker;
use crate::traffic::{os, IfRef};

/// How long the receiving thread sleeps between reads. It never waits in the socket: a
/// sleeping reader would be woken by every probe, from the CPU that delivers it (on the virtual
/// lab, the DUT's), at the cost of a wake-up each (an interrupt between CPUs, through the
/// hypervisor on a virtual machine). The arrival times are the kernel's: a late read changes
/// none. The egress log wakes nobody: it is read at the same pace.
const POLL: Duration = Duration::from_millis(5);

/// Where the probes are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Listen {
    /// A packet socket on the receiving interface behind a filter on the probes' magic: any
    /// receiver, but the kernel runs it for every frame of the load that arrives there.
    Tap(IfRef),
    /// The probes sent to `addr`, an address of the receiver's own in namespace `netns` that
    /// the probes, and nothing else, are sent to: the load never reaches it. Read through a raw
    /// UDP socket bound to it, or, with `egress`, from the DUT's log of them as they leave.
    Local {
        /// The receiver's namespace (`None`: this one).
        netns: Option<String>,
        /// The probes' destination address.
        addr: IpAddr,
        /// The DUT's interface towards `addr`, whose egress logs each probe with its time of
        /// leaving and ends it there ([`super::egress`]: the kernel's clock then left alone for
        /// the load, the receiver's stack for the probes); `None`: the socket, with the kernel's
        /// arrival stamps.
        egress: Option<IfRef>,
        /// With `egress`, the DUT's interface the probes come in by, whose ingress records each
        /// probe's time of coming in ([`super::ingress`]): the probes' latency in the DUT, apart
        /// from their way to it; `None`: not recorded.
        ingress: Option<IfRef>,
        /// With `egress`, the DUT's CPU, kept out of idle halts while the probes run
        /// ([`os::hold_cpu_awake`]); `None`: every CPU of this host ([`os::hold_cpus_awake`]).
        dut_cpu: Option<usize>,
    },
}

/// The CPUs kept out of idle halts while logged probes run.
#[derive(Debug)]
enum Awake {
    /// The DUT's CPU, until the guard drops.
    Dut { _guard: os::CpuAwake },
    /// Every CPU of this host, until the request's file closes.
    Every { _request: std::fs::File },
}

impl std::fmt::Display for Listen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Listen::Tap(iface) => write!(f, "a tap on {iface}"),
            Listen::Local { netns, addr, .. } => match netns {
                None => write!(f, "{addr}"),
                Some(ns) => write!(f, "{addr} in {ns}"),
            },
        }
    }
}

/// Where the receiving thread reads the probes.
enum Source {
    /// A socket: each probe with the kernel's arrival stamp.
    Socket(ProbeSocket),
    /// The DUT's egress log: each probe with its time of leaving the DUT, and with the DUT's
    /// ingress times when they are recorded.
    Log(EgressLog, Option<IngressStamper>),
}

/// A running probe receiver.
#[derive(Debug)]
pub(crate) struct ProbeReceiver {
    /// The receiving thread, which holds the socket or the DUT's programs.
    worker: Worker<()>,
    /// With the egress log (the DUT is on this host), the DUT's CPU kept awake meanwhile.
    _awake: Option<Awake>,
}

impl ProbeReceiver {
    /// Opens the socket or attaches the programs `listen` says (in their namespaces) and
    /// starts receiving: probes that arrive from now on go to `matcher`.
    pub(crate) fn start(
        listen: &Listen,
        cpu: Option<usize>,
        matcher: Arc<Mutex<Matcher>>,
    ) -> anyhow::Result<ProbeReceiver> {
        let source = match listen {
            Listen::Local {
                egress: Some(dut),
                ingress,
                ..
            } => {
                let log = on_interface(dut, |i| Ok(EgressLog::attach(i)?))
                    .with_context(|| format!("logging the probes on {dut}'s egress"))?;
                let ingress = match ingress {
                    Some(dut) => Some(
                        on_interface(dut, |i| Ok(IngressStamper::attach(i)?))
                            .with_context(|| format!("stamping the probes on {dut}'s ingress"))?,
                    ),
                    None => None,
                };
                Source::Log(log, ingress)
            }
            Listen::Tap(iface) => Source::Socket(
                on_interface(iface, |i| Ok(ProbeSocket::tap(i)?))
                    .with_context(|| format!("opening the probe receiver's socket, {listen}"))?,
            ),
            Listen::Local {
                netns,
                addr,
                egress: None,
                ..
            } => Source::Socket(
                os::in_netns(netns.as_deref(), || Ok(ProbeSocket::local(*addr)?))
                    .with_context(|| format!("opening the probe receiver's socket, {listen}"))?,
            ),
        };
        let logged = matches!(source, Source::Log(..));
        if !logged {
            sock::await_receive_stamps()
                .with_context(|| format!("the probe receiver's socket, {listen}"))?;
        }
        let dut_cpu = match listen {
            Listen::Local { dut_cpu, .. } => *dut_cpu,
            Listen::Tap(_) => None,
        };
        let every = || -> anyhow::Result<Awake> {
            Ok(Awake::Every {
                _request: os::hold_cpus_awake().context("keeping the CPUs out of idle halts")?,
            })
        };
        let awake = match (logged, dut_cpu) {
            (false, _) => None,
            // A kernel without the CPU's own setting (no cpuidle) gets every CPU held instead.
            (true, Some(cpu)) => Some(match os::hold_cpu_awake(cpu) {
                Ok(guard) => Awake::Dut { _guard: guard },
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => every()?,
                Err(e) => Err(e)
                    .with_context(|| format!("keeping the DUT's CPU {cpu} out of idle halts"))?,
            }),
            (true, None) => Some(every()?),
        };
        // The DUT's programs go with the thread that reads them: attached while it runs.
        let worker = Worker::spawn("probe-rx", "the probe receiver", move |stop| {
            run(source, cpu, &matcher, stop)
        })?;
        Ok(ProbeReceiver {
            worker,
            _awake: awake,
        })
    }

    /// Waits `drain` for probes still on their way, then stops.
    pub(crate) fn stop(self, drain: Duration) -> anyhow::Result<()> {
        std::thread::sleep(drain);
        self.worker.stop()
    }
}

/// Reads probes from `source` until stopped.
fn run(
    mut source: Source,
    cpu: Option<usize>,
    matcher: &Mutex<Matcher>,
    stop: &AtomicBool,
) -> anyhow::Result<()> {
    os::block_stop_signals().context("blocking signals on the probe receiver's thread")?;
    if let Some(cpu) = cpu {
        os::pin_to_cpu(cpu)?;
    }
    let mut batch = Batch::new();
    loop {
        // Once stopped, what the socket or the log holds is still read.
        let stopping = stop.load(Ordering::Relaxed);
        let more = match &mut source {
            Source::Socket(sock) => {
                let n = sock
                    .recv(&mut batch, Queue::Receive)
                    .context("receiving probes")?;
                if n > 0 {
                    let mut m = lock(matcher);
                    for (probe, arrival) in batch.probes() {
                        if let Some(probe) = probe {
                            m.arrived(probe, arrival, None);
                        }
                    }
                }
                // A full batch may have left more behind.
                n == BATCH
            }
            Source::Log(log, ingress) => {
                let mut m = lock(matcher);
                log.read(|probe, left| {
                    let came_in = ingress.as_ref().map(|i| i.ingress_ns(probe.seq));
                    // The send stamp never left the sender: 0 says so to the matcher.
                    let probe = Probe {
                        stamp_ns: 0,
                        ..probe
                    };
                    m.arrived(probe, Some(left), came_in);
                })?;
                false
            }
        };
        if more {
            continue;
        }
        if stopping {
            return Ok(());
        }
        std::thread::sleep(POLL);
    }
}
