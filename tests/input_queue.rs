//! The virtual lab's DUT input queue at a fixed load, for real: a stall of the DUT's CPU that
//! overflows veth's 256-frame ring, and the 4096 frames of the ring the generator's queue
//! stands for, costs no frame when the DUT works the backlog off before the traffic stops; a
//! stall at the stop leaves a backlog of which the generator drops what is beyond the ring,
//! exactly the frames lost, and sends the rest. Needs root (CI runs as root); lab id `q1` is
//! this file's own.
//!
//! The machine adds stalls of its own: a CI run lost 13,184 of 141,440 frames (through the
//! qdisc of the model before) with only 20 ms staged, its sender 6 % short of the load (its
//! CPU away too). A run counts
//! only when the DUT's CPU watch saw no stall longer than the staged one and the sender sent
//! the load, as a search retries a trial its sender did not send; disturbed runs are redone.

use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use benchlab::lab::stall::{DutCpu, StallWatch, VETH_QUEUE_FRAMES};
use benchlab::lab::virt::INPUT_QUEUE_FRAMES;
use benchlab::lab::{Lab, LabConfig, Placement};
use benchlab::traffic::receiver::{Receiver, RxConfig};
use benchlab::traffic::{self, os, Engine, GenConfig, IfRef, Limit, Rate};

mod common;

/// The offered load: 10,000 frames in 100 ms.
const PPS: u64 = 100_000;
/// A run's length.
const LENGTH: Duration = Duration::from_millis(1500);
/// Runs tried for an undisturbed one.
const ATTEMPTS: usize = 5;

/// One run: what the sender sent, what the receiver counted, what the generator's queue held
/// as the traffic stopped and the refused frames it never sent again, and the DUT CPU's
/// longest stall, staged one included.
#[derive(Debug)]
struct Run {
    sent: u64,
    received: u64,
    queued_at_stop: Option<u64>,
    lost_at_stop: Option<u64>,
    longest_ms: f64,
}

impl Run {
    fn lost(&self) -> u64 {
        self.sent - self.received
    }
}

/// Takes `cpu` away from the DUT for `length`, `after` from now: a thread spinning on it at a
/// real-time priority above the DUT's NAPI thread, as the hypervisor's stalls do.
fn stall(cpu: usize, after: Duration, length: Duration) -> JoinHandle<()> {
    std::thread::spawn(move || {
        os::pin_to_cpu(cpu).unwrap();
        std::thread::sleep(after);
        os::realtime(60).unwrap();
        let start = Instant::now();
        while start.elapsed() < length {
            std::hint::spin_loop();
        }
    })
}

/// One run at [`PPS`] with the DUT's CPU stalled for `stall_ms`, `at_ms` in.
fn run(lab: &Lab, (at_ms, stall_ms): (u64, u64), queue: Option<u64>) -> Run {
    let f = lab.facts();
    let s = &f.senders[0];
    let sender = IfRef {
        netns: Some(s.namespace.clone()),
        name: s.interface.clone(),
    };
    let rx = RxConfig::new(IfRef {
        netns: Some(f.receiver.namespace.clone()),
        name: f.receiver.interface.clone(),
    });
    let receiver = Receiver::start(rx).unwrap();
    let watch = StallWatch::start(DutCpu {
        cpu: f.dut.cpu,
        queue_frames: VETH_QUEUE_FRAMES,
    })
    .unwrap();
    let mut cfg = GenConfig::new(sender, common::sender_frames(s));
    cfg.rate = Rate::Pps(PPS);
    cfg.limit = Limit::Duration(LENGTH);
    cfg.cpu = Some(s.cpu);
    cfg.engine = Engine::Xdp;
    cfg.input_queue = queue;
    let mut g = traffic::builtin(cfg).unwrap();
    g.start().unwrap();
    let staller = stall(
        f.dut.cpu,
        Duration::from_millis(at_ms),
        Duration::from_millis(stall_ms),
    );
    while !g.is_finished() {
        g.next_sample(Duration::from_millis(50));
    }
    let summary = g.stop().unwrap();
    staller.join().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let longest_ms = watch.finish().unwrap().longest_ms;
    let last = receiver.stop().unwrap().samples.pop().unwrap();
    Run {
        sent: summary.tx_pkts,
        received: last.rx_pkts,
        queued_at_stop: summary.queued_at_stop,
        lost_at_stop: summary.lost_at_stop,
        longest_ms,
    }
}

