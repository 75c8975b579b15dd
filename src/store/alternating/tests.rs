//! Unit tests of the alternating layout: which layout a directory holds, what `phases.csv` keeps.

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
            others_ms: None,
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

#[test]
fn phases_keep_other_programs_time_and_older_runs_read_without_it() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::create(tmp.path(), &campaign()).unwrap();
    write_block(&store, "default");
    let mut rows = store.read_phases("default", "inet4").unwrap();
    assert!(rows.iter().all(|r| r.others_ms.is_none()));
    rows[1].others_ms = Some(40.0);
    store
        .write_blocks(("default", "inet4", 1), &[], &rows)
        .unwrap();
    let path = store.alternating_dir("default", "inet4").join("phases.csv");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("segment,block,phase,config,switched_s,end_s,others_ms\n"));
    assert!(
        text.contains(",nft-stateful,1.000000,2.000000,40\n"),
        "{text}"
    );
    let read: Vec<Option<f64>> = (store.read_phases("default", "inet4").unwrap())
        .iter()
        .map(|r| r.others_ms)
        .collect();
    assert_eq!(read, [None, Some(40.0), None, None]);
    // A run recorded before the column: the same rows, nothing read.
    let old = "segment,block,phase,config,switched_s,end_s\n\
               1,1,1,forwarding,0.000000,1.000000\n\
               1,1,2,nft-stateful,1.000000,2.000000\n\
               1,1,3,nft-stateful,2.000000,3.000000\n\
               1,1,4,forwarding,3.000000,4.000000\n";
    std::fs::write(&path, old).unwrap();
    let rows = store.read_phases("default", "inet4").unwrap();
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().all(|r| r.others_ms.is_none()));
}

#[test]
fn a_block_other_programs_took_more_than_one_percent_of_is_crowded() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::create(tmp.path(), &campaign()).unwrap();
    write_block(&store, "default");
    let meta = SegmentMeta {
        start_unix_s: 1000.0,
        end_unix_s: Some(1004.0),
        ended: Some(PRECISE.into()),
        generator: None,
        others_cpus: vec![0, 1],
    };
    let at = ("default", "inet4", 1);
    (store.write_segment_file(at, "meta.json", &serde_json::to_vec(&meta).unwrap())).unwrap();
    let sets = ["forwarding", "nft-stateful"];
    let options = PhaseOptions::default();
    let with = |ms: &[Option<f64>]| {
        let mut rows = store.read_phases("default", "inet4").unwrap();
        rows.iter_mut()
            .zip(ms)
            .for_each(|(r, &ms)| r.others_ms = ms);
        let series = store.read_series("default", "inet4", 1).unwrap();
        store.write_blocks(at, &series, &rows).unwrap();
        let blocks = store
            .read_blocks("default", "inet4", &sets, &options)
            .unwrap();
        let share = blocks[0].others_share;
        (share, crate::store::crowded(share))
    };
    // 4 s on two CPUs: 80 ms is 1 %.
    let (share, crowded) = with(&[Some(16.0); 4]);
    assert!((share.unwrap() - 0.008).abs() < 1e-12 && !crowded);
    let (share, crowded) = with(&[Some(10.0), Some(90.0), Some(0.0), Some(0.0)]);
    assert!((share.unwrap() - 0.0125).abs() < 1e-12 && crowded);
    // A phase not read: the block's share is not known, and it is not crowded.
    assert_eq!(
        with(&[Some(90.0), None, Some(90.0), Some(90.0)]),
        (None, false)
    );
}
