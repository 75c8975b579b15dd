//! The first-packet table of the "Latency under load" section: each series' first packets
//! against its established probes, one way and, where the DUT recorded them, in the DUT.

use crate::ingest::benchlab::latency::LatencySeries;
use crate::report::latency::{load_text, probe_totals, FirstPacket, Leg, Over};
use crate::report::Report;
use crate::stats::MeanInterval;
use crate::units::format_ns;

/// The first-packet table; empty when no series sent first-packet probes.
pub(super) fn first_packet(report: &Report) -> String {
    let tick = report.clock_tick_ns();
    let rows: Vec<(&LatencySeries, [Option<FirstPacket>; 2])> = (report.latency_series())
        .map(|s| (s, Leg::ALL.map(|leg| FirstPacket::of(s, leg, tick))))
        .filter(|(_, legs)| legs.iter().any(Option::is_some))
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let widened = tick.map_or(String::new(), |ns| {
        format!(
            " Each interval is widened by the clock's tick, {}: a P50 is read to a tick.",
            format_ns(ns as f64)
        )
    });
    let mut md = format!(
        "\n### First packet against established flows\n\n\
         Probes that each open a new flow (on a stateful DUT, new state) against probes on one \
         established flow. The difference of the P50s with its 95 % interval: Student's t over \
         the trials' differences, or, with one trial, over its seconds' (that trial's only), or \
         over an alternating run's blocks'. One way is the probes' latency, sender to receiver; \
         in the DUT, where it recorded them, their time from its ingress to its egress: the \
         cost of the new state without the way to the DUT, which on a VM moves with the \
         host. A one-way difference that the DUT's own time does not show, or shows the other \
         way, is not the DUT's.{widened}\n\n\
         | version | config set | profile | load | measured | established P50 | established \
         P99 | first packet P50 | first packet P99 | first packets received | first − \
         established P50 | over | verdict |\n\
         |---|---|---|---|---|---:|---:|---:|---:|---:|---:|---|---|\n"
    );
    for (s, legs) in rows {
        let in_dut = legs[1].and_then(|f| f.difference);
        for (leg, f) in Leg::ALL.into_iter().zip(legs) {
            let Some(f) = f else { continue };
            md.push_str(&first_packet_row(report, s, (leg, &f), in_dut));
        }
    }
    md
}

/// One row of the first-packet table: series `s` on `leg`, `in_dut` the difference in the
/// DUT when it was recorded. A one-way difference that the DUT's own time does not show, or
/// shows the other way, lies on the way to the DUT (the test machine's) and is said so.
fn first_packet_row(
    report: &Report,
    s: &LatencySeries,
    (leg, f): (Leg, &FirstPacket),
    in_dut: Option<MeanInterval>,
) -> String {
    let ns = |v: u64| format_ns(v as f64);
    let (difference, over, verdict) = match f.difference {
        Some(d) => (
            format!("{} ± {}", signed_ns(d.mean), format_ns(d.half_width)),
            match f.over {
                Over::Seconds => format!("{} seconds of one trial", d.n),
                Over::Trials => format!("{} trials", d.n),
                Over::Blocks => format!("{} blocks", d.n),
            },
            first_packet_verdict(leg, d, in_dut),
        ),
        None => ("–".to_string(), "too few values".to_string(), "–"),
    };
    // Their counts once, on the one-way row; the record of an alternating run keeps none.
    let received = match (leg, probe_totals(s, true)) {
        (Leg::OneWay, Some(p)) => format!("{} of {}", p.received, p.sent),
        _ => "–".to_string(),
    };
    format!(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {received} | {difference} | {over} | \
         {verdict} |\n",
        report.version_label(&s.version),
        report.label(&s.config),
        report.label(&s.profile),
        load_text(s),
        leg.text(),
        ns(f.established.p50_ns),
        ns(f.established.p99_ns),
        ns(f.first_packet.p50_ns),
        ns(f.first_packet.p99_ns),
    )
}

/// The verdict on first-packet difference `d` on `leg`, `in_dut` the one in the DUT when
/// recorded ([`first_packet_row`]).
fn first_packet_verdict(leg: Leg, d: MeanInterval, in_dut: Option<MeanInterval>) -> &'static str {
    match (
        d.excludes_zero(),
        d.mean > 0.0,
        in_dut.filter(|_| leg == Leg::OneWay),
    ) {
        (true, _, Some(dut)) if !dut.excludes_zero() => "not the DUT's: none in the DUT",
        (true, up, Some(dut)) if up != (dut.mean > 0.0) => {
            "not the DUT's: the other way in the DUT"
        }
        (true, true, _) => "**higher latency**",
        (true, false, _) => "**lower latency**",
        (false, _, _) => "no difference shown",
    }
}

/// `+30 µs`, `−1.2 µs`.
fn signed_ns(ns: f64) -> String {
    let sign = if ns < 0.0 { "\u{2212}" } else { "+" };
    format!("{sign}{}", format_ns(ns.abs()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_one_way_first_packet_difference_is_the_duts_only_where_its_own_time_agrees() {
        let d = |mean: f64, half_width: f64| MeanInterval {
            n: 3,
            mean,
            half_width,
            t: 4.303,
        };
        let lower = d(-140.0, 100.0);
        // No time in the DUT recorded (a lab over SSH): the one-way difference stands.
        assert_eq!(
            first_packet_verdict(Leg::OneWay, lower, None),
            "**lower latency**"
        );
        // Forwarding: none in the DUT.
        let none = d(-20.0, 22.0);
        let said = first_packet_verdict(Leg::OneWay, lower, Some(none));
        assert_eq!(said, "not the DUT's: none in the DUT");
        // Overloaded: 4.2 µs lower one way, 0.99 µs higher in the DUT.
        let higher = Some(d(990.0, 480.0));
        let said = first_packet_verdict(Leg::OneWay, d(-4200.0, 3100.0), higher);
        assert_eq!(said, "not the DUT's: the other way in the DUT");
        // Both agree: the DUT's; the DUT's own row is never doubted by itself.
        let said = first_packet_verdict(Leg::OneWay, d(300.0, 90.0), higher);
        assert_eq!(said, "**higher latency**");
        let said = first_packet_verdict(Leg::InDut, d(-20.0, 10.0), Some(none));
        assert_eq!(said, "**lower latency**");
        assert_eq!(
            first_packet_verdict(Leg::OneWay, none, higher),
            "no difference shown"
        );
    }
}
