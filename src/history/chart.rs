//! A trend as CSIT's trending pages draw one: each run's iterations as points in series order,
//! each jumpavg group as its average line over its runs with a ±stdev band, red where the
//! group is a regression, green a progression, blue otherwise; reviews drawn beside their
//! revision as orange crosses.

use anyhow::anyhow;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::trend::Trend;
use crate::report::chart::{encode_png, register_font, FONT_FAMILY, HEIGHT, WIDTH};
use crate::stats::jumpavg::Trend as Kind;
use crate::units::format_pps;

const BLUE_GROUP: RGBColor = RGBColor(0x1F, 0x5F, 0xBF);
const RED: RGBColor = RGBColor(0xC0, 0x10, 0x10);
const GREEN: RGBColor = RGBColor(0x10, 0x90, 0x30);
const ORANGE: RGBColor = RGBColor(0xE0, 0x80, 0x00);

/// The trend as PNG bytes; `None` when it has nothing to draw.
pub(crate) fn render_png(trend: &Trend) -> anyhow::Result<Option<Vec<u8>>> {
    if trend.points.is_empty() {
        return Ok(None);
    }
    register_font()?;
    let mut rgb = vec![0u8; (WIDTH * HEIGHT * 3) as usize];
    draw(trend, &mut rgb).map_err(|e| anyhow!("drawing the trend of {}: {e}", trend.name()))?;
    Ok(Some(encode_png(&rgb)?))
}

fn colour(kind: Kind) -> RGBColor {
    match kind {
        Kind::Regression => RED,
        Kind::Progression => GREEN,
        Kind::Normal => BLUE_GROUP,
    }
}

/// The plot's coordinates: x in runs, y in packets per second.
type Plot<'a, 'b> =
    ChartContext<'a, BitMapBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Each group's ±stdev band and average line, one legend entry per kind of group.
fn draw_groups(chart: &mut Plot<'_, '_>, trend: &Trend) -> Result<(), Box<dyn std::error::Error>> {
    let mut named = [false; 3];
    for group in &trend.grouping.groups {
        let c = colour(group.trend);
        let (x0, x1) = (
            group.start as f64 - 0.4,
            (group.start + group.len) as f64 - 0.6,
        );
        let (lo, hi) = ((group.avg - group.stdev).max(0.0), group.avg + group.stdev);
        chart.draw_series(std::iter::once(Rectangle::new(
            [(x0, lo), (x1, hi)],
            c.mix(0.15).filled(),
        )))?;
        let line = chart.draw_series(std::iter::once(PathElement::new(
            vec![(x0, group.avg), (x1, group.avg)],
            c.stroke_width(3),
        )))?;
        // One legend entry per kind of group drawn.
        let kind = group.trend as usize;
        if !named[kind] {
            named[kind] = true;
            line.label(match group.trend {
                Kind::Normal => "group average, ±stdev band",
                Kind::Regression => "regression: group below the one before",
                Kind::Progression => "progression: group above the one before",
            })
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], c.stroke_width(3)));
        }
    }
    Ok(())
}

fn draw(trend: &Trend, rgb: &mut [u8]) -> Result<(), Box<dyn std::error::Error>> {
    let n = trend.points.len();
    let values = (trend.points.iter().flat_map(|p| p.values.iter()))
        .chain(trend.variants.iter().flat_map(|(_, p)| p.values.iter()))
        .copied()
        .filter(|v| v.is_finite());
    let top = values.fold(0.0, f64::max).max(1.0) * 1.1;
    let root = BitMapBackend::with_buffer(rgb, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let labels: Vec<String> = trend.points.iter().map(|p| p.axis_name()).collect();
    // Up to about 25 labels fit the axis; beyond, every k-th run is named.
    let step = n.div_ceil(25).max(1);
    let mut chart = ChartBuilder::on(&root)
        .caption(trend.name(), (FONT_FAMILY, 34.0))
        .margin(24)
        .x_label_area_size(110)
        .y_label_area_size(150)
        .build_cartesian_2d(-0.6..(n as f64 - 0.4), 0.0..top)?;
    chart
        .configure_mesh()
        .x_labels(n.min(25 * 2))
        .x_label_formatter(&|x| {
            let i = x.round();
            let at = i as usize;
            if (x - i).abs() < 0.01 && i >= 0.0 && at < labels.len() && at % step == 0 {
                labels[at].clone()
            } else {
                String::new()
            }
        })
        .x_desc("runs in revision order (a date where the version names no revision)")
        .y_desc("received (per iteration)")
        .y_label_formatter(&|v| format_pps(*v))
        .label_style((FONT_FAMILY, 20.0))
        .axis_desc_style((FONT_FAMILY, 24.0))
        .draw()?;
    draw_groups(&mut chart, trend)?;
    let grey = RGBColor(0x30, 0x30, 0x30);
    chart
        .draw_series(trend.points.iter().enumerate().flat_map(|(i, p)| {
            (p.values.iter())
                .filter(|v| v.is_finite())
                .map(move |&v| Circle::new((i as f64, v), 4, grey.filled()))
        }))?
        .label("iterations of a run")
        .legend(move |(x, y)| Circle::new((x + 12, y), 4, grey.filled()));
    let reviews = chart.draw_series(trend.variants.iter().flat_map(|(at, p)| {
        let x = at.map_or(-0.5, |i| i as f64 + 0.3);
        (p.values.iter())
            .filter(|v| v.is_finite())
            .map(move |&v| Cross::new((x, v), 6, ORANGE.stroke_width(3)))
    }))?;
    if !trend.variants.is_empty() {
        reviews
            .label("a review on top of a revision, beside it")
            .legend(move |(x, y)| Cross::new((x + 12, y), 6, ORANGE.stroke_width(3)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT_FAMILY, 22.0))
        .position(SeriesLabelPosition::LowerLeft)
        .draw()?;
    root.present()?;
    Ok(())
}
