//! The virtual lab as a campaign [`Bench`]: versions are DUT sysctls and commands, config sets
//! are applied in the DUT namespace, traffic comes from benchlab's generator in the sender
//! namespace and is counted on the receiver's interface, in this process.
//!
//! [`Bench`]: crate::campaign::bench::Bench

use std::sync::PoisonError;
use std::time::Duration;

use anyhow::Context;

use super::bench::Bench;
use super::bench::Switcher;
use super::settings::{self, Restore};
use super::switcher::DutSwitcher;
use super::trial::{Prober, Rig, TrialSpec};
use crate::cancel::Cancel;
use crate::config::{Campaign, Profile, Version, ALTERNATING_INTERVAL};
use crate::dut::{self, ConfigSets, Os};
use crate::lab::distance::{DistanceWatch, RoundTrips};
use crate::lab::floor::FloorConfig;
use crate::lab::stall::{DutCpu, VETH_QUEUE_FRAMES};
use crate::lab::virt::{online_cpus, INPUT_QUEUE_FRAMES};
use crate::lab::{Lab, LabFacts, Placement};
use crate::profile::PerfProfiler;
use crate::store::LabRecord;
use crate::traffic::latency::frame::min_frame;
use crate::traffic::latency::{Listen, ProbeConfig, ProbeStream, Probes};
use crate::traffic::local::{LocalReceiver, LocalSender};
use crate::traffic::os::{avoid_cpu, CpuAvoidance};
use crate::traffic::packet::{Family, FrameSpec, Mac};
use crate::traffic::receiver::RxConfig;
use crate::traffic::xdp::CarrierCell;
use crate::traffic::{GenConfig, IfRef, Limit, Rate};
use crate::transport::{LocalTransport, Transport};

/// The virtual lab, ready to run a campaign's trials.
pub(crate) struct VirtualBench {
    lab: Option<Lab>,
    /// The campaign's config sets and the one in force.
    sets: ConfigSets,
    /// Sysctls the version in force changed, with their values before it: restored before the
    /// next version, so versions do not inherit each other's settings.
    restore: Restore,
    /// How much later than the end of warm-up profiling trials start their capture (zero but
    /// in tests that misplace the capture on purpose).
    capture_delay: Duration,
    /// Keeps the thread driving the lab, and the commands it runs in the DUT, off the DUT's
    /// CPU while the lab is up (in separate placement).
    _off_dut_cpu: Option<CpuAvoidance>,
}

impl std::fmt::Debug for VirtualBench {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VirtualBench")
            .field("lab", &self.lab.as_ref().map(Lab::id))
            .field("config_set", &self.sets.current())
            .finish_non_exhaustive()
    }
}

impl VirtualBench {
    /// Wraps a running lab for `campaign`, loading its config sets.
    pub(crate) fn new(lab: Lab, campaign: &Campaign) -> anyhow::Result<Self> {
        let env = lab.facts().env();
        let sets = ConfigSets::load(&campaign.config_sets, |entry| {
            Ok(dut::config_set(entry, &env)?)
        })?;
        let t = lab.topology();
        let off_dut_cpu = match t.placement {
            Placement::Separate => avoid_cpu(t.dut_cpu)?,
            Placement::Shared => None,
        };
        Ok(Self {
            lab: Some(lab),
            sets,
            restore: Restore::default(),
            capture_delay: Duration::ZERO,
            _off_dut_cpu: off_dut_cpu,
        })
    }

    /// Starts captures `delay` later than the end of warm-up: past the traffic when `delay` is
    /// longer than the measured window, which is how tests make sure such a capture is caught.
    pub(crate) fn delay_captures(&mut self, delay: Duration) {
        self.capture_delay = delay;
    }

    fn lab(&self) -> &Lab {
        self.lab.as_ref().expect("the lab is up until down()")
    }

    fn dut(&self) -> &dyn Transport {
        self.lab()
            .node(crate::lab::Role::Dut)
            .expect("every lab has a DUT")
    }

    fn revert_current(&mut self) -> anyhow::Result<()> {
        // Once the lab is down, nothing of a config set is left to remove.
        let Some(lab) = self.lab.as_ref() else {
            return Ok(());
        };
        let dut = lab
            .node(crate::lab::Role::Dut)
            .expect("every lab has a DUT");
        self.sets.revert(dut)
    }
}

