//! `commlab plot KIND RESULTS`: runtime curves and breakdown/volume bars redrawn from saved
//! results (a sweep's results.jsonl, or `commlab run --json` output), drawn by [`crate::chart`].

use crate::chart::runs::{self, RunBars, Stack};
use crate::chart::{line_chart, short_number, Cross, LineChart, Marker, Series, XKind};
use crate::crossover::crossovers;
use crate::failure::{input, Failure};
use crate::record::{self, Numbered, ResultRecord};
use commlab_api::Category;
use serde_json::Value;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// `commlab plot --help`.
pub const LONG_ABOUT: &str = "Draw a plot (PNG and SVG) from saved results: the results.jsonl of `commlab sweep`, \
or for breakdown and volume also the output of `commlab run --json`.\n\n\
KIND is one of:\n  \
runtime     cycles vs the swept key, one curve per variant, crossovers (where two variants change order) \
marked; needs sweep results\n  \
breakdown   stacked bars of the mean time per processor in compute, memory & NI wait, message overhead \
and synchronization, one bar per variant\n  \
volume      stacked bars of the traffic in bytes by class (invalidates, requests, headers, data, \
cross-traffic), one bar per variant\n  \
timeline    from `commlab run --stats interval=CYCLES,FILE` (its JSON Lines): stacked bars of the \
processors' time per stretch of time (timeline-breakdown) and a heat map of link utilisation over time \
and links (timeline-links), per run\n\n\
The x axis is the varied key; when the sweep varied several keys, pick it with --x (a key varied over one \
value does not count). One chart is drawn per combination of the other varied keys: DIR/KIND.png and \
DIR/KIND.svg when there is one combination, else DIR/KIND-KEY=VALUE,....png/.svg. breakdown and volume show \
the runs at one x of a sweep: --at VALUE, by default the smallest x; with plain `run --json` output they show \
every run (one bar per variant). runtime uses a log x axis when the x values are positive and geometrically \
spaced over a factor of 20 or more (override with --x-scale). The y axis starts at 0 unless the values span \
less than a tenth of the largest. Paths written are printed, one per line.\n\n\
Examples:\n  \
commlab plot runtime sweep-em3d/results.jsonl\n  \
commlab plot breakdown sweep-em3d/results.jsonl --at 100 --out plots\n  \
commlab plot runtime em3d-grid/results.jsonl --x nodes --mark alewife=18 --x-scale linear\n  \
commlab run em3d --variant all --json --out em3d.jsonl && commlab plot volume em3d.jsonl";

#[derive(clap::Args)]
pub struct PlotArgs {
    /// What to draw: runtime, breakdown, volume or timeline.
    pub(crate) kind: String,
    /// Results file: results.jsonl of `commlab sweep`, or `commlab run --json` output.
    pub(crate) results: PathBuf,
    /// The varied key for the x axis (needed when several keys were varied).
    #[arg(long, value_name = "KEY")]
    pub(crate) x: Option<String>,
    /// breakdown and volume: the x value whose runs are drawn [default: the smallest].
    #[arg(long, value_name = "VALUE")]
    pub(crate) at: Option<f64>,
    /// Directory for the plots, created if missing [default: the results file's directory].
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// runtime: x axis scale.
    #[arg(long, value_name = "SCALE", default_value = "auto", value_parser = ["auto", "linear", "log"])]
    pub(crate) x_scale: String,
    /// runtime: a labelled vertical line at x, e.g. alewife=18 (repeatable).
    #[arg(long = "mark", value_name = "LABEL=X")]
    pub(crate) mark: Vec<String>,
}

/// `commlab plot`: draw, then print the paths written.
pub fn run(args: PlotArgs) -> Result<(), Failure> {
    for p in draw(&args)? {
        println!("{}", p.display());
    }
    Ok(())
}

const KINDS: &str = "runtime, breakdown, volume, timeline";

