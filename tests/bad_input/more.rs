//! Cases of `tests/offline/bad_input.rs` found when going through issue 13 item by item: input files
//! read elsewhere than the campaign and the results (LAB.toml, report.toml, an archive's own
//! README.md), names with a line break in a path, and ministat's bounds.

use std::path::Path;

use super::dirs::{netbenches_files, pktgen_log};
use super::{case, text, Case, Entry};

/// Files other than the campaign and the trials: each refused in one line, none waited on.
pub fn other_files(results_base: &Path) -> Vec<Case> {
    let status = ["lab", "status", "LAB.toml"];
    let lab: [(&str, Entry); 5] = [
        ("a FIFO", Entry::Fifo),
        ("/dev/zero", Entry::Link("/dev/zero".into())),
        ("of 70 MiB", Entry::Sparse(70 << 20)),
        ("an unclosed table", Entry::Text("[lab\n".into())),
        ("id = -1", Entry::Text("id = -1\n".into())),
    ];
    let mut cases: Vec<Case> = lab
        .into_iter()
        .map(|(name, entry)| {
            case(
                format!("LAB.toml {name}"),
                &status,
                vec![("LAB.toml".into(), entry)],
            )
        })
        .collect();
    let tree = || ("r".to_string(), Entry::Tree(results_base.to_path_buf()));
    let report_toml: [(&str, Entry); 4] = [
        ("an unclosed table", Entry::Text("[labels\n".into())),
        ("title = 5", Entry::Text("title = 5\n".into())),
        ("a FIFO", Entry::Fifo),
        ("/dev/zero", Entry::Link("/dev/zero".into())),
    ];
    for (name, entry) in report_toml {
        cases.push(case(
            format!("report.toml {name}"),
            &["report", "r", "-o", "out"],
            vec![tree(), ("r/report.toml".into(), entry)],
        ));
    }
    // Without -o the report goes beside the logs: the archive's own files are not waited on
    // (a FIFO README) nor overwritten.
    let own: [(&str, Entry); 3] = [
        ("README.md", Entry::Fifo),
        (
            "gnuplot.data",
            Entry::Text("#key median minimum maximum\n".into()),
        ),
        ("graph.png", Entry::Link("/dev/zero".into())),
    ];
    for (name, entry) in own {
        let mut files = netbenches_files(&pktgen_log(None));
        files.push((format!("nb/{name}"), entry));
        cases.push(case(
            format!("netbenches without -o: the archive's {name}"),
            &["report", "nb"],
            files,
        ));
    }
    cases
}

/// The throughput example with its first `from` replaced by `to`.
fn throughput(from: &str, to: &str) -> String {
    let example = include_str!("../../examples/throughput.toml");
    assert!(example.contains(from), "no {from} in the example");
    example.replacen(from, to, 1)
}

/// `[search]` numbers out of range: refused at load, before any lab is built.
pub fn search_values() -> Vec<Case> {
    let changes = [
        ("min_load = 9001", "min_load = nan"),
        ("min_load = 9001", "min_load = -1"),
        ("min_load = 9001", "min_load = 1e300"),
        ("min_load = 9001", "min_load = 9001\nmax_load = 1e300"),
        ("search_duration_max = 1200", "search_duration_max = 1e300"),
        ("search_duration_max = 1200", "search_duration_max = inf"),
        ("warmup_duration = 1 ", "warmup_duration = -1 "),
        ("loss_ratio = 0.0", "loss_ratio = nan"),
        ("loss_ratio = 0.0", "loss_ratio = 2"),
        ("duration_sum = 21", "duration_sum = 1e300"),
        (
            "initial_trial_duration = 1",
            "initial_trial_duration = 1e300",
        ),
    ];
    changes
        .iter()
        .map(|(from, to)| {
            case(
                format!("[search] {to}"),
                &["run", "campaign.toml", "--check"],
                vec![text("campaign.toml", throughput(from, to))],
            )
        })
        .collect()
}

/// The throughput example as it is, which [`search_values`] breaks: accepted.
pub fn search_control() -> Case {
    case(
        "the throughput example",
        &["run", "campaign.toml", "--check"],
        vec![text("campaign.toml", throughput("", ""))],
    )
}

/// Negative numbers given to `gen`, `rx` and `probe`: read as the value they are and refused, not taken
/// for an option.
pub fn negative_numbers() -> Vec<Case> {
    let lines: &[&[&str]] = &[
        &["gen", "-i", "lo", "-t", "-1"],
        &["gen", "-i", "lo", "-n", "-1"],
        &["gen", "-i", "lo", "-r", "-1"],
        &["gen", "-i", "lo", "-t", "1e300"],
        &["rx", "-i", "lo", "-t", "-1"],
        &["rx", "-i", "lo", "--interval", "-0.5"],
        &["rx", "-i", "lo", "--interval", "nan"],
        &["probe", "-i", "lo", "-t", "-1"],
        &["probe", "-i", "lo", "-r", "-1"],
    ];
    lines
        .iter()
        .map(|args| case(format!("flags `{}`", args.join(" ")), args, vec![]))
        .collect()
}

/// Paths with a line break: still one line.
pub fn line_breaks() -> Vec<Case> {
    let lines: &[&[&str]] = &[
        &["report", "no\nsuch"],
        &["run", "c\n.toml", "--check"],
        &["run", "--resume", "no\nsuch"],
        &["ministat", "x\ny"],
        &["lab", "status", "no\nsuch.toml"],
    ];
    lines
        .iter()
        .map(|args| case(format!("{args:?}"), args, vec![]))
        .collect()
}

/// ministat's bounds: a reason line, then ministat's own usage text (its contract).
pub fn ministat_usage() -> Vec<Case> {
    let lines: &[&[&str]] = &[
        &["ministat", "-w", "2147483647", "ok"],
        &["ministat", "-w", "10001", "ok"],
        &["ministat", "-w", "-5", "ok"],
        &["ministat", "-w", "x", "ok"],
        &["ministat", "-C", "0", "ok"],
        &["ministat", "-c", "97", "ok"],
        &["ministat", "-c", "nan", "ok"],
    ];
    lines
        .iter()
        .map(|args| {
            let mut c = case(args.join(" "), args, vec![text("ok", "1\n2\n3\n")]);
            c.usage = true;
            c
        })
        .collect()
}

/// A pkt-gen log whose every rate is 1.5e308 pps: reported, left out of the graph (warned).
pub fn huge_rates_control() -> Case {
    case(
        "netbenches at 1.5e308 pps",
        &["report", "nb", "-o", "out"],
        netbenches_files(&pktgen_log(Some("1.5e308"))),
    )
}
