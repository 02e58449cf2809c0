//! Charts as PNG and SVG: line charts ([`line_chart`]: one curve per series, crossovers
//! marked, optional vertical markers, linear or log x), stacked bars ([`stacked_bars`]: one
//! bar per item, stacked layers) and heat maps ([`heatmap`]: cells coloured by value). Each
//! writes `<stem>.png` and `<stem>.svg` of [`spec::SIZE`] pixels, drawn with `plotters`; text is
//! drawn with DejaVu Sans embedded in the binary (`assets/`), so no system font is looked up
//! and the output is the same on every machine. Colours come from a fixed palette in series
//! order (heat maps: a fixed scale), so the same input always gives byte-identical files.
//! [`runs`] builds the stacked bars of run records (time breakdown, traffic volume) that
//! `commlab plot` and `commlab experiment` draw.
//!
//! Line charts join the measured points with straight segments (nothing is drawn between
//! them); a log x axis is labelled at round values (the data's own when they are a few round
//! ones, else 1-2-5 per decade or sparser, for sizes in bytes powers of two) chosen so their
//! labels do not overlap, printed short (100k, 1M; sizes 4K, 64M: [`XKind`]); crossover
//! labels are placed clear of marks, other labels and the drawn curves.
//!
//! Data rules (both kinds): non-finite values are skipped (a failed or missing point); an
//! empty chart is an error, as is a log x axis with an x <= 0; a single point or all-zero values
//! still draw (the axes widen around them). Errors are one line of text naming the problem and,
//! for a file, its path.
//!
//! Submodules: `render` (files, font, backends), `style` (palette, text, legend, point
//! shapes), `axis` (ranges and tick text), `line`, `bars` and `heatmap` (each kind's data
//! checks and drawing), `runs` (bars of run records).

mod axis;
mod bars;
mod heatmap;
mod line;
mod render;
pub mod runs;
mod spec;
mod style;

pub(crate) use axis::{short_number, XKind};
pub(crate) use bars::stacked_bars;
pub(crate) use heatmap::heatmap;
pub(crate) use line::line_chart;
pub(crate) use spec::{BarChart, Cross, Heatmap, LineChart, Marker, Series};

#[cfg(test)]
mod testing {
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A fresh directory under the system temp directory.
    pub fn tmp(name: &str) -> PathBuf {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let d = std::env::temp_dir().join(format!("commlab-plot-unit-{}-{n}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    pub fn is_png(p: &Path) -> bool {
        std::fs::read(p).unwrap().starts_with(b"\x89PNG\r\n\x1a\n")
    }
}
