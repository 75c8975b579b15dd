use super::*;

fn fold(text: &str) -> Result<Folded, PmcGraphError> {
    fold_pmcstat(text.as_bytes(), "g.pmc.graph")
}

fn stacks(f: &Folded) -> Vec<(&str, u64)> {
    f.stacks.iter().map(|(s, &c)| (s.as_str(), c)).collect()
}

/// The error's line and message, for the malformed-input tests.
fn problem(text: &str) -> (usize, String) {
    match fold(text) {
        Err(e @ PmcGraphError::Malformed { line, .. }) => (line, e.to_string()),
        other => panic!("expected a malformed graph, got {other:?}"),
    }
}

const GRAPH: &str = "@ BU_CPU_CLK_UNHALTED [10 samples]

70.00%  [7]       bzero @ /boot/kernel/kernel
 57.14%  [4]        fib4_lookup_nh_basic
  100.0%  [4]         ip_findroute
 42.86%  [3]        ip_tryforward
30.00%  [3]       sched_idletd @ /boot/kernel/kernel
 100.0%  [3]        fork_exit

@ BU_CPU_CLK_UNHALTED [2 samples]

100.0%  [2]       bzero @ /boot/kernel/kernel
 100.0%  [2]        ip_tryforward
";

#[test]
fn callers_become_stacks_root_first_and_cpus_add_up() {
    let f = fold(GRAPH).unwrap();
    assert_eq!(
        stacks(&f),
        [
            ("fork_exit;sched_idletd", 3),
            ("ip_findroute;fib4_lookup_nh_basic;bzero", 4),
            ("ip_tryforward;bzero", 5),
        ]
    );
    assert_eq!(f.samples(), 12);
    // The folded text reads back as the perf path's captures do.
    assert_eq!(Folded::parse(&f.to_text()), Ok(f));
}

#[test]
fn a_function_without_callers_is_a_stack_of_its_own() {
    let f = fold("@ E [5 samples]\n60.00%  [3]  a @ k\n40.00%  [2]  b\n 100.0%  [2]  c\n").unwrap();
    assert_eq!(stacks(&f), [("a", 3), ("c;b", 2)]);
}

#[test]
fn samples_beyond_what_the_callers_account_for_are_left_out_like_stackcollapse_pmc() {
    // Seed 002: cpu_switch [5] has callers for 4 samples only; FlameGraph's script, and so the
    // archived SVG, count 4.
    let f = fold(
        "@ E [5 samples]\n00.07%  [5]  cpu_switch @ k\n 80.00%  [4]  mi_switch\n\
         \x20 100.0%  [4]  sleepq_wait\n",
    )
    .unwrap();
    assert_eq!(stacks(&f), [("sleepq_wait;mi_switch;cpu_switch", 4)]);
}

#[test]
fn malformed_or_truncated_graphs_name_the_line() {
    let cases: &[(&str, usize, &str)] = &[
        ("", 1, "no `@ EVENT [N samples]` section"),
        ("\n\n", 3, "no `@ EVENT"),
        ("50.0%  [1]  a\n", 1, "an entry before any `@ EVENT"),
        ("@ E [x samples]\n", 1, "a header that is not"),
        (
            "@ E [1 samples]\n100.0%  [1]  a\n  100.0%  [1]  b\n",
            3,
            "indented 1 levels below",
        ),
        (
            "@ E [1 samples]\n 100.0%  [1]  a\n",
            2,
            "indented 1 levels below",
        ),
        ("@ E [1 samples]\n100.0%  [1", 2, "the last line is cut"),
        (
            "@ E [1 samples]\n100.0%  [1]  a\n 100.0%  [1]  b",
            3,
            "the last line is cut",
        ),
        (
            "@ E [1 samples]\n100.0%  [1]\n",
            2,
            "not a `PERCENT%  [SAMPLES]  FUNCTION` line",
        ),
        ("@ E [1 samples]\n100.0%  [-1]  a\n", 2, "not a `PERCENT%"),
        ("@ E [1 samples]\nabc%  [1]  a\n", 2, "not a `PERCENT%"),
        (
            "@ E [1 samples]\n100.0%  [99999999999]  a\n",
            2,
            "not a `PERCENT%",
        ),
        ("@ E [1 samples]\nrn_match\n", 2, "'rn_match' is not"),
        (
            "@ E [3 samples]\n100.0%  [2]  a\n",
            3,
            "line 1 announces 3 samples but its functions have 2",
        ),
        (
            "@ E [3 samples]\n100.0%  [3]  a\n@ E [1 samples]\n",
            4,
            "line 3 announces 1 samples but its functions have 0",
        ),
        (
            "@ E [3 samples]\n100.0%  [3]  a\n 50.0%  [2]  b\n 50.0%  [2]  c\n",
            4,
            "the callers of 'a' have more samples (4) than it has (3)",
        ),
    ];
    for (text, line, what) in cases {
        let (got_line, message) = problem(text);
        assert_eq!(got_line, *line, "{text:?}: {message}");
        assert!(message.contains(what), "{text:?}: {message}");
        assert!(
            message.starts_with(&format!("g.pmc.graph: line {line}: ")),
            "{message}"
        );
        assert!(message.ends_with("write it again with `pmcstat -R FILE -G GRAPH`"));
    }
}

