//! `commlab characterize --compare FILE.toml`: em3d natively (`--machine host`) and on the
//! machine `--emit-machine` wrote, side by side, per variant: the measured time (the median of
//! `--runs` native runs, variants interleaved run by run, with their range), the predicted
//! time (one simulated run: the simulator is deterministic), their ratio measured/predicted
//! and its range over the runs, each side's breakdown (ns per processor), and whether the
//! fastest variant is the same. Times are compared in nanoseconds: the native record's cycles
//! are the host's clock ticks, the simulated ones the machine's `processor.clock_mhz`.

use crate::failure::{failed, input, Failure};
use crate::machine_arg;
use commlab_api::{Backend, Category};
use commlab_native::NativeBackend;
use serde::Serialize;
use std::collections::BTreeMap;

/// em3d's parameters unless `--param` says otherwise: a size whose native run of every variant
/// takes well under a second on 2 cores, and whose per-processor data (on 2 processors about
/// 410 KB: 30,000 edges of 12 bytes, values, counts) stays in a private cache of 512 KB.
pub const DEFAULT_PARAMS: [&str; 2] = ["nodes=6000", "iterations=40"];
/// Native runs per variant unless `--runs` says otherwise.
pub const DEFAULT_RUNS: usize = 5;
/// The target: every variant's measured/predicted within this factor either way.
pub const TARGET_FACTOR: f64 = 1.5;

/// One variant's figures.
#[derive(Serialize, Debug)]
pub struct Row {
    pub variant: String,
    /// Each native run's time (ns), in run order.
    pub measured_ns: Vec<f64>,
    pub measured_median_ns: f64,
    pub measured_min_ns: f64,
    pub measured_max_ns: f64,
    /// The simulated time on the machine (ns at its clock).
    pub predicted_ns: f64,
    /// `measured_median_ns` / `predicted_ns`.
    pub ratio: f64,
    pub ratio_min: f64,
    pub ratio_max: f64,
    /// The native runs' share of their cores, per run: the processors' threads' CPU time over
    /// their wall time in the timed region (the run's `cpu_share` counter; set-up excluded); 1
    /// when every processor's thread had its core all the time (waits spin), less when the
    /// host's other load took it; NaN (null in JSON) for a run whose timed region was too
    /// short to measure it (under 1 ms per processor).
    pub cpu_share: Vec<f64>,
    pub cpu_share_median: f64,
    /// Mean time per processor by category (ns): the median native run's, and the prediction's.
    pub measured_breakdown_ns: BTreeMap<String, f64>,
    pub predicted_breakdown_ns: BTreeMap<String, f64>,
}

/// The comparison.
#[derive(Serialize, Debug)]
pub struct Comparison {
    pub app: String,
    pub machine: String,
    pub overrides: Vec<String>,
    pub procs: usize,
    pub params: Vec<String>,
    pub runs: usize,
    /// The host's load average (1 minute) before and after the runs.
    pub load_before: Option<f64>,
    pub load_after: Option<f64>,
    pub host_mhz: f64,
    pub machine_mhz: f64,
    pub variants: Vec<Row>,
    pub fastest_measured: String,
    pub fastest_predicted: String,
    pub fastest_agrees: bool,
    pub target_factor: f64,
    /// Every variant's ratio within `target_factor` either way.
    pub within_target: bool,
}

fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg").ok()?.split_whitespace().next()?.parse().ok()
}

/// A run's result, its failure or failed check named.
fn checked(
    r: Result<commlab_apps::AppResult, commlab_apps::AppError>,
    v: &str,
    side: &str,
) -> Result<commlab_apps::AppResult, Failure> {
    let r = r.map_err(|e| match e {
        commlab_apps::AppError::Input(m) => input(m),
        commlab_apps::AppError::Run(m) => failed(format!("em3d [{v}] {side}: {m}")),
    })?;
    if !r.check.ok {
        return Err(failed(format!("em3d [{v}] {side}: answer check failed: {}", r.check.detail)));
    }
    Ok(r)
}

