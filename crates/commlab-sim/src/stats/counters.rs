//! The engine's counters (`RunStats.counters`), each declared once: name, unit, meaning.
//! `engine/stats.rs` sets them through these declarations; `commlab counters` lists them. Each
//! is reported only when its mechanism is present (the group's condition says when); a counter
//! counts the whole run unless it says "timed region". An application's own counters are
//! declared in its module (`commlab-apps`), and one of the same name replaces the engine's.

use commlab_api::counters;

pub use commlab_api::MESSAGES;

counters! {
    /// Every counter the simulator's engine may report.
    pub ENGINE_COUNTERS [MESSAGES];
    // Traffic (always).
    PACKETS = "packets", "packets",
        "network packets injected: of processor messages, coherence-protocol messages and one-sided requests and replies (cross-traffic is not counted)";
    CROSS_TRAFFIC_MESSAGES = "cross_traffic_messages", "messages",
        "background messages the I/O nodes injected as cross-traffic (cross_traffic.rate_bytes_per_cycle)";
    CROSS_TRAFFIC_BYTES_PER_CYCLE = "cross_traffic_bytes_per_cycle", "bytes/cycle",
        "cross-traffic bytes the I/O nodes achieved over the timed region, per cycle (only with cross-traffic configured)";
    // Caches and coherence (when any access reached the caches).
    CACHE_HITS = "cache_hits", "count", "processor accesses that performed in the cache without a miss";
    CACHE_MISSES = "cache_misses", "count",
        "misses a processor started (demand and prefetch), private fills included";
    LOCAL_MISSES = "local_misses", "count",
        "misses served by the requesting node's own memory: private lines and shared lines homed there";
    FORWARDS = "forwards", "count", "requests the home forwarded to the owner of a dirty line";
    INVALIDATIONS = "invalidations", "count", "invalidations the home sent to sharers on a write";
    SOFTWARE_TRAPS = "software_traps", "count",
        "LimitLESS software traps taken at homes (directory overflow handled by software)";
    SOFTWARE_TRAPS_MAX_PER_NODE = "software_traps_max_per_node", "count",
        "the most LimitLESS software traps any one home node took";
    PREFETCHES = "prefetches", "count", "prefetches processors issued that started a miss";
    PREFETCHES_USEFUL = "prefetches_useful", "count",
        "prefetched lines whose first use was an access by the processor (engine count; an app's own replaces it)";
    PRIVATE_MISSES = "private_misses", "count", "misses on private (node-local, uncoherent) lines";
    PROTOCOL_MESSAGES = "protocol_messages", "messages",
        "coherence-protocol messages sent between nodes (requests, forwards, invalidations, data, acknowledgements)";
    // The optional mechanisms, each when the machine has it.
    OVERFLOW_TRAPS = "overflow_traps", "count",
        "network overflow traps taken (messaging.overflow_timeout_cycles: a full NI input queue drained into memory)";
    OVERFLOW_MESSAGES_DRAINED = "overflow_messages_drained", "messages",
        "messages the overflow trap copied from the network into memory";
    OVERFLOW_TRAP_CYCLES = "overflow_trap_cycles", "cycles", "processor time spent in overflow traps, all nodes summed";
    ONE_SIDED_REQUESTS = "one_sided_requests", "count",
        "one-sided remote get/put requests issued (when any was)";
    ONE_SIDED_WORDS = "one_sided_words", "words", "words moved by one-sided requests";
    ONE_SIDED_INVALIDATIONS = "one_sided_invalidations", "count",
        "cached copies one-sided writes invalidated at their targets";
    ACCESS_CHECKED_LOADS = "access_checked_loads", "count",
        "shared loads that paid a software access check (software DSM with check costs)";
    ACCESS_CHECKED_STORES = "access_checked_stores", "count", "shared stores that paid a software access check";
    ACCESS_CHECK_CYCLES = "access_check_cycles", "cycles",
        "time of the software access checks: checked loads and stores times their costs, all nodes summed";
    HANDLER_CYCLES_COMPUTE = "handler_cycles_compute", "cycles",
        "protocol handler time charged to compute processors (miss traps, handlers they run), all nodes summed (software DSM or SMP nodes)";
    HANDLER_CYCLES_PROTOCOL = "handler_cycles_protocol", "cycles",
        "handler time on protocol processors, all nodes summed (software DSM or SMP nodes)";
    POLL_MESSAGES = "poll_messages", "messages",
        "messages delivered through the polling mechanism in the timed region (messaging.poll_mechanism)";
    POLL_FLAG_UPDATES = "poll_flag_updates", "count",
        "messages of those whose arrival updated the host's poll flag (the rest came within a burst)";
    POLL_BUS_WAIT_CYCLES = "poll_bus_wait_cycles", "cycles",
        "bus time to move those messages' payloads, sender's and receiver's both";
    POLL_NOTIFIES = "poll_notifies", "count",
        "notifications of a blocked compute thread by the protocol processor in the timed region";
    BACKEDGE_FAILED_POLLS = "backedge_failed_polls", "count",
        "back-edge polls that found no message, all processors (messaging.backedge_interval_cycles)";
    BACKEDGE_DISPATCHES = "backedge_dispatches", "count", "messages a back-edge poll found and dispatched";
    PAGE_PROTECTION_CHANGES = "page_protection_changes", "count",
        "page protection changes (a page becoming or ceasing to be read-only) under page-based access control";
    PAGE_PROTECTION_CHANGES_WITH_ECC = "page_protection_changes_with_ecc", "count",
        "of those, changes made together with setting a block's ECC invalid (one combined cost)";
    ECC_INVALIDATIONS = "ecc_invalidations", "count", "blocks invalidated by setting bad ECC";
    EMULATED_WRITES = "emulated_writes", "count",
        "stores to writable blocks on read-only pages that the kernel performed (Blizzard-E)";
    TEMPEST_FAULTS = "tempest_faults", "count", "access faults raised on Tempest user regions";
    TEMPEST_TAG_CHANGES = "tempest_tag_changes", "count", "access-tag changes on Tempest user regions";
    TEMPEST_BLOCK_COPIES = "tempest_block_copies", "count",
        "blocks copied between a node's copy and a handler's buffer (dsm.copy_bytes_per_cycle)";
    FLOW_BUFFERED = "flow_buffered", "messages",
        "flow-controlled sends without a credit that were buffered (the sender held a full window of unacknowledged messages, or could not wait)";
    FLOW_DEADLOCK_DETECTIONS = "flow_deadlock_detections", "count",
        "sends without a credit while the sender held a window of received, unacknowledged messages from some processor (a possible deadlock)";
    FLOW_SPURIOUS_DETECTIONS = "flow_spurious_detections", "count",
        "of those, detections while the destination still had messages in flight to the sender";
    FLOW_CREDIT_WAITS = "flow_credit_waits", "count", "sends that waited for a credit";
    FLOW_ACKS = "flow_acks", "messages", "explicit acknowledgement messages sent to return credits";
    FLOW_PIGGYBACKED_CREDITS = "flow_piggybacked_credits", "count",
        "credits returned on flow-controlled messages instead of an acknowledgement";
    // The network (router-to-router links over the timed region).
    LINK_UTILIZATION_MEAN = "link_utilization_mean", "fraction",
        "mean busy fraction of router-to-router links over the timed region";
    LINK_UTILIZATION_MAX = "link_utilization_max", "fraction",
        "largest busy fraction of any router-to-router link over the timed region";
    BISECTION_UTILIZATION = "bisection_utilization", "fraction",
        "mean busy fraction of the links crossing the topology's bisection over the timed region";
}
