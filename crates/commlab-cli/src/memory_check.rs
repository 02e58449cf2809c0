//! The memory a run needs, estimated before it is built (`commlab run` and `commlab sweep`),
//! against `--max-memory` or the memory available: a clear refusal (exit 2, naming the input
//! that weighs most) instead of an allocation failure mid-run.
//!
//! The estimate is the process, the stacks in use, the cache tags
//! (`Simulator::machine_bytes_estimate`) and the app's data (`commlab_apps::data_bytes_estimate`),
//! for `run` (simulated or on the host) and every sweep point; the address space (whole stacks,
//! worker threads' arenas) is checked against what `RLIMIT_AS`/`RLIMIT_DATA` leave.
//!
//! The estimate errs high at every size measured (`tests/memory_estimate.rs`; one run, from 64 to
//! 16384 processors: barrier, em3d, iccg and moldyn peak at 16 to 80% of it, moldyn the closest:
//! 379 of 516 MiB at 4096 processors, 1.17 of 1.9 GiB at 16384; measured when the cache part
//! counted 18 bytes per way: it now counts the way record's 16, `commlab_sim::MachineBytes::caches`).

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

/// Memory of the process itself besides its runs: the binary's and libraries' touched pages
/// and the allocator's own (peak RSS of `run barrier --procs 64` is 11 MB; `em3d`, `iccg` and
/// `moldyn` at 64 processors 19 to 27 MB with their data); rounded up.
const PROCESS_BYTES: u64 = 32 << 20;
/// Address space each thread running a simulation adds: glibc reserves a 64 MiB heap arena for
/// a new thread (up to 8 per core) and the thread's 2 MiB stack.
const THREAD_ADDRESS_BYTES: u64 = 66 << 20;

/// What one run needs.
struct Need {
    /// Memory: the machine's state and the application's data.
    memory: u64,
    /// Address space: the memory, the whole coroutine stacks and the worker thread.
    address_space: u64,
    machine: commlab_sim::MachineBytes,
    data: u64,
}

fn need(app: &str, params: &[String], sim: &Simulator) -> Result<Need, Failure> {
    let machine = sim.machine_bytes_estimate();
    let data =
        commlab_apps::data_bytes_estimate(app, params, sim.config().nprocs()).map_err(|e| input(e.to_string()))?;
    let memory = machine.total().saturating_add(data);
    let address_space = memory.saturating_add(machine.stacks).saturating_add(THREAD_ADDRESS_BYTES);
    Ok(Need { memory, address_space, machine, data })
}

