//! The SQLite back end: one file, nothing to start. Write-ahead logging lets readers go on
//! while a lab imports, and a writer waits for another's transaction rather than failing.

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, OpenFlags};

use super::conn::{Conn, Value};
use crate::error::InputError;

/// An open SQLite history file.
pub(crate) struct Sqlite {
    conn: Connection,
    /// Whether write-ahead logging is on: set before the first write, not on open, so that
    /// a database this benchlab refuses (a newer schema) is left byte for byte as it was.
    wal: bool,
}

/// Opens (or with `create`, creates) the history file at `path`.
pub(crate) fn open(path: &Path, create: bool) -> anyhow::Result<Sqlite> {
    let shown = path.display();
    // A FIFO, a device or a directory is no database file: said before SQLite opens it.
    if path.exists() && !path.is_file() {
        return Err(InputError::new(format!(
            "'{shown}': not a regular file (a directory, FIFO or device), so no history \
             database; give a file path to --db"
        ))
        .into());
    }
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if create {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("creating the directory of '{shown}'"))?;
        }
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    } else if !path.exists() {
        return Err(InputError::new(format!(
            "'{shown}': no history database there; import results first \
             (`benchlab history import DIR`) or give another --db"
        ))
        .into());
    }
    let conn = Connection::open_with_flags(path, flags).map_err(|e| {
        InputError::new(format!("'{shown}': cannot open the history database: {e}"))
    })?;
    // A file that is not a database fails its first read: said before anything is written.
    conn.query_row("SELECT COUNT(*) FROM sqlite_master", [], |_| Ok(()))
        .map_err(|e| {
            InputError::new(format!(
                "'{shown}': not a benchlab history database ({e}); give another --db, or move \
                 it away to start a new history"
            ))
        })?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.set_prepared_statement_cache_capacity(64);
    Ok(Sqlite { conn, wal: false })
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(i) => ToSqlOutput::Borrowed(ValueRef::Integer(*i)),
            Value::Real(r) => ToSqlOutput::Borrowed(ValueRef::Real(*r)),
            Value::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
        })
    }
}

impl Sqlite {
    /// Runs `f` until another writer lets it: switching the journal mode does not wait out the
    /// busy timeout as statements do, and two imports into a new file meet right there.
    fn until_free(&self, f: impl Fn(&Connection) -> rusqlite::Result<()>) -> anyhow::Result<()> {
        let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
        loop {
            match f(&self.conn) {
                Err(e) if is_busy(&e) && std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                result => return Ok(result?),
            }
        }
    }
}

fn is_busy(e: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode::{DatabaseBusy, DatabaseLocked};
    matches!(e.sqlite_error_code(), Some(DatabaseBusy | DatabaseLocked))
}

/// How long a writer waits for another's transaction before it gives up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(120);

/// The shared SQL's `$1` parameters are PostgreSQL's; SQLite's own numbered form is `?1`.
fn dialect(sql: &str) -> String {
    sql.replace('$', "?")
}

impl Conn for Sqlite {
    fn execute(&mut self, sql: &str, params: &[Value]) -> anyhow::Result<u64> {
        let mut statement = self.conn.prepare_cached(&dialect(sql))?;
        Ok(statement.execute(rusqlite::params_from_iter(params))? as u64)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> anyhow::Result<Vec<Vec<Value>>> {
        let mut statement = self.conn.prepare_cached(&dialect(sql))?;
        let columns = statement.column_count();
        let mut rows = statement.query(rusqlite::params_from_iter(params))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            let mut values = Vec::with_capacity(columns);
            for i in 0..columns {
                values.push(match row.get_ref(i)? {
                    ValueRef::Null => Value::Null,
                    ValueRef::Integer(n) => Value::Int(n),
                    ValueRef::Real(r) => Value::Real(r),
                    ValueRef::Text(t) | ValueRef::Blob(t) => {
                        Value::Text(String::from_utf8_lossy(t).into_owned())
                    }
                });
            }
            out.push(values);
        }
        Ok(out)
    }

    fn begin_write(&mut self) -> anyhow::Result<()> {
        if !self.wal {
            // WAL: readers do not block the writer; NORMAL sync is safe with WAL (a crash
            // loses at most the last transactions, never the file's consistency).
            self.until_free(|c| c.pragma_update(None, "journal_mode", "WAL"))?;
            self.conn.pragma_update(None, "synchronous", "NORMAL")?;
            self.wal = true;
        }
        // IMMEDIATE takes the write lock now: two importers serialise here instead of one of
        // them failing when its read lock cannot be upgraded.
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        Ok(())
    }

    fn id_type(&self) -> &'static str {
        "INTEGER PRIMARY KEY"
    }

    fn tables(&mut self) -> anyhow::Result<Vec<String>> {
        let mut statement = self
            .conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")?;
        let names = statement.query_map([], |r| r.get::<_, String>(0))?;
        Ok(names.collect::<Result<_, _>>()?)
    }
}
