//! `benchlab probe`: latency probes out of one interface and back in by another of this host,
//! one clock (the remote end of an SSH lab whose senders and receiver are one host, as `gen`
//! and `rx` are the load's).

use std::io::Write;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args as ClapArgs;

use super::gen::{check_cpu, parse_secs, stop_flag, FrameArgs};
use crate::clock::unix_now;
use crate::error::InputError;
use crate::stats::latency::Latency;
use crate::traffic::latency::frame::min_frame;
use crate::traffic::latency::{
    Listen, ProbeConfig, ProbeKind, ProbeStream, Probes, DEFAULT_RATE_PPS,
};
use crate::traffic::wire::ProbeLine;
use crate::traffic::xdp::CarrierCell;
use crate::traffic::{self, Engine, GenConfig, Generator, IfRef, Limit, Rate};
use crate::units::format_ns;

/// How long the probes in flight are waited for once the sender stopped: a loaded DUT's queue
/// holds them milliseconds, and a campaign's receiver drains longer than this meanwhile.
const DRAIN: Duration = Duration::from_millis(200);

/// How often the sender is looked at for its end, or a stop asked.
const POLL: Duration = Duration::from_millis(50);

/// Arguments of `benchlab probe`.
#[derive(Debug, ClapArgs)]
#[command(
    after_help = "Sends sequence-numbered probe frames on the frames' first flow, reads them back \
on the receiving interface, and prints per kind the probes' fate and the one-way latency (kernel \
transmit stamp to kernel arrival stamp, both on this host's clock); Ctrl-C stops cleanly.\n\n\
Example: 10 kpps through the DUT for 10 s, one probe in ten opening a new 5-tuple:\n  benchlab \
probe -i eth1 -D 02:00:00:00:00:02 -s 198.18.10.1:2000 -d 198.19.10.1:2000 -R eth2 -t 10 \
--first-packet"
)]
pub(crate) struct Args {
    /// The frames: the probes take their first flow, and first-packet probes avoid all of
    /// them (the load's).
    #[command(flatten)]
    pub(crate) frames: FrameArgs,
    /// Receiving interface, where the probes arrive after the DUT: IF or NETNS/IF on this host
    /// (one clock stamps both ends).
    #[arg(short = 'R', long = "receive", value_name = "IF")]
    pub(crate) receive: IfRef,
    /// Probes per second (10000, 10k), one frame per send.
    #[arg(short = 'r', long, value_name = "PPS", value_parser = parse_rate, default_value_t = DEFAULT_RATE_PPS, allow_negative_numbers = true)]
    pub(crate) rate: u64,
    /// Make one probe in ten a first-packet probe, on a 5-tuple never used before: on a
    /// stateful DUT, the latency of creating state.
    #[arg(long)]
    pub(crate) first_packet: bool,
    /// Send for this many seconds, then stop [default: until Ctrl-C].
    #[arg(short = 't', long, value_name = "SECS", value_parser = parse_secs, allow_negative_numbers = true)]
    pub(crate) duration: Option<Duration>,
    /// Pin the probes' sending and receiving threads to this CPU.
    #[arg(long, value_name = "N")]
    pub(crate) cpu: Option<usize>,
    /// Read the probes at this address of the receiving interface's namespace (a raw socket:
    /// send them to it, -d) instead of tapping the interface, which every frame passes.
    #[arg(long, value_name = "ADDR")]
    pub(crate) at: Option<std::net::IpAddr>,
    /// With --at: the DUT's interface towards the receiver (IF or NETNS/IF on this host), whose
    /// egress logs each probe with its time of leaving and ends it there (a tc program) instead
    /// of the kernel stamping every frame that arrives anywhere: the virtual lab's trials do so.
    #[arg(long, value_name = "IF", requires = "at")]
    pub(crate) stamp_egress: Option<IfRef>,
    /// With --stamp-egress: the DUT's interface the probes come in by (IF or NETNS/IF), whose
    /// ingress records when each came in: their time in the DUT, as the virtual lab's trials.
    #[arg(long, value_name = "IF", requires = "stamp_egress")]
    pub(crate) stamp_ingress: Option<IfRef>,
    /// With --stamp-egress: the DUT's CPU, the only one kept out of idle halts while the probes
    /// run [default: every CPU of this host]
    #[arg(long, value_name = "N", requires = "stamp_egress")]
    pub(crate) dut_cpu: Option<usize>,
    /// Print JSON lines: {"type":"started",...} once both ends are ready, then
    /// {"type":"probes",...} with every probe's send time and latency, which a campaign reads
    /// back exactly.
    #[arg(long)]
    pub(crate) json: bool,
    /// Send a load too, the frames' flows at this rate (max, PPS), from the XDP generator,
    /// which carries the probes among its frames (from the first source to --at): the virtual
    /// lab's trials do so, and its DUT then takes the probes as it takes the load.
    #[arg(
        long,
        value_name = "max|PPS",
        requires = "at",
        allow_negative_numbers = true
    )]
    pub(crate) load: Option<Rate>,
    /// With --load max: offer 5 % more than the interface took lately, as `benchlab gen
    /// --follow`.
    #[arg(long, requires = "load")]
    pub(crate) follow: bool,
    /// With --load: pin the generator to this CPU.
    #[arg(long, value_name = "N", requires = "load")]
    pub(crate) load_cpu: Option<usize>,
    /// With --load: the probes start off; SIGUSR1 starts them and SIGUSR2 stops them (with
    /// --json, a started line each time they start and a probes line each time they stop):
    /// what they cost the load, alternated (benches/latency_cost.sh).
    #[arg(long, requires = "load")]
    pub(crate) toggle: bool,
}

