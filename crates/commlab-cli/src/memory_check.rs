//! The memory a run needs, estimated before it is built (`commlab run` and `commlab sweep`),
//! against `--max-memory` or the memory available: a clear refusal (exit 2, naming the input
//! that weighs most) instead of an allocation failure mid-run.

use crate::failure::{input, Failure};
use commlab_sim::Simulator;

/// Bytes as a short figure with a binary unit (`1.5 GiB`).
fn show_bytes(b: u64) -> String {
    const UNITS: [&str; 6] = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} bytes")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// A size given by the user (`--max-memory`, `characterize --sizes`): bytes, or a number with K,
/// M, G, T or P (powers of 1024; an optional B or iB).
pub(crate) fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let t = t.strip_suffix("iB").or_else(|| t.strip_suffix('B')).unwrap_or(t);
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m = match c.to_ascii_uppercase() {
                'K' => 1u64 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                'T' => 1 << 40,
                'P' => 1 << 50,
                _ => 0,
            };
            (&t[..i], m)
        }
        _ => (t, 1),
    };
    match num.trim().parse::<f64>() {
        Ok(v) if mult > 0 && v.is_finite() && v > 0.0 && v * (mult as f64) < u64::MAX as f64 => {
            Ok((v * mult as f64) as u64)
        }
        _ => Err(format!("`{s}` is not a size (give bytes, or a number with K, M, G or T, e.g. 2G)")),
    }
}

/// The memory the host can give a new process now: `MemAvailable` of /proc/meminfo (Linux);
/// None where it cannot be read (then only `--max-memory` limits a run).
fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// Refuse (exit 2) a run whose estimated memory exceeds `--max-memory` or, without it, the
/// memory available. The estimate is the machine's own state (`Simulator::machine_bytes_estimate`:
/// per processor the 32 KiB of coroutine stack an application may use, 8 KiB of state and 18 bytes per cache line) plus
/// the application's data from its parameters (`commlab_apps::data_bytes_estimate`). It counts
/// whole tag arrays, so it is an upper bound for small apps (untouched pages take no memory), and it is checked once, before anything is built.
pub fn check(app: &str, params: &[String], sim: &Simulator, max_memory: Option<u64>) -> Result<(), Failure> {
    let machine = sim.machine_bytes_estimate();
    let nprocs = sim.config().nprocs();
    let data = commlab_apps::data_bytes_estimate(app, params, nprocs).map_err(|e| input(e.to_string()))?;
    let need = machine.total().saturating_add(data);
    let (limit, what) = match max_memory {
        Some(m) => (m, format!("the --max-memory limit of {}", show_bytes(m))),
        None => match available_memory() {
            Some(m) => (m, format!("the {} of memory available", show_bytes(m))),
            None => return check_mappings(app, nprocs, max_map_count()),
        },
    };
    if need <= limit {
        return check_mappings(app, nprocs, max_map_count());
    }
    // Name the input that weighs most.
    let cause = if data >= machine.caches && data >= machine.processors {
        let given = params.iter().map(|p| format!("--param {p}")).collect::<Vec<_>>();
        if given.is_empty() {
            "the application's default sizes".to_string()
        } else {
            given.join(" ")
        }
    } else if machine.caches >= machine.processors {
        format!("memory.cache_bytes = {} on each of {nprocs} processors", sim.config().spec.memory.cache_bytes)
    } else {
        format!("{nprocs} processors (40 KiB of stack and state each)")
    };
    Err(input(format!(
        "{} needs an estimated {} of memory, more than {what}: mostly from {cause} (processors {}, caches {}, application data {}); give smaller sizes{}",
        app,
        show_bytes(need),
        show_bytes(machine.processors),
        show_bytes(machine.caches),
        show_bytes(data),
        if max_memory.is_some() { " or raise --max-memory" } else { "" }
    )))
}

/// Memory mappings a simulated processor takes: its coroutine stack and the stack's guard page.
const MAPPINGS_PER_PROCESSOR: u64 = 2;
/// Mappings left for everything else in the process (binary, libraries, heap arenas, threads).
const MAPPINGS_RESERVED: u64 = 2048;

