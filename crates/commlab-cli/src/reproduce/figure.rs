//! A study's figure regenerated: its data (`ID.csv`, `ID.json`) and its drawing (`ID.png`,
//! `ID.svg`, through `chart`), as the study drew it: curves against the study's x axis with
//! the crossovers marked, stacked bars, or a copy-transfer surface as a heat map.

use super::report::Drawn;
use crate::characterize::bandwidth_heatmap;
use crate::chart::{self, BarChart, Cross, LineChart, Marker, Series, XKind};
use crate::crossover::{crossovers, Crossover};
use crate::failure::{failed, Failure};
use serde_json::json;
use std::path::Path;

pub(crate) enum Plot {
    /// One curve per series; `crossovers`: mark where curves change order.
    Lines { x_label: String, y_label: String, series: Vec<Series>, log_x: bool, crossovers: bool, markers: Vec<Marker> },
    /// Stacked bars: one bar per name, layers bottom first.
    Bars { y_label: String, bars: Vec<String>, layers: Vec<(String, Vec<f64>)> },
    /// A copy-transfer surface: MB/s over stride (64-bit words, across) x working set (bytes,
    /// up), drawn as `commlab characterize` and `experiment copy-transfer` draw theirs;
    /// `mb_per_s[i][j]` at `sizes[i]`, `strides[j]` (NaN: missing).
    Heatmap { strides: Vec<usize>, sizes: Vec<u64>, mb_per_s: Vec<Vec<f64>> },
}

pub(crate) struct Figure {
    /// File stem, e.g. "fig8-em3d".
    pub id: String,
    /// The study's number, e.g. "Fig. 8".
    pub number: String,
    pub title: String,
    /// How the figure was made (what was run, what x and y are).
    pub about: String,
    pub plot: Plot,
}

