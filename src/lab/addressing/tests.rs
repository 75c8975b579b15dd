use super::*;
use crate::lab::topology::LabConfig;

fn topology(toml: &str) -> Topology {
    Topology::resolve(&LabConfig::parse(toml, "t").unwrap(), 2).unwrap()
}

#[test]
fn the_dut_has_the_seeds_two_routes_and_static_neighbours() {
    let p = plan(&topology(""));
    let dut: Vec<String> = p
        .routes
        .iter()
        .filter(|(ns, _)| ns == "benchlab-0-dut")
        .map(|(_, r)| format!("{} via {} dev {}", r.dst, r.via, r.dev))
        .collect();
    assert_eq!(
        dut,
        [
            "198.18.0.0/16 via 198.18.0.2 dev bl0d1",
            "2001:2::/49 via 2001:2::2 dev bl0d1",
            "198.19.0.0/16 via 198.19.0.3 dev bl0do",
            "2001:2:0:8000::/49 via 2001:2:0:8000::3 dev bl0do",
        ]
    );
    let sink = p
        .neighbours
        .iter()
        .find(|(_, n)| n.addr.to_string() == "198.19.0.3")
        .unwrap();
    assert_eq!(sink.1.mac.to_string(), "02:62:6c:03:ff:00");
    assert_eq!(p.ports_in("benchlab-0-dut").count(), 3);
}

#[test]
fn extra_senders_get_their_own_link_and_source_route() {
    let s2 = sender_side(2);
    assert_eq!(s2.sender4.to_string(), "198.18.1.2/24");
    assert_eq!(s2.source4.to_string(), "198.18.11.0/24");
    assert_eq!(s2.source6.to_string(), "2001:2:0:11::/64");
    let p = plan(&topology("senders = 2"));
    assert!(p
        .routes
        .iter()
        .any(|(ns, r)| ns == "benchlab-0-dut" && r.dst == s2.source4 && r.dev == "bl0d2"));
    assert_eq!(sender_side(1).source6.to_string(), "2001:2:0:10::/64");
    assert_eq!(
        receiver_side().destination6.to_string(),
        "2001:2:0:8010::/64"
    );
}

#[test]
fn addresses_and_macs_round_trip_through_text() {
    for s in ["198.18.0.0/15", "2001:2::/48"] {
        assert_eq!(s.parse::<Net>().unwrap().to_string(), s);
    }
    assert!("198.18.0.0/33".parse::<Net>().is_err());
    let m = "02:62:6c:01:01:00".parse::<Mac>().unwrap();
    assert_eq!(m, sender_mac(1));
    assert!("02:62:6c:01:01".parse::<Mac>().is_err());
}

#[test]
fn the_probes_leave_by_their_own_link_inside_the_receiver_side() {
    let p = plan(&topology(""));
    let (dut, rx) = (p.links.iter())
        .find(|(a, _)| a.name == "bl0dp")
        .expect("the probes' link");
    assert_eq!(
        (dut.ns.as_str(), rx.ns.as_str()),
        ("benchlab-0-dut", "benchlab-0-receiver")
    );
    assert_eq!(rx.name, "bl0rp");
    let side = probe_side();
    assert_eq!(side.receiver4.to_string(), "198.19.1.2/24");
    assert_eq!(side.receiver6.to_string(), "2001:2:0:8001::2/64");
    let neighbour = (p.neighbours.iter())
        .find(|(_, n)| n.addr == side.receiver4.addr)
        .unwrap();
    assert_eq!(
        (neighbour.1.dev.as_str(), neighbour.1.mac),
        ("bl0dp", RECEIVER_PROBE_MAC)
    );
    // In a 2-node lab it ends in the sender's namespace, with the receiver.
    let two = plan(&topology("nodes = 2"));
    assert!(two
        .ports_in("benchlab-0-sender")
        .any(|port| port.name == "bl0rp"));
}
