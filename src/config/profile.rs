//! A traffic profile of the campaign file (`[[profiles]]`): address family, frame size, flows,
//! offered load, and whether an iteration measures saturation or a throughput search.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{defaults, secs, Family, Rate, Trial};

/// The smallest UDP frame of `af`, FCS included: 64 bytes (RFC 2544) for inet4, 66 for inet6
/// (62 bytes of Ethernet, IPv6 and UDP headers: pkt-gen's `-l 62`).
pub(super) fn min_frame(af: Family) -> u32 {
    // A frame size is at most 1518: the conversion cannot truncate.
    af.min_frame() as u32
}

/// A traffic profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Name used in results paths and reports (e.g. `inet4`, `inet6-1518`).
    pub(crate) name: String,
    /// Address family.
    pub(crate) af: Family,
    /// Ethernet frame size in bytes, FCS included (RFC 2544: 64…1518). Default: the family's
    /// smallest UDP frame ([`Family::min_frame`]: 64 for inet4, 66 for inet6). Read it with
    /// [`Profile::frame_size`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) frame_size: Option<u32>,
    /// Source flows, pkt-gen syntax: `ADDR[:PORT][-ADDR[:PORT]]`. Default depends on `af`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) src: Option<String>,
    /// Destination flows, pkt-gen syntax. Default depends on `af`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) dst: Option<String>,
    /// Offered load: `"max"` or packets per second. Default is `"max"`: on the virtual lab, a
    /// margin above what the DUT takes ([`crate::traffic::follow`]). A throughput profile
    /// searches below it: a packet rate here is the search's max load unless `search.max_load`
    /// is set.
    #[serde(default = "default_rate")]
    pub(crate) rate: Rate,
    /// What an iteration measures. Default is `saturation`.
    #[serde(default, skip_serializing_if = "Measure::is_saturation")]
    pub(crate) measure: Measure,
    /// Measure latency with this profile's trials (overrides `[trial] latency`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) latency: Option<bool>,
}

/// What an iteration of a profile measures (DESIGN.md "measure").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Measure {
    /// The forwarded rate at the profile's load (`max`: saturating), as the seeds.
    #[default]
    Saturation,
    /// A throughput search (NDR/PDR, the campaign's `[search]`); one search per iteration.
    Throughput,
}

impl Measure {
    /// True for the default, which the written campaign leaves out.
    pub(crate) fn is_saturation(&self) -> bool {
        *self == Measure::Saturation
    }
}

fn default_rate() -> Rate {
    Rate::Max
}

impl Profile {
    /// The built-in profile of an address family: its smallest frames, 2000 flows, max rate.
    pub fn builtin(af: Family) -> Self {
        Self {
            name: af.to_string(),
            af,
            frame_size: Some(min_frame(af)),
            src: None,
            dst: None,
            rate: Rate::Max,
            measure: Measure::Saturation,
            latency: None,
        }
    }

    /// Whether this profile's trials measure latency: its own `latency`, else `[trial]`'s.
    pub(crate) fn latency(&self, trial: &Trial) -> bool {
        self.latency.unwrap_or(trial.latency)
    }

    /// Ethernet frame size in bytes, FCS included: the family's smallest when unset.
    pub(crate) fn frame_size(&self) -> u32 {
        self.frame_size.unwrap_or(min_frame(self.af))
    }

    /// Source flow range, the family's default when unset.
    pub(crate) fn src(&self) -> &str {
        self.src.as_deref().unwrap_or(match self.af {
            Family::Inet4 => defaults::INET4_SRC,
            Family::Inet6 => defaults::INET6_SRC,
        })
    }

    /// Destination flow range, the family's default when unset.
    pub(crate) fn dst(&self) -> &str {
        self.dst.as_deref().unwrap_or(match self.af {
            Family::Inet4 => defaults::INET4_DST,
            Family::Inet6 => defaults::INET6_DST,
        })
    }

    /// What a sender sends for this profile during `duration`.
    pub fn load(&self, duration: Duration) -> crate::traffic::endpoint::Load {
        crate::traffic::endpoint::Load {
            af: self.af,
            src: self.src().to_string(),
            dst: self.dst().to_string(),
            frame_size: self.frame_size(),
            rate: self.rate,
            seconds: secs(duration),
        }
    }
}
