//! What the line charts (the searches' loss, latency against load and its distributions)
//! share beyond [`crate::report::chart`]'s conventions: the legend of their labelled series and
//! the look of their mesh.

use plotters::chart::MeshStyle;
use plotters::prelude::*;

use super::{font, DrawResult};

/// Draws the legend of a chart's labelled series, at its upper left.
pub(crate) fn legend<'a, X: Ranged, Y: Ranged>(
    ctx: &mut ChartContext<'a, BitMapBackend<'a>, Cartesian2d<X, Y>>,
) -> DrawResult {
    ctx.configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(font(24.0))
        .background_style(WHITE.mix(0.9))
        .border_style(RGBColor(0x80, 0x80, 0x80))
        .draw()?;
    Ok(())
}

/// The look the line charts' meshes share: label and axis description fonts, grid colours.
pub(crate) fn mesh_look<'m, 'a, 'b, X: Ranged, Y: Ranged, DB: DrawingBackend>(
    mesh: &'m mut MeshStyle<'a, 'b, X, Y, DB>,
) -> &'m mut MeshStyle<'a, 'b, X, Y, DB> {
    mesh.x_label_style(font(24.0))
        .y_label_style(font(24.0))
        .axis_desc_style(font(26.0))
        .bold_line_style(RGBColor(0xC8, 0xC8, 0xC8))
        .light_line_style(RGBColor(0xEE, 0xEE, 0xEE))
}
