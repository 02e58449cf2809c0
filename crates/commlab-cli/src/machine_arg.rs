//! The `--machine` argument: a preset name or a machine TOML file, with `--set` overrides and
//! `--procs` resizing, loaded into a checked `MachineConfig`.

use crate::failure::{input, Failure};
use commlab_sim::machine::{self, MachineConfig};

/// Load a preset by name or a machine file by path.
pub fn load(machine: &str, set: &[String], procs: Option<usize>) -> Result<MachineConfig, Failure> {
    let is_file = machine.ends_with(".toml") || machine.contains('/');
    let cfg = if is_file {
        let text = crate::alloc_failure::fallible(|| std::fs::read_to_string(machine)).map_err(|e| {
            input(format!(
                "cannot read machine file `{machine}`: {e} (give a readable machine .toml file, or a preset: {})",
                machine::preset_names().join(", ")
            ))
        })?;
        MachineConfig::load(&text, machine, set, procs)
    } else {
        MachineConfig::preset(machine, set, procs)
    };
    cfg.map_err(|e| input(e.to_string()))
}
