//! What a back end provides ([`Conn`](crate::history::conn::Conn)) and the values its
//! statements take and give ([`Value`](crate::history::conn::Value)): below `db`, which speaks
//! through them, and the back ends, which implement them.

/// A value bound to or read from a statement.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// SQL NULL.
    Null,
    /// A 64-bit integer (`BIGINT`).
    Int(i64),
    /// A double (`DOUBLE PRECISION`).
    Real(f64),
    /// Text.
    Text(String),
}

impl Value {
    /// Text of an optional string.
    pub(super) fn text(s: Option<&str>) -> Self {
        s.map_or(Value::Null, |s| Value::Text(s.to_string()))
    }

    pub(super) fn as_str(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }

    pub(super) fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub(super) fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Real(r) => Some(*r),
            Value::Int(i) => Some(*i as f64),
            _ => None,
        }
    }

    pub(super) fn string(&self) -> String {
        self.as_str().unwrap_or_default().to_string()
    }
}

/// What a back end provides: statements with `$1`-style parameters, and transactions.
pub(crate) trait Conn {
    /// Runs a statement; returns the rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value]) -> anyhow::Result<u64>;
    /// Runs a query; returns its rows.
    fn query(&mut self, sql: &str, params: &[Value]) -> anyhow::Result<Vec<Vec<Value>>>;
    /// Starts a transaction holding the database's write lock until it ends.
    fn begin_write(&mut self) -> anyhow::Result<()>;
    /// The column type of a generated primary key.
    fn id_type(&self) -> &'static str;
    /// The tables of the database (PostgreSQL: of its current schema), in name order.
    fn tables(&mut self) -> anyhow::Result<Vec<String>>;
}