/// The first of [`ATTEMPTS`] runs that only the staged stall disturbed: the watch saw none
/// longer (but for a period and 5 ms of slack), and the sender sent 98 % of the load.
fn undisturbed(lab: &Lab, (at_ms, stall_ms): (u64, u64), queue: Option<u64>) -> Run {
    let load = PPS as f64 * LENGTH.as_secs_f64();
    let mut seen = Vec::new();
    for _ in 0..ATTEMPTS {
        let r = run(lab, (at_ms, stall_ms), queue);
        if r.longest_ms < stall_ms as f64 + 6.0 && r.sent as f64 >= 0.98 * load {
            return r;
        }
        eprintln!("disturbed beyond the staged {stall_ms} ms stall, redone: {r:?}");
        seen.push(r);
    }
    panic!("no undisturbed run in {ATTEMPTS} with a {stall_ms} ms stall: {seen:?}");
}

#[test]
fn a_fixed_load_crosses_a_stall_of_the_duts_cpu_and_the_backlog_beyond_the_ring_is_lost() {
    let lab = Lab::up(&LabConfig::parse("id = \"q1\"", "test").unwrap()).unwrap();
    if lab.facts().placement.mode != Placement::Separate {
        // One CPU: the DUT forwards on the generator's, and no stall can be staged.
        return lab.down().unwrap();
    }
    // 20 ms are 2,000 frames, eight times veth's ring; 100 ms are 10,000, more than veth's ring
    // and the 4096-frame ring the queue stands for hold.
    let queue = Some(INPUT_QUEUE_FRAMES);
    let ring_alone = undisturbed(&lab, (500, 20), None);
    let worked_off = undisturbed(&lab, (500, 100), queue);
    // From 200 ms before the stop until after it: the backlog is still there when it stops.
    let stop_ms = LENGTH.as_millis() as u64;
    let at_the_stop = undisturbed(&lab, (stop_ms - 200, 250), queue);
    lab.down().unwrap();
    assert!(
        ring_alone.lost() > 0,
        "the stall did not overflow veth's ring alone: {ring_alone:?}"
    );
    assert_eq!(
        (worked_off.lost(), worked_off.lost_at_stop),
        (0, Some(0)),
        "a 100 ms stall in mid-run lost frames: {worked_off:?}"
    );
    assert!(
        worked_off.queued_at_stop.unwrap() < INPUT_QUEUE_FRAMES,
        "a backlog worked off long before the stop was still queued: {worked_off:?}"
    );
    // At most the 20,000 frames that arrived in the last 200 ms (less veth's ring, and what
    // the stall's thread took to start): far more than the ring the queue stands for.
    let queued = at_the_stop.queued_at_stop.unwrap();
    assert!(
        queued > INPUT_QUEUE_FRAMES && queued <= 20_000 + PPS / 100,
        "the backlog of a stall at the stop was not held: {at_the_stop:?}"
    );
    // What it held beyond the ring is lost, and the generator counts exactly the frames lost;
    // the rest was sent once the DUT was back. (Frames sent just before the stop are refused
    // a kernel batch, 64 frames, later: the queue counts them after it.)
    let lost = at_the_stop.lost();
    assert_eq!(at_the_stop.lost_at_stop, Some(lost), "{at_the_stop:?}");
    assert!(
        lost.abs_diff(queued - INPUT_QUEUE_FRAMES) <= 64,
        "the queue lost other frames than those beyond its ring at the stop: {at_the_stop:?}"
    );
}
