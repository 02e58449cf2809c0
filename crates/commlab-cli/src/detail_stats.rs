//! `commlab run --stats per-node=FILE --stats per-link=FILE`: the statistics behind the means,
//! as gem5 and SST users expect them: one row per processor (its time breakdown and counters)
//! or per network link (utilisation and bytes over the timed region), written as JSON Lines,
//! or as CSV when FILE ends in `.csv`, beside the run's own output. `--stats latency=FILE`
//! records the run's latency distributions (miss stalls by where the line lives, one-way
//! message latency by kind, NI and lock waits: `commlab_api::LatencyStats`) and writes one row
//! per distribution (CSV: its percentiles; JSON Lines: its buckets too). Asking for it is what
//! switches the recording on, and the run's `--json` record then carries `latencies`.

use crate::failure::{failed, input, Failure};
use commlab_api::Category;
use commlab_apps::AppResult;
use serde_json::{json, Value};
use std::io::Write;
use std::path::PathBuf;

/// Which rows a `--stats` file holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Detail {
    PerNode,
    PerLink,
    Latency,
    /// Interval statistics every so many cycles.
    Interval(f64),
}

/// One `--stats KIND=FILE` request.
#[derive(Clone, Debug)]
pub struct Request {
    pub detail: Detail,
    pub path: PathBuf,
}

impl Detail {
    /// As `--stats` names it.
    pub fn name(self) -> &'static str {
        match self {
            Detail::PerNode => "per-node",
            Detail::PerLink => "per-link",
            Detail::Latency => "latency",
            Detail::Interval(_) => "interval",
        }
    }

    /// The kinds without a length, by name.
    pub fn named(kind: &str) -> Option<Detail> {
        match kind {
            "per-node" => Some(Detail::PerNode),
            "per-link" => Some(Detail::PerLink),
            "latency" => Some(Detail::Latency),
            _ => None,
        }
    }

    /// Interval statistics every `cycles` (at least 1); `what` names the input in errors.
    pub fn interval(cycles: &str, what: &str) -> Result<Detail, Failure> {
        let c: f64 =
            cycles.trim().parse().map_err(|_| input(format!("{what}: `{cycles}` is not a number of cycles")))?;
        if !(c.is_finite() && c >= 1.0) {
            return Err(input(format!("{what}: the interval must be at least 1 cycle")));
        }
        Ok(Detail::Interval(c))
    }

    /// Whether a native run has these rows (latencies and intervals are the simulator's).
    pub fn native(self) -> bool {
        matches!(self, Detail::PerNode | Detail::PerLink)
    }
}

impl Request {
    /// Parse `per-node=FILE`, `per-link=FILE` or `latency=FILE`.
    pub fn parse(arg: &str) -> Result<Request, Failure> {
        let (kind, path) = arg.split_once('=').ok_or_else(|| {
            input(format!(
                "--stats `{arg}`: expected per-node=FILE, per-link=FILE, latency=FILE or interval=CYCLES,FILE"
            ))
        })?;
        let detail = match (kind.trim(), Detail::named(kind.trim())) {
            (_, Some(detail)) => detail,
            ("interval", None) => {
                let (cycles, file) = path.split_once(',').ok_or_else(|| {
                    input(format!(
                        "--stats interval=`{path}`: expected interval=CYCLES,FILE (e.g. interval=10000,iv.jsonl)"
                    ))
                })?;
                let detail = Detail::interval(cycles, &format!("--stats interval=`{path}`"))?;
                if file.trim().is_empty() {
                    return Err(input(format!("--stats interval={cycles},: give a file name")));
                }
                return Ok(Request { detail, path: PathBuf::from(file.trim()) });
            }
            (other, None) => {
                return Err(input(format!(
                    "--stats `{other}`: valid kinds are per-node, per-link, latency and interval"
                )))
            }
        };
        if path.trim().is_empty() {
            return Err(input(format!("--stats {kind}=: give a file name")));
        }
        Ok(Request { detail, path: PathBuf::from(path.trim()) })
    }

    fn csv(&self) -> bool {
        self.path.extension().is_some_and(|e| e == "csv")
    }
}

