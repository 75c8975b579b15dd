//! The PostgreSQL back end: a server a team or a fleet of labs shares. Writers serialise on
//! one advisory lock per transaction, so two labs importing at once never interleave a
//! campaign or race on a new schema.

use std::error::Error as _;
use std::time::Duration;

use anyhow::Context;
use postgres::types::{to_sql_checked, IsNull, ToSql, Type};
use postgres::{Client, Config, NoTls};

use super::conn::{Conn, Value};
use crate::error::InputError;

/// The advisory lock key of benchlab's writers (any constant: "bl" in ASCII).
const WRITE_LOCK: i64 = 0x626c;

/// A connection to a PostgreSQL history.
pub(crate) struct Postgres {
    client: Client,
}

/// Connects to `url`; returns the connection and the URL without its password, for messages.
pub(crate) fn connect(url: &str) -> anyhow::Result<(Postgres, String)> {
    let shown = without_password(url);
    let mut config: Config = url.parse().map_err(|e: postgres::Error| {
        InputError::new(format!(
            "{shown}: not a PostgreSQL URL ({e}); see `benchlab history --help`"
        ))
    })?;
    if config.get_connect_timeout().is_none() {
        // An unreachable server is said in seconds, not after the system's TCP timeout.
        config.connect_timeout(Duration::from_secs(10));
    }
    let client = config.connect(NoTls).map_err(|e| {
        let why = e.source().map_or_else(|| e.to_string(), |s| s.to_string());
        InputError::new(format!(
            "{shown}: cannot reach the PostgreSQL history ({why}); check the URL and that the \
             server runs"
        ))
    })?;
    Ok((Postgres { client }, shown))
}

/// `url` with its password replaced by `***`.
fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (auth, host) = match rest.rsplit_once('@') {
        Some(parts) => parts,
        None => return url.to_string(),
    };
    match auth.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_string(),
    }
}

impl ToSql for Value {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut postgres::types::private::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            // The schema's integers are BIGINT, but `COUNT(*)`-style comparisons may be INT4.
            Value::Int(i) if *ty == Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
            Value::Int(i) => i.to_sql(ty, out),
            Value::Real(r) => r.to_sql(ty, out),
            Value::Text(s) => s.to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        // Checked value by value in `to_sql`: NULL goes anywhere.
        true
    }

    to_sql_checked!();
}

impl Conn for Postgres {
    fn execute(&mut self, sql: &str, params: &[Value]) -> anyhow::Result<u64> {
        if params.is_empty() {
            // Statements without parameters (DDL, BEGIN, COMMIT) go as simple queries: no
            // round trip to prepare them.
            self.client.batch_execute(sql)?;
            return Ok(0);
        }
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p as _).collect();
        Ok(self.client.execute(sql, &refs)?)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> anyhow::Result<Vec<Vec<Value>>> {
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p as _).collect();
        let rows = self.client.query(sql, &refs)?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let mut values = Vec::with_capacity(row.len());
            for (i, column) in row.columns().iter().enumerate() {
                let ty = column.type_();
                let value = if *ty == Type::INT8 {
                    row.try_get::<_, Option<i64>>(i)?.map(Value::Int)
                } else if *ty == Type::INT4 {
                    row.try_get::<_, Option<i32>>(i)?
                        .map(|n| Value::Int(n.into()))
                } else if *ty == Type::FLOAT8 {
                    row.try_get::<_, Option<f64>>(i)?.map(Value::Real)
                } else if *ty == Type::BOOL {
                    row.try_get::<_, Option<bool>>(i)?
                        .map(|b| Value::Int(b.into()))
                } else {
                    (row.try_get::<_, Option<String>>(i))
                        .with_context(|| format!("column {} of type {ty}", column.name()))?
                        .map(Value::Text)
                };
                values.push(value.unwrap_or(Value::Null));
            }
            out.push(values);
        }
        Ok(out)
    }

    fn begin_write(&mut self) -> anyhow::Result<()> {
        self.client.batch_execute(&format!(
            "BEGIN; SELECT pg_advisory_xact_lock({WRITE_LOCK})"
        ))?;
        Ok(())
    }

    fn id_type(&self) -> &'static str {
        "BIGSERIAL PRIMARY KEY"
    }

    fn tables(&mut self) -> anyhow::Result<Vec<String>> {
        let rows = self.client.query(
            "SELECT table_name::text FROM information_schema.tables \
             WHERE table_schema = current_schema() ORDER BY table_name",
            &[],
        )?;
        Ok(rows.iter().map(|r| r.get::<_, String>(0)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_not_shown() {
        assert_eq!(
            without_password("postgres://lab:secret@db.example:5432/history"),
            "postgres://lab:***@db.example:5432/history"
        );
        assert_eq!(
            without_password("postgres://lab@db/history"),
            "postgres://lab@db/history"
        );
    }
}
