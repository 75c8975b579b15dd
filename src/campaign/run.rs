//! Running a campaign: for each missing trial, set the DUT's version and config set, run the
//! traffic through a [`Bench`], check the result, retry a failed attempt once, and store it.
//!
//! The run loop knows nothing of namespaces or SSH: a [`Bench`] is whatever can apply a version
//! and a config set and run one trial. It does not print either: it reports [`Event`]s.

use std::collections::BTreeMap;
use std::time::Instant;

use anyhow::Context;

use super::trial::{self, Rig, TrialData, TrialSpec};
use crate::cancel::{Cancel, Cancelled};
use crate::config::{config_set_name, Campaign, Rate, Version};
use crate::stats::{Flavor, Sample};
use crate::store::{measured, plan, SampleRow, Status, Store, TrialKey, TrialMeta, FOLDED_FILE};

/// A lab that can run trials: the virtual lab, or real hosts over SSH. It switches versions
/// and config sets and hands out the parts of a trial; the trial procedure is
/// [`trial::run`](super::trial::run), the same for every lab.
pub trait Bench {
    /// Puts `version` on the DUT (settings on the virtual lab; install and reboot on real labs);
    /// a long wait (a reboot) ends early when `cancel` is raised.
    fn set_version(&mut self, version: &Version, cancel: &Cancel) -> anyhow::Result<()>;
    /// Applies a config set (a built-in name or a directory), removing the previous one.
    fn set_config(&mut self, entry: &str) -> anyhow::Result<()>;
    /// The DUT, senders, receiver and profiler of one trial of `spec`.
    fn rig(&mut self, spec: &TrialSpec<'_>) -> anyhow::Result<Rig<'_>>;
    /// Facts about the lab for `lab.json` (hosts, CPUs, kernel, tools, rulesets).
    fn facts(&mut self) -> anyhow::Result<serde_json::Value>;
}

/// Progress of a campaign, for the CLI to show.
#[derive(Debug, Clone)]
pub enum Event<'a> {
    /// The campaign starts: `todo` trials to run out of `total` (the rest were done before).
    Start {
        /// Trials in the campaign.
        total: usize,
        /// Trials still to run.
        todo: usize,
    },
    /// A trial starts.
    TrialStart {
        /// Which.
        key: &'a TrialKey,
        /// Attempt number, from 1.
        attempt: u32,
    },
    /// One second of the running trial.
    Second {
        /// The sample.
        sample: &'a SampleRow,
    },
    /// An attempt failed, or was unsteady, and will be measured once more.
    Retry {
        /// Which.
        key: &'a TrialKey,
        /// Why.
        reason: &'a str,
    },
    /// A trial is stored.
    TrialDone {
        /// Which.
        key: &'a TrialKey,
        /// What was stored.
        meta: &'a TrialMeta,
    },
}

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

/// Runs every trial of `campaign` not yet in `store`, until `cancel` is raised; returns the
/// number of trials run.
pub fn run(
    campaign: &Campaign,
    store: &Store,
    bench: &mut dyn Bench,
    cancel: &Cancel,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> anyhow::Result<usize> {
    store.write_lab_facts(|| bench.facts().context("collecting lab facts"))?;
    let done = store.finished_trials()?;
    // Each profile's fastest full-rate sender so far, the reference for `slowed`.
    let mut fastest: BTreeMap<String, f64> = BTreeMap::new();
    for (key, meta) in done.iter().filter(|(k, _)| !k.is_profiling()) {
        if meta.status != Status::Failed {
            note_fastest(&mut fastest, key, meta);
        }
    }
    let todo: Vec<TrialKey> = plan(campaign)
        .into_iter()
        .filter(|k| !done.contains_key(k))
        .collect();
    on_event(&Event::Start {
        total: done.len() + todo.len(),
        todo: todo.len(),
    });
    let (mut version, mut config): (Option<&str>, Option<&str>) = (None, None);
    for key in &todo {
        cancel.check()?;
        let (v, entry, profile) = coordinates(campaign, key)?;
        let t0 = Instant::now();
        if version != Some(v.name.as_str()) {
            bench
                .set_version(v, cancel)
                .with_context(|| format!("applying version `{}`", v.name))?;
            version = Some(&v.name);
            // A new version may reset the DUT: the config set must be applied again.
            config = None;
        }
        if config != Some(entry.as_str()) {
            bench
                .set_config(entry)
                .with_context(|| format!("applying config set `{}`", key.config))?;
            config = Some(entry);
        }
        let spec = TrialSpec {
            key,
            profile,
            trial: &campaign.trial,
            hooks: &campaign.hooks,
            capture: key.is_profiling(),
        };
        let reference = match profile.rate {
            Rate::Max => fastest.get(&key.profile).copied(),
            Rate::Pps(_) => None,
        };
        let meta = run_trial(store, bench, &spec, reference, (t0, cancel), on_event)?;
        if !key.is_profiling() && meta.status != Status::Failed {
            note_fastest(&mut fastest, key, &meta);
        }
        on_event(&Event::TrialDone { key, meta: &meta });
    }
    Ok(todo.len())
}

/// The version, config set entry and profile a planned trial names.
fn coordinates<'c>(
    campaign: &'c Campaign,
    key: &TrialKey,
) -> anyhow::Result<(&'c Version, &'c String, &'c crate::config::Profile)> {
    let v = campaign.versions.iter().find(|v| v.name == key.version);
    let entry = (campaign.config_sets.iter()).find(|c| config_set_name(c) == key.config);
    let profile = campaign.profiles.iter().find(|p| p.name == key.profile);
    match (v, entry, profile) {
        (Some(v), Some(entry), Some(profile)) => Ok((v, entry, profile)),
        _ => anyhow::bail!("trial {key} is not one of the campaign's"),
    }
}

