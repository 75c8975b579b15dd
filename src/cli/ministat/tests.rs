use super::*;

fn parse_args(args: &[&str]) -> Parsed {
    let args: Vec<OsString> = args.iter().map(OsString::from).collect();
    parse(&args, 74, false)
}

fn invocation(args: &[&str]) -> Invocation {
    match parse_args(args) {
        Parsed::Run(invocation) => invocation,
        other => panic!("{args:?} gave {other:?}"),
    }
}

fn reason(args: &[&str]) -> (Option<String>, &'static str) {
    match parse_args(args) {
        Parsed::Usage { getopt, reason } => (getopt, reason),
        other => panic!("{args:?} gave {other:?}"),
    }
}

#[test]
fn getopt_clusters_and_values() {
    let i = invocation(&["-Ans", "-c99.5", "-C", "2", "-d,", "-w60", "a", "--legacy"]);
    assert!(i.options.stats_only && i.options.summary_only && i.options.separate_bars);
    assert_eq!(i.options.confidence, Confidence::P99_5);
    assert_eq!(i.options.width, 60);
    assert_eq!(i.options.flavor, Flavor::Legacy);
    assert_eq!(i.read.column, 2);
    assert_eq!(i.read.delimiters, b",");
    assert_eq!(i.files, ["a"]);
    // Options after operands count (GNU permutation); `--` ends them; `-` is a file.
    let i = invocation(&["a", "-n", "-", "--", "-s"]);
    assert!(i.options.summary_only && !i.options.separate_bars);
    assert_eq!(i.files, ["a", "-", "-s"]);
    let i = invocation(&["-nc", "90"]);
    assert_eq!(i.options.confidence, Confidence::P90);
}

#[test]
fn leading_escape_is_recovered() {
    let os = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
    let process = os(&["benchlab", "ministat", "--", "-n", "a"]);
    assert_eq!(
        with_leading_escape(os(&["-n", "a"]), process.clone().into_iter()),
        os(&["--", "-n", "a"])
    );
    let process = os(&["benchlab", "ministat", "-n", "a"]);
    assert_eq!(
        with_leading_escape(os(&["-n", "a"]), process.into_iter()),
        os(&["-n", "a"])
    );
}

#[test]
fn posixly_correct_stops_at_the_first_operand() {
    let args: Vec<OsString> = ["a", "-n"].iter().map(OsString::from).collect();
    match parse(&args, 74, true) {
        Parsed::Run(i) => assert_eq!(i.files, ["a", "-n"]),
        other => panic!("{other:?}"),
    }
}

#[test]
fn ministat_quirks() {
    // A C int truncation: 2^32 + 1 is column 1.
    assert_eq!(invocation(&["-C", "4294967297"]).read.column, 1);
    // A bad level after a good one is ignored.
    assert_eq!(
        invocation(&["-c", "90", "-c", "12"]).options.confidence,
        Confidence::P90
    );
    assert_eq!(
        invocation(&["-c", "0x5f"]).options.confidence,
        Confidence::P95
    );
    assert_eq!(invocation(&["-w", ""]).options.width, 0);
}

#[test]
fn usage_errors() {
    let unknown = "Unknown option";
    assert_eq!(
        reason(&["-x"]),
        (Some("invalid option -- 'x'".into()), unknown)
    );
    assert_eq!(
        reason(&["--foo"]),
        (Some("invalid option -- '-'".into()), unknown)
    );
    assert_eq!(
        reason(&["-w"]),
        (Some("option requires an argument -- 'w'".into()), unknown)
    );
    assert_eq!(reason(&["-C", "x"]).1, "Invalid column number.");
    assert_eq!(reason(&["-C", ""]).1, "Column number should be positive.");
    assert_eq!(reason(&["-C", "-1"]).1, "Column number should be positive.");
    assert_eq!(reason(&["-c", "95%"]).1, "Not a floating point number");
    assert_eq!(reason(&["-c", "97"]).1, "No support for confidence level");
    assert_eq!(reason(&["-d", ""]).1, "Can't use empty delimiter string");
    assert_eq!(reason(&["-w", "7x"]).1, "Invalid width, not a number.");
    assert_eq!(
        reason(&["-w", "2147483647"]).1,
        "Width too large: give at most 10000 columns."
    );
    assert_eq!(invocation(&["-w", "10000"]).options.width, MAX_WIDTH);
    assert_eq!(
        reason(&["-w", "-1"]).1,
        "Unable to move beyond left margin."
    );
    assert_eq!(
        reason(&["1", "2", "3", "4", "5", "6", "7", "8"]).1,
        "Too many datasets."
    );
    assert!(reason(&["--legacy", "a", "--accurate"])
        .1
        .contains("give one"));
    let twice = invocation(&["--legacy", "a", "--legacy"]);
    assert_eq!(twice.options.flavor, Flavor::Legacy);
}

#[test]
fn usage_text_is_ministats() {
    let text = usage_text(false);
    assert!(text.starts_with(
        "Usage: benchlab ministat [-C column] [-c confidence] [-d delimiter(s)] [-Ans] \
             [-w width] [file [file ...]]\n\tconfidence = {80%, 90%, 95%, 98%, 99%, 99.5%}\n"
    ));
    assert_eq!(text.lines().count(), 8);
    assert!(usage_text(true).contains("--legacy"));
}
