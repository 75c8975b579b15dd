//! The README's "Latency under load" section: the floor line, one table per (version, config
//! set, profile) with each load's percentiles and probe counts, each alternating run's
//! entries with their paired comparisons, the charts, first packet against established flows,
//! and the ministat comparisons of the trials' P99 and P50.

use super::distance::{at_levels, levels, timed_seconds, AtLevel, Level};
use super::{load_text, probe_totals, quiet_in_dut, Report};
use crate::ingest::benchlab::latency::{Floor, LatencySeries};
use crate::report::compare::block_line;
use crate::stats::latency::{LatencySummary, Percentiles, ProbeCounts};
use crate::units::format_ns;
use alternated::alternating;
use first_packet::first_packet;
use troubles::{crowded, overloaded, saturating, stalled};

/// An alternating run's table and paired comparisons.
mod alternated;
/// First packet against established flows, one way and in the DUT.
mod first_packet;
/// The lines under a table saying which of its trials saturated the DUT, or were disturbed.
mod troubles;

/// The section; empty when the campaign measured no latency.
pub(crate) fn section(report: &Report) -> String {
    let mut series = report.latency_series().peekable();
    if series.peek().is_none() && report.latency_floor.is_none() {
        return String::new();
    }
    let rate = series.next().map(|s| s.probe_rate_pps);
    let mut md = heading(report, rate);
    // The DUT's time (ingress to egress) where it recorded it: said once, columns of its own.
    if report.latency_series().any(|s| s.in_dut.is_some()) {
        md.push_str(IN_DUT);
    }
    let dut = report.latency.iter().any(|s| s.in_dut.is_some());
    let levels = levels(report.latency.iter());
    let mut cells: Vec<(&str, &str, &str)> = Vec::new();
    for s in &report.latency {
        let cell = (s.version.as_str(), s.config.as_str(), s.profile.as_str());
        if !cells.contains(&cell) {
            cells.push(cell);
        }
    }
    for (version, config, profile) in cells {
        md.push_str(&format!(
            "\n### {}, {}, {}\n\n{}",
            report.version_label(version),
            report.label(config),
            report.label(profile),
            table_head(dut)
        ));
        let rows = (report.latency.iter()).filter(|s| {
            (s.version.as_str(), s.config.as_str(), s.profile.as_str())
                == (version, config, profile)
        });
        let rows: Vec<&LatencySeries> = rows.collect();
        for s in &rows {
            md.push_str(&row(s, dut));
        }
        for s in &rows {
            md.push_str(&overloaded(s));
            md.push_str(&saturating(s));
            md.push_str(&stalled(s));
        }
        md.push_str(&crowded(&rows));
        md.push_str(&by_distance(&rows, &levels));
    }
    for run in &report.alternating {
        md.push_str(&alternating(report, run));
    }
    md.push('\n');
    for profile in report.latency_profiles() {
        let (load, cdf) = (
            super::chart::load_chart(report, &profile),
            super::chart::cdf_chart(report, &profile),
        );
        md.push_str(&format!("![{}]({})\n", load.subtitle, load.file_name));
        md.push_str(&format!("![{}]({})\n", cdf.subtitle, cdf.file_name));
    }
    md.push_str(&first_packet(report));
    md.push_str(&compared(report));
    md
}

/// The section's heading and first paragraph (how the figures were taken, at `rate` probes per
/// second when any series has some), then the floor line.
fn heading(report: &Report, rate: Option<u64>) -> String {
    let rate = rate.map_or(String::new(), |pps| format!(" ({pps} probes/s)"));
    let first = match report.latency.iter().any(|s| s.first_packet.is_some()) {
        true => ", the established ones (first packets in their own table)",
        false => "",
    };
    let trials = match report.latency.is_empty() {
        true => String::new(),
        false => format!(
            " Percentiles: every iteration's histograms merged, over each trial's measured window \
             (fixed-load trials: after warm-up, before cool-down; the latency trials after a \
             throughput search: every second of the load but the first); probes: counted over \
             whole trials{first}."
        ),
    };
    // Searches whose NDR set latency loads ran with the probes (`campaign::throughput`).
    let probed = (report.searches.iter())
        .filter(|run| !run.record.latency.is_empty())
        .find_map(|run| run.record.probes_pps);
    let searched = probed.map_or(String::new(), |pps| {
        format!(
            " The searches for the NDRs those loads are shares of ran with the probes too \
             ({pps} probes/s): a share of the NDR is a share of what the DUT forwards while \
             measured."
        )
    });
    format!(
        "\n## Latency under load\n\n\
         One-way latency of probes sent on top of the load{rate}, from the generator through \
         the DUT to the receiver.{trials}{searched}\n\n{}\n",
        floor_line(report.latency_floor.as_ref())
    )
}

