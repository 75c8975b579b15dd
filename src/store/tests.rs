//! Unit tests of `store`.

use super::*;

const SETS: [&str; 4] = defaults_sets();
const fn defaults_sets() -> [&'static str; 4] {
    crate::config::defaults::CONFIG_SETS
}

/// A finished trial's `meta.json` of small made-up figures, for tests that write a directory.
pub(crate) fn meta(key: &TrialKey) -> TrialMeta {
    TrialMeta {
        trial: key.to_string(),
        start_unix_s: 1.0,
        end_unix_s: 2.0,
        offered_pps: None,
        tx_pps: 10.0,
        rx_pps: 9.0,
        tx_pkts: 10,
        rx_pkts: 9,
        lost_pkts: 1,
        measured_samples: 3,
        generator: None,
        status: Status::Ok,
        flags: vec![],
        failure: None,
        attempts: 1,
        discarded: None,
        overhead_s: 0.1,
        capture: None,
        latency: None,
        others: None,
    }
}

#[test]
fn resume_sees_finished_trials_and_drops_partial_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("r");
    let c = Campaign::default();
    let store = Store::create(&dir, &c).unwrap();
    let keys = plan(&c);
    let rows = [SampleRow {
        t_s: 1.0,
        tx_pkts: 5,
        rx_pkts: 4,
        tx_pps: 5.0,
        rx_pps: 4.0,
    }];
    store.begin_trial(&keys[0]).unwrap();
    store
        .finish_trial(&keys[0], &rows, &meta(&keys[0]))
        .unwrap();
    store.begin_trial(&keys[1]).unwrap(); // interrupted: no meta.json
    drop(store); // the run ends: its lock goes
    let again = Store::resume(&dir, &c, &SETS).unwrap();
    assert_eq!(again.finished().unwrap(), BTreeSet::from([keys[0].clone()]));
    assert!(
        again.begin_trial(&keys[0]).is_err(),
        "finished trials are never rewritten"
    );
    assert_eq!(again.read_samples(&keys[0]).unwrap(), rows);
    assert_eq!(again.read_meta(&keys[0]).unwrap(), meta(&keys[0]));
}

#[test]
fn only_a_new_directory_without_finished_trials_is_discarded() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("r");
    let c = Campaign::default();
    let keys = plan(&c);
    let store = Store::create(&dir, &c).unwrap();
    store.begin_trial(&keys[0]).unwrap(); // interrupted: nothing measured
    assert_eq!(store.discard_if_unmeasured().unwrap(), Some("removed"));
    assert!(!dir.exists());
    drop(store);

    let store = Store::create(&dir, &c).unwrap();
    store.begin_trial(&keys[0]).unwrap();
    store.finish_trial(&keys[0], &[], &meta(&keys[0])).unwrap();
    assert_eq!(store.discard_if_unmeasured().unwrap(), None);
    assert!(dir.join("runs").join(keys[0].to_string()).is_dir());
    drop(store);

    // A resumed directory is the user's: never discarded, even with nothing finished.
    fs::remove_dir_all(dir.join("runs")).unwrap();
    fs::create_dir(dir.join("runs")).unwrap();
    let resumed = Store::resume(&dir, &c, &SETS).unwrap();
    assert_eq!(resumed.discard_if_unmeasured().unwrap(), None);
    assert!(dir.join(CAMPAIGN_FILE).is_file());
    drop(resumed);

    // A directory that was there, empty, is emptied, not removed: and the message says so.
    let empty = tmp.path().join("empty");
    fs::create_dir(&empty).unwrap();
    let store = Store::create(&empty, &c).unwrap();
    let what = store.discard_if_unmeasured().unwrap().unwrap();
    assert!(what.starts_with("emptied"), "{what}");
    assert_eq!(fs::read_dir(&empty).unwrap().count(), 0);
}

#[test]
fn a_second_run_in_a_locked_directory_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let c = Campaign::default();
    let store = Store::create(tmp.path(), &c).unwrap();
    let e = Store::resume(tmp.path(), &c, &SETS)
        .unwrap_err()
        .to_string();
    assert!(e.contains("another benchlab is running"), "{e}");
    assert!(!e.contains('\n'));
    drop(store);
    Store::resume(tmp.path(), &c, &SETS).unwrap();
}

#[test]
fn hidden_files_in_runs_are_not_trials() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::create(tmp.path(), &Campaign::default()).unwrap();
    fs::write(tmp.path().join("runs/.DS_Store"), "Finder").unwrap();
    assert!(store.finished().unwrap().is_empty());
}

#[test]
fn default_named_directories_of_the_same_second_differ() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("results/default-20260101-000000");
    let c = Campaign::default();
    let a = Store::create_new(&base, &c).unwrap();
    let b = Store::create_new(&base, &c).unwrap();
    assert_ne!(a.dir(), b.dir());
}

#[test]
fn resume_refuses_a_changed_campaign_naming_the_key() {
    let tmp = tempfile::tempdir().unwrap();
    let c = Campaign::default();
    Store::create(tmp.path(), &c).unwrap();
    let mut changed = c.clone();
    changed.trial.duration = std::time::Duration::from_secs(20);
    let err = Store::resume(tmp.path(), &changed, &SETS)
        .unwrap_err()
        .to_string();
    assert!(err.contains("key `trial.duration` changed"), "{err}");
    changed = c.clone();
    changed.profiles[1].frame_size = Some(128);
    let err = Store::resume(tmp.path(), &changed, &SETS)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("key `profiles[1].frame_size` changed"),
        "{err}"
    );
}

