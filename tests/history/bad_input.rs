//! Bad input, through the real binary: one line on stderr, exit status 2, and nothing written
//! (a database not created, or left byte for byte as it was).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::import::schema_rows;
use crate::{data, Backend, TestDb};

on_both!(newer_schema_is_refused, neither_layout_is_refused);

/// Runs `benchlab history --db <db> <args>`; asserts it is refused as bad input (exit status 2,
/// nothing on stdout, one line on stderr) and returns that line.
fn refused(db: &str, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_benchlab"))
        .args(["history", "--db", db])
        .args(args)
        .env_remove("BENCHLAB_DB")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?} on {db}: {stderr}");
    assert!(
        out.stdout.is_empty(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(
        stderr.lines().count(),
        1,
        "{args:?} on {db}: one line, got {stderr:?}"
    );
    assert!(stderr.starts_with("benchlab: "), "{stderr}");
    stderr
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    for entry in walk(dir) {
        if entry.is_file() {
            out.insert(entry.clone(), std::fs::read(&entry).unwrap());
        } else {
            out.insert(entry, Vec::new());
        }
    }
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        }
        out.push(path);
    }
    out
}

/// The commands every refused database is tried with: an import, show and regressions (their
/// output directories in `dir`, which must stay as it is).
fn every_command(dir: &Path) -> Vec<Vec<String>> {
    let fixture = data("netbenches/003").display().to_string();
    let out = dir.join("out").display().to_string();
    vec![
        vec!["import".into(), fixture],
        vec!["show".into(), "-o".into(), out.clone()],
        vec!["regressions".into(), "--json".into(), "-o".into(), out],
    ]
}

fn refused_everywhere(db: &str, dir: &Path, why: &str) {
    let before = snapshot(dir);
    for args in every_command(dir) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let line = refused(db, &args);
        assert!(line.contains(why), "{args:?}: {line}");
        assert_eq!(snapshot(dir), before, "{args:?} wrote in {}", dir.display());
    }
}

#[test]
fn corrupt_database_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.db");
    // Bytes no SQLite header starts with: a small LCG, the same every run.
    let mut x: u32 = 0x2545_f491;
    let junk: Vec<u8> = (0..8192)
        .map(|_| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (x >> 24) as u8
        })
        .collect();
    std::fs::write(&path, &junk).unwrap();
    refused_everywhere(
        path.to_str().unwrap(),
        dir.path(),
        "not a benchlab history database",
    );
}

#[test]
fn an_sqlite_file_of_another_program_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES ('x');")
        .unwrap();
    drop(conn);
    refused_everywhere(
        path.to_str().unwrap(),
        dir.path(),
        "not a benchlab history database",
    );
}

fn newer_schema_is_refused(db: &TestDb) {
    // A history made by this benchlab, then marked as made by a newer one.
    db.import(&[&data("netbenches/003")]);
    let bump = "UPDATE benchlab_schema SET version = version + 1";
    match db.backend {
        Backend::Sqlite => {
            let conn = rusqlite::Connection::open(&db.spec).unwrap();
            conn.execute(bump, []).unwrap();
        }
        Backend::Postgres => {
            crate::pg::client(&db.spec).batch_execute(bump).unwrap();
        }
    }
    let newer = benchlab::history::db::SCHEMA_VERSION + 1;
    refused_everywhere(&db.spec, db.scratch.path(), "is newer than this benchlab's");
    assert_eq!(schema_rows(db.backend, &db.spec), vec![newer]);
    if db.backend == Backend::Postgres {
        let rows = crate::pg::client(&db.spec)
            .query("SELECT COUNT(*) FROM campaigns", &[])
            .unwrap();
        assert_eq!(rows[0].get::<_, i64>(0), 1);
    }
}

#[test]
fn unreachable_postgres_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    refused_everywhere(
        "postgres://benchlab@127.0.0.1:1/x",
        dir.path(),
        "cannot reach the PostgreSQL history",
    );
    let line = refused("postgres://benchlab@127.0.0.1:bad/x", &["show"]);
    assert!(line.contains("not a PostgreSQL URL"), "{line}");
}

/// Whether the database has any table (the PostgreSQL side of "nothing written").
fn pg_tables(url: &str) -> i64 {
    let sql =
        "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema()";
    crate::pg::client(url).query_one(sql, &[]).unwrap().get(0)
}

fn neither_layout_is_refused(db: &TestDb) {
    let empty = db.path("empty");
    std::fs::create_dir(&empty).unwrap();
    let notes = db.path("notes");
    std::fs::create_dir(&notes).unwrap();
    std::fs::write(notes.join("README.md"), "# nothing measured here\n").unwrap();
    let file = data("netbenches/003/bench.299288.fastforwarding.info");
    let missing = db.path("missing");
    let good = data("netbenches/003");
    let cases: [(&[&Path], &str); 5] = [
        (&[&empty], "neither a benchlab results directory"),
        (&[&notes], "neither a benchlab results directory"),
        (&[&file], "not a directory"),
        (&[&missing], "no such directory"),
        // A good directory beside a wrong one: every path is checked before anything is written.
        (&[&good, &empty], "neither a benchlab results directory"),
    ];
    let before = snapshot(db.scratch.path());
    for (paths, why) in cases {
        let mut args = vec!["import"];
        args.extend(paths.iter().map(|p| p.to_str().unwrap()));
        let line = refused(&db.spec, &args);
        assert!(line.contains(why), "{paths:?}: {line}");
        assert_eq!(snapshot(db.scratch.path()), before, "{paths:?} wrote");
        if db.backend == Backend::Postgres {
            assert_eq!(pg_tables(&db.spec), 0, "{paths:?} made tables");
        }
    }
    assert!(!Path::new(&db.spec).exists() || db.backend == Backend::Postgres);
}

#[test]
fn directories_refused_one_by_one_create_nothing() {
    // Logs found (an .info) but no iteration measured: refused, and the import as a whole
    // with it, before the new database is made.
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::copy(
        data("netbenches/003/bench.299288.fastforwarding.info"),
        run.join("bench.299288.fastforwarding.info"),
    )
    .unwrap();
    let db = dir.path().join("history.db");
    let out = Command::new(env!("CARGO_BIN_EXE_benchlab"))
        .args([
            "history",
            "--db",
            db.to_str().unwrap(),
            "import",
            run.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("no measured iteration") && stderr.contains("nothing imported"),
        "{stderr}"
    );
    assert!(!db.exists(), "{stderr}");
}

#[test]
fn show_on_a_missing_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sub/history.db");
    let db = db.to_str().unwrap();
    for args in every_command(dir.path()).into_iter().skip(1) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let line = refused(db, &args);
        assert!(line.contains("no history database there"), "{line}");
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "something was written"
    );
}
