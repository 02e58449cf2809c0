//! The look shared by every chart: palette, ink, text, the legend panel, point shapes and the
//! crossover mark.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Series colours, in order (the "Tableau 10" palette); series beyond ten reuse them with
/// another point shape.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

pub(super) fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

pub(super) const FAMILY: &str = "sans-serif";
pub(super) const GRID: RGBColor = RGBColor(225, 225, 225);
pub(super) const INK: RGBColor = RGBColor(40, 40, 40);
pub(super) const MARKER_INK: RGBColor = RGBColor(90, 90, 90);

pub(super) fn text(size: f64) -> TextStyle<'static> {
    (FAMILY, size).into_font().color(&INK)
}

/// The width of the legend panel for these entries.
pub(super) fn legend_width<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, names: &[&str]) -> u32 {
    let style = text(15.0);
    let widest = names.iter().filter_map(|n| root.estimate_text_size(n, &style).ok()).map(|s| s.0).max().unwrap_or(0);
    (widest + 70).clamp(130, 380)
}

/// One legend entry's swatch.
pub(super) enum Swatch {
    Line(usize),
    Box(usize),
    Cross,
    Dashed,
}

/// Draw the legend entries top-down in `area` (the panel right of the chart).
pub(super) fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(Swatch, String)],
) -> Result<(), String> {
    let (w, _) = area.dim_in_pixel();
    let row = 24;
    let top = 40;
    area.draw(&Text::new("legend", (10, top - 28), text(14.0).color(&MARKER_INK))).map_err(err)?;
    let h = top + row * entries.len() as i32 - 6;
    area.draw(&Rectangle::new([(4, top - 10), (w as i32 - 8, h)], ShapeStyle::from(&GRID).stroke_width(1)))
        .map_err(err)?;
    for (i, (swatch, name)) in entries.iter().enumerate() {
        let y = top + row * i as i32 + 2;
        let (x0, x1) = (12, 40);
        match swatch {
            Swatch::Line(k) => {
                let c = colour(*k);
                area.draw(&PathElement::new(vec![(x0, y), (x1, y)], c.stroke_width(2))).map_err(err)?;
                draw_point(area, *k, (x0 + x1) / 2, y)?;
            }
            Swatch::Box(k) => {
                area.draw(&Rectangle::new([(x0, y - 7), (x1, y + 7)], colour(*k).filled())).map_err(err)?;
            }
            Swatch::Cross => {
                draw_cross(area, (x0 + x1) / 2, y)?;
            }
            Swatch::Dashed => {
                for s in (x0..x1).step_by(8) {
                    area.draw(&PathElement::new(vec![(s, y), ((s + 4).min(x1), y)], MARKER_INK.stroke_width(2)))
                        .map_err(err)?;
                }
            }
        }
        area.draw(&Text::new(name.clone(), (x1 + 8, y), text(15.0).pos(Pos::new(HPos::Left, VPos::Center))))
            .map_err(err)?;
    }
    Ok(())
}

/// Draw the point shape of series `k` at a pixel: circle, triangle, square, diamond (by k / 10).
pub(super) fn draw_point<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    k: usize,
    x: i32,
    y: i32,
) -> Result<(), String> {
    let style = colour(k).filled();
    let s = 4;
    let at = EmptyElement::at((x, y));
    match (k / PALETTE.len()) % 4 {
        0 => area.draw(&(at + Circle::new((0, 0), s, style))),
        1 => area.draw(&(at + TriangleMarker::new((0, 0), s + 1, style))),
        2 => area.draw(&(at + Rectangle::new([(-s, -s), (s, s)], style))),
        _ => area.draw(&(at + Polygon::new(vec![(0, -s - 1), (s + 1, 0), (0, s + 1), (-s - 1, 0)], style))),
    }
    .map_err(err)
}

/// Draw the crossover mark at a pixel: a black ring around a black dot.
pub(super) fn draw_cross<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, x: i32, y: i32) -> Result<(), String> {
    let mark = EmptyElement::at((x, y))
        + Circle::new((0, 0), 7, BLACK.stroke_width(2))
        + Circle::new((0, 0), 3, BLACK.filled());
    area.draw(&mark).map_err(err)
}

/// A drawing error as text.
pub(super) fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}
