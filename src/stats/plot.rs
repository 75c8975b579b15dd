//! ministat's ASCII plot: each dataset's values binned by column and stacked upward, then
//! bars showing mean ± standard deviation (`|___|`), the median (`M`) and the mean (`A`).
//!
//! Ported from FreeBSD ministat (`usr.bin/ministat/ministat.c`, Poul-Henning Kamp, beerware
//! licence: "as long as you retain this notice you can do whatever you want with this stuff"),
//! with its global plot state turned into a value. Its quirks are kept because they show in
//! the output: the canvas height is the *last* dataset's stack height (taller stacks of earlier
//! datasets are cut), overlapping datasets OR their indexes (x and + make `*`), and later bars
//! overwrite earlier ones on a shared bar line.

use super::summary::{Sample, Summary};

/// Plot symbols of datasets 1..=7 (index 0 is an empty cell); also the legend's symbols.
pub(crate) const SYMBOLS: [char; 8] = [' ', 'x', '+', '*', '%', '#', '@', 'O'];

/// A rendered plot: its lines, without newlines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plot {
    /// The lines as ministat prints them: frame, stacked points, bar line(s), frame; or the
    /// single line `[no plot, span is zero width]`.
    pub(crate) lines: Vec<String>,
}

/// One dataset to plot: its sorted values and its vitals.
#[derive(Debug, Clone, Copy)]
struct PlotInput<'a> {
    /// The values, sorted ascending.
    pub(crate) sorted: &'a [f64],
    /// Their vitals (mean, median and standard deviation are drawn).
    pub(crate) summary: &'a Summary,
}

/// The scale: `columns` cells from `x0` in steps of `dx`.
struct Scale {
    x0: f64,
    dx: f64,
    columns: usize,
}

impl Scale {
    /// The cell of `value`, `None` when outside the canvas. The C code truncates toward zero
    /// into an `int`; values of the data and their mean ± stddev always land inside.
    fn column(&self, value: f64) -> Option<usize> {
        let x = self.raw(value);
        usize::try_from(x).ok().filter(|&x| x < self.columns)
    }

    fn raw(&self, value: f64) -> i64 {
        ((value - self.x0) / self.dx) as i64
    }
}

impl Plot {
    /// Plots `samples`, whose vitals are `summaries` (same order): see `Plot::new`.
    pub(crate) fn of(
        samples: &[Sample],
        summaries: &[Summary],
        width: usize,
        separate_bars: bool,
    ) -> Plot {
        let inputs: Vec<PlotInput> = samples
            .iter()
            .zip(summaries)
            .map(|(sample, summary)| PlotInput {
                sorted: sample.sorted(),
                summary,
            })
            .collect();
        Plot::new(&inputs, width, separate_bars)
    }

