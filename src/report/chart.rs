//! Grouped bar charts of medians with min–max whiskers, drawn with plotters into PNG bytes.
//!
//! The [`Chart`] value holds everything the picture shows (tests check it instead of pixels);
//! [`render_png`] only draws it. Layout follows the seeds' gnuplot graphs: config sets on the
//! x axis, one bar per version, the median as the bar and the minimum and maximum iteration as
//! whiskers, a pps axis starting at zero, the legend inside at the top right.
//!
//! [`Chart`]: crate::report::chart::Chart
//! [`render_png`]: crate::report::chart::render_png

use std::sync::OnceLock;

use anyhow::{anyhow, Context};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::report::{Exporter, OutputFile, Report};
use crate::units::{format_pps, format_tick, pps_unit};

/// What the line charts share: the legend and the mesh's look.
pub(crate) mod lines;

/// Width of the PNG, in pixels (the seeds' gnuplot terminal size).
pub(crate) const WIDTH: u32 = 1920;
/// Height of the PNG, in pixels.
pub(crate) const HEIGHT: u32 = 1080;

/// The font every chart is drawn with, compiled in so that a chart looks the same on every
/// machine and needs no font installed (assets/fonts/LICENSE).
const FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
/// The family name the built-in font is registered under.
pub(crate) const FONT_FAMILY: &str = "sans-serif";

/// Bar colours, in legend order: the seeds' gnuplot line styles first.
pub(crate) const PALETTE: [RGBColor; 8] = [
    RGBColor(0xA0, 0x00, 0x00),
    RGBColor(0x00, 0xA0, 0x00),
    RGBColor(0x50, 0x60, 0xD0),
    RGBColor(0xF2, 0x59, 0x00),
    RGBColor(0x8E, 0x44, 0xAD),
    RGBColor(0x16, 0xA0, 0x85),
    RGBColor(0x7F, 0x8C, 0x8D),
    RGBColor(0xD4, 0xAC, 0x0D),
];

/// What one chart shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Output file name (`graph.inet4.png`, or `graph.png` for a single traffic profile).
    pub file_name: String,
    /// The traffic profile shown (empty when the logs have no such level).
    pub(crate) profile: String,
    /// First title line.
    pub(crate) title: String,
    /// Second title line: the traffic profile and what the logs say about it.
    pub subtitle: String,
    /// Label of the y axis.
    pub(crate) y_label: String,
    /// Label of the x axis.
    pub(crate) x_label: String,
    /// The x-axis groups (config sets), in display order.
    pub groups: Vec<String>,
    /// One entry per bar colour (versions), in legend order.
    pub members: Vec<String>,
    /// The bars; a (group, member) pair without data has no bar.
    pub bars: Vec<Bar>,
}

/// One bar: the median of a series' iteration medians, with whiskers at the extremes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bar {
    /// Index into [`Chart::groups`].
    pub group: usize,
    /// Index into [`Chart::members`].
    pub member: usize,
    /// Bar height: the median, in packets per second.
    pub median: f64,
    /// Lower whisker: the smallest iteration median, in packets per second.
    pub min: f64,
    /// Upper whisker: the largest iteration median, in packets per second.
    pub max: f64,
}

/// Registers the built-in font once per process; every chart calls it before drawing.
pub(crate) fn register_font() -> anyhow::Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FONT_FAMILY, FontStyle::Normal, FONT).is_ok()
    });
    ok.then_some(())
        .ok_or_else(|| anyhow!("the built-in chart font does not load"))
}

/// Draws the chart and encodes it as a PNG of [`WIDTH`] × [`HEIGHT`] pixels.
pub(crate) fn render_png(chart: &Chart) -> anyhow::Result<Vec<u8>> {
    png_of(&chart.file_name, |rgb| draw(chart, rgb))
}

/// The PNG of [`WIDTH`] × [`HEIGHT`] pixels that `draw` paints into an RGB buffer, the font
/// registered first; an error names `file_name`.
pub(super) fn png_of(
    file_name: &str,
    draw: impl FnOnce(&mut [u8]) -> DrawResult,
) -> anyhow::Result<Vec<u8>> {
    register_font()?;
    let mut rgb = vec![0u8; (WIDTH * HEIGHT * 3) as usize];
    draw(&mut rgb).map_err(|e| anyhow!("drawing {file_name}: {e}"))?;
    encode_png(&rgb).with_context(|| format!("encoding {file_name}"))
}

