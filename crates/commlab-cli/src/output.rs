//! Result formatting: human-readable text, JSON Lines and CSV.

use commlab_api::{Category, TrafficClass};
use commlab_apps::AppResult;
use serde_json::{json, Map, Value};

/// Run identity that the app result does not carry.
pub struct RunMeta<'a> {
    pub machine: &'a str,
    pub procs: usize,
    pub seed: u64,
}

/// One run as the JSON object documented in DESIGN.md.
pub fn to_json(r: &AppResult, meta: &RunMeta) -> Value {
    let s = &r.stats;
    let breakdown: Map<String, Value> =
        Category::ALL.iter().map(|c| (c.name().to_string(), json!(s.mean(*c)))).collect();
    let volume: Map<String, Value> =
        TrafficClass::ALL.iter().map(|c| (c.name().to_string(), json!(s.volume_bytes[*c as usize]))).collect();
    let counters: Map<String, Value> = r.counters.iter().map(|(k, v)| (k.clone(), finite(*v))).collect();
    let eps = if s.wall_seconds > 0.0 { s.events as f64 / s.wall_seconds } else { 0.0 };
    json!({
        "app": r.app,
        "variant": r.variant,
        "machine": meta.machine,
        "procs": meta.procs,
        "seed": meta.seed,
        "params": r.params,
        "cycles": s.cycles,
        "breakdown": breakdown,
        "volume_bytes": volume,
        "counters": counters,
        "check": { "ok": r.check.ok, "max_error": finite(r.check.max_error), "detail": r.check.detail },
        "sim": { "events": s.events, "wall_seconds": s.wall_seconds, "events_per_second": eps },
    })
}

/// JSON has no NaN or infinity: write them as null.
fn finite(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else {
        Value::Null
    }
}

/// CSV header and rows: fixed columns, then one column per counter (union over all runs).
pub fn to_csv(results: &[(AppResult, Value)]) -> String {
    let mut counter_names: Vec<&String> = results.iter().flat_map(|(r, _)| r.counters.keys()).collect();
    counter_names.sort();
    counter_names.dedup();
    let mut cols: Vec<String> =
        ["app", "variant", "machine", "procs", "seed", "params", "cycles"].iter().map(|s| s.to_string()).collect();
    cols.extend(Category::ALL.iter().map(|c| c.name().to_string()));
    cols.extend(TrafficClass::ALL.iter().map(|c| format!("volume_{}", c.name())));
    cols.extend(["check_ok", "max_error", "events", "wall_seconds"].iter().map(|s| s.to_string()));
    cols.extend(counter_names.iter().map(|c| format!("counter_{c}")));
    let mut out = cols.join(",");
    out.push('\n');
    for (r, j) in results {
        let params: Vec<String> = r.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let mut row = vec![
            r.app.to_string(),
            r.variant.to_string(),
            j["machine"].as_str().unwrap_or("").to_string(),
            j["procs"].to_string(),
            j["seed"].to_string(),
            format!("\"{}\"", params.join(";")),
            r.stats.cycles.to_string(),
        ];
        row.extend(Category::ALL.iter().map(|c| r.stats.mean(*c).to_string()));
        row.extend(TrafficClass::ALL.iter().map(|c| r.stats.volume_bytes[*c as usize].to_string()));
        row.push(r.check.ok.to_string());
        row.push(r.check.max_error.to_string());
        row.push(r.stats.events.to_string());
        row.push(r.stats.wall_seconds.to_string());
        row.extend(counter_names.iter().map(|c| r.counters.get(*c).map(|v| v.to_string()).unwrap_or_default()));
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out
}

/// A short human-readable report of one run.
pub fn to_text(r: &AppResult, meta: &RunMeta) -> String {
    let s = &r.stats;
    let mut out = format!(
        "{} [{}] on {} ({} procs, seed {}): {:.1} cycles, check {} ({})\n",
        r.app,
        r.variant,
        meta.machine,
        meta.procs,
        meta.seed,
        s.cycles,
        if r.check.ok { "ok" } else { "FAILED" },
        r.check.detail
    );
    out.push_str("  time per processor (mean cycles):");
    for c in Category::ALL {
        out.push_str(&format!(" {}={:.1}", c.name(), s.mean(c)));
    }
    out.push_str("\n  traffic (bytes):");
    for c in TrafficClass::ALL {
        out.push_str(&format!(" {}={}", c.name(), s.volume_bytes[c as usize]));
    }
    out.push_str("\n  counters:");
    for (k, v) in &r.counters {
        out.push_str(&format!(" {k}={v:.4}"));
    }
    let eps = if s.wall_seconds > 0.0 { s.events as f64 / s.wall_seconds } else { 0.0 };
    out.push_str(&format!(
        "\n  simulator: {} events in {:.3} s ({:.2} M events/s)\n",
        s.events,
        s.wall_seconds,
        eps / 1e6
    ));
    out
}
