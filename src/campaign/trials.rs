//! The trials design: each planned trial measured by the trial procedure, judged (failed,
//! unsteady, slowed, crowded, unsaturated), measured once more if it failed or the machine
//! disturbed it, and stored.

use std::collections::BTreeMap;
use std::time::Instant;

use anyhow::Context as _;

use super::bench::Event;
use super::context::Context;
use super::design::{Design, Unit};
use super::latency;
use super::trial::{self, TrialData, TrialSpec};
use crate::cancel::Cancelled;
use crate::config::{Campaign, Measure, Rate};
use crate::stats::{Flavor, Sample};
use crate::store::{
    crowded as crowded_share, measured, SampleRow, Status, Store, TrialKey, TrialMeta,
    CROWDED_SHARE, FOLDED_FILE,
};

/// Attempts per trial: a failed or unsteady attempt is measured once more.
const ATTEMPTS: u32 = 2;
/// A DUT forwarding at least this share of what was sent was not saturated.
const UNSATURATED_SHARE: f64 = 0.99;
/// A sender below this share of a fixed offered rate did not deliver the asked load.
const OFFERED_SHARE: f64 = 0.99;
/// A trial whose per-second rate spans more than this share of its median is flagged as
/// unsteady: on a quiet lab the seconds of a trial differ by a few percent at most.
const UNSTEADY_RANGE: f64 = 0.10;
/// A sender at full rate below this share of its fastest trial of the same profile was slowed.
/// A full-rate sender is CPU-bound: on the virtual lab its rate moves with the DUT's config set
/// by 5 % at most, while a host that slows both CPUs (another load on their cores) costs both
/// it and the DUT some 25 %, for whole trials, which the per-second check cannot see.
const SLOWED_SHARE: f64 = 0.85;

/// The trials design of a campaign's saturation profiles (and of every profiling trial).
pub(crate) struct Trials {
    /// Each profile's fastest full-rate sender so far, the reference for `slowed`.
    fastest: BTreeMap<String, f64>,
}

impl Trials {
    /// The design of `campaign`, its references taken from the trials `done` before.
    pub(crate) fn new(campaign: &Campaign, done: &BTreeMap<TrialKey, TrialMeta>) -> Self {
        let mut fastest = BTreeMap::new();
        for (key, meta) in done.iter().filter(|(k, _)| saturating(campaign, k)) {
            if meta.status != Status::Failed {
                note_fastest(&mut fastest, key, meta);
            }
        }
        Self { fastest }
    }
}

impl Design for Trials {
    fn measure(
        &mut self,
        ctx: &mut Context<'_>,
        unit: &Unit<'_>,
        since: Instant,
    ) -> anyhow::Result<usize> {
        let (key, profile, campaign) = (&unit.key, unit.profile, ctx.campaign);
        let probing = campaign.latency();
        let spec = TrialSpec {
            key,
            profile,
            trial: &campaign.trial,
            hooks: &campaign.hooks,
            capture: key.is_profiling(),
            follow: true,
            watch_cpu: false,
            probes: profile.latency(&campaign.trial).then_some(probing.rate),
            in_dut: probing.in_dut,
        };
        let reference = match profile.rate {
            Rate::Max => self.fastest.get(&key.profile).copied(),
            Rate::Pps(_) => None,
        };
        let meta = run_trial(ctx, &spec, reference, since)?;
        if !key.is_profiling() && meta.status != Status::Failed {
            note_fastest(&mut self.fastest, key, &meta);
        }
        ctx.event(&Event::TrialDone { key, meta: &meta });
        Ok(1)
    }
}

/// Whether `key` measures a saturating rate (not a profiling trial, not a search), the kind of
/// trial the `slowed` check compares.
fn saturating(campaign: &Campaign, key: &TrialKey) -> bool {
    !key.is_profiling()
        && (campaign.profiles.iter())
            .any(|p| p.name == key.profile && p.measure == Measure::Saturation)
}

/// Keeps `meta`'s sender rate if it is the fastest of its profile yet.
fn note_fastest(fastest: &mut BTreeMap<String, f64>, key: &TrialKey, meta: &TrialMeta) {
    let best = fastest.entry(key.profile.clone()).or_insert(0.0);
    *best = best.max(meta.tx_pps);
}

