//! What latency probes leave (issue 35): a trial's histograms in `latency.hlog` beside its
//! `meta.json`, whose `latency` holds their summary; the latency trials after a throughput
//! search in `latency/<pct>/` of the iteration, listed in its `search.json`; and the lab's floor,
//! `latency-floor.hlog` at the top of the directory, summed up in `lab.json`.
//!
//! The histograms are HdrHistogram V2 interval logs ([`crate::stats::latency::log`]), which
//! other tools read: in a trial's, one interval per second of traffic and probe kind, tagged
//! with the kind ([`ESTABLISHED`](crate::store::latency::ESTABLISHED),
//! [`FIRST_PACKET`](crate::store::latency::FIRST_PACKET)), its start counted from the trial's start
//! of traffic (`meta.json`'s `start_unix_s`), so that a reader keeps the measured window as it
//! does for the packet rates. A corrupt log is refused in one line naming the file.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::window::in_window;
use super::{SearchTrialId, Store, TrialKey};
use crate::error::InputError;
use crate::lab::distance::{RoundTripSummary, RoundTrips};
use crate::stats::latency::log::{self, Interval};
use crate::stats::latency::{LatencySummary, Percentiles};
use crate::traffic::latency::ProbeKind;

/// A trial's histograms, beside its `meta.json`.
pub const LATENCY_FILE: &str = "latency.hlog";
/// A virtual-lab trial's readings of the CPUs' distance ([`crate::lab::distance`]), beside its
/// histograms.
pub const ROUND_TRIPS_FILE: &str = "cpu-round-trips.json";
/// How far outside its trial's traffic a meeting of the CPUs' watch may lie, s: the watch runs
/// with the probes, which start just before the traffic and stop after its drain, seconds
/// either side.
pub const ROUND_TRIPS_SLACK_S: f64 = 60.0;
/// The lab's floor histogram, at the top of the results directory.
pub const FLOOR_FILE: &str = "latency-floor.hlog";
/// Tag of the probes on one established flow.
pub const ESTABLISHED: &str = ProbeKind::Established.name();
/// Tag of the probes that each open a new flow (a new 5-tuple: on a stateful DUT, new state).
pub const FIRST_PACKET: &str = ProbeKind::FirstPacket.name();
/// Tag of the established probes' time in the DUT (ingress to egress, the virtual lab's).
pub const ESTABLISHED_IN_DUT: &str = ProbeKind::Established.in_dut_name();
/// Tag of the first-packet probes' time in the DUT.
pub const FIRST_PACKET_IN_DUT: &str = ProbeKind::FirstPacket.in_dut_name();
/// Tag of the floor's histogram.
pub const FLOOR: &str = "floor";

/// A trial's latency in its `meta.json`: the probes' rate and, per kind, the summary of the
/// measured window (warm-up and cool-down dropped, as for the packet rates) with the probes'
/// counts over the whole trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialLatency {
    /// Probes per second, on top of the load.
    pub probe_rate_pps: u64,
    /// The load in percent of the throughput search's NDR (latency trials after a search).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_pct: Option<u32>,
    /// Probes on one established flow.
    pub established: LatencySummary,
    /// Probes that each opened a new flow, when sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_packet: Option<LatencySummary>,
    /// Probes whose kernel transmit stamp never came back: timed from their in-frame stamp
    /// (their latency then includes the send syscall), or not timed when read from the
    /// virtual DUT's egress log, which keeps none.
    #[serde(default)]
    pub tx_unstamped: u64,
    /// Whether the XDP generator carried the probes among the load's frames (the virtual lab,
    /// since 2026-11-29), rather than a packet socket of their own.
    #[serde(default)]
    pub carried: bool,
    /// How far apart the probes' CPU and the DUT's were while the probes ran (a cache line's
    /// round trip), where the lab watches it: the virtual lab, whose light-load latency moves
    /// with it ([`crate::lab::distance`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_round_trip: Option<RoundTripSummary>,
    /// The established probes' time in the DUT, from its ingress to its egress, over the
    /// measured window, where the DUT recorded their coming in (the virtual lab's,
    /// [`crate::traffic::latency::ingress`]): their latency less the way to the DUT, which on
    /// a VM moves with the host's placement of the CPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub established_in_dut: Option<Percentiles>,
    /// The first-packet probes' time in the DUT, the same way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_packet_in_dut: Option<Percentiles>,
}

