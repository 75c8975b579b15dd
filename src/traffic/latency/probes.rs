//! A probe stream's results: per kind, the latency, its summary, and every probe's send time
//! and latency, from which time windows are cut (a trial's phases, its seconds).

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;

use super::matcher::{Account, Record};
use super::sender::SenderReport;
use super::ProbeKind;
use crate::stats::latency::log::Interval;
use crate::stats::latency::{Latency, LatencySummary, SIGNIFICANT_DIGITS};

/// The results as they travel from `benchlab probe` to the campaign: serde, exact.
mod wire;

/// One kind's results.
///
/// Memory: the whole latency's histogram (≈ 216 KiB) and 16 bytes per probe received (at 10
/// kpps: 160 kB a second, 576 MB an hour).
#[derive(Debug, Clone, PartialEq)]
pub struct KindProbes {
    /// One-way latency of the probes that arrived, ns.
    pub latency: Latency,
    /// P50…max and the probes' counts.
    pub summary: LatencySummary,
    /// Probes timed from their in-frame stamp, no kernel transmit stamp having come: their
    /// error is [`Probes::user_to_driver`]'s, not the transmit stamp's.
    pub tx_unstamped: u64,
    /// Probes that arrived without an arrival time: counted as received, not timed.
    pub rx_unstamped: u64,
    /// Their time from the DUT's ingress to its egress, ns, where the DUT recorded their
    /// coming in ([`super::ingress`]; empty elsewhere).
    pub in_dut: Latency,
    /// Every probe timed: when it was sent and how long it took.
    records: Vec<Record>,
    /// Every probe timed in the DUT: when it was sent and how long it was in the DUT.
    in_dut_records: Vec<Record>,
}

impl KindProbes {
    /// The results of `account`, of which `sent` were sent.
    fn new(account: Account, sent: u64) -> KindProbes {
        let counts = account.sequence.counts(sent, account.clock_steps);
        KindProbes {
            summary: LatencySummary::new(&account.latency, counts),
            latency: account.latency,
            tx_unstamped: account.tx_unstamped,
            rx_unstamped: account.rx_unstamped,
            in_dut: account.in_dut,
            records: account.records,
            in_dut_records: account.in_dut_records,
        }
    }
}

/// A probe stream's results: per kind of probe, the latency (the kernel's arrival stamp minus
/// its transmit stamp), its summary with the probes' counts, and the time windows cut from
/// them. Serialized (serde) as `benchlab probe --json` prints it, and read back
/// exactly.
#[derive(Debug, Clone, PartialEq)]
pub struct Probes {
    /// Per kind, in [`ProbeKind::ALL`]'s order.
    kinds: [KindProbes; 2],
    /// User space to driver: the kernel's transmit stamp minus the in-frame stamp, ns, of every
    /// probe sent with a transmit stamp. Informative: the error the transmit stamp removes, and
    /// that of the probes timed without one.
    pub user_to_driver: Latency,
    /// Whether the XDP generator carried them among its frames (the virtual lab's trials at a
    /// load), rather than a packet socket of their own.
    pub carried: bool,
}

impl Probes {
    /// The results of a stream's sender and its matched arrivals.
    pub(crate) fn new(sent: SenderReport, accounts: [Account; 2]) -> Probes {
        let [established, first_packet] = accounts;
        let [sent_established, sent_first_packet] = sent.sent;
        Probes {
            kinds: [
                KindProbes::new(established, sent_established),
                KindProbes::new(first_packet, sent_first_packet),
            ],
            user_to_driver: sent.user_to_driver,
            carried: sent.carried,
        }
    }

    /// `kind`'s results (nothing sent for first-packet probes unless asked).
    pub fn of(&self, kind: ProbeKind) -> &KindProbes {
        &self.kinds[kind.index()]
    }

    /// The latency of `kind`'s probes sent in `[from_ns, to_ns)` (ns since the epoch,
    /// `CLOCK_REALTIME`): a phase of a trial.
    pub fn window(&self, kind: ProbeKind, from_ns: u64, to_ns: u64) -> Latency {
        windowed(&self.of(kind).records, from_ns, to_ns)
    }

    /// The time in the DUT of `kind`'s probes sent in `[from_ns, to_ns)`, as
    /// [`window`](Self::window) cuts their latency; empty where the DUT did not record it.
    pub fn in_dut_window(&self, kind: ProbeKind, from_ns: u64, to_ns: u64) -> Latency {
        windowed(&self.of(kind).in_dut_records, from_ns, to_ns)
    }

    /// `kind`'s probes in slots `width` wide from `base_ns` (ns since the epoch, the base time
    /// of the log they go to): one interval per slot that holds a probe, in time order, tagged
    /// with the kind's [`name`](ProbeKind::name); probes sent before `base_ns` are left out.
    /// Each slot's histogram is as large as its largest latency needs (≈ 64 KiB up to 100 µs),
    /// not the whole range's 216 KiB.
    pub fn intervals(&self, kind: ProbeKind, base_ns: u64, width: Duration) -> Vec<Interval> {
        slotted(&self.of(kind).records, kind.name(), base_ns, width)
    }

