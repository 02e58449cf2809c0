//! [`MachineConfig::from_spec`]: a spec checked and converted into simulator units, part by part
//! (every error names its key); loading a preset or file with overrides and a processor count;
//! resizing a spec's network.

use super::config::*;
use super::error::ConfigError;
use super::overrides::parse_spec;
use super::poll::{PollCosts, PollMechanism};
use super::presets::{preset_names, preset_text};
use super::spec::{self, keys, Bound, Conv, HierarchySpec, KeyDoc, MachineSpec, MemorySpec};
use crate::queue::TieOrder;
use crate::topology::{resize, Topology, TopologyKind};

fn topology_kind(n: &spec::NetworkSpec) -> Result<TopologyKind, ConfigError> {
    let need_dims = |want: Option<usize>| -> Result<(), ConfigError> {
        if n.dims.is_empty() || n.dims.contains(&0) || want.is_some_and(|w| n.dims.len() != w) {
            let shape = want.map_or("one or more".to_string(), |w| w.to_string());
            return Err(ConfigError::key(
                "network.dims",
                format!("{} needs {shape} positive sizes, got {:?}", n.topology, n.dims),
            ));
        }
        Ok(())
    };
    let need_nprocs = || -> Result<usize, ConfigError> {
        if n.nprocs == 0 {
            return Err(ConfigError::key("network.nprocs", format!("{} needs nprocs >= 1", n.topology)));
        }
        Ok(n.nprocs)
    };
    if n.procs_per_router != 1 && n.topology != "torus" {
        return Err(ConfigError::key(
            "network.procs_per_router",
            format!(
                "only a torus shares routers between processors; {} has one per router (leave it at 1)",
                n.topology
            ),
        ));
    }
    Ok(match n.topology.as_str() {
        "mesh" => {
            need_dims(Some(2))?;
            TopologyKind::Mesh { dims: [n.dims[0], n.dims[1]], io_nodes: n.io_nodes }
        }
        "torus" => {
            need_dims(None)?;
            if n.procs_per_router == 0 {
                return Err(ConfigError::key("network.procs_per_router", "must be at least 1, got 0"));
            }
            TopologyKind::Torus { dims: n.dims.clone(), procs_per_router: n.procs_per_router }
        }
        "fat-tree" => {
            if n.arity < 2 {
                return Err(ConfigError::key("network.arity", format!("must be at least 2, got {}", n.arity)));
            }
            TopologyKind::FatTree { arity: n.arity, nprocs: need_nprocs()? }
        }
        "hypercube" => {
            let p = need_nprocs()?;
            if !p.is_power_of_two() {
                return Err(ConfigError::key("network.nprocs", format!("a hypercube needs a power of two, got {p}")));
            }
            TopologyKind::Hypercube { dim: p.trailing_zeros() as usize }
        }
        "ring" => TopologyKind::Ring { nprocs: need_nprocs()? },
        "crossbar" => TopologyKind::Crossbar { nprocs: need_nprocs()? },
        other => {
            return Err(ConfigError::key(
                "network.topology",
                format!("unknown topology `{other}` (valid: mesh, torus, fat-tree, hypercube, ring, crossbar)"),
            ))
        }
    })
}

/// The network overflow trap's costs, when `messaging.overflow_timeout_cycles` turns it on
/// (each of them is then required, naming the first missing one); `None` when it is off.
fn overflow_costs(
    m: &spec::MessagingSpec,
    scaled: &dyn Fn(u64) -> u64,
    cycle_ps: f64,
) -> Result<Option<OverflowCosts>, ConfigError> {
    if m.overflow_timeout_cycles == 0 {
        return Ok(None);
    }
    let need = |key: &str, v: Option<u64>| {
        v.map(scaled).ok_or_else(|| {
            ConfigError::key(
                &format!("messaging.{key}"),
                format!(
                    "the network overflow trap is on (messaging.overflow_timeout_cycles = {}) and needs this cost; \
                     give it, e.g. --set messaging.{key}=10, or turn the trap off with messaging.overflow_timeout_cycles=0",
                    m.overflow_timeout_cycles
                ),
            )
        })
    };
    Ok(Some(OverflowCosts {
        timeout_ps: cycles_to_ps(cycle_ps, m.overflow_timeout_cycles as f64),
        entry_ps: need("overflow_trap_entry_cycles", m.overflow_trap_entry_cycles)?,
        drain_per_message_ps: need("overflow_drain_per_message_cycles", m.overflow_drain_per_message_cycles)?,
        drain_per_word_ps: need("overflow_drain_per_word_cycles", m.overflow_drain_per_word_cycles)?,
        exit_ps: need("overflow_trap_exit_cycles", m.overflow_trap_exit_cycles)?,
        dispatch_ps: need("overflow_dispatch_cycles", m.overflow_dispatch_cycles)?,
    }))
}

/// Check every key's [`Bound`] as declared in [`keys`] (keys of absent sections are not
/// checked): a positive key must be a finite number above zero, an `at_least` key at least its
/// minimum. The first key out of range, in the TOML's order, is named.
fn check_bounds(spec: &MachineSpec) -> Result<(), ConfigError> {
    for (key, v, k) in key_values(spec) {
        match k.bound {
            Bound::Any => {}
            Bound::Positive => {
                let x = v.as_float().or_else(|| v.as_integer().map(|i| i as f64)).unwrap_or(f64::NAN);
                if !(x.is_finite() && x > 0.0) {
                    return Err(ConfigError::key(&key, format!("must be a positive number, got {x:?}")));
                }
            }
            Bound::AtLeast(min) => {
                let n = v.as_integer().unwrap_or(0);
                if n < 0 || (n as u64) < min {
                    return Err(ConfigError::key(&key, format!("must be at least {min}, got {n}")));
                }
            }
        }
    }
    Ok(())
}

