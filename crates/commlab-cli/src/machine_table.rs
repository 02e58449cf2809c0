//! The machine table (`commlab machines --table`): each preset's bisection, network latency,
//! remote and local miss, measured on the simulator, and the figures normalised by local-miss
//! time. Experiments use the same rows to place real machines on their x axes.

use crate::failure::{failed, Failure};
use crate::machine_arg;
use commlab_sim::machine;
use commlab_sim::Simulator;

/// Long help of `commlab machines`: how every column of `--table` is obtained.
pub const HELP: &str = "List the machine presets (name, processors, network, summary).

With --table, one row per preset, each figure taken from the preset's own configuration or
measured on the simulator:
  MHz             processor.clock_mhz
  bisection       bytes per processor cycle across the bisection, both directions
                  (links crossing the cut x link bandwidth; as `commlab machine show` prints)
  net latency     one-way latency of a lone 24-byte packet (header included) in processor
                  cycles, between two processors at the mean distance: injection + ejection
                  NI latency + mean router hops (over all ordered pairs of distinct
                  processors) x router latency + the packet's serialization once (cut-through)
  remote miss     mean of the best and worst write miss to a clean remote line, measured
                  with `miss-latency` kind=store-remote: the home at the nearest distance
                  from the requester (processor 0), and at the farthest
  local miss      measured with `miss-latency` kind=load-local
  bisection per local miss   bisection x local miss (bytes per local-miss time)
  latency in local misses    net latency / local miss

--json prints the same as one JSON object per machine, with the best and worst write misses
and the mean hops as well.";

/// One row of `commlab machines --table`.
pub struct MachineRow {
    pub name: String,
    pub mhz: f64,
    pub topology: String,
    pub procs: usize,
    pub mean_hops: f64,
    /// Bytes per processor cycle across the bisection.
    pub bisection: f64,
    /// One-way latency of a 24-byte packet at the mean distance, in processor cycles.
    pub latency: f64,
    pub remote_best: f64,
    pub remote_worst: f64,
    /// Local miss time in processor cycles.
    pub local: f64,
}

impl MachineRow {
    fn remote(&self) -> f64 {
        (self.remote_best + self.remote_worst) / 2.0
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "machine": self.name,
            "clock_mhz": self.mhz,
            "topology": self.topology,
            "procs": self.procs,
            "mean_hops": self.mean_hops,
            "bisection_bytes_per_cycle": self.bisection,
            "net_latency_cycles": self.latency,
            "remote_miss_cycles": self.remote(),
            "remote_miss_best_cycles": self.remote_best,
            "remote_miss_worst_cycles": self.remote_worst,
            "local_miss_cycles": self.local,
            "bisection_bytes_per_local_miss": self.bisection * self.local,
            "net_latency_local_misses": self.latency / self.local,
        })
    }
}

/// Measure one preset for the machine table (see [`HELP`]).
pub fn measure(name: &str) -> Result<MachineRow, Failure> {
    measure_at(name, None)
}

/// Measure a preset (or machine file) resized to `procs` processors as `--procs` resizes it
/// (`None`: at its own size).
pub fn measure_at(name: &str, procs: Option<usize>) -> Result<MachineRow, Failure> {
    let cfg = machine_arg::load(name, &[], procs)?;
    let n = cfg.nprocs();
    let near = (1..n).map(|p| cfg.topology.hops(0, p)).min().unwrap_or(0);
    let far = cfg.topology.max_hops_from(0);
    let mut row = MachineRow {
        name: name.to_string(),
        mhz: cfg.spec.processor.clock_mhz,
        topology: cfg.topology.describe(),
        procs: n,
        mean_hops: cfg.mean_hops(),
        bisection: cfg.bisection_bytes_per_cycle(),
        latency: cfg.packet_latency_cycles(24),
        remote_best: 0.0,
        remote_worst: 0.0,
        local: 0.0,
    };
    let sim = Simulator::new(cfg);
    let miss = |kind: &str, hops: usize| -> Result<f64, Failure> {
        let params = [format!("kind={kind}"), format!("hops={hops}")];
        let fail = |m: String| failed(format!("machine table, {name}, miss-latency {kind}: {m}"));
        let r = commlab_apps::run_app(&sim, "miss-latency", "sm", &params, 1).map_err(|e| fail(e.to_string()))?;
        if !r.check.ok {
            return Err(fail(format!("answer check failed: {}", r.check.detail)));
        }
        Ok(r.counters[commlab_apps::micro::miss_latency::MISS_CYCLES.name])
    };
    row.remote_best = miss("store-remote", near)?;
    row.remote_worst = miss("store-remote", far)?;
    row.local = miss("load-local", 0)?;
    Ok(row)
}

/// Print the table: aligned text with a two-line header, or one JSON object per machine.
pub fn print(json: bool) -> Result<(), Failure> {
    // The topology column is as wide as its widest entry (cm5's overflowed a fixed width).
    let mut tw = "topology".len();
    for name in machine::preset_names() {
        tw = tw.max(machine_arg::load(name, &[], None)?.topology.describe().len());
    }
    if !json {
        println!(
            "{:<12} {:>6}  {:<tw$} {:>5} {:>11} {:>11} {:>11} {:>10} {:>14} {:>14}",
            "", "clock", "", "", "bisection", "net lat.", "remote", "local", "bisection", "net lat."
        );
        println!(
            "{:<12} {:>6}  {:<tw$} {:>5} {:>11} {:>11} {:>11} {:>10} {:>14} {:>14}",
            "name",
            "(MHz)",
            "topology",
            "procs",
            "(B/cycle)",
            "(cycles)",
            "miss (cyc)",
            "miss (cyc)",
            "(B/local miss)",
            "(local misses)"
        );
    }
    for name in machine::preset_names() {
        let r = measure(name)?;
        if json {
            println!("{}", r.json());
        } else {
            println!(
                "{:<12} {:>6.1}  {:<tw$} {:>5} {:>11.1} {:>11.1} {:>11.1} {:>10.1} {:>14.1} {:>14.2}",
                r.name,
                r.mhz,
                r.topology,
                r.procs,
                r.bisection,
                r.latency,
                r.remote(),
                r.local,
                r.bisection * r.local,
                r.latency / r.local
            );
        }
    }
    Ok(())
}
