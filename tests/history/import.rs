//! Imports of the netbenches fixtures (002, 003, the Xeon archive): what is recorded, what
//! `show` gives back, re-imports, recursive finds and concurrent importers.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::tree::{self, pps_file};
use crate::{data, trend, trends, values, versions, Backend, TestDb};

on_both!(
    fixtures_are_recorded_and_shown,
    reimport_adds_nothing,
    parent_folders_are_searched,
    concurrent_imports_both_land,
);

/// The three fixture runs: (name, directory).
fn fixtures() -> Vec<(&'static str, PathBuf)> {
    vec![
        ("002", data("netbenches/002")),
        ("003", data("netbenches/003")),
        ("xeon", data("netbenches-archive/xeon")),
    ]
}

/// Runs per fixture: 002 has 2 images × 3 config sets × 2 profiles, 003 2 images × 3 config
/// sets, the Xeon archive 5 images (2 of them reviews) × 2 profiles.
const RUNS: usize = 12 + 6 + 10;
/// Trends: 002's two images are two branches (current, stable); reviews are no trend.
const TRENDS: usize = 12 + 3 + 2;

fn import_fixtures(db: &TestDb) -> String {
    let dirs: Vec<PathBuf> = fixtures().into_iter().map(|(_, d)| d).collect();
    let refs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
    db.import(&refs)
}

/// Every run of `doc` (points and reviews) by (fixture folder, `version.config.profile`).
fn runs_by_name(doc: &Value) -> BTreeMap<(String, String), Vec<f64>> {
    let mut out = BTreeMap::new();
    for t in trends(doc) {
        let t = &t["trend"];
        let points = t["points"].as_array().unwrap().iter();
        let reviews = t["variants"].as_array().unwrap().iter().map(|v| &v[1]);
        for p in points.chain(reviews) {
            let folder = Path::new(p["source"].as_str().unwrap())
                .file_name()
                .unwrap();
            let stem: Vec<&str> = [&p["version"], &t["config"], &t["profile"]]
                .iter()
                .map(|s| s.as_str().unwrap())
                .filter(|s| !s.is_empty())
                .collect();
            let key = (folder.to_str().unwrap().to_string(), stem.join("."));
            assert!(
                out.insert(key.clone(), values(p)).is_none(),
                "{key:?} twice"
            );
        }
    }
    out
}

fn assert_close(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: {got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        // The archive's .pps lines are the medians as ministat prints them (halves kept).
        assert!(
            (g - w).abs() <= 0.5,
            "{what}: {got:?} vs the archive's {want:?}"
        );
    }
}

fn fixtures_are_recorded_and_shown(db: &TestDb) {
    let summary = import_fixtures(db);
    assert!(
        summary.starts_with(
            "3 campaign(s) recorded (0 in place of an older content), 0 already known, 0 refused"
        ),
        "{summary}"
    );
    assert_eq!(db.counts(), (3, RUNS));
    let doc = db.show_json(&[]);
    assert_eq!(doc["schema"], 1);
    assert_eq!(trends(&doc).len(), TRENDS);
    // One exact value: 003's first fastforwarding iteration, the archive's first .pps line.
    let ff = trend(&doc, &["003", "fastforwarding"]);
    assert_eq!(versions(ff), ["299288"]);
    assert_eq!(ff["points"][0]["values"][0], 2726647.0);
    assert_eq!(ff["points"][0]["revision"]["base"], "r299288");
    assert_eq!(ff["points"][0]["date"], "2016-11-15");
    assert_eq!(ff["variants"].as_array().unwrap().len(), 1);
    assert_eq!(ff["variants"][0][0], 0, "the review is beside r299288");
    assert_eq!(ff["variants"][0][1]["version"], "299288D8526");
    assert_eq!(ff["lab"]["os"], "FreeBSD");
    // 002's images are branches of one revision: a trend each.
    let current = trend(&doc, &["002", "forwarding", "inet4", "current"]);
    assert_eq!(versions(current), ["318516current"]);
    assert_eq!(current["branch"], "current");
    let xeon = trend(&doc, &["Xeon", "inet6"]);
    assert_eq!(versions(xeon), ["r368287", "r368606"]);
    let reviews: Vec<(i64, &str)> = (xeon["variants"].as_array().unwrap().iter())
        .map(|v| (v[0].as_i64().unwrap(), v[1]["version"].as_str().unwrap()))
        .collect();
    assert_eq!(
        reviews,
        [
            (0, "r368287D27401v2"),
            (1, "r368606D27401v3"),
            (1, "r368606D27401v4")
        ]
    );
    // Every iteration of every run is the archive's .pps line for it.
    let runs = runs_by_name(&doc);
    assert_eq!(runs.len(), RUNS);
    let mut checked = 0;
    for (folder, _) in fixtures() {
        for entry in std::fs::read_dir(data("netbenches-expected").join(folder)).unwrap() {
            let path = entry.unwrap().path();
            let Some(stem) = path
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .strip_suffix(".pps")
            else {
                continue;
            };
            let key = (folder.to_string(), stem.to_string());
            let got = runs
                .get(&key)
                .unwrap_or_else(|| panic!("{key:?} not shown: {runs:#?}"));
            assert_close(got, &pps_file(&path), &format!("{key:?}"));
            checked += 1;
        }
    }
    assert_eq!(checked, RUNS);
}

