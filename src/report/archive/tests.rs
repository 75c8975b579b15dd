//! Unit tests of `archive`.

use super::*;

const TABLE: &str = "x 318516stable.forwarding.inet4.pps
+ by hand: 12-head
+--------------------------------------------------------------------------+
|+                                                                 x      x|
+--------------------------------------------------------------------------+
    N           Min           Max        Median           Avg        Stddev
x   5        681208        710973        689737      692206.4     11661.571
+   5        473256        475632        474873      474442.2     1053.2821
Difference at 99.0% confidence
        -217764 +/- 12075.2
        -31.4594% +/- 1.20111%
        (Student's t, pooled s = 8279.54)
";

#[test]
fn a_table_gives_its_legends_rows_level_and_difference_lines() {
    let t = parse_table(TABLE).unwrap();
    assert_eq!(
        t.legends,
        ["318516stable.forwarding.inet4.pps", "by hand: 12-head"]
    );
    assert_eq!(t.rows[1][4], "474442.2");
    assert_eq!(t.confidence, "99".parse().unwrap());
    assert_eq!(t.differences, [(1, "-31.4594% +/- 1.20111%".to_string())]);
    // Any other fenced block is no table.
    assert!(parse_table("stackcollapse-pmc.pl x | flamegraph.pl > y\n").is_none());
}

fn series(name: &str, values: &[f64]) -> Series {
    Series {
        name: name.into(),
        iterations: (values.iter())
            .map(|&median_pps| crate::ingest::Iteration {
                index: 1,
                median_pps,
                samples: 10,
                offered_pps: None,
                source: String::new(),
                troubles: Vec::new(),
            })
            .collect(),
        ..Series::default()
    }
}

#[test]
fn legends_match_by_name_or_by_their_values_and_say_why_not() {
    let stable = series(
        "318516stable.forwarding.inet4",
        &[689737.0, 694591.0, 681208.0, 710973.0, 684523.0],
    );
    let current = series(
        "318516current.forwarding.inet4",
        &[475042.0, 473408.0, 475632.0, 473256.0, 474873.0],
    );
    let all = [stable, current];
    let summaries: Vec<_> = (all.iter())
        .map(|s| (s, Summary::of(&medians(s), Flavor::Current)))
        .collect();
    let t = parse_table(TABLE).unwrap();
    assert_eq!(
        match_series(&t, &summaries, &all),
        Ok(vec![all[0].name.clone(), all[1].name.clone()])
    );
    // An iteration left out of a .pps by hand.
    let edited = TABLE.replace("+   5        473256", "+   4        473256");
    let t = parse_table(&edited.replace("by hand: 12-head", "318516current.forwarding.inet4.pps"))
        .unwrap();
    let why = match_series(&t, &summaries, &all).unwrap_err();
    assert!(
        why.contains("has 4 values where the logs give 5 iterations"),
        "{why}"
    );
}
