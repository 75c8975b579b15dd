//! The latency floor: probes from benchlab's sender straight to its receiver over one veth, no
//! DUT in between. What any latency measured through a DUT on this machine cannot go below:
//! from the kernel's transmit stamp in veth's transmit routine to the kernel's arrival stamp,
//! through veth. It also bounds the error of the transmit stamp as the send time (the time
//! from that stamp to the wire): the floor holds it, with the arrival stamp's and the crossing.
//!
//! The self-test builds its own throwaway lab (namespaces `benchlab-f<pid>x<n>-sender` and
//! `-receiver`, joined by one veth pair) owned like any lab (`lab::claim`): removed
//! when it ends, on an error, a panic (its guard) or a signal, and by the next start if this
//! process is killed.

use std::net::IpAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::addressing::{Net, Port};
use super::{virt, Guard, NAMESPACE_PREFIX};
use crate::traffic::latency::{Listen, ProbeConfig, ProbeStream, Probes};
use crate::traffic::packet::{FlowRange, FrameSpec, Mac};
use crate::traffic::IfRef;
use crate::transport::{LocalTransport, NetnsTransport, Transport};

/// What the floor's lab needs: (tool, Debian package).
const FLOOR_TOOLS: &[(&str, &str)] = &[
    ("ip", "iproute2"),
    ("ethtool", "ethtool"),
    ("sysctl", "procps"),
];

/// How long the receiver waits for probes in flight once the sender stopped.
const DRAIN: Duration = Duration::from_millis(100);

/// The floor self-test's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FloorConfig {
    /// How long probes are sent.
    pub duration: Duration,
    /// Probes per second.
    pub rate_pps: u64,
    /// Probe frame size, FCS included (raised to what holds a probe).
    pub frame_size: usize,
    /// Whether one probe in ten is a first-packet probe, on a 5-tuple of its own.
    pub first_packet: bool,
    /// Whether the receiver taps its interface (a packet socket that every frame passes, as on
    /// a receiver with no address of its own for the probes) instead of reading a socket for
    /// its address (as the virtual lab's trials do). Both read the same arrival stamp.
    pub tap: bool,
}

impl Default for FloorConfig {
    fn default() -> Self {
        FloorConfig {
            duration: Duration::from_secs(10),
            rate_pps: crate::traffic::latency::DEFAULT_RATE_PPS,
            frame_size: 64,
            first_packet: false,
            tap: false,
        }
    }
}

/// The floor's probes go from this address, port [`PORT`]...
const SOURCE: &str = "198.18.0.1";
/// ... to this one, the receiver's.
const DESTINATION: &str = "198.19.0.1";
/// Their UDP ports.
const PORT: u16 = 4000;

/// The floor's lab: its id and the two ends of its veth.
#[derive(Debug)]
pub struct FloorLab {
    id: String,
    /// The sender's end.
    pub(crate) sender: IfRef,
    /// The receiver's end.
    pub(crate) receiver: IfRef,
    /// The receiver's address, the probes' destination.
    pub(crate) address: IpAddr,
    guard: Guard,
}

