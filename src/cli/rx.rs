//! `benchlab rx`: the receiver's counter sampler, standalone.

use std::io::Write;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use clap::Args as ClapArgs;

use super::gen::{check_cpu, parse_secs, stop_flag};
use crate::traffic::receiver::{Receiver, RxConfig, Sample, Series};
use crate::traffic::wire::{RxLine, TxCounterLine};
use crate::traffic::{IfRef, TxSample};
use crate::units::format_pps;

/// Arguments of `benchlab rx`.
#[derive(Debug, ClapArgs)]
#[command(
    after_help = "Prints one line a second (time, packets received since the start, rate, \
drops since the start) and a total; Ctrl-C stops cleanly.\n\nExample:\n  benchlab rx -i \
benchlab-1-receiver/bl1r0 -w benchlab-1-dut/bl1d0 -t 10"
)]
pub(crate) struct Args {
    /// Receiving interface: IF, or NETNS/IF for one inside an `ip netns` namespace.
    #[arg(short = 'i', long = "interface", value_name = "IF")]
    pub(crate) iface: IfRef,
    /// Also record the drop counters of this interface (IF or NETNS/IF; repeatable), e.g. the
    /// DUT's interfaces, or a veth sender whose tx_dropped counts what the DUT could not take.
    #[arg(short = 'w', long = "watch", value_name = "IF")]
    pub(crate) watch: Vec<IfRef>,
    /// Sample for this many seconds [default: until Ctrl-C].
    #[arg(short = 't', long, value_name = "SECS", value_parser = parse_secs, allow_negative_numbers = true)]
    pub(crate) duration: Option<Duration>,
    /// Seconds between samples.
    #[arg(long, value_name = "SECS", value_parser = parse_secs, default_value = "1", allow_negative_numbers = true)]
    pub(crate) interval: Duration,
    /// Print JSON lines ({"type":"sample",...} each interval, {"type":"summary",...} at the end).
    #[arg(long)]
    pub(crate) json: bool,
    /// Count the packets the interface sent instead (its tx counters): a sender's output when
    /// the generator prints no figures (trafgen). JSON lines then say tx_pkts and tx_pps, as
    /// `benchlab gen --json` does.
    #[arg(long)]
    pub(crate) tx: bool,
    /// Sample from this CPU at real-time priority, so that samples are on time: not the DUT's
    /// CPU, whose forwarding would delay them.
    #[arg(long, value_name = "N")]
    pub(crate) cpu: Option<usize>,
}

fn human(s: &Sample, watch: &[IfRef]) -> String {
    let mut line = format!(
        "{:9.3} s {:>14} pkts {:>14}",
        s.t_s,
        s.rx_pkts,
        format_pps(s.rx_pps)
    );
    if s.rx_drops > 0 {
        line += &format!("  rx drops {}", s.rx_drops);
    }
    for (w, d) in watch.iter().zip(&s.drops) {
        line += &format!("  {} drops {d}", w.name);
    }
    line
}

/// Runs `benchlab rx`.
pub(crate) fn run(args: Args, out: &mut dyn Write, _err: &mut dyn Write) -> anyhow::Result<i32> {
    check_cpu("--cpu", args.cpu)?;
    let stop = stop_flag()?;
    let cfg = RxConfig {
        iface: args.iface.clone(),
        watch: args.watch.clone(),
        interval: args.interval,
        sent: args.tx,
        cpu: args.cpu,
    };
    let mut rx = Receiver::start(cfg)?;
    let started = Instant::now();
    if !args.json {
        writeln!(
            out,
            "sampling {} every {} s",
            args.iface,
            args.interval.as_secs_f64()
        )?;
    }
    while !stop.load(Ordering::Relaxed) && !rx.is_finished() {
        if args.duration.is_some_and(|d| started.elapsed() >= d) {
            break;
        }
        let wait = args.duration.map_or(Duration::from_millis(100), |d| {
            d.saturating_sub(started.elapsed())
                .min(Duration::from_millis(100))
        });
        if let Some(s) = rx.next_sample(wait) {
            write_sample(out, &args, &s)?;
        }
    }
    let printed = rx.samples_seen();
    let series = rx.stop()?;
    for s in &series.samples[printed.min(series.samples.len())..] {
        write_sample(out, &args, s)?;
    }
    write_summary(out, &args, &series)?;
    Ok(0)
}

/// One interval's line: JSON (as `gen`'s with `--tx`), or [`human`].
fn write_sample(out: &mut dyn Write, args: &Args, s: &Sample) -> anyhow::Result<()> {
    if args.json && args.tx {
        let line = TxCounterLine::Sample(TxSample {
            t_s: s.t_s,
            tx_pkts: s.rx_pkts,
            tx_pps: s.rx_pps,
        });
        writeln!(out, "{}", serde_json::to_string(&line)?)?;
    } else if args.json {
        writeln!(out, "{}", serde_json::to_string(&RxLine::Sample(s))?)?;
    } else {
        writeln!(out, "{}", human(s, &args.watch))?;
    }
    Ok(())
}

/// The last line: the totals since the start, as JSON or text.
fn write_summary(out: &mut dyn Write, args: &Args, series: &Series) -> anyhow::Result<()> {
    let last = series.samples.last();
    let (t, pkts) = last.map_or((0.0, 0), |s| (s.t_s, s.rx_pkts));
    let pps = if t > 0.0 { pkts as f64 / t } else { 0.0 };
    if args.json && args.tx {
        let line = TxCounterLine::Summary {
            iface: &series.iface,
            t_s: t,
            tx_pkts: pkts,
            tx_pps: pps,
        };
        writeln!(out, "{}", serde_json::to_string(&line)?)?;
    } else if args.json {
        let no_drops = vec![0; series.watch.len()];
        let line = RxLine::Summary {
            iface: &series.iface,
            watch: &series.watch,
            t_s: t,
            rx_pkts: pkts,
            rx_pps: pps,
            rx_drops: last.map_or(0, |s| s.rx_drops),
            drops: last.map_or(&no_drops, |s| &s.drops),
        };
        writeln!(out, "{}", serde_json::to_string(&line)?)?;
    } else {
        let verb = if args.tx { "sent" } else { "received" };
        writeln!(
            out,
            "{verb} {pkts} packets in {t:.3} s, {} on average",
            format_pps(pps)
        )?;
    }
    Ok(())
}
