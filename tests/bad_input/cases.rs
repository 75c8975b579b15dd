//! The cases of `tests/offline/bad_input.rs`: small generated files and the command line that reads
//! them. Each family starts from a well-formed input (see [`controls`]) and breaks one thing.

use std::path::{Path, PathBuf};

/// Results directories: benchlab's and netbenches'.
pub mod dirs;
/// Other input files, line breaks in paths, ministat's bounds.
pub mod more;

use dirs::{netbenches, netbenches_files, pktgen_log, results};

/// A file of a case's directory.
pub enum Entry {
    /// A regular file with this text.
    Text(String),
    /// A regular file with these bytes.
    Bytes(Vec<u8>),
    /// A named pipe (opening it to read blocks until a writer comes).
    Fifo,
    /// A symbolic link to this target.
    Link(String),
    /// A sparse regular file of this many bytes.
    Sparse(u64),
    /// An empty directory.
    Dir,
    /// A copy of this directory.
    Tree(PathBuf),
}

/// One malformed input and the command that reads it.
pub struct Case {
    /// What is broken, for the failure message.
    pub name: String,
    /// benchlab's arguments, run in the case's directory.
    pub args: Vec<String>,
    /// The files laid out in the case's directory first.
    pub files: Vec<(String, Entry)>,
    /// A directory (relative to the case's) the test locks while the case runs.
    pub locked: Option<String>,
    /// A ministat usage error: its one line is followed by ministat's own usage text.
    pub usage: bool,
}

pub fn case(name: impl Into<String>, args: &[&str], files: Vec<(String, Entry)>) -> Case {
    Case {
        name: name.into(),
        args: args.iter().map(|a| a.to_string()).collect(),
        files,
        locked: None,
        usage: false,
    }
}

pub fn text(name: &str, body: impl Into<String>) -> (String, Entry) {
    (name.to_string(), Entry::Text(body.into()))
}

/// A well-formed campaign, small and quick, in the trials design.
pub const CAMPAIGN: &str = r#"title = "bad input"
iterations = 3
design = "trials"
config_sets = ["forwarding"]

[trial]
duration = 10
warmup = 2
cooldown = 1

[[profiles]]
name = "inet4"
af = "inet4"
frame_size = 64
src = "198.18.10.1:2000-198.18.10.20"
dst = "198.19.10.1:2000-198.19.10.100"
rate = "max"
"#;

/// [`CAMPAIGN`] with the line that sets `key` replaced by `key = value`.
pub fn with(key: &str, value: &str) -> String {
    let mut found = false;
    let text: Vec<String> = CAMPAIGN
        .lines()
        .map(|l| match l.split_once(" = ") {
            Some((k, _)) if k == key && !found => {
                found = true;
                format!("{key} = {value}")
            }
            _ => l.to_string(),
        })
        .collect();
    assert!(found, "no key {key} in the campaign");
    text.join("\n") + "\n"
}

/// `benchlab run campaign.toml --check` on `body`.
fn campaign_case(name: impl Into<String>, body: String) -> Case {
    case(
        name,
        &["run", "campaign.toml", "--check"],
        vec![text("campaign.toml", body)],
    )
}