fn breakdown_ns(r: &commlab_apps::AppResult, mhz: f64) -> BTreeMap<String, f64> {
    Category::ALL.iter().map(|c| (c.name().to_string(), r.stats.mean(*c) * 1e3 / mhz)).collect()
}

/// Run the comparison: `machine` a machine file (or preset), `set` its overrides, `params`
/// em3d's (a default is dropped where one is given), `runs` native runs per variant.
pub fn compare(machine: &str, set: &[String], params: &[String], runs: usize) -> Result<Comparison, Failure> {
    let host = NativeBackend::new();
    let procs = host.cores();
    if procs < 2 {
        return Err(input("--compare needs a host with at least 2 cores (em3d's messages go between processors)"));
    }
    let native = host.with_nprocs(procs).map_err(|e| failed(format!("the native backend: {e}")))?;
    let cfg = machine_arg::load(machine, set, Some(procs))?;
    let machine_mhz = cfg.spec.processor.clock_mhz;
    let sim = commlab_sim::Simulator::new(cfg);
    let info = commlab_apps::app_info("em3d").map_err(|e| failed(e.to_string()))?;
    let key = |p: &str| p.split_once('=').map_or(p, |(k, _)| k).trim().to_string();
    let given: Vec<String> = params.iter().map(|p| key(p)).collect();
    let mut all: Vec<String> =
        DEFAULT_PARAMS.iter().filter(|p| !given.contains(&key(p))).map(|p| p.to_string()).collect();
    all.extend(params.iter().cloned());
    commlab_apps::Params::parse(info, &all).map_err(|e| input(e.to_string()))?;
    // The variants both sides have (natively: no one-sided access, no Tempest).
    let native_variants = crate::variant_arg::listed_variants(&native, info, "all")?;
    let sim_variants = crate::variant_arg::listed_variants(&sim, info, "all")?;
    let variants: Vec<&str> = native_variants.into_iter().filter(|v| sim_variants.contains(v)).collect();
    let host_mhz = native.cycles_per_us();
    let load_before = load_average();
    let mut predicted = Vec::new();
    for v in &variants {
        predicted.push(checked(commlab_apps::run_app(&sim, "em3d", v, &all, 1), v, "on the machine")?);
    }
    let mut measured: Vec<Vec<commlab_apps::AppResult>> = variants.iter().map(|_| Vec::new()).collect();
    let mut shares: Vec<Vec<f64>> = variants.iter().map(|_| Vec::new()).collect();
    for _ in 0..runs {
        for (i, v) in variants.iter().enumerate() {
            let r = checked(commlab_apps::run_app(&native, "em3d", v, &all, 1), v, "on the host")?;
            shares[i].push(r.counters.get(commlab_native::CPU_SHARE.name).copied().unwrap_or(f64::NAN));
            measured[i].push(r);
        }
    }
    let load_after = load_average();
    let mut rows = Vec::new();
    for (i, v) in variants.iter().enumerate() {
        let ns: Vec<f64> = measured[i].iter().map(|r| r.stats.cycles * 1e3 / host_mhz).collect();
        let mut order: Vec<usize> = (0..ns.len()).collect();
        order.sort_by(|&a, &b| ns[a].total_cmp(&ns[b]));
        let mid = order[order.len() / 2];
        let med = super::summary::median(ns.clone()).unwrap_or(f64::NAN);
        let (lo, hi) = ns.iter().fold((f64::INFINITY, 0.0f64), |(l, h), &x| (l.min(x), h.max(x)));
        let pred = predicted[i].stats.cycles * 1e3 / machine_mhz;
        rows.push(Row {
            variant: v.to_string(),
            measured_median_ns: med,
            measured_min_ns: lo,
            measured_max_ns: hi,
            predicted_ns: pred,
            ratio: med / pred,
            ratio_min: lo / pred,
            ratio_max: hi / pred,
            measured_breakdown_ns: breakdown_ns(&measured[i][mid], host_mhz),
            predicted_breakdown_ns: breakdown_ns(&predicted[i], machine_mhz),
            measured_ns: ns,
            cpu_share_median: super::summary::median(shares[i].clone()).unwrap_or(f64::NAN),
            cpu_share: shares[i].clone(),
        });
    }
    let fastest = |f: &dyn Fn(&Row) -> f64| {
        rows.iter().min_by(|a, b| f(a).total_cmp(&f(b))).map(|r| r.variant.clone()).unwrap_or_default()
    };
    let fastest_measured = fastest(&|r| r.measured_median_ns);
    let fastest_predicted = fastest(&|r| r.predicted_ns);
    let within_target = rows.iter().all(|r| r.ratio <= TARGET_FACTOR && r.ratio >= 1.0 / TARGET_FACTOR);
    Ok(Comparison {
        app: "em3d".into(),
        machine: machine.to_string(),
        overrides: set.to_vec(),
        procs,
        params: all,
        runs,
        load_before,
        load_after,
        host_mhz,
        machine_mhz,
        fastest_agrees: fastest_measured == fastest_predicted,
        variants: rows,
        fastest_measured,
        fastest_predicted,
        target_factor: TARGET_FACTOR,
        within_target,
    })
}

