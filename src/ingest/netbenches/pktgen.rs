//! Pure parsers for netmap pkt-gen logs as bench-lab.sh stored them: the first line is the
//! command (`CMD on <host>: <cmd>`, or `CMD: <cmd>` in 2016-17 logs), then pkt-gen's own output.

use std::net::{Ipv4Addr, Ipv6Addr};

use crate::ingest::{AddrRange, Traffic};
use crate::traffic::pktgen::log::{parse_number, speed_pps};
/// pkt-gen's per-second and `Sent` lines, read by the parser a live pkt-gen run uses too.
pub use crate::traffic::pktgen::log::{seconds, sent_packets, Second};

/// Lines bench-lab-ministat.sh drops at the head of a receiver log (pkt-gen's preamble and
/// the warm-up seconds).
const HARNESS_HEAD_LINES: usize = 15;
/// Lines bench-lab-ministat.sh drops at the tail of a receiver log (the cool-down seconds).
const HARNESS_TAIL_LINES: usize = 10;

/// The per-second rates bench-lab-ministat.sh keeps from a receiver log.
///
/// Its rule, verbatim: `wc -l` counts the newlines (L), `head -n L-10 | tail -n L-25` keeps
/// lines 16..=L-10, `grep -E 'main_thread[[:space:]]\[[[:digit:]]+\][[:space:]][1-9].*pps'`
/// keeps the per-second lines with a non-zero rate and `cut -d ' ' -f 4` takes the rate.
/// A log of 25 lines or fewer keeps nothing (the shell pipeline then hands negative counts to
/// head/tail; we do not imitate that).
///
/// Returns the rates in file order, or the 1-based number of a kept line whose field 4 is not
/// a number: ministat rejects the whole iteration then, and so do we.
pub fn harness_samples(log: &str) -> Result<Vec<f64>, usize> {
    let newlines = log.bytes().filter(|&b| b == b'\n').count();
    let Some(end) = newlines.checked_sub(HARNESS_TAIL_LINES) else {
        return Ok(Vec::new());
    };
    let mut samples = Vec::new();
    for (index, line) in log.split('\n').enumerate().take(end) {
        if index < HARNESS_HEAD_LINES || !is_rate_line(line) {
            continue;
        }
        match line.split(' ').nth(3).and_then(parse_number) {
            Some(pps) => samples.push(pps),
            None => return Err(index + 1),
        }
    }
    Ok(samples)
}

/// Every non-zero per-second rate of a pkt-gen log (no trimming): for a sender, what it offered.
pub fn rates(log: &str) -> Vec<f64> {
    log.lines()
        .filter(|line| is_rate_line(line))
        .filter_map(|line| line.split(' ').nth(3).and_then(parse_number))
        .collect()
}

/// What a sender log tells: its command line and pkt-gen's closing `Speed:` figure.
#[derive(Debug, Clone, PartialEq)]
pub struct SenderLog {
    /// The traffic described by the command on the first line, when there is one.
    pub traffic: Option<Traffic>,
    /// The average rate pkt-gen reported when it finished (`Speed: N pps`), in packets per
    /// second; absent when the sender was killed before its summary.
    pub(crate) speed_pps: Option<f64>,
}

/// Parses a sender log.
pub fn parse_sender(log: &str) -> SenderLog {
    let traffic = log.lines().next().and_then(command_line).map(parse_command);
    SenderLog {
        traffic,
        speed_pps: speed_pps(log),
    }
}

/// The command of a log's first line: `CMD on <host>: <cmd>` or `CMD: <cmd>`.
pub fn command_line(first_line: &str) -> Option<&str> {
    let rest = first_line.strip_prefix("CMD")?;
    let (_, command) = rest.split_once(": ")?;
    Some(command.trim())
}