fn ns_to_ps(key: &str, ns: f64) -> Result<u64, ConfigError> {
    if !ns.is_finite() || ns < 0.0 {
        return Err(ConfigError::key(key, format!("must be a non-negative number, got {ns}")));
    }
    Ok((ns * 1000.0).round() as u64)
}

/// Check `[hierarchy]` and convert it (the coherent cache is `memory.*`, already checked).
fn hierarchy_config(h: &HierarchySpec, mem: &MemorySpec, cycle_ps: f64) -> Result<HierarchyConfig, ConfigError> {
    let ps = |cycles: u64| cycles_to_ps(cycle_ps, cycles as f64);
    let per_byte = |bpc: f64| cycle_ps / bpc;
    if h.l2.is_some() && h.l1.is_none() {
        return Err(ConfigError::key("hierarchy.l2", "needs hierarchy.l1 (l1 is the innermost level)"));
    }
    let mut levels = [LevelConfig::default(); 3];
    let mut inner = 0;
    for (name, level) in [("l1", &h.l1), ("l2", &h.l2)] {
        let Some(l) = level else { continue };
        let key = |k: &str| format!("hierarchy.{name}.{k}");
        if l.line_bytes < 8 || !l.line_bytes.is_power_of_two() || l.line_bytes > mem.line_bytes {
            return Err(ConfigError::key(
                &key("line_bytes"),
                format!(
                    "must be a power of two from 8 to memory.line_bytes ({}), got {}",
                    mem.line_bytes, l.line_bytes
                ),
            ));
        }
        if inner > 0 && l.line_bytes < levels[inner - 1].line_bytes {
            return Err(ConfigError::key(&key("line_bytes"), "must be at least the inner level's line"));
        }
        let set = l.line_bytes * l.associativity;
        if l.bytes < set || !l.bytes.is_multiple_of(set) {
            return Err(ConfigError::key(
                &key("bytes"),
                format!("must be a whole number of sets (line_bytes x associativity = {set} bytes), got {}", l.bytes),
            ));
        }
        levels[inner] = LevelConfig {
            lines: l.bytes / l.line_bytes,
            line_bytes: l.line_bytes,
            ways: l.associativity as usize,
            hit_ps: ps(l.hit_cycles),
            ps_per_byte: per_byte(l.bytes_per_cycle),
        };
        inner += 1;
    }
    levels[inner] = LevelConfig {
        lines: mem.cache_bytes / mem.line_bytes,
        line_bytes: mem.line_bytes,
        ways: mem.associativity as usize,
        hit_ps: ps(mem.hit_cycles),
        ps_per_byte: per_byte(h.cache_bytes_per_cycle),
    };
    let d = &h.dram;
    if d.interleave_bytes < 8 || !d.interleave_bytes.is_power_of_two() {
        return Err(ConfigError::key(
            "hierarchy.dram.interleave_bytes",
            format!("must be a power of two >= 8, got {}", d.interleave_bytes),
        ));
    }
    if d.bus_coherent && !d.shared {
        return Err(ConfigError::key(
            "hierarchy.dram.bus_coherent",
            "needs hierarchy.dram.shared = true (one memory bus for every processor)".to_string(),
        ));
    }
    let dram = DramConfig {
        banks: d.banks,
        interleave_bytes: d.interleave_bytes,
        bank_busy_ps: ps(d.bank_busy_cycles),
        latency_ps: ps(mem.local_miss_cycles),
        ps_per_byte: per_byte(d.bytes_per_cycle),
        shared: d.shared,
        bus_coherent: d.bus_coherent,
    };
    let stream = h.stream.as_ref().map(|s| StreamConfig {
        buffers: s.buffers as usize,
        depth: s.depth as usize,
        hit_ps: ps(s.hit_cycles),
    });
    let write_buffer = match &h.write_buffer {
        None => None,
        Some(w) => {
            let block = w.block_bytes;
            if block < 8 || !block.is_power_of_two() || block > levels[0].line_bytes {
                return Err(ConfigError::key(
                    "hierarchy.write_buffer.block_bytes",
                    format!(
                        "must be a power of two from 8 to the innermost cache's line ({}), got {block}",
                        levels[0].line_bytes
                    ),
                ));
            }
            Some(WriteBufferConfig { entries: w.entries as usize, block_bytes: block })
        }
    };
    // A loop holds at most this many loads ahead of their uses (its unrolling); the pending
    // reads are kept per processor, so an unbounded value would grow them without end.
    const MAX_LOADS_BEFORE_USE: u64 = 1024;
    if let Some(u) = h.loads_before_use.filter(|&u| u > MAX_LOADS_BEFORE_USE) {
        return Err(ConfigError::key(
            "hierarchy.loads_before_use",
            format!("must be at most {MAX_LOADS_BEFORE_USE} (the reads a loop issues ahead of their uses), got {u}"),
        ));
    }
    if let Some(pb) = h.page_bytes {
        if !pb.is_power_of_two() || pb < mem.line_bytes {
            return Err(ConfigError::key(
                "hierarchy.page_bytes",
                format!("must be a power of two of at least memory.line_bytes ({}), got {pb}", mem.line_bytes),
            ));
        }
    }
    Ok(HierarchyConfig {
        outstanding_misses: h.outstanding_misses as usize,
        loads_before_use: h.loads_before_use.unwrap_or(0) as usize,
        inner,
        levels,
        dram,
        stream,
        write_buffer,
        page_bytes: h.page_bytes,
    })
}

