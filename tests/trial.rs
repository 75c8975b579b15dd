//! Trials through the virtual lab: benchlab's generator at a fixed rate and count, through
//! each Linux config set, IPv4 and IPv6, 1 and 2000 flows. Every packet sent must reach the
//! receiver and be seen by the set's passing rules. Needs root (CI runs as root).

use std::net::IpAddr;
use std::time::Duration;

use benchlab::dut::{self, ConfigSet};
use benchlab::lab::facts::FamilyFacts;
use benchlab::lab::{Lab, LabConfig, Role};
use benchlab::traffic::packet::FrameSpec;
use benchlab::traffic::receiver::{Receiver, RxConfig};
use benchlab::traffic::{self, GenConfig, IfRef, Limit, Rate};

/// Packets per trial and their rate: small enough for a busy 2-core CI machine to forward
/// every one of them, large enough to cross many NAPI polls and all 2000 flows 5 times.
const COUNT: u64 = 10_000;
const RATE: u64 = 20_000;

fn nth(net: IpAddr, i: u32) -> IpAddr {
    match net {
        IpAddr::V4(a) => IpAddr::V4((u32::from(a) + i).into()),
        IpAddr::V6(a) => IpAddr::V6((u128::from(a) + u128::from(i)).into()),
    }
}

fn endpoint(addr: IpAddr, port: u16) -> String {
    match addr {
        IpAddr::V4(a) => format!("{a}:{port}"),
        IpAddr::V6(a) => format!("[{a}]:{port}"),
    }
}

fn range(net: IpAddr, last: u32) -> String {
    let first = endpoint(nth(net, 1), 2000);
    match nth(net, last) {
        _ if last == 1 => first,
        IpAddr::V4(a) => format!("{first}-{a}"),
        IpAddr::V6(a) => format!("{first}-[{a}]"),
    }
}

/// The pkt-gen style flow ranges of the seeds: 20 sources × 100 destinations, or one flow.
fn flows(fam: &FamilyFacts, many: bool) -> (String, String) {
    let (src, dst) = if many { (20, 100) } else { (1, 1) };
    (
        range(fam.source.addr, src),
        range(fam.destination.addr, dst),
    )
}

/// One trial; returns (packets sent, packets received, packets counted by the set).
fn trial(lab: &Lab, set: &dyn ConfigSet, family: u8, many: bool) -> (u64, u64, Option<u64>) {
    let f = lab.facts();
    let s = &f.senders[0];
    let fam = if family == 4 { &s.inet4 } else { &s.inet6 };
    let (src, dst) = flows(fam, many);
    let src: benchlab::traffic::packet::FlowRange = src.parse().unwrap();
    // The smallest frame of the family: 64 bytes for IPv4, 66 for IPv6 (as the seeds).
    let size = src.family().min_frame();
    let spec = FrameSpec::new(s.mac, s.dut_mac, src, dst.parse().unwrap(), size).unwrap();
    assert_eq!(spec.flows(), if many { 2000 } else { 1 });
    let mut cfg = GenConfig::new(
        IfRef::parse(&format!("{}/{}", s.namespace, s.interface)).unwrap(),
        spec,
    );
    cfg.rate = Rate::Pps(RATE);
    cfg.limit = Limit::Count(COUNT);
    cfg.cpu = Some(s.cpu);
    // Through the DUT's deep input queue, as a campaign's fixed loads go: veth's ring alone
    // (12.8 ms at this rate) overflowed once in CI (15 of 10,000 frames refused before the
    // DUT counted them: a stall of over 13 ms), a loss the config set had no part in.
    cfg.input_queue = Some(benchlab::lab::virt::INPUT_QUEUE_FRAMES);

    let dut = lab.node(Role::Dut).unwrap();
    let counted_before = set.counters(dut).unwrap();
    let rx = Receiver::start(RxConfig::new(
        IfRef::parse(&format!(
            "{}/{}",
            f.receiver.namespace, f.receiver.interface
        ))
        .unwrap(),
    ))
    .unwrap();
    let mut generator = traffic::builtin(cfg).unwrap();
    generator.start().unwrap();
    while !generator.is_finished() {
        generator.next_sample(Duration::from_millis(200));
    }
    let sent = generator.stop().unwrap();
    // The last frames may still be in the DUT's queue.
    std::thread::sleep(Duration::from_millis(200));
    let series = rx.stop().unwrap();
    let received = series.samples.last().map_or(0, |s| s.rx_pkts);
    let counted = set
        .counters(dut)
        .unwrap()
        .map(|after| after - counted_before.unwrap_or(0));
    (sent.tx_pkts, received, counted)
}

#[test]
fn fixed_count_trials_through_every_config_set_deliver_every_packet() {
    let lab = Lab::up(&LabConfig::parse("id = \"t20\"", "test").unwrap()).unwrap();
    let dut = lab.node(Role::Dut).unwrap();
    let mut failures = Vec::new();
    // iptables-legacy last: its hooks stay in the namespace after revert.
    for name in &dut::presets(dut::Os::Linux) {
        let set = dut::preset(name).unwrap();
        set.apply(dut).unwrap();
        set.verify(dut).unwrap();
        for family in [4, 6] {
            for many in [false, true] {
                let (sent, received, counted) = trial(&lab, set.as_ref(), family, many);
                let flows = if many { 2000 } else { 1 };
                let label = format!("{name} inet{family} {flows} flows");
                let counted_ok = *name == "forwarding" || counted == Some(COUNT);
                if sent != COUNT || received != COUNT || !counted_ok {
                    failures.push(format!(
                        "{label}: sent {sent}, received {received}, counted {counted:?} (expected {COUNT})"
                    ));
                }
            }
        }
        set.revert(dut).unwrap();
    }
    lab.down().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
