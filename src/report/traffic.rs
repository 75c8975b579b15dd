//! The line a report gives a traffic profile (flows, frame size, IP version, the load sent), in
//! the README's setup list and under each chart's title.

use crate::ingest::benchlab::throughput::goal_profile;
use crate::ingest::Traffic;
use crate::report::Report;
use crate::stats::{Flavor, Summary};
use crate::units::format_pps;

/// One line on a traffic profile, from the generator command lines and the senders' rates:
/// `inet4: 2000 flows (20 sources × 100 destinations) of 64-byte frames, IPv4; traffic load
/// 1.49 Mpps`. Empty when the logs tell nothing.
pub(crate) fn traffic_summary(report: &Report, profile: &str) -> String {
    let in_profile = || {
        report
            .series
            .iter()
            .filter(move |s| s.series.profile == profile)
    };
    let mut traffics: Vec<String> = Vec::new();
    for s in in_profile() {
        if let Some(text) = s.series.setup.traffic.as_ref().map(describe_traffic) {
            if !traffics.contains(&text) {
                traffics.push(text);
            }
        }
    }
    let offered: Vec<f64> = in_profile()
        .flat_map(|s| s.series.iterations.iter().filter_map(|i| i.offered_pps))
        .collect();
    let mut parts = traffics;
    if !offered.is_empty() {
        let median = Summary::of(&offered, Flavor::Current).median;
        let by = (report.generators.get(profile))
            .or_else(|| report.generators.get(""))
            .map_or("the sender", String::as_str);
        // A search's iterations offered many loads; what they share is the highest one.
        let what = if searched(report, profile) {
            "max load"
        } else {
            "traffic load"
        };
        parts.push(format!("{what} {} ({by})", format_pps(median)));
    }
    if parts.is_empty() {
        return String::new();
    }
    let text = parts.join("; ");
    if profile.is_empty() {
        text
    } else {
        format!("{}: {text}", report.label(profile))
    }
}

/// Whether `profile` is a goal of a throughput search (`inet4-NDR`).
fn searched(report: &Report, profile: &str) -> bool {
    report.searches.iter().any(|run| {
        (run.record.result.iter().flat_map(|r| &r.goals))
            .any(|g| goal_profile(&run.profile, &g.goal.name) == profile)
    })
}

fn describe_traffic(traffic: &Traffic) -> String {
    let mut text = String::new();
    if let (Some(flows), Some(src), Some(dst)) =
        (traffic.flows(), &traffic.source, &traffic.destination)
    {
        // A count that saturated (a whole IPv6 range) is shown as the bound it passed.
        let count = |n: u128| match n {
            u128::MAX => "over 10^38".to_string(),
            n => n.to_string(),
        };
        text.push_str(&format!(
            "{} flows ({} sources × {} destinations)",
            count(flows),
            count(src.endpoints()),
            count(dst.endpoints())
        ));
    }
    if let Some(bytes) = traffic.packet_bytes {
        let prefix = if text.is_empty() { "" } else { " of " };
        // pkt-gen's length leaves out the 4-byte Ethernet CRC.
        text.push_str(&format!("{prefix}{}-byte frames", bytes.saturating_add(4)));
    }
    if !text.is_empty() {
        text.push_str(", ");
    }
    text.push_str(&format!("IPv{}", traffic.ip_version));
    text
}
