//! Stacked bar charts: one bar per item, layers stacked bottom first, each bar's total on top.

use super::axis::{short_number, tick, tick_scale};
use super::render::render;
use super::spec::{BarChart, SIZE};
use super::style::err;
use super::style::{colour, draw_legend, legend_width, text, Swatch, GRID, INK};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};

/// A bar chart's data, checked: per bar, the stacked segments (layer, from, to); the y range.
struct BarData {
    stacks: Vec<Vec<(usize, f64, f64)>>,
    totals: Vec<f64>,
    y: (f64, f64),
}

fn bar_data(chart: &BarChart) -> Result<BarData, String> {
    let what = format!("bar chart `{}`", chart.title);
    if chart.bars.is_empty() {
        return Err(format!("{what}: no bars to plot"));
    }
    if chart.layers.is_empty() {
        return Err(format!("{what}: no layers to stack"));
    }
    for (name, values) in chart.layers {
        if values.len() != chart.bars.len() {
            return Err(format!(
                "{what}: layer `{name}` has {} values for {} bars ({})",
                values.len(),
                chart.bars.len(),
                chart.bars.join(", ")
            ));
        }
        if let Some((i, v)) = values.iter().enumerate().find(|(_, v)| **v < 0.0) {
            return Err(format!(
                "{what}: layer `{name}` is negative ({}) at bar `{}`",
                short_number(*v),
                chart.bars[i]
            ));
        }
    }
    let mut stacks = Vec::new();
    let mut totals = Vec::new();
    for i in 0..chart.bars.len() {
        let mut base = 0.0;
        let mut stack = Vec::new();
        for (l, (_, values)) in chart.layers.iter().enumerate() {
            let v = values[i];
            if v.is_finite() && v > 0.0 {
                stack.push((l, base, base + v));
                base += v;
            }
        }
        stacks.push(stack);
        totals.push(base);
    }
    let any = chart.layers.iter().any(|(_, v)| v.iter().any(|v| v.is_finite()));
    if !any {
        return Err(format!("{what}: no finite values in any layer"));
    }
    let top = totals.iter().copied().fold(0.0, f64::max);
    let y = if top > 0.0 { (0.0, top * 1.12) } else { (0.0, 1.0) };
    Ok(BarData { stacks, totals, y })
}

/// Draw stacked bars into `<stem>.png` and `<stem>.svg`; returns both paths.
pub(crate) fn stacked_bars(stem: &Path, chart: &BarChart) -> Result<Vec<PathBuf>, String> {
    let data = bar_data(chart)?;
    render(stem, |r| draw_bars(r, chart, &data), |r| draw_bars(r, chart, &data))
}

