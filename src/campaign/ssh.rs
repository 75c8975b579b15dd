//! A real lab over SSH as a campaign [`Bench`]: a Linux (or FreeBSD) DUT, one or several
//! senders running `benchlab gen --json`, trafgen (counted by `benchlab rx --tx --json` on the
//! sender's interface) or netmap pkt-gen, and a receiver running `benchlab rx --json` (pkt-gen
//! for pkt-gen senders).
//!
//! Several senders (a 4-node lab) each send their share of the profile (see `senders`): all
//! are started before the trial clock runs and stopped together, the first one that fails
//! stops the others and fails the trial (which the campaign retries once), and a trial's
//! second is the sum of the senders' seconds against the receiver's.
//!
//! Versions: `commands`, then `install` (argv lists run on the DUT), then `reboot`, then
//! `online` retried once a second until `online_timeout`; a DUT that does not come back fails
//! the campaign with one line (finished trials stay stored, `--resume` continues). Once a
//! version is online its `uname -a` and kernel configuration (`/proc/config.gz` or
//! `/boot/config-$(uname -r)` on Linux, `sysctl -n kern.conftxt` on FreeBSD) go into
//! `lab.json` (`versions.<name>`), the configuration itself into `kernel-config/<name>.txt`,
//! so a report never labels a kernel by an image's file name alone.
//!
//! Each trial keeps the DUT's counters before and after (`ip -s -s link` on Linux, `netstat
//! -ndi` on FreeBSD) with the hook outputs, each generator's output (`generator.jsonl`, or
//! `generator-<k>.jsonl` with several senders; trafgen's configuration and log too) and the
//! receiver's.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context};
use serde::Deserialize;

use super::profile::{CaptureSchedule, PerfProfiler, Profiler};
use super::run::{Bench, TrialData, TrialSpec, INTERRUPTED};
use super::store::SampleRow;
use crate::config::{Campaign, Profile, Rate, Version};
use crate::dut::{self, ConfigSet, ConfigSets};
use crate::error::InputError;
use crate::lab::ssh::{Generator, NodeConfig, SshLab};
use crate::traffic::packet::FrameSpec;
use crate::traffic::pktgen::{self, PktgenRx, PktgenTx};
use crate::traffic::trafgen::{self, TrafgenTx};
use crate::transport::{
    display_argv, Command, Output, Process, SshTransport, Transport, TransportError,
};
use senders::{Guard, RemoteFile};

mod senders;

/// Seconds `online` may take after a reboot when the version sets no `online_timeout`.
pub const DEFAULT_ONLINE_TIMEOUT: f64 = 300.0;
/// Time limit of one `install` command (copying and writing an image is slow).
const INSTALL_TIMEOUT: Duration = Duration::from_secs(1800);
/// The packet count of a pkt-gen sender at `max`: 100 GbE line rate of 64-byte frames.
const PKTGEN_MAX_PPS: f64 = 148_809_524.0;
/// Time limit of the `reboot` command: it returns at once, or its connection dies with the DUT
/// (and ssh would wait for TCP to give up); `online` tells whether the reboot worked.
const REBOOT_TIMEOUT: Duration = Duration::from_secs(15);
/// How long the receiver may take to print its first sample.
const RECEIVER_READY: Duration = Duration::from_secs(15);
/// How long the receiver keeps counting after the generator ends, for packets in flight and
/// one last sample.
const DRAIN: Duration = Duration::from_millis(1200);

/// The DUT's operating system, as its `uname -s` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    /// Linux.
    Linux,
    /// FreeBSD.
    FreeBsd,
}

impl Os {
    /// Asks `node` for its `uname -s`.
    pub fn of(node: &dyn Transport) -> anyhow::Result<Self> {
        let name = node.run(&["uname", "-s"])?;
        match name.trim() {
            "Linux" => Ok(Self::Linux),
            "FreeBSD" => Ok(Self::FreeBsd),
            other => bail!(
                "{}: unsupported operating system {other:?} (Linux or FreeBSD)",
                node.host()
            ),
        }
    }

    /// The command that prints every interface's packet counters.
    pub fn counters_argv(self) -> Vec<String> {
        let argv: &[&str] = match self {
            Self::Linux => &["ip", "-s", "-s", "link"],
            Self::FreeBsd => &["netstat", "-ndi"],
        };
        argv.iter().map(|s| s.to_string()).collect()
    }

    /// The command that prints the running kernel's configuration, first line its source.
    pub fn kernel_config_argv(self) -> Vec<String> {
        let argv: &[&str] = match self {
            Self::Linux => &[
                "sh",
                "-c",
                r#"if [ -r /proc/config.gz ]; then echo /proc/config.gz; gzip -dc /proc/config.gz
elif [ -r "/boot/config-$(uname -r)" ]; then echo "/boot/config-$(uname -r)"; cat "/boot/config-$(uname -r)"
else echo "no /proc/config.gz nor /boot/config-$(uname -r)" >&2; exit 1; fi"#,
            ],
            Self::FreeBsd => &["sh", "-c", "echo kern.conftxt; sysctl -n kern.conftxt"],
        };
        argv.iter().map(|s| s.to_string()).collect()
    }
}

