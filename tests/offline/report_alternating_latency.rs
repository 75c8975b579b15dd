//! `benchlab report` on an alternating run with its latency run (tests/data/alternating-latency/:
//! a real run of forwarding against nft-stateful on the virtual lab, trimmed to what the report
//! reads — 9 throughput blocks, 6 latency blocks at 50 % of forwarding's saturated rate, the
//! floor): the README's section and verdicts, results.json's entries; and a corrupt
//! `latency.json` or `latency.hlog` refused in one line naming it, nothing written.

use crate::common::stderr;
use crate::report_latency::{assert_refused, fixture, report};

#[test]
fn an_alternating_run_with_latency_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, out) = fixture(tmp.path(), "alternating-latency");
    let run = report(&dir, &out);
    assert!(run.status.success(), "{}", stderr(&run));
    let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
    for text in [
        "\n## Latency under load\n",
        "Latency floor (generator → receiver, no DUT, same host): P50 260 ns, P99 471 ns",
        "\n### default · inet4, alternated\n\nAt 50 % of forwarding's saturated rate, 560 Kpps \
         (forwarding's median over the run's throughput blocks: 1.12 Mpps), 6 blocks: ",
        "| forwarding | 28.8 µs | 81.5 µs | 271 µs | 429 µs | 499 µs | 35224 |",
        "| nft-stateful | 57.2 µs | 374 µs | 565 µs | 6.79 ms | 6.88 ms | 33697 |",
        "- nft-stateful vs forwarding: P99 +166.3 % [+63.3 %, +334.2 %] (paired, 95 %, 6 \
         blocks): higher latency",
        "- nft-stateful vs forwarding: P50 +102.1 % [+30.3 %, +213.4 %] (paired, 95 %, 6 \
         blocks): higher latency",
        "| default | nft-stateful | inet4 | 50 % of the baseline's saturated rate (560 Kpps) |",
        "](latency-cdf.inet4.png)",
    ] {
        assert!(readme.contains(text), "{text}\n{readme}");
    }
    assert!(readme.find("## Latency under load") < readme.find("## Paired comparisons"));
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        stdout.contains(
            "  default, inet4, P50 latency at 50 % of the baseline's saturated rate: \
             nft-stateful vs forwarding: higher latency, +102.1 %"
        ),
        "{stdout}"
    );
    assert!(out.join("latency-cdf.inet4.png").is_file());
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    let latency = json["latency"].as_array().unwrap();
    assert_eq!(latency.len(), 2);
    assert_eq!(latency[1]["design"], "alternating");
    assert_eq!(latency[1]["iterations"].as_array().unwrap().len(), 6);
    let metrics: Vec<&str> = (json["verdicts"].as_array().unwrap().iter())
        .map(|v| v["metric"].as_str().unwrap())
        .collect();
    assert_eq!(metrics, ["throughput", "latency_p99", "latency_p50"]);
}

#[test]
fn a_corrupt_latency_record_or_log_is_refused_in_one_line_and_nothing_is_written() {
    for (file, damage) in [
        ("latency.json", "corrupted"),
        ("latency.hlog", "corrupt latency histogram log"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, out) = fixture(tmp.path(), "alternating-latency");
        let path = dir.join("alternating/default.inet4").join(file);
        let mut bytes = std::fs::read(&path).unwrap();
        let at = bytes.len() - 30;
        bytes[at..].fill(b'@');
        std::fs::write(&path, bytes).unwrap();
        let run = report(&dir, &out);
        let named = format!("alternating/default.inet4/{file}");
        assert_refused(&run, &out, &named, damage);
    }
}
