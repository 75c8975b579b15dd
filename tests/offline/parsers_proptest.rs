//! No panic on arbitrary input: campaign files, `LAB.toml`, `samples.csv`, the alternating
//! design's `phases.csv` and `series.csv`, `search.json` and pkt-gen logs, both as random text
//! and as text shaped like the real thing with random values where the numbers go.

use benchlab::config::{defaults::CONFIG_SETS, Campaign};
use benchlab::ingest::netbenches::pktgen;
use benchlab::store::{parse_samples_csv, plan, Store};
use proptest::prelude::*;

/// A few hundred cases each: enough to meet the odd values, quick in CI; `PROPTEST_CASES` sets
/// more (`benches/fuzz.sh`).
fn config() -> ProptestConfig {
    ProptestConfig {
        cases: (std::env::var("PROPTEST_CASES").ok())
            .and_then(|n| n.parse().ok())
            .unwrap_or(300),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// A TOML value of any kind a campaign key might be given.
fn toml_value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<f64>().prop_map(|v| format!("{v:?}").replace("NaN", "nan")),
        any::<i64>().prop_map(|v| v.to_string()),
        any::<u32>().prop_map(|v| v.to_string()),
        "[ -~]{0,12}".prop_map(|s| format!("{s:?}")),
        Just("inf".to_string()),
        Just("-inf".to_string()),
        Just("[]".to_string()),
        Just("[[]]".to_string()),
        Just("\"max\"".to_string()),
        Just("\"198.18.10.1:2000-198.18.10.20\"".to_string()),
        Just("\"[::]-[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]\"".to_string()),
    ]
}

/// The keys a campaign file's sections hold.
const TOP: &[&str] = &[
    "iterations",
    "design",
    "order",
    "title",
    "config_sets",
    "profile",
];
const TRIAL: &[&str] = &["duration", "warmup", "cooldown"];
const PROFILE: &[&str] = &["name", "af", "frame_size", "src", "dst", "rate", "measure"];
const VERSION: &[&str] = &["name", "online_timeout", "commands", "reboot", "online"];
const ALTERNATING: &[&str] = &[
    "phase",
    "settle",
    "estimator",
    "precision",
    "max_duration",
    "min_blocks",
];

/// A campaign file: top-level keys, then sections, each key with a random value.
fn campaign_text() -> impl Strategy<Value = String> {
    let section = |name: &'static str, keys: &'static [&'static str]| {
        prop::collection::vec((prop::sample::select(keys), toml_value()), 0..5).prop_map(
            move |pairs| {
                let body: String = pairs.iter().map(|(k, v)| format!("{k} = {v}\n")).collect();
                format!("\n{name}\n{body}")
            },
        )
    };
    (
        section("", TOP),
        section("[trial]", TRIAL),
        section("[[profiles]]", PROFILE),
        section("[[versions]]", VERSION),
        section("[alternating]", ALTERNATING),
    )
        .prop_map(|(a, b, c, d, e)| format!("{a}{b}{c}{d}{e}"))
}

/// Loads `text` as a campaign; one that loads must also plan and serialize.
fn load(text: &str) {
    if let Ok(c) = Campaign::from_toml(text, "campaign.toml", &CONFIG_SETS) {
        let _ = plan(&c);
        let _ = c.to_toml();
    }
}

/// A `samples.csv` field: plain numbers and everything a damaged file may hold.
fn csv_field() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<f64>().prop_map(|v| v.to_string()),
        any::<u64>().prop_map(|v| v.to_string()),
        "[-0-9.eE+a-z]{0,8}",
    ]
}

