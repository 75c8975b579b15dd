//! Loss ratio against offered load, one chart per (version, config set, profile) with searches:
//! every trial of its searches (the trace) as a point, one colour per search, and the bounds
//! each search found per goal as vertical lines (lower solid, upper thin).
//!
//! The loss axis is logarithmic (a zero-loss trial and a 50 %-loss one are both worth seeing);
//! a trial without loss is drawn on the axis floor, [`FLOOR`]. The [`LossChart`] value holds
//! everything the picture shows; [`render_png`] only draws it, in the conventions of
//! [`crate::report::chart`] (size, font, palette).
//!
//! [`FLOOR`]: crate::report::throughput::chart::FLOOR
//! [`LossChart`]: crate::report::throughput::chart::LossChart
//! [`render_png`]: crate::report::throughput::chart::render_png

use plotters::prelude::*;

use super::cells;
use crate::report::chart::lines::{legend, mesh_look};
use crate::report::chart::{colour, font, png_of, titled, DrawResult, HEIGHT, WIDTH};
use crate::report::Report;
use crate::units::{format_pps, format_tick, pps_unit};

/// Loss ratio at the bottom of the axis: a trial without loss is drawn there.
pub(crate) const FLOOR: f64 = 1e-7;

/// What a trial was to its search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PointKind {
    /// Counted by the search.
    Measured,
    /// The discarded warm-up trial at max load.
    Warmup,
    /// The senders missed the load: retried, not counted.
    Invalid,
}

/// One trial of a search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LossPoint {
    /// Intended load, packets/s.
    pub(crate) load: f64,
    /// Loss ratio (0…1).
    pub(crate) loss_ratio: f64,
    /// Index of its search in [`LossChart::searches`].
    pub(crate) search: usize,
    /// What it was to the search.
    pub(crate) kind: PointKind,
}

/// The bounds one search found for one goal.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BoundMark {
    /// Goal name.
    pub(crate) goal: String,
    /// Index of its search in [`LossChart::searches`].
    pub(crate) search: usize,
    /// Relevant lower bound, packets/s.
    pub(crate) lower: Option<f64>,
    /// Relevant upper bound, packets/s.
    pub(crate) upper: Option<f64>,
}

/// What one loss chart shows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LossChart {
    /// Output file name (`search.<version>.<config>.<profile>.png`).
    pub(crate) file_name: String,
    /// Title line.
    pub(crate) title: String,
    /// Legend entries, one per search (`iteration 1`).
    pub(crate) searches: Vec<String>,
    /// The goals' loss ratios, drawn as horizontal lines when above [`FLOOR`].
    pub(crate) goals: Vec<(String, f64)>,
    /// Every trial.
    pub(crate) points: Vec<LossPoint>,
    /// Every search's bounds per goal.
    pub(crate) bounds: Vec<BoundMark>,
    /// Right end of the load axis, packets/s.
    pub(crate) max_load: f64,
}

/// The loss charts of a report's searches.
pub(crate) fn charts(report: &Report) -> Vec<LossChart> {
    let mut charts = Vec::new();
    for cell in cells(&report.searches) {
        let first = cell[0];
        let mut chart = LossChart {
            file_name: format!(
                "search.{}.{}.{}.png",
                first.version, first.config, first.profile
            ),
            title: format!(
                "Loss ratio against offered load: {}, {}, {}",
                report.label(&first.version),
                report.label(&first.config),
                first.profile
            ),
            searches: Vec::new(),
            goals: Vec::new(),
            points: Vec::new(),
            bounds: Vec::new(),
            max_load: 0.0,
        };
        for run in cell {
            let Some(result) = &run.record.result else {
                continue;
            };
            let search = chart.searches.len();
            chart.searches.push(format!("iteration {}", run.iteration));
            chart.max_load = chart.max_load.max(result.max_load);
            if chart.goals.is_empty() {
                chart.goals = (result.goals.iter())
                    .map(|g| (g.goal.name.clone(), g.goal.loss_ratio))
                    .collect();
            }
            chart.points.extend(result.trials.iter().map(|t| LossPoint {
                load: t.load,
                loss_ratio: t.loss_ratio,
                search,
                kind: match (t.warmup, t.valid) {
                    (true, _) => PointKind::Warmup,
                    (false, false) => PointKind::Invalid,
                    (false, true) => PointKind::Measured,
                },
            }));
            chart.bounds.extend(result.goals.iter().map(|g| BoundMark {
                goal: g.goal.name.clone(),
                search,
                lower: g.relevant_lower_bound,
                upper: g.relevant_upper_bound,
            }));
        }
        if !chart.searches.is_empty() {
            charts.push(chart);
        }
    }
    charts
}

/// Draws the chart and encodes it as a PNG of [`WIDTH`] × [`HEIGHT`] pixels.
pub(crate) fn render_png(chart: &LossChart) -> anyhow::Result<Vec<u8>> {
    png_of(&chart.file_name, |rgb| draw(chart, rgb))
}

/// Goal lines' colours: apart from the searches' palette.
const GOAL_COLOURS: [RGBColor; 3] = [
    RGBColor(0x20, 0x20, 0x20),
    RGBColor(0x80, 0x80, 0x80),
    RGBColor(0xB0, 0x70, 0x30),
];