/// `Latency floor (…): P50 2.18 µs, P99 4.31 µs (…)`, or why it was not measured.
fn floor_line(floor: Option<&Floor>) -> String {
    let head = "Latency floor (generator → receiver, no DUT, same host):";
    let Some(floor) = floor else {
        return format!("{head} not recorded (lab.json holds none).");
    };
    let r = &floor.record;
    match (&r.measured, &r.not_measured) {
        (
            Some(LatencySummary {
                latency: Some(p),
                probes,
            }),
            _,
        ) => {
            let user = (r.user_to_driver.as_ref()).map_or(String::new(), |s| {
                format!(
                    "; user space to the driver, P50 {}, left out by the kernel's transmit stamp",
                    format_ns(s.p50_ns as f64)
                )
            });
            let tick = (r.clock_tick_ns).map_or(String::new(), |ns| {
                format!("; the clock's tick, {}", format_ns(ns as f64))
            });
            format!(
                "{head} P50 {}, P99 {} ({} probes/s for {} s: {}{user}{tick}).",
                format_ns(p.p50_ns as f64),
                format_ns(p.p99_ns as f64),
                r.probe_rate_pps,
                r.duration_s,
                counts(probes),
            )
        }
        (
            Some(LatencySummary {
                latency: None,
                probes,
            }),
            _,
        ) => {
            format!("{head} no probe arrived ({}).", counts(probes))
        }
        (None, why) => format!(
            "{head} not measured: {}.",
            why.as_deref().unwrap_or("no reason recorded")
        ),
    }
}

/// `10000 probes, 2 lost`.
fn counts(p: &ProbeCounts) -> String {
    format!("{} probes, {} lost", p.sent, p.lost)
}

/// What the columns of the time in the DUT hold, before the tables that have them.
const IN_DUT: &str =
    "\nThe DUT recorded when each probe came in (its ingress, the first hook of its \
     stack): *in the DUT* is the time from there to its egress, the probes' latency less their way \
     to the DUT. That way is the test machine's (on the virtual lab, the crossing from the \
     generator's CPU to the DUT's, which on a VM moves with the host's placement of the vCPUs, \
     and the wait on the DUT's input ring); the time in the DUT is its forwarding, its firewall \
     and the frames of the load it took in with the probe: compare runs by it. A shared \
     machine's disturbed stretches add to it for seconds to minutes, as much as a config set \
     does: the *quiet seconds* are those at its lowest level (each second's P50 at most a ninth \
     above their lower quartile; the median of theirs, and how many of the series' seconds), \
     which moved far less from run to run than the P50 over all of them.\n";

/// A series table's head; with `dut`, the columns of the time in the DUT.
fn table_head(dut: bool) -> String {
    let (in_dut, align) = match dut {
        true => (
            " P50 in the DUT | trials' P50 in the DUT | quiet seconds' P50 in the DUT |",
            "---:|---:|---:|",
        ),
        false => ("", ""),
    };
    format!(
        "| load | trials | load lost | P50 | trials' P50 | CPUs' round trip |{in_dut} P90 | P99 | \
         P99.9 | max | probes sent | received | lost |\n\
         |---|---:|---:|---:|---:|---:|{align}---:|---:|---:|---:|---:|---:|---:|\n"
    )
}

/// A table row: a load's share lost (the mean of its trials'), its percentiles (`–` where no
/// probe arrived), its trials' range of P50s and its summed counts; with `dut`, the time in
/// the DUT's P50, its trials' range and its quiet seconds' P50.
fn row(s: &LatencySeries, dut: bool) -> String {
    let counts = match probe_totals(s, false) {
        Some(p) => [p.sent, p.received, p.lost].map(|n| n.to_string()),
        None => ["–"; 3].map(String::from),
    };
    let lost: Vec<f64> = s.trials.iter().filter_map(|t| t.load_lost).collect();
    let load_lost = match lost.len() {
        0 => "–".to_string(),
        n => share(lost.iter().sum::<f64>() / n as f64),
    };
    let [p50, rest @ ..] = figures(s.established.percentiles().as_ref());
    let in_dut = match dut {
        true => format!(
            " {} | {} | {} |",
            in_dut_p50(s),
            p50_range(
                s.trials
                    .iter()
                    .filter_map(|t| t.established.in_dut.map(|p| p.p50_ns))
            ),
            quiet_in_dut(s).map_or("–".into(), |q| format!(
                "{} ({} of {} s)",
                format_ns(q.p50_ns as f64),
                q.seconds,
                q.of
            )),
        ),
        false => String::new(),
    };
    format!(
        "| {} | {} | {load_lost} | {p50} | {} | {} |{in_dut} {} | {} |\n",
        load_text(s),
        s.trials.len(),
        trials_p50(s),
        round_trips(s).map_or("–".into(), |(low, high)| ns_range(
            low.into(),
            high.into()
        )),
        rest.join(" | "),
        counts.join(" | ")
    )
}

/// The lowest and highest of a series' trials' median round trips between the probes' CPU
/// and the DUT's; `None` where the lab did not watch them.
fn round_trips(s: &LatencySeries) -> Option<(u32, u32)> {
    let ns = s.trials.iter().filter_map(|t| t.cpu_round_trip_ns);
    Some((ns.clone().min()?, ns.max()?))
}

