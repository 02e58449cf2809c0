//! `commlab plot timeline FILE`: interval statistics (`run --stats interval=CYCLES,FILE`, JSON
//! Lines) drawn over time, per run (app and variant): `timeline-breakdown` (stacked bars, one
//! per stretch of time: the processors' summed cycles in each category) and `timeline-links`
//! (a heat map of link utilisation over stretches and links, the busiest 48 links when there are
//! more). More than 60 stretches are merged into at most 60 bars or columns of equal span, each
//! the mean of the stretches it holds.

use crate::chart::{heatmap, short_number, stacked_bars, BarChart, Heatmap};
use crate::failure::{failed, input, Failure};
use commlab_api::Category;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const MAX_COLUMNS: usize = 60;
const MAX_LINKS: usize = 48;

/// One run's stretches, in order.
struct Run {
    rows: Vec<Value>,
}

fn read(path: &Path) -> Result<BTreeMap<(String, String), Run>, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| input(format!("cannot read interval statistics `{}`: {e}", path.display())))?;
    let mut runs: BTreeMap<(String, String), Run> = BTreeMap::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).map_err(|e| {
            input(format!(
                "`{}` line {}: not JSON ({e}); give the JSON Lines of `commlab run --stats interval=CYCLES,FILE`",
                path.display(),
                i + 1
            ))
        })?;
        if v["interval"].as_u64().is_none() || !v["breakdown"].is_object() {
            return Err(input(format!(
                "`{}` line {}: not an interval row (no `interval` and `breakdown`); give the JSON Lines of `commlab run --stats interval=CYCLES,FILE` (not its CSV)",
                path.display(),
                i + 1
            )));
        }
        let key = (v["app"].as_str().unwrap_or("").to_string(), v["variant"].as_str().unwrap_or("").to_string());
        runs.entry(key).or_insert(Run { rows: Vec::new() }).rows.push(v);
    }
    if runs.is_empty() {
        return Err(input(format!("`{}` holds no interval rows", path.display())));
    }
    Ok(runs)
}

/// Consecutive stretches merged into at most [`MAX_COLUMNS`] groups: (first, last) indices.
fn groups(n: usize) -> Vec<(usize, usize)> {
    let per = n.div_ceil(MAX_COLUMNS).max(1);
    (0..n).step_by(per).map(|a| (a, (a + per).min(n) - 1)).collect()
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

/// Draw every run's two charts into `dir`; returns the paths written.
pub fn draw(path: &Path, dir: &Path) -> Result<Vec<PathBuf>, Failure> {
    let runs = read(path)?;
    let several = runs.len() > 1;
    let mut written = Vec::new();
    for ((app, variant), run) in &runs {
        let rows = &run.rows;
        let g = groups(rows.len());
        // About a dozen labels (each column's start, in cycles) so that they do not overlap.
        let every = g.len().div_ceil(12).max(1);
        let columns: Vec<String> = g
            .iter()
            .enumerate()
            .map(|(i, &(a, _))| if i % every == 0 { short_number(num(&rows[a]["start"])) } else { String::new() })
            .collect();
        let layers: Vec<(String, Vec<f64>)> = Category::ALL
            .iter()
            .map(|c| {
                let per_group = g
                    .iter()
                    .map(|&(a, b)| {
                        let s: f64 = rows[a..=b]
                            .iter()
                            .map(|r| r["breakdown"][c.name()].as_array().map_or(0.0, |v| v.iter().map(num).sum()))
                            .sum();
                        s / (b - a + 1) as f64
                    })
                    .collect();
                (c.label().to_string(), per_group)
            })
            .collect();
        let suffix = if several { format!("-{app}-{variant}") } else { String::new() };
        let stretch = num(&rows[0]["end"]) - num(&rows[0]["start"]);
        let per = g[0].1 - g[0].0 + 1;
        let title = if per == 1 {
            format!("{app} [{variant}]: where the time goes, per stretch of {} cycles", short_number(stretch))
        } else {
            format!(
                "{app} [{variant}]: where the time goes, per stretch of {} cycles (mean of {per} per bar)",
                short_number(stretch)
            )
        };
        let chart =
            BarChart { title: &title, y_label: "cycles, summed over the processors", bars: &columns, layers: &layers };
        written.extend(stacked_bars(&dir.join(format!("timeline-breakdown{suffix}")), &chart).map_err(failed)?);

        let nlinks = rows.iter().map(|r| r["link_utilization"].as_array().map_or(0, Vec::len)).max().unwrap_or(0);
        if nlinks == 0 {
            continue;
        }
        let util = |l: usize, (a, b): (usize, usize)| {
            let s: f64 = rows[a..=b].iter().map(|r| r["link_utilization"][l].as_f64().unwrap_or(0.0)).sum();
            s / (b - a + 1) as f64
        };
        let mut links: Vec<(usize, f64)> = (0..nlinks)
            .map(|l| (l, rows.iter().map(|r| r["link_utilization"][l].as_f64().unwrap_or(0.0)).fold(0.0, f64::max)))
            .collect();
        let busiest = links.len() > MAX_LINKS;
        if busiest {
            links.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
            links.truncate(MAX_LINKS);
            links.sort_by_key(|x| x.0);
        }
        let names: Vec<String> = links.iter().map(|(l, _)| format!("link {l}")).collect();
        let values: Vec<Vec<f64>> = links.iter().map(|&(l, _)| g.iter().map(|&ab| util(l, ab)).collect()).collect();
        let title = format!(
            "{app} [{variant}]: link utilisation over time{}",
            if busiest { format!(" (the busiest {MAX_LINKS} of {nlinks} links)") } else { String::new() }
        );
        let map = Heatmap {
            title: &title,
            x_label: "cycles of the timed region",
            y_label: "link",
            unit: "utilisation",
            columns: &columns,
            rows: &names,
            values: &values,
            annotate: false,
        };
        written.extend(heatmap(&dir.join(format!("timeline-links{suffix}")), &map).map_err(failed)?);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stretches_merge_into_at_most_sixty_groups_covering_all() {
        for n in [1, 59, 60, 61, 600, 1001] {
            let g = groups(n);
            assert!(g.len() <= MAX_COLUMNS, "{n}: {} groups", g.len());
            assert_eq!(g[0].0, 0);
            assert_eq!(g.last().unwrap().1, n - 1);
            for w in g.windows(2) {
                assert_eq!(w[0].1 + 1, w[1].0, "{n}: contiguous");
            }
        }
    }
}
