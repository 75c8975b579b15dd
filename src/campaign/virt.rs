//! The virtual lab as a campaign [`Bench`]: versions are DUT sysctls and commands, config sets
//! are applied in the DUT namespace, traffic comes from benchlab's generator in the sender
//! namespace and is counted on the receiver's interface, in this process.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context};

use super::profile::{CaptureSchedule, PerfProfiler, Profiler};
use super::run::{Bench, TrialData, TrialSpec, INTERRUPTED};
use super::store::SampleRow;
use crate::config::{Campaign, Profile, Rate, Version};
use crate::dut::{self, ConfigSets};
use crate::lab::Lab;
use crate::traffic::packet::{FrameSpec, Mac};
use crate::traffic::receiver::{Receiver, RxConfig, Sample as RxSample};
use crate::traffic::{self, GenConfig, IfRef, Limit, TxSample};
use crate::transport::{display_argv, Command, LocalTransport, Transport};

/// The virtual lab, ready to run a campaign's trials.
pub struct VirtualBench {
    lab: Option<Lab>,
    /// The campaign's config sets and the one in force.
    sets: ConfigSets,
    /// Sysctls the version in force changed, with their values before it: restored before the
    /// next version, so versions do not inherit each other's settings.
    restore: Vec<(String, String)>,
    /// How much later than the end of warm-up profiling trials start their capture (zero but
    /// in tests that misplace the capture on purpose).
    capture_delay: Duration,
}

impl std::fmt::Debug for VirtualBench {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VirtualBench")
            .field("lab", &self.lab.as_ref().map(Lab::id))
            .field("config_set", &self.sets.current())
            .finish_non_exhaustive()
    }
}

/// Extra seconds the receiver keeps counting after the generator stops, for packets in flight.
const DRAIN: Duration = Duration::from_millis(200);

impl VirtualBench {
    /// Wraps a running lab for `campaign`, loading its config sets.
    pub fn new(lab: Lab, campaign: &Campaign) -> anyhow::Result<Self> {
        let env = lab.facts().env();
        let sets = ConfigSets::load(&campaign.config_sets, |entry| {
            Ok(dut::config_set(entry, &env)?)
        })?;
        Ok(Self {
            lab: Some(lab),
            sets,
            restore: Vec::new(),
            capture_delay: Duration::ZERO,
        })
    }

