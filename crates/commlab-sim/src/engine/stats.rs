//! The run's statistics: processor times, counters, per-node and per-link figures, and the
//! optional latency distributions, intervals and trace, from the world at the end of a run.

use super::error::SimError;
use super::state::EventCounts;
use super::world::World;
use crate::stats::counters::*;
use crate::stats::interval::{self as intervals, IntervalAccount};
use crate::stats::trace::{self as tracing, SpanLog};
use commlab_api::{LinkStats, NodeCounters, ProcTimes, RunStats, SetCounter};
use std::collections::BTreeMap;

type Counters = BTreeMap<String, f64>;

/// The run's statistics at its end (`events` handled in `wall` seconds of host time).
pub(super) fn collect_stats<S>(w: &World<S>, events: &EventCounts, wall: f64) -> Result<RunStats, SimError> {
    let cfg = &w.cfg;
    let (procs, timed_ps) = proc_times(w)?;
    let mut counters = Counters::new();
    traffic_counters(w, timed_ps, &mut counters);
    memory_counters(w, &mut counters);
    mechanism_counters(w, &mut counters);
    link_counters(w, timed_ps, &mut counters);
    let nodes = node_counters(w);
    let links = link_stats(w, timed_ps);
    Ok(RunStats {
        cycles: cfg.ps_to_cycles(timed_ps),
        procs,
        volume_bytes: w.traffic.bytes,
        counters,
        nodes,
        links,
        events: events.total(),
        events_by_kind: events.named(),
        wall_seconds: wall,
        latencies: w.lat.as_ref().map_or_else(Vec::new, |l| l.report(cfg.cycle_ps)),
        intervals: w.sampler.as_ref().map(|s| {
            let accounts: Vec<Option<&IntervalAccount>> = w.procs.iter().map(|p| p.acct.intervals.as_deref()).collect();
            intervals::report(&accounts, s, cfg.cycle_ps)
        }),
        trace: w.flows.as_ref().map(|f| {
            let spans: Vec<Option<&SpanLog>> = w.procs.iter().map(|p| p.acct.spans.as_deref()).collect();
            tracing::report(&spans, f, w.net.packet_log.as_deref(), w.timing_start.unwrap_or(0), cfg.cycle_ps)
        }),
    })
}

/// Every processor's time by category, and the timed region's length (first start to last
/// finish); an error if a processor's categories do not sum to its busy time.
fn proc_times<S>(w: &World<S>) -> Result<(Vec<ProcTimes>, u64), SimError> {
    let cfg = &w.cfg;
    let mut procs = Vec::with_capacity(w.procs.len());
    let mut first_start = u64::MAX;
    let mut last_finish = 0;
    for (i, p) in w.procs.iter().enumerate() {
        let totals = p.acct.totals_ps();
        let busy = p.acct.busy_ps();
        if totals.iter().sum::<u64>() != busy {
            return Err(SimError::Internal(format!(
                "processor {i}: time categories sum to {} ps but busy time is {busy} ps",
                totals.iter().sum::<u64>()
            )));
        }
        first_start = first_start.min(p.acct.start_ps());
        last_finish = last_finish.max(p.acct.finish_ps().unwrap_or(0));
        procs.push(ProcTimes {
            by_category: totals.map(|ps| cfg.ps_to_cycles(ps)),
            busy: cfg.ps_to_cycles(busy),
            start: cfg.ps_to_cycles(p.acct.start_ps()),
        });
    }
    Ok((procs, last_finish.saturating_sub(first_start)))
}

/// Messages, packets and cross-traffic.
fn traffic_counters<S>(w: &World<S>, timed_ps: u64, counters: &mut Counters) {
    let cfg = &w.cfg;
    counters.set(&MESSAGES, w.traffic.messages as f64);
    counters.set(&PACKETS, w.traffic.packets as f64);
    counters.set(&CROSS_TRAFFIC_MESSAGES, w.traffic.cross_messages as f64);
    if cfg.cross_traffic_bytes_per_cycle > 0.0 {
        // What the I/O nodes achieved over the timed region (FIFO: at most the configured rate).
        let bytes = w.cross_bytes_timed().unwrap_or(w.net.cross_bytes) as f64;
        let rate = if timed_ps > 0 { bytes / cfg.ps_to_cycles(timed_ps) } else { 0.0 };
        counters.set(&CROSS_TRAFFIC_BYTES_PER_CYCLE, rate);
    }
}

