//! The trial procedure driven by mock senders and a mock receiver: no root, no namespaces.

use super::mock::{steady, MockReceiver, MockSend, MockSender};
use super::*;
use crate::config::{Hooks, Profile};
use crate::store::TrialKey;
use crate::traffic::packet::Family;
use crate::transport::MockTransport;

fn key() -> TrialKey {
    TrialKey::parse("default.forwarding.inet4.1").unwrap()
}

fn rig<'a>(dut: &'a MockTransport, senders: Vec<Box<dyn Sender + 'a>>, rx: Vec<Tick>) -> Rig<'a> {
    Rig {
        dut,
        counters: vec!["ip".into(), "-s".into(), "link".into()],
        senders,
        receiver: Box::new(MockReceiver { ticks: rx }),
        profiler: None,
        dut_cpu: None,
        lab_cpus: Vec::new(),
        capture_delay: Duration::ZERO,
        prober: Err("a mock lab sends no probes".into()),
    }
}

/// Runs a 4-second trial on `rig`, returning its result and the seconds shown live.
fn run_trial(rig: Rig<'_>, cancel: &Cancel) -> (anyhow::Result<TrialData>, usize) {
    let key = key();
    let profile = Profile::builtin(Family::Inet4);
    let trial = Trial {
        duration: Duration::from_secs(4),
        warmup: Duration::from_secs(1),
        cooldown: Duration::from_secs(1),
        latency: false,
    };
    let hooks = Hooks {
        during: vec![vec!["uptime".into()]],
        ..Hooks::default()
    };
    let spec = TrialSpec {
        key: &key,
        profile: &profile,
        trial: &trial,
        hooks: &hooks,
        capture: false,
        follow: false,
        watch_cpu: false,
        probes: None,
        in_dut: false,
    };
    let mut shown = 0;
    let data = run(rig, &spec, cancel, &mut |_: &SampleRow| shown += 1);
    (data, shown)
}

#[test]
fn senders_seconds_add_up_and_pair_with_the_receivers() {
    let dut = MockTransport::new("dut");
    let senders: Vec<Box<dyn Sender>> = vec![
        MockSender::new(steady(4, 600.0), MockSend::Ends),
        MockSender::new(steady(5, 400.0), MockSend::Ends),
    ];
    let (data, shown) = run_trial(rig(&dut, senders, steady(4, 500.0)), &Cancel::new());
    let data = data.unwrap();
    assert_eq!(data.samples.len(), 4);
    assert_eq!(shown, 4, "every second is shown once");
    let row = &data.samples[3];
    assert_eq!((row.t_s, row.tx_pkts, row.rx_pkts), (4.0, 1000, 500));
    assert_eq!(data.generator.as_deref(), Some("mock + mock"));
    let names: Vec<&str> = data.files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "dut-before.txt",
            "dut-during.txt",
            "dut-after.txt",
            "generator.log",
            "generator.log",
            "receiver.log"
        ]
    );
    assert!(data.files[0].1.starts_with("$ ip -s link\n"));
    assert!(dut.commands().contains(&"uptime".to_string()));
}

#[test]
fn other_programs_time_is_read_over_the_traffic_where_the_lab_names_its_cpus() {
    let dut = MockTransport::new("dut");
    let senders =
        || -> Vec<Box<dyn Sender>> { vec![MockSender::new(steady(4, 600.0), MockSend::Ends)] };
    let (data, _) = run_trial(rig(&dut, senders(), steady(4, 500.0)), &Cancel::new());
    assert_eq!(
        data.unwrap().others,
        None,
        "a lab whose CPUs are other machines'"
    );
    let mut on_this_host = rig(&dut, senders(), steady(4, 500.0));
    on_this_host.lab_cpus = vec![0];
    let (data, _) = run_trial(on_this_host, &Cancel::new());
    let others = data.unwrap().others.unwrap();
    assert!(others.ms >= 0.0, "{others:?}");
    assert_eq!(others.cpus, [0]);
}

