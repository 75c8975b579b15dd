//! Results directories for `tests/offline/bad_input.rs`: benchlab's (made through the library, then
//! damaged one file at a time) and netbenches' (a seed's pkt-gen log, then broken).

use std::path::{Path, PathBuf};

use benchlab::config::{defaults::CONFIG_SETS, Campaign};
use benchlab::store::{plan, SampleRow, Status, Store, TrialMeta};

use super::{case, text, with, Case, Entry, CAMPAIGN};

/// A benchlab results directory whose one finished trial reads back: three iterations of one
/// series, ten seconds each, in `dir`. Returns `dir`.
pub fn results_dir(dir: &Path) -> PathBuf {
    results_dir_with(dir, |_, _| {})
}

/// [`results_dir`], each trial's record passed through `edit` (trial index, record) before it
/// is written.
pub fn results_dir_with(dir: &Path, edit: impl Fn(usize, &mut TrialMeta)) -> PathBuf {
    let campaign = Campaign::from_toml(CAMPAIGN, "campaign.toml", &CONFIG_SETS).unwrap();
    let store = Store::create(dir, &campaign).unwrap();
    for (i, key) in plan(&campaign).into_iter().enumerate() {
        let rows: Vec<SampleRow> = (1..=10)
            .map(|t| SampleRow {
                t_s: f64::from(t),
                tx_pkts: 1000,
                rx_pkts: 990,
                tx_pps: 1000.0,
                rx_pps: 990.0 + f64::from(t),
            })
            .collect();
        let mut meta = TrialMeta {
            trial: key.to_string(),
            start_unix_s: 1.0,
            end_unix_s: 11.0,
            offered_pps: None,
            tx_pps: 1000.0,
            rx_pps: 995.0,
            tx_pkts: 10_000,
            rx_pkts: 9_950,
            lost_pkts: 50,
            measured_samples: 7,
            generator: None,
            status: Status::Ok,
            flags: vec![],
            failure: None,
            attempts: 1,
            discarded: None,
            overhead_s: 0.1,
            capture: None,
            latency: None,
            others: None,
        };
        edit(i, &mut meta);
        store.begin_trial(&key).unwrap();
        store.finish_trial(&key, &rows, &meta).unwrap();
    }
    dir.to_path_buf()
}

/// The first trial's directory inside a copy of the results directory.
const TRIAL: &str = "r/runs/default.forwarding.inet4.1";
const HEAD: &str = "t_s,tx_pkts,rx_pkts,tx_pps,rx_pps\n";

/// Results directories with one file damaged, reported or resumed.
pub fn results(base: &Path) -> Vec<Case> {
    let tree = || ("r".to_string(), Entry::Tree(base.to_path_buf()));
    let samples = |body: String| (format!("{TRIAL}/samples.csv"), Entry::Text(body));
    let row = |v: &str| format!("{HEAD}1.000,1000,990,1000.0,990.0\n2.000,1000,990,1000.0,{v}\n");
    let mut damaged: Vec<(String, (String, Entry))> = Vec::new();
    for v in [
        "nan", "NaN", "-990.0", "inf", "1e308", "-0.0", "", "9x", "1.5e308", "0x10",
    ] {
        damaged.push((format!("samples.csv rx_pps {v:?}"), samples(row(v))));
    }
    damaged.push((
        "samples.csv cut off".into(),
        samples(format!("{HEAD}1.000,1000,990,1000.0,99")),
    ));
    damaged.push((
        "samples.csv bad header".into(),
        samples("t,rx\n1,2\n".into()),
    ));
    damaged.push((
        "samples.csv 4 fields".into(),
        samples(format!("{HEAD}1.000,1000,990,1000.0\n")),
    ));
    damaged.push((
        "samples.csv negative count".into(),
        samples(format!("{HEAD}1.000,-1,990,1000.0,990.0\n")),
    ));
    damaged.push(("samples.csv empty".into(), samples(String::new())));
    let file = |name: &str, entry: Entry| (format!("{TRIAL}/{name}"), entry);
    damaged.push((
        "samples.csv a FIFO".into(),
        file("samples.csv", Entry::Fifo),
    ));
    damaged.push((
        "samples.csv /dev/zero".into(),
        file("samples.csv", Entry::Link("/dev/zero".into())),
    ));
    damaged.push((
        "samples.csv of 70 MiB".into(),
        file("samples.csv", Entry::Sparse(70 << 20)),
    ));
    damaged.push((
        "samples.csv a directory".into(),
        file("samples.csv", Entry::Dir),
    ));
    damaged.push((
        "meta.json cut off".into(),
        file("meta.json", Entry::Text("{ \"trial\":".into())),
    ));
    damaged.push(("meta.json a FIFO".into(), file("meta.json", Entry::Fifo)));
    damaged.push((
        "meta.json of 70 MiB".into(),
        file("meta.json", Entry::Sparse(70 << 20)),
    ));
    damaged.push((
        "a stray file in runs/".into(),
        text("r/runs/notes.txt", "x"),
    ));
    damaged.push((
        "campaign.toml damaged".into(),
        text("r/campaign.toml", "iterations = \"x\"\n"),
    ));
    damaged.push((
        "campaign.toml a FIFO".into(),
        ("r/campaign.toml".into(), Entry::Fifo),
    ));
    damaged.push((
        "campaign.toml iterations = 4294967295".into(),
        text("r/campaign.toml", with("iterations", "4294967295")),
    ));
    damaged.push(("lab.json damaged".into(), text("r/lab.json", "{ half")));
    damaged.push((
        "lab.json /dev/zero".into(),
        ("r/lab.json".into(), Entry::Link("/dev/zero".into())),
    ));
    let mut cases = Vec::new();
    for (name, broken) in damaged {
        cases.push(case(
            format!("report: {name}"),
            &["report", "r", "-o", "out"],
            vec![tree(), text("x", ""), broken],
        ));
    }
    // The campaign file gone: not "no netbenches results".
    let mut gone = case(
        "report: no campaign.toml",
        &["report", "r", "-o", "out"],
        vec![tree()],
    );
    gone.files.push(("r/campaign.toml".into(), Entry::Dir));
    cases.push(gone);
    cases.push(case(
        "report: -o is a file",
        &["report", "r", "-o", "out"],
        vec![tree(), text("out", "x")],
    ));
    cases.push(case(
        "resume: a damaged campaign",
        &["run", "--resume", "r", "--check"],
        vec![tree(), text("r/campaign.toml", "bogus = 1\n")],
    ));
    cases.push(case(
        "resume: a stray entry in runs/",
        &["run", "--resume", "r"],
        vec![tree(), text("r/runs/junk", "x")],
    ));
    cases.push(case(
        "resume: campaign file differs",
        &["run", "campaign.toml", "--resume", "r"],
        vec![tree(), text("campaign.toml", with("iterations", "4"))],
    ));
    let mut locked = case(
        "resume: another benchlab holds the directory",
        &["run", "--resume", "r"],
        vec![tree()],
    );
    locked.locked = Some("r".into());
    cases.push(locked);
    cases
}

