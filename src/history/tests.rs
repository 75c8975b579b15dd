//! The history's path from benchlab results directories to regressions: campaigns written
//! through the store as a run writes them, imported into a real SQLite file, grouped, and the
//! change found with its interval and the campaign that confirms it.

use std::path::Path;

use super::db::{Db, Imported};
use super::import::{self, Found, Step};
use super::{regress, trend};
use crate::config::{defaults::CONFIG_SETS, Campaign};
use crate::store::{plan, SampleRow, Store, TrialMeta};

/// A campaign of one quick version (`sysctl` value `knob`) and one series of 3 iterations.
fn campaign_text(version: &str, knob: u32) -> String {
    format!(
        r#"title = "history"
iterations = 3
design = "trials"
config_sets = ["forwarding"]

[trial]
duration = 10
warmup = 2
cooldown = 1

[[versions]]
name = "{version}"
sysctls = {{ "net.core.netdev_budget" = "{knob}" }}

[[profiles]]
name = "inet4"
af = "inet4"
frame_size = 64
src = "198.18.10.1:2000-198.18.10.20"
dst = "198.19.10.1:2000-198.19.10.100"
rate = "max"
"#
    )
}

/// A results directory of `version` whose iterations received about `pps`, run at `day`.
fn results_dir(dir: &Path, version: &str, knob: u32, pps: f64, day: u32) {
    let text = campaign_text(version, knob);
    let campaign = Campaign::from_toml(&text, "campaign.toml", &CONFIG_SETS).unwrap();
    let store = Store::create(dir, &campaign).unwrap();
    for (i, key) in plan(&campaign).into_iter().enumerate() {
        let rate = pps * (1.0 + 0.002 * (i as f64 - 1.0) + 0.001 * f64::from(day % 3));
        let rows: Vec<SampleRow> = (1..=10)
            .map(|t| SampleRow {
                t_s: f64::from(t),
                tx_pkts: 2 * rate as u64,
                rx_pkts: rate as u64,
                tx_pps: 2.0 * rate,
                rx_pps: rate,
            })
            .collect();
        let start = 1_700_000_000.0 + 86_400.0 * f64::from(day);
        let meta = TrialMeta {
            start_unix_s: start,
            end_unix_s: start + 10.0,
            rx_pps: rate,
            ..crate::store::tests::meta(&key)
        };
        store.begin_trial(&key).unwrap();
        store.finish_trial(&key, &rows, &meta).unwrap();
    }
}

#[test]
fn a_drop_between_quick_versions_is_found_measured_and_handed_a_confirming_campaign() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    // Six days of `before` at 1 Mpps, then five of `after` 20 % lower.
    for day in 0..11 {
        let (version, knob, pps) = if day < 6 {
            ("before", 300, 1_000_000.0)
        } else {
            ("after", 600, 800_000.0)
        };
        results_dir(
            &archive.join(format!("day{day:02}")),
            version,
            knob,
            pps,
            day,
        );
    }
    let db_path = tmp.path().join("h.db");
    let spec = db_path.to_str().unwrap();
    let found = import::find(&archive).unwrap();
    assert_eq!(found.len(), 11);
    assert!(found.iter().all(|f| matches!(f, Found::Benchlab(_))));
    let mut steps = Vec::new();
    let summary = import::import_all(spec, &found, &CONFIG_SETS, &mut |_, s| {
        steps.push(matches!(s, Step::Done(Imported::Added)))
    })
    .unwrap();
    assert_eq!((summary.added, summary.known), (11, 0), "{summary:?}");
    // Again: nothing added.
    let again = import::import_all(spec, &found, &CONFIG_SETS, &mut |_, _| {}).unwrap();
    assert_eq!((again.added, again.known), (0, 11));

    let mut db = Db::open(spec, false).unwrap();
    let trends = trend::trends(db.runs().unwrap());
    assert_eq!(trends.len(), 1);
    let t = &trends[0];
    let versions: Vec<&str> = t.points.iter().map(|p| p.version.as_str()).collect();
    assert_eq!(versions[..6], ["before"; 6]);
    assert_eq!(versions[6..], ["after"; 5]);
    assert_eq!(t.grouping.groups.len(), 2, "{:?}", t.grouping);

    let out = tmp.path().join("out");
    let mut changes = regress::changes(&trends, None);
    regress::attach(&mut db, &mut changes, &out).unwrap();
    assert_eq!(changes.len(), 1);
    let c = &changes[0];
    assert_eq!((c.before.as_str(), c.after.as_str()), ("before", "after"));
    assert!((c.delta_pct + 20.0).abs() < 0.5, "{c:?}");
    assert!(c.significant && c.ci_pct < 1.0, "{c:?}");
    assert_eq!(c.iterations, (18, 15));
    // The confirming campaign alternates the two versions on the one set and profile.
    let command = c.confirm.as_deref().unwrap();
    let path = command.strip_prefix("benchlab run ").unwrap();
    let confirm = Campaign::load(Path::new(path), &CONFIG_SETS).unwrap();
    let names: Vec<&str> = confirm.versions.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["before", "after"]);
    assert_eq!(confirm.config_sets, ["forwarding"]);
    assert_eq!(confirm.design.to_string(), "alternating");
    // `--since` after the change keeps nothing; a date before it keeps it.
    assert!(regress::changes(&trends, Some("2099-01-01")).is_empty());
    assert_eq!(regress::changes(&trends, Some("2023-01-01")).len(), 1);
}

#[test]
fn a_new_schema_is_refused_and_the_file_left_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("h.db");
    let spec = path.to_str().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/netbenches/003");
    let found = import::find(&fixture).unwrap();
    import::import_all(spec, &found, &CONFIG_SETS, &mut |_, _| {}).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("UPDATE benchlab_schema SET version = 99", [])
        .unwrap();
    drop(conn);
    let before = std::fs::read(&path).unwrap();
    let e = Db::open(spec, false).err().unwrap();
    assert_eq!(crate::error::exit_code(&e), 2);
    assert!(
        format!("{e:#}").contains("schema version 99 is newer"),
        "{e:#}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
}
