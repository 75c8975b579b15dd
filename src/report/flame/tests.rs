//! Unit tests of `flame`.

use super::*;
use crate::profile::folded::fold_perf;

fn folded(lines: &[(&str, u64)]) -> Folded {
    Folded {
        stacks: lines.iter().map(|(s, c)| (s.to_string(), *c)).collect(),
    }
}

#[test]
fn idle_is_the_idle_loop_but_not_softirqs_on_top_of_it() {
    assert!(is_idle(
        "swapper;secondary_startup_64;cpu_startup_entry;do_idle;default_idle_call;\
             default_idle;pv_native_safe_halt"
    ));
    assert!(!is_idle(
        "swapper;cpu_startup_entry;do_idle;default_idle_call;pv_native_safe_halt;\
             asm_sysvec_apic_timer_interrupt;sysvec_apic_timer_interrupt;irq_exit_rcu;\
             __do_softirq;net_rx_action;__napi_poll;ip_forward"
    ));
    assert!(!is_idle("napi/x;__netif_receive_skb;ip_rcv;ip_forward"));
    assert!(is_idle(
        "idle: cpu1;fork_exit;sched_idletd;cpu_idle;acpi_cpu_idle"
    ));
}

#[test]
fn checks_reject_idle_and_absent_forwarding() {
    let busy = folded(&[
        (
            "napi/a;__napi_poll;__netif_receive_skb;ip_rcv;ip_forward",
            600,
        ),
        (
            "napi/a;__napi_poll;__netif_receive_skb;ip_rcv;nf_hook_slow;nft_do_chain",
            300,
        ),
        ("swapper;do_idle;default_idle", 100),
    ]);
    let c = check(&busy, false);
    assert!(c.published(), "{c:?}");
    assert_eq!(c.samples, 1000);
    assert_eq!((c.idle_share, c.forwarding_share), (0.1, 0.9));
    assert_eq!(
        c.forwarding_frames,
        [
            "__netif_receive_skb",
            "ip_rcv",
            "ip_forward",
            "nf_hook_slow",
            "nft_do_chain"
        ]
    );

    let idle = folded(&[
        ("swapper;do_idle;default_idle", 900),
        ("napi/a;ip_forward", 100),
    ]);
    let why = check(&idle, false).rejected.unwrap();
    assert!(why.contains("90% of the samples are idle"), "{why}");
    // Every CPU of a 10-core DUT, one of them forwarding: idle is expected there.
    assert_eq!(check(&idle, true).rejected, None);
    let stray = folded(&[
        ("swapper;do_idle;default_idle", 900),
        ("napi/a;ip_forward", 50),
    ]);
    let why = check(&stray, true).rejected.unwrap();
    assert!(why.contains("only 50 samples of work"), "{why}");

    let elsewhere = folded(&[("rustc;main;compile", 1000), ("napi/a;ip_forward", 5)]);
    let why = check(&elsewhere, false).rejected.unwrap();
    assert!(why.contains("forwarding path"), "{why}");

    let why = check(&folded(&[("napi/a;ip_forward", 10)]), false)
        .rejected
        .unwrap();
    assert!(why.contains("only 10 samples"), "{why}");
}

