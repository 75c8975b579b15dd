//! The probe receiver: a socket that only probes reach, each with the kernel's arrival time
//! (`CLOCK_REALTIME`), handed to the [`Matcher`].

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Context;

use super::egress::EgressStamper;
use super::frame::Probe;
use super::ingress::IngressStamper;
use super::matcher::{lock, Matcher};
use super::on_interface;
use super::sock::{self, Batch, ProbeSocket, Queue, BATCH};
use crate::traffic::{os, IfRef};

/// How long the receiving thread sleeps between reads. It never waits in the socket: a
/// sleeping reader would be woken by every probe, from the CPU that delivers it (on the virtual
/// lab, the DUT's), at the cost of a wake-up each (an interrupt between CPUs, through the
/// hypervisor on a virtual machine). The arrival times are the kernel's: a late read changes
/// none.
const POLL: Duration = Duration::from_millis(5);

/// Where the probes are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Listen {
    /// A packet socket on the receiving interface behind a filter on the probes' magic: any
    /// receiver, but the kernel runs it for every frame of the load that arrives there.
    Tap(IfRef),
    /// A raw UDP socket bound to `addr`, an address of the receiver's own in namespace `netns`
    /// that the probes, and nothing else, are sent to: the load never reaches it.
    Local {
        /// The receiver's namespace (`None`: this one).
        netns: Option<String>,
        /// The probes' destination address.
        addr: IpAddr,
        /// The DUT's interface towards the receiver, whose egress stamps each probe with its
        /// time of leaving ([`super::egress`]: the kernel's clock then left alone for the
        /// load); `None`: the kernel's arrival stamps.
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

/// The CPUs kept out of idle halts while stamped probes run.
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

/// A running probe receiver.
#[derive(Debug)]
pub(crate) struct ProbeReceiver {
    /// The DUT's egress stamp, attached while the receiver runs.
    _stamper: Option<EgressStamper>,
    /// With the egress stamp (the DUT is on this host), the DUT's CPU kept awake meanwhile.
    _awake: Option<Awake>,
    stop: Arc<AtomicBool>,
    thread: JoinHandle<anyhow::Result<()>>,
}

impl ProbeReceiver {
    /// Opens the socket `listen` says (in its namespace) and starts receiving: probes that
    /// arrive from now on go to `matcher`.
    pub(crate) fn start(
        listen: &Listen,
        cpu: Option<usize>,
        matcher: Arc<Mutex<Matcher>>,
    ) -> anyhow::Result<ProbeReceiver> {
        let (sock, stamper) = match listen {
            Listen::Tap(iface) => (on_interface(iface, |i| Ok(ProbeSocket::tap(i)?)), None),
            Listen::Local {
                netns,
                addr,
                egress,
                ..
            } => {
                let stamper = match egress {
                    Some(dut) => Some(
                        on_interface(dut, |i| Ok(EgressStamper::attach(i)?))
                            .with_context(|| format!("stamping the probes on {dut}'s egress"))?,
                    ),
                    None => None,
                };
                // Stamped at the DUT's egress, the probes need no receive stamps.
                let stamps = stamper.is_none();
                (
                    os::in_netns(netns.as_deref(), || Ok(ProbeSocket::local(*addr, stamps)?)),
                    stamper,
                )
            }
        };
        let sock =
            sock.with_context(|| format!("opening the probe receiver's socket, {listen}"))?;
        let stamped = stamper.is_some();
        let ingress = match listen {
            Listen::Local {
                egress: Some(_),
                ingress: Some(dut),
                ..
            } => Some(
                on_interface(dut, |i| Ok(IngressStamper::attach(i)?))
                    .with_context(|| format!("stamping the probes on {dut}'s ingress"))?,
            ),
            _ => None,
        };
        if !stamped {
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
        let awake = match (stamped, dut_cpu) {
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
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        // The DUT's ingress stamp goes with the thread that reads it: attached while it runs.
        let thread = std::thread::Builder::new()
            .name("probe-rx".into())
            .spawn(move || run(&sock, (stamped, ingress.as_ref()), cpu, &matcher, &flag))
            .context("starting the probe receiver's thread")?;
        Ok(ProbeReceiver {
            _stamper: stamper,
            _awake: awake,
            stop,
            thread,
        })
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

/// Reads probes until stopped; `stamped`: each carries its arrival time (the DUT's egress
/// stamp) where its in-frame send stamp was; `ingress`: the DUT's ingress times, read for each.
fn run(
    sock: &ProbeSocket,
    (stamped, ingress): (bool, Option<&IngressStamper>),
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
        // Once stopped, what the socket holds is still read.
        let stopping = stop.load(Ordering::Relaxed);
        let n = sock
            .recv(&mut batch, Queue::Receive)
            .context("receiving probes")?;
        if n > 0 {
            let mut m = lock(matcher);
            for (probe, arrival) in batch.probes() {
                let Some(probe) = probe else { continue };
                let came_in = ingress.map(|i| i.ingress_ns(probe.seq));
                match stamped {
                    false => m.arrived(probe, arrival, came_in),
                    // The send stamp is gone: 0 says so to the matcher.
                    true => m.arrived(
                        Probe {
                            stamp_ns: 0,
                            ..probe
                        },
                        Some(probe.stamp_ns),
                        came_in,
                    ),
                }
            }
        }
        // A full batch may have left more behind.
        if n == BATCH {
            continue;
        }
        if stopping {
            return Ok(());
        }
        std::thread::sleep(POLL);
    }
}