/// Runs one trial with its retry, stores it, and returns what was stored; `fastest` is the
/// fastest full-rate sender of the profile so far, if any; `t0` is when the trial's turn came.
fn run_trial(
    ctx: &mut Context<'_>,
    spec: &TrialSpec<'_>,
    fastest: Option<f64>,
    t0: Instant,
) -> anyhow::Result<TrialMeta> {
    let (key, store, cancel) = (spec.key, ctx.store, ctx.cancel);
    let on_event = &mut *ctx.on_event;
    let mut last_failure = String::new();
    let mut last_data = TrialData::default();
    // Why the first attempt was not kept; a disturbed one, kept should the second one fail.
    let mut discarded = None;
    let mut disturbed_attempt: Option<(TrialData, TrialMeta)> = None;
    for attempt in 1..=ATTEMPTS {
        on_event(&Event::TrialStart { key, attempt });
        store
            .begin_trial(key)
            .with_context(|| format!("preparing {}", store.trial_dir(key).display()))?;
        let outcome = ctx.bench.rig(spec).and_then(|rig| {
            trial::run(rig, spec, cancel, &mut |s: &SampleRow| {
                on_event(&Event::Second { sample: s })
            })
        });
        if cancel.is_cancelled() {
            return Err(Cancelled.into());
        }
        let verdict = match outcome {
            Ok(data) => {
                let verdict = judge(spec, &data, fastest);
                last_data = data;
                verdict
            }
            Err(e) => Err(format!("{e:#}")),
        };
        // An unsteady or slowed attempt was disturbed by something else on the machine: it is
        // measured once more (and kept, flagged, if the second one is disturbed too). A
        // profiling trial's figures are not counted: its capture is what matters.
        let verdict = match verdict {
            Ok(Judged {
                meta,
                disturbed: Some(reason),
            }) if attempt < ATTEMPTS && !spec.capture => {
                disturbed_attempt = Some((std::mem::take(&mut last_data), meta));
                Err(reason)
            }
            other => other.map(|judged| judged.meta),
        };
        match verdict {
            Ok(mut meta) => {
                meta.attempts = attempt;
                meta.discarded = discarded;
                return store_trial(store, spec, &last_data, meta, t0);
            }
            Err(reason) => {
                if attempt < ATTEMPTS {
                    on_event(&Event::Retry {
                        key,
                        reason: &reason,
                    });
                    discarded = Some(reason.clone());
                }
                last_failure = reason;
            }
        }
    }
    // A measurement is never thrown away for a worse one: a disturbed first attempt (flagged)
    // stands when the second one failed.
    if let Some((data, mut meta)) = disturbed_attempt {
        meta.attempts = ATTEMPTS;
        meta.discarded = Some(format!("the second attempt failed: {last_failure}"));
        return store_trial(store, spec, &data, meta, t0);
    }
    let mut meta = summarize(spec, &last_data);
    meta.status = Status::Failed;
    meta.failure = Some(last_failure);
    meta.attempts = ATTEMPTS;
    meta.discarded = discarded;
    store_trial(store, spec, &last_data, meta, t0)
}

fn store_trial(
    store: &Store,
    spec: &TrialSpec<'_>,
    data: &TrialData,
    mut meta: TrialMeta,
    t0: Instant,
) -> anyhow::Result<TrialMeta> {
    let key = spec.key;
    if let (Some(probes), Some(rate)) = (&data.probes, spec.probes) {
        let dir = store.trial_dir(key);
        meta.latency = Some(latency::store_trial(
            store,
            &dir,
            (probes, data.round_trips.as_ref()),
            data.start_unix_s,
            spec.trial,
            rate,
            None,
        )?);
    }
    let folded = (data.capture.as_ref()).map(|c| (FOLDED_FILE.to_string(), c.folded.to_text()));
    for (name, text) in data.files.iter().chain(&folded) {
        store
            .write_trial_file(key, name, text.as_bytes())
            .with_context(|| format!("writing {name} of trial {key}"))?;
    }
    let traffic = (data.end_unix_s - data.start_unix_s).max(0.0);
    meta.overhead_s = (t0.elapsed().as_secs_f64() - traffic * f64::from(meta.attempts)).max(0.0);
    store
        .finish_trial(key, &data.samples, &meta)
        .with_context(|| format!("writing trial {key}"))?;
    Ok(meta)
}

