//! `lab.json`, the lab's record: the DUT host's facts, the lab's layout, what sent the
//! traffic, each config set's ruleset, on an SSH lab the kernel each version booted, and the
//! settings of quick versions alternated under traffic.
//! The run loop writes it once ([`Store::write_lab`](crate::store::Store::write_lab)), an SSH DUT
//! adds each version as it boots it ([`Store::record_version`](crate::store::Store::record_version)),
//! the alternating design each quick version it alternates,
//! and the report reads it back ([`Store::read_lab`](crate::store::Store::read_lab)).
//!
//! Every field may be missing: a file written by an older benchlab, or by a lab kind that
//! knows less, reads as it is, and a missing fact is left out of the report, never guessed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::Version;
use crate::lab::host::HostFacts;
use crate::transport::display_argv;

/// What `lab.json` holds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LabRecord {
    /// The DUT host's facts: CPU, cores, kernel, OS, tool versions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) host: Option<HostFacts>,
    /// Driver of the DUT's ingress interface (virtual lab; `veth` unless a test says
    /// otherwise), when `ethtool` could tell.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) nic_driver: Option<String>,
    /// The lab's layout as its kind describes it: the virtual lab's facts (namespaces,
    /// addresses, CPU placement) or the SSH lab's hosts and interfaces. Kept as written since
    /// the two kinds share no shape; [`placement_summary`](Self::placement_summary) reads it.
    #[serde(skip_serializing_if = "serde_json::Value::is_null")]
    pub(crate) lab: serde_json::Value,
    /// What sent the traffic, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) generator: Option<String>,
    /// Each config set's ruleset by name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) config_sets: BTreeMap<String, String>,
    /// The kernel each version ran, by version name (SSH labs).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) versions: BTreeMap<String, VersionRecord>,
    /// Why the DUT could not be profiled, when it could not (the campaign then ran without
    /// flamegraphs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) profiler_unavailable: Option<String>,
    /// The latency floor (generator straight to receiver), when the campaign measured latency.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) latency_floor: Option<super::FloorRecord>,
}

impl LabRecord {
    /// The virtual lab's CPU placement in words (`lab.placement.summary`), when recorded.
    pub(crate) fn placement_summary(&self) -> Option<&str> {
        self.lab.pointer("/placement/summary")?.as_str()
    }
}

/// The kernel a version ran, as its DUT reported it after booting it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct VersionRecord {
    /// `uname -a` on the DUT.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) uname: Option<String>,
    /// Where the kernel configuration came from (the first line of its dump).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) kernel_config_source: Option<String>,
    /// The kernel configuration's file, relative to the results directory
    /// (`kernel-config/<version>.txt`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) kernel_config: Option<String>,
    /// The sysctls the lab set for this version.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) sysctls: BTreeMap<String, String>,
    /// The commands the lab ran for this version (`commands`, not `install`), one line each,
    /// shell-quoted where needed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) commands: Vec<String>,
}

impl VersionRecord {
    /// What the lab applies for `version`: its sysctls and commands, no kernel facts yet.
    pub(crate) fn settings(version: &Version) -> Self {
        Self {
            sysctls: version.sysctls.clone(),
            commands: version.commands.iter().map(|a| display_argv(a)).collect(),
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_of_every_lab_kind_read_and_missing_facts_stay_missing() {
        // As the virtual lab wrote it, with an explicit null and a field no longer kept.
        let virt = r#"{
            "host": {"cpu": "AMD EPYC 7B13", "cores": 2, "kernel": "Linux dut 6.18", "os": null,
                     "tools": ["nft v1.1.3"]},
            "nic_driver": null,
            "lab": {"id": "b1", "placement": {"mode": "separate", "summary": "DUT on CPU 1"}},
            "generator": "benchlab gen (built-in)",
            "config_sets": {"forwarding": ""},
            "mock": true
        }"#;
        let record: LabRecord = serde_json::from_str(virt).unwrap();
        let host = record.host.as_ref().unwrap();
        assert_eq!((host.cores, host.os.as_deref()), (Some(2), None));
        assert_eq!(record.nic_driver, None);
        assert_eq!(record.placement_summary(), Some("DUT on CPU 1"));
        assert_eq!(record.config_sets["forwarding"], "");
        // An SSH lab's, versions recorded as the DUT booted them.
        let ssh = r#"{"host": {"tools": []}, "lab": {"dut": {"transport": "ssh"}},
            "versions": {"v1": {"uname": "Linux v1", "kernel_config_source": null,
                                "kernel_config": "kernel-config/v1.txt"}},
            "profiler_unavailable": "no perf"}"#;
        let record: LabRecord = serde_json::from_str(ssh).unwrap();
        assert_eq!(record.placement_summary(), None);
        assert_eq!(record.versions["v1"].uname.as_deref(), Some("Linux v1"));
        assert_eq!(record.profiler_unavailable.as_deref(), Some("no perf"));
        // An empty file of an early run, and a round trip.
        assert_eq!(
            serde_json::from_str::<LabRecord>("{}").unwrap(),
            LabRecord::default()
        );
        let text = serde_json::to_string(&record).unwrap();
        assert_eq!(serde_json::from_str::<LabRecord>(&text).unwrap(), record);
    }
}
