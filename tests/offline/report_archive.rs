//! `benchlab report` on netbenches directories in the archive's own layout (README.md and the
//! pmcstat graphs beside it, the pkt-gen logs in `RAW/`): the README's comparisons made again,
//! its difference lines printed verbatim or listed with the reason, every graph drawn or said.

use std::path::{Path, PathBuf};

use crate::common::copy_dir;

fn data(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(dir)
}

/// Seed `seed`'s logs, with its archive README beside them (`readme`), as the archive lays it
/// out: the pmcstat graphs moved out of `RAW/` next to the README.
fn archive(seed: &str, readme: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&data(&format!("netbenches/{seed}")), dir.path());
    if let Some(text) = readme {
        std::fs::write(dir.path().join("README.md"), text).unwrap();
    }
    let raw = dir.path().join("RAW");
    for entry in std::fs::read_dir(&raw).into_iter().flatten() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".pmc.graph") {
            std::fs::rename(raw.join(&name), dir.path().join(&name)).unwrap();
        }
    }
    dir
}

fn archive_readme(seed: &str) -> String {
    std::fs::read_to_string(data(&format!("netbenches-archive/{seed}-README.md"))).unwrap()
}

/// Runs `benchlab report DIR -o OUT`; returns (README, stderr, OUT).
fn report(dir: &Path) -> (String, String, tempfile::TempDir) {
    let out = tempfile::tempdir().unwrap();
    let run = crate::common::run(&[
        "report",
        dir.to_str().unwrap(),
        "-o",
        out.path().to_str().unwrap(),
    ]);
    let stderr = crate::common::stderr(&run);
    assert!(run.status.success(), "{stderr}");
    let readme = std::fs::read_to_string(out.path().join("README.md")).unwrap();
    (readme, stderr, out)
}

/// The `d +/- e` and `P% +/- Q%` lines of a README, trimmed, in order.
fn difference_lines(readme: &str) -> Vec<&str> {
    (readme.lines())
        .map(str::trim)
        .filter(|l| l.contains(" +/- "))
        .collect()
}

#[test]
fn the_seeds_difference_lines_come_out_verbatim_in_their_order() {
    for seed in ["002", "003"] {
        let theirs = archive_readme(seed);
        let dir = archive(seed, Some(&theirs));
        let (ours, stderr, _) = report(dir.path());
        let wanted = difference_lines(&theirs);
        assert!(!wanted.is_empty(), "{seed}");
        // The README's tables first, in its order.
        assert_eq!(
            difference_lines(&ours)[..wanted.len()],
            wanted,
            "{seed}: {stderr}"
        );
        assert!(ours.contains("  - Comparisons: the "), "{ours}");
        assert!(!ours.contains("not reproduced"), "{ours}");
    }
    // Without its README, seed 002's reference is the older version all the same: 11-stable
    // (r318516, 11.1) before 12-head (r318516M, 12.0), never the alphabetical 318516current.
    let (ours, _, _) = report(&data("netbenches/002"));
    let theirs = archive_readme("002");
    let wanted = difference_lines(&theirs);
    assert_eq!(difference_lines(&ours)[..wanted.len()], wanted);
    assert!(ours.contains("forwarding, inet4: 318516current -31.46% ± 1.20% against 318516stable"));
}

#[test]
fn relabelled_legends_are_matched_by_their_values() {
    // D27401: legends written by hand (`r368287: inet packets-per-second forwarded`), five
    // series in one table; the reference is its `x`, and no pair is compared twice.
    let (ours, _, _) = report(&data("netbenches-archive/xeon"));
    let theirs = std::fs::read_to_string(data("netbenches-archive/xeon/README.md")).unwrap();
    assert_eq!(difference_lines(&ours), difference_lines(&theirs));
    assert!(ours.contains("  - Comparisons: the 2 ministat table(s) of the archive's"));
    assert_eq!(ours.matches("against r368287 (95% confidence)").count(), 2);
}

#[test]
fn lines_no_table_reproduces_are_listed_with_the_reason() {
    let theirs = archive_readme("002")
        // A table made by the old ministat (its relative interval).
        .replace("-31.4594% +/- 1.20111%", "-31.4594% +/- 1.74446%")
        // An iteration left out of a .pps by hand, and so another difference.
        .replace("-32.3233% +/- 0.67941%", "-32.4102% +/- 0.70122%")
        .replace(
            "+   5        309273        312866        311377        311386     1383.8515",
            "+   4        309273        312866        311377        311386     1383.8515",
        );
    let dir = archive("002", Some(&theirs));
    let (ours, _, _) = report(dir.path());
    let section = ours
        .split("## The archive's difference lines not reproduced")
        .nth(1);
    let lines: Vec<&str> = (section.unwrap().lines())
        .filter(|l| l.starts_with("  - "))
        .collect();
    assert_eq!(lines.len(), 2, "{ours}");
    assert!(
        lines[0].starts_with(
            "  - table 1 of the archive's README.md, `+` against `x`: -31.4594% +/- 1.74446%: \
             made by ministat legacy"
        ),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains(
            "table 3 of the archive's README.md, `+` against `x`: -32.4102% +/- 0.70122%: \
             `318516current.ipfw-statefull.inet4.pps` has 4 values where the logs give 5"
        ),
        "{}",
        lines[1]
    );
    // The table left out is made by benchlab's own comparisons, with the README's reference.
    assert!(ours.contains("ipfw-statefull, inet4: 318516current -32.32% ± 0.68% against"));
}

#[test]
fn graphs_beside_the_readme_are_drawn_and_strays_said() {
    let dir = archive("002", None);
    let p = dir.path();
    // One without its iteration number, one naming no series of the logs.
    std::fs::rename(
        p.join("bench.318516current.forwarding.inet4.1.pmc.graph"),
        p.join("bench.318516current.forwarding.inet4.pmc.graph"),
    )
    .unwrap();
    std::fs::copy(
        p.join("bench.318516stable.forwarding.inet6.1.pmc.graph"),
        p.join("bench.r999999.inet4.pmc.graph"),
    )
    .unwrap();
    let (ours, _, out) = report(p);
    let svgs = std::fs::read_dir(out.path().join("flame")).unwrap().count();
    assert_eq!(svgs, 18, "twelve graphs and six differential ones");
    assert!(out
        .path()
        .join("flame/318516current.forwarding.inet4.svg")
        .is_file());
    assert!(
        ours.contains(
            "  - bench.r999999.inet4.pmc.graph: pmcstat call graph not drawn: no series of the \
             logs is named 'r999999.inet4'"
        ),
        "{ours}"
    );
}
