//! Latency histograms stored as an HdrHistogram V2 interval log (format version 1.3, as Java's
//! `HistogramLogWriter` writes it): one line per histogram, tagged (a phase, a load level),
//! each a base64 zlib-compressed V2 histogram. HistogramLogProcessor, HistogramLogAnalyzer and
//! the ports of HdrHistogram read it.
//!
//! Reading is outside data: a corrupt file is refused as one line (an [`InputError`](crate::error::InputError)), never a
//! panic, and what it declares is bounded before anything is allocated (the crate's own
//! decoder allocates the payload length a header claims, up to 4 GiB).

use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, LogEntry, Tag,
};
use hdrhistogram::serialization::{Deserializer, Serializer as _, V2DeflateSerializer};

use super::Latency;
use crate::error::{shown, InputError};

/// The V2 format's cookie, uncompressed and compressed (HdrHistogram's encoding spec).
const V2_COOKIE: u32 = 0x1c84_9313;
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9314;
/// Bytes of a V2 header: cookie, payload length, normalizing offset, digits, low, high, ratio.
const V2_HEADER: usize = 40;
/// Largest decompressed histogram accepted: 50 MB, a histogram of 5 digits up to `u64::MAX`.
const MAX_DECODED: u64 = 50 << 20;
/// Most significant digits accepted (HdrHistogram's own limit).
const MAX_DIGITS: u32 = 5;

/// One histogram of a log: when it started (from the log's base time), how long it lasted, its
/// tag and its values.
#[derive(Debug, Clone, PartialEq)]
pub struct Interval {
    /// `tag=` of its line (`None`: untagged); no `,`, space or newline.
    pub tag: Option<String>,
    /// Start, from the log's base time.
    pub start: Duration,
    /// Length.
    pub length: Duration,
    /// The latencies, in ns.
    pub latency: Latency,
}

/// Writes `intervals` as a V2 log whose base time is `base` (the trial's start).
pub fn write(out: &mut impl Write, base: SystemTime, intervals: &[Interval]) -> anyhow::Result<()> {
    // Java's writer starts with these; readers skip comments and the legend.
    out.write_all(b"#[benchlab one-way latency, values in ns]\n")?;
    out.write_all(b"#[Histogram log format version 1.3]\n")?;
    out.write_all(
        b"\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n",
    )?;
    let mut serializer = V2DeflateSerializer::new();
    let mut log = IntervalLogWriterBuilder::new()
        .with_start_time(base)
        .with_base_time(base)
        .begin_log_with(out, &mut serializer)?;
    for i in intervals {
        let tag = match &i.tag {
            None => None,
            Some(t) => Some(Tag::new(t).ok_or_else(|| {
                InputError::new(format!(
                    "bad histogram tag {}: no ',', space or line break",
                    shown(t)
                ))
            })?),
        };
        log.write_histogram(i.latency.histogram(), i.start, i.length, tag)
            .map_err(|e| anyhow::anyhow!("writing a latency histogram: {e}"))?;
    }
    Ok(())
}

/// Reads a V2 log's histograms; a log that is not one, or holds a corrupt or oversized
/// histogram, or none, is refused in one line that says where.
pub(crate) fn read(text: &[u8]) -> Result<Vec<Interval>, InputError> {
    let mut intervals = Vec::new();
    for entry in IntervalLogIterator::new(text) {
        let entry = entry.map_err(|e| {
            let offset = match e {
                hdrhistogram::serialization::interval_log::LogIteratorError::ParseError {
                    offset,
                } => offset,
            };
            let line = 1 + text[..offset.min(text.len())]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            InputError::new(format!(
                "line {line} is not an HdrHistogram interval log line"
            ))
        })?;
        let LogEntry::Interval(h) = entry else {
            continue;
        };
        let n = intervals.len() + 1;
        let latency = decode(h.encoded_histogram())
            .map_err(|why| InputError::new(format!("histogram {n}: {why}")))?;
        intervals.push(Interval {
            tag: h.tag().map(|t| t.as_str().to_owned()),
            start: h.start_timestamp(),
            length: h.duration(),
            latency,
        });
    }
    if intervals.is_empty() {
        return Err(InputError::new("no histogram in it"));
    }
    Ok(intervals)
}

/// [`read`] of a file, the refusal naming it: `PATH: corrupt latency histogram log: WHY`.
pub fn read_file(path: &Path) -> Result<Vec<Interval>, InputError> {
    let bytes = crate::file::read_bytes(path)?;
    read(&bytes).map_err(|e| {
        // The whole path, as the store's other refusals give it: shortened, it would lose the
        // trial it names (its end). `error::one_line` escapes it on the way out.
        InputError::new(format!(
            "{}: corrupt latency histogram log: {} (write it again, or remove it)",
            path.display(),
            e.0
        ))
    })
}

/// One histogram as a log line holds it: base64 of its compressed V2 form (a probe stream's
/// `user_to_driver` travels so from `benchlab probe`).
pub(crate) fn encode(latency: &Latency) -> anyhow::Result<String> {
    let mut v2 = Vec::new();
    V2DeflateSerializer::new()
        .serialize(latency.histogram(), &mut v2)
        .map_err(|e| anyhow::anyhow!("encoding a latency histogram: {e}"))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(v2))
}

/// Decodes one base64 V2 histogram, compressed or not, its sizes checked before the crate's
/// decoder allocates them.
pub(crate) fn decode(encoded: &str) -> Result<Latency, String> {
    let raw = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|_| "not base64".to_owned())?;
    let v2 = match cookie(&raw, 0)? {
        V2_COOKIE => raw,
        V2_COMPRESSED_COOKIE => inflate(&raw)?,
        _ => return Err("not a V2 histogram (unknown cookie)".into()),
    };
    check_header(&v2)?;
    let hist = Deserializer::new()
        .deserialize(&mut v2.as_slice())
        .map_err(|e| format!("corrupt V2 histogram ({e:?})"))?;
    Ok(Latency::from_histogram(hist))
}

