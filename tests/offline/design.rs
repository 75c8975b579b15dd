//! `run --check` says which design each example gets and why (`design = "auto"`), what it runs
//! and how long it takes: what a user reads before starting a campaign.

use crate::common::{run, stderr};

fn check(example: &str) -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/").to_string() + example;
    let out = run(&["run", &path, "--check"]);
    assert!(out.status.success(), "{example}: {}", stderr(&out));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_examples_get_the_design_their_question_needs() {
    let cases = [
        (
            "two-versions.toml",
            "design: alternating (chosen by benchlab: its quick versions",
        ),
        (
            "frame-sizes.toml",
            "design: alternating (chosen by benchlab: its config sets",
        ),
        (
            "default.toml",
            "design: alternating (chosen by benchlab: its config sets",
        ),
        (
            "ssh-lab.toml",
            "design: trials (chosen by benchlab: version `linux-6_1` installs or reboots",
        ),
        (
            "throughput.toml",
            "design: trials (chosen by benchlab: profile `inet4` searches a throughput",
        ),
    ];
    for (example, design) in cases {
        let text = check(example);
        assert!(text.contains(design), "{example}:\n{text}");
        assert!(
            text.contains("  runs:   ") && text.contains("  time:   "),
            "{text}"
        );
    }
    let text = check("two-versions.toml");
    assert!(text.contains("runs:   1 alternating run"), "{text}");
    assert!(text.contains("time:   at most 3 min"), "{text}");
    assert!(check("ssh-lab.toml").contains("runs:   20 trials"));
}
