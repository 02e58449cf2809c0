//! What a chart shows: its series, marks and labels, and the size every chart is drawn at.

use super::axis::XKind;

/// Width and height in pixels of every plot (the SVG's view box too).
pub(crate) const SIZE: (u32, u32) = (1000, 640);

/// One curve.
pub(crate) struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A vertical marker on the x axis (e.g. where a real machine sits), drawn as a dashed line with its label.
pub(crate) struct Marker {
    pub x: f64,
    pub label: String,
}

/// A crossover: where variants `a` and `b` change order, drawn as a point with a small label "a/b".
pub(crate) struct Cross {
    pub x: f64,
    pub y: f64,
    pub label: String,
}

/// A line chart: one curve per series.
pub(crate) struct LineChart<'a> {
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub series: &'a [Series],
    pub crossovers: &'a [Cross],
    pub markers: &'a [Marker],
    pub log_x: bool,
    /// What the x values are (plain numbers or sizes in bytes), for the tick text.
    pub x_kind: XKind,
}

/// A heat map: one cell per (column, row), coloured by value (`heatmap`).
pub(crate) struct Heatmap<'a> {
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    /// What the colour bar measures.
    pub unit: &'a str,
    /// Column names, left to right.
    pub columns: &'a [String],
    /// Row names, bottom to top.
    pub rows: &'a [String],
    /// One row of values per row name (non-finite: a missing cell).
    pub values: &'a [Vec<f64>],
    /// Write each cell's value in it.
    pub annotate: bool,
}

/// A stacked bar chart.
pub(crate) struct BarChart<'a> {
    pub title: &'a str,
    pub y_label: &'a str,
    /// One bar per name.
    pub bars: &'a [String],
    /// Stacked layers, bottom first: (name, value per bar).
    pub layers: &'a [(String, Vec<f64>)],
}
