//! Hostile results files (issue 33): every reader of what a run left (pkt-gen logs, pmc call
//! graphs, `samples.csv`, `phases.csv`, `series.csv`, `meta.json`) refuses damage with one
//! short line naming the file, never panics or grows without bound, and no control character
//! read from a file reaches the README raw.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use benchlab::config::{defaults::CONFIG_SETS, Campaign};
use benchlab::ingest::netbenches::pktgen;
use benchlab::profile::pmc::{fold_pmcstat, MAX_DEPTH, MAX_FOLDED_BYTES, MAX_NAME_BYTES};
use benchlab::stats::CounterSample;
use benchlab::store::{parse_samples_csv, plan, PhaseRow, Status, Store, MAX_LINE_BYTES};

use crate::bad_input::bad_input_cases::dirs::results_dir_with as results_dir;
use crate::bad_input::bad_input_cases::CAMPAIGN;
use crate::common::in_process;

/// A seed's pkt-gen logs: receiver and sender of one iteration.
fn seed_log(kind: &str) -> String {
    let path = format!(
        "{}/tests/data/netbenches/003/bench.299288.fastforwarding.1.{kind}",
        env!("CARGO_MANIFEST_DIR")
    );
    fs::read_to_string(path).unwrap()
}

/// Asserts a refusal: exit 2, one stderr line of at most 300 characters naming `file`.
fn refused((status, _, err): &(i32, String, String), file: &str) {
    assert_eq!(*status, 2, "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.trim_end().chars().count() <= 300, "short: {err}");
    assert!(err.contains(file), "names {file}: {err}");
}

/// Whether text holds a control character other than a newline or a tab.
fn has_raw_control(text: &str) -> bool {
    text.chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\t'))
}

#[test]
fn any_character_anywhere_in_a_pktgen_line_never_panics() {
    let lines = [
        "CMD: pkt-gen -f tx -l 60 -s 10.0.0.1:2000-10.0.0.9 -d \"[::1]-[::9]\" -6",
        "CMD on sm1: pkt-gen -f rx -i igb3 -w 4",
        "507.8 main_thread [2277] 1492702 pps (1493807 pkts 717027360 bps in 1000740 usec) 2.3",
        "Speed: 10.88 Mpps Bandwidth: 5.22 Gbps (raw 7.31 Gbps)",
        "Sent 80000000 packets, 60 bytes each, in 53.76 seconds.",
    ];
    let odd = [
        'é', '€', '😀', '\u{fffd}', '\u{202e}', '\0', '-', '[', ']', ':',
    ];
    let body = seed_log("receiver");
    for line in lines {
        let chars: Vec<char> = line.chars().collect();
        for at in 0..=chars.len() {
            for c in odd {
                let mut changed = chars.clone();
                changed.insert(at, c);
                let changed: String = changed.into_iter().collect();
                // Replaced, too: a multibyte character where an ASCII one was.
                let mut swapped = chars.clone();
                if at < swapped.len() {
                    swapped[at] = c;
                }
                let swapped: String = swapped.into_iter().collect();
                for first in [&changed, &swapped] {
                    let log = format!("{first}\n{body}");
                    let _ = pktgen::parse_sender(&log);
                    let _ = pktgen::harness_samples(&log);
                    let _ = pktgen::rates(&log);
                    let _ = pktgen::seconds(&log);
                    let _ = pktgen::sent_packets(&log);
                }
            }
        }
    }
    let traffic = pktgen::parse_sender("CMD: pkt-gen -f tx -é 60 -l 60\n").traffic;
    assert_eq!(traffic.unwrap().packet_bytes, Some(60));
}

/// A netbenches directory of one series, three iterations, with `receiver` as every receiver
/// log and `info` as its `.info`.
fn netbenches_dir(root: &Path, info: &str, receiver: &str) -> PathBuf {
    let dir = root.join("nb");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("bench.1.fw.info"), info).unwrap();
    for i in 1..=3 {
        fs::write(dir.join(format!("bench.1.fw.{i}.receiver")), receiver).unwrap();
    }
    dir
}

#[test]
fn overlong_lines_anywhere_in_a_log_are_refused_naming_file_and_line() {
    let good = seed_log("receiver");
    let lines: Vec<&str> = good.lines().collect();
    let info = "IMAGE=\"1\"\nCFG=\"fw\"\nPKTGEN=\"\"\n";
    for (at, size) in [
        (0, MAX_LINE_BYTES + 1),
        (20, 20 << 20),
        (lines.len(), 1 << 20),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let mut damaged: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        damaged.insert(at, "9".repeat(size));
        let receiver = damaged.join("\n") + "\n";
        let dir = netbenches_dir(tmp.path(), info, &receiver);
        let out = tmp.path().join("out");
        let got = in_process(&["report", dir.to_str().unwrap(), "-o", out.to_str().unwrap()]);
        refused(&got, &format!("line {}", at + 1));
        refused(&got, "bench.1.fw.");
    }
}