/// An RGB buffer of [`WIDTH`] × [`HEIGHT`] pixels as PNG bytes.
pub(crate) fn encode_png(rgb: &[u8]) -> Result<Vec<u8>, png::EncodingError> {
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, WIDTH, HEIGHT);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    // Flat colours compress well even at the fast setting, which is several times quicker.
    encoder.set_compression(png::Compression::Fast);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(rgb)?;
    writer.finish()?;
    Ok(bytes)
}

pub(super) type DrawResult = Result<(), Box<dyn std::error::Error>>;
pub(super) type Area<'a> = DrawingArea<BitMapBackend<'a>, plotters::coord::Shift>;

const TITLE_SIZE: f64 = 40.0;
const SUBTITLE_SIZE: f64 = 28.0;
const LEGEND_SIZE: f64 = 28.0;
/// Height of one legend row, in pixels.
const LEGEND_ROW: i32 = 40;
/// Up to this many versions the legend sits inside the plot, at the top right like the seeds';
/// more go in columns beside the plot.
const LEGEND_INSIDE_MAX: usize = 8;

pub(super) fn font(size: f64) -> FontDesc<'static> {
    (FONT_FAMILY, size).into_font()
}

/// The plot's coordinates: x in groups, y in packets per second.
type Plot<'a, 'b> =
    ChartContext<'a, BitMapBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