/// `4.01 µs–5.2 µs`, or one value when both ends agree.
fn ns_range(low: u64, high: u64) -> String {
    match low < high {
        true => format!("{}–{}", format_ns(low as f64), format_ns(high as f64)),
        false => format_ns(low as f64),
    }
}

/// Under a table whose trials' seconds fell at two or more of the campaign's `levels` of the
/// CPUs' distance: a line saying so and a table of each load's P50 at each; empty otherwise.
fn by_distance(rows: &[&LatencySeries], levels: &[Level]) -> String {
    let cells: Vec<Vec<Option<AtLevel>>> = rows.iter().map(|s| at_levels(s, levels)).collect();
    let used: Vec<usize> = (0..levels.len())
        .filter(|&k| cells.iter().any(|c| c[k].is_some()))
        .collect();
    if used.len() < 2 {
        return String::new();
    }
    let placed: usize = (cells.iter().flatten().flatten()).map(|a| a.seconds).sum();
    let timed: usize = rows.iter().map(|s| timed_seconds(s)).sum();
    let mut md = format!(
        "\nThe probes' CPU and the DUT's were at different distances in these trials (the round \
         trip of a cache line between them, column \"CPUs' round trip\"): the host moved this \
         machine's vCPUs during the campaign. The probes cross from one CPU to the other, so their \
         latency moved with it, most at light loads: compare runs and config sets {}at one \
         distance. P50 at each distance (the median of its seconds' P50s, and how many \
         seconds; a second just after the host moved the vCPUs is of neither distance and left \
         out{}):\n\n| load |",
        match rows.iter().any(|s| s.in_dut.is_some()) {
            true => "by their time in the DUT, which the crossing does not enter, or ",
            false => "",
        },
        match timed - placed {
            0 => String::new(),
            n => format!("; {n} s between these levels left out"),
        }
    );
    for &k in &used {
        let l = levels[k];
        md.push_str(&format!(
            " {} |",
            ns_range(l.low_ns.into(), l.high_ns.into())
        ));
    }
    md.push_str(&format!("\n|---|{}\n", "---:|".repeat(used.len())));
    for (s, cells) in rows.iter().zip(&cells) {
        md.push_str(&format!("| {} |", load_text(s)));
        for &k in &used {
            let cell = cells[k].map_or("–".to_string(), |a| {
                format!("{} ({} s)", format_ns(a.p50_ns as f64), a.seconds)
            });
            md.push_str(&format!(" {cell} |"));
        }
        md.push('\n');
    }
    md
}

/// The lowest and highest of the trials' own P50s, `4.01 µs–5.2 µs`, which shows how far a
/// load's P50 moved from run to run; one value when they agree, `–` when no trial had probes.
fn trials_p50(s: &LatencySeries) -> String {
    p50_range((s.trials.iter()).filter_map(|t| t.established.window.map(|p| p.p50_ns)))
}

/// The P50 of a series' time in the DUT over its trials (or an alternating run's phases), `–`
/// where the DUT did not record it.
pub(super) fn in_dut_p50(s: &LatencySeries) -> String {
    (s.in_dut.as_ref().and_then(|l| l.percentiles()))
        .map_or("–".into(), |p| format_ns(p.p50_ns as f64))
}

/// The lowest to the highest of `p50s`, `–` when there is none.
fn p50_range(p50s: impl Iterator<Item = u64> + Clone) -> String {
    match (p50s.clone().min(), p50s.max()) {
        (Some(low), Some(high)) => ns_range(low, high),
        _ => "–".to_string(),
    }
}

/// A share in percent, as precise as a small loss needs: `0`, `0.04 %`, `2.9 %`.
pub(super) fn share(ratio: f64) -> String {
    match ratio * 100.0 {
        0.0 => "0".to_string(),
        pct if pct < 0.01 => "< 0.01 %".to_string(),
        pct if pct < 1.0 => format!("{pct:.2} %"),
        pct => format!("{pct:.1} %"),
    }
}

/// P50, P90, P99, P99.9 and max in human units; `–` each where no probe arrived.
pub(super) fn figures(p: Option<&Percentiles>) -> [String; 5] {
    match p {
        Some(p) => {
            [p.p50_ns, p.p90_ns, p.p99_ns, p.p999_ns, p.max_ns].map(|ns| format_ns(ns as f64))
        }
        None => ["–"; 5].map(String::from),
    }
}

/// The ministat comparisons of the trials' percentiles, each introduced by what it says.
fn compared(report: &Report) -> String {
    if report.latency_blocks.is_empty() {
        return String::new();
    }
    let mut md = String::from(
        "\n### Latency compared\n\n\
         Each trial's P99 (and P50) of its window, in ns, compared with the reference's \
         (series with 3 trials or more at a load): lower is better.\n",
    );
    for b in &report.latency_blocks {
        let context = report.latency_context(b);
        let line = block_line(&b.block, &context, |i| {
            report.latency_label(&b.block.scope, i)
        });
        md.push_str(&format!("\n{line}\n```\n{}```\n", b.block.ministat));
    }
    md
}