/// The lab's latency floor in `lab.json`: probes from the generator straight to the receiver,
/// no DUT, measured once per campaign (or why it was not).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FloorRecord {
    /// Probes per second.
    pub probe_rate_pps: u64,
    /// Seconds of probes.
    pub duration_s: f64,
    /// The floor's latency and probe counts; `None` when it was not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<LatencySummary>,
    /// The in-frame stamp to the kernel's transmit stamp, when measured: how long the send
    /// syscall takes before the driver, which the kernel's stamp keeps out of every latency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_to_driver: Option<Percentiles>,
    /// Why the floor was not measured, when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_measured: Option<String>,
    /// The tick of the clock that timed the probes, ns (`traffic::latency::clock`), measured
    /// with the floor: every time is known to one tick.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_tick_ns: Option<u64>,
}

impl Store {
    /// Writes a trial's histograms (`latency.hlog`) into `dir` (a trial's or a search latency
    /// trial's directory), their starts counted from `base`, atomically.
    pub(crate) fn write_latency(
        &self,
        dir: &Path,
        base: SystemTime,
        intervals: &[Interval],
    ) -> anyhow::Result<()> {
        write_log(&dir.join(LATENCY_FILE), base, intervals)
    }

    /// Writes the lab's floor histogram, atomically.
    fn write_floor(&self, base: SystemTime, floor: &Interval) -> anyhow::Result<()> {
        write_log(&self.floor_path(), base, std::slice::from_ref(floor))
    }

    /// Records the lab's floor in `lab.json`, and its histogram beside it when measured.
    pub(crate) fn record_floor(
        &self,
        floor: FloorRecord,
        histogram: Option<(SystemTime, Interval)>,
    ) -> anyhow::Result<()> {
        if let Some((base, interval)) = histogram {
            self.write_floor(base, &interval)?;
        }
        let mut record = self.read_lab()?.unwrap_or_default();
        record.latency_floor = Some(floor);
        self.write_lab_record(&record)
    }

    /// The lab's floor histogram file.
    pub(crate) fn floor_path(&self) -> PathBuf {
        self.dir.join(FLOOR_FILE)
    }
}

impl Store {
    /// A finished trial's histograms (its `latency.hlog`), `None` when it has none; a corrupt
    /// one is refused in one line naming it.
    pub(crate) fn read_trial_latency(
        &self,
        key: &TrialKey,
    ) -> Result<Option<Vec<Interval>>, InputError> {
        read_latency(&self.latency_dir(key, None)?.join(LATENCY_FILE))
    }

    /// The histograms of the latency trial at `pct` % of the NDR after search iteration `key`
    /// (`latency/<pct>/latency.hlog`), as [`read_trial_latency`](Self::read_trial_latency).
    pub(crate) fn read_search_latency(
        &self,
        key: &TrialKey,
        pct: u32,
    ) -> Result<Option<Vec<Interval>>, InputError> {
        read_latency(&self.latency_dir(key, Some(pct))?.join(LATENCY_FILE))
    }

    /// The CPUs' round trips read during trial `key` (its `cpu-round-trips.json`), or during
    /// the latency trial at `pct` % of the NDR after that search iteration, whose traffic
    /// spanned `span` (start and end, s since the Unix epoch); `None` where the trial has none
    /// (no watch ran: a lab over SSH, probes and DUT on one CPU). A file that does not parse,
    /// or holds a meeting more than [`ROUND_TRIPS_SLACK_S`] outside that span (each second of
    /// the trial gets its distance: a far one would ask for a vector of that many seconds), is
    /// refused in one line naming it.
    pub(crate) fn read_round_trips(
        &self,
        key: &TrialKey,
        pct: Option<u32>,
        (start, end): (f64, f64),
    ) -> Result<Option<RoundTrips>, InputError> {
        let path = self.latency_dir(key, pct)?.join(ROUND_TRIPS_FILE);
        if !path.exists() {
            return Ok(None);
        }
        let text = crate::file::read_text_in(&self.dir, &path)?;
        let parsed: Result<RoundTrips, String> =
            serde_json::from_str(&text).map_err(|e| crate::error::shown(&e.to_string()));
        let checked = parsed.and_then(|r| {
            let within = start - ROUND_TRIPS_SLACK_S..=end + ROUND_TRIPS_SLACK_S;
            match r.samples.iter().find(|(t, _)| !within.contains(t)) {
                Some((t, _)) => Err(format!(
                    "a meeting at {t} s, outside its trial ({start} s to {end} s)"
                )),
                None => Ok(r),
            }
        });
        checked.map(Some).map_err(|e| {
            InputError::new(format!(
                "{}: corrupted: {}; remove it (the report then places that trial's seconds by \
                 the distances its record kept)",
                path.display(),
                e
            ))
        })
    }

