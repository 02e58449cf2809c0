//! Runs as people and spreadsheets read them: a short text report, and CSV. (The JSON Lines
//! form is the record's own: `ResultRecord::to_json_line`.)

use crate::record::ResultRecord;
use commlab_api::{Category, TrafficClass};

/// Significant digits of a number in CSV (JSON keeps every digit).
pub const CSV_DIGITS: usize = 9;

/// `v` rounded to `digits` significant digits, printed in the shortest form that reads back as
/// the rounded value: `101.75555999999997` is `101.75556` at 9 digits, `162.0` is `162`, and
/// a magnitude below 1e-4 or from 1e15 up in exponent form (`4.12114787e-13`). NaN and
/// infinities print as `NaN`, `inf`, `-inf`.
pub fn significant(v: f64, digits: usize) -> String {
    if !v.is_finite() || v == 0.0 {
        return format!("{}", if v == 0.0 { 0.0 } else { v });
    }
    let rounded: f64 = format!("{v:.*e}", digits.saturating_sub(1)).parse().expect("a formatted float reads back");
    if (1e-4..1e15).contains(&rounded.abs()) {
        format!("{rounded}")
    } else {
        format!("{rounded:e}")
    }
}

/// A counter as text: a whole number without decimals (`162`), anything else to 6 significant
/// digits (`101.756`, `0.00551812`).
pub fn counter_text(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        significant(v, 6)
    }
}

/// CSV header and rows: fixed columns, then one column per counter (union over all runs).
/// Fractional figures are rounded to [`CSV_DIGITS`] significant digits; whole numbers are exact.
pub fn to_csv(records: &[ResultRecord]) -> String {
    let mut counter_names: Vec<&String> = records.iter().flat_map(|r| r.counters.keys()).collect();
    counter_names.sort();
    counter_names.dedup();
    let mut cols: Vec<String> =
        ["app", "variant", "machine", "procs", "seed", "params", "cycles"].iter().map(|s| s.to_string()).collect();
    cols.extend(Category::ALL.iter().map(|c| c.name().to_string()));
    cols.extend(TrafficClass::ALL.iter().map(|c| format!("volume_{}", c.name())));
    cols.extend(["check_ok", "max_error", "events", "wall_seconds"].iter().map(|s| s.to_string()));
    // The provenance every record carries, as in JSON: the --set overrides, the resolved
    // machine's fingerprint and the commlab version (empty for a record of an older version).
    cols.extend(["overrides", "machine_fingerprint", "commlab_version"].iter().map(|s| s.to_string()));
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
            quoted(&params.join(";")),
            r.cycles.to_string(),
        ];
        let num =
            |v: f64| if v.fract() == 0.0 && v.abs() < 1e15 { format!("{v:.0}") } else { significant(v, CSV_DIGITS) };
        row[6] = num(r.cycles);
        row.extend(Category::ALL.iter().map(|c| num(r.time(*c))));
        row.extend(TrafficClass::ALL.iter().map(|c| r.bytes(*c).unwrap_or(0).to_string()));
        row.push(r.check.ok.to_string());
        row.push(num(r.check.max_error));
        row.push(r.sim.events.to_string());
        row.push(num(r.sim.wall_seconds));
        row.push(quoted(&r.overrides.as_deref().unwrap_or_default().join(";")));
        row.push(r.machine_fingerprint.clone().unwrap_or_default());
        row.push(r.commlab_version.clone().unwrap_or_default());
        row.extend(counter_names.iter().map(|c| r.counters.get(*c).map(|v| num(*v)).unwrap_or_default()));
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out
}

/// A CSV field in quotes, any quote in it doubled (RFC 4180).
fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
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
        out.push_str(&format!(" {k}={}", counter_text(*v)));
    }
    out.push_str(&format!(
        "\n  simulator: {} events in {:.3} s ({:.2} M events/s)\n",
        r.sim.events,
        r.sim.wall_seconds,
        r.sim.events_per_second / 1e6
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_without_float_noise() {
        assert_eq!(significant(101.75555999999997, 9), "101.75556");
        assert_eq!(significant(6379.040482500001, 9), "6379.04048");
        assert_eq!(significant(162.0, 9), "162");
        assert_eq!(significant(0.0, 9), "0");
        assert_eq!(significant(-0.0, 9), "0");
        assert_eq!(significant(f64::NAN, 9), "NaN");
        assert_eq!(significant(123456789012.0, 9), "123456789000");
        assert_eq!(counter_text(162.0), "162");
        assert_eq!(counter_text(101.75555999999997), "101.756");
        assert_eq!(counter_text(0.005518117946305521), "0.00551812");
        assert_eq!(counter_text(f64::NAN), "NaN");
        assert_eq!(significant(4.121147871e-13, 9), "4.12114787e-13");
        assert_eq!(counter_text(4.121147871e-13), "4.12115e-13");
    }
}
