//! The ministat tables of the seed reports, reproduced from their `.pps` files.
//!
//! Seed 002 (2017) was made with the FreeBSD ministat of its time: `benchlab ministat -s`
//! (the default, current flavor) must reproduce it; seed 003 (2016) with the older one:
//! `benchlab ministat --legacy -s`. The seeds' tabs became 8 spaces, so the comparison is made
//! after expanding tabs; the only other difference allowed is a legend label edited by hand in
//! the seed ([`LABEL_EDITS`]).

use crate::common::expand;
use std::path::Path;
use std::process::Command;

/// Legend labels edited by hand in the seeds: (file name, label printed in the seed).
const LABEL_EDITS: &[(&str, &str)] = &[
    ("299288.fastforwarding.pps", "299288.forwarding.pps"),
    (
        "299288D8526.fastforwarding.pps",
        "299288D8526.forwarding.pps",
    ),
];

struct Case {
    golden: &'static str,
    legacy: bool,
    files: [&'static str; 2],
}

const CASES: &[Case] = &[
    Case {
        golden: "002-forwarding.inet4.txt",
        legacy: false,
        files: [
            "318516stable.forwarding.inet4.pps",
            "318516current.forwarding.inet4.pps",
        ],
    },
    Case {
        golden: "002-forwarding.inet6.txt",
        legacy: false,
        files: [
            "318516stable.forwarding.inet6.pps",
            "318516current.forwarding.inet6.pps",
        ],
    },
    Case {
        golden: "002-ipfw-statefull.inet4.txt",
        legacy: false,
        files: [
            "318516stable.ipfw-statefull.inet4.pps",
            "318516current.ipfw-statefull.inet4.pps",
        ],
    },
    Case {
        golden: "002-ipfw-statefull.inet6.txt",
        legacy: false,
        files: [
            "318516stable.ipfw-statefull.inet6.pps",
            "318516current.ipfw-statefull.inet6.pps",
        ],
    },
    Case {
        golden: "002-pf-statefull.inet4.txt",
        legacy: false,
        files: [
            "318516stable.pf-statefull.inet4.pps",
            "318516current.pf-statefull.inet4.pps",
        ],
    },
    Case {
        golden: "002-pf-statefull.inet6.txt",
        legacy: false,
        files: [
            "318516stable.pf-statefull.inet6.pps",
            "318516current.pf-statefull.inet6.pps",
        ],
    },
    Case {
        golden: "003-forwarding.txt",
        legacy: true,
        files: [
            "299288.fastforwarding.pps",
            "299288D8526.fastforwarding.pps",
        ],
    },
    Case {
        golden: "003-ipfw-statefull.txt",
        legacy: true,
        files: [
            "299288.ipfw-statefull.pps",
            "299288D8526.ipfw-statefull.pps",
        ],
    },
    Case {
        golden: "003-pf-statefull.txt",
        legacy: true,
        files: ["299288.pf-statefull.pps", "299288D8526.pf-statefull.pps"],
    },
];

/// Our output with the seed's hand-edited legend labels applied to the legend lines only.
fn with_seed_labels(output: &str, datasets: usize) -> String {
    let mut lines: Vec<String> = output.lines().map(str::to_string).collect();
    for line in lines.iter_mut().take(datasets) {
        if let Some((file, label)) = LABEL_EDITS.iter().find(|(file, _)| line.ends_with(file)) {
            *line = format!("{}{label}", &line[..line.len() - file.len()]);
        }
    }
    lines.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn seed_tables_are_reproduced() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    for case in CASES {
        let seed = &case.golden[..3];
        let golden = std::fs::read_to_string(data.join("ministat-seeds").join(case.golden))
            .expect("golden file is readable");
        let mut command = Command::new(env!("CARGO_BIN_EXE_benchlab"));
        command.arg("ministat");
        if case.legacy {
            command.arg("--legacy");
        }
        let output = command
            .arg("-s")
            .args(case.files)
            .current_dir(data.join("netbenches-pps").join(seed))
            .output()
            .expect("benchlab runs");
        assert!(output.status.success(), "{}: {output:?}", case.golden);
        let ours = expand(&String::from_utf8(output.stdout).expect("UTF-8 output"));
        assert_eq!(
            with_seed_labels(&ours, case.files.len()),
            golden,
            "{} differs from the seed",
            case.golden
        );
    }
}

#[test]
fn the_relative_interval_tells_the_flavors_apart() {
    // Seed 002's tables need the current relative interval: the legacy one differs there.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/netbenches-pps/002");
    let output = Command::new(env!("CARGO_BIN_EXE_benchlab"))
        .args(["ministat", "--legacy", "-s"])
        .args(CASES[0].files)
        .current_dir(dir)
        .output()
        .expect("benchlab runs");
    let text = String::from_utf8(output.stdout).expect("UTF-8 output");
    assert!(text.contains("\t-31.4594% +/- 1.74446%\n"), "{text}");
}