/// Every key a spec has, with its value and conversion, in the key table's order (each
/// `costs.NAME` as itself).
fn key_values(spec: &MachineSpec) -> Vec<(String, toml::Value, &'static KeyDoc)> {
    let table = toml::Table::try_from(spec).expect("a spec serializes");
    let mut out = Vec::new();
    for k in keys() {
        let mut parts = k.key.split('.');
        let first = parts.next().and_then(|p| table.get(p));
        let Some(v) = parts.try_fold(first, |v, part| Some(v?.get(part))).flatten() else {
            if let Some(section) = k.key.strip_suffix(".*") {
                if let Some(t) = table.get(section).and_then(toml::Value::as_table) {
                    out.extend(t.iter().map(|(name, v)| (format!("{section}.{name}"), v.clone(), k)));
                }
            }
            continue;
        };
        out.push((k.key.to_string(), v.clone(), k));
    }
    out
}

/// Every time a machine key implies must fit the simulated-time limit (so no conversion to
/// picoseconds saturates or overflows, and a value is never silently lost): each latency in
/// ns, each cost in cycles (send and receive overheads as scaled), the serialization of the
/// largest packet, a DMA transfer of it, and a software-DSM block copy. The error names the key
/// and the largest (or smallest) value accepted.
fn check_times_fit(spec: &MachineSpec, cycle_ps: f64, max_time_ps: f64) -> Result<(), ConfigError> {
    let limit = format!("limits.max_sim_time_ms = {}", spec.limits.max_sim_time_ms);
    let show = |v: f64| if v != 0.0 && !(1e-3..1e9).contains(&v.abs()) { format!("{v:e}") } else { format!("{v}") };
    let too_large = |key: &str, value: f64, largest: f64| {
        ConfigError::key(
            key,
            format!(
                "{} outlasts the simulated-time limit ({limit}); the largest accepted value is {largest:.0}",
                show(value)
            ),
        )
    };
    if cycle_ps < 1.0 {
        return Err(ConfigError::key(
            "processor.clock_mhz",
            format!("must be at most 1000000 (a cycle of at least 1 ps), got {}", show(spec.processor.clock_mhz)),
        ));
    }
    // The clock first: every cost in cycles depends on it, so a clock too slow for even one
    // cycle is the clock's fault, not the first cost's.
    if cycle_ps > max_time_ps {
        return Err(ConfigError::key(
            "processor.clock_mhz",
            format!(
                "must be at least {} (one cycle within {limit}), got {}",
                show(1e6 / max_time_ps),
                show(spec.processor.clock_mhz)
            ),
        ));
    }
    for (key, ns, k) in key_values(spec) {
        let ns = ns.as_float().unwrap_or(0.0);
        if k.conv == Conv::Ns && ns * 1000.0 > max_time_ps {
            return Err(too_large(&key, ns, (max_time_ps / 1000.0).floor()));
        }
    }
    let n = &spec.network;
    let packet_bytes = (n.header_bytes as f64) + n.max_packet_payload_bytes as f64;
    let too_slow = |key: &str, value: f64, smallest: f64| {
        ConfigError::key(
            key,
            format!(
                "{} makes one transfer outlast the simulated-time limit ({limit}); the smallest accepted value is {smallest:e}",
                show(value)
            ),
        )
    };
    if packet_bytes * 1000.0 / n.link_bytes_per_ns > max_time_ps {
        return Err(too_slow("network.link_bytes_per_ns", n.link_bytes_per_ns, packet_bytes * 1000.0 / max_time_ps));
    }
    let per_cycle_limit = max_time_ps / cycle_ps;
    let m = &spec.messaging;
    if n.max_packet_payload_bytes as f64 / m.dma_bytes_per_cycle > per_cycle_limit {
        let smallest = n.max_packet_payload_bytes as f64 / per_cycle_limit;
        return Err(too_slow("messaging.dma_bytes_per_cycle", m.dma_bytes_per_cycle, smallest));
    }
    if let Some(d) = &spec.dsm {
        if spec.memory.line_bytes as f64 / d.copy_bytes_per_cycle > per_cycle_limit {
            let smallest = spec.memory.line_bytes as f64 / per_cycle_limit;
            return Err(too_slow("dsm.copy_bytes_per_cycle", d.copy_bytes_per_cycle, smallest));
        }
    }
    // Every key in cycles, as declared in the key table (overheads as scaled).
    for (key, cycles, k) in key_values(spec) {
        let Some(cycles) = cycles.as_integer() else { continue };
        let factor = match k.conv {
            Conv::Overhead => m.overhead_scale,
            Conv::Cycles => 1.0,
            _ => continue,
        };
        if cycles as f64 * factor > per_cycle_limit {
            return Err(too_large(&key, cycles as f64, (per_cycle_limit / factor).floor()));
        }
    }
    Ok(())
}