/// A real lab over SSH, ready to run a campaign's trials.
pub struct SshBench {
    lab: SshLab,
    dut: SshTransport,
    /// One per sender, in the lab's order.
    senders: Vec<SshTransport>,
    receiver: SshTransport,
    /// The campaign's config sets and the one in force.
    sets: ConfigSets,
    /// The campaign's results directory, whose `lab.json` gets each version's kernel.
    results: PathBuf,
    /// The DUT's OS, asked once.
    os: Option<Os>,
}

impl std::fmt::Debug for SshBench {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SshBench")
            .field("dut", &self.lab.dut.host)
            .field("config_set", &self.sets.current())
            .finish_non_exhaustive()
    }
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

fn strings(argv: &[&str]) -> Vec<String> {
    argv.iter().map(|s| s.to_string()).collect()
}

/// One JSON line of `benchlab gen --json` or `benchlab rx --json` (the fields benchlab reads).
#[derive(Debug, Deserialize)]
struct JsonLine {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    tx_pkts: u64,
    #[serde(default)]
    tx_pps: f64,
    #[serde(default)]
    rx_pkts: u64,
    #[serde(default)]
    rx_pps: f64,
    #[serde(default)]
    engine: Option<String>,
}

/// The complete JSON lines in `out` (a partial last line waits for the next read).
fn json_lines(out: &[u8], host: &str, tool: &str) -> anyhow::Result<Vec<JsonLine>> {
    let text = String::from_utf8_lossy(out);
    let complete = text.rfind('\n').map_or("", |end| &text[..end]);
    complete
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l).with_context(|| {
                format!("{host}: `{tool}` printed a line that is not its JSON: {l}")
            })
        })
        .collect()
}

fn samples(lines: &[JsonLine]) -> impl Iterator<Item = &JsonLine> {
    lines.iter().filter(|l| l.kind == "sample")
}

/// One second of a generator or a receiver: packets in that second and the rate it printed.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Tick {
    pkts: u64,
    pps: f64,
}

/// The ticks of a tool's output so far (complete lines only). benchlab prints cumulative
/// counts (`benchlab rx --tx` too, for trafgen); pkt-gen prints each second's own, and its seconds before traffic (the netmap link
/// wait) are left out so that sender and receiver start together.
fn ticks(
    tool: Generator,
    out: &[u8],
    host: &str,
    name: &str,
    rx: bool,
) -> anyhow::Result<Vec<Tick>> {
    match tool {
        Generator::Benchlab | Generator::Trafgen => {
            let lines = json_lines(out, host, name)?;
            let mut last = 0;
            Ok(samples(&lines)
                .map(|l| {
                    let (total, pps) = if rx {
                        (l.rx_pkts, l.rx_pps)
                    } else {
                        (l.tx_pkts, l.tx_pps)
                    };
                    let tick = Tick {
                        pkts: total.saturating_sub(last),
                        pps,
                    };
                    last = total;
                    tick
                })
                .collect())
        }
        Generator::PktGen => {
            let text = String::from_utf8_lossy(out);
            let complete = text.rfind('\n').map_or("", |end| &text[..end]);
            Ok(pktgen::per_second(complete)
                .into_iter()
                .skip_while(|s| s.pps == 0.0)
                .map(|s| Tick {
                    pkts: s.pkts,
                    pps: s.pps,
                })
                .collect())
        }
    }
}

/// Rows from the generator's seconds paired with the receiver's from its second `rx_skip`
/// (the first one after the generator started).
fn pair_rows(tx: &[Tick], rx: &[Tick], rx_skip: usize) -> Vec<SampleRow> {
    tx.iter()
        .zip(rx.iter().skip(rx_skip))
        .enumerate()
        .map(|(i, (t, r))| SampleRow {
            t_s: (i + 1) as f64,
            tx_pkts: t.pkts,
            rx_pkts: r.pkts,
            tx_pps: t.pps,
            rx_pps: r.pps,
        })
        .collect()
}

impl SshBench {
    /// A bench on the real lab `lab` for `campaign`, whose results go to `results`.
    pub fn new(lab: SshLab, campaign: &Campaign, results: &Path) -> anyhow::Result<Self> {
        // Every profile must split among the senders (and fit trafgen) before any host is asked.
        for profile in &campaign.profiles {
            let shares = senders::shares(profile, lab.senders.len())?;
            for (node, share) in lab.senders.iter().zip(&shares) {
                if node.tool() == Generator::Trafgen {
                    // Any MAC will do here: the frames' MACs do not change their count.
                    let mac = node.dut_mac.as_deref().unwrap_or_default();
                    let bad = |e: InputError| {
                        InputError::new(format!(
                            "profile `{}` on sender {}: {}",
                            profile.name, node.host, e.0
                        ))
                    };
                    trafgen_tx(node, share, mac)
                        .map_err(bad)?
                        .config()
                        .map_err(bad)?;
                }
            }
        }
        let env = vec![("BENCHLAB_DUT_HOST".to_string(), lab.dut.host.clone())];
        let dut = lab.ssh.transport(&lab.dut);
        // Asking the DUT first also fails early, with one line, when it is unreachable.
        let os = Os::of(&dut)?;
        if campaign.profile {
            match os {
                Os::Linux => PerfProfiler::check(&dut)?,
                Os::FreeBsd => {
                    return Err(InputError::new(format!(
                        "{}: profiling a FreeBSD DUT (pmcstat) is not built yet; \
                         set profile = false or drop --profile",
                        lab.dut.host
                    ))
                    .into())
                }
            }
        }
        let sets = ConfigSets::load(&campaign.config_sets, |entry| {
            let set: Box<dyn ConfigSet> = match (os, dut::freebsd::preset(entry)) {
                (Os::FreeBsd, Some(set)) => Box::new(set),
                _ => dut::config_set(entry, &env)?,
            };
            Ok(set)
        })?;
        Ok(Self {
            dut,
            senders: lab.senders.iter().map(|s| lab.ssh.transport(s)).collect(),
            receiver: lab.ssh.transport(&lab.receiver),
            lab,
            sets,
            results: results.to_path_buf(),
            os: Some(os),
        })
    }

