//! The latency charts of a traffic profile, in the conventions of
//! [`crate::report::chart`] (size, font, palette): `latency.<profile>.png`, P50 and P99
//! against the load (% of the NDR after a throughput search, else the offered rate) per
//! version and config set, on a log scale; and `latency-cdf.<profile>.png`, the distribution
//! of each version and config set (established flows solid, first packets dashed, the floor
//! grey) on a log latency axis.
//!
//! The [`LoadChart`] and [`CdfChart`] values hold everything the pictures show (tests check
//! them instead of pixels); the render functions only draw them.
//!
//! [`LoadChart`]: crate::report::latency::chart::LoadChart
//! [`CdfChart`]: crate::report::latency::chart::CdfChart

use plotters::coord::combinators::LogCoord;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::{mean_load, Report};
use crate::ingest::benchlab::latency::{LatencySeries, Load, OVERLOADED};
use crate::report::chart::lines::{legend, mesh_look};
use crate::report::chart::{colour, png_of, titled, Area, DrawResult, HEIGHT, WIDTH};
use crate::stats::doubt::DISTURBED_SHARE;
use crate::stats::latency::Latency;
use crate::units::{format_ns, format_tick, pps_unit};

/// One version and config set on the latency-against-load chart.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LoadLine {
    /// `version, config set`.
    pub(crate) name: String,
    /// Each load, by x.
    pub(crate) points: Vec<LoadPoint>,
}

/// One load of a [`LoadLine`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LoadPoint {
    /// % of the NDR, or packets/s.
    pub(crate) x: f64,
    /// P50, ns.
    pub(crate) p50_ns: u64,
    /// P99, ns.
    pub(crate) p99_ns: u64,
    /// The DUT was saturated there ([`saturated`]): the figures are its full input queue's,
    /// marked so that a reader does not take them for the DUT at that load.
    pub(crate) saturated: bool,
}

/// Whether the DUT was saturated at the load of `s`: at `max`, by design; else in half of its
/// trials or more ([`OVERLOADED`]), the share at which the comparisons call a difference
/// unreliable ([`DISTURBED_SHARE`]).
fn saturated(s: &LatencySeries) -> bool {
    let over = s.trials.iter().filter(|t| t.had(OVERLOADED)).count();
    matches!(s.load, Load::Max)
        || (over > 0 && over as f64 >= DISTURBED_SHARE * s.trials.len() as f64)
}

/// What `latency.<profile>.png` shows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LoadChart {
    /// Output file name.
    pub(crate) file_name: String,
    /// First title line: the report's.
    pub(crate) title: String,
    /// Second title line: what is drawn.
    pub(crate) subtitle: String,
    /// Whether x is % of the NDR (else the offered load, packets/s).
    pub(crate) percent: bool,
    /// One line per version and config set.
    pub(crate) lines: Vec<LoadLine>,
}

/// One version and config set on the distribution chart.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CdfCurve {
    /// `version, config set` (and the load after a search).
    pub(crate) name: String,
    /// The established probes: (latency ns, share at or below it).
    pub(crate) established: Vec<(f64, f64)>,
    /// The first-packet probes, the same way, when sent.
    pub(crate) first_packet: Option<Vec<(f64, f64)>>,
}

/// What `latency-cdf.<profile>.png` shows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CdfChart {
    /// Output file name.
    pub(crate) file_name: String,
    /// First title line: the report's.
    pub(crate) title: String,
    /// Second title line: what is drawn.
    pub(crate) subtitle: String,
    /// One curve per version and config set.
    pub(crate) curves: Vec<CdfCurve>,
    /// The lab's floor, when its histogram is there.
    pub(crate) floor: Option<Vec<(f64, f64)>>,
}

/// The latency series of `profile`, grouped by (version, config set) in the report's order,
/// each group's name.
fn groups<'r>(report: &'r Report, profile: &str) -> Vec<(String, Vec<&'r LatencySeries>)> {
    let mut groups: Vec<((&str, &str), Vec<&LatencySeries>)> = Vec::new();
    for s in report.latency_series().filter(|s| s.profile == profile) {
        let key = (s.version.as_str(), s.config.as_str());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, list)) => list.push(s),
            None => groups.push((key, vec![s])),
        }
    }
    (groups.into_iter())
        .map(|((v, c), list)| {
            let name = format!("{}, {}", report.version_label(v), report.label(c));
            (name, list)
        })
        .collect()
}

