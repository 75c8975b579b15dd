//! Unit tests of `run`.

use super::*;
use crate::campaign::bench::Bench;
use crate::campaign::trial::mock::{steady, MockReceiver, MockSend, MockSender};
use crate::campaign::trial::{Rig, TrialSpec};
use crate::cancel::Cancel;
use crate::config::{Rate, Trial, Version};
use crate::store::{Status, TrialMeta};
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
        let seconds = spec.trial.duration.as_secs() as usize;
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
            dut_cpu: None,
            lab_cpus: Vec::new(),
            capture_delay: std::time::Duration::ZERO,
            prober: Err("a mock lab sends no probes".into()),
        })
    }
    fn facts(&mut self) -> anyhow::Result<crate::store::LabRecord> {
        Ok(crate::store::LabRecord::default())
    }
}

/// Runs `c` into `store` on `bench`, its events to `on_event`.
fn run_on(
    c: &Campaign,
    store: &Store,
    bench: &mut MockBench,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> anyhow::Result<usize> {
    let cancel = Cancel::new();
    let todo = super::todo(c, store)?;
    run(
        Context::new(c, store, Box::new(bench), &cancel, on_event),
        todo,
    )
}

fn small_campaign() -> Campaign {
    Campaign {
        iterations: 2,
        config_sets: vec!["forwarding".into(), "nft-stateful".into()],
        trial: Trial {
            duration: std::time::Duration::from_secs(6),
            warmup: std::time::Duration::from_secs(1),
            cooldown: std::time::Duration::from_secs(1),
            latency: false,
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
    let n = run_on(&c, &store, &mut bench, &mut |_| {}).unwrap();
    assert_eq!(n, 8);
    let meta = store.read_meta(&plan(&c)[0]).unwrap();
    assert_eq!(meta.status, Status::Ok);
    assert_eq!(meta.rx_pps, 5e5);
    assert_eq!(meta.measured_samples, 4);
    assert!(store
        .trial_dir(&plan(&c)[0])
        .join("dut-before.txt")
        .exists());
    // Resuming a finished campaign runs nothing (once the first run let go of the directory).
    drop(store);
    let again = Store::resume(tmp.path(), &c, &crate::config::defaults::CONFIG_SETS).unwrap();
    assert_eq!(run_on(&c, &again, &mut bench, &mut |_| {}).unwrap(), 0);
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
    run_on(&c, &store, &mut bench, &mut |e| {
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
    run_on(&c, &store, &mut bench, &mut |_| {}).unwrap();
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
        run_on(&c, &store, &mut bench, &mut |e| {
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
    run_on(&c, &store, &mut bench, &mut |_| {}).unwrap();
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
    run_on(&c, &store, &mut MockBench::new(1.0), &mut |_| {}).unwrap();
    let meta = store.read_meta(&plan(&c)[0]).unwrap();
    assert_eq!(meta.status, Status::Flagged);
    assert!(
        meta.flags[0].contains("DUT not saturated"),
        "{:?}",
        meta.flags
    );
}

#[test]
fn versions_and_config_sets_are_applied_only_when_they_change() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = small_campaign();
    c.order = crate::config::Order::Sequential;
    let store = Store::create(tmp.path(), &c).unwrap();
    let mut bench = MockBench::new(0.5);
    run_on(&c, &store, &mut bench, &mut |_| {}).unwrap();
    assert_eq!(
        bench.calls,
        [
            "version default",
            "config forwarding",
            "config nft-stateful"
        ]
    );
}