fn draw(chart: &LossChart, rgb: &mut [u8]) -> DrawResult {
    let root = BitMapBackend::with_buffer(rgb, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let area = titled(&root.margin(16, 0, 0, 0), &chart.title, 40.0, BLACK)?;
    let x_max = chart.max_load * 1.05;
    if !(x_max.is_finite() && x_max > 0.0) {
        return Err(format!("the max load of '{}' is not a rate", chart.file_name).into());
    }
    let unit = pps_unit(x_max);
    let mut ctx = ChartBuilder::on(&area)
        .margin(30)
        .x_label_area_size(110)
        .y_label_area_size(170)
        .build_cartesian_2d(0f64..x_max, (FLOOR..1f64).log_scale())?;
    let x_format = |v: &f64| format_tick(*v, unit);
    // The axis' labels are powers of ten: printed as such, in percent.
    let y_format = |v: &f64| {
        let p = v.log10().round() as i32 + 2;
        match (*v <= FLOOR * 1.01, p >= 0) {
            (true, _) => "0".to_string(),
            (false, true) => format!("{}%", 10f64.powi(p)),
            (false, false) => format!("{:.*}%", p.unsigned_abs() as usize, 10f64.powi(p)),
        }
    };
    mesh_look(&mut ctx.configure_mesh())
        .x_labels(10)
        .x_label_formatter(&x_format)
        .y_label_formatter(&y_format)
        .x_desc("offered load")
        .y_desc("loss ratio (no loss drawn at the bottom)")
        .draw()?;
    for (k, (name, ratio)) in chart.goals.iter().enumerate() {
        let c = GOAL_COLOURS[k % GOAL_COLOURS.len()];
        if *ratio > FLOOR {
            ctx.draw_series(LineSeries::new([(0.0, *ratio), (x_max, *ratio)], c))?
                .label(format!("{name}: loss ratio {}%", ratio * 100.0))
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 30, y)], c));
        }
        for b in chart.bounds.iter().filter(|b| &b.goal == name) {
            let line = |x: f64, width: u32| {
                PathElement::new([(x, FLOOR), (x, 1.0)], c.stroke_width(width))
            };
            ctx.draw_series(b.lower.map(|x| line(x, 3)))?;
            ctx.draw_series(b.upper.map(|x| line(x, 1)))?;
        }
        let lowest = (chart.bounds.iter())
            .filter(|b| &b.goal == name)
            .filter_map(|b| b.lower)
            .fold(f64::INFINITY, f64::min);
        if lowest.is_finite() {
            let text = format!("{name} ≥ {}", format_pps(lowest));
            // Beside its line, not on it.
            let at = (lowest + 0.01 * x_max, 0.3 / 4f64.powi(k as i32));
            ctx.draw_series([Text::new(text, at, font(24.0).color(&c))])?;
        }
    }
    draw_trials(&mut ctx, chart)
}

/// The plot of a loss chart: loads on x, loss ratios on a log scale on y.
type Plot<'a, 'b> = ChartContext<
    'a,
    BitMapBackend<'b>,
    Cartesian2d<
        plotters::coord::types::RangedCoordf64,
        plotters::coord::combinators::LogCoord<f64>,
    >,
>;

/// Every trial as a point, one colour per search, and the legend.
fn draw_trials<'a>(ctx: &mut Plot<'a, 'a>, chart: &LossChart) -> DrawResult {
    for (s, name) in chart.searches.iter().enumerate() {
        let c = colour(s);
        let points = chart.points.iter().filter(|p| p.search == s);
        ctx.draw_series(points.map(|p| {
            let at = (p.load, p.loss_ratio.max(FLOOR));
            let style = match p.kind {
                PointKind::Measured => c.filled(),
                PointKind::Warmup | PointKind::Invalid => c.stroke_width(2),
            };
            let size = if p.kind == PointKind::Invalid { 4 } else { 7 };
            Circle::new(at, size, style)
        }))?
        .label(name.as_str())
        .legend(move |(x, y)| Circle::new((x + 15, y), 7, c.filled()));
    }
    legend(ctx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::sim::{LossCurve, SimulatedDut};
    use crate::search::{search, SearchConfig};

    /// The chart of a simulated search: every trial a point, each goal's bounds a line, and a
    /// PNG of the report's size (`BENCHLAB_CHART=path` keeps it for a look).
    #[test]
    fn a_search_draws_its_trials_and_bounds() {
        let curve = LossCurve::Linear {
            knee: 5e5,
            slope: 0.5,
        };
        let mut dut = SimulatedDut::new(curve, 0.0, 3);
        let result = search(&SearchConfig::mlrsearch(), 1e6, &mut dut).unwrap();
        let chart = LossChart {
            file_name: "search.png".into(),
            title: "Loss ratio against offered load: simulated".into(),
            searches: vec!["iteration 1".into()],
            goals: vec![("NDR".into(), 0.0), ("PDR".into(), 0.005)],
            points: (result.trials.iter())
                .map(|t| LossPoint {
                    load: t.load,
                    loss_ratio: t.loss_ratio,
                    search: 0,
                    kind: if t.warmup {
                        PointKind::Warmup
                    } else {
                        PointKind::Measured
                    },
                })
                .collect(),
            bounds: (result.goals.iter())
                .map(|g| BoundMark {
                    goal: g.goal.name.clone(),
                    search: 0,
                    lower: g.relevant_lower_bound,
                    upper: g.relevant_upper_bound,
                })
                .collect(),
            max_load: result.max_load,
        };
        let png = render_png(&chart).unwrap();
        assert!(png.starts_with(b"\x89PNG"));
        let info = png::Decoder::new(std::io::Cursor::new(&png))
            .read_info()
            .unwrap();
        assert_eq!((info.info().width, info.info().height), (WIDTH, HEIGHT));
        if let Some(path) = std::env::var_os("BENCHLAB_CHART") {
            std::fs::write(path, &png).unwrap();
        }
        let broken = LossChart {
            max_load: f64::NAN,
            ..chart
        };
        assert!(render_png(&broken).is_err());
    }
}