    /// `kind`'s time in the DUT as [`intervals`](Self::intervals) cuts its latency, tagged
    /// with the kind's [`in_dut_name`](ProbeKind::in_dut_name); none where the DUT did not
    /// record it.
    pub fn in_dut_intervals(
        &self,
        kind: ProbeKind,
        base_ns: u64,
        width: Duration,
    ) -> Vec<Interval> {
        let records = &self.of(kind).in_dut_records;
        slotted(records, kind.in_dut_name(), base_ns, width)
    }
}

/// The values of the `records` sent in `[from_ns, to_ns)` ([`Probes::window`]).
fn windowed(records: &[Record], from_ns: u64, to_ns: u64) -> Latency {
    let mut latency = Latency::new();
    for r in records {
        if (from_ns..to_ns).contains(&r.send_ns) {
            latency.record(r.latency_ns);
        }
    }
    latency
}

/// `records` in slots `width` wide from `base_ns`, tagged `tag` ([`Probes::intervals`]).
fn slotted(records: &[Record], tag: &str, base_ns: u64, width: Duration) -> Vec<Interval> {
    let width_ns = (width.as_nanos() as u64).max(1);
    let mut slots: BTreeMap<u64, Histogram<u64>> = BTreeMap::new();
    for r in records {
        let Some(since) = r.send_ns.checked_sub(base_ns) else {
            continue;
        };
        slots
            .entry(since / width_ns)
            // Auto-resizing from the smallest: it grows to the slot's largest value.
            .or_insert_with(|| Histogram::new(SIGNIFICANT_DIGITS).expect("valid digits"))
            .record(r.latency_ns)
            .expect("records are within the histograms' range: a resize always fits");
    }
    slots
        .into_iter()
        .map(|(slot, hist)| Interval {
            tag: Some(tag.to_owned()),
            start: Duration::from_nanos(slot * width_ns),
            length: width,
            latency: Latency::from_histogram(hist),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::latency::log;

    /// Established probes sent at 1.0, 1.5, 2.2 and 4.9 s with latencies 10, 20, 30, 40 µs,
    /// one first-packet probe at 1.2 s (50 µs), one established before the base (0.5 s).
    fn probes() -> Probes {
        let s = 1_000_000_000u64;
        let account = |recs: &[(u64, u64)]| {
            let mut a = Account::default();
            for (i, &(send_ns, latency_ns)) in recs.iter().enumerate() {
                a.sequence.observe(i as u32);
                a.latency.record(latency_ns);
                a.records.push(Record {
                    send_ns,
                    latency_ns,
                });
            }
            a
        };
        let established = account(&[
            (s / 2, 5_000),
            (s, 10_000),
            (3 * s / 2, 20_000),
            (11 * s / 5, 30_000),
            (49 * s / 10, 40_000),
        ]);
        let first = account(&[(6 * s / 5, 50_000)]);
        let sent = SenderReport {
            sent: [5, 2],
            user_to_driver: Latency::new(),
            carried: false,
        };
        Probes::new(sent, [established, first])
    }

    #[test]
    fn counts_are_per_kind() {
        let p = probes();
        let e = p.of(ProbeKind::Established);
        let f = p.of(ProbeKind::FirstPacket);
        assert_eq!((e.summary.probes.sent, e.summary.probes.received), (5, 5));
        assert_eq!((f.summary.probes.sent, f.summary.probes.lost), (2, 1));
        assert_eq!(e.latency.len(), 5);
        assert_eq!(f.summary.latency.unwrap().max_ns, 50_015);
    }

    #[test]
    fn windows_take_the_probes_sent_in_them() {
        let p = probes();
        let s = 1_000_000_000u64;
        let w = p.window(ProbeKind::Established, s, 2 * s);
        assert_eq!(w.len(), 2);
        assert_eq!(w.quantile(1.0), 20_015);
        assert_eq!(
            p.window(ProbeKind::Established, 0, u64::MAX),
            p.of(ProbeKind::Established).latency
        );
        assert!(p.window(ProbeKind::FirstPacket, 2 * s, 3 * s).is_empty());
        // `to` is left out.
        assert_eq!(p.window(ProbeKind::Established, s, 3 * s / 2).len(), 1);
    }

    #[test]
    fn intervals_are_one_per_slot_with_probes_tagged_by_kind() {
        let p = probes();
        let s = 1_000_000_000u64;
        let got = p.intervals(ProbeKind::Established, s, Duration::from_secs(1));
        let slots: Vec<(Duration, u64)> = got.iter().map(|i| (i.start, i.latency.len())).collect();
        // 1.0 and 1.5 s in the first slot, 2.2 s in the second, none in the next two (skipped),
        // 4.9 s in the fourth; 0.5 s is before the base.
        assert_eq!(
            slots,
            [
                (Duration::ZERO, 2),
                (Duration::from_secs(1), 1),
                (Duration::from_secs(3), 1)
            ]
        );
        assert!(
            got.iter()
                .all(|i| i.tag.as_deref() == Some("established")
                    && i.length == Duration::from_secs(1))
        );
        assert_eq!(got[0].latency.quantile(1.0), 20_015);
        let first = p.intervals(ProbeKind::FirstPacket, 0, Duration::from_millis(500));
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].tag.as_deref(), Some("first-packet"));
        assert_eq!(first[0].start, Duration::from_secs(1));
        // They go to a V2 log and come back as they were.
        let mut buf = Vec::new();
        log::write(&mut buf, std::time::SystemTime::UNIX_EPOCH, &got).unwrap();
        assert_eq!(log::read(&buf).unwrap(), got);
    }
}