/// Read a results file: one record per non-blank line, each with a "variant".
fn read_results(path: &Path) -> Result<Vec<Numbered>, Failure> {
    let text = crate::alloc_failure::fallible(|| std::fs::read_to_string(path)).map_err(|e| {
        input(format!(
            "cannot read results file `{}`: {e} (give the results.jsonl of `commlab sweep` or the output of `commlab run --json`)",
            path.display()
        ))
    })?;
    let out = record::read_records(&text).map_err(|bad| input(bad.message(path)))?;
    if out.is_empty() {
        return Err(input(format!("`{}` holds no results", path.display())));
    }
    Ok(out)
}

/// Compare JSON values: numbers by value, anything else by its text.
fn cmp_values(a: &Value, b: &Value) -> Ordering {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        _ => a.to_string().cmp(&b.to_string()),
    }
}

/// A value as shown in titles and file names: strings without quotes.
fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.as_f64().map(short_number).unwrap_or_else(|| n.to_string()),
        other => other.to_string(),
    }
}

/// Variants in the app's own order (as `--variant all` runs them), then any others by name.
fn variant_order(app: &str, recs: &[&Numbered]) -> Vec<String> {
    let names: BTreeSet<&str> = recs.iter().map(|r| r.record.variant.as_str()).collect();
    let mut out: Vec<String> = Vec::new();
    if let Ok(info) = commlab_apps::app_info(app) {
        out.extend(info.variants.iter().filter(|v| names.contains(**v)).map(|v| v.to_string()));
    }
    let rest: Vec<String> = names.iter().filter(|n| !out.iter().any(|o| o == *n)).map(|n| n.to_string()).collect();
    out.extend(rest);
    out
}

/// The value `f` gives every record, if they share one (`f` gives `None` for a record
/// that lacks the field).
fn common<T: PartialEq>(recs: &[&Numbered], f: impl Fn(&ResultRecord) -> Option<T>) -> Option<T> {
    let first = f(&recs.first()?.record)?;
    recs.iter().all(|r| f(&r.record).as_ref() == Some(&first)).then_some(first)
}

/// "app" and "(machine, N procs, extra)" for titles. (A hand-written line may lack the app,
/// machine or processor count; they read as empty and are left out.)
fn context(recs: &[&Numbered], extra: &[String]) -> (String, String) {
    let text = |s: &String| (!s.is_empty()).then(|| s.clone());
    let app = common(recs, |r| text(&r.app)).unwrap_or_else(|| "results".to_string());
    let mut parts: Vec<String> = Vec::new();
    if let Some(m) = common(recs, |r| text(&r.machine)) {
        parts.push(m);
    }
    if let Some(p) = common(recs, |r| (r.procs > 0).then_some(r.procs)) {
        parts.push(format!("{} procs", short_number(p as f64)));
    }
    parts.extend(extra.iter().cloned());
    (app, if parts.is_empty() { String::new() } else { format!(" ({})", parts.join(", ")) })
}

/// The records of a sweep split by the x key: the key, and per combination of the other varied
/// keys (ordered by their values) its description and records.
/// The values of the varied keys other than x, in key order.
type Fixed = Vec<(String, Value)>;

struct Sweep<'a> {
    x: String,
    groups: Vec<(Fixed, Vec<&'a Numbered>)>,
}

