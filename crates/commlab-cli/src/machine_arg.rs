//! The `--machine` argument: a preset name or a machine TOML file, with `--set` overrides and
//! `--procs` resizing, loaded into a checked `MachineConfig`. A machine file gives every key
//! (`commlab machine show` prints them), or starts from a preset: `base = "alewife"` and only
//! the keys that differ.

use crate::failure::{input, Failure};
use commlab_sim::machine::{self, MachineConfig};

/// The `--machine` name that runs natively on the host (`host.rs`), not a simulated machine.
pub(crate) const HOST: &str = "host";

/// Load a preset by name or a machine file by path.
pub fn load(machine: &str, set: &[String], procs: Option<usize>) -> Result<MachineConfig, Failure> {
    if machine == HOST {
        // `run` takes the host before it gets here; every other command simulates.
        return Err(input(format!(
            "--machine host is not supported here: only `commlab run` runs on the host (natively); this command simulates, so give a preset ({}) or a machine file (`commlab characterize` writes one for this host)",
            machine::preset_names().join(", ")
        )));
    }
    let is_file = machine.ends_with(".toml") || machine.contains('/');
    let cfg = if is_file {
        let text = crate::alloc_failure::fallible(|| std::fs::read_to_string(machine)).map_err(|e| {
            input(format!(
                "cannot read machine file `{machine}`: {e} (give a readable machine .toml file, or a preset: {})",
                machine::preset_names().join(", ")
            ))
        })?;
        let text = with_base(&text, machine)?;
        MachineConfig::load(&text, machine, set, procs)
    } else {
        MachineConfig::preset(machine, set, procs)
    };
    cfg.map_err(|e| {
        let hint = if is_file && e.message.contains("missing field") {
            " (a machine file gives every key `commlab machine show` prints, or starts from a preset with base = \"alewife\" and gives the keys that differ)"
        } else {
            ""
        };
        input(format!("{e}{hint}"))
    })
}

/// A machine file's text with its `base` preset filled in: the preset's keys, then the file's
/// over them (tables merged key by key); without `name` the machine is named after the file.
/// Text without `base` (or not TOML, which the loader reports) is returned as it is.
fn with_base(text: &str, path: &str) -> Result<String, Failure> {
    let Ok(mut table) = text.parse::<toml::Table>() else { return Ok(text.to_string()) };
    let Some(base) = table.remove("base") else { return Ok(text.to_string()) };
    let presets = machine::preset_names().join(", ");
    let name = base.as_str().ok_or_else(|| {
        input(format!("{path}: machine key `base`: must be a preset's name in quotes (one of {presets}), got {base}"))
    })?;
    let preset = machine::preset_text(name)
        .ok_or_else(|| input(format!("{path}: machine key `base`: `{name}` is not a preset (valid: {presets})")))?;
    let mut merged: toml::Table = preset.parse().expect("a preset is valid TOML");
    if !table.contains_key("name") {
        let stem = std::path::Path::new(path).file_stem().and_then(|s| s.to_str()).unwrap_or(name);
        merged.insert("name".to_string(), toml::Value::String(stem.to_string()));
    }
    merge(&mut merged, table);
    Ok(toml::to_string(&merged).expect("a TOML table serializes"))
}

/// `over`'s keys into `into`: a table into a table key by key, anything else replaces.
fn merge(into: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (into.get_mut(&k), v) {
            (Some(toml::Value::Table(a)), toml::Value::Table(b)) => merge(a, b),
            (_, v) => {
                into.insert(k, v);
            }
        }
    }
}
