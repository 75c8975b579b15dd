//! The store interface: one [`Db`](crate::history::db::Db) over a
//! [`Conn`](crate::history::conn::Conn), which SQLite ([`sqlite`](crate::history::sqlite)) and
//! PostgreSQL ([`postgres`](crate::history::postgres)) implement with a handful of primitives. The
//! schema, its migrations and every query live here once, written in the SQL both speak (`$1`
//! parameters, `ON CONFLICT … DO NOTHING RETURNING`), so both back ends run the same code path.
//!
//! Concurrent writers (several labs importing into one server, two imports into one file) are safe:
//! each campaign is one transaction that takes the back end's write lock first (SQLite's `BEGIN
//! IMMEDIATE`, PostgreSQL's advisory lock), and a campaign already recorded by its content hash is
//! left as it is.

use anyhow::Context;

use super::conn::{Conn, Value};
use super::revision::Revision;
use super::{CampaignRecord, LabId, RunRecord};
use crate::error::InputError;

/// The schema version this benchlab writes and reads.
pub const SCHEMA_VERSION: i64 = 1;

/// The migrations, in order: `MIGRATIONS[n]` takes the schema from version `n` to `n + 1`.
/// `{ID}` stands for the back end's generated primary key type.
const MIGRATIONS: &[&str] = &["CREATE TABLE campaigns (
        id {ID},
        hash TEXT NOT NULL UNIQUE,
        source TEXT NOT NULL,
        kind TEXT NOT NULL,
        date TEXT,
        design TEXT NOT NULL,
        cpu TEXT NOT NULL,
        cores BIGINT,
        nic TEXT NOT NULL,
        os TEXT NOT NULL,
        campaign_toml TEXT,
        imported_at TEXT NOT NULL);
    CREATE INDEX campaigns_source ON campaigns (source);
    CREATE TABLE runs (
        id {ID},
        campaign_id BIGINT NOT NULL REFERENCES campaigns (id),
        version TEXT NOT NULL,
        label TEXT,
        revision TEXT,
        revision_order BIGINT,
        variant TEXT NOT NULL,
        config TEXT NOT NULL,
        profile TEXT NOT NULL,
        quick BIGINT NOT NULL,
        flamegraph TEXT,
        folded TEXT);
    CREATE INDEX runs_campaign ON runs (campaign_id);
    CREATE TABLE iterations (
        run_id BIGINT NOT NULL REFERENCES runs (id),
        idx BIGINT NOT NULL,
        value DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (run_id, idx));"];

/// The most runs `history show` and `regressions` read: a hundred times the netbenches
/// archive's.
pub(crate) const MAX_RUNS: i64 = 1_000_000;
/// The most iteration values they read (some 100 bytes each in memory).
pub(crate) const MAX_VALUES: i64 = 5_000_000;

/// A run as stored, with its campaign's facts: one point of a trend.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRun {
    /// The run's id.
    pub(crate) id: i64,
    /// Its campaign's id.
    pub(crate) campaign: i64,
    /// The campaign's directory.
    pub(crate) source: String,
    /// When the campaign ran (RFC 3339), when known.
    pub(crate) date: Option<String>,
    /// The campaign's design.
    pub(crate) design: String,
    /// The lab.
    pub(crate) lab: LabId,
    /// Version name, config set, profile, and whether the version is quick.
    pub(crate) run: RunRecord,
    /// The version read as a revision, when it is one.
    pub(crate) revision: Option<Revision>,
}

/// What importing one campaign did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Imported {
    /// Recorded anew.
    Added,
    /// Recorded, in place of an older content of the same directory (a resumed campaign).
    Replaced,
    /// Already recorded (same content hash): nothing added.
    Known,
}

/// An open history database.
pub struct Db {
    conn: Box<dyn Conn>,
    /// An empty database opened to write: its schema is made with the first campaign
    /// recorded, so that an import that records nothing leaves it empty.
    fresh: bool,
    /// The database as the user named it (password left out), for messages.
    name: String,
}

/// Whether a database spec is a PostgreSQL URL (`postgres://…`, `postgresql://…`); anything
/// else is an SQLite file.
pub(crate) fn is_postgres(spec: &str) -> bool {
    spec.starts_with("postgres://") || spec.starts_with("postgresql://")
}

