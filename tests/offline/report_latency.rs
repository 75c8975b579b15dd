//! `benchlab report` on a results directory with latency (tests/data/latency/, made by the
//! library's `report::latency` tests: two versions, two config sets, a fixed-load profile and
//! a throughput profile with latency trials at 0, 50 and 90 % of the NDR, the lab's floor):
//! the README's section, results.json's fields, the charts; and a corrupt `latency.hlog`
//! refused in one line naming it, nothing written.

use std::path::{Path, PathBuf};

use crate::common::{copy_dir, run, stderr};

/// A copy of the fixture `tests/data/<name>/` in `tmp`, and an output directory beside it.
pub(crate) fn fixture(tmp: &Path, name: &str) -> (PathBuf, PathBuf) {
    let data = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    let dir = tmp.join("results");
    copy_dir(&data, &dir);
    (dir, tmp.join("out"))
}

/// `benchlab report DIR -o OUT`.
pub(crate) fn report(dir: &Path, out: &Path) -> std::process::Output {
    run(&["report", dir.to_str().unwrap(), "-o", out.to_str().unwrap()])
}

/// Asserts that `run` refused its input in one line (exit 2) naming `file` and saying
/// `damage`, and wrote no README into `out`.
pub(crate) fn assert_refused(run: &std::process::Output, out: &Path, file: &str, damage: &str) {
    assert_eq!(run.status.code(), Some(2), "{file}: {}", stderr(run));
    let err = stderr(run);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(file) && err.contains(damage), "{err}");
    assert!(!out.join("README.md").exists());
}

#[test]
fn a_results_directory_with_latency_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, out) = fixture(tmp.path(), "latency");
    let run = report(&dir, &out);
    assert!(run.status.success(), "{}", stderr(&run));
    let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
    for text in [
        "\n## Latency under load\n",
        "Latency floor (generator → receiver, no DUT, same host): P50 3 µs, P99 4.47 µs",
        "| 500 Kpps | 3 | 0.20 % | 20.2 µs | 20 µs–20.2 µs | – | – | – | – | 36.2 µs | 39.8 µs | 40.2 µs | 40.2 µs | 15000 | 14970 | 30 |",
        "| 90 % of the NDR (900 Kpps) | 3 | 0.67 % | 57.2 µs | 57 µs–57.2 µs | 120 ns–200 ns | 14.2 µs | 14.2 µs | 14.2 µs (9 of 9 s) | 103 µs | 113 µs | 114 µs | 114 µs |",
        "At 90 % of the NDR the DUT was saturated in 2 of 3 trials: in 1 it did not forward the whole load (2.0 % of it lost); in 1 its input queue was full (an interface dropped 5.0 % of the load).",
        "\nThe probes' CPU and the DUT's were at different distances in these trials",
        "| load | 120 ns | 190 ns–200 ns |\n|---|---:|---:|\n| probes only | ",
        "| forwarding, ndr, P99 latency at 50 % of the NDR | b vs a | +49.93 % ± 0.47 % |",
        "| forwarding, ndr, P99 latency at 90 % of the NDR | b vs a | — | unpaired | — | 3 iterations each | a at 900 Kpps | unreliable, no verdict: 2 of 3 b trials overloaded;",
        "](latency.ndr.png)",
    ] {
        assert!(readme.contains(text), "{text}\n{readme}");
    }
    // The verdicts lead, the latency ones after the throughput ones.
    assert!(readme.find("## Verdicts") < readme.find("## Latency under load"));
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        stdout.contains(
            "  forwarding, inet4, P99 latency at 500 Kpps: b vs a: higher latency, +49.88 %"
        ),
        "{stdout}"
    );
    for png in [
        "latency.inet4.png",
        "latency-cdf.inet4.png",
        "latency.ndr.png",
        "latency-cdf.ndr.png",
    ] {
        assert!(out.join(png).is_file(), "{png}");
    }
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(json["schema_version"], 2);
    let latency = json["latency"].as_array().unwrap();
    assert_eq!(latency.len(), 16);
    let b = latency
        .iter()
        .find(|l| l["name"] == "b.forwarding.ndr.90pct")
        .unwrap();
    assert_eq!(b["load_pct"], 90);
    assert_eq!(b["offered_pps"], 900_000.0);
    for field in [
        "p50_ns",
        "p90_ns",
        "p99_ns",
        "p999_ns",
        "max_ns",
        "probes_sent",
        "probes_received",
    ] {
        assert!(b[field].as_u64().is_some(), "{field}: {b}");
    }
    assert!(b["first_packet"]["p50_ns"].as_u64().is_some(), "{b}");
    assert_eq!(json["latency_floor"]["probes_sent"], 50_000);
    let verdict = |subject: &str| {
        (json["verdicts"].as_array().unwrap().iter())
            .find(|v| v["metric"] == "latency_p99" && v["subject"] == subject)
            .unwrap()["verdict"]
            .clone()
    };
    assert_eq!(verdict("b.forwarding.ndr.50pct"), "higher_latency");
    // Two of b's three trials at 90 % of the NDR lost part of the load: no finding there.
    assert_eq!(verdict("b.forwarding.ndr.90pct"), "unreliable");
    assert_eq!(
        b["iterations"][1]["troubles"],
        serde_json::json!(["overloaded"])
    );
    // Other programs took a fifth of the lab's CPU during b's second trial at 50 %: said, and
    // counted as disturbed, but one trial of three leaves the verdict standing.
    let crowded = (latency.iter())
        .find(|l| l["name"] == "b.forwarding.ndr.50pct")
        .unwrap();
    assert_eq!(
        crowded["iterations"][1]["troubles"],
        serde_json::json!(["crowded"])
    );
    assert_eq!(crowded["iterations"][1]["others_cpu_ratio"], 0.2);
    assert!(
        crowded["iterations"][0].get("troubles").is_none(),
        "{crowded}"
    );
}

#[test]
fn a_corrupt_histogram_log_is_refused_in_one_line_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, out) = fixture(tmp.path(), "latency");
    let hlog = dir.join("runs/a.forwarding.inet4.2/latency.hlog");
    let mut bytes = std::fs::read(&hlog).unwrap();
    let at = bytes.len() - 30;
    bytes[at..].fill(b'@');
    std::fs::write(&hlog, bytes).unwrap();
    let run = report(&dir, &out);
    let file = "runs/a.forwarding.inet4.2/latency.hlog";
    assert_refused(&run, &out, file, "corrupt latency histogram log");
}