fn draw(chart: &Chart, rgb: &mut [u8]) -> DrawResult {
    let root = BitMapBackend::with_buffer(rgb, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let area = root.margin(16, 0, 0, 0);
    let area = titled(&area, &chart.title, TITLE_SIZE, BLACK)?;
    let area = titled(
        &area,
        &chart.subtitle,
        SUBTITLE_SIZE,
        RGBColor(0x40, 0x40, 0x40),
    )?;

    let legend = Legend::new(&root, &chart.members)?;
    let (plot_area, side) = if legend.inside() {
        (area, None)
    } else {
        let (plot, side) = area.split_horizontally(WIDTH as i32 - legend.width() - 10);
        (plot, Some(side))
    };
    let y_max = y_max(chart, &plot_area, &legend)?;
    let (scale, unit) = pps_unit(y_max);
    let groups = chart.groups.len().max(1);

    let mut ctx = ChartBuilder::on(&plot_area)
        .margin_left(20)
        .margin_right(60)
        .margin_top(10)
        .margin_bottom(10)
        .x_label_area_size(110)
        .y_label_area_size(190)
        .build_cartesian_2d(0f64..groups as f64, 0f64..y_max)?;
    let y_format = |v: &f64| format_tick(*v, (scale, unit));
    ctx.configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_labels(12)
        .y_max_light_lines(2)
        .y_label_formatter(&y_format)
        .y_label_style(font(24.0))
        .y_desc(chart.y_label.as_str())
        .x_desc(chart.x_label.as_str())
        .axis_desc_style(font(26.0))
        .bold_line_style(RGBColor(0xC8, 0xC8, 0xC8))
        .light_line_style(RGBColor(0xEE, 0xEE, 0xEE))
        .axis_style(RGBColor(0x80, 0x80, 0x80))
        .draw()?;
    draw_bars(&mut ctx, &root, chart)?;
    let group_style = TextStyle::from(font(28.0)).pos(Pos::new(HPos::Center, VPos::Top));
    for (index, name) in chart.groups.iter().enumerate() {
        let (x, y) = ctx.backend_coord(&(index as f64 + 0.5, 0.0));
        root.draw(&Text::new(name.as_str(), (x, y + 14), group_style.clone()))?;
    }
    match side {
        Some(side) => {
            let (x, y) = side.get_base_pixel();
            legend.draw(&root, (x, y + 20))?;
        }
        None => {
            let (x, _) = ctx.backend_coord(&(groups as f64, 0.0));
            let (_, y) = ctx.backend_coord(&(0.0, y_max));
            legend.draw(&root, (x - legend.width() - 10, y + 10))?;
        }
    }
    root.present()?;
    Ok(())
}

/// The top of the y axis: head room above the tallest whisker for its value label and, when
/// the legend is inside, for the legend.
fn y_max(chart: &Chart, plot_area: &Area<'_>, legend: &Legend<'_>) -> Result<f64, String> {
    // Charts are built from drawable bars only; a hand-made one is checked all the same, as
    // an infinite axis would never finish drawing.
    let top = chart
        .bars
        .iter()
        .map(|b| b.max.max(b.median))
        .fold(0.0, f64::max);
    if !(top * 2.0).is_finite() || chart.bars.iter().any(|b| b.min.is_nan()) {
        return Err(format!("a bar of '{}' is not finite", chart.file_name));
    }
    let plot_height = f64::from(plot_area.dim_in_pixel().1) - 130.0;
    // The share of the plot above the tallest bar: its value label (40 px), and the legend
    // with its offset from the top when it is inside, whose right end covers the last bars.
    let above = if legend.inside() {
        f64::from(legend.height() + 10) + 40.0
    } else {
        40.0
    };
    let share = (above / plot_height).min(0.6);
    Ok(if top > 0.0 {
        top * (1.0 / (1.0 - share)).max(1.22)
    } else {
        1.0
    })
}

/// The bars, their whiskers, and their values above them where the bars are wide enough.
fn draw_bars(ctx: &mut Plot<'_, '_>, root: &Area<'_>, chart: &Chart) -> DrawResult {
    let members = chart.members.len().max(1);
    let slot = 0.8 / members as f64;
    let gap = slot * 0.08;
    let left = |bar: &Bar| bar.group as f64 + 0.1 + bar.member as f64 * slot + gap;
    let right = |bar: &Bar| bar.group as f64 + 0.1 + (bar.member + 1) as f64 * slot - gap;
    let bar_pixels =
        ctx.backend_coord(&(slot - 2.0 * gap, 0.0)).0 - ctx.backend_coord(&(0.0, 0.0)).0;
    ctx.draw_series(chart.bars.iter().map(|bar| {
        Rectangle::new(
            [(left(bar), 0.0), (right(bar), bar.median)],
            colour(bar.member).filled(),
        )
    }))?;
    let whisker = ShapeStyle::from(&BLACK).stroke_width(if bar_pixels > 12 { 3 } else { 1 });
    for bar in &chart.bars {
        let centre = (left(bar) + right(bar)) / 2.0;
        let cap = (right(bar) - left(bar)) / 6.0;
        ctx.draw_series([
            PathElement::new([(centre, bar.min), (centre, bar.max)], whisker),
            PathElement::new([(centre - cap, bar.min), (centre + cap, bar.min)], whisker),
            PathElement::new([(centre - cap, bar.max), (centre + cap, bar.max)], whisker),
        ])?;
    }
    let value_style = TextStyle::from(font(22.0)).pos(Pos::new(HPos::Center, VPos::Bottom));
    for bar in &chart.bars {
        let text = format_pps(bar.median);
        // Values are only legible when the bar is wider than its label.
        if root.estimate_text_size(&text, &value_style)?.0 as i32 > bar_pixels + 8 {
            continue;
        }
        let (x, y) = ctx.backend_coord(&((left(bar) + right(bar)) / 2.0, bar.max.max(bar.median)));
        root.draw(&Text::new(text, (x, y - 6), value_style.clone()))?;
    }
    Ok(())
}

pub(super) fn colour(member: usize) -> RGBColor {
    PALETTE[member % PALETTE.len()]
}

/// Draws a centred title line and returns the area below it; the text is made smaller, then
/// cut, so that it fits the width.
pub(super) fn titled<'a>(
    area: &Area<'a>,
    text: &str,
    size: f64,
    colour: RGBColor,
) -> Result<Area<'a>, Box<dyn std::error::Error>> {
    if text.is_empty() {
        return Ok(area.clone());
    }
    let room = WIDTH - 40;
    let mut size = size;
    while size > 20.0 && area.estimate_text_size(text, &font(size).into())?.0 > room {
        size -= 2.0;
    }
    let mut text = text.to_string();
    while area.estimate_text_size(&text, &font(size).into())?.0 > room && text.chars().count() > 1 {
        text.pop();
        text.pop();
        text.push('…');
    }
    Ok(area.titled(&text, font(size).color(&colour))?)
}

/// The colour key: one row per version, in columns when they do not fit one.
struct Legend<'n> {
    names: &'n [String],
    rows: usize,
    column_width: i32,
}

impl<'n> Legend<'n> {
    fn new(root: &Area<'_>, names: &'n [String]) -> Result<Self, Box<dyn std::error::Error>> {
        let mut text_width = 0;
        for name in names {
            text_width =
                text_width.max(root.estimate_text_size(name, &font(LEGEND_SIZE).into())?.0);
        }
        let rows = if names.len() <= LEGEND_INSIDE_MAX {
            names.len()
        } else {
            // Rows that fit beside the plot, below the titles.
            ((HEIGHT as i32 - 220) / LEGEND_ROW) as usize
        };
        Ok(Legend {
            names,
            rows: rows.max(1),
            column_width: text_width as i32 + 70,
        })
    }