fn median(values: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = values.collect();
    if v.is_empty() {
        0.0
    } else {
        Sample::new(v).summary(Flavor::Current).median
    }
}

/// The figures of a trial, whatever its checks say.
fn summarize(spec: &TrialSpec<'_>, data: &TrialData) -> TrialMeta {
    let window = measured(&data.samples, spec.trial);
    let tx_pkts = data.samples.iter().map(|s| s.tx_pkts).sum();
    let rx_pkts = data.samples.iter().map(|s| s.rx_pkts).sum::<u64>();
    TrialMeta {
        trial: spec.key.to_string(),
        start_unix_s: data.start_unix_s,
        end_unix_s: data.end_unix_s,
        offered_pps: match spec.profile.rate {
            Rate::Max => None,
            Rate::Pps(p) => Some(p),
        },
        tx_pps: median(window.iter().map(|s| s.tx_pps)),
        rx_pps: median(window.iter().map(|s| s.rx_pps)),
        tx_pkts,
        rx_pkts,
        lost_pkts: tx_pkts.saturating_sub(rx_pkts),
        measured_samples: window.len(),
        generator: data.generator.clone(),
        status: Status::Ok,
        flags: Vec::new(),
        failure: None,
        attempts: 1,
        discarded: None,
        overhead_s: 0.0,
        capture: data.capture.as_ref().map(|c| c.window.clone()),
        latency: None,
        others: data.others.clone(),
    }
}

/// What judging a usable attempt found.
struct Judged {
    /// The trial's figures and flags.
    meta: TrialMeta,
    /// Why the machine disturbed it (unsteady, slowed, crowded), if it did: a reason to
    /// measure again.
    disturbed: Option<String>,
}

/// Checks a trial: `Err` (retry, then fail) when nothing usable was measured, flags when the
/// figure is not the DUT's forwarding limit at the asked load; `fastest` is the profile's
/// fastest full-rate sender in the campaign so far.
fn judge(spec: &TrialSpec<'_>, data: &TrialData, fastest: Option<f64>) -> Result<Judged, String> {
    let mut meta = summarize(spec, data);
    let window = measured(&data.samples, spec.trial);
    if meta.rx_pkts == 0 {
        return Err("the receiver saw no traffic".into());
    }
    let expected = spec.trial.measured_seconds();
    if window.len() + 1 < expected {
        return Err(format!(
            "only {} of {expected} measured seconds were sampled",
            window.len()
        ));
    }
    let dead: Vec<String> = window
        .iter()
        .filter(|s| s.rx_pkts == 0)
        .map(|s| format!("{:.0}", s.t_s))
        .collect();
    if !dead.is_empty() {
        return Err(format!(
            "no traffic received in second(s) {} of the measured window",
            dead.join(", ")
        ));
    }
    match spec.profile.rate {
        Rate::Pps(offered) if meta.tx_pps < OFFERED_SHARE * offered as f64 => {
            meta.flags.push(format!(
                "sender reached {:.0} pps, below the offered {offered} pps",
                meta.tx_pps
            ));
        }
        Rate::Max if meta.rx_pps >= UNSATURATED_SHARE * meta.tx_pps => {
            meta.flags.push(format!(
                "DUT not saturated: it forwarded all the sender could send ({:.0} pps); \
                 the figure is the sender's limit",
                meta.tx_pps
            ));
        }
        _ => {}
    }
    let disturbances: Vec<String> = unsteady(&window)
        .into_iter()
        .chain(slowed(meta.tx_pps, fastest))
        // A profiling trial's own perf runs beside the DUT until the capture ends.
        .chain(crowded(&meta).filter(|_| !spec.capture))
        .collect();
    meta.flags.extend(disturbances.iter().cloned());
    if !meta.flags.is_empty() {
        meta.status = Status::Flagged;
    }
    Ok(Judged {
        meta,
        disturbed: (!disturbances.is_empty()).then(|| disturbances.join("; ")),
    })
}