    fn os(&mut self) -> anyhow::Result<Os> {
        if let Some(os) = self.os {
            return Ok(os);
        }
        let os = Os::of(&self.dut)?;
        self.os = Some(os);
        Ok(os)
    }

    /// Reverts the config set in force.
    pub fn down(mut self) -> anyhow::Result<()> {
        self.revert_current()
    }

    fn revert_current(&mut self) -> anyhow::Result<()> {
        self.sets.revert(&self.dut)
    }

    /// Runs `online` on the DUT once a second until it succeeds or `timeout` has passed.
    fn wait_online(&self, version: &Version, timeout: Duration) -> anyhow::Result<()> {
        let t0 = Instant::now();
        let mut last = String::from("never tried");
        while t0.elapsed() < timeout {
            if INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) {
                bail!("interrupted");
            }
            let left = timeout
                .saturating_sub(t0.elapsed())
                .max(Duration::from_secs(1));
            match self
                .dut
                .check(&Command::new(version.online.clone()).timeout(left))
            {
                Ok(_) => return Ok(()),
                Err(e) => last = e.to_string(),
            }
            std::thread::sleep(Duration::from_secs(1).min(timeout.saturating_sub(t0.elapsed())));
        }
        bail!(
            "{}: not online {} s after version `{}` (`{}` never succeeded; last: {last})",
            self.dut.host(),
            timeout.as_secs(),
            version.name,
            display_argv(&version.online)
        )
    }

    /// Records the running kernel of `version` in `lab.json` and `kernel-config/<name>.txt`.
    fn record_kernel(&mut self, version: &Version) -> anyhow::Result<()> {
        let os = self.os()?;
        let uname = self.dut.run(&["uname", "-a"])?.trim().to_string();
        let (source, file) = match self.dut.check(&Command::new(os.kernel_config_argv())) {
            Ok(out) => {
                let text = out.stdout_text();
                let (source, config) = text.split_once('\n').unwrap_or((text.as_str(), ""));
                let rel = format!("kernel-config/{}.txt", version.name);
                let path = self.results.join(&rel);
                std::fs::create_dir_all(path.parent().expect("a file in a directory"))
                    .with_context(|| format!("creating {}", self.results.display()))?;
                crate::atomic::write(&path, config.as_bytes())
                    .with_context(|| format!("writing {}", path.display()))?;
                (Some(source.trim().to_string()), Some(rel))
            }
            Err(_) => (None, None),
        };
        let lab_json = self.results.join("lab.json");
        let mut facts: serde_json::Value = match std::fs::read_to_string(&lab_json) {
            Ok(text) => serde_json::from_str(&text)
                .with_context(|| format!("{}: not JSON", lab_json.display()))?,
            Err(_) => serde_json::json!({}),
        };
        facts["versions"][&version.name] = serde_json::json!({
            "uname": uname,
            "kernel_config_source": source,
            "kernel_config": file,
        });
        let text = serde_json::to_string_pretty(&facts)? + "\n";
        crate::atomic::write(&lab_json, text.as_bytes())
            .with_context(|| format!("writing {}", lab_json.display()))
    }

    /// The DUT's counters and the hooks' outputs, as text kept with the trial.
    fn snapshot(&mut self, hooks: &[Vec<String>]) -> anyhow::Result<String> {
        let counters = self.os()?.counters_argv();
        let mut text = String::new();
        for argv in std::iter::once(&counters).chain(hooks) {
            text.push_str(&format!("$ {}\n", display_argv(argv)));
            match self.dut.exec(&Command::new(argv.clone())) {
                Ok(out) => {
                    text.push_str(&out.stdout_text());
                    text.push_str(&out.stderr);
                    if !out.success() {
                        text.push_str(&format!("[{}]\n", out.status_text()));
                    }
                }
                // An SSH failure here means the DUT is gone: the trial cannot be trusted.
                Err(e @ TransportError::Ssh { .. }) => return Err(e.into()),
                Err(e) => text.push_str(&format!("[{e}]\n")),
            }
        }
        Ok(text)
    }

    fn benchlab(node: &NodeConfig) -> String {
        node.benchlab.clone().unwrap_or_else(|| "benchlab".into())
    }

    /// The receiver's command line (stopped with SIGTERM).
    fn rx_argv(&self) -> Vec<String> {
        let r = &self.lab.receiver;
        let iface = r.interface.clone().expect("validated");
        if self.lab.receiver_tool() == Generator::PktGen {
            return PktgenRx {
                iface,
                wait_s: 2,
                no_normalize: true,
            }
            .argv();
        }
        let mut argv = vec![Self::benchlab(r)];
        argv.extend(strings(&["rx", "--json", "-i"]));
        argv.push(iface);
        argv
    }

    /// Sender `k`, ready to send its share `profile` of a trial of `seconds`: its generator's
    /// command line and, for trafgen, its configuration written on the sender and the counter
    /// of its interface already sampling.
    fn prepare(&self, k: usize, profile: &Profile, seconds: f64) -> anyhow::Result<Run> {
        let node = &self.lab.senders[k];
        let host = &self.senders[k];
        let iface = node.interface.clone().expect("validated");
        let dut_mac = node.dut_mac.clone().expect("validated");
        let mut run = Run {
            k,
            tool: node.tool(),
            host: host.host().to_string(),
            argv: Vec::new(),
            config: None,
            counter: None,
            skip: 0,
            end: None,
            gen: None,
            out: None,
            stopped: false,
        };
        run.argv = match node.tool() {
            Generator::PktGen => {
                // pkt-gen stops after a count: enough for the trial at the asked rate (or at
                // 100 GbE line rate); benchlab stops it when the trial's time is up.
                let pps = match profile.rate {
                    Rate::Max => PKTGEN_MAX_PPS,
                    Rate::Pps(p) => p as f64,
                };
                let count = pktgen::count_for(seconds, pps);
                PktgenTx::from_profile(profile, &iface, &dut_mac, count).argv()
            }
            Generator::Benchlab => {
                let rate = match profile.rate {
                    Rate::Max => "max".to_string(),
                    Rate::Pps(p) => p.to_string(),
                };
                let mut argv = vec![Self::benchlab(node)];
                argv.extend(strings(&["gen", "--json", "-i"]));
                argv.extend([iface, "-D".into(), dut_mac]);
                argv.extend([
                    "-s".into(),
                    profile.src().to_string(),
                    "-d".into(),
                    profile.dst().to_string(),
                    "-l".into(),
                    profile.frame_size().to_string(),
                    "-r".into(),
                    rate,
                    "-t".into(),
                    seconds.to_string(),
                ]);
                if let Some(cpu) = node.cpu {
                    argv.extend(["--cpu".into(), cpu.to_string()]);
                }
                argv
            }
            Generator::Trafgen => {
                let mac_file = format!("/sys/class/net/{iface}/address");
                let src_mac = host.run(&["cat", &mac_file])?;
                let tx = trafgen_tx(node, profile, src_mac.trim())?;
                let text = tx.config()?;
                let file = RemoteFile::create(host, text.as_bytes())
                    .context("writing trafgen's configuration")?;
                let argv = tx.argv(&file.path, seconds);
                run.config = Some((file, text));
                let mut counter_argv = vec![Self::benchlab(node)];
                counter_argv.extend(strings(&["rx", "--tx", "--json", "-i"]));
                counter_argv.push(iface);
                let mut counter = Guard::new(
                    host.spawn(&counter_argv)
                        .context("starting the sender's counter")?,
                );
                wait_ready(
                    &run.host,
                    &counter_argv,
                    counter.get(),
                    Generator::Trafgen,
                    COUNTER,
                    false,
                )
                .context("starting the sender's counter")?;
                run.counter = Some((counter, counter_argv));
                argv
            }
        };
        Ok(run)
    }
}