/// Curves resampled onto the union of their x values (linear interpolation inside each curve's
/// range), so that curves measured at slightly different x (e.g. the cross-traffic rate each
/// run achieved) can be compared point by point; then their crossovers.
pub(crate) fn crossovers_between(series: &[Series]) -> Vec<Crossover> {
    let mut xs: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).filter(|x| x.is_finite()).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let curves: Vec<(String, Vec<(f64, f64)>)> = series
        .iter()
        .map(|s| {
            let mut pts: Vec<(f64, f64)> =
                s.points.iter().copied().filter(|p| p.0.is_finite() && p.1.is_finite()).collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let at = |x: f64| -> Option<f64> {
                let i = pts.iter().position(|p| p.0 >= x)?;
                if pts[i].0 == x {
                    return Some(pts[i].1);
                }
                let (a, b) = (pts.get(i.checked_sub(1)?)?, pts[i]);
                Some(a.1 + (b.1 - a.1) * (x - a.0) / (b.0 - a.0))
            };
            (s.name.clone(), xs.iter().filter_map(|&x| at(x).map(|y| (x, y))).collect())
        })
        .collect();
    crossovers(&curves)
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Draw `fig` into `dir` and write its data; returns what the report lists.
pub(crate) fn draw(dir: &Path, fig: &Figure) -> Result<Drawn, Failure> {
    let stem = dir.join(&fig.id);
    let write = |ext: &str, text: String| -> Result<String, Failure> {
        let p = stem.with_extension(ext);
        std::fs::write(&p, text).map_err(|e| failed(format!("writing `{}`: {e}", p.display())))?;
        Ok(p.display().to_string())
    };
    let mut files = Vec::new();
    match &fig.plot {
        Plot::Lines { x_label, y_label, series, log_x, crossovers: mark, markers } => {
            let found = if *mark { crossovers_between(series) } else { Vec::new() };
            let crosses: Vec<Cross> =
                found.iter().map(|c| Cross { x: c.x, y: c.y, label: format!("{}/{}", c.a, c.b) }).collect();
            let drawable: Vec<Series> = series
                .iter()
                .map(|s| Series {
                    name: s.name.clone(),
                    points: s.points.iter().copied().filter(|p| p.0.is_finite() && p.1.is_finite()).collect(),
                })
                .filter(|s| !s.points.is_empty())
                .collect();
            if !drawable.is_empty() {
                let chart = LineChart {
                    title: &fig.title,
                    x_label,
                    y_label,
                    series: &drawable,
                    crossovers: &crosses,
                    markers,
                    log_x: *log_x,
                    x_kind: XKind::Plain,
                };
                files.extend(
                    chart::line_chart(&stem, &chart).map_err(failed)?.into_iter().map(|p| p.display().to_string()),
                );
            }
            let mut csv = format!("series,{},{}\n", csv_field(x_label), csv_field(y_label));
            for s in series {
                for (x, y) in &s.points {
                    csv.push_str(&format!("{},{x},{y}\n", csv_field(&s.name)));
                }
            }
            files.push(write("csv", csv)?);
            let data = json!({
                "id": fig.id, "number": fig.number, "title": fig.title, "about": fig.about,
                "x_label": x_label, "y_label": y_label, "log_x": log_x,
                "series": series.iter().map(|s| json!({"name": s.name, "points": s.points})).collect::<Vec<_>>(),
                "crossovers": found,
                "markers": markers.iter().map(|m| json!({"label": m.label, "x": m.x})).collect::<Vec<_>>(),
            });
            files.push(write("json", serde_json::to_string_pretty(&data).expect("json") + "\n")?);
        }
        Plot::Bars { y_label, bars, layers } => {
            let drawable = bars.iter().enumerate().any(|(i, _)| layers.iter().any(|(_, v)| v[i].is_finite()));
            if drawable {
                let chart = BarChart { title: &fig.title, y_label, bars, layers };
                files.extend(
                    chart::stacked_bars(&stem, &chart).map_err(failed)?.into_iter().map(|p| p.display().to_string()),
                );
            }
            let mut csv = format!("bar,layer,{}\n", csv_field(y_label));
            for (i, b) in bars.iter().enumerate() {
                for (name, v) in layers {
                    csv.push_str(&format!("{},{},{}\n", csv_field(b), csv_field(name), v[i]));
                }
            }
            files.push(write("csv", csv)?);
            let data = json!({
                "id": fig.id, "number": fig.number, "title": fig.title, "about": fig.about, "y_label": y_label,
                "bars": bars, "layers": layers.iter().map(|(n, v)| json!({"name": n, "values": v})).collect::<Vec<_>>(),
            });
            files.push(write("json", serde_json::to_string_pretty(&data).expect("json") + "\n")?);
        }
        Plot::Heatmap { strides, sizes, mb_per_s } => {
            let at = |s: usize, w: u64| -> Option<f64> {
                let (i, j) = (sizes.iter().position(|&x| x == w)?, strides.iter().position(|&x| x == s)?);
                mb_per_s.get(i)?.get(j).copied().filter(|v| v.is_finite())
            };
            if mb_per_s.iter().flatten().any(|v| v.is_finite()) {
                files.extend(
                    bandwidth_heatmap(&stem, &fig.title, strides, sizes, &at)
                        .map_err(failed)?
                        .into_iter()
                        .map(|p| p.display().to_string()),
                );
            }
            let mut csv = "working_set_bytes,stride_words,mb_per_s\n".to_string();
            for &w in sizes {
                for &s in strides {
                    csv.push_str(&format!("{w},{s},{}\n", at(s, w).unwrap_or(f64::NAN)));
                }
            }
            files.push(write("csv", csv)?);
            let grid: Vec<Vec<Option<f64>>> =
                sizes.iter().map(|&w| strides.iter().map(|&s| at(s, w)).collect()).collect();
            let data = json!({
                "id": fig.id, "number": fig.number, "title": fig.title, "about": fig.about,
                "strides_words": strides, "working_sets_bytes": sizes, "mb_per_s": grid,
            });
            files.push(write("json", serde_json::to_string_pretty(&data).expect("json") + "\n")?);
        }
    }
    Ok(Drawn {
        id: fig.id.clone(),
        number: fig.number.clone(),
        title: fig.title.clone(),
        about: fig.about.clone(),
        files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crossovers_of_curves_sampled_at_different_x() {
        // a rises through b between x = 1 and 2; b's samples sit at other x than a's.
        let a = Series { name: "a".into(), points: vec![(0.0, 0.0), (1.0, 1.0), (2.0, 4.0), (3.0, 6.0)] };
        let b = Series { name: "b".into(), points: vec![(0.5, 2.0), (1.5, 2.0), (2.5, 2.0)] };
        let c = crossovers_between(&[a, b]);
        assert_eq!(c.len(), 1);
        assert!(c[0].x > 1.0 && c[0].x < 2.0, "{:?}", c);
        assert!((c[0].y - 2.0).abs() < 1e-9);
    }
}