/// A pkt-gen per-second line with a random rate, packet count and interval.
fn pktgen_line() -> impl Strategy<Value = String> {
    let rate = prop_oneof![
        any::<f64>().prop_map(|v| v.to_string()),
        any::<u64>().prop_map(|v| v.to_string()),
        "[0-9.e+-]{1,6}",
    ];
    (rate, any::<u64>(), any::<u64>(), "[ -~]{0,6}").prop_map(|(pps, pkts, usec, tail)| {
        format!("747.868160 main_thread [1553] {pps} pps ({pkts} pkts in {usec} usec){tail}")
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn campaign_loading_never_panics_on_text(text in "\\PC{0,200}") {
        load(&text);
    }

    #[test]
    fn campaign_loading_never_panics_on_shaped_files(text in campaign_text()) {
        load(&text);
    }

    #[test]
    fn samples_csv_never_panics(text in "\\PC{0,200}") {
        let _ = parse_samples_csv(&text);
    }

    #[test]
    fn samples_csv_rows_never_panic_and_accepted_rows_are_plain(
        rows in prop::collection::vec(prop::collection::vec(csv_field(), 0..7), 0..6),
        newline in any::<bool>(),
    ) {
        let mut text = "t_s,tx_pkts,rx_pkts,tx_pps,rx_pps\n".to_string();
        for row in &rows {
            text += &row.join(",");
            text.push('\n');
        }
        if !newline {
            text.pop();
        }
        if let Ok(parsed) = parse_samples_csv(&text) {
            // What goes into medians is a finite rate, never negative.
            for r in parsed {
                prop_assert!(r.t_s.is_finite() && r.rx_pps.is_finite() && r.tx_pps.is_finite());
                prop_assert!(r.rx_pps >= 0.0 && r.tx_pps >= 0.0 && r.t_s >= 0.0);
            }
        }
    }

    #[test]
    fn pktgen_parsers_never_panic_on_text(text in "\\PC{0,300}") {
        let _ = pktgen::harness_samples(&text);
        let _ = pktgen::rates(&text);
        let _ = pktgen::seconds(&text);
        let _ = pktgen::sent_packets(&text);
        let _ = pktgen::parse_sender(&text);
        let _ = pktgen::parse_range(&text);
        if let Some(command) = pktgen::command_line(&text) {
            let _ = pktgen::parse_command(command);
        }
    }

    #[test]
    fn pktgen_logs_never_panic_and_keep_finite_rates(
        lines in prop::collection::vec(pktgen_line(), 0..60),
        command in "[ -~]{0,60}",
    ) {
        let log = format!("CMD: pkt-gen {command}\n{}\n", lines.join("\n"));
        if let Ok(samples) = pktgen::harness_samples(&log) {
            prop_assert!(samples.iter().all(|v| v.is_finite()));
        }
        prop_assert!(pktgen::rates(&log).iter().all(|v| v.is_finite()));
        let _ = pktgen::seconds(&log);
        let _ = pktgen::sent_packets(&log);
        let _ = pktgen::parse_sender(&log);
        if let Some(command) = pktgen::command_line(&log) {
            let traffic = pktgen::parse_command(command);
            let _ = traffic.flows();
        }
    }
}

/// A `LAB.toml` key of the virtual lab or its hosts, with a value of any kind.
fn lab_text() -> impl Strategy<Value = String> {
    let keys = prop::sample::select(vec![
        "id",
        "nodes",
        "senders",
        "dut_cpu",
        "generator_cpu",
        "placement",
        "ring",
        "dut_mac",
    ]);
    prop::collection::vec((keys, toml_value()), 0..8).prop_map(|kv| {
        kv.into_iter()
            .map(|(k, v)| format!("{k} = {v}\n"))
            .collect::<String>()
    })
}

/// Lines shaped like a CSV record of numbers and names, some cut or doubled.
fn csv_text(header: &'static str) -> impl Strategy<Value = String> {
    let field = prop_oneof![
        any::<u32>().prop_map(|v| v.to_string()),
        any::<f64>().prop_map(|v| v.to_string()),
        Just("a.forwarding".to_string()),
        Just(String::new()),
        Just("-1".to_string()),
        Just("é\u{1b}".to_string()),
    ];
    let line = prop::collection::vec(field, 0..8).prop_map(|f| f.join(","));
    (prop::collection::vec(line, 0..12), any::<bool>()).prop_map(move |(lines, header_too)| {
        let mut text = if header_too {
            format!("{header}\n")
        } else {
            String::new()
        };
        for l in lines {
            text.push_str(&l);
            text.push('\n');
        }
        text
    })
}

/// A JSON document of the shape of `search.json`, values of any kind where numbers go.
fn search_json() -> impl Strategy<Value = String> {
    let number = prop_oneof![
        any::<f64>().prop_map(|v| format!("{v:?}")
            .replace("NaN", "null")
            .replace("inf", "1e999")),
        any::<i64>().prop_map(|v| v.to_string()),
        Just("\"x\"".to_string()),
        Just("-1".to_string()),
    ];
    prop::collection::vec(number, 6).prop_map(|n| {
        format!(
            r#"{{"goals": [{{"name": "NDR", "loss_ratio": {}, "conditional_throughput": {}}}],
                "trials": [{{"load_pps": {}, "duration_s": {}, "start_unix_s": {}, "end_unix_s": {}}}]}}"#,
            n[0], n[1], n[2], n[3], n[4], n[5]
        )
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn lab_files_never_panic(text in lab_text()) {
        let _ = benchlab::lab::topology::LabConfig::parse(&text, "LAB.toml");
    }

    #[test]
    fn alternating_records_never_panic(
        phases in csv_text("segment,block,phase,config,switched_s,end_s"),
        series in csv_text("t_s,rx_pkts"),
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::create(tmp.path(), &Campaign::default()).unwrap();
        let dir = store.alternating_dir("default", "inet4");
        std::fs::create_dir_all(dir.join("segment-1")).unwrap();
        std::fs::write(dir.join("phases.csv"), phases).unwrap();
        std::fs::write(dir.join("segment-1/series.csv"), series).unwrap();
        let _ = store.read_phases("default", "inet4");
        let _ = store.read_series("default", "inet4", 1);
    }

    #[test]
    fn search_records_never_panic(text in prop_oneof![search_json(), "[ -~\n]{0,200}"]) {
        let tmp = tempfile::tempdir().unwrap();
        let campaign = Campaign::default();
        let store = Store::create(tmp.path(), &campaign).unwrap();
        let key = &plan(&campaign)[0];
        store.begin_trial(key).unwrap();
        std::fs::write(store.trial_dir(key).join("search.json"), text).unwrap();
        let _ = store.read_search(key);
    }
}
