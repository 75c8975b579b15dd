//! What a search trial's own files say: the senders' rate while they sent, where packets were
//! dropped and how long the DUT's CPU stalled, read from the senders', the receiver's and the
//! CPU watch's records.

use std::collections::BTreeMap;

use crate::lab::stall::CpuStalls;

/// What the DUT's CPU watch saw (`dut-cpu.json`), when the lab watched it.
pub(crate) fn cpu_stalls(files: &[(String, String)]) -> Option<CpuStalls> {
    let (_, text) = files.iter().find(|(name, _)| name == "dut-cpu.json")?;
    serde_json::from_str(text).ok()
}

/// The senders' summed rate while they sent (packets over the seconds from their first to
/// their last packet), from their own summaries: `generator.json` (in-process) or
/// `generator*.jsonl` (`benchlab gen` on a remote host); `None` when a sender left none.
pub(crate) fn sending_rate(files: &[(String, String)]) -> Option<f64> {
    let summaries: Vec<serde_json::Value> = (files.iter())
        .filter(|(name, _)| name.starts_with("generator"))
        .filter_map(|(name, text)| match name.ends_with(".jsonl") {
            true => text.lines().rev().find_map(|line| {
                let v: serde_json::Value = serde_json::from_str(line).ok()?;
                (v["type"] == "summary").then_some(v)
            }),
            false if name.ends_with(".json") => serde_json::from_str(text).ok(),
            false => None,
        })
        .collect();
    let generators = files.iter().filter(|(n, _)| n.starts_with("generator"));
    if summaries.is_empty() || summaries.len() != generators.count() {
        return None;
    }
    summaries
        .iter()
        .map(|v| {
            let (pkts, secs) = (v["tx_pkts"].as_f64()?, v["elapsed_s"].as_f64()?);
            (secs > 0.0).then(|| pkts / secs)
        })
        .sum()
}

/// Drops per interface over a trial, from the receiver's file: `receiver.json` (in-process:
/// counts since the receiver started, so the last sample's) or `receiver.jsonl` (`benchlab rx`
/// on a remote host: its summary line).
pub(crate) fn drops(files: &[(String, String)]) -> BTreeMap<String, u64> {
    let last = files.iter().find_map(|(name, text)| match name.as_str() {
        "receiver.json" => {
            let series: serde_json::Value = serde_json::from_str(text).ok()?;
            let last = series["samples"].as_array()?.last()?.clone();
            Some((series["iface"].clone(), series["watch"].clone(), last))
        }
        "receiver.jsonl" => text.lines().rev().find_map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).ok()?;
            (v["type"] == "summary").then(|| (v["iface"].clone(), v["watch"].clone(), v))
        }),
        _ => None,
    });
    let Some((iface, watch, counts)) = last else {
        return BTreeMap::new();
    };
    let names = watch.as_array().cloned().unwrap_or_default();
    let values = counts["drops"].as_array().cloned().unwrap_or_default();
    let mut drops: BTreeMap<String, u64> = names
        .iter()
        .zip(&values)
        .filter_map(|(n, v)| Some((n.as_str()?.to_string(), v.as_u64()?)))
        .collect();
    if let (Some(name), Some(n)) = (iface.as_str(), counts["rx_drops"].as_u64()) {
        drops.insert(name.to_string(), n);
    }
    drops
}