#[test]
fn control_characters_of_info_files_and_trial_records_never_reach_the_readme_raw() {
    let tmp = tempfile::tempdir().unwrap();
    let info = "IMAGE=\"1\"\nCFG=\"fw\"\nPKTGEN=\"\"\n\
                UNAME=\"FreeBSD \x1b[2J\x1b]0;owned\x07 12.0 #1 r1: \u{202e}x amd64\"";
    let dir = netbenches_dir(tmp.path(), info, &seed_log("receiver"));
    let out = tmp.path().join("out");
    let (status, _, err) =
        in_process(&["report", dir.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(status, 0, "{err}");
    let readme = fs::read_to_string(out.join("README.md")).unwrap();
    assert!(!has_raw_control(&readme), "{readme}");
    assert!(!readme.contains('\u{202e}'), "{readme}");

    // A failure reason and flags with escape sequences, from a benchlab trial's meta.json.
    let results = results_dir(&tmp.path().join("r"), |i, meta| match i {
        0 => {
            meta.status = Status::Failed;
            meta.failure = Some("sender \x1b[31mdied\x1b[0m\r\n\x07".into());
        }
        1 => {
            meta.status = Status::Flagged;
            meta.flags = vec!["slowed\x1b[1A\x08\x08".into()];
        }
        _ => {}
    });
    let out = tmp.path().join("out2");
    let (status, _, err) = in_process(&[
        "report",
        results.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(status, 0, "{err}");
    assert!(!has_raw_control(&err), "{err:?}");
    let readme = fs::read_to_string(out.join("README.md")).unwrap();
    assert!(!has_raw_control(&readme), "{readme}");
    assert!(readme.contains("\\x1b[31mdied"), "escaped, kept: {readme}");
}

#[test]
fn a_binary_or_empty_info_is_said_and_none_of_it_reaches_the_readme() {
    for (info, said) in [
        (&b"T\x0e^\xff\xfeY4'\x00\x9c garbage"[..], "not text"),
        (&b""[..], "empty"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = netbenches_dir(tmp.path(), "", &seed_log("receiver"));
        fs::write(dir.join("bench.1.fw.info"), info).unwrap();
        let out = tmp.path().join("out");
        let (status, _, err) =
            in_process(&["report", dir.to_str().unwrap(), "-o", out.to_str().unwrap()]);
        assert_eq!(status, 0, "{err}");
        assert!(
            err.contains("bench.1.fw.info") && err.contains(said),
            "{err}"
        );
        let readme = fs::read_to_string(out.join("README.md")).unwrap();
        assert!(
            !readme.contains("garbage") && !readme.contains('\u{fffd}'),
            "{readme}"
        );
        // The series is still reported, named from its files.
        assert!(readme.contains("1.fw"), "{readme}");
    }
}

#[test]
fn a_huge_field_of_a_trial_record_is_refused_not_echoed() {
    let tmp = tempfile::tempdir().unwrap();
    let results = results_dir(&tmp.path().join("r"), |i, meta| {
        if i == 2 {
            meta.status = Status::Failed;
            meta.failure = Some("x".repeat(20 << 20));
        }
    });
    let out = tmp.path().join("out");
    let got = in_process(&[
        "report",
        results.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    refused(&got, "meta.json");
    assert!(!out.join("README.md").exists());
}

fn campaign() -> Campaign {
    Campaign::from_toml(CAMPAIGN, "campaign.toml", &CONFIG_SETS).unwrap()
}

#[test]
fn samples_going_back_in_time_or_negative_are_refused_at_their_line() {
    const HEAD: &str = "t_s,tx_pkts,rx_pkts,tx_pps,rx_pps\n";
    let row = |t: &str, pps: &str| format!("{t},10,10,10.0,{pps}\n");
    for n in 2..8 {
        for back in 1..n {
            // Row `n` goes back to the time of row `back` (or before it).
            let mut text = HEAD.to_string();
            for t in 1..=n {
                let time = if t == n { back } else { t };
                text.push_str(&row(&format!("{time}.000"), "10.0"));
            }
            let e = parse_samples_csv(&text).unwrap_err();
            assert_eq!(e.line, n + 1, "{text}");
        }
        for bad in ["-1.0", "-0.0", "-1e3", "−5"] {
            let mut text = HEAD.to_string();
            for t in 1..=n {
                text.push_str(&row(&format!("{t}.000"), if t == n { bad } else { "1.0" }));
            }
            assert_eq!(parse_samples_csv(&text).unwrap_err().line, n + 1, "{bad}");
        }
    }
}

#[test]
fn a_damaged_samples_file_stops_resume_before_any_lab_is_built() {
    let tmp = tempfile::tempdir().unwrap();
    for damage in [
        "",
        "t_s,tx_pkts,rx_pkts,tx_pps,rx_pps\n2.000,1,1,1.0,1.0\n1.000,1,1,1.0,1.0\n",
    ] {
        let dir = results_dir(&tmp.path().join(format!("r{}", damage.len())), |_, _| {});
        let key = &plan(&campaign())[1];
        fs::write(dir.join(format!("runs/{key}/samples.csv")), damage).unwrap();
        let e = Store::resume(&dir, &campaign(), &CONFIG_SETS)
            .unwrap_err()
            .to_string();
        assert!(e.contains("samples.csv"), "{e}");
        assert!(!e.contains('\n') && e.chars().count() <= 300, "{e}");
    }
}

/// An alternating run of two ABBA blocks in one segment, written as a run writes it, in the
/// results directory `dir` of the default campaign, opened for reading (unlocked); returns
/// its `phases.csv` too.
fn alternating_run(dir: &Path) -> (Store, PathBuf) {
    let store = Store::create(dir, &Campaign::default()).unwrap();
    store.begin_segment("default", "inet4", 1).unwrap();
    let series: Vec<CounterSample> = (0..=160u32)
        .map(|k| CounterSample {
            t_s: f64::from(k) * 0.05,
            rx_pkts: u64::from(k) * 50_000,
        })
        .collect();
    let sets = ["forwarding", "nft-stateful", "nft-stateful", "forwarding"];
    let phases: Vec<PhaseRow> = (0..8)
        .map(|i| PhaseRow {
            segment: 1,
            block: i / 4 + 1,
            phase: i % 4 + 1,
            config: sets[i as usize % 4].to_string(),
            switched_s: f64::from(i),
            end_s: f64::from(i) + 1.0,
            others_ms: None,
        })
        .collect();
    store
        .write_blocks(("default", "inet4", 1), &series, &phases)
        .unwrap();
    let path = store.alternating_dir("default", "inet4").join("phases.csv");
    drop(store);
    (Store::open(dir).unwrap(), path)
}

#[test]
fn duplicated_reordered_or_cut_phase_rows_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (store, path) = alternating_run(&tmp.path().join("r"));
    assert_eq!(store.read_phases("default", "inet4").unwrap().len(), 8);
    let good = fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = good.lines().collect();
    let mut variants: Vec<String> = Vec::new();
    // Every row duplicated, one row duplicated anywhere, two rows swapped anywhere.
    variants.push(
        lines
            .iter()
            .flat_map(|l| [*l, *l])
            .skip(1)
            .collect::<Vec<_>>()
            .join("\n"),
    );
    for at in 1..lines.len() {
        let mut dup = lines.clone();
        dup.insert(at, lines[at]);
        variants.push(dup.join("\n"));
        if at + 1 < lines.len() {
            let mut swapped = lines.clone();
            swapped.swap(at, at + 1);
            variants.push(swapped.join("\n"));
        }
        let mut missing = lines.clone();
        missing.remove(at);
        if at < lines.len() - 1 {
            variants.push(missing.join("\n"));
        }
    }
    let mut variants: Vec<String> = variants.into_iter().map(|v| v + "\n").collect();
    // Cut anywhere inside the last row: no newline at its end.
    let last_start = good[..good.len() - 1].rfind('\n').unwrap() + 1;
    for cut in last_start + 1..good.len() {
        variants.push(good[..cut].to_string());
    }
    for text in variants {
        fs::write(&path, &text).unwrap();
        let e = store.read_phases("default", "inet4");
        let e = e.expect_err(&text).to_string();
        assert!(e.contains("phases.csv: line "), "{e}");
        assert!(!e.contains('\n') && e.chars().count() <= 300, "{e}");
        // Resume finds it before building any lab, whatever its campaign.
        let again = Store::resume(store.dir(), &Campaign::default(), &CONFIG_SETS);
        assert!(again.unwrap_err().to_string().contains("phases.csv"));
    }
}

#[test]
fn a_series_going_back_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (store, _) = alternating_run(&tmp.path().join("r"));
    let path = store
        .alternating_dir("default", "inet4")
        .join("segment-1/series.csv");
    let good = fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = good.lines().collect();
    for at in [2, 50, lines.len() - 1] {
        let mut dup = lines.clone();
        dup.insert(at, lines[at]);
        fs::write(&path, dup.join("\n") + "\n").unwrap();
        let e = store
            .read_series("default", "inet4", 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains(&format!("line {}", at + 2)), "{e}");
    }
    fs::write(&path, &good[..good.len() - 2]).unwrap();
    assert!(store.read_series("default", "inet4", 1).is_err());
}

#[test]
fn a_run_its_stopping_rule_ended_is_over_for_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let (store, _) = alternating_run(&tmp.path().join("r"));
    let meta = |ended: &str| {
        format!("{{\"start_unix_s\": 1.0, \"end_unix_s\": 2.0, \"ended\": \"{ended}\", \"generator\": null}}\n")
    };
    let ids = ("default", "inet4", 1);
    assert!(
        !store.run_ended("default", "inet4").unwrap(),
        "no segment record"
    );
    for (ended, over) in [("time up", true), ("precise", true), ("sender died", false)] {
        store
            .write_segment_file(ids, "meta.json", meta(ended).as_bytes())
            .unwrap();
        assert_eq!(
            store.run_ended("default", "inet4").unwrap(),
            over,
            "{ended}"
        );
    }
}

/// A pmcstat graph: one section of `chains` chains, each `depth` callers deep, names of
/// `name_len` bytes.
fn pmc_graph(chains: usize, depth: usize, name_len: usize) -> String {
    let mut text = format!("@ CPU_CLK_UNHALTED [{chains} samples]\n");
    for c in 0..chains {
        for level in 0..depth {
            let name = format!("{c}_{level}_{}", "f".repeat(name_len));
            let at = if level == 0 {
                " @ /boot/kernel/kernel"
            } else {
                ""
            };
            text.push_str(&format!("{}100.0%  [1]  {name}{at}\n", " ".repeat(level)));
        }
    }
    text
}

#[test]
fn deep_or_long_pmc_graphs_are_bounded() {
    // Past hwpmc's depth, or names past the bound: refused, naming the file and line.
    for (depth, name_len) in [(MAX_DEPTH + 1, 8), (3, MAX_NAME_BYTES + 1), (2, 1 << 20)] {
        let graph = pmc_graph(2, depth, name_len);
        let e = fold_pmcstat(graph.as_bytes(), "g.pmc.graph")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("g.pmc.graph: line "),
            "{}",
            &e[..200.min(e.len())]
        );
        assert!(e.chars().count() <= 300, "{e}");
    }
    // Within the bounds but folding into more than MAX_FOLDED_BYTES (a 25 MB graph of deep
    // chains of long names): refused quickly, the work bounded.
    let started = Instant::now();
    let graph = pmc_graph(12, MAX_DEPTH, 4000);
    assert!(graph.len() > 20 << 20);
    match fold_pmcstat(graph.as_bytes(), "big.pmc.graph") {
        Ok(folded) => assert!(folded.to_text().len() <= MAX_FOLDED_BYTES),
        Err(e) => assert!(e.to_string().contains("MiB"), "{e}"),
    }
    assert!(started.elapsed() < Duration::from_secs(60));
    // Every line ending a stack 512 frames deep (siblings of the deepest caller): refused
    // once the stacks pass the bound, long before the gigabytes they would make.
    let started = Instant::now();
    let e = fold_pmcstat(pmc_sawtooth(5000).as_bytes(), "saw.pmc.graph").unwrap_err();
    assert!(e.to_string().contains("MiB"), "{e}");
    assert!(started.elapsed() < Duration::from_secs(60));
    // Deep but sane: folds.
    let folded = fold_pmcstat(pmc_graph(3, 100, 10).as_bytes(), "ok").unwrap();
    assert_eq!(folded.samples(), 3);
}

/// A pmcstat graph whose every line past the first chain ends a stack [`MAX_DEPTH`] deep:
/// a chain of long names, then `siblings` callers of its deepest function.
fn pmc_sawtooth(siblings: usize) -> String {
    let mut text = format!("@ CPU_CLK_UNHALTED [{siblings} samples]\n");
    let long = "f".repeat(4000);
    for level in 0..MAX_DEPTH - 1 {
        let at = if level == 0 {
            " @ /boot/kernel/kernel"
        } else {
            ""
        };
        let indent = " ".repeat(level);
        text.push_str(&format!(
            "{indent}100.0%  [{siblings}]  l{level}_{long}{at}\n"
        ));
    }
    let indent = " ".repeat(MAX_DEPTH - 1);
    for s in 0..siblings {
        text.push_str(&format!("{indent}0.02%  [1]  s{s}\n"));
    }
    text
}