impl Db {
    /// Opens the database `spec` (a `postgres://` URL or an SQLite file path). A writer
    /// (`write`) makes the file and its directory when missing and creates the schema in an
    /// empty database; a reader needs a history there. Either brings an older schema to
    /// [`SCHEMA_VERSION`]; a newer one, or a database holding another program's tables, is
    /// refused without a byte written.
    pub fn open(spec: &str, write: bool) -> anyhow::Result<Self> {
        let (conn, name): (Box<dyn Conn>, String) = if is_postgres(spec) {
            let (conn, name) = super::postgres::connect(spec)?;
            (Box::new(conn), name)
        } else {
            let conn = super::sqlite::open(std::path::Path::new(spec), write)?;
            (Box::new(conn), format!("'{spec}'"))
        };
        let mut db = Db {
            conn,
            fresh: false,
            name,
        };
        db.migrate(write)?;
        Ok(db)
    }

    /// Creates or upgrades the schema under the write lock, so that two labs opening a new
    /// database at once do not both create it.
    fn migrate(&mut self, write: bool) -> anyhow::Result<()> {
        let name = self.name.clone();
        // Reading first: a database already at this version takes no lock, and a corrupt
        // file, another program's database or a newer schema is found without writing to it.
        let tables = self.conn.tables().map_err(|e| {
            InputError::new(format!(
                "{name}: not a benchlab history database ({}); give another --db, or move it \
                 away to start a new history",
                first_line(&e)
            ))
        })?;
        if !tables.iter().any(|t| t == "benchlab_schema") {
            if !tables.is_empty() {
                return Err(InputError::new(format!(
                    "{name}: not a benchlab history database: it holds other tables ({}); give \
                     benchlab a database of its own with --db",
                    tables.join(", ")
                ))
                .into());
            }
            if !write {
                return Err(InputError::new(format!(
                    "{name}: no benchlab history in it yet; import results first \
                     (`benchlab history import DIR`)"
                ))
                .into());
            }
            self.fresh = true;
            return Ok(());
        }
        let version = self.schema_version()?;
        if version == Some(SCHEMA_VERSION) {
            return Ok(());
        }
        self.check_not_newer(version)?;
        self.conn.begin_write()?;
        let result = self.migrate_locked();
        self.end(result)
    }

    fn migrate_locked(&mut self) -> anyhow::Result<()> {
        let conn = &mut self.conn;
        conn.execute(
            "CREATE TABLE IF NOT EXISTS benchlab_schema (version BIGINT NOT NULL)",
            &[],
        )?;
        let version = self.schema_version()?;
        self.check_not_newer(version)?;
        let from = version.unwrap_or(0);
        for step in &MIGRATIONS[from as usize..] {
            let sql = step.replace("{ID}", self.conn.id_type());
            for statement in sql.split(';').filter(|s| !s.trim().is_empty()) {
                self.conn.execute(statement, &[])?;
            }
        }
        self.conn.execute("DELETE FROM benchlab_schema", &[])?;
        self.conn.execute(
            "INSERT INTO benchlab_schema (version) VALUES ($1)",
            &[Value::Int(SCHEMA_VERSION)],
        )?;
        Ok(())
    }

    fn check_not_newer(&self, version: Option<i64>) -> anyhow::Result<()> {
        match version {
            Some(v) if v > SCHEMA_VERSION => Err(InputError::new(format!(
                "{}: history schema version {v} is newer than this benchlab's \
                 ({SCHEMA_VERSION}); use a newer benchlab, or another --db",
                self.name
            ))
            .into()),
            _ => Ok(()),
        }
    }

    /// The recorded schema version; `None` for an empty database.
    fn schema_version(&mut self) -> anyhow::Result<Option<i64>> {
        if !self.conn.tables()?.iter().any(|t| t == "benchlab_schema") {
            return Ok(None);
        }
        let rows = self
            .conn
            .query("SELECT MAX(version) FROM benchlab_schema", &[])?;
        Ok(rows.first().and_then(|r| r[0].as_i64()))
    }

    /// Commits on success, rolls back on error.
    fn end<T>(&mut self, result: anyhow::Result<T>) -> anyhow::Result<T> {
        match result {
            Ok(v) => {
                self.conn.execute("COMMIT", &[])?;
                self.fresh = false;
                Ok(v)
            }
            Err(e) => {
                let _ = self.conn.execute("ROLLBACK", &[]);
                Err(e)
            }
        }
    }

