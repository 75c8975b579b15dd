//! Unit tests of the search runner on mock senders and a mock receiver (no root).

use super::aim::AIM;
use super::summary::flags;
use super::*;
use crate::campaign::bench::Bench;
use crate::campaign::trial::mock::{MockReceiver, MockSend, MockSender};
use crate::campaign::trial::Rig;
use crate::cancel::Cancel;
use crate::config::{Campaign, Family, Measure, Version};
use crate::search::{Goal, SearchConfig};
use crate::store::{Crowded, Status, Store};
use crate::traffic::endpoint::Tick;
use crate::transport::{MockTransport, Output};

/// A mock DUT that forwards up to `capacity` packets/s behind a generator that sends up to
/// `generator` packets/s; the receiver counts the last `in_flight` packets of each trial only
/// in a drained tick after the senders' last second, as packets still queued when the senders
/// stop do.
struct MockDut {
    capacity: f64,
    generator: f64,
    /// Share of a fixed rate asked that the senders send.
    efficiency: f64,
    /// Whether the senders leave a summary with their rate (`generator.json`).
    summary: bool,
    in_flight: u64,
    /// Frames its senders' input queue held beyond its ring as they stopped, and dropped (the
    /// virtual lab's): the receiver never counts them.
    late: u64,
    send: MockSend,
    dut: MockTransport,
    rates: Vec<Rate>,
    /// Whether each rig's senders followed the DUT at `max`.
    follows: Vec<bool>,
}

impl MockDut {
    fn new(capacity: f64, generator: f64) -> Self {
        Self {
            capacity,
            generator,
            efficiency: 1.0,
            summary: false,
            in_flight: 1000,
            late: 0,
            send: MockSend::Ends,
            dut: MockTransport::new("dut"),
            rates: Vec::new(),
            follows: Vec::new(),
        }
    }
}

fn tick(pkts: u64) -> Tick {
    Tick {
        pkts,
        pps: pkts as f64,
    }
}