/// The cross-traffic keys checked against each other and the topology; its arbitration.
fn cross_traffic_arbitration(spec: &MachineSpec, topology: &Topology) -> Result<CrossArbitration, ConfigError> {
    let n = &spec.network;
    let ct = &spec.cross_traffic;
    if !ct.rate_bytes_per_cycle.is_finite() || ct.rate_bytes_per_cycle < 0.0 {
        return Err(ConfigError::key(
            "cross_traffic.rate_bytes_per_cycle",
            format!("must be >= 0, got {}", ct.rate_bytes_per_cycle),
        ));
    }
    if ct.rate_bytes_per_cycle > 0.0 && topology.io_pairs().is_empty() {
        return Err(ConfigError::key(
            "cross_traffic.rate_bytes_per_cycle",
            "cross-traffic needs I/O nodes: set network.topology = \"mesh\" and network.io_nodes = true",
        ));
    }
    let cross_traffic_arbitration = match ct.arbitration.as_str() {
        "fifo" => CrossArbitration::Fifo,
        "priority" => CrossArbitration::Priority,
        other => {
            return Err(ConfigError::key(
                "cross_traffic.arbitration",
                format!("must be \"fifo\" or \"priority\", got \"{other}\""),
            ))
        }
    };
    if ct.message_bytes <= n.header_bytes {
        return Err(ConfigError::key(
            "cross_traffic.message_bytes",
            format!("must exceed network.header_bytes ({}), got {}", n.header_bytes, ct.message_bytes),
        ));
    }
    Ok(cross_traffic_arbitration)
}

/// The cache's geometry checked (a power-of-two line, whole sets, snooping only in hardware);
/// its number of lines.
fn check_cache(spec: &MachineSpec) -> Result<u64, ConfigError> {
    let mem = &spec.memory;
    if mem.line_bytes < 8 || !mem.line_bytes.is_power_of_two() {
        return Err(ConfigError::key(
            "memory.line_bytes",
            format!("must be a power of two >= 8, got {}", mem.line_bytes),
        ));
    }
    // A line larger than a set's share of the cache is the line's fault.
    if mem.line_bytes.saturating_mul(mem.associativity) > mem.cache_bytes {
        return Err(ConfigError::key(
            "memory.line_bytes",
            format!(
                "must be at most memory.cache_bytes / memory.associativity ({}), got {}",
                mem.cache_bytes / mem.associativity,
                mem.line_bytes
            ),
        ));
    }
    let cache_lines = mem.cache_bytes / mem.line_bytes;
    if cache_lines < mem.associativity || !mem.cache_bytes.is_multiple_of(mem.line_bytes * mem.associativity) {
        return Err(ConfigError::key(
            "memory.cache_bytes",
            format!(
                "must be a whole number of sets (line_bytes x associativity = {} bytes), got {}",
                mem.line_bytes * mem.associativity,
                mem.cache_bytes
            ),
        ));
    }
    if mem.snooping && mem.model != "hardware" {
        return Err(ConfigError::key(
            "memory.snooping",
            "a snooping bus is hardware coherence; it needs memory.model = \"hardware\"",
        ));
    }
    Ok(cache_lines)
}

/// Whether nodes are SMPs (a compute and a protocol processor), and the cost of the access-tag
/// lock their software DSM takes.
fn node_kind(spec: &MachineSpec) -> Result<(bool, u64), ConfigError> {
    let mem = &spec.memory;
    let (smp_nodes, tag_lock_cycles) = match &spec.node {
        None => (false, 0),
        Some(nd) => {
            if !(1..=2).contains(&nd.procs_per_node) {
                return Err(ConfigError::key(
                    "node.procs_per_node",
                    format!(
                        "must be 1 or 2 (2: a compute processor and a protocol processor), got {}",
                        nd.procs_per_node
                    ),
                ));
            }
            let smp = nd.procs_per_node == 2;
            match (smp, nd.tag_lock_cycles, mem.model.as_str()) {
                (true, None, "software") => {
                    return Err(ConfigError::key(
                        "node.tag_lock_cycles",
                        "an SMP node of a software-DSM machine takes a lock around each access-tag change; \
                         give its cost, e.g. --set node.tag_lock_cycles=20",
                    ))
                }
                // Inert on a one-processor node, as messaging.poll_mechanism: a preset of
                // SMP nodes runs on one-processor nodes with only node.procs_per_node = 1.
                (false, Some(_), _) => (false, 0),
                (true, Some(_), model) if model != "software" => {
                    return Err(ConfigError::key(
                        "node.tag_lock_cycles",
                        "locks access tags, which only a software-DSM machine (memory.model = \"software\") has",
                    ))
                }
                (_, lock, _) => (smp, lock.unwrap_or(0)),
            }
        }
    };
    Ok((smp_nodes, tag_lock_cycles))
}

