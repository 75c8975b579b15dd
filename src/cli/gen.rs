//! `benchlab gen`: the packet generator, standalone (flags close to netmap pkt-gen's).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args as ClapArgs;

use crate::error::InputError;
use crate::traffic::packet::{Family, FlowRange, FrameSpec, Mac};
use crate::traffic::wire::GenLine;
use crate::traffic::{self, Engine, GenConfig, IfRef, Limit, Rate, TxSample, TxSummary};
use crate::units::format_pps;

/// Arguments of `benchlab gen`.
#[derive(Debug, ClapArgs)]
#[command(
    after_help = "Prints one line a second (time, packets sent, rate) and a total; Ctrl-C stops \
cleanly.\n\nExample: 2000 flows of 64-byte frames at full speed for 10 s on CPU 0:\n  benchlab gen -i eth1 \
-D 02:00:00:00:00:02 -s 198.18.10.1:2000-198.18.10.20 -d 198.19.10.1:2000-198.19.10.100 -t 10 --cpu 0"
)]
pub(crate) struct Args {
    /// The frames: interface, MACs, flows, size.
    #[command(flatten)]
    pub(crate) frames: FrameArgs,
    /// Offered rate: max, or packets per second (500000, 500k, 1.5M), evenly spaced.
    #[arg(
        short = 'r',
        long,
        value_name = "max|PPS",
        default_value = "max",
        allow_negative_numbers = true
    )]
    pub(crate) rate: Rate,
    /// Send exactly this many packets, then stop (500000, 10M…).
    #[arg(short = 'n', long, value_name = "COUNT", value_parser = parse_count, conflicts_with = "duration", allow_negative_numbers = true)]
    pub(crate) count: Option<u64>,
    /// Send for this many seconds, then stop [default: until Ctrl-C].
    #[arg(short = 't', long, value_name = "SECS", value_parser = parse_secs, allow_negative_numbers = true)]
    pub(crate) duration: Option<Duration>,
    /// Pin the sending thread to this CPU.
    #[arg(long, value_name = "N")]
    pub(crate) cpu: Option<usize>,
    /// How frames are sent.
    #[arg(long, value_enum, default_value_t = Engine::Auto)]
    pub(crate) engine: Engine,
    /// AF_PACKET engine: packets per sendmmsg call, 1-1024 [default: 256 at max, one millisecond
    /// of packets (≤ 64) at a fixed rate]. The XDP engine paces frame by frame.
    #[arg(short = 'b', long, value_name = "N")]
    pub(crate) burst: Option<u32>,
    /// At max, the XDP engine offers 5 % more than the interface accepted in the last ~40 ms,
    /// not all it can: a DUT on the same machine (veth) pays for every frame its full queue
    /// refuses, a NIC's DUT does not.
    #[arg(long)]
    pub(crate) follow: bool,
    /// The XDP engine holds the frames the interface refuses and sends them again, as the
    /// DUT's input ring of N frames would hold them (a campaign's fixed loads on the virtual
    /// lab: 4096); what it holds beyond N when the traffic stops is dropped.
    #[arg(long, value_name = "N")]
    pub(crate) input_queue: Option<u64>,
    /// Print JSON lines ({"type":"sample",...} each second, {"type":"summary",...} at the end).
    #[arg(long)]
    pub(crate) json: bool,
}

/// The frames `benchlab gen` sends and `benchlab probe` takes its probes' flow from.
#[derive(Debug, ClapArgs)]
pub(crate) struct FrameArgs {
    /// Sending interface: IF, or NETNS/IF for one inside an `ip netns` namespace.
    #[arg(short = 'i', long = "interface", value_name = "IF")]
    pub(crate) iface: IfRef,
    /// Destination MAC address: the DUT's ingress interface (pkt-gen's -D).
    #[arg(short = 'D', long, value_name = "MAC")]
    pub(crate) dst_mac: Mac,
    /// Source MAC address (pkt-gen's -S) [default: the interface's own].
    #[arg(short = 'S', long, value_name = "MAC")]
    pub(crate) src_mac: Option<Mac>,
    /// Source addresses and ports, pkt-gen's syntax: START[:PORT][-END[:PORT]], IPv6 in brackets,
    /// e.g. 198.18.10.1:2000-198.18.10.20 or "[2001:2:0:10::1]-[2001:2:0:10::14]" (port 1234 when
    /// none is given).
    #[arg(short = 's', long = "src", value_name = "RANGE")]
    // The text is --help's, where brackets are syntax, not links.
    #[allow(rustdoc::broken_intra_doc_links)]
    pub(crate) src: FlowRange,
    /// Destination addresses and ports, as --src. Flows are every source × destination pair,
    /// walked source port first, then source address, destination port, destination address.
    #[arg(short = 'd', long = "dst", value_name = "RANGE")]
    pub(crate) dst: FlowRange,
    /// Frame size in bytes, FCS included as in RFC 2544 (64 here is pkt-gen's -l 60): 64-1518,
    /// IPv6 from 66.
    #[arg(short = 'l', long = "size", value_name = "BYTES", default_value_t = 64)]
    pub(crate) size: usize,
}

impl FrameArgs {
    /// The frames these arguments describe, the source MAC read from the interface when none
    /// is given.
    pub(crate) fn spec(&self) -> anyhow::Result<FrameSpec> {
        let src_mac = match self.src_mac {
            Some(m) => m,
            None => traffic::interface_mac(&self.iface)?,
        };
        Ok(FrameSpec::new(
            src_mac,
            self.dst_mac,
            self.src.clone(),
            self.dst.clone(),
            self.size,
        )?)
    }
}

