//! The end of a sweep: `summary.json` and the text summary. Per combination of the keys after
//! the first: each variant's cycles along the first key, the fastest variant at each x, and
//! the crossovers.

use super::args::SweepArgs;
use super::axis::{num, Axis, Target, Val};
use super::grid::Grid;
use crate::crossover::{crossovers, Crossover};
use crate::record::RunMeta;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// `summary.json` and the text printed after a sweep.
pub(super) struct Summary {
    pub json: Value,
    pub text: String,
}

#[allow(clippy::too_many_arguments)]
pub(super) fn summarize(
    args: &SweepArgs,
    app: &str,
    meta: &RunMeta,
    grid: &Grid,
    variants: &[&'static str],
    cycles: &BTreeMap<(usize, usize), f64>,
    failed: &[String],
) -> Summary {
    let axes = &grid.axes;
    let first = &axes[0];
    let inner: usize = axes[1..].iter().map(|a| a.values.len()).product();
    let numeric = first.values.iter().all(|v| v.x().is_some());
    let mut groups = Vec::new();
    let mut text = String::new();
    for g in 0..inner {
        // Points of this group, in order of the first key's values as given.
        let members: Vec<usize> = (0..first.values.len()).map(|i| i * inner + g).collect();
        let fixed: Map<String, Value> =
            axes[1..].iter().enumerate().map(|(k, a)| (a.key.clone(), grid.val(g, k + 1).json())).collect();
        let fixed_desc: Vec<String> =
            axes[1..].iter().enumerate().map(|(k, a)| format!("{}={}", a.key, grid.val(g, k + 1))).collect();
        // Order the x values (a range may run downwards).
        let mut order = members.clone();
        if numeric {
            order.sort_by(|&p, &q| grid.val(p, 0).x().unwrap().total_cmp(&grid.val(q, 0).x().unwrap()));
        }
        let mut fastest = Vec::new();
        for &p in &order {
            let best = variants
                .iter()
                .enumerate()
                .filter_map(|(vi, v)| cycles.get(&(p, vi)).filter(|c| c.is_finite()).map(|c| (*v, *c)))
                .min_by(|a, b| a.1.total_cmp(&b.1));
            if let Some((v, c)) = best {
                fastest.push((p, v, c));
            }
        }
        let curves_json: Map<String, Value> = variants
            .iter()
            .enumerate()
            .map(|(vi, v)| {
                let pts: Vec<Value> = order
                    .iter()
                    .filter_map(|&p| cycles.get(&(p, vi)).map(|c| json!([grid.val(p, 0).json(), c])))
                    .collect();
                (v.to_string(), Value::Array(pts))
            })
            .collect();
        let found: Vec<Crossover> = if numeric {
            let curves: Vec<(String, Vec<(f64, f64)>)> = variants
                .iter()
                .enumerate()
                .map(|(vi, v)| {
                    let pts = order
                        .iter()
                        .filter_map(|&p| cycles.get(&(p, vi)).map(|c| (grid.val(p, 0).x().unwrap(), *c)))
                        .collect();
                    (v.to_string(), pts)
                })
                .collect();
            crossovers(&curves)
        } else {
            Vec::new()
        };
        text.push_str(&group_text(first, grid, &fixed_desc, &fastest, numeric, &found));
        groups.push(json!({
            "fixed": fixed,
            "curves": curves_json,
            "fastest": fastest.iter().map(|(p, v, c)| json!({"x": grid.val(*p, 0).json(), "variant": v, "cycles": c})).collect::<Vec<_>>(),
            "crossovers": found,
        }));
    }
    let json = json!({
        "app": app,
        "machine": meta.machine,
        // With `procs` varied each run has its own (in the records and along that axis).
        "procs": if axes.iter().any(|a| a.target == Target::Procs) { Value::Null } else { json!(meta.procs) },
        "seed": meta.seed,
        "params": args.param,
        "set": args.set,
        "variants": variants,
        "vary": axes.iter().map(|a| json!({"key": a.key, "values": a.values.iter().map(Val::json).collect::<Vec<_>>()})).collect::<Vec<_>>(),
        "x": first.key,
        "metric": "cycles",
        "groups": groups,
        "failed": failed,
    });
    Summary { json, text }
}

/// One group's lines of the text summary: its fixed keys, the fastest variant at each end, the crossovers.
fn group_text(
    first: &Axis,
    grid: &Grid,
    fixed_desc: &[String],
    fastest: &[(usize, &str, f64)],
    numeric: bool,
    found: &[Crossover],
) -> String {
    let mut text = String::new();
    if !fixed_desc.is_empty() {
        text.push_str(&format!("{}:\n", fixed_desc.join(" ")));
    }
    match (fastest.first(), fastest.last()) {
        (Some(lo), Some(hi)) => text.push_str(&format!(
            "  fastest at {}={}: {} ({} cycles); at {}={}: {} ({} cycles)\n",
            first.key,
            grid.val(lo.0, 0),
            lo.1,
            num(lo.2),
            first.key,
            grid.val(hi.0, 0),
            hi.1,
            num(hi.2)
        )),
        _ => text.push_str("  no results\n"),
    }
    if !numeric {
        text.push_str(&format!("  (no crossovers: `{}` is not numeric)\n", first.key));
    } else if found.is_empty() {
        text.push_str("  no crossovers in cycles\n");
    } else {
        for c in found {
            text.push_str(&format!(
                "  crossover: {} and {} change order at {}={} ({} cycles)\n",
                c.a,
                c.b,
                first.key,
                num(c.x),
                num(c.y)
            ));
        }
    }
    text
}