fn draw_bars<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, chart: &BarChart, d: &BarData) -> Result<(), String> {
    root.fill(&WHITE).map_err(err)?;
    let body = root.margin(8, 0, 0, 0).titled(chart.title, text(22.0)).map_err(err)?;
    // Legend top-down as the layers stack, top layer first.
    let entries: Vec<(Swatch, String)> =
        chart.layers.iter().enumerate().rev().map(|(l, (name, _))| (Swatch::Box(l), name.clone())).collect();
    let names: Vec<&str> = entries.iter().map(|e| e.1.as_str()).collect();
    let (plot_area, legend_area) = body.split_horizontally(SIZE.0 - legend_width(root, &names));
    draw_legend(&legend_area.margin(30, 0, 0, 6), &entries)?;

    let n = chart.bars.len() as f64;
    let two_lines = chart.bars.iter().any(|b| b.contains('\n'));
    // Names shrink when many bars share the width, so neighbours do not run into each other.
    let label_size = if chart.bars.len() > 12 { 12.0 } else { 15.0 };
    let mut c = ChartBuilder::on(&plot_area)
        .margin(12)
        .margin_right(20)
        .x_label_area_size(if two_lines { 62 } else { 44 })
        .y_label_area_size(84)
        .build_cartesian_2d(-0.5..n - 0.5, d.y.0..d.y.1)
        .map_err(err)?;
    let ys = tick_scale(d.y.0, d.y.1);
    c.configure_mesh()
        .disable_x_mesh()
        .light_line_style(GRID.mix(0.5))
        .bold_line_style(GRID)
        .axis_style(INK)
        .x_labels(0)
        .y_desc(chart.y_label)
        .axis_desc_style(text(17.0))
        .label_style(text(14.0))
        .y_labels(8)
        .y_label_formatter(&|v| tick(*v, ys))
        .draw()
        .map_err(err)?;
    let half = 0.34;
    for (i, stack) in d.stacks.iter().enumerate() {
        let x = i as f64;
        for &(l, lo, hi) in stack {
            c.draw_series(std::iter::once(Rectangle::new([(x - half, lo), (x + half, hi)], colour(l).filled())))
                .map_err(err)?;
        }
        // A bar's name may take two lines ("sm\nem3d": the second names a group of bars).
        let (px, py) = c.backend_coord(&(x, 0.0));
        for (k, line) in chart.bars[i].lines().enumerate() {
            let at = (px, py + 8 + 18 * k as i32);
            root.draw(&Text::new(line.to_string(), at, text(label_size).pos(Pos::new(HPos::Center, VPos::Top))))
                .map_err(err)?;
        }
        let (tx, ty) = c.backend_coord(&(x, d.totals[i]));
        root.draw(&Text::new(
            short_number(d.totals[i]),
            (tx, ty - 4),
            text(if chart.bars.len() > 12 { 10.0 } else { 13.0 }).pos(Pos::new(HPos::Center, VPos::Bottom)),
        ))
        .map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testing::{is_png, tmp};
    use super::*;

    #[test]
    fn stacked_bars_draw_and_check_their_input() {
        let d = tmp("bars");
        let bars: Vec<String> = ["sm", "mp-int", "bulk"].map(String::from).to_vec();
        let layers = vec![
            ("compute".to_string(), vec![10.0, 12.0, 0.0]),
            ("wait".to_string(), vec![5.0, f64::NAN, 0.0]),
            ("sync".to_string(), vec![1.0, 2.0, 0.0]),
        ];
        let c = BarChart { title: "test: breakdown", y_label: "cycles", bars: &bars, layers: &layers };
        let paths = stacked_bars(&d.join("b"), &c).unwrap();
        assert!(is_png(&paths[0]));
        let svg = std::fs::read_to_string(&paths[1]).unwrap();
        for needle in [
            "test: breakdown",
            "\ncycles\n",
            "\nsm\n",
            "\nmp-int\n",
            "\nbulk\n",
            "\ncompute\n",
            "\nwait\n",
            "\nsync\n",
            "\n16\n",
        ] {
            assert!(svg.contains(needle), "svg lacks {needle}");
        }
        let grouped: Vec<String> = ["sm", "mp-int\nem3d", "bulk"].map(String::from).to_vec();
        let svg = std::fs::read_to_string(&stacked_bars(&d.join("g"), &BarChart { bars: &grouped, ..c }).unwrap()[1])
            .unwrap();
        assert!(svg.contains("\nmp-int\n") && svg.contains("\nem3d\n"), "a two-line name draws both lines");
        let zeros = vec![("compute".to_string(), vec![0.0, 0.0, 0.0])];
        stacked_bars(&d.join("z"), &BarChart { layers: &zeros, ..c }).unwrap();

        let short = vec![("compute".to_string(), vec![1.0])];
        let e = stacked_bars(&d.join("x"), &BarChart { layers: &short, ..c }).unwrap_err();
        assert!(e.contains("1 values for 3 bars"), "{e}");
        let neg = vec![("compute".to_string(), vec![1.0, -2.0, 0.0])];
        let e = stacked_bars(&d.join("x"), &BarChart { layers: &neg, ..c }).unwrap_err();
        assert!(e.contains("negative") && e.contains("mp-int"), "{e}");
        let e = stacked_bars(&d.join("x"), &BarChart { bars: &[], layers: &[], ..c }).unwrap_err();
        assert!(e.contains("no bars"), "{e}");
        let e = stacked_bars(&d.join("x"), &BarChart { layers: &[], ..c }).unwrap_err();
        assert!(e.contains("no layers"), "{e}");
        let nan = vec![("compute".to_string(), vec![f64::NAN; 3])];
        let e = stacked_bars(&d.join("x"), &BarChart { layers: &nan, ..c }).unwrap_err();
        assert!(e.contains("no finite values"), "{e}");
    }
}
