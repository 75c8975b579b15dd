//! A stream's results as they travel from `benchlab probe` on a lab's host to the campaign
//! (serde of [`Probes`]), read back exactly: per kind the probes' counts, the unstamped ones
//! and every record, from which the kind's histogram and summary are made again (the matcher
//! records each latency in both alike); `user_to_driver`, which has no records, as base64 of its
//! compressed V2 histogram, as a log line holds one.
//!
//! ```json
//! {"established":{"probes":{"sent":…,"received":…,"lost":…,"duplicates":…,"reordered":…,
//!  "clock_steps":…},"tx_unstamped":0,"rx_unstamped":0,"records":"<base64>"},
//!  "first-packet":{…},"user_to_driver":"HISTF…"}
//! ```
//!
//! Records: for each, its send time's step from the previous record's (zigzag: records are in
//! the order they were matched, which is not always that of their send times) and its latency,
//! each a LEB128 varint, all of them in base64. At 10 kpps a step is ≈ 100 µs (3 bytes) and a
//! latency under 16 µs takes 2 bytes: 10 s at 10 kpps through the virtual lab's DUT printed
//! 684,618 bytes, 6.8 a probe (16 in memory; 4.1 MB a minute). Deflate would take a fifth off
//! (the steps' and latencies' low bytes are noise), not worth a bounded decompressor here.

use base64::Engine as _;
use serde::{de, ser, Deserialize, Deserializer, Serialize, Serializer};

use super::{KindProbes, Probes};
use crate::stats::latency::{log, Latency, LatencySummary, ProbeCounts, HIGHEST_NS};
use crate::traffic::latency::matcher::Record;

/// The records' base64 alphabet: the standard one, as the histograms'.
const BASE64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// [`Probes`] as it travels.
#[derive(Serialize, Deserialize)]
struct Wire {
    established: WireKind,
    #[serde(rename = "first-packet")]
    first_packet: WireKind,
    /// Base64 of the compressed V2 histogram.
    user_to_driver: String,
}

/// [`KindProbes`] as it travels: its histogram and summary are its records'.
#[derive(Serialize, Deserialize)]
struct WireKind {
    probes: ProbeCounts,
    tx_unstamped: u64,
    rx_unstamped: u64,
    /// Base64 of the varints, two a record.
    records: String,
    /// The time in the DUT's records the same way, where the DUT recorded it (a DUT of the
    /// prober's own host).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    in_dut: String,
}

impl From<&KindProbes> for WireKind {
    fn from(k: &KindProbes) -> WireKind {
        WireKind {
            probes: k.summary.probes,
            tx_unstamped: k.tx_unstamped,
            rx_unstamped: k.rx_unstamped,
            records: encode_records(&k.records),
            in_dut: encode_records(&k.in_dut_records),
        }
    }
}

impl WireKind {
    /// The kind's results, or what is wrong with its records.
    fn into_probes(self) -> Result<KindProbes, String> {
        let histogram = |records: &[Record]| {
            let mut latency = Latency::new();
            for r in records {
                latency.record(r.latency_ns);
            }
            latency
        };
        let records = decode_records(&self.records)?;
        let in_dut_records = decode_records(&self.in_dut)?;
        let latency = histogram(&records);
        Ok(KindProbes {
            summary: LatencySummary::new(&latency, self.probes),
            latency,
            tx_unstamped: self.tx_unstamped,
            rx_unstamped: self.rx_unstamped,
            in_dut: histogram(&in_dut_records),
            records,
            in_dut_records,
        })
    }
}

impl Serialize for Probes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let [established, first_packet] = self.kinds.each_ref().map(WireKind::from);
        Wire {
            established,
            first_packet,
            user_to_driver: log::encode(&self.user_to_driver).map_err(ser::Error::custom)?,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Probes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Probes, D::Error> {
        let wire = Wire::deserialize(d)?;
        let kind = |k: WireKind, name: &str| {
            k.into_probes()
                .map_err(|why| de::Error::custom(format!("{name} probes: {why}")))
        };
        Ok(Probes {
            kinds: [
                kind(wire.established, "established")?,
                kind(wire.first_packet, "first-packet")?,
            ],
            user_to_driver: log::decode(&wire.user_to_driver)
                .map_err(|why| de::Error::custom(format!("user_to_driver: {why}")))?,
            // `benchlab probe` sends from a socket of its own.
            carried: false,
        })
    }
}

/// The records as base64 varints: each send time's zigzag step from the last, then the latency.
fn encode_records(records: &[Record]) -> String {
    let mut bytes = Vec::with_capacity(records.len() * 6);
    let mut last = 0u64;
    for r in records {
        let step = r.send_ns.wrapping_sub(last) as i64;
        put_varint(&mut bytes, ((step << 1) ^ (step >> 63)) as u64);
        put_varint(&mut bytes, r.latency_ns);
        last = r.send_ns;
    }
    BASE64.encode(bytes)
}