fn split_sweep<'a>(path: &Path, recs: &'a [Numbered], want_x: Option<&str>) -> Result<Sweep<'a>, Failure> {
    let mut values: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for r in recs {
        let vary = r.record.vary.as_ref().ok_or_else(|| {
            input(format!(
                "`{}` line {}: no \"vary\" object; runtime plots need the results.jsonl of `commlab sweep`",
                path.display(),
                r.line
            ))
        })?;
        for (k, v) in vary {
            values.entry(k.clone()).or_default().insert(v.to_string());
        }
    }
    let keys: Vec<&String> = values.keys().collect();
    let list = || keys.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", ");
    let x = match want_x {
        Some(x) if values.contains_key(x) => x.to_string(),
        Some(x) => {
            return Err(input(format!("--x `{x}`: not a key varied in `{}` (varied: {})", path.display(), list())))
        }
        None => {
            let varied: Vec<&String> = keys.iter().copied().filter(|k| values[*k].len() > 1).collect();
            let candidates = if varied.is_empty() { keys.clone() } else { varied };
            match candidates.as_slice() {
                [one] => one.to_string(),
                [] => return Err(input(format!("`{}`: the \"vary\" objects are empty: no x axis", path.display()))),
                several => {
                    let names: Vec<&str> = several.iter().map(|k| k.as_str()).collect();
                    return Err(input(format!(
                        "`{}`: several keys were varied ({}): pick the x axis with --x KEY",
                        path.display(),
                        names.join(", ")
                    )));
                }
            }
        }
    };
    let mut groups: Vec<(Fixed, Vec<&Numbered>)> = Vec::new();
    for r in recs {
        let vary = r.record.vary.as_ref().expect("checked above");
        match vary.get(&x) {
            Some(v) if v.as_f64().is_some_and(f64::is_finite) => {}
            Some(v) => {
                return Err(input(format!(
                    "`{}` line {}: no numeric x: `{x}` is {v} (the x axis needs numbers; pick another key with --x)",
                    path.display(),
                    r.line
                )))
            }
            None => {
                return Err(input(format!(
                    "`{}` line {}: no numeric x: `{x}` is not in its \"vary\"",
                    path.display(),
                    r.line
                )))
            }
        }
        let fixed: Fixed = vary.iter().filter(|(k, _)| **k != x).map(|(k, v)| (k.clone(), v.clone())).collect();
        match groups.iter_mut().find(|(f, _)| *f == fixed) {
            Some((_, g)) => g.push(r),
            None => groups.push((fixed, vec![r])),
        }
    }
    groups.sort_by(|(a, _), (b, _)| {
        a.iter()
            .zip(b)
            .map(|((ka, va), (kb, vb))| ka.cmp(kb).then(cmp_values(va, vb)))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    });
    Ok(Sweep { x, groups })
}

fn x_of(r: &Numbered, x: &str) -> f64 {
    r.record.vary_number(x)
}

/// The x axis label: the key and its unit (a machine key) or whose parameter it is.
fn x_label(key: &str, app: &str) -> String {
    if let Some(doc) = commlab_sim::machine::key_doc(key) {
        return format!("{key} ({})", doc.unit);
    }
    match commlab_apps::app_info(app) {
        Ok(info) if info.params.iter().any(|p| p.name == key) => format!("{key} ({app} parameter)"),
        _ => key.to_string(),
    }
}

/// Log x when every x is positive and the values are spread geometrically over a factor of 20
/// or more (their log-spacing more even than their linear spacing).
fn auto_log(xs: &[f64]) -> bool {
    let mut xs: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    if xs.len() < 2 || xs[0] <= 0.0 || xs[xs.len() - 1] / xs[0] < 20.0 {
        return false;
    }
    if xs.len() == 2 {
        return xs[1] / xs[0] >= 100.0;
    }
    let spread = |d: Vec<f64>| {
        let mean = d.iter().sum::<f64>() / d.len() as f64;
        (d.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / d.len() as f64).sqrt() / mean
    };
    let lin = spread(xs.windows(2).map(|w| w[1] - w[0]).collect());
    let log = spread(xs.windows(2).map(|w| (w[1] / w[0]).ln()).collect());
    log < lin
}

/// A file-name-safe form of `k=v,...`.
fn file_part(fixed: &[(String, Value)]) -> String {
    let s: Vec<String> = fixed.iter().map(|(k, v)| format!("{k}={}", show(v))).collect();
    s.join(",").chars().map(|c| if c.is_ascii_alphanumeric() || "._=,-+".contains(c) { c } else { '_' }).collect()
}