/// Real captures of this project's virtual lab (see tests/data/flame/README.md).
fn fixture(name: &str) -> String {
    let path = format!("{}/tests/data/flame/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn has_frame(f: &Folded, frame: &str) -> bool {
    f.stacks.keys().any(|s| s.split(';').any(|x| x == frame))
}

#[test]
fn perf_script_output_folds_into_one_stack_per_sample() {
    let f = fold_perf(fixture("nft-stateful.perf-script").as_bytes()).unwrap();
    assert_eq!(f.samples(), 60);
    assert!(f.stacks.keys().all(|s| !s.is_empty()));
    // Root first, the thread's name as the root frame (perf's comm).
    assert!(f
        .stacks
        .keys()
        .any(|s| s.starts_with("napi/bltf9d1-41;ret_from_fork_asm;ret_from_fork;kthread")));
    assert!(has_frame(&f, "nft_do_chain"));

    let idle = fold_perf(fixture("idle.perf-script").as_bytes()).unwrap();
    assert_eq!(idle.samples(), 120);
    let c = check(&idle, false);
    assert!(c.idle_share > 0.9, "{c:?}");
    assert!(c
        .rejected
        .unwrap()
        .contains("idle: the capture missed the traffic"));
    // 6 samples of other threads, and one softirq (RCU) on top of the idle loop: work.
    assert_eq!(idle.without_idle().samples(), 7);
}

#[test]
fn real_captures_pass_the_check_and_show_what_the_firewall_adds() {
    let fwd = Folded::parse(&fixture("forwarding.folded")).unwrap();
    let nft = Folded::parse(&fixture("nft-stateful.folded")).unwrap();
    for f in [&fwd, &nft] {
        let c = check(f, false);
        assert!(c.published(), "{c:?}");
        assert!(c.forwarding_share > 0.5, "{c:?}");
        assert!(c.forwarding_frames.contains(&"ip_forward".to_string()));
    }
    for frame in ["nf_conntrack_in", "nft_do_chain"] {
        assert!(has_frame(&nft, frame), "{frame}");
        assert!(!has_frame(&fwd, frame), "{frame}");
    }
}

#[test]
fn svgs_leave_idle_out_and_stay_small() {
    let nft = Folded::parse(&fixture("nft-stateful.folded")).unwrap();
    let mut with_idle = nft.clone();
    with_idle.stacks.insert(
        "swapper;do_idle;default_idle;pv_native_safe_halt".into(),
        50,
    );
    let svg = String::from_utf8(render(&with_idle, "t", "s").unwrap()).unwrap();
    assert!(svg.starts_with("<?xml") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("nft_do_chain"));
    assert!(!svg.contains("pv_native_safe_halt"));
    assert!(svg.len() < 300_000, "{} bytes", svg.len());
    // Same input, same bytes: a regenerated report does not change.
    assert_eq!(render(&with_idle, "t", "s").unwrap(), svg.as_bytes());

    let fwd = Folded::parse(&fixture("forwarding.folded")).unwrap();
    let diff = String::from_utf8(render_diff(&fwd, &nft, "t", "s").unwrap()).unwrap();
    assert!(diff.trim_end().ends_with("</svg>"));
    assert!(diff.contains("nf_conntrack_in"));
    assert!(diff.len() < 300_000, "{} bytes", diff.len());
}

#[test]
fn folded_text_round_trips_and_bad_lines_are_named() {
    let f = folded(&[("a;b c;d", 3), ("a;e", 1)]);
    assert_eq!(Folded::parse(&f.to_text()), Ok(f));
    assert_eq!(Folded::parse("a;b 1\na;c x\n"), Err(2));
    // Stacks no profiler records are damage too: too deep, a frame too long or with an escape.
    let deep = vec!["f"; crate::profile::folded::MAX_DEPTH + 1].join(";");
    assert_eq!(Folded::parse(&format!("a 1\n{deep} 1\n")), Err(2));
    let long = "f".repeat(crate::profile::folded::MAX_NAME_BYTES + 1);
    assert_eq!(Folded::parse(&format!("a;{long} 1\n")), Err(1));
    assert_eq!(Folded::parse("a;\u{1b}[2Jb 1\n"), Err(1));
    // Counts that would wrap a sum are damage, named by their line.
    let max = u64::MAX;
    assert_eq!(Folded::parse(&format!("a;b {max}\na;b {max}\n")), Err(1));
    assert_eq!(
        Folded::parse(&format!("a;b {}\na;c 1\n", 1u64 << 53)),
        Err(2)
    );
}

#[test]
fn file_names_leave_out_levels_without_a_name() {
    let flame = |version: &str, config: &str| Flame {
        version: version.into(),
        config: config.into(),
        profile: "inet4".into(),
        trial: String::new(),
        folded: Folded::default(),
        check: check(&Folded::default(), true),
        source: String::new(),
    };
    assert_eq!(
        flame("", "forwarding").svg_name(),
        "flame/forwarding.inet4.svg"
    );
    assert_eq!(flame("r1", "").diff_name(), "flame/diff.r1.inet4.svg");
    assert_eq!(flame("r1", "fw").svg_name(), "flame/r1.fw.inet4.svg");
}

/// Frames an SVG draws: inferno writes one `<g>` with a `<title>` per frame.
fn drawn_frames(svg: &[u8]) -> usize {
    String::from_utf8_lossy(svg).matches("<g><title>").count()
}

/// Seed 002's forwarding profile: the archive's SVG (FlameGraph, frames under 0.1 px of 1180 px
/// left out) draws 656 frames besides `all`; benchlab draws as many, not the 116 of a bound
/// read as 0.5 % of the samples.
#[test]
fn flamegraphs_draw_the_frames_flamegraph_draws() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
    let graph =
        format!("{dir}/netbenches/002/RAW/bench.318516current.forwarding.inet4.1.pmc.graph");
    let text = std::fs::read(&graph).unwrap();
    let folded = crate::profile::pmc::fold_pmcstat(text.as_slice(), "g").unwrap();
    let frames = format!("{dir}/pmc/bench.318516current.forwarding.inet4.1.pmc.frames");
    let archived = std::fs::read_to_string(frames).unwrap().lines().count();
    let svg = render(&folded, "t", "s").unwrap();
    assert_eq!(drawn_frames(&svg), archived);
    let stable = "318516stable.forwarding.inet4.1.pmc.graph";
    let text = std::fs::read(format!("{dir}/netbenches/002/RAW/bench.{stable}")).unwrap();
    let other = crate::profile::pmc::fold_pmcstat(text.as_slice(), "g").unwrap();
    let diff = render_diff(&other, &folded, "t", "s").unwrap();
    assert!(drawn_frames(&diff) > 600, "{}", drawn_frames(&diff));
}
