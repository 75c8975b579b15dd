use serde::Deserialize;

use super::bits::ln_gamma;
use super::*;

/// A run as `benches/jumpavg_reference.py` writes it.
#[derive(Deserialize)]
#[serde(untagged)]
enum CaseRun {
    Single(f64),
    Samples {
        samples: Vec<f64>,
    },
    Summary {
        avg: f64,
        stdev: f64,
        size: u64,
        max: f64,
    },
}

#[derive(Deserialize)]
struct CaseGroup {
    start: usize,
    len: usize,
    avg: f64,
    size: u64,
    bits: f64,
    comment: String,
}

/// A series and jumpavg 0.4.2's grouping of it (or the error it raised).
#[derive(Deserialize)]
struct Case {
    name: String,
    runs: Vec<CaseRun>,
    unit: Option<f64>,
    sbits: Option<f64>,
    #[serde(default)]
    groups: Vec<CaseGroup>,
    bits: Option<f64>,
    error: Option<String>,
}

fn run_stats(run: &CaseRun) -> RunStats {
    match run {
        CaseRun::Single(value) => RunStats::single(*value),
        CaseRun::Samples { samples } => RunStats::of(samples),
        CaseRun::Summary {
            avg,
            stdev,
            size,
            max,
        } => RunStats {
            avg: *avg,
            stdev: *stdev,
            size: *size,
            max: *max,
        },
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn trend_name(trend: Trend) -> &'static str {
    match trend {
        Trend::Normal => "normal",
        Trend::Regression => "regression",
        Trend::Progression => "progression",
    }
}

#[test]
fn reference_cases_match() {
    let cases: Vec<Case> =
        serde_json::from_str(include_str!("../../../tests/data/jumpavg/cases.json"))
            .expect("the cases file is valid JSON");
    assert!(cases.len() >= 10);
    for case in &cases {
        let runs: Vec<RunStats> = case.runs.iter().map(run_stats).collect();
        let ours = classify(&runs, case.unit, case.sbits);
        let Some(bits) = case.bits else {
            // The reference raised: an empty series gives no group, else one of 0 bits.
            assert!(case.error.is_some(), "{}", case.name);
            assert_eq!(ours.groups.len(), runs.len().min(1), "{}", case.name);
            assert_eq!(ours.bits, 0.0, "{}", case.name);
            continue;
        };
        assert!(
            close(ours.bits, bits),
            "{}: {} vs {bits}",
            case.name,
            ours.bits
        );
        assert_eq!(ours.groups.len(), case.groups.len(), "{}", case.name);
        for (o, r) in ours.groups.iter().zip(&case.groups) {
            assert_eq!(
                (o.start, o.len, o.size),
                (r.start, r.len, r.size),
                "{}",
                case.name
            );
            assert_eq!(trend_name(o.trend), r.comment, "{}", case.name);
            assert!(close(o.avg, r.avg), "{}", case.name);
            assert!(
                close(o.bits, r.bits),
                "{}: {} vs {}",
                case.name,
                o.bits,
                r.bits
            );
        }
    }
}

#[test]
fn empty_series_has_no_group() {
    let grouping = classify(&[], None, None);
    assert!(grouping.groups.is_empty());
    assert_eq!(grouping.bits, 0.0);
}

#[test]
fn one_value_is_one_normal_group() {
    let grouping = classify(&[RunStats::single(3.5)], None, None);
    assert_eq!(grouping.groups.len(), 1);
    assert_eq!(grouping.groups[0].trend, Trend::Normal);
    // Size 1: log2(1·2) + log2(8191 + 1) with the default 12 significant bits.
    assert!(close(grouping.bits, 14.0));
}

#[test]
fn a_drop_is_a_regression_and_the_first_group_normal() {
    let runs: Vec<RunStats> = [10.0, 10.1, 9.9, 10.0, 8.0, 8.1, 7.9, 8.0]
        .into_iter()
        .map(RunStats::single)
        .collect();
    let grouping = classify(&runs, None, None);
    let trends: Vec<Trend> = grouping.groups.iter().map(|g| g.trend).collect();
    assert_eq!(trends, [Trend::Normal, Trend::Regression]);
    assert_eq!(grouping.groups[1].start, 4);
}

#[test]
fn default_unit_is_twelve_significant_bits() {
    let runs: Vec<RunStats> = [20.0, 21.0, 20.5, 25.0, 24.5, 25.2]
        .into_iter()
        .map(RunStats::single)
        .collect();
    let default = classify(&runs, None, None);
    assert_eq!(default, classify(&runs, Some(25.2 / 8191.0), None));
    assert_eq!(default, classify(&runs, Some(0.0), Some(12.0)));
    assert_eq!(default, classify(&runs, None, Some(0.0)));
}

#[test]
fn run_stats_are_population_stats_with_the_maximum() {
    let stats = RunStats::of(&[1.0, 2.0, 3.0, 4.0]);
    assert_eq!((stats.avg, stats.size, stats.max), (2.5, 4, 4.0));
    assert!(close(stats.stdev, 1.25_f64.sqrt()));
    let none = RunStats::of(&[]);
    assert_eq!((none.avg, none.stdev, none.size), (0.0, 0.0, 0));
}

#[test]
fn non_finite_input_does_not_panic() {
    let nan = [1.0, f64::NAN, 2.0, 2.1].map(RunStats::single);
    let grouping = classify(&nan, None, None);
    assert_eq!(grouping.groups.iter().map(|g| g.len).sum::<usize>(), 4);
    for bad in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN] {
        let runs = [RunStats::single(bad), RunStats::single(bad)];
        let grouping = classify(&runs, None, None);
        assert_eq!(grouping.groups.len(), 1);
        assert_eq!(grouping.bits, 0.0);
    }
    let zero = [RunStats::single(0.0), RunStats::single(-1.0)];
    assert_eq!(classify(&zero, None, None).groups.len(), 1);
    let nan_unit = classify(&[RunStats::single(1.0)], Some(f64::NAN), Some(f64::NAN));
    assert_eq!(nan_unit.groups.len(), 1);
}

#[test]
fn ln_gamma_at_half_integers() {
    assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-14);
    assert!(ln_gamma(1.0).abs() < 1e-14);
    assert!((ln_gamma(10.0) - 362_880.0_f64.ln()).abs() < 1e-13);
    // Γ(5.5) = 945/32 · √π.
    let expected = (945.0 / 32.0 * std::f64::consts::PI.sqrt()).ln();
    assert!((ln_gamma(5.5) - expected).abs() < 1e-14);
    assert!(ln_gamma(0.0).is_nan() && ln_gamma(f64::NAN).is_nan());
}

#[test]
fn trends_serialize_lowercase() {
    let json = serde_json::to_string(&[Trend::Normal, Trend::Regression, Trend::Progression]);
    assert_eq!(
        json.ok().as_deref(),
        Some(r#"["normal","regression","progression"]"#)
    );
}