/// Campaign files with one number, name or range out of bounds.
fn campaign_values() -> Vec<Case> {
    let mut cases = Vec::new();
    let numbers = [
        "-1", "nan", "inf", "-inf", "1e300", "\"ten\"", "true", "[]", "{}", "1e-400x",
    ];
    for key in ["duration", "warmup", "cooldown"] {
        for v in numbers {
            cases.push(campaign_case(format!("trial.{key} = {v}"), with(key, v)));
        }
    }
    for v in [
        "0",
        "-1",
        "4294967295",
        "20000000",
        "10001",
        "1.5",
        "nan",
        "\"3\"",
    ] {
        cases.push(campaign_case(
            format!("iterations = {v}"),
            with("iterations", v),
        ));
    }
    for v in ["0", "-64", "63", "100000", "1.5", "nan", "\"64\""] {
        cases.push(campaign_case(
            format!("frame_size = {v}"),
            with("frame_size", v),
        ));
    }
    for v in ["1.5", "-1", "0.0", "\"fast\"", "nan", "[]"] {
        cases.push(campaign_case(format!("rate = {v}"), with("rate", v)));
    }
    let ranges = [
        "\"\"",
        "\"x\"",
        "\"198.18.10.300\"",
        "\"198.18.10.20-198.18.10.1\"",
        "\"198.18.10.1:70000\"",
        "\"198.18.10.1:2000-198.18.10.20:1000\"",
        "\"[::1\"",
        "\"2001::g\"",
        "\"198.18.10.1:2000-\"",
        "42",
    ];
    for key in ["src", "dst"] {
        for v in ranges {
            cases.push(campaign_case(format!("{key} = {v}"), with(key, v)));
        }
    }
    let long = format!("\"{}\"", "n".repeat(300));
    let names = [
        "\"\"",
        "\"a.b\"",
        "\"a/b\"",
        "\"a b\"",
        "\"a\\nb\"",
        &long,
        "\"é\"",
        "1",
    ];
    for v in names {
        cases.push(campaign_case(
            format!("profile name = {v}"),
            with("name", v),
        ));
    }
    for v in ["\"inet5\"", "\"\"", "4"] {
        cases.push(campaign_case(format!("af = {v}"), with("af", v)));
    }
    for v in ["\"both\"", "\"\"", "1"] {
        cases.push(campaign_case(format!("design = {v}"), with("design", v)));
    }
    cases
}

/// Campaign files with a list, section or key that does not fit.
fn campaign_shapes() -> Vec<Case> {
    let mut cases = Vec::new();
    let sets = [
        "[]",
        "[\"no-such-set\"]",
        "[\"./missing-dir\"]",
        "[\"forwarding\", \"forwarding\"]",
        "\"forwarding\"",
        "[1]",
        "[\"a\\nb\"]",
    ];
    for v in sets {
        cases.push(campaign_case(
            format!("config_sets = {v}"),
            with("config_sets", v),
        ));
    }
    let no_profiles: String = CAMPAIGN.split("[[profiles]]").next().unwrap().to_string();
    cases.push(campaign_case(
        "profiles = []",
        no_profiles.replace("config_sets", "profiles = []\nconfig_sets"),
    ));
    let twice = CAMPAIGN.to_string() + &CAMPAIGN[CAMPAIGN.find("[[profiles]]").unwrap()..];
    cases.push(campaign_case("a profile twice", twice));
    let versions = [
        "online_timeout = -1",
        "online_timeout = nan",
        "online_timeout = inf",
        "online_timeout = 1e300",
        "online_timeout = \"5\"",
        "commands = [[]]",
        "commands = \"ls\"",
        "name = \"a\\nb\"",
        "bogus = 1",
    ];
    for v in versions {
        let body = format!("{CAMPAIGN}\n[[versions]]\nname = \"v1\"\n{v}\n");
        let body = body.replace("name = \"v1\"\nname =", "name =");
        cases.push(campaign_case(format!("[[versions]] {v}"), body));
    }
    let duplicate =
        format!("{CAMPAIGN}\n[[versions]]\nname = \"v\"\n\n[[versions]]\nname = \"v\"\n");
    cases.push(campaign_case("a version twice", duplicate));
    for hook in [
        "before = [[]]",
        "during = [[]]",
        "after = [[]]",
        "before = \"ls\"",
    ] {
        cases.push(campaign_case(
            format!("[hooks] {hook}"),
            format!("{CAMPAIGN}\n[hooks]\n{hook}\n"),
        ));
    }
    let alternating = [
        "phase = -1",
        "phase = nan",
        "settle = 1e300",
        "settle = -1",
        "precision = -1",
        "max_duration = inf",
        "min_blocks = -1",
        "estimator = \"mode\"",
    ];
    for v in alternating {
        let body = with("design", "\"alternating\"")
            .replace("[\"forwarding\"]", "[\"forwarding\", \"nft-stateful\"]");
        cases.push(campaign_case(
            format!("[alternating] {v}"),
            format!("{body}\n[alternating]\n{v}\n"),
        ));
    }
    let alternating_in_trials = format!("{CAMPAIGN}\n[alternating]\nphase = 0.5\n");
    cases.push(campaign_case(
        "[alternating] under design = trials",
        alternating_in_trials,
    ));
    // Latency: the probes above a fixed load, `[latency]` out of range, a two-clock SSH lab.
    let probed = with("rate", "5000").replace("cooldown = 1", "cooldown = 1\nlatency = true");
    cases.push(campaign_case("probe rate above the load", probed.clone()));
    let latency = [
        "rate = 0",
        "rate = 2000000",
        "loads = []",
        "loads = [10, 10]",
        "loads = [101]",
        "alternating_load = 0",
        "blocks = 1",
        "floor_duration = -1",
        "floor_duration = 0",
        "bogus = 1",
    ];
    for v in latency {
        cases.push(campaign_case(
            format!("[latency] {v}"),
            format!(
                "{}\n[latency]\n{v}\n",
                with("rate", "\"max\"").replace("cooldown = 1", "cooldown = 1\nlatency = true")
            ),
        ));
    }
    let two_clocks = probed.replace("rate = 5000", "rate = \"max\"")
        + "\n[lab.hosts.dut]\ntransport = \"ssh\"\nhost = \"dut\"\n\
           [lab.hosts.sender]\ntransport = \"ssh\"\nhost = \"gen\"\ninterface = \"eth1\"\n\
           dut_mac = \"02:00:00:00:00:01\"\n\
           [lab.hosts.receiver]\ntransport = \"ssh\"\nhost = \"rx\"\ninterface = \"eth2\"\n";
    cases.push(campaign_case("latency on a two-clock SSH lab", two_clocks));
    let lab = ["bogus = 1", "hosts = 3", "dut = 5"];
    for v in lab {
        cases.push(campaign_case(
            format!("[lab] {v}"),
            format!("{CAMPAIGN}\n[lab]\n{v}\n"),
        ));
    }
    let syntax = [
        ("unknown key", format!("{CAMPAIGN}bogus = 1\n")),
        (
            "unknown top-level key",
            format!("online_timeout = -1\n{CAMPAIGN}"),
        ),
        ("unclosed string", format!("{CAMPAIGN}title = \"x\n")),
        ("unclosed table", format!("{CAMPAIGN}[trial\n")),
        ("a key twice", format!("iterations = 3\n{CAMPAIGN}")),
        ("a bare word", "this is not toml\n".to_string()),
        (
            "a section twice",
            format!("{CAMPAIGN}\n[trial]\nduration = 10\n"),
        ),
    ];
    for (name, body) in syntax {
        cases.push(campaign_case(name, body));
    }
    cases.push(case(
        "binary campaign file",
        &["run", "campaign.toml", "--check"],
        vec![(
            "campaign.toml".into(),
            Entry::Bytes(vec![0xff, 0xfe, 0, 0x80, b'\n']),
        )],
    ));
    cases
}

