//! Unit tests of `ministat`.

use super::*;

fn read(text: &str, column: usize, delimiters: &str) -> Result<Vec<f64>, String> {
    let options = ReadOptions {
        column,
        delimiters: delimiters.as_bytes().to_vec(),
    };
    Dataset::read(text.as_bytes(), "t", &options)
        .map(|d| d.values)
        .map_err(|e| e.to_string())
}

#[test]
fn reads_like_readset() {
    assert_eq!(read("1\n2\n3\n", 1, " \t"), Ok(vec![1.0, 2.0, 3.0]));
    assert_eq!(
        read("# c\n\n  1 x\n2\t9 # y\n3 \r\n", 1, " \t"),
        Ok(vec![1.0, 2.0, 3.0])
    );
    assert_eq!(
        read("a 1\nb 2\nc 3\nd\n", 2, " \t"),
        Ok(vec![1.0, 2.0, 3.0])
    );
    assert_eq!(
        read("a,,1\nb,2\n#,3\nc,4,x\n", 2, ","),
        Ok(vec![1.0, 2.0, 4.0])
    );
    // A '#' field before the column ends the line; one at the column too.
    assert_eq!(
        read("1 #x 3\n4 5\n6 7\n8 #\n9 9\n", 2, " "),
        Ok(vec![5.0, 7.0, 9.0])
    );
    assert_eq!(read("1\n2\0junk\n3\n", 1, " "), Ok(vec![1.0, 2.0, 3.0]));
}

#[test]
fn lines_across_buffer_boundaries() {
    let text = "1\n# comment\n22.5 x\n\n333\n-4e1";
    let options = ReadOptions::default();
    for capacity in 1..=8 {
        let reader = std::io::BufReader::with_capacity(capacity, text.as_bytes());
        let d = Dataset::read(reader, "t", &options).unwrap();
        assert_eq!(d.values, [1.0, 22.5, 333.0, -40.0], "capacity {capacity}");
    }
}

#[test]
fn errors_like_ministat() {
    assert_eq!(
        read("1\n2\nx\n", 1, " \t"),
        Err("Invalid data on line 3 in t".to_string())
    );
    assert_eq!(
        read("1\n\n2\n", 1, " \t"),
        Err("Dataset t must contain at least 3 data points".to_string())
    );
    // With ',' as the only delimiter, "5 " keeps its inner space and is not a number.
    assert_eq!(
        read("1\n2\n5 ,3\n", 1, ","),
        Err("Invalid data on line 3 in t".to_string())
    );
}

#[test]
fn long_lines_count_as_fgets_pieces() {
    // ministat reads 8191 bytes at a time: a longer line is two lines, the second being
    // the tail of the first.
    let long = format!("1{}\n2\n3\n4\n", " ".repeat(LINE_PIECE));
    assert_eq!(read(&long, 1, " "), Ok(vec![1.0, 2.0, 3.0, 4.0]));
    let long = format!("{}7\n1\nx\n", " ".repeat(LINE_PIECE - 1));
    assert_eq!(
        read(&long, 1, " "),
        Err("Invalid data on line 4 in t".to_string())
    );
    // The same pieces whatever the reader's buffer holds at a time.
    let options = ReadOptions::default();
    for capacity in [1, 7, LINE_PIECE + 3] {
        let reader = std::io::BufReader::with_capacity(capacity, long.as_bytes());
        let e = Dataset::read(reader, "t", &options).unwrap_err();
        assert_eq!(e.to_string(), "Invalid data on line 4 in t");
    }
}

#[test]
fn a_line_over_the_bound_is_refused_naming_it() {
    let ok = format!("1\n2\n{}3\n", " ".repeat(MAX_LINE_BYTES - 2));
    assert_eq!(read(&ok, 1, " "), Ok(vec![1.0, 2.0, 3.0]));
    let e = read(&format!("1\n2\n{}3\n", " ".repeat(MAX_LINE_BYTES)), 1, " ").unwrap_err();
    assert_eq!(
        e,
        "t:3: a line longer than 1 MiB, not data ministat reads; give one value a line"
    );
    // No newline at all, as /dev/zero: refused after the bound, not read to the end.
    let zeros = std::io::Read::take(std::io::repeat(0), u64::MAX);
    let e = Dataset::read(std::io::BufReader::new(zeros), "z", &ReadOptions::default());
    assert!(matches!(e, Err(MinistatError::LineTooLong { line: 1, .. })));
}

#[test]
fn render_matches_ministat() {
    // `ministat a b` (Debian 20150715) with a = 0.1 0.1 0.1 and b = 1 2 3 4.
    let a = Dataset::new("a", vec![0.1; 3]);
    let b = Dataset::new("b", vec![1.0, 2.0, 3.0, 4.0]);
    let options = MinistatOptions {
        flavor: Flavor::Legacy,
        ..Default::default()
    };
    let expected = "\
x a
+ b
+--------------------------------------------------------------------------+
|x                +                  +                 +                  +|
|A                    |_______________________A________M______________|    |
+--------------------------------------------------------------------------+
    N           Min           Max        Median           Avg        Stddev
x   3           0.1           0.1           0.1           0.1          -nan
+   4             1             4             3           2.5     1.2909944
Difference at 95.0% confidence
\t2.4 +/- 1.96363
\t2400% +/- 1963.63%
\t(Student's t, pooled s = 1)
";
    assert_eq!(render(&[a, b], &options).unwrap(), expected);
}

#[test]
fn analysis_serialises_the_numbers() {
    let a = Dataset::new("a", vec![1.0, 2.0, 3.0]);
    let b = Dataset::new("b", vec![11.0, 12.0, 13.0]);
    let analysis = analyse(&[a, b], &MinistatOptions::default()).unwrap();
    let json = serde_json::to_value(&analysis).unwrap();
    assert_eq!(json["flavor"], "current");
    assert_eq!(json["confidence"], 95.0);
    assert_eq!(json["datasets"][1]["name"], "b");
    assert_eq!(json["datasets"][1]["median"], 12.0);
    assert_eq!(json["comparisons"][0]["reference"], "a");
    assert_eq!(json["comparisons"][0]["difference"], 10.0);
    assert_eq!(json["comparisons"][0]["significant"], true);
}

#[test]
fn limits() {
    let d = Dataset::new("d", vec![1.0, 2.0, 3.0]);
    let options = MinistatOptions::default();
    assert!(matches!(
        analyse(&vec![d.clone(); 8], &options),
        Err(MinistatError::TooManyDatasets)
    ));
    let short = Dataset::new("s", vec![1.0, 2.0]);
    assert_eq!(
        analyse(&[d, short], &options).unwrap_err().to_string(),
        "Dataset s must contain at least 3 data points"
    );
}