/// Reads frame size, address family and flow ranges from a pkt-gen command line.
pub fn parse_command(command: &str) -> Traffic {
    // The harness's quoting layers leave literal quotes around IPv6 ranges ("[…]-[…]").
    let words: Vec<&str> = command
        .split_whitespace()
        .map(|w| w.trim_matches(|c| c == '"' || c == '\''))
        .collect();
    let mut traffic = Traffic {
        command: command.to_string(),
        packet_bytes: None,
        ip_version: 4,
        source: None,
        destination: None,
    };
    let mut i = 0;
    while i < words.len() {
        let word = words[i];
        // getopt accepts both `-l 60` and `-l60`. The flag is the first character, not the
        // first byte: a log's command line may hold any UTF-8 (`-é`).
        let mut chars = word.strip_prefix('-').unwrap_or("").chars();
        let Some(flag) = chars.next() else {
            i += 1;
            continue;
        };
        let attached = chars.as_str();
        let mut value = || {
            if attached.is_empty() {
                i += 1;
                words.get(i).copied()
            } else {
                Some(attached)
            }
        };
        match flag {
            '4' if attached.is_empty() => traffic.ip_version = 4,
            '6' if attached.is_empty() => traffic.ip_version = 6,
            'l' => traffic.packet_bytes = value().and_then(|v| v.parse().ok()),
            's' => traffic.source = value().and_then(parse_range),
            'd' => traffic.destination = value().and_then(parse_range),
            _ => {}
        }
        i += 1;
    }
    if [&traffic.source, &traffic.destination]
        .iter()
        .any(|r| r.as_ref().is_some_and(|r| r.text.contains('[')))
    {
        traffic.ip_version = 6;
    }
    traffic
}

/// Parses a pkt-gen range `start[-end]`, each `addr[:port]` (IPv6: `[addr][:port]`); an absent
/// end address or port equals the start one, as in pkt-gen's extract_ip_range().
pub fn parse_range(text: &str) -> Option<AddrRange> {
    let (start, end) = split_range(text);
    let (start_addr, start_port) = parse_endpoint(start)?;
    let (end_addr, end_port) = match end {
        Some(end) => parse_endpoint(end)?,
        None => (start_addr, start_port),
    };
    // The whole IPv6 space holds 2^128 addresses, one more than a u128 counts: it saturates
    // (and reads as "over 10^38" in the report) instead of wrapping to 0.
    let addresses = end_addr.checked_sub(start_addr)?.saturating_add(1);
    let ports = match (start_port, end_port) {
        (Some(a), Some(b)) => u128::from(b.checked_sub(a)?) + 1,
        _ => 1,
    };
    Some(AddrRange {
        text: text.to_string(),
        addresses,
        ports,
    })
}

/// Splits at the first `-` outside brackets (IPv6 addresses sit inside brackets).
fn split_range(text: &str) -> (&str, Option<&str>) {
    let mut depth = 0u32;
    for (i, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            '-' if depth == 0 => return (&text[..i], Some(&text[i + 1..])),
            _ => {}
        }
    }
    (text, None)
}

/// An address as a number (IPv4 and IPv6 alike) and its port, if any.
fn parse_endpoint(text: &str) -> Option<(u128, Option<u16>)> {
    if let Some(rest) = text.strip_prefix('[') {
        let (addr, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(port) => Some(port.parse().ok()?),
            None if after.is_empty() => None,
            None => return None,
        };
        return Some((u128::from(addr.parse::<Ipv6Addr>().ok()?), port));
    }
    let (addr, port) = match text.split_once(':') {
        Some((addr, port)) => (addr, Some(port.parse().ok()?)),
        None => (text, None),
    };
    Some((u128::from(u32::from(addr.parse::<Ipv4Addr>().ok()?)), port))
}

/// Whether a line matches the harness's
/// `grep -E 'main_thread[[:space:]]\[[[:digit:]]+\][[:space:]][1-9].*pps'`.
fn is_rate_line(line: &str) -> bool {
    line.match_indices("main_thread")
        .any(|(at, word)| rate_line_tail(&line.as_bytes()[at + word.len()..]))
}