    /// Whether a campaign of this content hash is recorded.
    pub(crate) fn knows(&mut self, hash: &str) -> anyhow::Result<bool> {
        if self.fresh {
            return Ok(false);
        }
        let rows = self.conn.query(
            "SELECT id FROM campaigns WHERE hash = $1",
            &[Value::Text(hash.to_string())],
        )?;
        Ok(!rows.is_empty())
    }

    /// Records a campaign in one transaction, in place of an older content of the same
    /// directory; one of the same content hash is left as it is.
    pub(crate) fn import(&mut self, record: &CampaignRecord) -> anyhow::Result<Imported> {
        self.conn.begin_write()?;
        let result = self.import_locked(record);
        self.end(result)
            .with_context(|| format!("{}: recording {}", self.name, record.source))
    }

    fn import_locked(&mut self, c: &CampaignRecord) -> anyhow::Result<Imported> {
        if self.fresh {
            // Under the write lock: another lab may have made the schema meanwhile, which
            // `migrate_locked` reads again.
            self.migrate_locked()?;
        }
        if self.knows(&c.hash)? {
            return Ok(Imported::Known);
        }
        let source = Value::Text(c.source.clone());
        let old = (self.conn).query("SELECT id FROM campaigns WHERE source = $1", &[source])?;
        for row in &old {
            let id = row[0].clone();
            self.conn.execute(
                "DELETE FROM iterations WHERE run_id IN (SELECT id FROM runs WHERE campaign_id = $1)",
                std::slice::from_ref(&id),
            )?;
            (self.conn).execute(
                "DELETE FROM runs WHERE campaign_id = $1",
                std::slice::from_ref(&id),
            )?;
            (self.conn).execute("DELETE FROM campaigns WHERE id = $1", &[id])?;
        }
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let rows = self.conn.query(
            "INSERT INTO campaigns (hash, source, kind, date, design, cpu, cores, nic, os, \
             campaign_toml, imported_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
             ON CONFLICT (hash) DO NOTHING RETURNING id",
            &[
                Value::Text(c.hash.clone()),
                Value::Text(c.source.clone()),
                Value::Text(c.kind.clone()),
                Value::text(c.date.as_deref()),
                Value::Text(c.design.clone()),
                Value::Text(c.lab.cpu.clone()),
                c.lab.cores.map_or(Value::Null, |n| Value::Int(n.into())),
                Value::Text(c.lab.nic.clone()),
                Value::Text(c.lab.os.clone()),
                Value::text(c.campaign_toml.as_deref()),
                Value::Text(now),
            ],
        )?;
        let Some(id) = rows.first().and_then(|r| r[0].as_i64()) else {
            return Ok(Imported::Known);
        };
        for run in &c.runs {
            self.insert_run(id, run)?;
        }
        Ok(if old.is_empty() {
            Imported::Added
        } else {
            Imported::Replaced
        })
    }

    fn insert_run(&mut self, campaign: i64, run: &RunRecord) -> anyhow::Result<()> {
        let revision = Revision::parse(&run.version);
        let rows = self.conn.query(
            "INSERT INTO runs (campaign_id, version, revision, revision_order, variant, config, \
             profile, quick, flamegraph, folded, label) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id",
            &[
                Value::Int(campaign),
                Value::Text(run.version.clone()),
                Value::text(revision.as_ref().map(|r| r.base.as_str())),
                revision
                    .as_ref()
                    .map_or(Value::Null, |r| Value::Int(r.order)),
                Value::Text(revision.map(|r| r.variant).unwrap_or_default()),
                Value::Text(run.config.clone()),
                Value::Text(run.profile.clone()),
                Value::Int(run.quick.into()),
                Value::text(run.flamegraph.as_deref()),
                Value::text(run.folded.as_deref()),
                Value::text(run.label.as_deref()),
            ],
        )?;
        let id = rows
            .first()
            .and_then(|r| r[0].as_i64())
            .context("the database returned no id for a new run")?;
        // One statement per run, not per value: a server a network away answers each.
        for chunk in run.values.chunks(300).enumerate() {
            let (first, values) = chunk;
            let mut sql = String::from("INSERT INTO iterations (run_id, idx, value) VALUES ");
            let mut params = Vec::with_capacity(values.len() * 3);
            for (i, v) in values.iter().enumerate() {
                let n = params.len();
                sql += &format!(
                    "{}(${}, ${}, ${})",
                    if i > 0 { ", " } else { "" },
                    n + 1,
                    n + 2,
                    n + 3
                );
                params.push(Value::Int(id));
                params.push(Value::Int((first * 300 + i + 1) as i64));
                params.push(Value::Real(*v));
            }
            self.conn.execute(&sql, &params)?;
        }
        Ok(())
    }