impl Bench for MockDut {
    fn set_version(&mut self, _: &Version, _: &Cancel) -> anyhow::Result<()> {
        Ok(())
    }
    fn set_config(&mut self, _: &str) -> anyhow::Result<()> {
        Ok(())
    }
    fn rig(&mut self, spec: &TrialSpec<'_>) -> anyhow::Result<Rig<'_>> {
        self.rates.push(spec.profile.rate);
        self.follows.push(spec.follow);
        // Which rig this is, in the DUT's counters file: which trial's files those are.
        let counters = vec!["counters".into(), self.rates.len().to_string()];
        let pps = match spec.profile.rate {
            Rate::Pps(p) => (p as f64 * self.efficiency).min(self.generator),
            Rate::Max => self.generator,
        };
        let seconds = spec.trial.duration.as_secs_f64().ceil() as usize;
        let forwarded = pps.min(self.capacity) as u64;
        let tx = vec![tick(pps as u64); seconds];
        let mut rx = vec![tick(forwarded); seconds];
        if let Some(last) = rx.last_mut() {
            last.pkts -= (self.in_flight + self.late).min(last.pkts);
        }
        rx.push(tick(self.in_flight.min(forwarded)));
        let mut sender = MockSender::new(tx, self.send);
        sender.late_pkts = self.late;
        if self.summary {
            let sent = pps as u64 * seconds as u64;
            let summary = format!("{{\"tx_pkts\": {sent}, \"elapsed_s\": {seconds}}}");
            sender.files = vec![("generator.json".into(), summary)];
        }
        Ok(Rig {
            dut: &self.dut,
            counters,
            senders: vec![sender],
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

fn key() -> TrialKey {
    TrialKey {
        version: "default".into(),
        config: "forwarding".into(),
        profile: "inet4".into(),
        iteration: 1,
    }
}

fn throughput_profile() -> Profile {
    Profile {
        measure: Measure::Throughput,
        ..Profile::builtin(Family::Inet4)
    }
}

/// One trial of `bench` at `load` for 2 s through a runner keeping its files in `store`.
fn one_trial(bench: &mut MockDut, store: &Store, load: f64) -> (TrialOutcome, SearchTrial) {
    let (key, profile, campaign) = (key(), throughput_profile(), Campaign::default());
    let (cancel, mut on_event) = (Cancel::new(), |_: &Event<'_>| {});
    let mut ctx = Context::new(&campaign, store, Box::new(bench), &cancel, &mut on_event);
    let mut runner = SearchRunner::new(&mut ctx, &key, &profile);
    let outcome = runner.run(load, 2.0).unwrap();
    (outcome, runner.trials.pop().unwrap())
}

/// A results directory for the tests' campaign, in `tmp`.
fn results_dir(tmp: &tempfile::TempDir) -> Store {
    Store::create(tmp.path(), &Campaign::default()).unwrap()
}

#[test]
fn loss_is_counted_after_the_drain_over_the_whole_trial() {
    let tmp = tempfile::tempdir().unwrap();
    let store = results_dir(&tmp);
    let mut bench = MockDut::new(1e6, 2e6);
    let (outcome, record) = one_trial(&mut bench, &store, 5e5);
    assert_eq!(bench.rates, [Rate::Pps(500_000)]);
    // The drained tick, which pairing with the senders' seconds leaves out, is counted.
    assert_eq!((outcome.sent, outcome.received), (1_000_000, 1_000_000));
    assert_eq!(outcome.loss_ratio(), 0.0);
    assert!(outcome.valid && record.valid && record.problem.is_none());
    assert_eq!(outcome.offered_load, 5e5);

    let (outcome, _) = one_trial(&mut bench, &store, 1.5e6);
    assert_eq!((outcome.sent, outcome.received), (3_000_000, 2_000_000));
    assert!(outcome.valid);
}

#[test]
fn frames_dropped_beyond_the_duts_input_ring_at_the_stop_count_lost_and_say_where() {
    let tmp = tempfile::tempdir().unwrap();
    let store = results_dir(&tmp);
    let mut bench = MockDut::new(1e6, 2e6);
    // The DUT was 10,000 frames behind as the senders stopped: a 4096-frame ring drops 5,904
    // of them, which the receiver never sees.
    bench.late = 5_904;
    let (outcome, record) = one_trial(&mut bench, &store, 5e5);
    assert_eq!((outcome.sent, outcome.received), (1_000_000, 994_096));
    assert_eq!((record.received, record.late), (994_096, 5_904));
    assert!(outcome.valid && outcome.loss_ratio() > 0.005);
    // Behind by less than the ring: nothing late, nothing lost.
    bench.late = 0;
    let (outcome, record) = one_trial(&mut bench, &store, 5e5);
    assert_eq!((outcome.received, record.late), (1_000_000, 0));
}

#[test]
fn a_sender_that_falls_short_is_asked_for_more_aimed_just_above_the_load() {
    let tmp = tempfile::tempdir().unwrap();
    let store = results_dir(&tmp);
    let mut bench = MockDut::new(1e6, 2e6);
    (bench.efficiency, bench.summary) = (0.985, true);
    let (key, profile, campaign) = (key(), throughput_profile(), Campaign::default());
    let (cancel, mut on_event) = (Cancel::new(), |_: &Event<'_>| {});
    let lent = Box::new(&mut bench);
    let mut ctx = Context::new(&campaign, &store, lent, &cancel, &mut on_event);
    let mut runner = SearchRunner::new(&mut ctx, &key, &profile);
    let valid: Vec<bool> = (0..3)
        .map(|_| runner.run(5e5, 1.0).unwrap().valid)
        .collect();
    // The first trial, asked for the load, falls short; the next ones make up for it.
    assert_eq!(valid, [false, true, true]);
    let asked = (5e5 * (1.0 + AIM) / 0.985).round() as u64;
    drop(ctx);
    assert_eq!(
        bench.rates,
        [Rate::Pps(500_000), Rate::Pps(asked), Rate::Pps(asked)]
    );
}

#[test]
fn what_the_senders_hold_at_the_max_load_does_not_raise_the_next_loads() {
    let tmp = tempfile::tempdir().unwrap();
    let store = results_dir(&tmp);
    // The generator holds 1.5 Mpps of the 2 Mpps max load (its limit, not its pacing).
    let mut bench = MockDut::new(1e6, 1.5e6);
    bench.summary = true;
    let (key, profile, campaign) = (key(), throughput_profile(), Campaign::default());
    let (cancel, mut on_event) = (Cancel::new(), |_: &Event<'_>| {});
    let lent = Box::new(&mut bench);
    let mut ctx = Context::new(&campaign, &store, lent, &cancel, &mut on_event);
    let mut runner = SearchRunner::new(&mut ctx, &key, &profile);
    runner.aim = Aim::below(2e6);
    let valid: Vec<bool> = [2e6, 5e5, 5e5]
        .into_iter()
        .map(|load| runner.run(load, 1.0).unwrap().valid)
        .collect();
    assert_eq!(valid, [false, true, true]);
    // Learnt from, the max-load trial would have had the next ones asked for 30 % more; the
    // third is aimed just above the load, as the second sent all it was asked.
    let aimed = (5e5 * (1.0 + AIM)).round() as u64;
    drop(ctx);
    assert_eq!(bench.rates, [2_000_000, 500_000, aimed].map(Rate::Pps));
}

#[test]
fn a_sender_short_of_the_load_or_failing_makes_the_trial_invalid_not_lossy() {
    let tmp = tempfile::tempdir().unwrap();
    let store = results_dir(&tmp);
    let mut bench = MockDut::new(1e6, 4.9e5);
    let (outcome, record) = one_trial(&mut bench, &store, 5e5);
    assert!(!outcome.valid);
    assert!(record.problem.unwrap().contains("98.0 %"));
    // An invalid trial that ran keeps its files: they say why it fell short.
    let kept = store.search_trial_dir(&key(), SearchTrialId::Trial(1));
    assert!(kept.unwrap().join("dut-after.txt").is_file());

    let tmp = tempfile::tempdir().unwrap();
    let store = results_dir(&tmp);
    let mut bench = MockDut::new(1e6, 2e6);
    bench.send = MockSend::Fails;
    let (outcome, record) = one_trial(&mut bench, &store, 5e5);
    assert!(!outcome.valid);
    assert!(record.problem.unwrap().contains("generator died"));
    // A trial that failed to run left no files.
    assert!(!store.trial_dir(&key()).join("trials").exists());
}

#[test]
fn drops_come_from_either_receiver_file() {
    let local = r#"{"iface": "rx/eth0", "watch": ["tx/eth0", "dut/in"],
        "samples": [{"rx_drops": 0, "drops": [1, 2]}, {"rx_drops": 3, "drops": [10, 20]}]}"#;
    let d = drops(&[("receiver.json".into(), local.into())]);
    assert_eq!(d["tx/eth0"], 10);
    assert_eq!(d["dut/in"], 20);
    assert_eq!(d["rx/eth0"], 3);
    let remote = "{\"type\":\"sample\"}\n{\"type\":\"summary\",\"iface\":\"r\",\"watch\":[\"d\"],\
                  \"rx_drops\":0,\"drops\":[7]}\n";
    let d = drops(&[("receiver.jsonl".into(), remote.into())]);
    assert_eq!(d["d"], 7);
    assert!(drops(&[("other".into(), "x".into())]).is_empty());
}

fn small_search() -> SearchConfig {
    let goal = |name: &str, loss_ratio| Goal {
        relative_width: 0.02,
        duration_sum: 1.0,
        preceding_targets: 1,
        ..Goal::mlrsearch(name, loss_ratio)
    };
    SearchConfig {
        goals: vec![goal("NDR", 0.0), goal("PDR", 0.005)],
        ..SearchConfig::mlrsearch()
    }
}

#[test]
fn a_search_finds_the_capacity_and_stores_every_trial() {
    let mut bench = MockDut::new(6e5, 1e6);
    let mut bounds = 0;
    let (meta, record) = search_on(&mut bench, &mut |e| {
        bounds += usize::from(matches!(e, Event::Search { .. }))
    });
    // The generator's capacity was measured first (full rate, then that rate asked), then the
    // DUT's saturated rate (max, following it), and the search stayed below 90 % of the first.
    assert_eq!(
        bench.rates[..3],
        [Rate::Max, Rate::Pps(1_000_000), Rate::Max]
    );
    assert_eq!(bench.follows[..3], [false, false, true]);
    assert_eq!(record.generator_max, Some(1e6));
    let result = record.result.clone().unwrap();
    assert_eq!(result.max_load, 9e5);
    assert_eq!(record.trials.len(), result.trials.len());
    assert_eq!(bounds, result.trials.len());
    // The true values: all of the capacity with no loss, and 0.5 % above it lost.
    for (goal, truth) in result.goals.iter().zip([6e5, 6e5 / (1.0 - 0.005)]) {
        let lower = goal.relevant_lower_bound.unwrap();
        assert!((truth * (1.0 - 0.02)..=truth).contains(&lower), "{goal:?}");
    }
    assert_eq!(meta.status, Status::Ok);
    assert_eq!(meta.rx_pps, result.goals[0].conditional_throughput.unwrap());
    // One more saturating trial closed the search, kept apart from its trials.
    assert_eq!(bench.rates.last(), Some(&Rate::Max));
    assert_eq!(bench.follows.last(), Some(&true));
    let closing = record.closing.as_ref().unwrap();
    assert_eq!(closing.received, 600_000);
    assert_eq!(record.opening.as_ref().unwrap().received, 600_000);
    let (start, end) = record.saturated();
    assert_eq!(start, end);
    assert!(start.is_some_and(|s| s.saturated && s.forwarded == 6e5));
    assert_eq!(record.speed_change(), None);
}

/// A search of `bench` with [`small_search`], its events to `on_event`: its `meta.json` (as
/// returned, which is what was stored) and `search.json`.
fn search_on(
    bench: &mut MockDut,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> (TrialMeta, SearchRecord) {
    search_with(small_search(), bench, on_event)
}

/// A search of `bench` with `search`, as [`search_on`].
fn search_with(
    search: SearchConfig,
    bench: &mut MockDut,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> (TrialMeta, SearchRecord) {
    let tmp = tempfile::tempdir().unwrap();
    let campaign = Campaign {
        profiles: vec![throughput_profile()],
        config_sets: vec!["forwarding".into()],
        search: Some(search),
        ..Campaign::default()
    };
    let store = Store::create(tmp.path(), &campaign).unwrap();
    let (key, profile, cancel) = (key(), throughput_profile(), Cancel::new());
    let mut ctx = Context::new(&campaign, &store, Box::new(bench), &cancel, on_event);
    let meta = run_search(&mut ctx, &key, &profile, Instant::now()).unwrap();
    assert_eq!(store.read_meta(&key).unwrap(), meta);
    (meta, store.read_search(&key).unwrap())
}

#[test]
fn a_given_max_load_is_not_calibrated_and_closes_at_max_load() {
    let config = SearchConfig {
        max_load: Some(8e5),
        ..small_search()
    };
    let mut bench = MockDut::new(6e5, 1e6);
    let (_, record) = search_with(config, &mut bench, &mut |_| {});
    // No trial at max: neither calibration nor opening; the closing one at the max load given.
    assert!(record.calibration.is_empty() && record.opening.is_none());
    assert!(!bench.rates.contains(&Rate::Max) && !bench.follows.contains(&true));
    assert_eq!(bench.rates.last(), Some(&Rate::Pps(800_000)));
    let (start, end) = record.saturated();
    assert_eq!(start, end);
    assert!(start.is_some_and(|s| s.saturated && s.forwarded == 6e5));
}

#[test]
fn a_dut_faster_than_the_generator_is_flagged_with_what_max_load_shows() {
    let (meta, record) = search_on(&mut MockDut::new(2e6, 1e6), &mut |_| {});
    let result = record.result.as_ref().unwrap();
    assert!(result
        .goals
        .iter()
        .all(|g| g.relevant_upper_bound.is_none()));
    assert_eq!(meta.status, Status::Flagged);
    assert!(meta.flags[0].starts_with("NDR: max load (900 Kpps) lost no more than 0 %"));
    // Saturating, the generator, not the DUT, set the rate.
    let (start, _) = record.saturated();
    assert!(start.is_some_and(|s| !s.saturated));
}

#[test]
fn a_machine_that_changed_speed_during_the_search_is_named_in_the_flags() {
    let (_, mut record) = search_on(&mut MockDut::new(6e5, 1e6), &mut |_| {});
    let result = record.result.clone().unwrap();
    // The closing trial forwarded a third more than the opening one.
    record.closing.as_mut().unwrap().received = 800_000;
    assert_eq!(record.speed_change(), Some((6e5, 8e5)));
    // Within the noise of one speed level, no change.
    record.closing.as_mut().unwrap().received = 620_000;
    assert_eq!(record.speed_change(), None);
    let changed = flags(&result, Some((6e5, 8e5)), None);
    let said = "forwarded 600 Kpps saturated at its start, 800 Kpps at its end";
    assert!(changed[0].contains(said), "{changed:?}");
    assert_eq!(flags(&result, None, None), Vec::<String>::new());
}

#[test]
fn other_programs_on_the_lab_cpus_during_a_search_are_named_in_the_flags() {
    let (_, record) = search_on(&mut MockDut::new(6e5, 1e6), &mut |_| {});
    let result = record.result.clone().unwrap();
    let crowded = |share| Crowded {
        share,
        trials: 3,
        of: 30,
    };
    let flagged = flags(&result, None, Some(crowded(0.057)));
    let said = "other programs took 5.7 % of the lab's CPUs' time over its trials (more than 1 % \
                in 3 of its 30)";
    assert!(flagged[0].starts_with(said), "{flagged:?}");
    // Watched, and less than 1 % over the search: nothing to say.
    assert_eq!(
        flags(&result, None, Some(crowded(0.004))),
        Vec::<String>::new()
    );
}

#[test]
fn every_trial_of_a_search_keeps_its_files_numbered_as_in_search_json() {
    let tmp = tempfile::tempdir().unwrap();
    let mut campaign = Campaign {
        profiles: vec![throughput_profile()],
        config_sets: vec!["forwarding".into()],
        search: Some(small_search()),
        ..Campaign::default()
    };
    campaign.hooks.after = vec![vec!["nstat".into(), "-az".into()]];
    let store = Store::create(tmp.path(), &campaign).unwrap();
    let mut bench = MockDut::new(6e5, 1e6);
    bench
        .dut
        .reply(&["nstat"], Output::ok("IpExtInOctets 42\n"));
    let (key, profile, cancel) = (key(), throughput_profile(), Cancel::new());
    let mut on_event = |_: &Event<'_>| {};
    let lent = Box::new(&mut bench);
    let mut ctx = Context::new(&campaign, &store, lent, &cancel, &mut on_event);
    run_search(&mut ctx, &key, &profile, Instant::now()).unwrap();
    drop(ctx);
    let record = store.read_search(&key).unwrap();
    let iteration = store.trial_dir(&key);
    let listed = |dir: &str| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(iteration.join(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let numbered =
        |n: usize, width: usize| (1..=n).map(|i| format!("{i:0width$}")).collect::<Vec<_>>();
    assert!(record.trials.len() > 3 && record.calibration.len() == 2);
    assert_eq!(listed("trials"), numbered(record.trials.len(), 3));
    assert_eq!(listed("calibration"), numbered(record.calibration.len(), 1));
    // The calibration trials ran first, then the opening one: the search's trial n is the
    // bench's rig c + 1 + n.
    let c = record.calibration.len();
    let rigs = (1..=c).map(|n| (format!("calibration/{n}"), n));
    let rigs = rigs
        .chain([("opening".to_string(), c + 1)])
        .chain((1..=record.trials.len()).map(|n| (format!("trials/{n:03}"), c + 1 + n)));
    for (dir, rig) in rigs {
        let read = |name: &str| std::fs::read_to_string(iteration.join(&dir).join(name)).unwrap();
        assert_eq!(
            read("dut-before.txt"),
            format!("$ counters {rig}\n"),
            "{dir}"
        );
        assert_eq!(
            read("dut-after.txt"),
            format!("$ counters {rig}\n$ nstat -az\nIpExtInOctets 42\n"),
            "{dir}"
        );
        assert_eq!(
            listed(&dir),
            [
                "dut-after.txt",
                "dut-before.txt",
                "generator.log",
                "receiver.log"
            ]
        );
    }
    // The closing trial ran last, its files apart.
    let closing = c + 1 + record.trials.len() + 1;
    let read = |name: &str| std::fs::read_to_string(iteration.join("closing").join(name)).unwrap();
    assert_eq!(read("dut-before.txt"), format!("$ counters {closing}\n"));
    assert_eq!(bench.rates.len(), closing);
}
