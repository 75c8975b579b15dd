//! `benchlab history`: imports of the netbenches fixtures and of synthetic archives, `show` and
//! `regressions` over them, bad input and concurrent importers. Every import and query test
//! runs twice, on an SQLite file and on a PostgreSQL database of a throwaway cluster this test
//! binary starts itself (`history/pg.rs`; stopped and removed when the binary exits).

#[path = "common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Where a test's history lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A fresh, empty history database (not created yet for SQLite: the first import makes it)
/// and a scratch directory for the test's trees and charts.
pub struct TestDb {
    /// `--db` as the command line takes it.
    pub spec: String,
    pub backend: Backend,
    pub scratch: tempfile::TempDir,
}

impl TestDb {
    /// A fresh database on `backend`; `name` makes the PostgreSQL database's name unique.
    pub fn new(backend: Backend, name: &str) -> Self {
        let scratch = tempfile::tempdir().unwrap();
        let spec = match backend {
            Backend::Sqlite => scratch.path().join("history.db").display().to_string(),
            Backend::Postgres => pg::database(name),
        };
        TestDb {
            spec,
            backend,
            scratch,
        }
    }

    /// A path in the scratch directory.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.scratch.path().join(rel)
    }

    /// Opens the history through the library.
    pub fn open(&self) -> benchlab::history::db::Db {
        benchlab::history::db::Db::open(&self.spec, false).expect("the history opens")
    }

    /// Campaigns and runs recorded.
    pub fn counts(&self) -> (u64, usize) {
        let mut db = self.open();
        (db.campaigns().unwrap(), db.runs().unwrap().len())
    }

    /// `benchlab history --db SPEC <args>` in-process; asserts exit status 0 and returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let (status, out, err) = self.history(args);
        assert_eq!(status, 0, "history {args:?} on {}: stderr {err}", self.spec);
        out
    }

    /// `benchlab history --db SPEC <args>` in-process: (exit status, stdout, stderr).
    pub fn history(&self, args: &[&str]) -> (i32, String, String) {
        let mut all = vec!["history", "--db", &self.spec];
        all.extend(args);
        common::in_process(&all)
    }

    /// `history import` of `paths`, quietly but for the summary line; returns that line.
    pub fn import(&self, paths: &[&Path]) -> String {
        let mut args = vec!["import"];
        args.extend(paths.iter().map(|p| p.to_str().unwrap()));
        self.ok(&args)
    }

    /// `history show [filter] --json`, charts into the scratch directory.
    pub fn show_json(&self, filter: &[&str]) -> Value {
        let charts = self.path("charts");
        let mut args = vec!["show", "--json", "-o", charts.to_str().unwrap()];
        args.extend(filter);
        serde_json::from_str(&self.ok(&args)).expect("show --json prints JSON")
    }

    /// `history regressions --json`, files into the scratch directory.
    pub fn regressions_json(&self) -> Value {
        let out = self.path("regressions");
        let args = ["regressions", "--json", "-o", out.to_str().unwrap()];
        serde_json::from_str(&self.ok(&args)).expect("regressions --json prints JSON")
    }
}

/// A fixture directory under tests/data.
pub fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

/// The trends of a `show --json` document.
pub fn trends(doc: &Value) -> &Vec<Value> {
    doc["trends"].as_array().expect("a trends list")
}

/// The one trend whose series name contains every word of `words`.
pub fn trend<'a>(doc: &'a Value, words: &[&str]) -> &'a Value {
    let found: Vec<&Value> = trends(doc)
        .iter()
        .filter(|t| {
            words
                .iter()
                .all(|w| t["series"].as_str().unwrap().contains(w))
        })
        .collect();
    assert_eq!(found.len(), 1, "series with {words:?}: {found:#?}");
    &found[0]["trend"]
}

/// A trend's point versions, in series order.
pub fn versions(trend: &Value) -> Vec<String> {
    (trend["points"].as_array().unwrap().iter())
        .map(|p| p["version"].as_str().unwrap().to_string())
        .collect()
}

/// A point's iteration values.
pub fn values(point: &Value) -> Vec<f64> {
    (point["values"].as_array().unwrap().iter())
        .map(|v| v.as_f64().unwrap())
        .collect()
}

/// Generates `NAME::sqlite` and `NAME::postgres` tests calling `NAME(&TestDb)` of the module.
macro_rules! on_both {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[test]
            fn sqlite() {
                let db = crate::TestDb::new(crate::Backend::Sqlite, stringify!($name));
                super::$name(&db);
            }

            #[test]
            fn postgres() {
                let db = crate::TestDb::new(crate::Backend::Postgres, stringify!($name));
                super::$name(&db);
            }
        }
    )*};
}

#[path = "history/bad_input.rs"]
mod bad_input;
#[path = "history/import.rs"]
mod import;
#[path = "history/pg.rs"]
mod pg;
#[path = "history/regress.rs"]
mod regress;
#[path = "history/tree.rs"]
mod tree;