fn parse_rate(s: &str) -> Result<u64, String> {
    crate::units::parse_count(s)
        .ok_or_else(|| format!("'{s}' is not a number of probes per second (e.g. 10000, 10k)"))
}

/// Runs `benchlab probe`.
pub(crate) fn run(args: Args, out: &mut dyn Write, _err: &mut dyn Write) -> anyhow::Result<i32> {
    check_cpu("--cpu", args.cpu)?;
    check_cpu("--dut-cpu", args.dut_cpu)?;
    check_cpu("--load-cpu", args.load_cpu)?;
    let mut cfg = ProbeConfig {
        iface: args.frames.iface.clone(),
        spec: args.frames.spec()?,
        rate_pps: args.rate,
        first_packet: args.first_packet,
        limit: args.duration,
        cpu: args.cpu,
        carrier: None,
    };
    let stop = stop_flag()?;
    let mut load = match (args.load, args.at) {
        (Some(rate), Some(at)) => Some(carry(&args, rate, at, &mut cfg)?),
        _ => None,
    };
    let listen = match args.at {
        None => Listen::Tap(args.receive.clone()),
        Some(addr) => Listen::Local {
            netns: args.receive.netns.clone(),
            addr,
            egress: args.stamp_egress.clone(),
            ingress: args.stamp_ingress.clone(),
            dut_cpu: args.dut_cpu,
        },
    };
    if args.toggle {
        let end = args.duration.map(|d| Instant::now() + d);
        toggled(&cfg, &listen, (&args, out), (&stop, end))?;
    } else {
        probe(&cfg, &listen, (&args, out), &stop)?;
    }
    if let Some(generator) = load.as_mut() {
        let sent = generator.stop()?;
        if !args.json {
            writeln!(
                out,
                "load: {} packets in {:.3} s, {}",
                sent.tx_pkts,
                sent.elapsed_s,
                crate::units::format_pps(sent.tx_pps)
            )?;
        }
    }
    Ok(0)
}

/// Starts the load of `args --load` (`rate`) with the XDP generator, which carries the probes
/// of `cfg` (their destination then `at`) while it sends; returns it running.
fn carry(
    args: &Args,
    rate: Rate,
    at: IpAddr,
    cfg: &mut ProbeConfig,
) -> anyhow::Result<Box<dyn Generator>> {
    let spec = cfg.spec.clone();
    let min = min_frame(spec.family());
    if spec.frame_size < min {
        return Err(InputError::new(format!(
            "--load: {}-byte frames cannot carry a probe: -l {min} at least",
            spec.frame_size
        ))
        .into());
    }
    (cfg.spec.dst.start, cfg.spec.dst.end) = (at, at);
    let cell = CarrierCell::default();
    let mut gen = GenConfig::new(args.frames.iface.clone(), spec);
    gen.rate = rate;
    gen.follow = args.follow;
    gen.cpu = args.load_cpu;
    gen.limit = args.duration.map_or(Limit::Forever, Limit::Duration);
    gen.engine = Engine::Xdp;
    gen.carrier = Some(cell.clone());
    let mut generator = traffic::builtin(gen)?;
    generator.start()?;
    cfg.carrier = cell.lock().unwrap_or_else(PoisonError::into_inner).clone();
    anyhow::ensure!(
        cfg.carrier.is_some(),
        "the generator does not carry the probes"
    );
    Ok(generator)
}