/// The most memory mappings a process may have (`vm.max_map_count`, Linux; None elsewhere).
fn max_map_count() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/vm/max_map_count").ok()?.trim().parse().ok()
}

/// How many runs of `nprocs` processors and this memory estimate fit at once, at most `jobs`
/// and at least 1 (the one run `check` admitted). `--jobs` is lowered rather than let runs in
/// parallel exhaust memory, or the process's memory mappings: each processor's stack is two
/// mappings, so two runs of 16384 processors would pass Linux's default limit of 65530 and fail
/// to allocate a stack though memory is free.
pub fn runs_that_fit(app: &str, params: &[String], sim: &Simulator, max_memory: Option<u64>, jobs: usize) -> usize {
    let nprocs = sim.config().nprocs();
    let data = commlab_apps::data_bytes_estimate(app, params, nprocs).unwrap_or(0);
    let need = sim.machine_bytes_estimate().total().saturating_add(data).max(1);
    let by_memory = max_memory.or_else(available_memory).map_or(usize::MAX, |limit| (limit / need) as usize);
    runs_by_mappings(nprocs, max_map_count()).min(by_memory).clamp(1, jobs.max(1))
}

/// Refuse (exit 2) a run with more processors than the process's memory mappings can give
/// stacks to, rather than fail building the machine with an allocation error.
fn check_mappings(app: &str, nprocs: usize, max_map_count: Option<u64>) -> Result<(), Failure> {
    if runs_by_mappings(nprocs, max_map_count) > 0 {
        return Ok(());
    }
    let limit = max_map_count.unwrap_or(0);
    let most = limit.saturating_sub(MAPPINGS_RESERVED) / MAPPINGS_PER_PROCESSOR;
    Err(input(format!(
        "{app} on {nprocs} processors needs {} memory mappings for their coroutine stacks (a stack and its guard page each), more than this host's limit of {limit} (vm.max_map_count) allows: use at most {most} processors, or raise the limit (sudo sysctl -w vm.max_map_count={})",
        (nprocs as u64).saturating_mul(MAPPINGS_PER_PROCESSOR),
        (nprocs as u64).saturating_mul(MAPPINGS_PER_PROCESSOR).saturating_add(MAPPINGS_RESERVED),
    )))
}

/// How many runs of `nprocs` processors the mapping limit admits at once (`usize::MAX` when
/// the limit is unknown).
pub fn runs_by_mappings(nprocs: usize, max_map_count: Option<u64>) -> usize {
    match max_map_count {
        Some(limit) => {
            let per_run = (nprocs as u64).saturating_mul(MAPPINGS_PER_PROCESSOR).max(1);
            (limit.saturating_sub(MAPPINGS_RESERVED) / per_run) as usize
        }
        None => usize::MAX,
    }
}

/// As [`runs_by_mappings`] with this host's limit (for sweeps, whose points differ in size).
pub fn runs_by_host_mappings(nprocs: usize) -> usize {
    runs_by_mappings(nprocs, max_map_count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_runs_of_16384_processors_exceed_the_default_mapping_limit() {
        // Regression: `run barrier --procs 16384 --variant all` ran both variants at once and
        // the second failed to allocate a coroutine stack.
        assert_eq!(runs_by_mappings(16384, Some(65530)), 1);
        assert_eq!(runs_by_mappings(1024, Some(65530)), 30);
        assert_eq!(runs_by_mappings(32, None), usize::MAX);
        assert_eq!(runs_by_mappings(40000, Some(65530)), 0);
    }

    #[test]
    fn a_run_beyond_the_mapping_limit_is_refused_naming_the_limit() {
        assert!(check_mappings("barrier", 31741, Some(65530)).is_ok(), "(65530 - 2048) / 2 = 31741 fit");
        let Err(err) = check_mappings("barrier", 31742, Some(65530)) else { panic!("31742 processors admitted") };
        assert_eq!(err.status, 2, "bad input");
        let text = err.message;
        assert!(
            text.contains("31742 processors") && text.contains("65530") && text.contains("at most 31741"),
            "{text}"
        );
        assert!(check_mappings("barrier", 1 << 20, None).is_ok(), "no known limit: nothing to refuse");
    }
}