/// Address space this process may still map: the least of `RLIMIT_AS` less what is mapped
/// (`VmSize`) and `RLIMIT_DATA` less the data mapped (`VmData`), with the limits' values;
/// None when neither is set (or off Linux).
fn address_space_left() -> Option<(u64, u64)> {
    #[cfg(target_os = "linux")]
    {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let kib = |field: &str| -> Option<u64> {
            let line = status.lines().find(|l| l.starts_with(field))?;
            Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()?.saturating_mul(1024))
        };
        let limit = |resource| -> Option<u64> {
            let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
            // SAFETY: getrlimit writes the limit into `r`, a valid rlimit.
            let ok = unsafe { libc::getrlimit(resource, &mut r) } == 0;
            (ok && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
        };
        let by_as = limit(libc::RLIMIT_AS).map(|l| (l.saturating_sub(kib("VmSize:").unwrap_or(0)), l));
        let by_data = limit(libc::RLIMIT_DATA).map(|l| (l.saturating_sub(kib("VmData:").unwrap_or(0)), l));
        match (by_as, by_data) {
            (Some(a), Some(d)) => Some(if a.0 <= d.0 { a } else { d }),
            (a, d) => a.or(d),
        }
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// Refuse (exit 2) a run whose estimated memory exceeds `--max-memory` or, without it, the
/// memory available, or whose address space exceeds what this process's limit (`ulimit -v`)
/// leaves. The estimate is the process's own [`PROCESS_BYTES`], the machine's state
/// (`Simulator::machine_bytes_estimate`: per processor the 32 KiB of coroutine stack an
/// application may use, 8 KiB of state and 8 bytes per cache line, 16 in a set-associative
/// cache) and the application's data from its parameters (`commlab_apps::data_bytes_estimate`);
/// its address space adds the whole 260 KiB stacks and the worker thread. It counts whole tag
/// arrays and stacks, so it errs high (measured against peak RSS from 64 to 16384 processors),
/// and it is checked once, before anything is built.
pub fn check(app: &str, params: &[String], sim: &Simulator, max_memory: Option<u64>) -> Result<(), Failure> {
    let need = need(app, params, sim)?;
    let nprocs = sim.config().nprocs();
    let total = need.memory.saturating_add(PROCESS_BYTES);
    let limit = match max_memory {
        Some(m) => Some((m, format!("the --max-memory limit of {}", show_bytes(m)))),
        None => available_memory().map(|m| (m, format!("the {} of memory available", show_bytes(m)))),
    };
    if let Some((_, what)) = limit.filter(|(l, _)| total > *l) {
        let (machine, data) = (need.machine, need.data);
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
        return Err(input(format!(
            "{} needs an estimated {} of memory, more than {what}: mostly from {cause} (processors {}, caches {}, application data {}, the process {}); give smaller sizes{}",
            app,
            show_bytes(total),
            show_bytes(machine.processors),
            show_bytes(machine.caches),
            show_bytes(data),
            show_bytes(PROCESS_BYTES),
            if max_memory.is_some() { " or raise --max-memory" } else { "" }
        )));
    }
    if let Some((left, limit)) = address_space_left() {
        if need.address_space > left {
            return Err(input(format!(
                "{app} on {nprocs} processors needs an estimated {} of address space ({nprocs} coroutine stacks of {} KiB reserve {}, and {} of memory), more than the {} this process's address-space limit of {} (ulimit -v) leaves; give fewer processors or smaller sizes, or raise the limit",
                show_bytes(need.address_space),
                (commlab_sim::STACK_BYTES + 4096) / 1024,
                show_bytes(need.machine.stacks),
                show_bytes(need.memory),
                show_bytes(left),
                show_bytes(limit),
            )));
        }
    }
    check_mappings(app, nprocs, max_map_count())
}

/// Memory of one processor of a native run (`run --machine host`): its thread, inbox, message
/// buffer pools and arena share (`am-latency` on 100 and 400 threads peaked at 8.4 MB per
/// thread); rounded up.
const NATIVE_BYTES_PER_PROC: u64 = 10 << 20;
/// Address space of a native processor besides that: its 2 MiB thread stack and guard page.
const NATIVE_STACK_BYTES: u64 = (2 << 20) + 4096;
/// glibc's heap arenas: at most 8 per core, 64 MiB of address space each.
const ARENA_BYTES: u64 = 64 << 20;

/// As [`check`] for a native run of `app` on `procs` threads of a host with `cores` cores:
/// refuse (exit 2) one that would not fit in the memory available or in the address space left
/// (1000 threads under `ulimit -v 6000000` aborted at 4.2 GB).
pub fn check_native(app: &str, params: &[String], procs: usize, cores: usize) -> Result<(), Failure> {
    let data = commlab_apps::data_bytes_estimate(app, params, procs).map_err(|e| input(e.to_string()))?;
    let n = procs as u64;
    let memory = n.saturating_mul(NATIVE_BYTES_PER_PROC).saturating_add(data).saturating_add(PROCESS_BYTES);
    let arenas = n.min(8 * cores.max(1) as u64).saturating_mul(ARENA_BYTES);
    let address_space = memory.saturating_add(n.saturating_mul(NATIVE_STACK_BYTES)).saturating_add(arenas);
    if let Some(avail) = available_memory().filter(|a| memory > *a) {
        return Err(input(format!(
            "{app} on {procs} host threads needs an estimated {} of memory ({} per thread, application data {}), more than the {} available; give fewer --procs",
            show_bytes(memory),
            show_bytes(NATIVE_BYTES_PER_PROC),
            show_bytes(data),
            show_bytes(avail)
        )));
    }
    if let Some((left, limit)) = address_space_left().filter(|(left, _)| address_space > *left) {
        return Err(input(format!(
            "{app} on {procs} host threads needs an estimated {} of address space (a 2 MiB stack and {} of memory per thread, allocator arenas {}), more than the {} this process's address-space limit of {} (ulimit -v) leaves; give fewer --procs, or raise the limit",
            show_bytes(address_space),
            show_bytes(NATIVE_BYTES_PER_PROC),
            show_bytes(arenas),
            show_bytes(left),
            show_bytes(limit)
        )));
    }
    crate::alloc_failure::running(&format!(
        "{app} on {procs} host threads (estimated {} of memory)",
        show_bytes(memory)
    ));
    Ok(())
}

/// The estimate of one run as words, for the message of an allocation that fails anyway.
pub fn describe(app: &str, params: &[String], sim: &Simulator) -> String {
    match need(app, params, sim) {
        Ok(n) => format!(
            "{app} on {} processors (estimated {} of memory)",
            sim.config().nprocs(),
            show_bytes(n.memory.saturating_add(PROCESS_BYTES))
        ),
        Err(_) => format!("{app} on {} processors", sim.config().nprocs()),
    }
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
    let Ok(need) = need(app, params, sim) else { return 1 };
    let by_memory = max_memory
        .or_else(available_memory)
        .map_or(usize::MAX, |limit| (limit.saturating_sub(PROCESS_BYTES) / need.memory.max(1)) as usize);
    let by_address_space =
        address_space_left().map_or(usize::MAX, |(left, _)| (left / need.address_space.max(1)) as usize);
    runs_by_mappings(nprocs, max_map_count()).min(by_memory).min(by_address_space).clamp(1, jobs.max(1))
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
