//! Writing a chart: the embedded font, `<stem>.png` and `<stem>.svg`, the same drawing on each
//! backend.

use super::spec::SIZE;
use super::style::FAMILY;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// DejaVu Sans 2.37 (license in `assets/DejaVuSans-LICENSE.txt`).
static FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

/// Register the embedded font with plotters (once per process).
fn font() -> Result<(), String> {
    static DONE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let ok = *DONE.get_or_init(|| plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok());
    if ok {
        Ok(())
    } else {
        Err("the embedded plot font could not be loaded".to_string())
    }
}

/// `<stem>.<ext>` (the stem may itself contain dots).
fn with_ext(stem: &Path, ext: &str) -> PathBuf {
    let mut s = stem.as_os_str().to_os_string();
    s.push(".");
    s.push(ext);
    PathBuf::from(s)
}

/// Check that the stem's directory exists, so no drawing starts that cannot be saved.
fn check_dir(stem: &Path) -> Result<(), String> {
    let dir = stem.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if dir.is_dir() {
        Ok(())
    } else {
        Err(format!("cannot write `{}`: its directory does not exist", with_ext(stem, "png").display()))
    }
}

/// Draw into `<stem>.png` with `png` and into `<stem>.svg` with `svg` (the same drawing, on
/// each backend).
pub(super) fn render(
    stem: &Path,
    png_draw: impl FnOnce(&DrawingArea<BitMapBackend, Shift>) -> Result<(), String>,
    svg_draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<(), String>,
) -> Result<Vec<PathBuf>, String> {
    font()?;
    check_dir(stem)?;
    let png = with_ext(stem, "png");
    let svg = with_ext(stem, "svg");
    let failed = |p: &Path, e: String| format!("cannot write `{}`: {e}", p.display());
    {
        let root = BitMapBackend::new(&png, SIZE).into_drawing_area();
        png_draw(&root).map_err(|e| failed(&png, e))?;
        root.present().map_err(|e| failed(&png, e.to_string()))?;
    }
    let mut svg_text = String::new();
    {
        let root = SVGBackend::with_string(&mut svg_text, SIZE).into_drawing_area();
        svg_draw(&root).map_err(|e| failed(&svg, e))?;
        root.present().map_err(|e| failed(&svg, e.to_string()))?;
    }
    std::fs::write(&svg, svg_text).map_err(|e| failed(&svg, e.to_string()))?;
    Ok(vec![png, svg])
}