impl Drop for VirtualBench {
    fn drop(&mut self) {
        // The lab's own guard removes the namespaces, and the rules with them.
        let _ = self.revert_current();
    }
}

impl Bench for VirtualBench {
    fn set_version(&mut self, version: &Version, _cancel: &Cancel) -> anyhow::Result<()> {
        let lab = self.lab.as_ref().expect("the lab is up until down()");
        let dut = lab
            .node(crate::lab::Role::Dut)
            .expect("every lab has a DUT");
        settings::apply(dut, Os::Linux, &mut self.restore, version)
    }

    fn set_config(&mut self, entry: &str) -> anyhow::Result<()> {
        let lab = self.lab.as_ref().expect("the lab is up until down()");
        let dut = lab
            .node(crate::lab::Role::Dut)
            .expect("every lab has a DUT");
        self.sets.switch(entry, dut)
    }

    fn rig(&mut self, spec: &TrialSpec<'_>) -> anyhow::Result<Rig<'_>> {
        rig(self.lab(), spec, self.capture_delay, Duration::from_secs(1))
    }

    fn alternating(
        &mut self,
        spec: &TrialSpec<'_>,
    ) -> anyhow::Result<(Rig<'_>, Box<dyn Switcher + '_>)> {
        let lab = self.lab.as_ref().expect("the lab is up until down()");
        let rig = rig(lab, spec, self.capture_delay, ALTERNATING_INTERVAL)?;
        let dut = lab
            .node(crate::lab::Role::Dut)
            .expect("every lab has a DUT");
        Ok((
            rig,
            Box::new(DutSwitcher {
                sets: &mut self.sets,
                restore: &mut self.restore,
                dut,
                os: Os::Linux,
            }),
        ))
    }

    fn facts(&mut self) -> anyhow::Result<LabRecord> {
        let rulesets = self.sets.rulesets();
        let ingress = &self.lab().facts().dut.ingress[0];
        let driver = self
            .dut()
            .run(&["ethtool", "-i", ingress])
            .ok()
            .and_then(|text| {
                text.lines()
                    .find_map(|l| l.strip_prefix("driver: ").map(str::to_string))
            });
        Ok(LabRecord {
            host: Some(crate::lab::host::facts(self.dut())),
            nic_driver: driver,
            lab: serde_json::to_value(self.lab().facts())?,
            generator: Some("benchlab gen (built-in)".to_string()),
            config_sets: rulesets,
            ..LabRecord::default()
        })
    }

    fn floor(&mut self, rate_pps: u64, duration: Duration) -> Result<Probes, String> {
        let cfg = FloorConfig {
            duration,
            rate_pps,
            frame_size: 64,
            first_packet: false,
            tap: false,
        };
        crate::lab::floor::run(&cfg).map_err(|e| format!("the self-test failed: {e:#}"))
    }

    /// Reverts the config set in force and removes the lab.
    fn down(mut self: Box<Self>) -> anyhow::Result<()> {
        let reverted = self.revert_current();
        let removed = self.lab.take().map_or(Ok(()), Lab::down);
        reverted.and(removed).context("removing the virtual lab")
    }
}

/// The rig of one trial of `spec` on `lab`, its receiver sampling every `interval`.
fn rig<'a>(
    lab: &'a Lab,
    spec: &TrialSpec<'_>,
    capture_delay: Duration,
    interval: Duration,
) -> anyhow::Result<Rig<'a>> {
    let facts = lab.facts();
    let sender = &facts.senders[0];
    let frames = frame_spec(spec.profile, Mac(sender.mac.0), Mac(sender.dut_mac.0))?;
    let sender_if = IfRef {
        netns: Some(sender.namespace.clone()),
        name: sender.interface.clone(),
    };
    let mut gen_cfg = GenConfig::new(sender_if.clone(), frames);
    gen_cfg.rate = spec.profile.rate;
    gen_cfg.follow = spec.follow;
    // At a fixed load the DUT gets a NIC's input ring, which the generator holds; at `max` the
    // surplus must be refused at once, as the follower expects.
    let fixed = matches!(spec.profile.rate, Rate::Pps(_));
    gen_cfg.input_queue = fixed.then_some(INPUT_QUEUE_FRAMES);
    let queue_frames = VETH_QUEUE_FRAMES + gen_cfg.input_queue.unwrap_or(0);
    gen_cfg.limit = Limit::Duration(spec.trial.duration);
    gen_cfg.cpu = Some(sender.cpu);
    let dut_ns = facts.dut.namespace.clone();
    let mut rx_cfg = RxConfig::new(IfRef {
        netns: Some(facts.receiver.namespace.clone()),
        name: facts.receiver.interface.clone(),
    });
    rx_cfg.interval = interval;
    // Off the DUT's CPU, where its forwarding would delay the samples.
    rx_cfg.cpu = Some(sender.cpu);
    // Where the surplus goes: the sender veth's tx_dropped (the DUT's input queue was
    // full), and the DUT's own interfaces. With the generator's input queue, veth's refusals
    // are mostly sent again: the generator counts the lost ones (`late_pkts`).
    let refusals = gen_cfg.input_queue.is_none().then_some(sender_if.clone());
    rx_cfg.watch = refusals
        .into_iter()
        .chain(
            facts
                .dut
                .ingress
                .iter()
                .chain([&facts.dut.egress])
                .map(|name| IfRef {
                    netns: Some(dut_ns.clone()),
                    name: name.clone(),
                }),
        )
        .collect();
    let mut prober = prober(facts, &gen_cfg.spec, sender_if, spec.in_dut);
    // The generator carries the probes when its frames hold one: the DUT then takes them as it
    // takes the load, XDP frames in its input queue (`traffic::xdp::Carrier`).
    if spec.probes.is_some() && gen_cfg.spec.frame_size >= min_frame(gen_cfg.spec.family()) {
        let cell = CarrierCell::default();
        gen_cfg.carrier = Some(cell.clone());
        prober.carrier = Some(cell);
    }
    // The host's root namespace sees the DUT's CPU, kernel stacks included.
    let profiler = PerfProfiler::new(&LocalTransport, vec![facts.dut.cpu]);
    Ok(Rig {
        dut: lab
            .node(crate::lab::Role::Dut)
            .context("the lab has no DUT")?,
        counters: ["ip", "-s", "-s", "link"].map(String::from).to_vec(),
        senders: vec![Box::new(LocalSender::new(gen_cfg))],
        receiver: Box::new(LocalReceiver::new(rx_cfg)),
        profiler: Some(Box::new(profiler)),
        dut_cpu: spec.watch_cpu.then_some(DutCpu {
            cpu: facts.dut.cpu,
            queue_frames,
        }),
        lab_cpus: lab_cpus(facts),
        capture_delay,
        prober: Ok(Box::new(prober)),
    })
}