/// A software-DSM machine's `[dsm]` section checked: the section, its instrumentation level and
/// who runs its handlers (`None` on a hardware-coherent machine).
fn software_dsm(
    spec: &MachineSpec,
    smp_nodes: bool,
) -> Result<Option<(&spec::DsmSpec, Instrumentation, DsmHandlers)>, ConfigError> {
    let mem = &spec.memory;
    let software = match (mem.model.as_str(), &spec.dsm) {
        ("hardware", _) => None,
        ("software", None) => {
            return Err(ConfigError::key(
                "memory.model",
                "\"software\" needs a [dsm] section with the software protocol's costs",
            ))
        }
        ("software", Some(d)) => {
            let handlers = match d.handlers.as_str() {
                "compute" => DsmHandlers::Compute,
                "protocol-processor" => DsmHandlers::ProtocolProcessor,
                other => {
                    return Err(ConfigError::key(
                        "dsm.handlers",
                        format!("must be compute or protocol-processor, got `{other}`"),
                    ))
                }
            };
            let levels = "none (hardware access control), no-opt, cc-reg, slice or sentinel";
            let Some(level) = d.instrumentation.as_deref() else {
                return Err(ConfigError::key(
                    "dsm.instrumentation",
                    format!("is required on a software-DSM machine: {levels}"),
                ));
            };
            let Some(level) = Instrumentation::parse(level) else {
                return Err(ConfigError::key("dsm.instrumentation", format!("must be {levels}, got `{level}`")));
            };
            if level == Instrumentation::None && (d.load_check_cycles.is_some() || d.store_check_cycles.is_some()) {
                return Err(ConfigError::key(
                    "dsm.load_check_cycles",
                    "dsm.instrumentation = none inserts no checks: give a level to charge checks",
                ));
            }
            if d.tag_granule_bytes < 8 || !d.tag_granule_bytes.is_power_of_two() || d.tag_granule_bytes > mem.line_bytes
            {
                return Err(ConfigError::key(
                    "dsm.tag_granule_bytes",
                    format!(
                        "must be a power of two from 8 to memory.line_bytes ({}), got {}",
                        mem.line_bytes, d.tag_granule_bytes
                    ),
                ));
            }
            let page_keys = [d.protect_cycles, d.protect_saving_cycles, d.emulated_write_cycles];
            match d.page_bytes {
                None if page_keys.iter().any(Option::is_some) => {
                    return Err(ConfigError::key(
                        "dsm.page_bytes",
                        "dsm.protect_cycles, dsm.protect_saving_cycles and dsm.emulated_write_cycles need a page size",
                    ))
                }
                Some(_) if page_keys.iter().any(Option::is_none) => return Err(ConfigError::key(
                    "dsm.page_bytes",
                    "page protection needs dsm.protect_cycles, dsm.protect_saving_cycles and dsm.emulated_write_cycles",
                )),
                Some(b) if b < 8 || !b.is_power_of_two() => {
                    return Err(ConfigError::key(
                        "dsm.page_bytes",
                        format!("must be a power of two of at least 8, got {b}"),
                    ))
                }
                _ => {}
            }
            // An SMP node's second processor runs the protocol, whatever `dsm.handlers` says.
            Some((d, level, if smp_nodes { DsmHandlers::ProtocolProcessor } else { handlers }))
        }
        (other, _) => {
            return Err(ConfigError::key("memory.model", format!("must be hardware or software, got `{other}`")))
        }
    };
    Ok(software)
}

/// The messaging costs (send and receive overheads scaled by `messaging.overhead_scale`).
fn messaging_costs(
    m: &spec::MessagingSpec,
    scaled: &dyn Fn(u64) -> u64,
    cycle_ps: f64,
    smp_nodes: bool,
) -> Result<MessagingCosts, ConfigError> {
    let ps = |cycles: u64| cycles_to_ps(cycle_ps, cycles as f64);
    let msg = MessagingCosts {
        send_overhead_ps: scaled(m.send_overhead_cycles),
        send_per_arg_word_ps: scaled(m.send_per_arg_word_cycles),
        max_arg_words: m.max_arg_words,
        interrupt_entry_ps: scaled(m.interrupt_entry_cycles),
        interrupt_exit_ps: scaled(m.interrupt_exit_cycles),
        interrupt_look_ps: scaled(m.interrupt_look_cycles),
        receive_per_arg_word_ps: scaled(m.receive_per_arg_word_cycles),
        poll_ps: scaled(m.poll_cycles),
        poll_dispatch_ps: scaled(m.poll_dispatch_cycles),
        dma_setup_ps: ps(m.dma_setup_cycles),
        dma_per_region_ps: ps(m.dma_per_region_cycles),
        dma_ps_per_byte: cycle_ps / m.dma_bytes_per_cycle,
        dma_align_bytes: m.dma_align_bytes,
        barrier_arity: m.barrier_arity,
        barrier_handler_ps: ps(m.barrier_handler_cycles),
        barrier_wait_interrupts: m.barrier_wait_interrupts,
        flow_window_messages: m.flow_window_messages,
        flow_buffer_ps: ps(m.flow_buffer_cycles),
        backedge_interval_ps: ps(m.backedge_interval_cycles),
        overflow: overflow_costs(m, scaled, cycle_ps)?,
    };
    if m.backedge_interval_cycles > 0 && smp_nodes {
        return Err(ConfigError::key(
            "messaging.backedge_interval_cycles",
            "an SMP node's protocol processor takes its messages, so its compute processor does not poll at \
             back-edges; use one or the other (node.procs_per_node = 1 for back-edge polling)",
        ));
    }
    Ok(msg)
}