/// The name of the `benchlab rx --tx` counter of a trafgen sender in messages.
const COUNTER: &str = "benchlab rx --tx";

/// trafgen's sender for `node`'s share `profile`, its frames from `src_mac`.
fn trafgen_tx(
    node: &NodeConfig,
    profile: &Profile,
    src_mac: &str,
) -> Result<TrafgenTx, InputError> {
    let spec = FrameSpec::new(
        src_mac.parse()?,
        node.dut_mac.as_deref().unwrap_or_default().parse()?,
        profile.src().parse()?,
        profile.dst().parse()?,
        profile.frame_size() as usize,
    )?;
    Ok(TrafgenTx {
        iface: node.interface.clone().unwrap_or_default(),
        spec,
        rate: match profile.rate {
            Rate::Max => None,
            Rate::Pps(p) => Some(p),
        },
        cpu: node.cpu.unwrap_or(0),
    })
}

/// The tool's name in messages.
fn tool_name(tool: Generator, rx: bool) -> &'static str {
    match (tool, rx) {
        (Generator::Benchlab, false) => "benchlab gen",
        (Generator::Benchlab | Generator::Trafgen, true) => "benchlab rx",
        (Generator::PktGen, false) => "pkt-gen -f tx",
        (Generator::PktGen, true) => "pkt-gen -f rx",
        (Generator::Trafgen, false) => "trafgen",
    }
}