/// A netbenches directory of one series, three iterations (see [`controls`]).
pub fn netbenches_files(receiver: &str) -> Vec<(String, Entry)> {
    let info = "IMAGE=\"1\"\nCFG=\"fw\"\nPKTGEN=\"\"\n";
    let mut files = vec![text("nb/bench.1.fw.info", info)];
    for i in 1..=3 {
        files.push(text(&format!("nb/bench.1.fw.{i}.receiver"), receiver));
    }
    files
}

/// A real pkt-gen receiver log (netbenches seed 003), with the rate of every second replaced
/// by `pps` when given.
pub fn pktgen_log(pps: Option<&str>) -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/netbenches/003/bench.299288.fastforwarding.1.receiver"
    );
    let log = std::fs::read_to_string(path).unwrap();
    let Some(pps) = pps else {
        return log;
    };
    let mut seconds = 0;
    let lines: Vec<String> = log
        .lines()
        .map(|l| match l.split_once("] ") {
            Some((head, rest)) if rest.contains(" pps (") => {
                seconds += 1;
                format!("{head}] {pps} {}", rest.split_once(' ').unwrap().1)
            }
            _ => l.to_string(),
        })
        .collect();
    assert!(seconds > 10, "the seed log has per-second lines");
    lines.join("\n") + "\n"
}

/// netbenches directories with one thing wrong.
pub fn netbenches() -> Vec<Case> {
    let report = ["report", "nb", "-o", "out"];
    let mut cases = Vec::new();
    let good = pktgen_log(None);
    for iteration in ["20000000", "4000000000", "9999999999999999"] {
        let mut files = netbenches_files(&good);
        files.push(text(
            &format!("nb/bench.1.fw.{iteration}.receiver"),
            good.clone(),
        ));
        cases.push(case(
            format!("netbenches: iteration {iteration}"),
            &report,
            files,
        ));
    }
    let odd: [(&str, Entry); 4] = [
        ("a FIFO log", Entry::Fifo),
        ("/dev/zero as log", Entry::Link("/dev/zero".into())),
        ("a log of 70 MiB", Entry::Sparse(70 << 20)),
        ("a directory as log", Entry::Dir),
    ];
    for (name, entry) in odd {
        let mut files = netbenches_files(&good);
        files.retain(|(n, _)| !n.ends_with(".3.receiver"));
        files.push(("nb/bench.1.fw.3.receiver".into(), entry));
        cases.push(case(format!("netbenches: {name}"), &report, files));
    }
    let mut fifo_info = netbenches_files(&good);
    fifo_info[0].1 = Entry::Fifo;
    cases.push(case("netbenches: .info a FIFO", &report, fifo_info));
    let with_flags: &[&[&str]] = &[
        &["report", "nb", "-o", "out", "--versions", "foo"],
        &["report", "nb", "-o", "out", "--configs", "foo"],
        &["report", "nb", "-o", "out", "--versions", ""],
    ];
    for args in with_flags {
        cases.push(case(
            format!("netbenches: `{}`", args.join(" ")),
            args,
            netbenches_files(&good),
        ));
    }
    cases.push(case(
        "netbenches: an empty directory",
        &report,
        vec![("nb".into(), Entry::Dir)],
    ));
    cases
}