fn stem(dir: &Path, kind: &str, fixed: &[(String, Value)], several: bool) -> PathBuf {
    if several {
        dir.join(format!("{kind}-{}", file_part(fixed)))
    } else {
        dir.join(kind)
    }
}

fn fixed_desc(fixed: &[(String, Value)]) -> Vec<String> {
    fixed.iter().map(|(k, v)| format!("{k}={}", show(v))).collect()
}

fn parse_marks(marks: &[String]) -> Result<Vec<Marker>, Failure> {
    marks
        .iter()
        .map(|m| {
            let (label, x) =
                m.rsplit_once('=').ok_or_else(|| input(format!("--mark `{m}`: expected LABEL=X, e.g. alewife=18")))?;
            let x: f64 = x
                .trim()
                .parse()
                .ok()
                .filter(|x: &f64| x.is_finite())
                .ok_or_else(|| input(format!("--mark `{m}`: `{}` is not a number (expected LABEL=X)", x.trim())))?;
            Ok(Marker { x, label: label.trim().to_string() })
        })
        .collect()
}

/// Draw what `args` asks for; returns the paths written.
pub(crate) fn draw(args: &PlotArgs) -> Result<Vec<PathBuf>, Failure> {
    if !["runtime", "breakdown", "volume", "timeline"].contains(&args.kind.as_str()) {
        return Err(input(format!("unknown plot kind `{}` (valid: {KINDS})", args.kind)));
    }
    let markers = parse_marks(&args.mark)?;
    if !markers.is_empty() && args.kind != "runtime" {
        return Err(input(format!("--mark applies to runtime plots, not {}", args.kind)));
    }
    let dir = match &args.out {
        Some(d) => d.clone(),
        None => args.results.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf(),
    };
    if dir.exists() && !dir.is_dir() {
        return Err(input(format!("cannot write plots to `{}`: it is not a directory", dir.display())));
    }
    std::fs::create_dir_all(&dir)
        .map_err(|e| input(format!("cannot write plots to `{}`: cannot create the directory: {e}", dir.display())))?;
    if args.kind == "timeline" {
        // Interval statistics, not run records.
        return crate::timeline::draw(&args.results, &dir);
    }
    let recs = read_results(&args.results)?;
    match args.kind.as_str() {
        "runtime" => runtime(args, &recs, &dir, &markers),
        kind => bars(args, kind, &recs, &dir),
    }
}

/// A run's figure that must be a number >= 0 (cycles, a breakdown's time).
fn check_figure(path: &Path, r: &Numbered, what: &str, v: f64) -> Result<(), Failure> {
    if v.is_finite() && v >= 0.0 {
        return Ok(());
    }
    Err(input(format!(
        "`{}` line {}: {what} is {}, not a run's figure (a number >= 0); the file is damaged or not commlab's",
        path.display(),
        r.line,
        if v.is_nan() { "missing or null".to_string() } else { v.to_string() }
    )))
}

/// Two records of one sweep point and variant would be two values at one x: refuse, naming
/// both lines (a resumed or concatenated file can hold them; the first was drawn silently).
fn check_unique(path: &Path, group: &[&Numbered], x: &str) -> Result<(), Failure> {
    let mut seen: BTreeMap<(String, String, u64), usize> = BTreeMap::new();
    for r in group {
        let key = (r.record.app.clone(), r.record.variant.clone(), x_of(r, x).to_bits());
        if let Some(first) = seen.insert(key, r.line) {
            return Err(input(format!(
                "`{}` lines {first} and {} are both {} [{}] at {x}={}: one run per point and variant (remove one, or plot each file apart)",
                path.display(),
                r.line,
                r.record.app,
                r.record.variant,
                short_number(x_of(r, x))
            )));
        }
    }
    Ok(())
}