/// The rows of `detail` for one run.
pub fn rows(r: &AppResult, detail: Detail) -> Vec<Value> {
    let s = &r.stats;
    match detail {
        Detail::PerNode => s
            .procs
            .iter()
            .enumerate()
            .map(|(p, t)| {
                let n = s.nodes.get(p).cloned().unwrap_or_default();
                let mut row = json!({
                    "app": r.app, "variant": r.variant, "proc": p, "busy": t.busy,
                    "messages_sent": n.messages_sent, "messages_received": n.messages_received,
                    "cache_misses": n.cache_misses, "software_traps": n.software_traps,
                });
                for c in Category::ALL {
                    row[c.name()] = json!(t.get(c));
                }
                row
            })
            .collect(),
        Detail::PerLink => s
            .links
            .iter()
            .map(|l| {
                json!({
                    "app": r.app, "variant": r.variant, "link": l.link, "kind": l.kind, "from": l.from,
                    "to": l.to, "utilization": l.utilization, "bytes": l.bytes,
                })
            })
            .collect(),
        Detail::Interval(_) => {
            let Some(iv) = &s.intervals else { return Vec::new() };
            iv.rows
                .iter()
                .enumerate()
                .map(|(k, row)| {
                    let mut breakdown = serde_json::Map::new();
                    let mut sums = serde_json::Map::new();
                    for c in Category::ALL {
                        let per: Vec<f64> = row.breakdown.iter().map(|b| b[c as usize]).collect();
                        sums.insert(c.name().to_string(), json!(per.iter().sum::<f64>()));
                        breakdown.insert(c.name().to_string(), json!(per));
                    }
                    let mut traffic = serde_json::Map::new();
                    for t in commlab_api::TrafficClass::ALL {
                        traffic.insert(t.name().to_string(), json!(row.traffic[t as usize]));
                    }
                    let links = &row.link_utilization;
                    let mean = if links.is_empty() { 0.0 } else { links.iter().sum::<f64>() / links.len() as f64 };
                    json!({
                        "app": r.app, "variant": r.variant, "interval": k, "start": row.start,
                        "end": row.start + iv.length, "total": sums, "breakdown": breakdown, "traffic": traffic,
                        "link_utilization_mean": mean,
                        "link_utilization_max": links.iter().copied().fold(0.0, f64::max),
                        "link_utilization": links,
                        "ni_output_mean": row.ni_output_mean, "ni_output_max": row.ni_output_max,
                        "ni_input_mean": row.ni_input_mean, "ni_input_max": row.ni_input_max,
                    })
                })
                .collect()
        }
        Detail::Latency => s
            .latencies
            .iter()
            .map(|l| {
                let buckets: Vec<Value> = l.buckets.iter().map(|b| json!([b.lo, b.hi, b.count])).collect();
                json!({
                    "app": r.app, "variant": r.variant, "metric": l.metric, "class": l.class,
                    "count": l.count, "sum": l.sum, "mean": if l.count > 0 { l.sum / l.count as f64 } else { 0.0 },
                    "min": l.min, "p50": l.p50, "p90": l.p90, "p99": l.p99, "max": l.max, "buckets": buckets,
                })
            })
            .collect(),
    }
}

/// The interval statistics' length, when a request asks for them; two requests with
/// different lengths are refused (one run keeps one set of stretches).
pub fn interval_cycles(requests: &[Request]) -> Result<Option<f64>, Failure> {
    one_interval(requests.iter().map(|r| r.detail))
}

/// The one interval length among `details`, if any; two different lengths are refused.
pub fn one_interval(details: impl Iterator<Item = Detail>) -> Result<Option<f64>, Failure> {
    let mut lengths = details.filter_map(|d| match d {
        Detail::Interval(c) => Some(c),
        _ => None,
    });
    let first = lengths.next();
    if let (Some(a), Some(b)) = (first, lengths.find(|&c| Some(c) != first)) {
        return Err(input(format!(
            "--stats interval: two lengths ({a} and {b} cycles); one run keeps one set of stretches, so give every interval the same CYCLES"
        )));
    }
    Ok(first)
}

/// Whether any request asks for latency distributions (which must then be recorded).
pub fn wants_latencies(requests: &[Request]) -> bool {
    requests.iter().any(|r| r.detail == Detail::Latency)
}

/// The column order of `detail`'s CSV.
fn columns(detail: Detail) -> Vec<&'static str> {
    match detail {
        Detail::PerNode => {
            let mut c = vec!["app", "variant", "proc", "busy"];
            c.extend(Category::ALL.iter().map(|c| c.name()));
            c.extend(["messages_sent", "messages_received", "cache_misses", "software_traps"]);
            c
        }
        Detail::PerLink => vec!["app", "variant", "link", "kind", "from", "to", "utilization", "bytes"],
        Detail::Latency => {
            vec!["app", "variant", "metric", "class", "count", "sum", "mean", "min", "p50", "p90", "p99", "max"]
        }
        Detail::Interval(_) => {
            let mut c = vec!["app", "variant", "interval", "start", "end"];
            c.extend(Category::ALL.iter().map(|c| c.name()));
            c.extend(commlab_api::TrafficClass::ALL.iter().map(|t| t.name()));
            c.extend([
                "link_utilization_mean",
                "link_utilization_max",
                "ni_output_mean",
                "ni_output_max",
                "ni_input_mean",
                "ni_input_max",
            ]);
            c
        }
    }
}

/// A CSV cell of a row: a top-level field, or (interval rows) a category's sum over the
/// processors or a traffic class's bytes.
fn csv_cell<'a>(row: &'a Value, col: &str) -> &'a Value {
    match &row[col] {
        Value::Null => match (&row["total"][col], &row["traffic"][col]) {
            (Value::Null, t) => t,
            (v, _) => v,
        },
        v => v,
    }
}

/// Write every request's rows for `runs` (created or replaced).
pub fn write(requests: &[Request], runs: &[AppResult]) -> Result<(), Failure> {
    for req in requests {
        let mut out = String::new();
        if req.csv() {
            let cols = columns(req.detail);
            out.push_str(&cols.join(","));
            out.push('\n');
            for r in runs {
                for row in rows(r, req.detail) {
                    let cells: Vec<String> = cols
                        .iter()
                        .map(|c| match csv_cell(&row, c) {
                            Value::String(s) => s.clone(),
                            v => v.to_string(),
                        })
                        .collect();
                    out.push_str(&cells.join(","));
                    out.push('\n');
                }
            }
        } else {
            for r in runs {
                for row in rows(r, req.detail) {
                    out.push_str(&row.to_string());
                    out.push('\n');
                }
            }
        }
        // The path was checked before the run (`outputs::check_run_outputs`): a failure now is a
        // failed write, not bad input.
        let err =
            |e: std::io::Error| failed(format!("writing --stats {} `{}`: {e}", req.detail.name(), req.path.display()));
        let mut f = std::fs::File::create(&req.path).map_err(err)?;
        f.write_all(out.as_bytes()).and_then(|_| f.flush()).map_err(err)?;
    }
    Ok(())
}
