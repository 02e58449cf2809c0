//! `commlab machines` (the presets, or with `--table` the machine table) and `commlab machine
//! show` (a machine's resolved parameters as documented TOML).

use crate::failure::Failure;
use crate::{machine_arg, machine_table};
use commlab_sim::machine;

/// `commlab machines [--table [--json]]`.
pub fn list(table: bool, json: bool) -> Result<(), Failure> {
    if table {
        return machine_table::print(json);
    }
    println!("{:<12} {:>6}  {:<28} summary", "name", "procs", "network");
    for name in machine::preset_names() {
        let cfg = machine_arg::load(name, &[], None)?;
        println!("{:<12} {:>6}  {:<28} {}", name, cfg.nprocs(), cfg.topology.describe(), cfg.spec.summary);
    }
    Ok(())
}

/// `commlab machine show`.
pub fn show(machine: &str, set: &[String], procs: Option<usize>) -> Result<(), Failure> {
    let cfg = machine_arg::load(machine, set, procs)?;
    println!("# {} processors; network: {}", cfg.nprocs(), cfg.topology.describe());
    println!("# bisection: {:.2} bytes per processor cycle", cfg.bisection_bytes_per_cycle());
    print!("{}", cfg.spec.to_documented_toml());
    Ok(())
}
