//! `commlab apps`: every application with its variants and documented parameters, as text or
//! (`--json`) one JSON object per application.

use crate::failure::Failure;
use crate::record::param_value;
use commlab_apps::{AppInfo, APPS};

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