/// The polling mechanism of an SMP node's protocol processor (`None` without one, or on
/// one-processor nodes, where the key is inert).
fn poll_costs(
    m: &spec::MessagingSpec,
    scaled: &dyn Fn(u64) -> u64,
    smp_nodes: bool,
) -> Result<Option<PollCosts>, ConfigError> {
    let poll = match m.poll_mechanism.as_deref().map(|s| (s, PollMechanism::parse(s))) {
        None | Some((_, Some(None))) => None,
        Some((other, None)) => {
            return Err(ConfigError::key(
                "messaging.poll_mechanism",
                format!("must be none, lanai, dma, interrupt or typhoon0, got `{other}`"),
            ))
        }
        Some((_, Some(Some(mechanism)))) => {
            let Some(receive) = m.poll_receive_cycles else {
                return Err(ConfigError::key(
                    "messaging.poll_receive_cycles",
                    "is required with messaging.poll_mechanism: the protocol thread's receive path after its poll sees a message",
                ));
            };
            // Inert on a one-processor node (its messages interrupt, or wait for a back-edge).
            smp_nodes.then(|| {
                let mut pc = PollCosts::new(mechanism, scaled(receive));
                if let Some(seen) = m.poll_seen_cycles {
                    pc.seen_ps = scaled(seen);
                    if !pc.burst {
                        pc.seen_in_burst_ps = scaled(seen);
                    }
                }
                pc
            })
        }
    };
    Ok(poll)
}

/// The memory system's times in picoseconds, with its hierarchy.
fn memory_config(
    spec: &MachineSpec,
    cache_lines: u64,
    msg: &MessagingCosts,
    cycle_ps: f64,
) -> Result<MemoryConfig, ConfigError> {
    let mem = &spec.memory;
    let ps = |cycles: u64| cycles_to_ps(cycle_ps, cycles as f64);
    let memory = MemoryConfig {
        line_bytes: mem.line_bytes,
        cache_lines,
        associativity: mem.associativity,
        hw_pointers: mem.hw_pointers as usize,
        prefetch_buffer_entries: mem.prefetch_buffer_entries as usize,
        barrier_arity: mem.barrier_arity as usize,
        hit_ps: ps(mem.hit_cycles),
        max_run_ahead_ps: ps(mem.max_run_ahead_cycles),
        prefetch_issue_ps: ps(mem.prefetch_issue_cycles),
        rmw_ps: ps(mem.rmw_cycles),
        lock_overhead_ps: ps(mem.lock_overhead_cycles),
        local_memory_ps: ps(mem.local_miss_cycles.saturating_sub(mem.fill_cycles)),
        miss_issue_ps: ps(mem.miss_issue_cycles + mem.remote_miss_delay_cycles),
        fill_ps: ps(mem.fill_cycles),
        dir_ps: ps(mem.dir_cycles),
        dir_occupancy_ps: ps(mem.dir_occupancy_cycles),
        home_cache_ps: ps(mem.home_cache_cycles),
        owner_ps: ps(mem.owner_cycles),
        forward_reply_ps: ps(mem.forward_reply_cycles),
        snooping: mem.snooping,
        inv_send_ps: ps(mem.inv_send_cycles),
        ack_ps: ps(mem.ack_cycles),
        sw_read_ps: ps(mem.sw_read_cycles),
        sw_write_ps: ps(mem.sw_write_cycles),
        trap_entry_ps: msg.interrupt_entry_ps,
        hierarchy: match &spec.hierarchy {
            None => None,
            Some(h) => Some(hierarchy_config(h, mem, cycle_ps)?),
        },
    };
    Ok(memory)
}

/// Hardware coherence, or the software DSM's costs in picoseconds.
fn coherence_model(
    spec: &MachineSpec,
    software: Option<(&spec::DsmSpec, Instrumentation, DsmHandlers)>,
    tag_lock_cycles: u64,
    msg: &MessagingCosts,
    cycle_ps: f64,
) -> Coherence {
    let mem = &spec.memory;
    let ps = |cycles: u64| cycles_to_ps(cycle_ps, cycles as f64);
    match software {
        None => Coherence::Hardware,
        Some((d, instrumentation, handlers)) => {
            let granules = mem.line_bytes / d.tag_granule_bytes;
            let (load_check, store_check) = instrumentation.check_cycles();
            let check_ps = |key: Option<u64>, level: f64| cycles_to_ps(cycle_ps, key.map_or(level, |c| c as f64));
            Coherence::Software(DsmCosts {
                handlers,
                instrumentation,
                load_check_ps: check_ps(d.load_check_cycles, load_check),
                store_check_ps: check_ps(d.store_check_cycles, store_check),
                miss_trap_ps: ps(d.miss_trap_cycles),
                upgrade_fault_ps: ps(d.upgrade_fault_cycles),
                resume_ps: ps(d.resume_cycles),
                handler_ps: ps(d.handler_cycles),
                copy_block_ps: cycles_to_ps(cycle_ps, mem.line_bytes as f64 / d.copy_bytes_per_cycle),
                // Every tag change on an SMP node is made under the node's tag lock (its
                // base part: once per block, however many granules it sets).
                tag_valid_base_ps: ps(d.tag_valid_cycles + tag_lock_cycles),
                tag_valid_ps: ps(d.tag_valid_cycles + granules * d.tag_valid_per_granule_cycles + tag_lock_cycles),
                tag_invalidate_ps: ps(d.tag_invalidate_cycles
                    + d.ecc_stop_cycles.unwrap_or(0)
                    + granules * d.tag_invalidate_per_granule_cycles
                    + tag_lock_cycles),
                tag_invalidate_base_ps: ps(d.tag_invalidate_cycles + d.ecc_stop_cycles.unwrap_or(0) + tag_lock_cycles),
                pages: d.page_bytes.map(|page| PageCosts {
                    // A block larger than a page protects its pages together (one group).
                    lines_shift: (page / mem.line_bytes).max(1).trailing_zeros(),
                    protect_ps: ps(d.protect_cycles.unwrap_or(0)),
                    saving_ps: ps(d.protect_saving_cycles.unwrap_or(0)),
                    emulated_write_ps: ps(d.emulated_write_cycles.unwrap_or(0)),
                }),
                send_small_ps: msg.send_cost_ps(2, None),
                send_data_ps: msg.send_cost_ps(2, Some(1)),
                // Handlers on the compute processor are entered by interrupt, or, with
                // back-edge polling, dispatched by the poll that found their message.
                entry_ps: if msg.backedge_interval_ps > 0 { msg.poll_dispatch_ps } else { msg.interrupt_entry_ps },
                exit_ps: if msg.backedge_interval_ps > 0 { 0 } else { msg.interrupt_exit_ps },
            })
        }
    }
}

