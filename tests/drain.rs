//! The end of a trial's drain on the virtual lab: once the generator stopped at full rate (the
//! DUT's queues full), the receiving interface's count stops moving within the drain's cap, and
//! does not move after it. A trial counts its packets when the count settled, so a packet that
//! arrived later would be counted as lost. Needs root, like the lab.

use std::time::Duration;

use benchlab::lab::{Lab, LabConfig};
use benchlab::traffic::receiver::quiet::Quiet;
use benchlab::traffic::receiver::RxConfig;
use benchlab::traffic::{self, GenConfig, IfRef, Limit, Rate};

mod common;

/// The step and cap the virtual lab's receiver settles with.
const STEP: Duration = Duration::from_millis(20);
const CAP: Duration = Duration::from_millis(200);

#[test]
fn after_full_rate_the_count_settles_within_the_cap_and_stays() {
    let lab = Lab::up(&LabConfig::parse("id = \"td1\"", "test").unwrap()).unwrap();
    let f = lab.facts();
    let s = &f.senders[0];
    let spec = common::sender_frames(s);
    let rx = IfRef::parse(&format!(
        "{}/{}",
        f.receiver.namespace, f.receiver.interface
    ))
    .unwrap();
    let mut quiet = Quiet::open(&RxConfig::new(rx)).unwrap();
    let mut failures = Vec::new();
    for k in 0..3 {
        let mut cfg = GenConfig::new(
            IfRef::parse(&format!("{}/{}", s.namespace, s.interface)).unwrap(),
            spec.clone(),
        );
        cfg.rate = Rate::Max;
        cfg.limit = Limit::Duration(Duration::from_millis(500));
        cfg.cpu = Some(s.cpu);
        let before = quiet.count().unwrap();
        let mut generator = traffic::builtin(cfg).unwrap();
        generator.start().unwrap();
        while !generator.is_finished() {
            generator.next_sample(Duration::from_millis(5));
        }
        let sent = generator.stop().unwrap().tx_pkts;
        let settled = quiet.wait(STEP, CAP).unwrap();
        let counted = quiet.count().unwrap();
        std::thread::sleep(Duration::from_millis(500));
        let later = quiet.count().unwrap();
        let received = counted - before;
        if !settled || later != counted || received > sent || received == 0 {
            failures.push(format!(
                "trial {k}: sent {sent}, received {received} when settled ({settled}), \
                 {} more 0.5 s later",
                later - counted
            ));
        }
    }
    lab.down().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