/// Campaign files that are no regular file, or too large.
fn campaign_files() -> Vec<Case> {
    let run = ["run", "campaign.toml", "--check"];
    vec![
        case("missing campaign file", &run, vec![]),
        case(
            "campaign file is a directory",
            &run,
            vec![("campaign.toml".into(), Entry::Dir)],
        ),
        case(
            "campaign file is a FIFO",
            &run,
            vec![("campaign.toml".into(), Entry::Fifo)],
        ),
        case(
            "campaign file is /dev/zero",
            &run,
            vec![("campaign.toml".into(), Entry::Link("/dev/zero".into()))],
        ),
        case(
            "campaign file of 70 MiB",
            &run,
            vec![("campaign.toml".into(), Entry::Sparse(70 << 20))],
        ),
        case(
            "campaign file is a dangling link",
            &run,
            vec![("campaign.toml".into(), Entry::Link("nowhere".into()))],
        ),
    ]
}

/// Command-line flags out of range or unknown.
fn flags() -> Vec<Case> {
    let lines: &[&[&str]] = &[
        &["run", "--duration", "-1", "--check"],
        &["run", "--duration", "1e300", "--check"],
        &["run", "--duration", "nan", "--check"],
        &["run", "--duration", "inf", "--check"],
        &["run", "--duration", "0", "--check"],
        &["run", "--duration", "ten", "--check"],
        &["run", "-n", "0", "--check"],
        &["run", "-n", "-1", "--check"],
        &["run", "-n", "4294967295", "--check"],
        &["run", "-n", "99999999999", "--check"],
        &["run", "-n", "1.5", "--check"],
        &["run", "--profile-delay", "-1", "--check"],
        &["run", "--profile-delay", "nan", "--check"],
        &["run", "--profile-delay", "1e300", "--check"],
        &["run", "--bogus"],
        &["run", "a.toml", "b.toml", "--check"],
        &["run", "--resume"],
        &["run", "--resume", "missing-dir", "--check"],
        &["run", "--resume", "missing-dir"],
        &["report"],
        &["report", "missing-dir"],
        &["report", "--ministat", "foo", "."],
        &["report", "--bogus", "."],
        &["bogus"],
        &["ministat", "missing.txt"],
        &["ministat", "-"],
        &["lab", "bogus"],
        &["gen", "--bogus"],
        &["rx", "--bogus"],
        &["probe", "--bogus"],
        &[
            "probe",
            "-i",
            "lo",
            "-S",
            "02:00:00:00:00:01",
            "-D",
            "02:00:00:00:00:02",
            "-s",
            "198.18.0.1",
            "-d",
            "198.19.0.1",
            "-R",
            "lo",
            "-r",
            "0",
        ],
    ];
    lines
        .iter()
        .map(|args| case(format!("flags `{}`", args.join(" ")), args, vec![]))
        .collect()
}

