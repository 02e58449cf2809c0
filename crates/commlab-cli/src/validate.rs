//! `commlab validate`: every published primitive cost of a machine measured and compared
//! (exit status 0 when all are within the tolerance).

use crate::failure::{failed, input, Failure};
use crate::machine_arg;
use commlab_apps::AppError;
use commlab_sim::Simulator;

pub fn run(machine: &str, set: &[String], json: bool) -> Result<(), Failure> {
    let name = machine_arg::load(machine, set, None)?.spec.name.clone();
    let make = |extra: &[String]| {
        let all: Vec<String> = set.iter().chain(extra).cloned().collect();
        machine_arg::load(machine, &all, None).map(Simulator::new).map_err(|f| AppError::Input(f.message))
    };
    let rows = commlab_apps::validate::validate(&name, make).map_err(|e| match e {
        AppError::Input(m) => input(m),
        AppError::Run(m) => failed(format!("validate: {m}")),
    })?;
    if json {
        for r in &rows {
            let j = serde_json::json!({
                "machine": name, "row": r.name, "unit": r.unit, "published": r.published,
                "measured": r.measured, "error_pct": 100.0 * r.error(), "ok": r.ok(), "how": r.how,
            });
            println!("{j}");
        }
    } else {
        // Each row's unit is its own (cycles, bytes per cycle, ...): a column of its own.
        let unit_width = rows.iter().map(|r| r.unit.len()).max().unwrap_or(0).max(4);
        println!(
            "{:<52} {:>10} {:>10} {:<unit_width$} {:>8}",
            format!("{name}: primitive"),
            "published",
            "measured",
            "unit",
            "error"
        );
        for r in &rows {
            println!(
                "{:<52} {:>10.2} {:>10.2} {:<unit_width$} {:>7.1}%  {}",
                r.name,
                r.published,
                r.measured,
                r.unit,
                100.0 * r.error(),
                if r.ok() { "ok" } else { "OUT OF TOLERANCE" }
            );
        }
    }
    let bad: Vec<&str> = rows.iter().filter(|r| !r.ok()).map(|r| r.name.as_str()).collect();
    if bad.is_empty() {
        if !json {
            // Rows carry their own tolerance (Table 2's round trips 15%, the rest 10%): say each.
            let mut by_tolerance: Vec<(u64, usize)> = Vec::new();
            for r in &rows {
                let pct = (100.0 * r.tolerance).round() as u64;
                match by_tolerance.iter_mut().find(|t| t.0 == pct) {
                    Some(t) => t.1 += 1,
                    None => by_tolerance.push((pct, 1)),
                }
            }
            by_tolerance.sort();
            if let [(pct, _)] = by_tolerance[..] {
                println!("all {} rows within {pct}%", rows.len());
            } else {
                let parts: Vec<String> = by_tolerance.iter().map(|(pct, n)| format!("{n} within {pct}%")).collect();
                println!("all {} rows within their tolerance ({})", rows.len(), parts.join(", "));
            }
        }
        Ok(())
    } else {
        Err(failed(format!("{} rows out of tolerance: {}", bad.len(), bad.join("; "))))
    }
}