/// The part of the pattern after `main_thread`: `[[:space:]]\[[[:digit:]]+\][[:space:]][1-9].*pps`.
fn rate_line_tail(rest: &[u8]) -> bool {
    let is_space = |b: Option<&u8>| b.is_some_and(|&b| b == b' ' || (b'\t'..=b'\r').contains(&b));
    if !is_space(rest.first()) || rest.get(1) != Some(&b'[') {
        return false;
    }
    let digits = rest[2..].iter().take_while(|b| b.is_ascii_digit()).count();
    let at = 2 + digits;
    digits > 0
        && rest.get(at) == Some(&b']')
        && is_space(rest.get(at + 1))
        && matches!(rest.get(at + 2), Some(b'1'..=b'9'))
        && rest[at + 3..].windows(3).any(|w| w == b"pps")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receiver_log(preamble: usize, rates: &[&str], tail: &[&str]) -> String {
        let mut log = String::from("CMD: pkt-gen -N -f rx -i igb3 -w 4\n");
        for i in 1..preamble {
            log.push_str(&format!("502.3876{i:02} main [2512] preamble line {i}\n"));
        }
        for (i, pps) in rates.iter().enumerate() {
            log.push_str(&format!(
                "{}.510372 main_thread [2277] {pps} pps ({pps} pkts 145733280 bps in 1000927 usec) 2.27 avg_batch 0 min_space\n",
                507 + i
            ));
        }
        for line in tail {
            log.push_str(line);
            log.push('\n');
        }
        log
    }

    #[test]
    fn harness_drops_six_head_and_nine_tail_seconds_of_a_usual_log() {
        // The usual layout: 9 preamble lines, first rate on line 10, `Terminated` last.
        let rates: Vec<String> = (1..=40).map(|i| (1000 + i).to_string()).collect();
        let refs: Vec<&str> = rates.iter().map(String::as_str).collect();
        let log = receiver_log(9, &refs, &["Terminated"]);
        let kept = harness_samples(&log).unwrap();
        let expected: Vec<f64> = (7..=31).map(|i| f64::from(1000 + i)).collect();
        assert_eq!(kept, expected);
    }

    #[test]
    fn harness_skips_zero_rates_and_other_lines() {
        let mut rates = vec!["5"; 30];
        rates[10] = "0";
        let log = receiver_log(9, &rates, &["Terminated"]);
        assert_eq!(harness_samples(&log).unwrap().len(), 14);
        assert!(!is_rate_line("main_thread [2277] 0 pps"));
        assert!(!is_rate_line("main_thread[2277] 5 pps"));
        assert!(!is_rate_line("main_thread [] 5 pps"));
        assert!(!is_rate_line("main_thread [12] 5 bps"));
        assert!(is_rate_line("1.2 main_thread\t[12]\t7 Kpps"));
        assert!(is_rate_line("x main_thread main_thread [1] 9 pps"));
    }

    #[test]
    fn harness_counts_newlines_like_wc() {
        // 40 newline-terminated lines then an unterminated one: wc -l says 40.
        let rates = vec!["7"; 39];
        let mut log = receiver_log(1, &rates, &[]);
        log.push_str("546.1 main_thread [2277] 9 pps (truncated");
        let kept = harness_samples(&log).unwrap();
        // Kept lines 16..=30, all rate lines of 7.
        assert_eq!(kept, vec![7.0; 15]);
    }

    #[test]
    fn harness_keeps_nothing_from_short_or_empty_logs() {
        assert_eq!(harness_samples(""), Ok(vec![]));
        let log = receiver_log(9, &["5"; 16], &[]);
        assert_eq!(log.lines().count(), 25);
        assert_eq!(harness_samples(&log), Ok(vec![]));
    }

    #[test]
    fn harness_rejects_the_iteration_on_a_non_numeric_rate() {
        let mut log = receiver_log(9, &["5"; 30], &["Terminated"]);
        log = log.replacen("516.510372 main_thread", "516.510372  main_thread", 1);
        assert_eq!(harness_samples(&log), Err(19));
    }

    #[test]
    fn sender_command_line_gives_frame_size_and_flows() {
        let log = "CMD on sm1.lab: pkt-gen -f tx -N -i igb2 -n 80000000 -l 60 -4 \
                   -d 198.19.10.1:2000-198.19.10.100 -D 00:0d:b9:41:ca:3d \
                   -s 198.18.10.1:2000-198.18.10.20 -w 4 -U\n\
                   561.068871 main_thread [2277] 861652 pps (916369 pkts in 1063502 usec)\n\
                   Speed: 1488125 pps Bandwidth: 714299812 bps (raw 1000019736 bps).\n";
        let sender = parse_sender(log);
        assert_eq!(sender.speed_pps, Some(1_488_125.0));
        let traffic = sender.traffic.unwrap();
        assert_eq!(traffic.packet_bytes, Some(60));
        assert_eq!(traffic.ip_version, 4);
        assert_eq!(traffic.source.as_ref().unwrap().addresses, 20);
        assert_eq!(traffic.destination.as_ref().unwrap().addresses, 100);
        assert_eq!(traffic.flows(), Some(2000));
        assert!(traffic.command.starts_with("pkt-gen -f tx"));
    }

    #[test]
    fn ipv6_ranges_keep_their_quotes_on_the_command_line() {
        let cmd = r#"pkt-gen -f tx -N -i igb2 -n 80000000 -l62 -d "[2001:2:0:8010::1]-[2001:2:0:8010::64]" -s "[2001:2:0:10::1]-[2001:2:0:10::14]" -w 4"#;
        let traffic = parse_command(cmd);
        assert_eq!(traffic.packet_bytes, Some(62));
        assert_eq!(traffic.ip_version, 6);
        assert_eq!(traffic.flows(), Some(2000));
        // The whole IPv6 space is 2^128 addresses: the count saturates, it does not wrap to 0.
        let all = r#"pkt-gen -f tx -i igb2 -s "[::]-[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]" -d "[::1]""#;
        assert_eq!(parse_command(all).flows(), Some(u128::MAX));
    }

    #[test]
    fn ranges_with_ports_and_single_addresses() {
        let r = parse_range("198.18.10.1:2000-198.18.10.1:2009").unwrap();
        assert_eq!((r.addresses, r.ports), (1, 10));
        let r = parse_range("10.0.0.1").unwrap();
        assert_eq!((r.addresses, r.ports), (1, 1));
        let r = parse_range("[2001:2::1]:53-[2001:2::ff]:54").unwrap();
        assert_eq!((r.addresses, r.ports), (255, 2));
        assert_eq!(parse_range("198.18.10.20-198.18.10.1"), None);
        assert_eq!(parse_range("not-an-address"), None);
    }

    #[test]
    fn command_line_prefixes() {
        assert_eq!(command_line("CMD: pkt-gen -f rx"), Some("pkt-gen -f rx"));
        assert_eq!(
            command_line("CMD on sm1: pkt-gen -f rx"),
            Some("pkt-gen -f rx")
        );
        assert_eq!(command_line("502.38 main [2512] interface is igb3"), None);
    }

    #[test]
    fn scaled_speed_of_older_pkt_gen() {
        let log = "CMD: pkt-gen -f tx -i ix0 -l 60\nSpeed: 10.88 Mpps Bandwidth: 5.22 Gbps (raw 7.31 Gbps)\n";
        assert_eq!(parse_sender(log).speed_pps, Some(10_880_000.0));
    }

    #[test]
    fn sender_without_summary_has_no_speed() {
        let sender = parse_sender("502.3 main [1] x\nTerminated\n");
        assert_eq!(
            sender,
            SenderLog {
                traffic: None,
                speed_pps: None
            }
        );
        let r = rates("1.0 main_thread [1553] 10382561 pps (x)\n2.0 main_thread [1553] 0 pps\n");
        assert_eq!(r, vec![10_382_561.0]);
    }
}