/// ministat data files that do not read (its usage errors keep ministat's own usage text).
fn ministat() -> Vec<Case> {
    let data: &[(&str, Entry)] = &[
        ("a word", Entry::Text("1\n2\nabc\n".into())),
        ("a number and a word", Entry::Text("1\n2x\n3\n".into())),
        ("binary", Entry::Bytes(vec![0xff, 0xfe, 0x00, b'\n'])),
        ("a FIFO", Entry::Fifo),
        ("/dev/zero", Entry::Link("/dev/zero".into())),
        ("/dev/urandom", Entry::Link("/dev/urandom".into())),
        ("a dangling link", Entry::Link("nowhere".into())),
        ("a trailing comma", Entry::Text("1\n2,\n3\n".into())),
    ];
    let mut cases: Vec<Case> = data
        .iter()
        .map(|(name, entry)| {
            let entry = match entry {
                Entry::Text(t) => Entry::Text(t.clone()),
                Entry::Bytes(b) => Entry::Bytes(b.clone()),
                Entry::Fifo => Entry::Fifo,
                Entry::Link(t) => Entry::Link(t.clone()),
                _ => unreachable!(),
            };
            case(
                format!("ministat on {name}"),
                &["ministat", "data"],
                vec![("data".into(), entry)],
            )
        })
        .collect();
    let ok = || text("ok", "1\n2\n3\n");
    cases.push(case(
        "ministat: second file missing",
        &["ministat", "ok", "missing"],
        vec![ok()],
    ));
    cases.push(case(
        "ministat: a FIFO second",
        &["ministat", "ok", "fifo"],
        vec![ok(), ("fifo".into(), Entry::Fifo)],
    ));
    cases
}

/// Every malformed input.
pub fn all(results_base: &Path) -> Vec<Case> {
    let mut cases = campaign_values();
    cases.extend(campaign_shapes());
    cases.extend(campaign_files());
    cases.extend(flags());
    cases.extend(ministat());
    cases.extend(results(results_base));
    cases.extend(netbenches());
    cases.extend(more::other_files(results_base));
    cases.extend(more::line_breaks());
    cases.extend(more::negative_numbers());
    cases.extend(more::search_values());
    cases.extend(more::ministat_usage());
    cases
}

/// The well-formed inputs the families break: each must be accepted (exit 0).
pub fn controls(results_base: &Path) -> Vec<Case> {
    let tree = ("r".to_string(), Entry::Tree(results_base.to_path_buf()));
    let mut ds_store = case(
        "report with .DS_Store in runs/",
        &["report", "r", "-o", "out"],
        vec![tree],
    );
    ds_store.files.push(text("r/runs/.DS_Store", "Finder"));
    vec![
        campaign_case("campaign", CAMPAIGN.to_string()),
        case(
            "ministat",
            &["ministat", "ok"],
            vec![text("ok", "1\n2\n3\n")],
        ),
        ds_store,
        case(
            "netbenches",
            &["report", "nb", "-o", "out"],
            netbenches_files(&pktgen_log(None)),
        ),
        more::huge_rates_control(),
        more::search_control(),
    ]
}