    /// Starts captures `delay` later than the end of warm-up: past the traffic when `delay` is
    /// longer than the measured window, which is how tests make sure such a capture is caught.
    pub fn delay_captures(&mut self, delay: Duration) {
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

    /// Reverts the config set in force and removes the lab.
    pub fn down(mut self) -> anyhow::Result<()> {
        let reverted = self.revert_current();
        let removed = self.lab.take().map_or(Ok(()), Lab::down);
        reverted.and(removed)
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

    fn sysctl(&self, key: &str, value: &str) -> anyhow::Result<()> {
        self.dut()
            .run(&["sysctl", "-q", "-w", &format!("{key}={value}")])
            .map(drop)
            .map_err(Into::into)
    }

    /// Runs hook commands on the DUT; their output (and the DUT's interface counters) as text.
    fn snapshot(&self, hooks: &[Vec<String>]) -> String {
        let mut text = String::new();
        let counters = vec!["ip".to_string(), "-s".into(), "-s".into(), "link".into()];
        for argv in std::iter::once(&counters).chain(hooks) {
            text.push_str(&format!("$ {}\n", display_argv(argv)));
            match self.dut().exec(&Command::new(argv.clone())) {
                Ok(out) => {
                    text.push_str(&out.stdout_text());
                    if !out.stderr.is_empty() {
                        text.push_str(&out.stderr);
                    }
                    if !out.success() {
                        text.push_str(&format!("[{}]\n", out.status_text()));
                    }
                }
                Err(e) => text.push_str(&format!("[{e}]\n")),
            }
        }
        text
    }
}

impl Drop for VirtualBench {
    fn drop(&mut self) {
        // The lab's own guard removes the namespaces, and the rules with them.
        let _ = self.revert_current();
    }
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

impl Bench for VirtualBench {
    fn set_version(&mut self, version: &Version) -> anyhow::Result<()> {
        for (key, value) in std::mem::take(&mut self.restore) {
            self.sysctl(&key, &value)?;
        }
        for (key, value) in &version.sysctls {
            let before = self
                .dut()
                .run(&["sysctl", "-n", key])
                .with_context(|| format!("version `{}`: reading sysctl {key}", version.name))?;
            self.sysctl(key, value).with_context(|| {
                format!(
                    "version `{}`: sysctl {key}={value} cannot be set inside the DUT's namespace",
                    version.name
                )
            })?;
            self.restore.push((key.clone(), before.trim().to_string()));
        }
        for argv in &version.commands {
            let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
            self.dut()
                .run(&argv)
                .with_context(|| format!("version `{}`", version.name))?;
        }
        Ok(())
    }

    fn set_config(&mut self, entry: &str) -> anyhow::Result<()> {
        let lab = self.lab.as_ref().expect("the lab is up until down()");
        let dut = lab
            .node(crate::lab::Role::Dut)
            .expect("every lab has a DUT");
        self.sets.switch(entry, dut)
    }

    fn trial(
        &mut self,
        spec: &TrialSpec<'_>,
        on_second: &mut dyn FnMut(&SampleRow),
    ) -> anyhow::Result<TrialData> {
        let facts = self.lab().facts();
        let sender = &facts.senders[0];
        let frames = frame_spec(spec.profile, Mac(sender.mac.0), Mac(sender.dut_mac.0))?;
        let sender_if = IfRef {
            netns: Some(sender.namespace.clone()),
            name: sender.interface.clone(),
        };
        let mut gen_cfg = GenConfig::new(sender_if.clone(), frames);
        gen_cfg.rate = match spec.profile.rate {
            Rate::Max => traffic::Rate::Max,
            Rate::Pps(p) => traffic::Rate::Pps(p),
        };
        gen_cfg.limit = Limit::Duration(Duration::from_secs_f64(spec.trial.duration));
        gen_cfg.cpu = Some(sender.cpu);
        let dut_ns = facts.dut.namespace.clone();
        let mut rx_cfg = RxConfig::new(IfRef {
            netns: Some(facts.receiver.namespace.clone()),
            name: facts.receiver.interface.clone(),
        });
        // Where the surplus goes: the sender veth's tx_dropped (the DUT's input queue was
        // full), and the DUT's own interfaces.
        rx_cfg.watch = std::iter::once(sender_if)
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

        let mut files = vec![(
            "dut-before.txt".to_string(),
            self.snapshot(&spec.hooks.before),
        )];
        // The host's root namespace sees the DUT's CPU, kernel stacks included.
        let profiler = PerfProfiler::new(&LocalTransport, vec![facts.dut.cpu]);
        // Ready before the traffic: perf takes seconds to set up on CPUs the traffic saturates.
        let recording = spec.capture.then(|| profiler.start()).transpose()?;
        let receiver = Receiver::start(rx_cfg).context("starting the receiver")?;
        let mut generator = traffic::builtin(gen_cfg).context("starting the generator")?;
        let start_unix_s = unix_now();
        generator.start().context("starting the generator")?;
        let mut capture = recording.map(|r| {
            CaptureSchedule::new(r, std::time::Instant::now(), spec.trial, self.capture_delay)
        });
        let mut receiver = receiver;
        let (mut tx, mut rx) = (Vec::new(), Vec::new());
        let mut rows = Vec::new();
        let mut during_done = spec.hooks.during.is_empty();
        loop {
            if INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) {
                break;
            }
            let mut wait = Duration::from_millis(1500);
            if let Some(capture) = capture.as_mut() {
                capture.poll()?;
                wait = capture.until_next().map_or(wait, |next| next.min(wait));
            }
            match generator.next_sample(wait) {
                Some(s) => tx.push(s),
                None if generator.is_finished() => break,
                None => {}
            }
            while let Some(r) = receiver.next_sample(Duration::ZERO) {
                rx.push(r);
            }
            let new = extend_rows(&tx, &rx, &mut rows);
            for row in &rows[rows.len() - new..] {
                on_second(row);
            }
            if !during_done && rows.last().is_some_and(|r| r.t_s >= spec.trial.warmup) {
                files.push(("dut-during.txt".into(), self.snapshot(&spec.hooks.during)));
                during_done = true;
            }
        }
        let sent = generator.stop().context("stopping the generator")?;
        let end_unix_s = unix_now();
        std::thread::sleep(DRAIN);
        let series = receiver.stop().context("stopping the receiver")?;
        let capture = capture
            .map(|c| c.finish(&|| INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst)))
            .transpose()?;
        if INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) {
            bail!("interrupted");
        }
        // Seconds the live loop could not pair yet (the receiver's last samples).
        extend_rows(&tx, &series.samples, &mut rows);
        files.push((
            "dut-after.txt".to_string(),
            self.snapshot(&spec.hooks.after),
        ));
        files.push((
            "generator.json".to_string(),
            serde_json::to_string_pretty(&sent)? + "\n",
        ));
        files.push((
            "receiver.json".to_string(),
            serde_json::to_string_pretty(&series)? + "\n",
        ));
        Ok(TrialData {
            generator: Some(format!("benchlab gen, {} engine", sent.engine)),
            samples: rows,
            files,
            start_unix_s,
            end_unix_s,
            capture,
        })
    }