fn runtime(args: &PlotArgs, recs: &[Numbered], dir: &Path, markers: &[Marker]) -> Result<Vec<PathBuf>, Failure> {
    let sweep = split_sweep(&args.results, recs, args.x.as_deref())?;
    for (_, group) in &sweep.groups {
        check_unique(&args.results, group, &sweep.x)?;
        for r in group {
            check_figure(&args.results, r, "cycles", r.record.cycles)?;
        }
    }
    let several = sweep.groups.len() > 1;
    let mut written = Vec::new();
    for (fixed, group) in &sweep.groups {
        let (app, ctx) = context(group, &fixed_desc(fixed));
        let variants = variant_order(&app, group);
        let series: Vec<Series> = variants
            .iter()
            .map(|v| {
                let mut points: Vec<(f64, f64)> = Vec::new();
                for r in group.iter().filter(|r| r.record.variant == *v) {
                    let x = x_of(r, &sweep.x);
                    if !points.iter().any(|p| p.0 == x) {
                        points.push((x, r.record.cycles));
                    }
                }
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                Series { name: v.clone(), points }
            })
            .collect();
        let curves: Vec<(String, Vec<(f64, f64)>)> =
            series.iter().map(|s| (s.name.clone(), s.points.clone())).collect();
        let crosses: Vec<Cross> = crossovers(&curves)
            .into_iter()
            .map(|c| Cross { x: c.x, y: c.y, label: format!("{}/{}", c.a, c.b) })
            .collect();
        let xs: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).collect();
        let log_x = match args.x_scale.as_str() {
            "log" => true,
            "linear" => false,
            _ => auto_log(&xs),
        };
        let title = format!("{app}: runtime vs {}{ctx}", sweep.x);
        let xl = x_label(&sweep.x, &app);
        let chart = LineChart {
            title: &title,
            x_label: &xl,
            y_label: "runtime (processor cycles)",
            series: &series,
            crossovers: &crosses,
            markers,
            log_x,
            // Sizes (cache and packet bytes) are labelled 4K, 64K on a log axis.
            x_kind: match commlab_sim::machine::key_doc(&sweep.x) {
                Some(doc) if doc.unit == "bytes" => XKind::Bytes,
                _ => XKind::Plain,
            },
        };
        written.extend(line_chart(&stem(dir, "runtime", fixed, several), &chart).map_err(input)?);
    }
    Ok(written)
}

/// What a bar plot kind stacks, and what its title calls that.
fn stack_of(kind: &str) -> (Stack, &'static str) {
    if kind == "breakdown" {
        (Stack::Time, "time per processor by category")
    } else {
        (Stack::Traffic, "network traffic by class")
    }
}

/// Bar names for plain results: the variant, with more of the run's identity where needed to
/// tell bars apart.
fn bar_names(recs: &[&Numbered]) -> Vec<String> {
    let unique = |names: &[String]| names.iter().collect::<BTreeSet<_>>().len() == names.len();
    let mut names: Vec<String> = recs.iter().map(|r| r.record.variant.clone()).collect();
    let steps: [&dyn Fn(&Numbered) -> String; 4] = [
        &|r| format!("{} {}", r.record.app, r.record.variant),
        &|r| format!("{} {} @{}", r.record.app, r.record.variant, r.record.machine),
        &|r| {
            format!(
                "{} {} @{} {}p",
                r.record.app,
                r.record.variant,
                r.record.machine,
                short_number(r.record.procs as f64)
            )
        },
        &|r| format!("{} #{}", r.record.variant, r.line),
    ];
    for step in steps {
        if unique(&names) {
            break;
        }
        names = recs.iter().map(|r| step(r)).collect();
    }
    names
}