    /// Plots the datasets (at most 7: their symbols are OR-ed bit patterns) on a canvas
    /// `width` columns wide, with one bar line per dataset when `separate_bars` (`-s`) or one
    /// shared line.
    fn new(datasets: &[PlotInput<'_>], width: usize, separate_bars: bool) -> Plot {
        let (mut min, mut max) = (999e99_f64, -999e99_f64);
        for d in datasets {
            let s = d.summary;
            for v in [s.min, s.max, s.mean - s.stddev, s.mean + s.stddev] {
                if v < min {
                    min = v;
                }
                if v > max {
                    max = v;
                }
            }
        }
        let span = max - min;
        if span == 0.0 {
            return Plot {
                lines: vec!["[no plot, span is zero width]".to_string()],
            };
        }
        if !span.is_finite() {
            // ministat divides by an infinite step here and crashes.
            return Plot {
                lines: vec!["[no plot, span is infinite]".to_string()],
            };
        }
        let dx = span / (width as f64 - 1.0);
        let scale = Scale {
            x0: min - 0.5 * dx,
            dx,
            columns: width,
        };

        let mut cells: Vec<u8> = Vec::new();
        let mut height = 0;
        let mut bars: Vec<Option<Vec<u8>>> = vec![None; datasets.len()];
        for (index, d) in datasets.iter().enumerate() {
            let symbol = index as u8 + 1;
            let stack = stack_height(&scale, d.sorted) + 1;
            // The canvas takes this dataset's height, growing with empty rows or losing the
            // top rows of earlier datasets.
            cells.truncate(height.min(stack) * width);
            cells.resize(stack * width, 0);
            height = stack;
            let mut previous = -1;
            let mut level = 0;
            for &v in d.sorted {
                let x = scale.raw(v);
                if x == previous {
                    level += 1;
                } else {
                    level = 1;
                    previous = x;
                }
                if let Some(x) = scale.column(v) {
                    cells[level * width + x] |= symbol;
                }
            }
            let bar =
                bars[if separate_bars { index } else { 0 }].get_or_insert_with(|| vec![0; width]);
            draw_bar(bar, &scale, d.summary);
        }

        let frame = format!("+{}+", "-".repeat(width));
        let mut lines = vec![frame.clone()];
        for row in (1..height).rev() {
            let cells = &cells[row * width..(row + 1) * width];
            let inner: String = cells.iter().map(|&c| SYMBOLS[usize::from(c)]).collect();
            lines.push(format!("|{inner}|"));
        }
        for bar in bars.iter().flatten() {
            let inner: String = bar
                .iter()
                .map(|&c| if c == 0 { ' ' } else { char::from(c) })
                .collect();
            lines.push(format!("|{inner}|"));
        }
        lines.push(frame);
        Plot { lines }
    }
}

/// The tallest stack of equal cells among the sorted values (at least 1).
fn stack_height(scale: &Scale, sorted: &[f64]) -> usize {
    let (mut tallest, mut level, mut previous) = (1, 0, -1);
    for &v in sorted {
        let x = scale.raw(v);
        if x == previous {
            level += 1;
            tallest = tallest.max(level);
        } else {
            level = 1;
            previous = x;
        }
    }
    tallest
}

/// Draws `|` at mean ± stddev with `_` between (where the line is still empty), then `M` at
/// the median and `A` at the mean. A NaN stddev draws no `|___|`.
fn draw_bar(bar: &mut [u8], scale: &Scale, s: &Summary) {
    let put = |bar: &mut [u8], value: f64, c: u8| {
        if let Some(x) = scale.column(value) {
            bar[x] = c;
        }
    };
    if !s.stddev.is_nan() {
        put(bar, s.mean + s.stddev, b'|');
        put(bar, s.mean - s.stddev, b'|');
        let from = scale.raw(s.mean - s.stddev) + 1;
        let to = scale.raw(s.mean + s.stddev);
        for x in from.max(0)..to.min(scale.columns as i64) {
            let cell = &mut bar[x as usize];
            if *cell == 0 {
                *cell = b'_';
            }
        }
    }
    put(bar, s.median, b'M');
    put(bar, s.mean, b'A');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{Flavor, Sample};

    fn plot(sets: &[&[f64]], width: usize, separate: bool) -> Vec<String> {
        let samples: Vec<Sample> = sets.iter().map(|s| Sample::new(s.to_vec())).collect();
        let summaries: Vec<Summary> = samples.iter().map(|s| s.summary(Flavor::Legacy)).collect();
        Plot::of(&samples, &summaries, width, separate).lines
    }

    #[test]
    fn small_widths_like_ministat() {
        // `ministat -w 3 c b` and `-w 2` with c = 1 2 3 5, b = 1 2 3 4 (Debian 20150715). With
        // `-w 0` ministat writes outside its buffers (it printed this once, crashed other
        // times); benchlab draws an empty canvas of the same height.
        let (c, b): (&[f64], &[f64]) = (&[1.0, 2.0, 3.0, 5.0], &[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(
            plot(&[c, b], 3, false),
            ["+---+", "| * |", "|***|", "||A||", "+---+"]
        );
        assert_eq!(
            plot(&[c, b], 2, false),
            ["+--+", "|**|", "|**|", "|AM|", "+--+"]
        );
        assert_eq!(
            plot(&[c, b], 0, false),
            ["++", "||", "||", "||", "||", "||", "++"]
        );
    }

    #[test]
    fn zero_span() {
        assert_eq!(
            plot(&[&[2.0, 2.0, 2.0]], 74, false),
            ["[no plot, span is zero width]"]
        );
    }

    #[test]
    fn separate_bars() {
        // `ministat -s -w 10` with 1 2 3 and 4 5 6 (Debian 20150715).
        let lines = plot(&[&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]], 10, true);
        assert_eq!(
            lines,
            [
                "+----------+",
                "|x x x+ + +|",
                "||_A_|     |",
                "|     |_A_||",
                "+----------+"
            ]
        );
    }
}