fn reimport_adds_nothing(db: &TestDb) {
    import_fixtures(db);
    let before = db.show_json(&[]);
    let summary = import_fixtures(db);
    assert!(
        summary.starts_with(
            "0 campaign(s) recorded (0 in place of an older content), 3 already known, 0 refused"
        ),
        "{summary}"
    );
    assert_eq!(db.counts(), (3, RUNS));
    // One directory again, alone, among the others or copied elsewhere: the same content.
    let copy = db.path("elsewhere/003");
    crate::common::copy_dir(&data("netbenches/003"), &copy);
    let summary = db.import(&[&data("netbenches/003"), &copy]);
    assert!(
        summary.starts_with(
            "0 campaign(s) recorded (0 in place of an older content), 2 already known"
        ),
        "{summary}"
    );
    assert_eq!(db.counts(), (3, RUNS));
    assert_eq!(db.show_json(&[]), before);
}

fn parent_folders_are_searched(db: &TestDb) {
    let root = db.path("archive");
    let lab = ["CPU_X_4Cores", "NIC_Y", "topic"];
    tree::archive(
        &root,
        lab,
        &[
            ("002", &data("netbenches/002")),
            ("003", &data("netbenches/003")),
        ],
    );
    // A second lab beside it, deeper in the same parent.
    tree::archive(
        &root.join("more"),
        ["Other_2Cores", "NIC_Z", "t"],
        &[("xeon", &data("netbenches-archive/xeon"))],
    );
    let summary = db.import(&[&root]);
    assert!(summary.starts_with("3 campaign(s) recorded"), "{summary}");
    assert_eq!(db.counts(), (3, RUNS));
    let doc = db.show_json(&[]);
    let mut labs: BTreeMap<String, usize> = BTreeMap::new();
    for t in trends(&doc) {
        let lab = &t["trend"]["lab"];
        let name = format!(
            "{} {} {} {}",
            lab["cpu"], lab["cores"], lab["nic"], lab["os"]
        );
        *labs.entry(name).or_default() += 1;
    }
    let want: BTreeMap<String, usize> = [
        (
            "\"CPU_X_4Cores\" 4 \"NIC_Y\" \"FreeBSD\"".to_string(),
            12 + 3,
        ),
        ("\"Other_2Cores\" 2 \"NIC_Z\" \"FreeBSD\"".to_string(), 2),
    ]
    .into();
    assert_eq!(labs, want);
    // The lab is what makes series comparable: 003's fastforwarding is one trend of that lab.
    let ff = trend(&doc, &["CPU_X_4Cores", "NIC_Y", "fastforwarding"]);
    assert_eq!(versions(ff), ["299288"]);
    let filtered = db.show_json(&["CPU_X_4Cores", "fastforwarding"]);
    assert_eq!(trends(&filtered).len(), 1);
}

/// Rounds of two importers started at once into a new database (the race is narrow).
const ROUNDS: usize = 12;

fn concurrent_imports_both_land(db: &TestDb) {
    for round in 0..ROUNDS {
        let target = match db.backend {
            Backend::Sqlite => db
                .path(&format!("concurrent-{round}.db"))
                .display()
                .to_string(),
            Backend::Postgres => crate::pg::database(&format!("concurrent_{round}")),
        };
        let dirs = [data("netbenches/003"), data("netbenches-archive/xeon")];
        let children: Vec<_> = (dirs.iter())
            .map(|dir| {
                Command::new(env!("CARGO_BIN_EXE_benchlab"))
                    .args(["history", "--db", &target, "import", "-q"])
                    .arg(dir)
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success(),
                "round {round}: {:?}: {stderr}",
                out.status
            );
            assert!(stderr.is_empty(), "round {round}: {stderr}");
        }
        let mut history = benchlab::history::db::Db::open(&target, false).unwrap();
        assert_eq!(history.campaigns().unwrap(), 2, "round {round}");
        assert_eq!(history.runs().unwrap().len(), 6 + 10, "round {round}");
        assert_eq!(schema_rows(db.backend, &target), vec![1], "round {round}");
    }
}

/// The rows of `benchlab_schema`: one, the version, when the schema was made once.
pub fn schema_rows(backend: Backend, spec: &str) -> Vec<i64> {
    let sql = "SELECT version FROM benchlab_schema";
    match backend {
        Backend::Sqlite => {
            let conn = rusqlite::Connection::open(spec).unwrap();
            let mut statement = conn.prepare(sql).unwrap();
            let rows = statement.query_map([], |r| r.get(0)).unwrap();
            rows.map(Result::unwrap).collect()
        }
        Backend::Postgres => {
            let rows = crate::pg::client(spec).query(sql, &[]).unwrap();
            rows.iter().map(|r| r.get(0)).collect()
        }
    }
}