    fn facts(&mut self) -> anyhow::Result<serde_json::Value> {
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
        Ok(serde_json::json!({
            "host": super::host::facts(self.dut()),
            "nic_driver": driver,
            "lab": self.lab().facts(),
            "generator": "benchlab gen (built-in)",
            "config_sets": rulesets,
        }))
    }
}

/// Appends the rows of the seconds that both the generator (`tx`) and the receiver (`rx`)
/// have sampled and `rows` lacks, pairing them by index; returns how many it appended. Counts
/// are cumulative in both series, so each row's packets are the difference with the second
/// before.
fn extend_rows(tx: &[TxSample], rx: &[RxSample], rows: &mut Vec<SampleRow>) -> usize {
    let before = rows.len();
    for i in before..tx.len().min(rx.len()) {
        let (t, r) = (&tx[i], &rx[i]);
        let (t0, r0) = match i {
            0 => (0, 0),
            _ => (tx[i - 1].tx_pkts, rx[i - 1].rx_pkts),
        };
        rows.push(SampleRow {
            t_s: (i + 1) as f64,
            tx_pkts: t.tx_pkts - t0,
            rx_pkts: r.rx_pkts - r0,
            tx_pps: t.tx_pps,
            rx_pps: r.rx_pps,
        });
    }
    rows.len() - before
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

    /// A receiver second that arrives before the generator's is kept for the next round, not
    /// lost (it was, when the loop was late: the next row then counted two seconds).
    #[test]
    fn rows_pair_seconds_by_index_whatever_arrives_first() {
        let tx = |n: u64| TxSample {
            t_s: n as f64,
            tx_pkts: n * 1000,
            tx_pps: 1000.0,
        };
        let rx = |n: u64| RxSample {
            t_s: n as f64,
            rx_pkts: n * 500,
            rx_pps: 500.0,
            rx_bytes: n * 32_000,
            rx_drops: 0,
            drops: Vec::new(),
        };
        let mut rows = Vec::new();
        assert_eq!(extend_rows(&[tx(1)], &[rx(1), rx(2), rx(3)], &mut rows), 1);
        assert_eq!(
            extend_rows(&[tx(1), tx(2), tx(3)], &[rx(1), rx(2), rx(3)], &mut rows),
            2
        );
        let counts: Vec<(u64, u64)> = rows.iter().map(|r| (r.tx_pkts, r.rx_pkts)).collect();
        assert_eq!(counts, [(1000, 500); 3]);
    }

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