fn bars(args: &PlotArgs, kind: &str, recs: &[Numbered], dir: &Path) -> Result<Vec<PathBuf>, Failure> {
    let (stack, what) = stack_of(kind);
    let swept = recs.iter().filter(|r| r.record.vary.is_some()).count();
    if swept != 0 && swept != recs.len() {
        let plain = recs.iter().find(|r| r.record.vary.is_none()).expect("some plain line");
        return Err(input(format!(
            "`{}` line {}: no \"vary\" object, but other lines have one: mixed sweep and run results",
            args.results.display(),
            plain.line
        )));
    }
    // (fixed keys, records to draw, extra title parts)
    let mut charts: Vec<(Fixed, Vec<&Numbered>, Vec<String>)> = Vec::new();
    if swept == 0 {
        if args.x.is_some() || args.at.is_some() {
            return Err(input(format!(
                "--x and --at pick a point of a sweep, but `{}` holds plain run results (no \"vary\")",
                args.results.display()
            )));
        }
        charts.push((Vec::new(), recs.iter().collect(), Vec::new()));
    } else {
        let sweep = split_sweep(&args.results, recs, args.x.as_deref())?;
        for (_, group) in &sweep.groups {
            check_unique(&args.results, group, &sweep.x)?;
        }
        for (fixed, group) in sweep.groups {
            let mut xs: Vec<f64> = group.iter().map(|r| x_of(r, &sweep.x)).collect();
            xs.sort_by(f64::total_cmp);
            xs.dedup();
            let at = match args.at {
                None => xs[0],
                Some(a) => *xs.iter().find(|x| (**x - a).abs() <= 1e-9 * a.abs().max(1e-300)).ok_or_else(|| {
                    let have: Vec<String> = xs.iter().map(|x| short_number(*x)).collect();
                    input(format!(
                        "--at {}: no runs at {}={} in `{}`{} (x values: {})",
                        short_number(a),
                        sweep.x,
                        short_number(a),
                        args.results.display(),
                        if fixed.is_empty() { String::new() } else { format!(" for {}", fixed_desc(&fixed).join(" ")) },
                        have.join(", ")
                    ))
                })?,
            };
            let mut chosen: Vec<&Numbered> = Vec::new();
            for r in group.iter().filter(|r| x_of(r, &sweep.x) == at) {
                if !chosen.iter().any(|c| c.record.variant == r.record.variant) {
                    chosen.push(r);
                }
            }
            let mut extra = fixed_desc(&fixed);
            extra.push(format!("{}={}", sweep.x, short_number(at)));
            charts.push((fixed, chosen, extra));
        }
    }
    for (_, chosen, _) in &charts {
        for r in chosen {
            if stack == Stack::Time {
                for c in Category::ALL {
                    check_figure(&args.results, r, &format!("breakdown.{}", c.name()), r.record.time(c))?;
                }
            }
        }
    }
    let several = charts.len() > 1;
    let mut written = Vec::new();
    for (fixed, mut chosen, extra) in charts {
        let (app, ctx) = context(&chosen, &extra);
        // Order bars by the app's variant order (stable for equal variants: file order).
        let order = variant_order(&app, &chosen);
        chosen.sort_by_key(|r| order.iter().position(|v| *v == r.record.variant));
        let names = bar_names(&chosen);
        let runs: Vec<&ResultRecord> = chosen.iter().map(|r| &r.record).collect();
        let title = format!("{app}: {what}{ctx}");
        let chart = RunBars { stack, title: &title, bars: &names, runs: &runs };
        written.extend(runs::draw(&stem(dir, kind, &fixed, several), &chart).map_err(input)?);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_scale_is_chosen_for_geometric_spacing() {
        assert!(auto_log(&[10.0, 46.0, 215.0, 1000.0]));
        assert!(!auto_log(&[10.0, 340.0, 670.0, 1000.0]));
        assert!(!auto_log(&[0.0, 10.0, 100.0, 1000.0]));
        assert!(!auto_log(&[1.0, 2.0, 4.0]));
        assert!(auto_log(&[1.0, 1000.0]));
        assert!(!auto_log(&[5.0]));
    }

    #[test]
    fn file_names_are_safe() {
        let f = vec![("nodes".to_string(), serde_json::json!(640)), ("topo".to_string(), serde_json::json!("a/b c"))];
        assert_eq!(file_part(&f), "nodes=640,topo=a_b_c");
    }
}