    /// Every run recorded, with its campaign's facts and its values (profiles left out: see
    /// [`Db::folded`]).
    pub fn runs(&mut self) -> anyhow::Result<Vec<StoredRun>> {
        // Everything is read at once: bounded, so that a database made to be huge is refused
        // rather than read into gigabytes (the netbenches archive is some 100,000 values).
        let count = |db: &mut Self, table: &str| -> anyhow::Result<i64> {
            let rows = db
                .conn
                .query(&format!("SELECT COUNT(*) FROM {table}"), &[])?;
            Ok(rows.first().and_then(|r| r[0].as_i64()).unwrap_or(0))
        };
        let (runs, values) = (count(self, "runs")?, count(self, "iterations")?);
        if runs > MAX_RUNS || values > MAX_VALUES {
            return Err(InputError::new(format!(
                "{}: {runs} runs and {values} values, more than `history` reads at once \
                 ({MAX_RUNS} and {MAX_VALUES}); split the history into several databases",
                self.name
            ))
            .into());
        }
        let rows = self.conn.query(
            "SELECT r.id, c.id, c.source, c.date, c.design, c.cpu, c.cores, c.nic, c.os, \
             r.version, r.config, r.profile, r.quick, r.flamegraph, r.folded IS NOT NULL, \
             r.label \
             FROM runs r JOIN campaigns c ON r.campaign_id = c.id ORDER BY r.id",
            &[],
        )?;
        let values = self.conn.query(
            "SELECT run_id, value FROM iterations ORDER BY run_id, idx",
            &[],
        )?;
        let mut by_run: std::collections::HashMap<i64, Vec<f64>> = Default::default();
        for v in values {
            if let (Some(run), Some(value)) = (v[0].as_i64(), v[1].as_f64()) {
                by_run.entry(run).or_default().push(value);
            }
        }
        Ok(rows
            .into_iter()
            .map(|r| {
                let id = r[0].as_i64().unwrap_or_default();
                let version = r[9].string();
                StoredRun {
                    id,
                    campaign: r[1].as_i64().unwrap_or_default(),
                    source: r[2].string(),
                    date: r[3].as_str().map(str::to_string),
                    design: r[4].string(),
                    lab: LabId {
                        cpu: r[5].string(),
                        cores: r[6].as_i64().and_then(|n| u32::try_from(n).ok()),
                        nic: r[7].string(),
                        os: r[8].string(),
                    },
                    revision: Revision::parse(&version),
                    run: RunRecord {
                        version,
                        label: r[15].as_str().map(str::to_string),
                        config: r[10].string(),
                        profile: r[11].string(),
                        quick: r[12].as_i64() == Some(1),
                        values: by_run.remove(&id).unwrap_or_default(),
                        // Loaded on demand: a whole archive's stacks are many megabytes.
                        folded: (r[14].as_i64().unwrap_or_default() != 0).then(String::new),
                        flamegraph: r[13].as_str().map(str::to_string),
                    },
                }
            })
            .collect())
    }

    /// A run's profile as folded stacks, when it has one.
    pub(crate) fn folded(&mut self, run: i64) -> anyhow::Result<Option<String>> {
        let rows =
            (self.conn).query("SELECT folded FROM runs WHERE id = $1", &[Value::Int(run)])?;
        Ok(rows.first().and_then(|r| r[0].as_str().map(str::to_string)))
    }

    /// A campaign's stored `campaign.toml`, when it has one.
    pub(crate) fn campaign_toml(&mut self, campaign: i64) -> anyhow::Result<Option<String>> {
        let rows = self.conn.query(
            "SELECT campaign_toml FROM campaigns WHERE id = $1",
            &[Value::Int(campaign)],
        )?;
        Ok(rows.first().and_then(|r| r[0].as_str().map(str::to_string)))
    }

    /// Campaigns recorded.
    pub fn campaigns(&mut self) -> anyhow::Result<u64> {
        let rows = self.conn.query("SELECT COUNT(*) FROM campaigns", &[])?;
        Ok(rows.first().and_then(|r| r[0].as_i64()).unwrap_or(0) as u64)
    }
}

/// An error's first line, its causes joined: what a one-line message quotes of a driver's error.
pub(crate) fn first_line(e: &anyhow::Error) -> String {
    let text = format!("{e:#}");
    text.lines().next().unwrap_or_default().to_string()
}
