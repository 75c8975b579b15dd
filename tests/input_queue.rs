//! The virtual lab's DUT input queue at a fixed load, for real: a stall of the DUT's CPU that
//! overflows veth's 256-frame ring costs no frame through the qdisc in front of it, and what
//! that queue cannot hold is counted where it was dropped. Needs root (CI runs as root); lab id
//! `q1` is this file's own.

use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use benchlab::lab::virt::{veth_backpressure, INPUT_QUEUE_FRAMES};
use benchlab::lab::{Lab, LabConfig, Placement};
use benchlab::traffic::receiver::{Receiver, RxConfig};
use benchlab::traffic::{self, os, Engine, GenConfig, IfRef, Limit, Rate};

mod common;

/// The offered load: 10,000 frames in 100 ms.
const PPS: u64 = 100_000;

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

/// One 1.5 s run at [`PPS`] with the DUT's CPU stalled for `stall_ms` half a second in:
/// frames sent, frames received, frames the sender's interface dropped (its qdisc and veth).
fn run(lab: &Lab, stall_ms: u64, via_qdisc: bool) -> (u64, u64, u64) {
    let f = lab.facts();
    let s = &f.senders[0];
    let sender = IfRef {
        netns: Some(s.namespace.clone()),
        name: s.interface.clone(),
    };
    let mut rx = RxConfig::new(IfRef {
        netns: Some(f.receiver.namespace.clone()),
        name: f.receiver.interface.clone(),
    });
    rx.watch = vec![sender.clone()];
    let receiver = Receiver::start(rx).unwrap();
    let mut cfg = GenConfig::new(sender, common::sender_frames(s));
    cfg.rate = Rate::Pps(PPS);
    cfg.limit = Limit::Duration(Duration::from_millis(1500));
    cfg.cpu = Some(s.cpu);
    cfg.engine = Engine::Xdp;
    cfg.via_qdisc = via_qdisc;
    let mut g = traffic::builtin(cfg).unwrap();
    g.start().unwrap();
    let staller = stall(
        f.dut.cpu,
        Duration::from_millis(500),
        Duration::from_millis(stall_ms),
    );
    while !g.is_finished() {
        g.next_sample(Duration::from_millis(50));
    }
    let sent = g.stop().unwrap().tx_pkts;
    staller.join().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let last = receiver.stop().unwrap().samples.pop().unwrap();
    (sent, last.rx_pkts, last.drops[0])
}

#[test]
fn a_fixed_load_crosses_a_stall_of_the_duts_cpu_and_counts_what_overflows_its_queue() {
    let lab = Lab::up(&LabConfig::parse("id = \"q1\"", "test").unwrap()).unwrap();
    if lab.facts().placement.mode != Placement::Separate || !veth_backpressure() {
        // One CPU: the DUT forwards on the generator's, and no stall can be staged. Before
        // Linux 6.16 veth drops what its full ring refuses, and the lab has no deeper queue.
        return lab.down().unwrap();
    }
    // 20 ms are 2,000 frames: eight times veth's ring, half the queue in front of it; 100 ms
    // are 10,000, more than both hold.
    let through_qdisc = run(&lab, 20, true);
    let ring_alone = run(&lab, 20, false);
    let overflowed = run(&lab, 100, true);
    lab.down().unwrap();
    let (sent, received, _) = through_qdisc;
    assert_eq!(received, sent, "a 20 ms stall at a fixed load lost frames");
    let (sent, received, _) = ring_alone;
    assert!(
        received < sent,
        "the stall did not overflow veth's ring alone: {ring_alone:?}"
    );
    let (sent, received, dropped) = overflowed;
    assert!(
        dropped > 0 && sent - received == dropped,
        "lost {} in a 100 ms stall, {dropped} counted at the DUT's input",
        sent - received
    );
    assert!(sent - received < 10_000 + PPS / 100 - INPUT_QUEUE_FRAMES);
}