/// Waits until the sampler `p` (a receiver, or a trafgen sender's counter) printed its first
/// sample; fails if it exited.
fn wait_ready(
    host: &str,
    argv: &[String],
    p: &mut Box<dyn Process>,
    tool: Generator,
    name: &str,
    rx: bool,
) -> anyhow::Result<()> {
    let t0 = Instant::now();
    loop {
        if let Some(out) = p.try_wait()? {
            return Err(crate::transport::failed(host, argv, &out).into());
        }
        let out = p.stdout_so_far();
        let ready = match tool {
            // pkt-gen says `Ready...` once its netmap link wait is over.
            Generator::PktGen => String::from_utf8_lossy(&out).contains("Ready"),
            Generator::Benchlab | Generator::Trafgen => {
                !ticks(tool, &out, host, name, rx)?.is_empty()
            }
        };
        if ready {
            return Ok(());
        }
        if t0.elapsed() > RECEIVER_READY {
            bail!(
                "{host}: `{name}` was not ready within {} s",
                RECEIVER_READY.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One sender's part of a trial.
struct Run {
    /// Its index in the lab's senders.
    k: usize,
    tool: Generator,
    host: String,
    /// The generator's command line.
    argv: Vec<String>,
    /// trafgen: its configuration on the sender (removed when dropped) and as text.
    config: Option<(RemoteFile, String)>,
    /// trafgen: `benchlab rx --tx` on the sender's interface, and its command line.
    counter: Option<(Guard, Vec<String>)>,
    /// The counter's seconds before the generator started (not the trial's).
    skip: usize,
    /// The counter's seconds up to the one in which the generator ended.
    end: Option<usize>,
    /// The generator while it runs.
    gen: Option<Guard>,
    /// What the generator left once it ended.
    out: Option<Output>,
    /// Whether benchlab stopped it (time up, another sender failed, Ctrl-C).
    stopped: bool,
}

impl Run {
    /// The counter's seconds so far (trafgen senders only; none for the others).
    fn counter_ticks(&mut self) -> anyhow::Result<Vec<Tick>> {
        match self.counter.as_mut() {
            Some((c, _)) => ticks(
                Generator::Trafgen,
                &c.get().stdout_so_far(),
                &self.host,
                COUNTER,
                false,
            ),
            None => Ok(Vec::new()),
        }
    }

    /// Records the generator's end and what it left.
    fn ended(&mut self, out: Output, stopped: bool) -> anyhow::Result<()> {
        // The second in progress holds the generator's last packets.
        self.end = Some(self.counter_ticks()?.len() + 1);
        self.out = Some(out);
        self.stopped = stopped;
        Ok(())
    }

    /// Whether the generator ended as it should: by itself, or (pkt-gen) stopped at the end
    /// of the trial's time, or (trafgen) by `timeout` at the end of the trial's time.
    fn ok(&self, time_up_is_normal: bool) -> bool {
        let Some(out) = &self.out else { return true };
        match self.tool {
            Generator::Benchlab => out.success(),
            Generator::PktGen => out.success() || (self.stopped && time_up_is_normal),
            Generator::Trafgen => {
                !self.stopped && matches!(out.status, Some(0 | trafgen::TIMED_OUT))
            }
        }
    }

    /// The sender's seconds: the generator's own figures, or its interface's counter's from
    /// the generator's start to its end (`counter_out`: the counter's output).
    fn tx_ticks(&self, gen_out: &[u8], counter_out: &[u8]) -> anyhow::Result<Vec<Tick>> {
        if self.tool != Generator::Trafgen {
            return ticks(
                self.tool,
                gen_out,
                &self.host,
                tool_name(self.tool, false),
                false,
            );
        }
        let all = ticks(Generator::Trafgen, counter_out, &self.host, COUNTER, false)?;
        let end = self.end.unwrap_or(all.len()).min(all.len());
        Ok(all[self.skip.min(end)..end].to_vec())
    }

    /// The sender's seconds so far, while the trial runs.
    fn tx_ticks_so_far(&mut self) -> anyhow::Result<Vec<Tick>> {
        let gen_out = match (&self.out, self.gen.as_mut()) {
            (Some(out), _) => out.stdout.clone(),
            (None, Some(g)) => g.get().stdout_so_far(),
            (None, None) => Vec::new(),
        };
        let counter_out = match self.counter.as_mut() {
            Some((c, _)) => c.get().stdout_so_far(),
            None => Vec::new(),
        };
        self.tx_ticks(&gen_out, &counter_out)
    }
}

/// The senders' seconds added up, as long as every sender has that second.
fn sum_ticks(per_sender: &[Vec<Tick>]) -> Vec<Tick> {
    let n = per_sender.iter().map(Vec::len).min().unwrap_or(0);
    (0..n)
        .map(|i| Tick {
            pkts: per_sender.iter().map(|t| t[i].pkts).sum(),
            pps: per_sender.iter().map(|t| t[i].pps).sum(),
        })
        .collect()
}

impl Drop for SshBench {
    fn drop(&mut self) {
        let _ = self.revert_current();
    }
}

impl Bench for SshBench {
    fn set_version(&mut self, version: &Version) -> anyhow::Result<()> {
        self.revert_current()?;
        let ctx = || format!("version `{}`", version.name);
        for argv in &version.commands {
            self.dut
                .check(&Command::new(argv.clone()))
                .with_context(ctx)?;
        }
        for argv in &version.install {
            self.dut
                .check(&Command::new(argv.clone()).timeout(INSTALL_TIMEOUT))
                .with_context(|| format!("installing version `{}`", version.name))?;
        }
        if !version.reboot.is_empty() {
            // The connection may drop as the DUT goes down: only `online` tells if it worked.
            let _ = self
                .dut
                .exec(&Command::new(version.reboot.clone()).timeout(REBOOT_TIMEOUT));
            self.os = None;
        }
        if !version.online.is_empty() {
            let timeout = version.online_timeout.unwrap_or(DEFAULT_ONLINE_TIMEOUT);
            self.wait_online(version, Duration::from_secs_f64(timeout))?;
        }
        self.record_kernel(version)
            .with_context(|| format!("recording the kernel of version `{}`", version.name))
    }

    fn set_config(&mut self, entry: &str) -> anyhow::Result<()> {
        self.sets.switch(entry, &self.dut)
    }

    fn trial(
        &mut self,
        spec: &TrialSpec<'_>,
        on_second: &mut dyn FnMut(&SampleRow),
    ) -> anyhow::Result<TrialData> {
        let shares = senders::shares(spec.profile, self.senders.len())?;
        let mut files = vec![(
            "dut-before.txt".to_string(),
            self.snapshot(&spec.hooks.before)?,
        )];
        // The DUT is a host of its own: all its CPUs are the DUT's. The profiler is made ready
        // (paused) first: the traffic would slow its setup down, and the receiver's seconds
        // before the generators start must not include that setup's.
        let profiler = PerfProfiler::new(&self.dut, Vec::new());
        let recording = spec.capture.then(|| profiler.start()).transpose()?;
        let rx_tool = self.lab.receiver_tool();
        let rx_host = self.receiver.host().to_string();
        let rx_argv = self.rx_argv();
        let rx_name = tool_name(rx_tool, true);
        let mut rx = Guard::new(
            self.receiver
                .spawn(&rx_argv)
                .context("starting the receiver")?,
        );
        wait_ready(&rx_host, &rx_argv, rx.get(), rx_tool, rx_name, true)
            .context("starting the receiver")?;
        // Guards stop every process already started when a later step fails.
        let mut runs = shares
            .iter()
            .enumerate()
            .map(|(k, share)| self.prepare(k, share, spec.trial.duration))
            .collect::<anyhow::Result<Vec<Run>>>()?;
        // benchlab rx counts from its own start: its seconds before the generators' are not
        // the trial's, nor are those of a trafgen sender's counter. pkt-gen's idle seconds are
        // dropped by `ticks` instead.
        let rx_skip = match rx_tool {
            Generator::PktGen => 0,
            _ => ticks(rx_tool, &rx.get().stdout_so_far(), &rx_host, rx_name, true)?.len(),
        };
        for run in &mut runs {
            run.skip = run.counter_ticks()?.len();
        }
        // Every generator starts before the trial clock runs.
        let start_unix_s = unix_now();
        for run in &mut runs {
            let gen = self.senders[run.k]
                .spawn(&run.argv)
                .with_context(|| format!("starting the generator on {}", run.host))?;
            run.gen = Some(Guard::new(gen));
        }
        // benchlab gen stops by itself after the trial, trafgen through `timeout`; pkt-gen is
        // stopped once the trial's seconds (after its link wait) have passed.
        let (limit, time_up_is_normal) = match rx_tool {
            Generator::PktGen => (spec.trial.duration + 3.0, true),
            _ => (spec.trial.duration + 60.0, false),
        };
        let limit = Duration::from_secs_f64(limit);
        let t0 = Instant::now();
        let mut capture =
            recording.map(|r| CaptureSchedule::new(r, t0, spec.trial, Duration::ZERO));
        let mut shown = 0;
        loop {
            for run in runs.iter_mut().filter(|r| r.out.is_none()) {
                if let Some(out) = run.gen.as_mut().expect("started").get().try_wait()? {
                    run.gen.take().map(Guard::take);
                    run.ended(out, false)?;
                }
            }
            if runs.iter().all(|r| r.out.is_some()) {
                break;
            }
            // A sender that failed fails the trial: the others are stopped at once.
            let failed = runs.iter().any(|r| !r.ok(time_up_is_normal));
            if failed
                || INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst)
                || t0.elapsed() > limit
            {
                for run in runs.iter_mut().filter(|r| r.out.is_none()) {
                    let gen = run.gen.take().expect("started").take();
                    let out = gen
                        .stop(Duration::from_secs(5))
                        .with_context(|| format!("stopping the generator on {}", run.host))?;
                    run.ended(out, true)?;
                }
                break;
            }
            if let Some(capture) = capture.as_mut() {
                capture.poll()?;
            }
            let tx = sum_ticks(
                &runs
                    .iter_mut()
                    .map(Run::tx_ticks_so_far)
                    .collect::<anyhow::Result<Vec<_>>>()?,
            );
            let rxt = ticks(rx_tool, &rx.get().stdout_so_far(), &rx_host, rx_name, true)?;
            for row in pair_rows(&tx, &rxt, rx_skip).iter().skip(shown) {
                on_second(row);
                shown += 1;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let end_unix_s = unix_now();
        std::thread::sleep(DRAIN);
        let rx_out = rx
            .take()
            .stop(Duration::from_secs(5))
            .context("stopping the receiver")?;
        let mut counter_outs = Vec::new();
        for run in &mut runs {
            counter_outs.push(match run.counter.take() {
                Some((c, _)) => Some(
                    c.take()
                        .stop(Duration::from_secs(5))
                        .with_context(|| format!("stopping the counter on {}", run.host))?,
                ),
                None => None,
            });
        }
        let capture = capture
            .map(|c| c.finish(&|| INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst)))
            .transpose()?;
        if INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) {
            bail!("interrupted");
        }
        // The first sender that failed by itself names the failure (the others were stopped).
        if let Some(run) = runs
            .iter()
            .filter(|r| !r.ok(time_up_is_normal))
            .min_by_key(|r| r.stopped)
        {
            let out = run.out.as_ref().expect("ended");
            return Err(crate::transport::failed(&run.host, &run.argv, out).into());
        }
        let n = runs.len();
        let mut per_sender = Vec::new();
        let mut generators = Vec::new();
        for (run, counter_out) in runs.iter().zip(&counter_outs) {
            let out = run.out.as_ref().expect("ended");
            let counter_stdout = counter_out.as_ref().map_or(&[][..], |o| &o.stdout);
            per_sender.push(run.tx_ticks(&out.stdout, counter_stdout)?);
            let log = || {
                format!(
                    "CMD on {}: {}\n{}{}",
                    run.host,
                    display_argv(&run.argv),
                    out.stdout_text(),
                    out.stderr
                )
            };
            let name = |stem, ext| senders::file_name(stem, ext, run.k, n);
            generators.push(match run.tool {
                Generator::Benchlab => {
                    let lines = json_lines(&out.stdout, &run.host, "benchlab gen")?;
                    files.push((name("generator", "jsonl"), out.stdout_text()));
                    match lines.iter().rev().find_map(|l| l.engine.clone()) {
                        Some(e) => format!("benchlab gen on {}, {e} engine", run.host),
                        None => format!("benchlab gen on {}", run.host),
                    }
                }
                Generator::PktGen => {
                    // The raw log, first line the command as the old harness wrote it.
                    files.push((name("generator", "log"), log()));
                    format!("netmap pkt-gen on {}", run.host)
                }
                Generator::Trafgen => {
                    let counter = counter_out.as_ref().expect("trafgen has a counter");
                    files.push((name("generator", "jsonl"), counter.stdout_text()));
                    files.push((name("generator", "log"), log()));
                    let config = run.config.as_ref().expect("trafgen has a configuration");
                    files.push((name("generator", "trafgen"), config.1.clone()));
                    format!("trafgen on {}", run.host)
                }
            });
        }
        // trafgen's configuration files are removed from the senders here.
        drop(runs);
        let rows = pair_rows(
            &sum_ticks(&per_sender),
            &ticks(rx_tool, &rx_out.stdout, &rx_host, rx_name, true)?,
            rx_skip,
        );
        for row in rows.iter().skip(shown) {
            on_second(row);
        }
        files.push((
            "dut-after.txt".to_string(),
            self.snapshot(&spec.hooks.after)?,
        ));
        files.push(match rx_tool {
            Generator::PktGen => (
                "receiver.log".to_string(),
                format!(
                    "CMD on {rx_host}: {}\n{}{}",
                    display_argv(&rx_argv),
                    rx_out.stdout_text(),
                    rx_out.stderr
                ),
            ),
            _ => ("receiver.jsonl".to_string(), rx_out.stdout_text()),
        });
        Ok(TrialData {
            generator: Some(generators.join(" + ")),
            samples: rows,
            files,
            start_unix_s,
            end_unix_s,
            capture,
        })
    }

    fn facts(&mut self) -> anyhow::Result<serde_json::Value> {
        let rulesets = self.sets.rulesets();
        let node = |n: &NodeConfig| {
            serde_json::json!({
                "transport": "ssh",
                "host": n.host,
                "interface": n.interface,
                "interfaces": n.interfaces,
            })
        };
        let senders: Vec<serde_json::Value> = self
            .lab
            .senders
            .iter()
            .map(|s| {
                let mut v = node(s);
                v["dut_mac"] = serde_json::json!(s.dut_mac);
                v["generator"] = serde_json::json!(tool_name(s.tool(), false));
                v["cpu"] = serde_json::json!(s.cpu);
                v
            })
            .collect();
        let generators: Vec<String> = self
            .lab
            .senders
            .iter()
            .map(|s| format!("{} over SSH on {}", tool_name(s.tool(), false), s.host))
            .collect();
        Ok(serde_json::json!({
            "host": super::host::facts(&self.dut),
            "lab": {
                "dut": node(&self.lab.dut),
                "senders": senders,
                "receiver": node(&self.lab.receiver),
            },
            "generator": generators.join(" + "),
            "config_sets": rulesets,
            "versions": {},
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<JsonLine> {
        json_lines(text.as_bytes(), "h", "t").unwrap()
    }

    #[test]
    fn generator_and_receiver_lines_pair_from_the_generators_start() {
        let tx = r#"{"type":"sample","t_s":1.0,"tx_pkts":100,"tx_pps":100.0}
{"type":"sample","t_s":2.0,"tx_pkts":250,"tx_pps":150.0}
{"type":"summary","engine":"afpacket","tx_pkts":250}
"#;
        // The receiver ran one idle second before the generator started.
        let rx = r#"{"type":"sample","t_s":1.0,"rx_pkts":3,"rx_pps":3.0,"rx_bytes":0,"rx_drops":0,"drops":[]}
{"type":"sample","t_s":2.0,"rx_pkts":93,"rx_pps":90.0,"rx_bytes":0,"rx_drops":0,"drops":[]}
{"type":"sample","t_s":3.0,"rx_pkts":233,"rx_pps":140.0,"rx_bytes":0,"rx_drops":0,"drops":[]}
{"type":"sample","t_s":4.0,"rx_pkts":233,"rx_pps":0.0,"rx_bytes":0,"rx_drops":0,"drops":[]}
"#;
        let tick =
            |out: &str, rx| ticks(Generator::Benchlab, out.as_bytes(), "h", "t", rx).unwrap();
        let rows = pair_rows(&tick(tx, false), &tick(rx, true), 1);
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].tx_pkts, rows[0].rx_pkts), (100, 90));
        assert_eq!(
            (rows[1].tx_pkts, rows[1].rx_pkts, rows[1].rx_pps),
            (150, 140, 140.0)
        );
        assert_eq!(lines(tx)[2].engine.as_deref(), Some("afpacket"));
        // A partial last line is left for the next read.
        assert_eq!(lines("{\"type\":\"sample\"}\n{\"ty").len(), 1);
        assert!(json_lines(b"oops\n", "gen1", "benchlab gen").is_err());
    }

    /// A trafgen sender whose counter skips 1 second and ends at its third, and what it left.
    fn trafgen_run(out: Option<Output>, stopped: bool) -> Run {
        Run {
            k: 1,
            tool: Generator::Trafgen,
            host: "gen2".into(),
            argv: Vec::new(),
            config: None,
            counter: None,
            skip: 1,
            end: Some(3),
            gen: None,
            out,
            stopped,
        }
    }

    #[test]
    fn a_trafgen_senders_seconds_are_its_counters_while_it_ran_and_senders_add_up() {
        // `benchlab rx --tx --json`: one idle second before trafgen, two of traffic, one after.
        let counter = r#"{"type":"sample","t_s":1.0,"tx_pkts":2,"tx_pps":2.0}
{"type":"sample","t_s":2.0,"tx_pkts":1002,"tx_pps":1000.0}
{"type":"sample","t_s":3.0,"tx_pkts":3002,"tx_pps":2000.0}
{"type":"sample","t_s":4.0,"tx_pkts":3002,"tx_pps":0.0}
"#;
        let mine = trafgen_run(None, false)
            .tx_ticks(b"", counter.as_bytes())
            .unwrap();
        let pkts: Vec<u64> = mine.iter().map(|t| t.pkts).collect();
        assert_eq!(pkts, [1000, 2000]);
        let other = vec![
            Tick {
                pkts: 10,
                pps: 10.0
            };
            3
        ];
        let sum = sum_ticks(&[mine, other]);
        assert_eq!(sum.len(), 2);
        assert_eq!((sum[1].pkts, sum[1].pps), (2010, 2010.0));
        // `timeout` ending trafgen at the trial's end is its normal end; anything else fails.
        let ended = |status, stopped| {
            let out = Output {
                status,
                ..Output::default()
            };
            trafgen_run(Some(out), stopped).ok(false)
        };
        assert!(ended(Some(trafgen::TIMED_OUT), false));
        assert!(!ended(Some(1), false));
        assert!(!ended(Some(trafgen::TIMED_OUT), true));
    }

    #[test]
    fn pktgen_logs_of_a_seed_pair_from_their_first_second_of_traffic() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/netbenches/002/RAW/"
        );
        let read = |name: &str| {
            std::fs::read(format!("{dir}bench.318516stable.forwarding.inet4.1.{name}")).unwrap()
        };
        let tick = |out: &[u8], rx| ticks(Generator::PktGen, out, "h", "t", rx).unwrap();
        let (tx, rx) = (tick(&read("sender"), false), tick(&read("receiver"), true));
        let rows = pair_rows(&tx, &rx, 0);
        assert_eq!(rows.len(), tx.len().min(rx.len()));
        // The first seconds of the seed's logs (see the files).
        assert_eq!((rows[0].tx_pkts, rows[0].tx_pps), (1_496_114, 1_493_231.0));
        assert!(rows[0].rx_pps > 0.0 && rows.iter().all(|r| r.tx_pkts > 0));
    }

    #[test]
    fn counters_and_kernel_config_commands_follow_the_os() {
        assert_eq!(Os::Linux.counters_argv(), ["ip", "-s", "-s", "link"]);
        assert_eq!(Os::FreeBsd.counters_argv(), ["netstat", "-ndi"]);
        assert!(Os::FreeBsd.kernel_config_argv()[2].contains("sysctl -n kern.conftxt"));
        assert!(Os::Linux.kernel_config_argv()[2].contains("/proc/config.gz"));
        let mock = crate::transport::MockTransport::new("dut");
        mock.reply(&["uname", "-s"], crate::transport::Output::ok("FreeBSD\n"));
        assert_eq!(Os::of(&mock).unwrap(), Os::FreeBsd);
        mock.reply(&["uname", "-s"], crate::transport::Output::ok("Darwin\n"));
        assert!(Os::of(&mock).unwrap_err().to_string().contains("Darwin"));
    }
}
