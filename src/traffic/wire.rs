//! The JSON lines of `benchlab gen --json` and `benchlab rx --json` (and `rx --tx --json`, a
//! sender's interface counted as a generator), and of `benchlab probe --json`: written by the
//! CLI, read back by the remote senders, receivers and probers, defined once here.
//!
//! One object a line, `"type": "sample"` once a second with cumulative counts, then one
//! `"type": "summary"` (the probes: `"type": "started"`, then `"type": "probes"` with every
//! result). Readers take only the fields they need and ignore the others, so an older or newer
//! `benchlab` on a remote host still pairs with this one.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::latency::Probes;
use super::receiver::Sample;
use super::{TxSample, TxSummary};
use crate::error::shown;
use crate::transport::display_argv;

/// A line of `benchlab gen --json`.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(crate) enum GenLine<'a> {
    /// One second.
    Sample(&'a TxSample),
    /// The totals, last.
    Summary(&'a TxSummary),
}

/// A line of `benchlab rx --json`.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(crate) enum RxLine<'a> {
    /// One interval.
    Sample(&'a Sample),
    /// The totals, last.
    Summary {
        /// The receiving interface.
        iface: &'a str,
        /// The watched interfaces, in the order of `drops`.
        watch: &'a [String],
        /// Seconds counted.
        t_s: f64,
        /// Packets received.
        rx_pkts: u64,
        /// Average rate.
        rx_pps: f64,
        /// Packets the receiving interface dropped.
        rx_drops: u64,
        /// Packets each watched interface dropped.
        drops: &'a [u64],
    },
}

/// A line of `benchlab rx --tx --json`: an interface's sent packets, as a generator prints them.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(crate) enum TxCounterLine<'a> {
    /// One interval.
    Sample(TxSample),
    /// The totals, last.
    Summary {
        /// The counted interface.
        iface: &'a str,
        /// Seconds counted.
        t_s: f64,
        /// Packets sent.
        tx_pkts: u64,
        /// Average rate.
        tx_pps: f64,
    },
}

/// A line of `benchlab probe --json`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(crate) enum ProbeLine {
    /// Both ends are ready: every probe sent from now on is looked for.
    Started {
        /// The host's clock then, seconds since the Unix epoch: the probes' send times are on
        /// it.
        unix_s: f64,
    },
    /// What the probes measured, last (boxed: a line is read rarely, its results are large).
    Probes(Box<Probes>),
}

/// Any of those lines as a reader sees it: the fields benchlab reads, absent ones zero.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct ReadLine {
    /// `sample` or `summary`.
    #[serde(rename = "type")]
    pub(crate) kind: String,
    /// Packets sent so far (gen, rx --tx).
    #[serde(default)]
    pub(crate) tx_pkts: u64,
    /// Send rate of the interval.
    #[serde(default)]
    pub(crate) tx_pps: f64,
    /// Seconds since the tool started counting (samples).
    #[serde(default)]
    pub(crate) t_s: f64,
    /// Packets received so far (rx).
    #[serde(default)]
    pub(crate) rx_pkts: u64,
    /// Receive rate of the interval.
    #[serde(default)]
    pub(crate) rx_pps: f64,
    /// The generator's engine (gen's summary).
    #[serde(default)]
    pub(crate) engine: Option<String>,
}

impl ReadLine {
    /// Whether this is a once-a-second sample.
    pub(crate) fn is_sample(&self) -> bool {
        self.kind == "sample"
    }
}

/// The complete lines in `out` (a partial last line waits for the next read); `host` and
/// `argv` name the tool in the error when a line is not its JSON.
pub fn read_lines(out: &[u8], host: &str, argv: &[String]) -> anyhow::Result<Vec<ReadLine>> {
    parse_lines(out, host, argv)
}

/// [`read_lines`] as lines of `T`.
pub(crate) fn parse_lines<T: DeserializeOwned>(
    out: &[u8],
    host: &str,
    argv: &[String],
) -> anyhow::Result<Vec<T>> {
    let text = String::from_utf8_lossy(out);
    let complete = text.rfind('\n').map_or("", |end| &text[..end]);
    complete
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l).map_err(|e| {
                // A probes line is megabytes: the message quotes its start.
                anyhow::anyhow!(
                    "{host}: `{}` printed a line that is not its JSON ({e}): {}",
                    display_argv(argv),
                    shown(l)
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_lines_read_back_and_partial_lines_wait() {
        let sample = TxSample {
            t_s: 1.0,
            tx_pkts: 1000,
            tx_pps: 1000.0,
        };
        let mut out = serde_json::to_string(&GenLine::Sample(&sample)).unwrap() + "\n";
        out.push_str(r#"{"type":"sample","tx_pk"#);
        let lines = read_lines(out.as_bytes(), "h", &["benchlab".into(), "gen".into()]).unwrap();
        assert_eq!(lines.len(), 1);
        assert!(lines[0].is_sample());
        assert_eq!((lines[0].tx_pkts, lines[0].tx_pps), (1000, 1000.0));
        let bad = read_lines(b"oops\n", "h", &["benchlab".into(), "gen".into()]).unwrap_err();
        assert_eq!(
            bad.to_string(),
            "h: `benchlab gen` printed a line that is not its JSON (expected value at line 1 \
             column 1): oops"
        );
    }
}