#[test]
fn corrupted_directories_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let c = Campaign::default();
    assert!(Store::resume(tmp.path(), &c, &SETS)
        .unwrap_err()
        .to_string()
        .contains("not a benchlab results directory"));
    let store = Store::create(tmp.path(), &c).unwrap();
    let key = &plan(&c)[0];
    store.begin_trial(key).unwrap();
    store.write_trial_file(key, "meta.json", b"{ half").unwrap();
    drop(store);
    assert!(Store::resume(tmp.path(), &c, &SETS)
        .unwrap_err()
        .to_string()
        .contains("corrupted results directory"));
    fs::write(tmp.path().join("campaign.toml"), "iterations = \"x\"").unwrap();
    assert!(Store::resume(tmp.path(), &c, &SETS)
        .unwrap_err()
        .to_string()
        .contains("corrupted results directory"));
}

#[test]
fn a_non_empty_directory_is_not_overwritten() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("x"), "precious").unwrap();
    let err = Store::create(tmp.path(), &Campaign::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("--resume"), "{err}");
}

#[test]
fn samples_csv_round_trips() {
    let rows = vec![
        SampleRow {
            t_s: 1.0,
            tx_pkts: 1_000_000,
            rx_pkts: 900_000,
            tx_pps: 1e6,
            rx_pps: 9e5,
        },
        SampleRow {
            t_s: 2.001,
            tx_pkts: 1,
            rx_pkts: 0,
            tx_pps: 1.0,
            rx_pps: 0.0,
        },
    ];
    assert_eq!(parse_samples_csv(&samples_csv(&rows)).unwrap(), rows);
    let line = |text: &str| parse_samples_csv(text).unwrap_err().line;
    const HEAD: &str = "t_s,tx_pkts,rx_pkts,tx_pps,rx_pps\n";
    assert_eq!(line(&format!("{HEAD}1,2,x,4,5\n")), 2);
    // NaN, negative, infinite and exponent forms never come from the writer: damage.
    for bad in ["nan", "-4.0", "inf", "1e300", "4.", ".5", "", "4.0.1"] {
        let text = format!("{HEAD}1.000,2,2,2.0,2.0\n2.000,2,2,2.0,{bad}\n");
        let e = parse_samples_csv(&text).unwrap_err();
        assert_eq!(e.line, 3, "{bad}");
        assert!(e.to_string().contains("rx_pps"), "{e}");
    }
    // A last line without its newline was cut off, even when what is left reads as a number.
    let e = parse_samples_csv(&format!("{HEAD}1.000,2,2,2.0,2.0\n2.000,2,2,2.0,1")).unwrap_err();
    assert_eq!((e.line, e.problem.contains("cut off")), (3, true));
}

#[test]
fn lab_json_is_written_once_and_versions_are_added_to_it() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::create(&tmp.path().join("r"), &Campaign::default()).unwrap();
    assert_eq!(store.read_lab().unwrap(), None);
    let record = LabRecord {
        generator: Some("benchlab gen (built-in)".into()),
        ..LabRecord::default()
    };
    store.write_lab(|| Ok(record.clone())).unwrap();
    // A resumed campaign keeps the record of its first run.
    store
        .write_lab(|| anyhow::bail!("not asked again"))
        .unwrap();
    let v1 = VersionRecord {
        uname: Some("FreeBSD dut 15.0".into()),
        ..VersionRecord::default()
    };
    store
        .record_version("v1", v1.clone(), Some("options INET\n"))
        .unwrap();
    let read = store.read_lab().unwrap().unwrap();
    assert_eq!(read.generator, record.generator);
    let kept = &read.versions["v1"];
    assert_eq!(kept.uname, v1.uname);
    assert_eq!(kept.kernel_config.as_deref(), Some("kernel-config/v1.txt"));
    let config = fs::read_to_string(store.dir().join("kernel-config/v1.txt")).unwrap();
    assert_eq!(config, "options INET\n");
    fs::write(store.dir().join(LAB_FILE), "{").unwrap();
    let e = store.read_lab().unwrap_err().to_string();
    assert!(e.contains("lab.json: corrupted"), "{e}");
}

#[test]
fn alternating_records_that_are_no_regular_file_are_refused_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::create(tmp.path(), &Campaign::default()).unwrap();
    // No record yet: no phase.
    assert!(store.read_phases("default", "inet4").unwrap().is_empty());
    let dir = store.alternating_dir("default", "inet4");
    fs::create_dir_all(dir.join("segment-1")).unwrap();
    // A FIFO would block a plain read for ever, /dev/zero would never end.
    let fifo = nix::sys::stat::Mode::S_IRWXU;
    nix::unistd::mkfifo(&dir.join("phases.csv"), fifo).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.join("segment-1/series.csv")).unwrap();
    let e = store
        .read_phases("default", "inet4")
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a regular file"), "{e}");
    // A link out of the run's folder is refused before what it points at is looked at.
    let e = store.read_series("default", "inet4", 1).unwrap_err();
    assert!(e.to_string().contains("outside"), "{e}");
}