impl FloorLab {
    /// Builds a new floor lab; dropping it removes it.
    pub fn up() -> Result<FloorLab> {
        static N: AtomicU32 = AtomicU32::new(0);
        virt::preflight(FLOOR_TOOLS)?;
        let id = format!(
            "f{}x{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        std::fs::create_dir_all(super::RUN_DIR)
            .with_context(|| format!("cannot create {}", super::RUN_DIR))?;
        super::claim(&id)?;
        super::SIGNAL_HANDLER.call_once(super::remove_labs_on_signal);
        super::lock_live().push(id.clone());
        // From here on, an error or a panic drops the guard, which removes what was built.
        let guard = Guard {
            id: id.clone(),
            armed: true,
        };
        let ns = |role: &str| format!("{NAMESPACE_PREFIX}{id}-{role}");
        let port = |role: &str, last: u8, addrs| Port {
            ns: ns(role),
            name: format!("bl{id}{}", &role[..1]),
            mac: Mac([0x02, 0, 0, 0, 0xf1, last]),
            addrs,
        };
        let address: IpAddr = DESTINATION.parse()?;
        let r = port(
            "receiver",
            2,
            vec![Net {
                addr: address,
                len: 32,
            }],
        );
        let s = port("sender", 1, Vec::new());
        let lab = FloorLab {
            sender: IfRef::parse(&format!("{}/{}", s.ns, s.name))?,
            receiver: IfRef::parse(&format!("{}/{}", r.ns, r.name))?,
            address,
            id,
            guard,
        };
        build(&s, &r).with_context(|| format!("building the latency floor's lab {}", lab.id))?;
        Ok(lab)
    }

    /// Removes the lab, reporting what failed.
    pub(crate) fn down(mut self) -> Result<()> {
        self.guard.armed = false;
        super::teardown(&self.id)
    }

    /// The frames the floor's probes use: sender MAC to receiver MAC, one test-range flow to
    /// the receiver's address.
    pub(crate) fn spec(&self, frame_size: usize) -> Result<FrameSpec> {
        let flow = |a: &str| format!("{a}:{PORT}").parse::<FlowRange>();
        Ok(FrameSpec::new(
            Mac([0x02, 0, 0, 0, 0xf1, 1]),
            Mac([0x02, 0, 0, 0, 0xf1, 2]),
            flow(SOURCE)?,
            flow(DESTINATION)?,
            frame_size.max(crate::traffic::latency::frame::min_frame(
                crate::traffic::packet::Family::Inet4,
            )),
        )?)
    }
}

/// Two namespaces, silent (the lab's sysctls, the receiver's too), joined by `s`–`r`, up, with
/// their addresses and nothing that aggregates frames (as the lab's ports).
fn build(s: &Port, r: &Port) -> Result<()> {
    for p in [s, r] {
        LocalTransport.run(&["ip", "netns", "add", &p.ns])?;
        virt::sysctl(&NetnsTransport::new(&p.ns), virt::NODE_SYSCTLS)?;
    }
    virt::sysctl(&NetnsTransport::new(&r.ns), virt::RECEIVER_SYSCTLS)?;
    virt::add_veth(s, r)?;
    for p in [s, r] {
        let t = NetnsTransport::new(&p.ns);
        t.run(&["ip", "link", "set", "lo", "up"])?;
        t.run(&["ip", "link", "set", &p.name, "up"])?;
        for addr in &p.addrs {
            t.run(&["ip", "addr", "add", &addr.to_string(), "dev", &p.name])?;
        }
        t.run(&[
            "ethtool", "-K", &p.name, "tso", "off", "gso", "off", "gro", "off",
        ])?;
    }
    Ok(())
}

/// Runs the floor self-test: builds a floor lab, sends probes for `cfg.duration`, removes the
/// lab (also on an error or a panic) and returns the probes' results.
pub fn run(cfg: &FloorConfig) -> Result<Probes> {
    let lab = FloorLab::up()?;
    let probes = measure(&lab, cfg)?;
    lab.down()?;
    Ok(probes)
}

/// Sends probes across `lab` for `cfg.duration` and reads them at its other end.
pub(crate) fn measure(lab: &FloorLab, cfg: &FloorConfig) -> Result<Probes> {
    let mut probe = ProbeConfig::new(lab.sender.clone(), lab.spec(cfg.frame_size)?);
    probe.rate_pps = cfg.rate_pps;
    probe.first_packet = cfg.first_packet;
    probe.limit = Some(cfg.duration);
    let listen = match cfg.tap {
        true => Listen::Tap(lab.receiver.clone()),
        false => Listen::Local {
            netns: lab.receiver.netns.clone(),
            addr: lab.address,
            egress: None,
            ingress: None,
            dut_cpu: None,
        },
    };
    let stream = ProbeStream::start(&probe, &listen, None)?;
    let end = Instant::now() + cfg.duration + Duration::from_secs(1);
    while !stream.is_finished() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(10));
    }
    stream.stop(DRAIN)
}
