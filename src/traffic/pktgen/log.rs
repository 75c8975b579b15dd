//! Pure readers of netmap pkt-gen's own output: its per-second lines, the closing `Sent N
//! packets` and `Speed:` lines. A live run and an archived netbenches log
//! (`ingest::netbenches::pktgen`) are read by the same functions, which live here, below
//! `ingest`, because a trial's pkt-gen endpoints read them too.

/// One per-second line of pkt-gen (sender or receiver): `main_thread [N] R pps (P pkts [B bps]
/// in U usec) …`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Second {
    /// The rate pkt-gen printed.
    pub pps: f64,
    /// Packets sent or received during the interval.
    pub(crate) pkts: u64,
    /// The interval's length in microseconds.
    pub usec: u64,
}

/// Every per-second line of a pkt-gen log, zero rates included, in file order (both the older
/// `(P pkts in U usec)` and the newer `(P pkts B bps in U usec)` forms).
pub fn seconds(log: &str) -> Vec<Second> {
    log.lines().filter_map(parse_second).collect()
}

fn parse_second(line: &str) -> Option<Second> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "main_thread")?;
    let rest = &words[at + 1..];
    if !(rest.first()?.starts_with('[') && rest.get(2) == Some(&"pps")) {
        return None;
    }
    let pps = parse_number(rest[1])?;
    let pkts = rest.get(3)?.strip_prefix('(')?.parse().ok()?;
    let usec_at = rest.iter().position(|w| *w == "usec)")?;
    let usec = rest.get(usec_at.checked_sub(1)?)?.parse().ok()?;
    Some(Second { pps, pkts, usec })
}

/// The packet count of pkt-gen's closing `Sent N packets …` line.
pub fn sent_packets(log: &str) -> Option<u64> {
    log.lines()
        .filter_map(|l| l.strip_prefix("Sent "))
        .filter_map(|rest| rest.split_whitespace().next()?.parse().ok())
        .next_back()
}

/// The average rate a finished sender reported (its last `Speed: N pps` line), in packets per
/// second; `None` when the sender was killed before its summary.
pub(crate) fn speed_pps(log: &str) -> Option<f64> {
    log.lines()
        .filter_map(|line| line.strip_prefix("Speed: "))
        .filter_map(parse_speed)
        .next_back()
}

/// pkt-gen's `Speed: 1488125 pps …`, or `Speed: 10.88 Mpps …` from versions that scale it.
fn parse_speed(text: &str) -> Option<f64> {
    let mut words = text.split_whitespace();
    let value = parse_number(words.next()?)?;
    let scale = match words.next()?.strip_suffix("pps")? {
        "" => 1.0,
        "K" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        _ => return None,
    };
    Some(value * scale)
}

/// A number as ministat's strtod() reads it: the whole token must be numeric and finite.
pub(crate) fn parse_number(token: &str) -> Option<f64> {
    token.parse::<f64>().ok().filter(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_per_second_forms_and_the_sent_count_are_read() {
        let log = "CMD: pkt-gen -f rx -i ix1 -w 4\n\
            507.868373 main_thread [2277] 1492702 pps (1493807 pkts 717027360 bps in 1000740 usec) 2.36 avg_batch 0 min_space\n\
            508.1 main_thread [2277] 0 pps (0 pkts in 1001000 usec)\n\
            508.2 main [2812] Ready...\n\
            Sent 80000000 packets, 60 bytes each, in 53.76 seconds.\n";
        let got = seconds(log);
        assert_eq!(
            got,
            [
                Second {
                    pps: 1492702.0,
                    pkts: 1493807,
                    usec: 1000740
                },
                Second {
                    pps: 0.0,
                    pkts: 0,
                    usec: 1001000
                },
            ]
        );
        assert_eq!(sent_packets(log), Some(80_000_000));
    }

    #[test]
    fn speed_raw_or_scaled_and_none_without_a_summary() {
        let log = "CMD: pkt-gen -f tx -i ix0 -l 60\nSpeed: 10.88 Mpps Bandwidth: 5.22 Gbps (raw 7.31 Gbps)\n";
        assert_eq!(speed_pps(log), Some(10_880_000.0));
        assert_eq!(
            speed_pps("Speed: 1488125 pps Bandwidth: 714299812 bps"),
            Some(1_488_125.0)
        );
        assert_eq!(parse_speed("950.5 Kpps x"), Some(950_500.0));
        assert_eq!(parse_speed("12 bps"), None);
        assert_eq!(speed_pps("502.3 main [1] x\nTerminated\n"), None);
        assert_eq!(parse_number("inf"), None);
    }
}
