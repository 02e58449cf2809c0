//! `commlab apps`: every application with its variants and documented parameters, as text or
//! (`--json`) one JSON object per application. `commlab counters [APP]`: the counters results
//! report, each with its unit and meaning: the engine's, then each application's (or APP's).

use crate::failure::Failure;
use crate::record::param_value;
use commlab_api::Counter;
use commlab_apps::{app_info, AppInfo, APPS};
use commlab_sim::counters::ENGINE_COUNTERS;

pub fn list(json: bool) -> Result<(), Failure> {
    for a in APPS {
        if json {
            println!("{}", to_json(a));
        } else {
            print!("{}", to_text(a));
        }
    }
    Ok(())
}

/// One application: name, summary, variants, then one `--param name=default  meaning` line per
/// parameter with the meanings aligned.
fn to_text(a: &AppInfo) -> String {
    let mut out = format!("{}\n  {}\n  variants: {}\n", a.name, a.summary, a.variants.join(", "));
    let width = a.params.iter().map(|p| p.name.len() + 1 + p.default.len()).max().unwrap_or(0);
    for p in a.params {
        let setting = format!("{}={}", p.name, p.default);
        out.push_str(&format!("  --param {setting:<width$}  {}\n", p.doc));
    }
    out.push('\n');
    out
}

/// One application as JSON; a numeric default is a number, as in `params` of a result record.
pub(crate) fn to_json(a: &AppInfo) -> serde_json::Value {
    let params: Vec<serde_json::Value> = a
        .params
        .iter()
        .map(|p| serde_json::json!({"name": p.name, "default": param_value(p.default), "doc": p.doc}))
        .collect();
    serde_json::json!({"name": a.name, "summary": a.summary, "variants": a.variants, "params": params})
}

/// `commlab counters [APP]`: the engine's counters, then every application's (or only `app`'s),
/// then (without `app`) those a run on the host adds; as text or (`json`) one JSON object per
/// table. An app's counter replaces the engine's of the same name.
pub fn counters(app: Option<&str>, json: bool) -> Result<(), Failure> {
    let apps: Vec<&AppInfo> = match app {
        Some(name) => vec![app_info(name).map_err(|e| crate::failure::input(e.to_string()))?],
        None => APPS.iter().collect(),
    };
    let engine = "engine: reported by every run on the simulator, each when its mechanism is present";
    let host = "host: added to am-latency's and bulk-bw's on --machine host";
    let mut tables = vec![("engine", engine, ENGINE_COUNTERS)];
    tables.extend(apps.iter().map(|a| (a.name, a.name, a.counters)));
    if app.is_none() {
        tables.push(("host", host, crate::host::HOST_COUNTERS));
    }
    for (name, heading, table) in tables {
        if json {
            println!("{}", counters_json(name, table));
        } else {
            print!("{}", counters_text(heading, table));
        }
    }
    Ok(())
}

/// One table: a heading, then one `name  unit  meaning` line per counter, columns aligned.
fn counters_text(heading: &str, table: &[Counter]) -> String {
    let name_width = table.iter().map(|c| c.name.len()).max().unwrap_or(0);
    let unit_width = table.iter().map(|c| c.unit.len()).max().unwrap_or(0);
    let mut out = format!("{heading}\n");
    for c in table {
        out.push_str(&format!("  {:<name_width$}  {:<unit_width$}  {}\n", c.name, c.unit, c.meaning));
    }
    out.push('\n');
    out
}

/// One table as JSON: `{"table": "engine", the app or "host", "counters": [{name, unit,
/// meaning}]}`.
fn counters_json(table_name: &str, table: &[Counter]) -> serde_json::Value {
    let counters: Vec<serde_json::Value> =
        table.iter().map(|c| serde_json::json!({"name": c.name, "unit": c.unit, "meaning": c.meaning})).collect();
    serde_json::json!({"table": table_name, "counters": counters})
}
