//! Unit tests of the alternating layout: which layout a directory holds.

use super::*;
use crate::config::{Alternating, Design, Version};

/// Two quick versions alternating `forwarding` and `nft-stateful` on `inet4`.
fn campaign() -> Campaign {
    let version =
        |name: &str| -> Version { toml::from_str(&format!("name = \"{name}\"")).unwrap() };
    let mut c = Campaign {
        design: Design::Alternating,
        alternating: Some(Alternating::default()),
        versions: vec![version("acct-off"), version("acct-on")],
        config_sets: vec!["forwarding".into(), "nft-stateful".into()],
        ..Campaign::default()
    };
    c.profiles.truncate(1);
    c
}

/// One finished ABBA block of `version`, as the run writes it: 1 Mpps with `forwarding`,
/// 700 kpps with `nft-stateful`, 1 s phases.
fn write_block(store: &Store, version: &str) {
    store.begin_segment(version, "inet4", 1).unwrap();
    let pps = [1e6, 7e5, 7e5, 1e6];
    let mut series = vec![CounterSample {
        t_s: 0.0,
        rx_pkts: 0,
    }];
    for k in 1..=80 {
        let rate = pps[(k - 1) / 20];
        let last = series[k - 1].rx_pkts;
        series.push(CounterSample {
            t_s: k as f64 * 0.05,
            rx_pkts: last + (rate * 0.05) as u64,
        });
    }
    let phases: Vec<PhaseRow> = ["forwarding", "nft-stateful", "nft-stateful", "forwarding"]
        .iter()
        .enumerate()
        .map(|(i, set)| PhaseRow {
            segment: 1,
            block: 1,
            phase: i as u32 + 1,
            config: set.to_string(),
            switched_s: i as f64,
            end_s: i as f64 + 1.0,
        })
        .collect();
    store
        .write_blocks((version, "inet4", 1), &series, &phases)
        .unwrap();
}

#[test]
fn a_directory_that_measured_quick_versions_in_turn_keeps_its_layout() {
    let tmp = tempfile::tempdir().unwrap();
    let c = campaign();
    let store = Store::create(tmp.path(), &c).unwrap();
    assert!(store.alternates_versions(&c).unwrap(), "a new directory");
    let mut trials = c.clone();
    trials.design = Design::Trials;
    assert!(!store.alternates_versions(&trials).unwrap());

    // The layout before issue 12: one run per version, phases naming the config set.
    write_block(&store, "acct-off");
    assert!(!store.alternates_versions(&c).unwrap());
    let options = Alternating::default().phase_options();
    let sets = ["forwarding", "nft-stateful"];
    let blocks = store
        .read_blocks("acct-off", "inet4", &sets, &options)
        .unwrap();
    let values = blocks[0].values.as_ref().unwrap().values().to_vec();
    assert!(
        (values[0] / values[1] - 1e6 / 7e5).abs() < 0.01,
        "{values:?}"
    );

    // Both layouts in one directory: refused, naming both and what to do.
    store.begin_segment("acct-off+acct-on", "inet4", 1).unwrap();
    let err = store.alternates_versions(&c).unwrap_err().to_string();
    assert!(
        err.contains("acct-off+acct-on.inet4")
            && err.contains("acct-off.inet4")
            && err.contains("move one of them out"),
        "{err}"
    );
    // `--resume` says so before any lab is built.
    drop(store);
    let sets = crate::config::defaults::CONFIG_SETS;
    let err = Store::resume(tmp.path(), &c, &sets).unwrap_err();
    assert!(err.to_string().contains("move one of them out"), "{err}");
}

#[test]
fn a_directory_whose_quick_versions_alternate_is_read_as_such() {
    let tmp = tempfile::tempdir().unwrap();
    let c = campaign();
    let store = Store::create(tmp.path(), &c).unwrap();
    store.begin_segment("acct-off+acct-on", "inet4", 1).unwrap();
    assert!(store.alternates_versions(&c).unwrap());
}