/// Says so when a full-rate sender sent less than [`SLOWED_SHARE`] of the `fastest` trial of its
/// profile: the whole machine ran slower for this trial, so its figure is not comparable.
fn slowed(tx_pps: f64, fastest: Option<f64>) -> Option<String> {
    let fastest = fastest?;
    (tx_pps < SLOWED_SHARE * fastest).then(|| {
        format!(
            "slowed: the sender sent {tx_pps:.0} pps, {:.0}% less than in the fastest trial of \
             this profile ({fastest:.0} pps); the machine's CPUs were slowed (another load on \
             the host?)",
            100.0 * (1.0 - tx_pps / fastest)
        )
    })
}

/// Says so when other programs took more than [`CROWDED_SHARE`] of the lab's CPUs' time
/// during the trial (read on the virtual lab): the same rule as a search's trials', whose
/// measurement (`benches/crowded.sh`) set it.
fn crowded(meta: &TrialMeta) -> Option<String> {
    let share = meta
        .others_share()
        .filter(|&share| crowded_share(Some(share)))?;
    Some(format!(
        "crowded: other programs took {:.1} % of the lab's CPUs' time (more than {:.0} %); the \
         DUT's threads preempt them, but they take the CPUs' caches and delay their wake-ups, \
         so the figure is theirs as much as the DUT's",
        100.0 * share,
        100.0 * CROWDED_SHARE
    ))
}

/// Says so when the forwarded rate moved more than [`UNSTEADY_RANGE`] of its median within
/// the measured window: the figure then mixes two regimes (another load, a throttled CPU).
fn unsteady(window: &[&SampleRow]) -> Option<String> {
    let mid = median(window.iter().map(|s| s.rx_pps));
    let (lo, hi) = window.iter().fold((f64::INFINITY, 0.0_f64), |(lo, hi), s| {
        (lo.min(s.rx_pps), hi.max(s.rx_pps))
    });
    (mid > 0.0 && hi - lo > UNSTEADY_RANGE * mid).then(|| {
        format!(
            "unsteady: the DUT forwarded {lo:.0} to {hi:.0} pps from one second to the next \
             ({:.0}% of the median); something else may have used the CPUs",
            100.0 * (hi - lo) / mid
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::stall::OthersTime;

    #[test]
    fn a_trial_whose_lab_cpus_other_programs_took_is_flagged_crowded() {
        let key = TrialKey::parse("v.forwarding.inet4.1").unwrap();
        // 10 s of traffic on two CPUs: 20 s of their time, of which 1 % is 200 ms.
        let meta = |ms| TrialMeta {
            start_unix_s: 100.0,
            end_unix_s: 110.0,
            others: Some(OthersTime {
                ms,
                cpus: vec![0, 1],
            }),
            ..crate::store::tests::meta(&key)
        };
        assert_eq!(crowded(&meta(150.0)), None);
        let flag = crowded(&meta(1140.0)).unwrap();
        assert!(
            flag.starts_with("crowded: other programs took 5.7 % of the lab's CPUs' time"),
            "{flag}"
        );
        // Not read (a lab over SSH): nothing said.
        let unread = TrialMeta {
            others: None,
            ..meta(0.0)
        };
        assert_eq!(crowded(&unread), None);
    }

    #[test]
    fn a_trial_whose_rate_jumps_is_flagged_unsteady() {
        let rows = |rates: &[f64]| -> Vec<SampleRow> {
            rates
                .iter()
                .enumerate()
                .map(|(i, &r)| SampleRow {
                    t_s: (i + 1) as f64,
                    tx_pkts: 1_000_000,
                    rx_pkts: r as u64,
                    tx_pps: 1e6,
                    rx_pps: r,
                })
                .collect()
        };
        let steady = rows(&[800e3, 790e3, 805e3, 798e3]);
        assert_eq!(unsteady(&steady.iter().collect::<Vec<_>>()), None);
        let jumpy = rows(&[780e3, 770e3, 490e3, 480e3, 500e3]);
        let flag = unsteady(&jumpy.iter().collect::<Vec<_>>()).unwrap();
        assert!(
            flag.starts_with("unsteady: the DUT forwarded 480000 to 780000 pps"),
            "{flag}"
        );
    }
}