/// The caches and the coherence protocol (when any access reached the caches).
fn memory_counters<S>(w: &World<S>, counters: &mut Counters) {
    let ms = w.mem.stats();
    if ms.hits + ms.misses > 0 {
        counters.set(&CACHE_HITS, ms.hits as f64);
        counters.set(&CACHE_MISSES, ms.misses as f64);
        counters.set(&LOCAL_MISSES, ms.local_misses as f64);
        counters.set(&FORWARDS, ms.forwards as f64);
        counters.set(&INVALIDATIONS, ms.invalidations as f64);
        counters.set(&SOFTWARE_TRAPS, ms.software_traps as f64);
        let most = ms.traps_by_node.iter().copied().max().unwrap_or(0);
        counters.set(&SOFTWARE_TRAPS_MAX_PER_NODE, most as f64);
        counters.set(&PREFETCHES, ms.prefetches as f64);
        counters.set(&PREFETCHES_USEFUL, ms.prefetches_useful as f64);
        counters.set(&PRIVATE_MISSES, ms.private_misses as f64);
        counters.set(&PROTOCOL_MESSAGES, w.traffic.protocol_messages as f64);
    }
}

/// The optional mechanisms, each when the machine has it: the overflow trap, one-sided access,
/// access checks, handler time, polling mechanisms, back-edge polling, page protection,
/// Tempest user regions and flow control.
fn mechanism_counters<S>(w: &World<S>, counters: &mut Counters) {
    let cfg = &w.cfg;
    if cfg.msg.overflow.is_some() {
        let o = &w.overflow;
        counters.set(&OVERFLOW_TRAPS, o.traps as f64);
        counters.set(&OVERFLOW_MESSAGES_DRAINED, o.drained as f64);
        counters.set(&OVERFLOW_TRAP_CYCLES, cfg.ps_to_cycles(o.trap_ps));
    }
    if w.one_sided.requests > 0 {
        counters.set(&ONE_SIDED_REQUESTS, w.one_sided.requests as f64);
        counters.set(&ONE_SIDED_WORDS, w.one_sided.words as f64);
        counters.set(&ONE_SIDED_INVALIDATIONS, w.one_sided.invalidations as f64);
    }
    if let Some(sw) = w.mem.software().filter(|sw| sw.load_check_ps + sw.store_check_ps > 0) {
        let sum = |k: usize| w.procs.iter().map(|p| p.checked[k]).sum::<u64>();
        counters.set(&ACCESS_CHECKED_LOADS, sum(0) as f64);
        counters.set(&ACCESS_CHECKED_STORES, sum(1) as f64);
        let ps = sum(0) * sw.load_check_ps + sum(1) * sw.store_check_ps;
        counters.set(&ACCESS_CHECK_CYCLES, w.cfg.ps_to_cycles(ps));
    }
    if w.mem.is_software() || w.cfg.smp_nodes {
        let ms = w.mem.stats();
        counters.set(&HANDLER_CYCLES_COMPUTE, w.cfg.ps_to_cycles(ms.handler_ps_compute));
        counters.set(&HANDLER_CYCLES_PROTOCOL, w.cfg.ps_to_cycles(ms.handler_ps_protocol));
    }
    if w.cfg.poll.is_some() {
        let s = &w.poll_stats;
        counters.set(&POLL_MESSAGES, s.messages as f64);
        counters.set(&POLL_FLAG_UPDATES, s.flag_updates as f64);
        counters.set(&POLL_BUS_WAIT_CYCLES, w.cfg.ps_to_cycles(s.bus_wait_ps));
        counters.set(&POLL_NOTIFIES, s.notifies as f64);
    }
    if w.cfg.msg.backedge_interval_ps > 0 {
        let polls: u64 = w.procs.iter().map(|p| p.failed_polls).sum();
        let dispatched: u64 = w.procs.iter().map(|p| p.edge_dispatches).sum();
        counters.set(&BACKEDGE_FAILED_POLLS, polls as f64);
        counters.set(&BACKEDGE_DISPATCHES, dispatched as f64);
    }
    if let Some(pg) = w.mem.pages() {
        counters.set(&PAGE_PROTECTION_CHANGES, pg.protection_changes as f64);
        counters.set(&PAGE_PROTECTION_CHANGES_WITH_ECC, pg.combined_changes as f64);
        counters.set(&ECC_INVALIDATIONS, pg.ecc_invalidations as f64);
        counters.set(&EMULATED_WRITES, pg.emulated_writes as f64);
    }
    let t = w.mem.tempest();
    if t.in_use() {
        counters.set(&TEMPEST_FAULTS, t.faults as f64);
        counters.set(&TEMPEST_TAG_CHANGES, t.tag_changes as f64);
        counters.set(&TEMPEST_BLOCK_COPIES, t.block_copies as f64);
    }
    if w.flow.window > 0 {
        let f = &w.flow.stats;
        counters.set(&FLOW_BUFFERED, f.buffered as f64);
        counters.set(&FLOW_DEADLOCK_DETECTIONS, f.detections as f64);
        counters.set(&FLOW_SPURIOUS_DETECTIONS, f.spurious as f64);
        counters.set(&FLOW_CREDIT_WAITS, f.credit_waits as f64);
        counters.set(&FLOW_ACKS, f.acks as f64);
        counters.set(&FLOW_PIGGYBACKED_CREDITS, f.piggybacked as f64);
    }
}