#[test]
fn a_graph_that_is_not_text_is_an_error_naming_the_line() {
    let bytes = b"@ E [1 samples]\n100.0%  [1]  \xff\xfe\n";
    match fold_pmcstat(&bytes[..], "g.pmc.graph") {
        Err(e @ PmcGraphError::Read { line: 2, .. }) => {
            assert!(
                e.to_string()
                    .starts_with("g.pmc.graph: line 2: cannot read"),
                "{e}"
            );
        }
        other => panic!("{other:?}"),
    }
}

/// The frames a flamegraph.pl SVG of `folded` draws: (depth, samples, name), `all` at depth 0.
/// Like flamegraph.pl, it sorts the `stack count` lines as text and merges a frame with the
/// previous line's only while the frames below it are the same: `a;b 1`, `a;b2;c 1`, `a;b;c 1`
/// draw two `b` frames. Frames narrower than its 0.1 px minimum width (of 1180 px) are left out.
fn drawn_frames(folded: &Folded) -> Vec<(usize, u64, String)> {
    let mut lines: Vec<(String, u64)> = (folded.stacks.iter())
        .map(|(stack, &count)| (format!("{stack} {count}"), count))
        .collect();
    lines.sort();
    let mut drawn = vec![(0, folded.samples(), "all".to_string())];
    let mut open: Vec<(String, u64)> = Vec::new();
    let mut close = |open: &mut Vec<(String, u64)>, keep: usize| {
        let closed = open.drain(keep..).enumerate();
        drawn.extend(closed.map(|(i, (name, count))| (keep + i + 1, count, name)));
    };
    for (line, count) in &lines {
        let (stack, _) = line.rsplit_once(' ').unwrap();
        let frames: Vec<&str> = stack.split(';').collect();
        let common = (open.iter().zip(&frames))
            .take_while(|(o, f)| o.0 == **f)
            .count();
        close(&mut open, common);
        open.extend(frames[common..].iter().map(|f| (f.to_string(), 0)));
        open.iter_mut().for_each(|o| o.1 += count);
    }
    close(&mut open, 0);
    let min = 0.1 * folded.samples() as f64 / 1180.0;
    drawn.retain(|(_, count, _)| *count as f64 >= min);
    drawn.sort();
    drawn
}

fn data(path: &str) -> String {
    let path = format!("{}/tests/data/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Seed 002's twelve graphs against the frames of the SVGs the archive drew from them (see
/// tests/data/pmc/README.md): the harness left `sched_idletd` stacks out before drawing, so the
/// comparison does too.
#[test]
fn seed_002_graphs_fold_to_the_counts_of_the_archived_flamegraphs() {
    let names: Vec<String> = ["318516current", "318516stable"]
        .iter()
        .flat_map(|v| {
            ["forwarding", "ipfw-statefull", "pf-statefull"]
                .iter()
                .flat_map(move |c| ["inet4", "inet6"].map(|f| format!("bench.{v}.{c}.{f}.1.pmc")))
        })
        .collect();
    assert_eq!(names.len(), 12);
    for name in names {
        let graph = format!("netbenches/002/RAW/{name}.graph");
        let folded = fold_pmcstat(data(&graph).as_bytes(), &graph).unwrap();
        let drawn = Folded {
            stacks: (folded.stacks.iter())
                .filter(|(s, _)| !s.split(';').any(|f| f == "sched_idletd"))
                .map(|(s, &c)| (s.clone(), c))
                .collect(),
        };
        let expected: Vec<(usize, u64, String)> = data(&format!("pmc/{name}.frames"))
            .lines()
            .map(|l| {
                let mut parts = l.splitn(3, ' ');
                let mut next = || parts.next().unwrap();
                (
                    next().parse().unwrap(),
                    next().parse().unwrap(),
                    next().to_string(),
                )
            })
            .collect();
        assert_eq!(expected[0].0, 0, "{name}: all");
        assert_eq!(drawn.samples(), expected[0].1, "{name}: total");
        assert_eq!(drawn_frames(&drawn), expected, "{name}: frames");
    }
}