/// The latency-against-load chart of `profile`.
pub(crate) fn load_chart(report: &Report, profile: &str) -> LoadChart {
    let groups = groups(report, profile);
    let percent = (groups.iter().flat_map(|(_, l)| l)).any(|s| matches!(s.load, Load::Ndr(_)));
    let lines = (groups.into_iter())
        .map(|(name, list)| {
            let mut points: Vec<LoadPoint> = (list.iter())
                .filter_map(|s| {
                    let p = s.established.percentiles()?;
                    let x = match s.load {
                        Load::Ndr(pct) => f64::from(pct),
                        Load::Offered | Load::Max | Load::Alternating(_) => mean_load(s),
                    };
                    Some(LoadPoint {
                        x,
                        p50_ns: p.p50_ns,
                        p99_ns: p.p99_ns,
                        saturated: saturated(s),
                    })
                })
                .collect();
            points.sort_by(|a, b| a.x.total_cmp(&b.x));
            LoadLine { name, points }
        })
        .collect::<Vec<_>>();
    let marked = match (lines.iter()).any(|l| l.points.iter().any(|p| p.saturated)) {
        true => ", × the DUT saturated",
        false => "",
    };
    LoadChart {
        file_name: format!("latency.{profile}.png"),
        title: report.title.clone(),
        subtitle: format!(
            "One-way latency against load: {} (P50 solid and filled, P99 dashed and \
             hollow{marked})",
            report.label(profile)
        ),
        percent,
        lines,
    }
}

/// The distribution chart of `profile`: after a search, each version and config set at its
/// highest load that did not saturate the DUT (latency under the most load the DUT took, not
/// its full queue's; the highest when every one did; the loads' own figures are in the table).
pub(crate) fn cdf_chart(report: &Report, profile: &str) -> CdfChart {
    let curves = (groups(report, profile).into_iter())
        .filter_map(|(name, list)| {
            let s = list.into_iter().max_by_key(|s| match s.load {
                Load::Ndr(pct) => (!saturated(s), pct),
                Load::Offered | Load::Max | Load::Alternating(_) => (true, 0),
            })?;
            let name = match s.load {
                Load::Ndr(pct) => format!("{name} at {pct} % of the NDR"),
                Load::Offered | Load::Max | Load::Alternating(_) => name,
            };
            Some(CdfCurve {
                name,
                established: cdf(&s.established),
                first_packet: s.first_packet.as_ref().map(cdf),
            })
        })
        .collect();
    let floor = (report.latency_floor.as_ref()).and_then(|f| f.latency.as_ref().map(cdf));
    CdfChart {
        file_name: format!("latency-cdf.{profile}.png"),
        title: report.title.clone(),
        subtitle: format!(
            "Distribution of one-way latency: {} (solid: established flows, dashed: first \
             packets, grey: the floor)",
            report.label(profile)
        ),
        curves,
        floor,
    }
}

/// Each recorded value of `latency` and the share of the values at or below it.
fn cdf(latency: &Latency) -> Vec<(f64, f64)> {
    (latency.histogram().iter_recorded())
        .map(|v| (v.value_iterated_to() as f64, v.percentile() / 100.0))
        .collect()
}

/// Draws the latency-against-load chart as a PNG.
pub(crate) fn render_load(chart: &LoadChart) -> anyhow::Result<Vec<u8>> {
    png_of(&chart.file_name, |rgb| draw_load(chart, rgb))
}

/// Draws the distribution chart as a PNG.
pub(crate) fn render_cdf(chart: &CdfChart) -> anyhow::Result<Vec<u8>> {
    png_of(&chart.file_name, |rgb| draw_cdf(chart, rgb))
}

/// A log axis over `values` (ns), from the decade below them to the decade above (the axis'
/// labels start at a power of ten); 1 µs to 1 ms without any.
fn log_range(values: impl Iterator<Item = f64>) -> std::ops::Range<f64> {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo > hi {
        return 1e3..1e6;
    }
    let decade = |v: f64, round: fn(f64) -> f64| 10f64.powf(round(v.log10()));
    decade(lo, f64::floor)..decade(hi * 1.01, f64::ceil)
}

/// A log axis' tick label: 1, 2 and 5 times a power of ten, the other ticks unlabelled. The
/// axis ticks every 1–9 of a decade, and "900 µs" was drawn over "1 ms".
fn log_tick(ns: f64) -> String {
    let mantissa = ns / 10f64.powf(ns.log10().floor());
    let labelled = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .any(|m| (mantissa - m).abs() < 0.01);
    match labelled {
        true => format_ns(ns),
        false => String::new(),
    }
}

/// The area below the two title lines.
fn titled_area<'a>(
    root: &Area<'a>,
    title: &str,
    subtitle: &str,
) -> Result<Area<'a>, Box<dyn std::error::Error>> {
    let area = titled(&root.margin(16, 0, 0, 0), title, 40.0, BLACK)?;
    titled(&area, subtitle, 28.0, RGBColor(0x40, 0x40, 0x40))
}