/// The big-endian u32 at `at`.
fn cookie(bytes: &[u8], at: usize) -> Result<u32, String> {
    bytes
        .get(at..at + 4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| "truncated".to_owned())
}

/// The V2 histogram inside a compressed one (cookie, length, zlib data), at most
/// [`MAX_DECODED`] bytes.
fn inflate(raw: &[u8]) -> Result<Vec<u8>, String> {
    let len = cookie(raw, 4)? as usize;
    let data = raw
        .get(8..8 + len)
        .ok_or("truncated compressed histogram")?;
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(data)
        .take(MAX_DECODED + 1)
        .read_to_end(&mut out)
        .map_err(|_| "corrupt compressed histogram".to_owned())?;
    if out.len() as u64 > MAX_DECODED {
        return Err(format!("histogram larger than {MAX_DECODED} bytes"));
    }
    Ok(out)
}

/// Checks what an uncompressed V2 header declares: the payload is all there, and the digits are
/// ones HdrHistogram makes (the bounds then cap the counts array at [`MAX_DECODED`]).
fn check_header(v2: &[u8]) -> Result<(), String> {
    if v2.len() < V2_HEADER || cookie(v2, 0)? != V2_COOKIE {
        return Err("not a V2 histogram (truncated header)".into());
    }
    let payload = cookie(v2, 4)? as usize;
    if payload > v2.len() - V2_HEADER {
        return Err(format!(
            "declares {payload} bytes of counts, holds {}",
            v2.len() - V2_HEADER
        ));
    }
    let digits = cookie(v2, 12)?;
    if !(1..=MAX_DIGITS).contains(&digits) {
        return Err(format!(
            "{digits} significant digits (HdrHistogram keeps 1 to {MAX_DIGITS})"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(tag: Option<&str>, base: u64) -> Interval {
        let mut latency = Latency::new();
        for i in 0..1000 {
            latency.record(base + i * 37);
        }
        Interval {
            tag: tag.map(str::to_owned),
            start: Duration::from_millis(1500),
            length: Duration::from_secs(2),
            latency,
        }
    }

    fn log_of(intervals: &[Interval]) -> Vec<u8> {
        let mut buf = Vec::new();
        write(&mut buf, SystemTime::UNIX_EPOCH, intervals).unwrap();
        buf
    }

    #[test]
    fn v2_log_round_trip() {
        let intervals = vec![sample(Some("phase-A"), 10_000), sample(None, 2_000_000)];
        let buf = log_of(&intervals);
        let text = String::from_utf8(buf.clone()).unwrap();
        assert!(text.contains("Tag=phase-A,1.500,2.000,"), "{text}");
        // The standard compressed encoding, as Java's writer makes it.
        assert!(text.contains(",HISTF"), "{text}");
        let back = read(&buf).unwrap();
        assert_eq!(back, intervals);
        assert_eq!(
            back[1].latency.percentiles(),
            intervals[1].latency.percentiles()
        );
    }

    #[test]
    fn bad_tags_are_refused() {
        let mut buf = Vec::new();
        let err = write(&mut buf, SystemTime::UNIX_EPOCH, &[sample(Some("a,b"), 1)]).unwrap_err();
        assert!(err.to_string().contains("bad histogram tag"), "{err}");
    }

    #[test]
    fn corrupt_logs_are_refused_in_one_line() {
        let good = log_of(&[sample(Some("t"), 5_000)]);
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (b"".to_vec(), "no histogram"),
            (b"hello world\n".to_vec(), "line 1 is not"),
            (b"0.0,1.0,2.0,!!!!\n".to_vec(), "not base64"),
            (b"0.0,1.0,2.0,AAAAAAAA\n".to_vec(), "unknown cookie"),
            // Cut short at the end of a line, and in the middle of its base64 histogram.
            (good[..good.len() - 40].to_vec(), "line 6 is not"),
            ([&good[..good.len() - 41], b"\n"].concat(), "histogram 1"),
        ];
        for (bytes, want) in cases {
            let err = read(&bytes).unwrap_err().0;
            assert!(err.contains(want), "{want}: {err}");
            assert!(!err.contains('\n'), "{err}");
        }
    }

    #[test]
    fn a_lying_header_is_refused_before_any_allocation() {
        // An uncompressed V2 header claiming 4 GiB of counts.
        let mut v2 = Vec::new();
        v2.extend_from_slice(&V2_COOKIE.to_be_bytes());
        v2.extend_from_slice(&u32::MAX.to_be_bytes());
        v2.extend_from_slice(&0u32.to_be_bytes());
        v2.extend_from_slice(&3u32.to_be_bytes());
        v2.extend_from_slice(&1u64.to_be_bytes());
        v2.extend_from_slice(&1000u64.to_be_bytes());
        v2.extend_from_slice(&1f64.to_be_bytes());
        let line = format!(
            "0.0,1.0,2.0,{}\n",
            base64::engine::general_purpose::STANDARD.encode(&v2)
        );
        let err = read(line.as_bytes()).unwrap_err().0;
        assert!(err.contains("declares 4294967295 bytes"), "{err}");
    }

    #[test]
    fn every_damaged_byte_is_an_error_or_a_histogram_never_a_panic() {
        let good = log_of(&[sample(None, 5_000)]);
        for at in 0..good.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut bad = good.clone();
                bad[at] ^= flip;
                let _ = read(&bad);
            }
        }
    }
}