/// The one-sided access costs (`None` without a `[remote]` section).
fn remote_config(spec: &MachineSpec, cycle_ps: f64) -> Result<Option<RemoteConfig>, ConfigError> {
    let remote = match &spec.remote {
        None => None,
        Some(r) => {
            if let Some(b) = r.put_block_bytes {
                if b == 0 || b % 8 != 0 || b > 1 << 20 {
                    return Err(ConfigError::key(
                        "remote.put_block_bytes",
                        format!("must be a multiple of 8 from 8 to 1048576, got {b}"),
                    ));
                }
            }
            if r.max_outstanding_words > u32::MAX as u64 || r.words_per_request > 1 << 20 {
                return Err(ConfigError::key(
                    "remote",
                    "max_outstanding_words and words_per_request must be at most 4294967295 and 1048576",
                ));
            }
            let ps = |c: u64| (c as f64 * cycle_ps).round() as u64;
            Some(RemoteConfig {
                issue_ps: ps(r.issue_cycles),
                max_outstanding_words: r.max_outstanding_words as u32,
                words_per_request: r.words_per_request as usize,
                request_bytes: r.request_bytes,
                service_ps: ps(r.service_cycles),
                service_line_ps: ps(r.service_line_cycles),
                service_word_ps: ps(r.service_word_cycles),
                ni_latency_ps: r.ni_latency_cycles.map(ps),
                get_word_ps: ps(r.get_word_cycles.unwrap_or(0)),
                put_block_words: (r.put_block_bytes.unwrap_or(0) / 8) as usize,
            })
        }
    };
    Ok(remote)
}

/// Whether the network runs packets' hops ahead of their time (`network.model = "fold"`).
fn network_model_folds(n: &spec::NetworkSpec) -> Result<bool, ConfigError> {
    let fold_events = match n.model.as_deref() {
        Some("hop") => false,
        None | Some("fold") => true,
        Some(other) => {
            return Err(ConfigError::key("network.model", format!("must be \"hop\" or \"fold\", got \"{other}\"")))
        }
    };
    Ok(fold_events)
}

/// How events due at the same picosecond and priority are ordered (`simulation.tie_order`).
fn tie_order(spec: &spec::MachineSpec) -> Result<TieOrder, ConfigError> {
    match spec.simulation.as_ref().and_then(|s| s.tie_order.as_deref()) {
        Some("creation") => Ok(TieOrder::Creation),
        None | Some("key") => Ok(TieOrder::Key),
        Some(other) => {
            Err(ConfigError::key("simulation.tie_order", format!("must be \"creation\" or \"key\", got \"{other}\"")))
        }
    }
}

/// The cross-traffic rate checked against what the I/O nodes' links carry.
fn check_cross_traffic_carried(cfg: &MachineConfig) -> Result<(), ConfigError> {
    // Each I/O pair sends its share of the cross-traffic along its own row of links; more
    // than those links carry piles up in the NI queues without bound (the run grew until
    // memory ran out). On a mesh with I/O nodes this is the bisection bandwidth (one row's
    // link each way per pair), and it stays defined on a one-processor copy (a baseline).
    let carried = cfg.topology.io_pairs().len() as f64 * cfg.cycle_ps / cfg.link_ps_per_byte;
    if cfg.cross_traffic_bytes_per_cycle > carried {
        return Err(ConfigError::key(
            "cross_traffic.rate_bytes_per_cycle",
            format!(
                "must be at most {carried} bytes per cycle on this machine (what the I/O nodes' rows of links carry; the bisection bandwidth of a mesh with I/O nodes), got {}",
                cfg.cross_traffic_bytes_per_cycle
            ),
        ));
    }
    Ok(())
}

impl MachineConfig {
    /// Load a preset or TOML text, apply overrides and an optional processor count.
    pub fn load(
        text: &str,
        origin: &str,
        overrides: &[String],
        procs: Option<usize>,
    ) -> Result<MachineConfig, ConfigError> {
        let mut spec = parse_spec(text, origin, overrides)?;
        // A range error names the machine (the file, or the preset) as well as the key.
        let named = |e: ConfigError| ConfigError { message: format!("{origin}: {}", e.message) };
        if let Some(p) = procs {
            spec = resize_spec(spec, p).map_err(named)?;
        }
        MachineConfig::from_spec(spec).map_err(named)
    }