fn draw_load(chart: &LoadChart, rgb: &mut [u8]) -> DrawResult {
    let root = BitMapBackend::with_buffer(rgb, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let area = titled_area(&root, &chart.title, &chart.subtitle)?;
    let all = chart.lines.iter().flat_map(|l| &l.points);
    let y = log_range(all.clone().flat_map(|p| [p.p50_ns as f64, p.p99_ns as f64]));
    let x_max = all.map(|p| p.x).fold(0.0, f64::max);
    let x_max = match chart.percent {
        true => x_max.max(10.0) * 1.05,
        false if x_max > 0.0 => x_max * 1.1,
        false => 1.0,
    };
    let mut ctx = ChartBuilder::on(&area)
        .margin(30)
        .x_label_area_size(110)
        .y_label_area_size(170)
        .build_cartesian_2d(0f64..x_max, y.log_scale())?;
    let unit = pps_unit(x_max);
    let x_format = |v: &f64| match chart.percent {
        true => format!("{v:.0} %"),
        false => format_tick(*v, unit),
    };
    let x_desc = match chart.percent {
        true => "load, % of the NDR",
        false => "offered load",
    };
    mesh_look(&mut ctx.configure_mesh())
        .x_labels(10)
        .y_labels(20)
        .x_label_formatter(&x_format)
        .y_label_formatter(&|v: &f64| log_tick(*v))
        .x_desc(x_desc)
        .y_desc("one-way latency")
        .draw()?;
    for (k, line) in chart.lines.iter().enumerate() {
        let c = colour(k);
        let p50 = line.points.iter().map(|p| (p.x, p.p50_ns as f64));
        let p99 = line.points.iter().map(|p| (p.x, p.p99_ns as f64));
        ctx.draw_series(LineSeries::new(p50.clone(), c.stroke_width(3)))?
            .label(line.name.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 30, y)], c.stroke_width(3)));
        ctx.draw_series(DashedLineSeries::new(p99.clone(), 12, 8, c.stroke_width(3)))?;
        // P50 filled, P99 hollow: told apart where a fixed load puts them one above the other.
        ctx.draw_series(p50.map(|at| Circle::new(at, 7, c.filled())))?;
        ctx.draw_series(p99.map(|at| Circle::new(at, 8, c.stroke_width(3))))?;
        let saturated = (line.points.iter()).filter(|p| p.saturated);
        let crosses = saturated.flat_map(|p| [(p.x, p.p50_ns as f64), (p.x, p.p99_ns as f64)]);
        ctx.draw_series(crosses.map(|at| Cross::new(at, 14, BLACK.stroke_width(3))))?;
    }
    legend(&mut ctx)
}

/// The distribution chart's plot: latency on a log scale, the share linear.
type CdfPlot<'a, 'b> =
    ChartContext<'a, BitMapBackend<'b>, Cartesian2d<LogCoord<f64>, RangedCoordf64>>;

fn draw_cdf(chart: &CdfChart, rgb: &mut [u8]) -> DrawResult {
    let root = BitMapBackend::with_buffer(rgb, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let area = titled_area(&root, &chart.title, &chart.subtitle)?;
    let curves = (chart.curves.iter())
        .flat_map(|c| std::iter::once(&c.established).chain(c.first_packet.as_ref()))
        .chain(chart.floor.as_ref());
    let x = log_range(curves.flatten().map(|p| p.0));
    let mut ctx: CdfPlot<'_, '_> = ChartBuilder::on(&area)
        .margin(30)
        // The axis ends on a decade, labelled at the edge: room for its label's right half.
        .margin_right(70)
        .x_label_area_size(110)
        .y_label_area_size(150)
        .build_cartesian_2d(x.log_scale(), 0f64..1.0)?;
    mesh_look(&mut ctx.configure_mesh())
        .x_labels(20)
        .x_label_formatter(&|v: &f64| log_tick(*v))
        .y_label_formatter(&|v: &f64| format!("{:.0} %", v * 100.0))
        .x_desc("one-way latency")
        .y_desc("probes at or below it")
        .draw()?;
    if let Some(floor) = &chart.floor {
        let grey = RGBColor(0x90, 0x90, 0x90);
        ctx.draw_series(LineSeries::new(floor.iter().copied(), grey.stroke_width(2)))?
            .label("floor (no DUT)")
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 30, y)], grey.stroke_width(2)));
    }
    for (k, curve) in chart.curves.iter().enumerate() {
        let c = colour(k);
        let established = curve.established.iter().copied();
        ctx.draw_series(LineSeries::new(established, c.stroke_width(3)))?
            .label(curve.name.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 30, y)], c.stroke_width(3)));
        if let Some(first) = &curve.first_packet {
            let first = first.iter().copied();
            ctx.draw_series(DashedLineSeries::new(first, 12, 8, c.stroke_width(3)))?;
        }
    }
    legend(&mut ctx)
}

#[cfg(test)]
mod tests {
    use super::log_tick;

    #[test]
    fn a_log_axis_labels_one_two_and_five_of_each_decade() {
        // Ticks as plotters computes them, a float's width off the powers of ten.
        let ticks = [1e3, 2e3, 3e3, 5e3, 9e3, 9_999.999_999, 9e5, 1e6];
        let labels = ticks.map(log_tick);
        assert_eq!(
            labels,
            ["1 µs", "2 µs", "", "5 µs", "", "10 µs", "", "1 ms"]
        );
    }
}