/// The comparison as a table.
pub fn table(c: &Comparison) -> String {
    let load = |l: Option<f64>| l.map_or("?".to_string(), |v| format!("{v:.2}"));
    let mut t = format!(
        "em3d on {} processors, {}: natively (median of {} runs, {:.0} MHz clock) and predicted by {}{} ({:.1} MHz)\nload average {} before, {} after\n\n",
        c.procs,
        c.params.join(" "),
        c.runs,
        c.host_mhz,
        c.machine,
        if c.overrides.is_empty() { String::new() } else { format!(" --set {}", c.overrides.join(" --set ")) },
        c.machine_mhz,
        load(c.load_before),
        load(c.load_after)
    );
    t.push_str(&format!(
        "{:<8} {:>12} {:>23} {:>13} {:>18}  {:<11} {}\n",
        "variant", "measured ms", "range ms", "predicted ms", "measured/predicted", "range", "cpu share"
    ));
    for r in &c.variants {
        t.push_str(&format!(
            "{:<8} {:>12.3} {:>23} {:>13.3} {:>18.2}  {:<11} {}\n",
            r.variant,
            r.measured_median_ns / 1e6,
            format!("{:.3}-{:.3}", r.measured_min_ns / 1e6, r.measured_max_ns / 1e6),
            r.predicted_ns / 1e6,
            r.ratio,
            format!("{:.2}-{:.2}", r.ratio_min, r.ratio_max),
            // Absent from runs whose timed region was under 1 ms per processor.
            if r.cpu_share_median.is_finite() { format!("{:.2}", r.cpu_share_median) } else { "-".into() }
        ));
    }
    t.push_str(&format!(
        "\nfastest: measured {}, predicted {} ({})\nevery variant within {}x: {}\n",
        c.fastest_measured,
        c.fastest_predicted,
        if c.fastest_agrees { "the same" } else { "NOT the same" },
        c.target_factor,
        if c.within_target { "yes" } else { "no" }
    ));
    t.push_str("\nbreakdown, ms per processor (measured median run / predicted):\n");
    for r in &c.variants {
        let parts: Vec<String> = r
            .measured_breakdown_ns
            .iter()
            .map(|(k, m)| {
                format!("{k} {:.2}/{:.2}", m / 1e6, r.predicted_breakdown_ns.get(k).copied().unwrap_or(0.0) / 1e6)
            })
            .collect();
        t.push_str(&format!("  {:<8} {}\n", r.variant, parts.join(", ")));
    }
    t
}