    /// The directory of trial `key`'s latency files, or of the latency trial at `pct` % of the
    /// NDR after that search iteration.
    fn latency_dir(&self, key: &TrialKey, pct: Option<u32>) -> Result<PathBuf, InputError> {
        match pct {
            None => Ok(self.trial_dir(key)),
            Some(pct) => (self.search_trial_dir(key, SearchTrialId::Latency(pct)))
                .map_err(|e| InputError::new(e.to_string())),
        }
    }

    /// The lab's floor histogram (`latency-floor.hlog`), as
    /// [`read_trial_latency`](Self::read_trial_latency).
    pub(crate) fn read_floor(&self) -> Result<Option<Vec<Interval>>, InputError> {
        read_latency(&self.floor_path())
    }
}

/// The seconds of a latency trial after a search that the analysis keeps, from its start, for
/// a trial of `duration` seconds of load: every one but the first, up to the load's end. Such a
/// trial has no warm-up of its own (the search's trials loaded the DUT just before it), so only
/// its first second, where the load and the probes start, is left out. The probes run on for a
/// moment after the load stops (they start after the senders, and are read once the receiver
/// drained): that last part second, an idle DUT's, is left out too (measured: at 90 % of the
/// NDR, it read forwarding's time in the DUT at 0.7 µs against 1.4–1.8 µs in the seconds
/// before it).
pub(crate) fn search_latency_window(duration: f64) -> (f64, f64) {
    (1.0, duration)
}

/// The histograms of probe kind `tag` whose whole interval lies in `window` (seconds from the
/// trial's start: [`measured_window`](super::window::measured_window) for a trial,
/// [`search_latency_window`] after a search), as the packet rates keep their seconds.
pub(crate) fn windowed<'a>(
    intervals: &'a [Interval],
    tag: &'a str,
    window: (f64, f64),
) -> impl Iterator<Item = &'a Interval> + 'a {
    intervals.iter().filter(move |i| {
        let from = i.start.as_secs_f64();
        i.tag.as_deref() == Some(tag) && in_window(from, from + i.length.as_secs_f64(), window)
    })
}

/// Reads the histograms of `path` (a `latency.hlog`), `None` when there is none; a corrupt one
/// is refused in one line naming it.
pub fn read_latency(path: &Path) -> Result<Option<Vec<Interval>>, InputError> {
    if !path.exists() {
        return Ok(None);
    }
    log::read_file(path).map(Some)
}

fn write_log(path: &Path, base: SystemTime, intervals: &[Interval]) -> anyhow::Result<()> {
    let mut bytes = Vec::new();
    log::write(&mut bytes, base, intervals)?;
    crate::atomic::write(path, &bytes)
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::stats::latency::Latency;

    #[test]
    fn histograms_written_read_back_and_a_corrupt_file_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LATENCY_FILE);
        assert_eq!(read_latency(&path).unwrap(), None);
        let mut latency = Latency::new();
        (1..=100).for_each(|ns| latency.record(ns * 1000));
        let one = Interval {
            tag: Some(ESTABLISHED.into()),
            start: Duration::from_secs(3),
            length: Duration::from_secs(1),
            latency,
        };
        write_log(&path, SystemTime::UNIX_EPOCH, std::slice::from_ref(&one)).unwrap();
        let back = read_latency(&path).unwrap().unwrap();
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].tag.as_deref(), Some(ESTABLISHED));
        assert_eq!(back[0].latency.len(), 100);
        let at = |start: u64, tag: &str| Interval {
            tag: Some(tag.into()),
            start: Duration::from_secs(start),
            ..one.clone()
        };
        let all = [
            at(1, ESTABLISHED),
            at(2, FIRST_PACKET),
            at(2, ESTABLISHED),
            at(9, ESTABLISHED),
            at(10, ESTABLISHED),
        ];
        let kept: Vec<u64> = windowed(&all, ESTABLISHED, (2.0, 9.0))
            .map(|i| i.start.as_secs())
            .collect();
        assert_eq!(kept, [2]);
        // A 10 s trial after a search: the probes' part second after the load stopped is left out.
        let after_search = windowed(&all, ESTABLISHED, search_latency_window(10.0)).count();
        assert_eq!(after_search, 3);
        std::fs::write(&path, "not a log\n1.0,1.0,1.0,@@@\n").unwrap();
        let e = read_latency(&path).unwrap_err().0;
        assert!(e.contains(LATENCY_FILE) && e.contains("corrupt"), "{e}");
    }
}