/// The prober of a trial on the lab of `facts` whose load is `load` from `sender_if`; with
/// `in_dut`, the probes' time in the DUT is recorded too.
fn prober(facts: &LabFacts, load: &FrameSpec, sender_if: IfRef, in_dut: bool) -> LocalProber {
    // The probes come in by the load's interface from its first flow's source, and go to the
    // receiver's address on their own link: the DUT takes them from the load's input queue and
    // forwards them as the load (the same hooks and rules, a route of the same table, a static
    // neighbour). Logged and ended as they leave by that link, which no frame of the load
    // takes, they cost the load no program of theirs on its way out and the DUT's CPU no
    // receiver's work (`lab::addressing`, `traffic::latency::egress`).
    let receiver_addr = match load.family() {
        Family::Inet4 => facts.probes.inet4.addr,
        Family::Inet6 => facts.probes.inet6.addr,
    };
    let mut probe_frames = load.clone();
    (probe_frames.dst.start, probe_frames.dst.end) = (receiver_addr, receiver_addr);
    let mut probes = ProbeConfig::new(sender_if, probe_frames);
    probes.first_packet = true;
    probes.cpu = Some(probe_cpu(facts));
    let dut_if = |name: &String| IfRef {
        netns: Some(facts.dut.namespace.clone()),
        name: name.clone(),
    };
    LocalProber {
        distance: (probes.cpu)
            .filter(|&cpu| cpu != facts.dut.cpu)
            .map(|cpu| [cpu, facts.dut.cpu]),
        watch: None,
        seen: None,
        probes,
        listen: Listen::Local {
            netns: Some(facts.receiver.namespace.clone()),
            addr: receiver_addr,
            egress: Some(dut_if(&facts.probes.dut)),
            // The probes come in by the load's ingress, the first, whose program runs for every
            // frame of the load: only when asked.
            ingress: facts.dut.ingress.first().filter(|_| in_dut).map(dut_if),
            dut_cpu: Some(facts.dut.cpu),
        },
        stream: None,
        carrier: None,
    }
}

