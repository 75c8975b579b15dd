use super::*;
use crate::transport::{MockTransport, Output};

#[test]
fn every_preset_writes_its_files_then_applies_them_live() {
    for name in &crate::dut::presets(crate::dut::Os::FreeBsd) {
        let set = preset(name).unwrap();
        assert_eq!(set.name(), *name);
        let dut = MockTransport::new("apu2");
        set.apply(&dut).unwrap();
        let calls = dut.calls();
        let written: Vec<&str> = calls
            .iter()
            .filter(|c| c.argv[..2] == ["sh", "-c"] && c.argv[2] == BACKUP_AND_WRITE)
            .map(|c| c.argv[4].as_str())
            .collect();
        let rules = match *name {
            "forwarding" => vec![],
            n if n.starts_with("ipfw") => vec!["/etc/ipfw.rules"],
            n if n.starts_with("pf") => vec!["/etc/pf.conf"],
            _ => vec!["/etc/ipf.rules"],
        };
        let mut expected = vec![
            "/etc/rc.conf.local",
            "/etc/sysctl.conf.local",
            "/boot/loader.conf.local",
        ];
        expected.extend(rules);
        assert_eq!(written, expected, "{name}");
        let commands = dut.commands();
        assert!(
            commands.contains(&"route -q add -inet -net 198.18.0.0/16 198.18.0.203".to_string())
        );
        assert!(commands.contains(
            &"route -q add -inet6 -net 2001:2:0:8000::/49 2001:2:0:8000::203".to_string()
        ));
        assert!(commands.contains(
            &"sysctl net.inet.ip.forwarding=1 net.inet6.ip6.forwarding=1 \
              net.inet.ip.redirect=0 net.inet6.ip6.redirect=0"
                .to_string()
        ));
        // Revert puts every file back and removes the routes.
        let dut = MockTransport::new("apu2");
        set.revert(&dut).unwrap();
        let restored = dut
            .calls()
            .iter()
            .filter(|c| c.argv.get(2).map(String::as_str) == Some(RESTORE))
            .count();
        assert_eq!(restored, expected.len(), "{name}");
    }
}

#[test]
fn rulesets_have_the_seeds_shape() {
    let files = |name: &str| preset(name).unwrap().files();
    let text =
        |name: &str, path: &str| files(name).into_iter().find(|(p, _)| *p == path).unwrap().1;
    assert!(text("ipfw-stateful", "/etc/ipfw.rules")
        .ends_with("${fwcmd} -f flush\n${fwcmd} add 3000 allow ip from any to any keep-state\n"));
    assert!(text("ipfw-stateless", "/etc/ipfw.rules").ends_with("from any to any\n"));
    assert_eq!(
        text("pf-stateful", "/etc/pf.conf"),
        "set skip on lo0\npass label \"benchlab-pass\"\n"
    );
    assert_eq!(
        text("pf-stateless", "/etc/pf.conf"),
        "set skip on lo0\npass no state label \"benchlab-pass\"\n"
    );
    assert!(text("ipf-stateful", "/etc/ipf.rules").contains("flags S/SAFR keep state\n"));
    assert!(!text("ipf-stateless", "/etc/ipf.rules").contains("keep state"));
    let rc = text("pf-stateful", "/etc/rc.conf.local");
    assert!(rc.contains("route_generator=\"-net 198.18.0.0/16 198.18.0.203\"\n"));
    assert!(rc.contains("pf_enable=\"YES\"\n"));
    assert!(text("forwarding", "/etc/sysctl.conf.local").contains("net.inet.ip.redirect=0\n"));
    assert!(text("ipfw-stateless", "/boot/loader.conf.local")
        .contains("net.inet.ip.fw.default_to_accept=\"1\"\n"));
}

#[test]
fn counters_read_each_firewalls_own_output() {
    let dut = MockTransport::new("apu2");
    dut.reply(
        &["ipfw", "show"],
        Output::ok("03000 80000000 4800000000 allow ip from any to any\n"),
    );
    dut.reply(
        &["pfctl", "-s", "labels"],
        Output::ok("benchlab-pass 120 79999000 4799940000 0 0 0 0\n"),
    );
    dut.reply(
        &["ipfstat"],
        Output::ok("5 pass in quick on lo0 all\n77 pass in quick proto udp from any to any\n23 pass out quick proto udp from any to any\n"),
    );
    assert_eq!(
        preset("ipfw-stateful").unwrap().counters(&dut).unwrap(),
        Some(80_000_000)
    );
    assert_eq!(
        preset("pf-stateless").unwrap().counters(&dut).unwrap(),
        Some(79_999_000)
    );
    assert_eq!(
        preset("ipf-stateful").unwrap().counters(&dut).unwrap(),
        Some(100)
    );
    assert_eq!(preset("forwarding").unwrap().counters(&dut).unwrap(), None);
    dut.reply(&["sysctl", "-n"], Output::ok("1\n"));
    dut.reply(
        &["ipfw", "show"],
        Output::ok("65535 0 0 deny ip from any to any\n"),
    );
    let err = preset("ipfw-stateful")
        .unwrap()
        .verify(&dut)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("apu2: config set `ipfw-stateful` is not in force"),
        "{err}"
    );
}