    /// A shipped preset by name, with overrides.
    pub fn preset(name: &str, overrides: &[String], procs: Option<usize>) -> Result<MachineConfig, ConfigError> {
        let text = preset_text(name).ok_or_else(|| ConfigError {
            message: format!(
                "unknown machine `{name}` (presets: {}; or give a path to a .toml file)",
                preset_names().join(", ")
            ),
        })?;
        MachineConfig::load(text, name, overrides, procs)
    }

    /// Validate a spec into simulator units: each key's range, then each part of the machine in
    /// turn (the order of the checks is the order errors are reported in).
    pub fn from_spec(spec: MachineSpec) -> Result<MachineConfig, ConfigError> {
        let n = &spec.network;
        let m = &spec.messaging;
        // Every key's own range first (so the checks below divide by no zero).
        check_bounds(&spec)?;
        let clock = spec.processor.clock_mhz;
        let scale = m.overhead_scale;
        let cycle_ps = 1e6 / clock;
        // An overhead key in cycles, times `messaging.overhead_scale`, in picoseconds.
        let scaled = |cycles: u64| cycles_to_ps(cycle_ps, cycles as f64 * scale);
        let bw = n.link_bytes_per_ns;
        let topology = Topology::new(topology_kind(n)?).map_err(|e| ConfigError::key("network", e))?;
        let ct = &spec.cross_traffic;
        let cross_traffic_arbitration = cross_traffic_arbitration(&spec, &topology)?;
        if m.dma_align_bytes < 8 || !m.dma_align_bytes.is_power_of_two() {
            return Err(ConfigError::key(
                "messaging.dma_align_bytes",
                format!("must be a power of two >= 8, got {}", m.dma_align_bytes),
            ));
        }
        let cache_lines = check_cache(&spec)?;
        let (smp_nodes, tag_lock_cycles) = node_kind(&spec)?;
        let software = software_dsm(&spec, smp_nodes)?;
        let max_time_ps = spec.limits.max_sim_time_ms * 1e9;
        if max_time_ps >= u64::MAX as f64 / 4.0 {
            return Err(ConfigError::key(
                "limits.max_sim_time_ms",
                format!("must be at most {:.0} (the picoseconds must fit in 62 bits)", u64::MAX as f64 / 4.0 / 1e9),
            ));
        }
        check_times_fit(&spec, cycle_ps, max_time_ps)?;
        let msg = messaging_costs(m, &scaled, cycle_ps, smp_nodes)?;
        let poll = poll_costs(m, &scaled, smp_nodes)?;
        let memory = memory_config(&spec, cache_lines, &msg, cycle_ps)?;
        let coherence = coherence_model(&spec, software, tag_lock_cycles, &msg, cycle_ps);
        let remote = remote_config(&spec, cycle_ps)?;
        let fold_events = network_model_folds(n)?;
        let tie_order = tie_order(&spec)?;
        let cfg = MachineConfig {
            cycle_ps,
            link_ps_per_byte: 1000.0 / bw,
            router_latency_ps: ns_to_ps("network.router_latency_ns", n.router_latency_ns)?,
            ni_latency_ps: ns_to_ps("network.ni_latency_ns", n.ni_latency_ns)?,
            header_bytes: n.header_bytes,
            max_packet_payload_bytes: n.max_packet_payload_bytes,
            ni_input_queue_packets: n.ni_input_queue_packets,
            ni_output_queue_packets: n.ni_output_queue_packets,
            cross_traffic_bytes_per_cycle: ct.rate_bytes_per_cycle,
            cross_traffic_message_bytes: ct.message_bytes,
            cross_traffic_arbitration,
            msg,
            mem: memory,
            coherence,
            remote,
            max_events: spec.limits.max_events,
            max_time_ps: max_time_ps as u64,
            fold_events,
            tie_order,
            smp_nodes,
            poll,
            topology,
            spec,
        };
        check_cross_traffic_carried(&cfg)?;
        Ok(cfg)
    }
}

/// Resize the spec's network to `nprocs` processors, keeping per-link and per-node parameters.
pub fn resize_spec(mut spec: MachineSpec, nprocs: usize) -> Result<MachineSpec, ConfigError> {
    // A topology sized by `network.nprocs` that a `--set` just chose has no size yet: the
    // requested count is its size (so `--set network.topology=crossbar --procs 6` works).
    if spec.network.nprocs == 0 && !matches!(spec.network.topology.as_str(), "mesh" | "torus") {
        spec.network.nprocs = nprocs;
    }
    let kind = topology_kind(&spec.network)?;
    let new = resize(&kind, nprocs).map_err(|e| ConfigError { message: format!("--procs {nprocs}: {e}") })?;
    match new {
        TopologyKind::Mesh { dims, .. } => spec.network.dims = dims.to_vec(),
        TopologyKind::Torus { dims, procs_per_router } => {
            spec.network.dims = dims;
            spec.network.procs_per_router = procs_per_router;
        }
        _ => spec.network.nprocs = nprocs,
    }
    Ok(spec)
}