/// The records of [`encode_records`]' text.
fn decode_records(text: &str) -> Result<Vec<Record>, String> {
    let bytes = BASE64
        .decode(text)
        .map_err(|_| "records: not base64".to_owned())?;
    let mut at = bytes.as_slice();
    let mut records = Vec::new();
    let mut last = 0u64;
    while !at.is_empty() {
        let zigzag = varint(&mut at)?;
        let step = ((zigzag >> 1) as i64) ^ -((zigzag & 1) as i64);
        let latency_ns = varint(&mut at)?;
        if latency_ns > HIGHEST_NS {
            return Err(format!(
                "records: a latency of {latency_ns} ns, above the {HIGHEST_NS} ns tracked"
            ));
        }
        last = last.wrapping_add(step as u64);
        records.push(Record {
            send_ns: last,
            latency_ns,
        });
    }
    Ok(records)
}

/// Appends `value` as a LEB128 varint: 7 bits a byte, low first, the high bit set on all but
/// the last.
fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// The varint at the start of `at`, which moves past it.
fn varint(at: &mut &[u8]) -> Result<u64, String> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = at.split_first().ok_or("records: cut short")?;
        *at = rest;
        if shift == 63 && byte > 1 {
            break;
        }
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("records: a number beyond 64 bits".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::latency::matcher::Account;
    use crate::traffic::latency::sender::SenderReport;
    use crate::traffic::latency::ProbeKind;

    fn account(records: &[(u64, u64)], tx_unstamped: u64, rx_unstamped: u64) -> Account {
        let mut a = Account {
            tx_unstamped,
            rx_unstamped,
            clock_steps: 1,
            ..Account::default()
        };
        for (i, &(send_ns, latency_ns)) in records.iter().enumerate() {
            a.sequence.observe(i as u32 * 2);
            a.latency.record(latency_ns);
            a.records.push(Record {
                send_ns,
                latency_ns,
            });
        }
        a
    }

    /// Records out of send order, at the ends of their ranges, with every count set.
    fn probes() -> Probes {
        let s = 1_790_000_000_000_000_000u64;
        let established = account(
            &[
                (s + 200_000, 310),
                (s + 100_000, 290),
                (s + 300_000, HIGHEST_NS),
                (0, 1),
                (u64::MAX, 45_678),
            ],
            2,
            1,
        );
        let first = account(&[(s + 900_000, 1_234_567)], 0, 0);
        let mut user_to_driver = Latency::new();
        for ns in [900, 1_720, 3_840, 168_000] {
            user_to_driver.record(ns);
        }
        let sent = SenderReport {
            sent: [12, 3],
            user_to_driver,
            carried: false,
        };
        Probes::new(sent, [established, first])
    }

    #[test]
    fn probes_come_back_exactly() {
        let p = probes();
        let text = serde_json::to_string(&p).unwrap();
        assert!(text.contains("\"first-packet\":{"), "{text}");
        let back: Probes = serde_json::from_str(&text).unwrap();
        assert_eq!(back, p);
        let e = back.of(ProbeKind::Established);
        assert_eq!((e.tx_unstamped, e.rx_unstamped), (2, 1));
        assert_eq!(e.summary.probes.sent, 12);
        assert_eq!(e.summary.probes.clock_steps, 1);
        assert_eq!(back.user_to_driver.len(), 4);
        // Windows cut from the records are the original's: the records kept their order.
        let s = 1_790_000_000_000_000_000u64;
        assert_eq!(
            back.window(ProbeKind::Established, s, s + 250_000),
            p.window(ProbeKind::Established, s, s + 250_000)
        );
    }

    #[test]
    fn a_10_kpps_stream_takes_under_7_characters_a_probe() {
        // 10 s at 10 kpps: steps of 100 µs ± 5 µs, latencies 0.3 to 12 µs.
        let records: Vec<Record> = (0..100_000u64)
            .map(|i| Record {
                send_ns: 1_790_000_000_000_000_000 + i * 100_000 + (i * 7919) % 5_000,
                latency_ns: 300 + (i * 104_729) % 12_000,
            })
            .collect();
        let text = encode_records(&records);
        assert!(text.len() < 7 * records.len(), "{}", text.len());
        assert_eq!(decode_records(&text).unwrap(), records);
    }

    #[test]
    fn damaged_records_are_refused() {
        let good = encode_records(&[Record {
            send_ns: 5,
            latency_ns: 7,
        }]);
        let cut = BASE64.encode([0x80]);
        let long = BASE64.encode([0xff; 11]);
        let late = {
            let mut bytes = vec![0];
            put_varint(&mut bytes, HIGHEST_NS + 1);
            BASE64.encode(bytes)
        };
        for (text, want) in [
            ("!!", "not base64"),
            (cut.as_str(), "cut short"),
            (long.as_str(), "beyond 64 bits"),
            (late.as_str(), "above the"),
        ] {
            let err = decode_records(text).unwrap_err();
            assert!(err.contains(want), "{want}: {err}");
        }
        assert_eq!(decode_records(&good).unwrap().len(), 1);
        let mut json: serde_json::Value = serde_json::to_value(probes()).unwrap();
        json["first-packet"]["records"] = "!!".into();
        let err = serde_json::from_value::<Probes>(json).unwrap_err();
        assert!(err
            .to_string()
            .starts_with("first-packet probes: records: not base64"));
    }
}