fn parse_count(s: &str) -> Result<u64, String> {
    crate::units::parse_count(s)
        .ok_or_else(|| format!("'{s}' is not a packet count (e.g. 1000000, 10M)"))
}

/// Parses a positive number of seconds (`10`, `2.5`).
pub(crate) fn parse_secs(s: &str) -> Result<Duration, String> {
    match s.parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() && x < 1e9 => Ok(Duration::from_secs_f64(x)),
        _ => Err(format!("'{s}' is not a positive number of seconds")),
    }
}

/// Sets a flag on SIGINT and SIGTERM, so that a run stops cleanly and prints its summary.
pub(crate) fn stop_flag() -> anyhow::Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&flag))
            .context("installing the Ctrl-C handler")?;
    }
    Ok(flag)
}

/// Runs `benchlab gen`.
pub(crate) fn run(args: Args, out: &mut dyn Write, err: &mut dyn Write) -> anyhow::Result<i32> {
    let spec = args.frames.spec()?;
    let iface = args.frames.iface;
    let limit = match (args.count, args.duration) {
        (Some(n), _) => Limit::Count(n),
        (None, Some(d)) => Limit::Duration(d),
        (None, None) => Limit::Forever,
    };
    check_cpu("--cpu", args.cpu)?;
    let banner = Banner {
        flows: spec.flows(),
        family: spec.family(),
        size: spec.frame_size,
        rate: args.rate,
        limit,
    };
    let cfg = GenConfig {
        iface: iface.clone(),
        spec,
        rate: args.rate,
        limit,
        cpu: args.cpu,
        engine: args.engine,
        burst: args.burst,
        follow: args.follow,
        input_queue: args.input_queue,
        carrier: None,
    };
    let stop = stop_flag()?;
    let mut generator = traffic::builtin(cfg)?;
    generator.start()?;
    if !args.json {
        banner.write(out, &iface)?;
    }
    while !stop.load(Ordering::Relaxed) {
        match generator.next_sample(Duration::from_millis(100)) {
            Some(s) => write_sample(out, args.json, &s)?,
            None if generator.is_finished() => break,
            None => {}
        }
    }
    let summary = generator.stop()?;
    // Samples recorded between the last poll and the stop.
    while let Some(s) = generator.next_sample(Duration::ZERO) {
        write_sample(out, args.json, &s)?;
    }
    write_summary(out, err, args.json, &summary)?;
    Ok(0)
}

/// Refuses a CPU this host does not have, given by option `flag` (`--cpu`).
pub(crate) fn check_cpu(flag: &str, cpu: Option<usize>) -> Result<(), InputError> {
    if let (Some(cpu), n) = (cpu, traffic::os::cpu_count()) {
        if cpu >= n {
            return Err(InputError::new(format!(
                "bad {flag} {cpu}: this host has CPUs 0-{}",
                n - 1
            )));
        }
    }
    Ok(())
}

/// What the first human-readable line says about the frames sent.
struct Banner {
    flows: u128,
    family: Family,
    size: usize,
    rate: Rate,
    limit: Limit,
}

impl Banner {
    /// `sending 64-byte IPv4 frames, 2000 flows, rate max, 10 s, on eth1`.
    fn write(&self, out: &mut dyn Write, iface: &IfRef) -> anyhow::Result<()> {
        let rate = match self.rate {
            Rate::Max => "max".to_owned(),
            Rate::Pps(p) => format_pps(p as f64),
        };
        let limit = match self.limit {
            Limit::Count(n) => format!("{n} packets"),
            Limit::Duration(d) => format!("{} s", d.as_secs_f64()),
            Limit::Forever => "until Ctrl-C".to_owned(),
        };
        let flows = if self.flows == 1 {
            "1 flow".to_owned()
        } else {
            format!("{} flows", self.flows)
        };
        writeln!(
            out,
            "sending {}-byte {} frames, {flows}, rate {rate}, {limit}, on {}",
            self.size, self.family, iface
        )?;
        Ok(())
    }
}

/// One second's line: JSON, or time, packets and rate.
fn write_sample(out: &mut dyn Write, json: bool, s: &TxSample) -> anyhow::Result<()> {
    if json {
        writeln!(out, "{}", serde_json::to_string(&GenLine::Sample(s))?)?;
    } else {
        writeln!(
            out,
            "{:9.3} s {:>14} pkts {:>14}",
            s.t_s,
            s.tx_pkts,
            format_pps(s.tx_pps)
        )?;
    }
    Ok(())
}

/// The last line: JSON, or the totals (and, on stderr, why the XDP engine was not used).
fn write_summary(
    out: &mut dyn Write,
    err: &mut dyn Write,
    json: bool,
    summary: &TxSummary,
) -> anyhow::Result<()> {
    if json {
        writeln!(
            out,
            "{}",
            serde_json::to_string(&GenLine::Summary(summary))?
        )?;
        return Ok(());
    }
    if let Some(why) = &summary.fallback {
        writeln!(err, "benchlab gen: note: AF_PACKET engine used: {why}")?;
    }
    let queued = match (summary.queued_at_stop, summary.lost_at_stop) {
        (Some(q), Some(lost)) => {
            format!(", {q} in the input queue at the stop, {lost} refused frames lost")
        }
        _ => String::new(),
    };
    writeln!(
        out,
        "{} {} packets in {:.3} s, {} ({} engine){queued}",
        if summary.interrupted {
            "stopped:"
        } else {
            "sent"
        },
        summary.tx_pkts,
        summary.elapsed_s,
        format_pps(summary.tx_pps),
        summary.engine
    )?;
    Ok(())
}