/// The CPUs the lab's work runs on: the DUT's, the generators', the probes'.
fn lab_cpus(facts: &LabFacts) -> Vec<usize> {
    let mut cpus = vec![
        facts.dut.cpu,
        facts.placement.generator_cpu,
        probe_cpu(facts),
    ];
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

/// The CPU of the probes' threads: one that neither the generators nor the DUT use, when the
/// machine has one, else the generators' (never the DUT's, whose forwarding they would slow).
fn probe_cpu(facts: &LabFacts) -> usize {
    let p = &facts.placement;
    (0..online_cpus())
        .find(|&cpu| cpu != p.generator_cpu && cpu != p.dut_cpu)
        .unwrap_or(p.generator_cpu)
}

/// The virtual lab's probes: sent and read in this process, one clock.
struct LocalProber {
    /// The probes' interface, frames and sending CPU; rate and limit set at each start.
    probes: ProbeConfig,
    /// Where they are read: the DUT's egress log on the probes' link.
    listen: Listen,
    /// The stream while it runs.
    stream: Option<ProbeStream>,
    /// The probes' CPU and the DUT's, when they are two: the distance between them is
    /// watched while the probes run ([`crate::lab::distance`]).
    distance: Option<[usize; 2]>,
    /// That watch while the probes run.
    watch: Option<DistanceWatch>,
    /// What it saw, once they stopped.
    seen: Option<RoundTrips>,
    /// Where the trial's generator puts its carrier while it sends, when it carries the
    /// probes; they go from a socket of their own when it does not (probes alone, a frame
    /// too small for a probe, the AF_PACKET engine).
    carrier: Option<CarrierCell>,
}

/// How long the probes still on their way are waited for once the trial's traffic stopped
/// (the receiver has drained the load already: what is left is in flight).
const PROBE_DRAIN: Duration = Duration::from_millis(50);

impl Prober for LocalProber {
    fn start(&mut self, rate_pps: u64, limit: Duration) -> anyhow::Result<()> {
        self.probes.rate_pps = rate_pps;
        self.probes.limit = Some(limit);
        // The senders have started (and made their engine) before the probes start.
        self.probes.carrier = (self.carrier.as_ref())
            .and_then(|cell| cell.lock().unwrap_or_else(PoisonError::into_inner).clone());
        let cpu = self.probes.cpu;
        self.seen = None;
        self.watch = (self.distance)
            .map(|[probes, dut]| DistanceWatch::start(probes, dut))
            .transpose()?;
        self.stream = Some(ProbeStream::start(&self.probes, &self.listen, cpu)?);
        Ok(())
    }

    fn finish(&mut self) -> anyhow::Result<Probes> {
        let stream = self.stream.take().context("the probes were not started")?;
        let probes = stream.stop(PROBE_DRAIN);
        let watch = self.watch.take().map(DistanceWatch::finish).transpose();
        self.seen = watch.context("watching the distance between the probes' CPU and the DUT's")?;
        probes
    }

    fn round_trips(&mut self) -> Option<RoundTrips> {
        self.seen.take()
    }

    fn counted(&self) -> bool {
        false
    }
}

/// The frames a traffic profile asks for, from `src_mac` to `dst_mac`.
fn frame_spec(profile: &Profile, src_mac: Mac, dst_mac: Mac) -> anyhow::Result<FrameSpec> {
    Ok(FrameSpec::new(
        src_mac,
        dst_mac,
        profile.src().parse()?,
        profile.dst().parse()?,
        profile.frame_size() as usize,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every profile a user gets without writing one (the default campaign, the examples) is
    /// one the generator builds: a mismatch would fail each of its trials, not the start.
    #[test]
    fn the_default_and_example_profiles_make_frames() {
        let mut profiles = Campaign::default().profiles;
        let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/examples");
        for entry in std::fs::read_dir(examples).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let c = Campaign::from_toml(&text, &path.display().to_string(), dut::KNOWN_PRESETS)
                .unwrap();
            profiles.extend(c.profiles);
        }
        for p in &profiles {
            let frames = frame_spec(p, Mac([2, 0, 0, 0, 0, 1]), Mac([2, 0, 0, 0, 0, 2]));
            assert!(frames.is_ok(), "{}: {:?}", p.name, frames.err());
        }
    }
}
