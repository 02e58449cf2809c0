//! `commlab machines` (the presets, or with `--table` the machine table) and `commlab machine
//! show` (a machine's resolved parameters as documented TOML).

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

/// The preset list as aligned columns: each as wide as its widest cell, the processor count
/// right-aligned, two spaces between columns.
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
