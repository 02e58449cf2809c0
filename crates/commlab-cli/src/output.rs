//! Runs as people and spreadsheets read them: a short text report, and CSV. (The JSON Lines
//! form is the record's own: `ResultRecord::to_json_line`.)

use crate::record::ResultRecord;
use commlab_api::{Category, TrafficClass};

/// CSV header and rows: fixed columns, then one column per counter (union over all runs).
pub fn to_csv(records: &[ResultRecord]) -> String {
    let mut counter_names: Vec<&String> = records.iter().flat_map(|r| r.counters.keys()).collect();
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
    for r in records {
        let params: Vec<String> = r.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let mut row = vec![
            r.app.clone(),
            r.variant.clone(),
            r.machine.clone(),
            r.procs.to_string(),
            r.seed.to_string(),
            format!("\"{}\"", params.join(";")),
            r.cycles.to_string(),
        ];
        row.extend(Category::ALL.iter().map(|c| r.time(*c).to_string()));
        row.extend(TrafficClass::ALL.iter().map(|c| r.bytes(*c).unwrap_or(0).to_string()));
        row.push(r.check.ok.to_string());
        row.push(r.check.max_error.to_string());
        row.push(r.sim.events.to_string());
        row.push(r.sim.wall_seconds.to_string());
        row.extend(counter_names.iter().map(|c| r.counters.get(*c).map(|v| v.to_string()).unwrap_or_default()));
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out
}

/// A short human-readable report of one run.
pub fn to_text(r: &ResultRecord) -> String {
    let mut out = format!(
        "{} [{}] on {} ({} procs, seed {}): {:.1} cycles, check {} ({})\n",
        r.app,
        r.variant,
        r.machine,
        r.procs,
        r.seed,
        r.cycles,
        if r.check.ok { "ok" } else { "FAILED" },
        r.check.detail
    );
    out.push_str("  time per processor (mean cycles):");
    for c in Category::ALL {
        out.push_str(&format!(" {}={:.1}", c.name(), r.time(c)));
    }
    out.push_str("\n  traffic (bytes):");
    for c in TrafficClass::ALL {
        out.push_str(&format!(" {}={}", c.name(), r.bytes(c).unwrap_or(0)));
    }
    out.push_str("\n  counters:");
    for (k, v) in &r.counters {
        out.push_str(&format!(" {k}={v:.4}"));
    }
    out.push_str(&format!(
        "\n  simulator: {} events in {:.3} s ({:.2} M events/s)\n",
        r.sim.events,
        r.sim.wall_seconds,
        r.sim.events_per_second / 1e6
    ));
    out
}