#[test]
fn the_frames_every_senders_input_queue_dropped_at_the_stop_are_counted_late() {
    let dut = MockTransport::new("dut");
    let late = |n| {
        let mut s = MockSender::new(steady(4, 600.0), MockSend::Ends);
        s.late_pkts = n;
        s as Box<dyn Sender>
    };
    // Two senders holding the DUT's input queue: one dropped 1,904 frames beyond its ring as it
    // stopped, the other none.
    let deep = rig(&dut, vec![late(1_904), late(0)], steady(4, 1_200.0));
    assert_eq!(run_trial(deep, &Cancel::new()).0.unwrap().late_pkts, 1_904);
}

#[test]
fn a_failed_sender_stops_the_others_and_names_the_failure() {
    let dut = MockTransport::new("dut");
    let senders: Vec<Box<dyn Sender>> = vec![
        MockSender::new(steady(4, 600.0), MockSend::Hangs),
        MockSender::new(Vec::new(), MockSend::Fails),
    ];
    let (data, _) = run_trial(rig(&dut, senders, steady(4, 500.0)), &Cancel::new());
    assert_eq!(data.unwrap_err().to_string(), "generator died");
}

#[test]
fn a_receiver_that_sees_nothing_gives_no_second_and_late_traffic_is_aligned() {
    let dut = MockTransport::new("dut");
    let senders: Vec<Box<dyn Sender>> = vec![MockSender::new(steady(4, 600.0), MockSend::Ends)];
    let (data, _) = run_trial(rig(&dut, senders, steady(4, 0.0)), &Cancel::new());
    assert!(data.unwrap().samples.is_empty());
    // The receiver counted one second before the first packet arrived: not the trial's.
    let senders: Vec<Box<dyn Sender>> = vec![MockSender::new(steady(4, 600.0), MockSend::Ends)];
    let late = [steady(1, 0.0), steady(4, 500.0)].concat();
    let (data, _) = run_trial(rig(&dut, senders, late), &Cancel::new());
    let data = data.unwrap();
    assert_eq!(data.samples.len(), 4);
    assert!(data
        .samples
        .iter()
        .all(|r| r.rx_pkts == 500 && r.tx_pkts == 600));
}

#[test]
fn an_interruption_stops_the_senders_and_is_reported_as_such() {
    let dut = MockTransport::new("dut");
    let senders: Vec<Box<dyn Sender>> = vec![MockSender::new(steady(2, 600.0), MockSend::Hangs)];
    let cancel = Cancel::new();
    cancel.cancel();
    let (data, _) = run_trial(rig(&dut, senders, steady(2, 500.0)), &cancel);
    let err = data.unwrap_err();
    assert!(err.is::<crate::cancel::Cancelled>(), "{err:#}");
}

#[test]
fn a_sender_that_overruns_is_stopped_when_its_grace_is_over() {
    let dut = MockTransport::new("dut");
    let mut hangs = MockSender::new(steady(4, 600.0), MockSend::Hangs);
    hangs.grace = Duration::from_millis(100);
    let t0 = Instant::now();
    let (data, _) = run_trial(rig(&dut, vec![hangs], steady(4, 500.0)), &Cancel::new());
    // Stopped at time up, which is how this mock ends: the trial is kept.
    assert_eq!(data.unwrap().samples.len(), 4);
    assert!(t0.elapsed() >= Duration::from_secs(4));
}

/// A sender ends by itself a few milliseconds after its time: it is looked at right then and
/// often after, not up to a `POLL` later, and every `POLL` again once it overran.
#[test]
fn senders_are_looked_at_when_their_time_is_up_then_often() {
    let ms = Duration::from_millis;
    assert_eq!(next_poll(ms(0), ms(1000)), POLL);
    assert_eq!(next_poll(ms(960), ms(1000)), ms(40));
    assert_eq!(next_poll(ms(1000), ms(1000)), TAIL_POLL);
    assert_eq!(next_poll(ms(1090), ms(1000)), TAIL_POLL);
    assert_eq!(next_poll(ms(1100), ms(1000)), POLL);
}