/// Probes until the stop, their time or the load's end, then prints them.
fn probe(
    cfg: &ProbeConfig,
    listen: &Listen,
    (args, out): (&Args, &mut dyn Write),
    stop: &AtomicBool,
) -> anyhow::Result<()> {
    let stream = ProbeStream::start(cfg, listen, args.cpu)?;
    if args.json {
        let started = ProbeLine::Started { unix_s: unix_now() };
        writeln!(out, "{}", serde_json::to_string(&started)?)?;
    } else {
        let limit = args.duration.map_or("until Ctrl-C".to_owned(), |d| {
            format!("{} s", d.as_secs_f64())
        });
        writeln!(
            out,
            "probing from {} to {} at {} probes/s, {limit}",
            cfg.iface, args.receive, cfg.rate_pps
        )?;
    }
    while !stop.load(Ordering::Relaxed) && !stream.is_finished() {
        std::thread::sleep(POLL);
    }
    print_probes(out, args.json, stream.stop(DRAIN)?)
}

/// `--toggle`: the probes off, started at each SIGUSR1 and stopped at each SIGUSR2, until the
/// stop or `end` (the load's), each run printed as it stops. Two signals, not one that
/// switches: a stop and the next start sent together would be one signal.
fn toggled(
    cfg: &ProbeConfig,
    listen: &Listen,
    (args, out): (&Args, &mut dyn Write),
    (stop, end): (&AtomicBool, Option<Instant>),
) -> anyhow::Result<()> {
    let [on, off] = [signal_hook::consts::SIGUSR1, signal_hook::consts::SIGUSR2].map(|sig| {
        let flag = Arc::new(AtomicBool::new(false));
        signal_hook::flag::register(sig, Arc::clone(&flag)).map(|_| flag)
    });
    let (on, off) = (
        on.context("installing the SIGUSR1 handler")?,
        off.context("installing the SIGUSR2 handler")?,
    );
    let mut stream: Option<ProbeStream> = None;
    while !stop.load(Ordering::Relaxed) && end.is_none_or(|end| Instant::now() < end) {
        if off.swap(false, Ordering::Relaxed) {
            if let Some(s) = stream.take() {
                print_probes(out, args.json, s.stop(DRAIN)?)?;
            }
        }
        if on.swap(false, Ordering::Relaxed) && stream.is_none() {
            stream = Some(ProbeStream::start(cfg, listen, args.cpu)?);
            if args.json {
                let started = ProbeLine::Started { unix_s: unix_now() };
                writeln!(out, "{}", serde_json::to_string(&started)?)?;
            }
        }
        std::thread::sleep(TOGGLE_POLL);
    }
    match stream {
        Some(s) => print_probes(out, args.json, s.stop(DRAIN)?),
        None => Ok(()),
    }
}

/// How often `--toggle` looks for a SIGUSR1: the switch's precision.
const TOGGLE_POLL: Duration = Duration::from_millis(2);

/// Prints `probes`: a JSON line, or per kind their fate and latency.
fn print_probes(out: &mut dyn Write, json: bool, probes: Probes) -> anyhow::Result<()> {
    if json {
        writeln!(
            out,
            "{}",
            serde_json::to_string(&ProbeLine::Probes(Box::new(probes)))?
        )?;
        Ok(())
    } else {
        write_summary(out, &probes)
    }
}

/// Per kind sent, what became of the probes and their latency; then user space to driver.
fn write_summary(out: &mut dyn Write, probes: &Probes) -> anyhow::Result<()> {
    for kind in ProbeKind::ALL {
        let k = probes.of(kind);
        let c = k.summary.probes;
        if c.sent == 0 {
            continue;
        }
        writeln!(
            out,
            "{}: {} sent, {} received, {} lost, {} duplicates, {} reordered, {} without a \
             transmit stamp; latency {}",
            kind.name(),
            c.sent,
            c.received,
            c.lost,
            c.duplicates,
            c.reordered,
            k.tx_unstamped,
            figures(&k.latency)
        )?;
    }
    writeln!(
        out,
        "user space to driver (in-frame stamp to transmit stamp): {}",
        figures(&probes.user_to_driver)
    )?;
    Ok(())
}

/// P50, P99 and max of `latency`, or that it is empty.
fn figures(latency: &Latency) -> String {
    match latency.percentiles() {
        Some(p) => format!(
            "P50 {}, P99 {}, max {}",
            format_ns(p.p50_ns as f64),
            format_ns(p.p99_ns as f64),
            format_ns(p.max_ns as f64)
        ),
        None => "none timed".into(),
    }
}