/// Keeps `meta`'s sender rate if it is the fastest of its profile yet.
fn note_fastest(fastest: &mut BTreeMap<String, f64>, key: &TrialKey, meta: &TrialMeta) {
    let best = fastest.entry(key.profile.clone()).or_insert(0.0);
    *best = best.max(meta.tx_pps);
}

/// Runs one trial with its retry, stores it, and returns what was stored; `fastest` is the
/// fastest full-rate sender of the profile so far, if any; `t0` is when the trial's turn came.
fn run_trial(
    store: &Store,
    bench: &mut dyn Bench,
    spec: &TrialSpec<'_>,
    fastest: Option<f64>,
    (t0, cancel): (Instant, &Cancel),
    on_event: &mut dyn FnMut(&Event<'_>),
) -> anyhow::Result<TrialMeta> {
    let key = spec.key;
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
        let outcome = bench.rig(spec).and_then(|rig| {
            trial::run(rig, spec, cancel, &mut |s| {
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
                return store_trial(store, key, &last_data, meta, t0);
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
        return store_trial(store, key, &data, meta, t0);
    }
    let mut meta = summarize(spec, &last_data);
    meta.status = Status::Failed;
    meta.failure = Some(last_failure);
    meta.attempts = ATTEMPTS;
    meta.discarded = discarded;
    store_trial(store, key, &last_data, meta, t0)
}

fn store_trial(
    store: &Store,
    key: &TrialKey,
    data: &TrialData,
    mut meta: TrialMeta,
    t0: Instant,
) -> anyhow::Result<TrialMeta> {
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
    }
}

/// What judging a usable attempt found.
struct Judged {
    /// The trial's figures and flags.
    meta: TrialMeta,
    /// Why the machine disturbed it (unsteady, slowed), if it did: a reason to measure again.
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
    use crate::campaign::trial::mock::{steady, MockReceiver, MockSend, MockSender};
    use crate::config::Trial;
    use crate::traffic::endpoint::Tick;
    use crate::transport::MockTransport;
    use std::collections::BTreeSet;

    /// What a mock attempt does: fail, forward with a dip of half the rate in its third second,
    /// or send and forward at half speed throughout (a slowed machine); once the script is used
    /// up, forward steadily.
    #[derive(Debug, Clone, Copy)]
    enum MockAttempt {
        Steady,
        Fail,
        Unsteady,
        Slowed,
    }

    /// A bench that forwards a fixed share of a fixed sender rate, failing on demand.
    struct MockBench {
        tx_pps: f64,
        share: f64,
        script: std::collections::VecDeque<MockAttempt>,
        calls: Vec<String>,
        trials: usize,
        dut: MockTransport,
    }

    impl MockBench {
        fn new(share: f64) -> Self {
            Self {
                tx_pps: 1e6,
                share,
                script: Default::default(),
                calls: Vec::new(),
                trials: 0,
                dut: MockTransport::new("dut"),
            }
        }
    }

    impl Bench for MockBench {
        fn set_version(&mut self, v: &Version, _: &Cancel) -> anyhow::Result<()> {
            self.calls.push(format!("version {}", v.name));
            Ok(())
        }
        fn set_config(&mut self, entry: &str) -> anyhow::Result<()> {
            self.calls.push(format!("config {entry}"));
            Ok(())
        }
        fn rig(&mut self, spec: &TrialSpec<'_>) -> anyhow::Result<Rig<'_>> {
            self.trials += 1;
            let attempt = self.script.pop_front();
            let send = match attempt {
                Some(MockAttempt::Fail) => MockSend::Fails,
                _ => MockSend::Ends,
            };
            let dip = matches!(attempt, Some(MockAttempt::Unsteady));
            let speed = match attempt {
                Some(MockAttempt::Slowed) => 0.5,
                _ => 1.0,
            };
            let seconds = spec.trial.duration as usize;
            let tx = self.tx_pps * speed;
            let rx = (1..=seconds)
                .map(|t| {
                    let slow = if dip && t == 3 { 0.5 } else { 1.0 };
                    let pps = tx * self.share * slow;
                    Tick {
                        pkts: pps as u64,
                        pps,
                    }
                })
                .collect();
            Ok(Rig {
                dut: &self.dut,
                counters: vec!["counters".into()],
                senders: vec![MockSender::new(steady(seconds, tx), send)],
                receiver: Box::new(MockReceiver { ticks: rx }),
                profiler: None,
                capture_delay: std::time::Duration::ZERO,
            })
        }
        fn facts(&mut self) -> anyhow::Result<serde_json::Value> {
            Ok(serde_json::json!({ "mock": true }))
        }
    }

    fn small_campaign() -> Campaign {
        Campaign {
            iterations: 2,
            config_sets: vec!["forwarding".into(), "nft-stateful".into()],
            trial: Trial {
                duration: 6.0,
                warmup: 1.0,
                cooldown: 1.0,
            },
            ..Campaign::default()
        }
    }

    /// [`small_campaign`] cut to one version, config set and profile.
    fn one_series(iterations: u32) -> Campaign {
        let mut c = small_campaign();
        c.iterations = iterations;
        c.config_sets.truncate(1);
        c.profiles.truncate(1);
        c
    }

    #[test]
    fn runs_every_trial_once_and_resumes_without_duplicates() {
        let tmp = tempfile::tempdir().unwrap();
        let c = small_campaign();
        let store = Store::create(tmp.path(), &c).unwrap();
        let mut bench = MockBench::new(0.5);
        let n = run(&c, &store, &mut bench, &Cancel::new(), &mut |_| {}).unwrap();
        assert_eq!(n, 8);
        let meta = store.read_meta(&plan(&c)[0]).unwrap();
        assert_eq!(meta.status, Status::Ok);
        assert_eq!(meta.rx_pps, 5e5);
        assert_eq!(meta.measured_samples, 4);
        assert!(store
            .trial_dir(&plan(&c)[0])
            .join("dut-before.txt")
            .exists());
        // Resuming a finished campaign runs nothing.
        let again = Store::resume(tmp.path(), &c, &crate::config::defaults::CONFIG_SETS).unwrap();
        assert_eq!(
            run(&c, &again, &mut bench, &Cancel::new(), &mut |_| {}).unwrap(),
            0
        );
        let all: BTreeSet<TrialKey> = plan(&c).into_iter().collect();
        assert_eq!(again.finished().unwrap(), all);
    }

    #[test]
    fn a_failed_attempt_is_retried_once_then_recorded_as_failed() {
        let tmp = tempfile::tempdir().unwrap();
        let c = one_series(1);
        let store = Store::create(tmp.path(), &c).unwrap();
        let mut bench = MockBench::new(0.5);
        bench.script = [MockAttempt::Fail].into();
        let mut retries = 0;
        run(&c, &store, &mut bench, &Cancel::new(), &mut |e| {
            if let Event::Retry { .. } = e {
                retries += 1
            }
        })
        .unwrap();
        assert_eq!((retries, bench.trials), (1, 2));
        let meta = store.read_meta(&plan(&c)[0]).unwrap();
        assert_eq!((meta.status, meta.attempts), (Status::Ok, 2));

        let tmp = tempfile::tempdir().unwrap();
        let store = Store::create(tmp.path(), &c).unwrap();
        bench.script = [MockAttempt::Fail, MockAttempt::Fail].into();
        run(&c, &store, &mut bench, &Cancel::new(), &mut |_| {}).unwrap();
        let meta = store.read_meta(&plan(&c)[0]).unwrap();
        assert_eq!(meta.status, Status::Failed);
        assert_eq!(meta.failure.as_deref(), Some("generator died"));
    }

    #[test]
    fn an_unsteady_attempt_is_measured_again_and_never_lost_for_a_failed_one() {
        use MockAttempt::{Fail, Unsteady};
        let c = one_series(1);
        let key = &plan(&c)[0];
        let run_with = |script: &[MockAttempt]| {
            let tmp = tempfile::tempdir().unwrap();
            let store = Store::create(tmp.path(), &c).unwrap();
            let mut bench = MockBench::new(0.5);
            bench.script = script.iter().copied().collect();
            let mut retries = Vec::new();
            run(&c, &store, &mut bench, &Cancel::new(), &mut |e| {
                if let Event::Retry { reason, .. } = e {
                    retries.push(reason.to_string())
                }
            })
            .unwrap();
            (store.read_meta(key).unwrap(), retries)
        };

        // The second, steady attempt is kept; the report will say why the first was not.
        let (meta, retries) = run_with(&[Unsteady]);
        assert_eq!(
            (meta.status, meta.attempts, meta.rx_pps),
            (Status::Ok, 2, 5e5)
        );
        assert!(retries[0].starts_with("unsteady: "), "{retries:?}");
        assert_eq!(meta.discarded.as_deref(), Some(retries[0].as_str()));

        // Unsteady twice: the second is kept, flagged.
        let (meta, _) = run_with(&[Unsteady, Unsteady]);
        assert_eq!((meta.status, meta.attempts), (Status::Flagged, 2));
        assert!(meta.flags[0].starts_with("unsteady: "), "{:?}", meta.flags);

        // A failed second attempt does not replace a measured first one.
        let (meta, _) = run_with(&[Unsteady, Fail]);
        assert_eq!((meta.status, meta.attempts), (Status::Flagged, 2));
        assert_eq!(
            meta.discarded.as_deref(),
            Some("the second attempt failed: generator died")
        );
    }

    #[test]
    fn a_trial_on_a_slowed_machine_is_measured_again() {
        use MockAttempt::{Slowed, Steady};
        let c = one_series(4);
        assert_eq!(c.profiles[0].rate, Rate::Max);
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::create(tmp.path(), &c).unwrap();
        let mut bench = MockBench::new(0.5);
        // The first trial has no reference: its slowness cannot be seen. The third one is
        // measured again; the fourth, slowed twice, is kept and flagged.
        bench.script = [Slowed, Steady, Slowed, Steady, Slowed, Slowed].into();
        run(&c, &store, &mut bench, &Cancel::new(), &mut |_| {}).unwrap();
        let metas: Vec<TrialMeta> = plan(&c)
            .iter()
            .map(|k| store.read_meta(k).unwrap())
            .collect();
        assert_eq!((metas[0].status, metas[0].attempts), (Status::Ok, 1));
        assert_eq!((metas[1].status, metas[1].attempts), (Status::Ok, 1));
        assert_eq!((metas[2].status, metas[2].attempts), (Status::Ok, 2));
        let why = metas[2].discarded.as_deref().unwrap();
        assert!(
            why.starts_with("slowed: the sender sent 500000 pps, 50% less"),
            "{why}"
        );
        assert_eq!((metas[3].status, metas[3].attempts), (Status::Flagged, 2));
        assert!(
            metas[3].flags[0].starts_with("slowed: "),
            "{:?}",
            metas[3].flags
        );
    }

    #[test]
    fn an_unsaturated_dut_is_flagged() {
        let tmp = tempfile::tempdir().unwrap();
        let mut c = small_campaign();
        c.iterations = 1;
        let store = Store::create(tmp.path(), &c).unwrap();
        run(
            &c,
            &store,
            &mut MockBench::new(1.0),
            &Cancel::new(),
            &mut |_| {},
        )
        .unwrap();
        let meta = store.read_meta(&plan(&c)[0]).unwrap();
        assert_eq!(meta.status, Status::Flagged);
        assert!(
            meta.flags[0].contains("DUT not saturated"),
            "{:?}",
            meta.flags
        );
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

    #[test]
    fn versions_and_config_sets_are_applied_only_when_they_change() {
        let tmp = tempfile::tempdir().unwrap();
        let mut c = small_campaign();
        c.order = crate::config::Order::Sequential;
        let store = Store::create(tmp.path(), &c).unwrap();
        let mut bench = MockBench::new(0.5);
        run(&c, &store, &mut bench, &Cancel::new(), &mut |_| {}).unwrap();
        assert_eq!(
            bench.calls,
            [
                "version default",
                "config forwarding",
                "config nft-stateful"
            ]
        );
    }
}