    fn inside(&self) -> bool {
        self.names.len() <= LEGEND_INSIDE_MAX
    }

    fn columns(&self) -> i32 {
        self.names.len().div_ceil(self.rows).max(1) as i32
    }

    fn width(&self) -> i32 {
        self.columns() * self.column_width + 20
    }

    fn height(&self) -> i32 {
        self.rows.min(self.names.len()) as i32 * LEGEND_ROW + 20
    }

    fn draw(&self, root: &Area<'_>, (x, y): (i32, i32)) -> DrawResult {
        if self.names.is_empty() {
            return Ok(());
        }
        root.draw(&Rectangle::new(
            [(x, y), (x + self.width(), y + self.height())],
            WHITE.mix(0.9).filled(),
        ))?;
        root.draw(&Rectangle::new(
            [(x, y), (x + self.width(), y + self.height())],
            RGBColor(0x80, 0x80, 0x80),
        ))?;
        let style = TextStyle::from(font(LEGEND_SIZE)).pos(Pos::new(HPos::Left, VPos::Center));
        for (i, name) in self.names.iter().enumerate() {
            let column = (i / self.rows) as i32;
            let row = (i % self.rows) as i32;
            let left = x + 20 + column * self.column_width;
            let middle = y + 10 + row * LEGEND_ROW + LEGEND_ROW / 2;
            root.draw(&Rectangle::new(
                [(left, middle - 10), (left + 28, middle + 10)],
                colour(i).filled(),
            ))?;
            root.draw(&Text::new(
                name.as_str(),
                (left + 40, middle),
                style.clone(),
            ))?;
        }
        Ok(())
    }
}

/// True when a series' bar can be drawn: median, minimum and maximum finite, with head room
/// above them (an infinite axis would never finish drawing).
pub(crate) fn drawable(summary: &crate::stats::Summary) -> bool {
    [summary.median, summary.min, summary.max]
        .iter()
        .all(|v| v.is_finite() && (v * 2.0).is_finite())
}

impl Report {
    /// One chart per traffic profile: config sets on the x axis, one bar per version.
    pub fn charts(&self) -> Vec<Chart> {
        let single = self.profiles.len() == 1;
        let unnamed = self.configs.iter().all(String::is_empty);
        self.profiles
            .iter()
            .map(|profile| {
                let mut bars = Vec::new();
                for (group, config) in self.configs.iter().enumerate() {
                    for (member, version) in self.versions.iter().enumerate() {
                        let found = self.find(version, config, profile);
                        let summary = found.and_then(|i| self.series[i].summary);
                        if let Some(s) = summary.filter(drawable) {
                            bars.push(Bar {
                                group,
                                member,
                                median: s.median,
                                min: s.min,
                                max: s.max,
                            });
                        }
                    }
                }
                let iterations = self.iteration_counts(profile);
                Chart {
                    file_name: if single || profile.is_empty() {
                        "graph.png".to_string()
                    } else {
                        format!("graph.{profile}.png")
                    },
                    profile: profile.clone(),
                    title: self.title.clone(),
                    subtitle: super::traffic::traffic_summary(self, profile),
                    y_label: format!(
                        "Packets per second: median of {iterations} iterations, whiskers at min and max"
                    ),
                    // An archive of versions alone has one config set without a name: no
                    // group to name under its bars.
                    x_label: if unnamed { "" } else { "Config set" }.to_string(),
                    groups: (self.configs.iter())
                        .map(|c| if unnamed { "" } else { self.label(c) }.to_string())
                        .collect(),
                    members: (self.versions.iter())
                        .map(|v| self.version_label(v).to_string())
                        .collect(),
                    bars,
                }
            })
            .collect()
    }

    /// "5" or "3 to 5": how many iterations the charted series of a profile have.
    fn iteration_counts(&self, profile: &str) -> String {
        let counts = self
            .summarised()
            .filter(|(s, _)| s.series.profile == profile)
            .map(|(_, summary)| summary.n);
        let (min, max) = counts.fold((usize::MAX, 0), |(lo, hi), n| (lo.min(n), hi.max(n)));
        if min >= max {
            max.to_string()
        } else {
            format!("{min} to {max}")
        }
    }
}

/// The PNG graphs, one per traffic profile.
pub(crate) struct ChartExporter;

impl Exporter for ChartExporter {
    fn files(&self, report: &Report) -> anyhow::Result<Vec<OutputFile>> {
        (report.charts().iter())
            .map(|chart| {
                Ok(OutputFile {
                    name: chart.file_name.clone(),
                    bytes: render_png(chart)?,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