/// Utilisation of router-to-router links, and of the bisection's, over the timed region.
fn link_counters<S>(w: &World<S>, timed_ps: u64, counters: &mut Counters) {
    // Utilisation of router-to-router links over the timed region.
    let topo = &w.net.topo;
    let router_links: Vec<(u32, u64)> =
        w.net.link_busy_ps().filter(|(l, _)| topo.link(*l).kind == crate::topology::LinkKind::Router).collect();
    if timed_ps > 0 && !router_links.is_empty() {
        let util = |b: u64| b as f64 / timed_ps as f64;
        let mean = router_links.iter().map(|&(_, b)| util(b)).sum::<f64>() / router_links.len() as f64;
        let max = router_links.iter().map(|&(_, b)| util(b)).fold(0.0, f64::max);
        counters.set(&LINK_UTILIZATION_MEAN, mean);
        counters.set(&LINK_UTILIZATION_MAX, max);
        let bis = topo.bisection_links();
        if !bis.is_empty() {
            let busy: Vec<u64> = w.net.link_busy_ps().map(|(_, b)| b).collect();
            let u = bis.iter().map(|&l| util(busy[l as usize])).sum::<f64>() / bis.len() as f64;
            counters.set(&BISECTION_UTILIZATION, u);
        }
    }
}

/// Each processor's messages, misses and traps.
fn node_counters<S>(w: &World<S>) -> Vec<NodeCounters> {
    let ms = w.mem.stats();
    w.procs
        .iter()
        .enumerate()
        .map(|(i, p)| NodeCounters {
            messages_sent: p.sent,
            messages_received: p.received,
            cache_misses: ms.misses_by_node.get(i).copied().unwrap_or(0),
            software_traps: ms.traps_by_node.get(i).copied().unwrap_or(0),
        })
        .collect()
}

/// Each link's kind, ends, utilisation and bytes.
fn link_stats<S>(w: &World<S>, timed_ps: u64) -> Vec<LinkStats> {
    let topo = &w.net.topo;
    let end = |r: Option<u32>, l: u32| match (r, topo.link_endpoint(l)) {
        (Some(r), _) => format!("router {r}"),
        (None, Some(e)) => format!("endpoint {e}"),
        (None, None) => "?".to_string(),
    };
    w.net
        .link_busy_ps()
        .zip(w.net.link_bytes())
        .map(|((l, busy), bytes)| {
            let info = topo.link(l);
            LinkStats {
                link: l,
                kind: match info.kind {
                    crate::topology::LinkKind::Injection => "injection",
                    crate::topology::LinkKind::Ejection => "ejection",
                    crate::topology::LinkKind::Router => "router",
                },
                from: end(info.from_router, l),
                to: end(info.to_router, l),
                utilization: if timed_ps > 0 { busy as f64 / timed_ps as f64 } else { 0.0 },
                bytes,
            }
        })
        .collect()
}
