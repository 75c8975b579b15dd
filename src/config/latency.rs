//! Latency under load in the campaign file (issue 35): `[trial] latency` (or a profile's
//! `latency`) turns the probes on; the `[latency]` table says how.
//!
//! ```toml
//! [trial]
//! latency = true          # probes on top of every trial's load: one-way latency
//!
//! [latency]
//! rate = 10000            # probes per second (or "10k")
//! loads = [0, 10, 50, 90] # after a throughput search: latency trials at these % of its NDR
//! alternating_load = 25   # alternating design: the load, % of the baseline's saturated rate
//!                         # (a fixed-rate profile: its rate, when the baseline forwarded it)
//! blocks = 20             # alternating design: blocks of the latency run
//! floor_duration = 5      # seconds of the floor self-test (probes straight to the receiver)
//! in_dut = false          # virtual lab: each probe's time in the DUT too (costs the DUT ~4 %)
//! ```

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{bad, seconds, Campaign, Rate};
use crate::error::InputError;
use crate::lab::ssh::SshLab;
use crate::traffic::latency::{DEFAULT_RATE_PPS, MAX_RATE_PPS};

/// The most blocks of an alternating latency run: past it the probes' records (16 bytes each)
/// fill memory, and the paired interval no longer narrows.
const MAX_BLOCKS: u32 = 1000;

/// The `[latency]` table, every default filled in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LatencyConfig {
    /// Probes per second, on top of the load (`10000` or `"10k"`). Default is 10000 (1 % of
    /// a 1 Mpps load).
    #[serde(deserialize_with = "crate::units::de_whole")]
    pub(crate) rate: u64,
    /// The loads of the latency trials after a throughput search, in percent of its NDR (0:
    /// probes only). Default is 0, 10, 50 and 90 (FD.io CSIT's).
    pub(crate) loads: Vec<u32>,
    /// The alternating design's load when it measures latency, in percent of the baseline's
    /// saturated rate (a profile's fixed rate that the baseline forwarded is used as it is:
    /// `campaign::alternating::latency`). Default is 25: a firewall forwards a third less than
    /// plain forwarding, and a shared machine's disturbed stretches halve what each set
    /// forwards, so at half the baseline's rate the stateful sets queued and their latency was
    /// that of a saturated DUT (P50 +400 to +5,700 % from run to run on the project's VM); at a
    /// quarter every set stays below saturation and the paired costs repeated within their
    /// ± 5–10 % (BENCHMARKS.md, `benches/design.sh`).
    pub(crate) alternating_load: u32,
    /// Blocks of the alternating design's latency run. Default is 20.
    pub(crate) blocks: u32,
    /// How long the floor self-test sends probes. Default is 5 s.
    #[serde(with = "seconds")]
    pub(crate) floor_duration: Duration,
    /// The virtual lab: also record each probe's time in the DUT, from its ingress to its
    /// egress. Default is false: it takes a program on the load's ingress, which runs for every
    /// frame of the load and cost the DUT about 4 % of its rate on the project's VM, where the
    /// probes without it cost a paced overload under 1 % (docs/latency.md, "What the probes
    /// cost the load").
    pub(crate) in_dut: bool,
}

impl Default for LatencyConfig {
    fn default() -> Self {
        LatencyConfig {
            rate: DEFAULT_RATE_PPS,
            loads: vec![0, 10, 50, 90],
            alternating_load: 25,
            blocks: 20,
            floor_duration: Duration::from_secs(5),
            in_dut: false,
        }
    }
}

impl Campaign {
    /// The `[latency]` settings: the table, or its defaults.
    pub(crate) fn latency(&self) -> LatencyConfig {
        self.latency.clone().unwrap_or_default()
    }

    /// Whether any profile measures latency.
    pub(crate) fn measures_latency(&self) -> bool {
        self.profiles.iter().any(|p| p.latency(&self.trial))
    }

    /// Checks the `[latency]` table, and that the probes can run where they are asked for: under
    /// a fixed load above their own rate, on a lab whose sender and receiver read one clock.
    pub(super) fn validate_latency(&self, origin: &str) -> Result<(), InputError> {
        let cfg = self.latency();
        if !(1..=MAX_RATE_PPS).contains(&cfg.rate) {
            return Err(bad(
                origin,
                "latency.rate",
                format!(
                    "must be 1 to {MAX_RATE_PPS} probes per second, not {}",
                    cfg.rate
                ),
            ));
        }
        if cfg.loads.is_empty() {
            return Err(bad(
                origin,
                "latency.loads",
                "list at least one load (0 to 100, % of the NDR)",
            ));
        }
        for (i, &pct) in cfg.loads.iter().enumerate() {
            if pct > 100 || cfg.loads[..i].contains(&pct) {
                return Err(bad(
                    origin,
                    &format!("latency.loads[{i}]"),
                    format!("{pct}: each load once, 0 to 100 (% of the NDR)"),
                ));
            }
        }
        if !(1..=100).contains(&cfg.alternating_load) {
            return Err(bad(
                origin,
                "latency.alternating_load",
                format!(
                    "must be 1 to 100 (% of the baseline's saturated rate), not {}",
                    cfg.alternating_load
                ),
            ));
        }
        if !(2..=MAX_BLOCKS).contains(&cfg.blocks) {
            return Err(bad(
                origin,
                "latency.blocks",
                format!("must be 2 to {MAX_BLOCKS}, not {}", cfg.blocks),
            ));
        }
        super::seconds::check(
            origin,
            "latency.floor_duration",
            super::secs(cfg.floor_duration),
        )?;
        for (i, p) in self.profiles.iter().enumerate() {
            if let (true, Rate::Pps(load)) = (p.latency(&self.trial), p.rate) {
                if load < cfg.rate {
                    return Err(bad(
                        origin,
                        &format!("profiles[{i}].rate"),
                        format!(
                            "{load} pps is below the probes' own {} per second (latency.rate): \
                             the probes would be the load; lower latency.rate or raise the rate",
                            cfg.rate
                        ),
                    ));
                }
            }
        }
        if self.measures_latency() {
            self.check_prober(origin)?;
        }
        Ok(())
    }

    /// A lab over SSH measures latency only where its probes can run ([`SshLab::prober`]): the
    /// senders and the receiver one host, one clock, and no netmap generator.
    fn check_prober(&self, origin: &str) -> Result<(), InputError> {
        let Ok(Some(lab)) = SshLab::from_hosts(self.lab.hosts.as_ref(), &self.lab.ssh) else {
            return Ok(());
        };
        lab.prober()
            .map(drop)
            .map_err(|why| bad(origin, "trial.latency", why))
    }
}
