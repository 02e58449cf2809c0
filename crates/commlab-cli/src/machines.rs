//! `commlab machines` (the presets, or with `--table` the machine table), `commlab machine
//! show` (a machine's resolved parameters as documented TOML) and `commlab machine diff` (the
//! keys two machines differ in).

use crate::failure::{failed, Failure};
use crate::{machine_arg, machine_table};
use commlab_sim::machine::{self, MachineConfig};

/// `commlab machines [--table [--json]]`.
pub fn list(table: bool, json: bool) -> Result<(), Failure> {
    if table {
        return machine_table::print(json);
    }
    let mut rows = Vec::new();
    for name in machine::preset_names() {
        let cfg = machine_arg::load(name, &[], None)?;
        rows.push([name.to_string(), cfg.nprocs().to_string(), cfg.topology.describe(), cfg.spec.summary.clone()]);
    }
    print!("{}", columns(["name", "procs", "network", "summary"], &rows));
    Ok(())
}

/// Rows as aligned columns: each as wide as its widest cell, the second right-aligned, two
/// spaces between columns.
fn columns(header: [&str; 4], rows: &[[String; 4]]) -> String {
    let width = |i: usize| rows.iter().map(|r| r[i].len()).chain([header[i].len()]).max().unwrap_or(0);
    let (w0, w1, w2) = (width(0), width(1), width(2));
    let mut out = format!("{:<w0$}  {:>w1$}  {:<w2$}  {}\n", header[0], header[1], header[2], header[3]);
    for r in rows {
        out.push_str(&format!("{:<w0$}  {:>w1$}  {:<w2$}  {}\n", r[0], r[1], r[2], r[3]));
    }
    out
}

/// `commlab machine show`: documented TOML, or (`--json`) one JSON object with the resolved
/// figures and the spec.
pub fn show(machine: &str, set: &[String], procs: Option<usize>, json: bool) -> Result<(), Failure> {
    let cfg = machine_arg::load(machine, set, procs)?;
    if json {
        println!("{}", to_json(&cfg)?);
        return Ok(());
    }
    println!("# {} processors; network: {}", cfg.nprocs(), cfg.topology.describe());
    println!("# bisection: {:.2} bytes per processor cycle", cfg.bisection_bytes_per_cycle());
    print!("{}", cfg.spec.to_documented_toml());
    Ok(())
}

/// `commlab machine diff A B`: the keys whose resolved values differ, one per line with both
/// values and the key's unit ("no differences" when there are none; the fingerprints say the
/// same).
pub fn diff(a: &str, b: &str, set: &[String], procs: Option<usize>) -> Result<(), Failure> {
    let (ca, cb) = (machine_arg::load(a, set, procs)?, machine_arg::load(b, set, procs)?);
    print!("{}", diff_text(a, &ca, b, &cb)?);
    Ok(())
}

fn diff_text(a: &str, ca: &MachineConfig, b: &str, cb: &MachineConfig) -> Result<String, Failure> {
    let flat = |cfg: &MachineConfig| -> Result<std::collections::BTreeMap<String, serde_json::Value>, Failure> {
        let spec = serde_json::to_value(&cfg.spec).map_err(|e| failed(format!("machine spec as JSON: {e}")))?;
        let mut out = std::collections::BTreeMap::new();
        flatten("", &spec, &mut out);
        Ok(out)
    };
    let (fa, fb) = (flat(ca)?, flat(cb)?);
    let keys: std::collections::BTreeSet<&String> = fa.keys().chain(fb.keys()).collect();
    let show = |v: Option<&serde_json::Value>| v.map_or_else(|| "(absent)".to_string(), |v| v.to_string());
    let rows: Vec<[String; 4]> = keys
        .into_iter()
        .filter(|k| fa.get(*k) != fb.get(*k))
        .map(|k| {
            let unit = machine::key_doc(k).map(|d| d.unit.to_string()).unwrap_or_default();
            [k.clone(), show(fa.get(k)), show(fb.get(k)), unit]
        })
        .collect();
    let mut out = format!(
        "# {a}: {} processors, fingerprint {}; {b}: {} processors, fingerprint {}\n",
        ca.nprocs(),
        ca.fingerprint(),
        cb.nprocs(),
        cb.fingerprint()
    );
    if rows.is_empty() {
        out.push_str("no differences\n");
    } else {
        out.push_str(&format!("# key [unit]: {a} | {b}\n"));
        for [key, va, vb, unit] in rows {
            let unit = if unit.is_empty() { String::new() } else { format!(" [{unit}]") };
            out.push_str(&format!("{key}{unit}: {va} | {vb}\n"));
        }
    }
    Ok(out)
}

/// Dotted keys of a spec's leaves (arrays are one value).
fn flatten(prefix: &str, v: &serde_json::Value, out: &mut std::collections::BTreeMap<String, serde_json::Value>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(&key, v, out);
            }
        }
        other => {
            out.insert(prefix.to_string(), other.clone());
        }
    }
}

/// A resolved machine as `machine show --json` prints it: name, processors, network,
/// bisection, fingerprint and the spec.
pub(crate) fn to_json(cfg: &MachineConfig) -> Result<serde_json::Value, Failure> {
    let spec = serde_json::to_value(&cfg.spec).map_err(|e| failed(format!("machine spec as JSON: {e}")))?;
    Ok(serde_json::json!({
        "name": cfg.spec.name,
        "procs": cfg.nprocs(),
        "network": cfg.topology.describe(),
        "bisection_bytes_per_cycle": cfg.bisection_bytes_per_cycle(),
        "fingerprint": cfg.fingerprint(),
        "spec": spec,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_cell_widens_its_column() {
        let rows = [
            ["a".to_string(), "32".to_string(), "fat-tree arity 4, 3 levels (long)".to_string(), "s1".to_string()],
            ["bb".to_string(), "1024".to_string(), "mesh".to_string(), "s2".to_string()],
        ];
        let text = columns(["name", "procs", "network", "summary"], &rows);
        let starts: Vec<usize> = text.lines().map(|l| l.rfind("  ").unwrap()).collect();
        assert!(starts.windows(2).all(|w| w[0] == w[1]), "{text}");
    }
}
