//! How an SMP node's protocol processor polls for messages (`messaging.poll_mechanism`): the
//! Blizzard COW study's four techniques (§6.4, Table 2), each a built-in cost table, as
//! `dsm.instrumentation` selects its check costs.
//!
//! Every technique polls from the protocol processor's dispatch loop, which polls whenever it
//! runs no handler. A message in the NI's receive queue is seen by the first poll that starts
//! once the poll can see it (`update`: the flag's update after the message's arrival), and that
//! poll costs `seen` (a successful poll's time, the table's microseconds exactly); the receive
//! path after it is `messaging.poll_receive_cycles`, the same for every technique (the message
//! itself is read out of the NI's queue in every case).

/// One of the study's four polling techniques.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PollMechanism {
    /// Poll the LANai's receive queue head: an uncached access across the SBus-to-MBus bridge.
    Lanai,
    /// Poll a cachable flag the LANai sets with a one-word DMA.
    Dma,
    /// Poll a cachable flag that a processor the LANai interrupts sets (in the device driver).
    Interrupt,
    /// Poll Typhoon-0's cachable status register, whose message bit the LANai sets.
    Typhoon0,
}

/// A 66 MHz HyperSPARC's cycles in a microsecond: the study's cycle counts (the 1- and
/// 18-cycle flag loads) are converted to microseconds with it, so the table is in microseconds
/// and scales with `processor.clock_mhz` as the other published times do.
const STUDY_MHZ: f64 = 66.0;

/// The study's published uncached access across the SBus-to-MBus bridge: one poll of the
/// LANai's receive queue head (§6.4: "These accesses are costly (0.38 µsecs)").
const UNCACHED_BRIDGE_US: f64 = 0.38;
/// A poll of a cachable flag or register that hits in the cache (published, §6.4: "increases
/// the cost of loading the poll flag from 1 to 18 cycles": 1 cycle cached).
const CACHED_POLL_US: f64 = 1.0 / STUDY_MHZ;
/// A poll of a cachable flag whose line the update invalidated (coherent DMA, or the
/// interrupted processor's store): the load misses. Derived: taken as the published 18 cycles of
/// an uncachable load of the same flag (§6.4), a load the cache does not serve.
const FLAG_MISS_US: f64 = 18.0 / STUDY_MHZ;

impl PollMechanism {
    pub fn parse(s: &str) -> Option<Option<Self>> {
        Some(match s {
            "none" => None,
            "lanai" => Some(Self::Lanai),
            "dma" => Some(Self::Dma),
            "interrupt" => Some(Self::Interrupt),
            "typhoon0" => Some(Self::Typhoon0),
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Lanai => "lanai",
            Self::Dma => "dma",
            Self::Interrupt => "interrupt",
            Self::Typhoon0 => "typhoon0",
        }
    }

    /// The technique's costs in microseconds.
    pub fn table(self) -> PollTable {
        match self {
            // Published (§6.4): every poll, failed or not, is the 0.38 us uncached read of the
            // queue head; the message is visible as soon as it is in the queue.
            Self::Lanai => PollTable {
                failed_us: UNCACHED_BRIDGE_US,
                update_us: 0.0,
                burst: false,
                seen_us: UNCACHED_BRIDGE_US,
                seen_in_burst_us: UNCACHED_BRIDGE_US,
                clear_us: 0.0,
                // Derived: Table 2's compute-thread minus protocol-thread round trip, 44.9 - 39.9.
                notify_us: 5.0,
                // Derived: a DMA burst across the bridge waits, on average, for half of the poll
                // in progress (0.38 / 2 us); the burst is assumed to be the SBus's largest, 64
                // bytes (no published figure).
                bus_wait_us: UNCACHED_BRIDGE_US / 2.0,
                bus_burst_bytes: 64,
            },
            // Published (§6.4): a one-word DMA sets the flag, 4 us, only for the first message
            // of a burst (the LANai keeps a copy; the host clears both when the queue is empty);
            // failed polls are cache hits.
            Self::Dma => PollTable {
                failed_us: CACHED_POLL_US,
                update_us: 4.0,
                burst: true,
                seen_us: FLAG_MISS_US,
                seen_in_burst_us: CACHED_POLL_US,
                // Derived: clearing the host's cached flag (1 cycle) and the LANai's copy, an
                // uncached store across the bridge, taken as the published 0.38 us access.
                clear_us: CACHED_POLL_US + UNCACHED_BRIDGE_US,
                // Derived: Table 2's compute minus protocol round trip, 53.8 - 49.9.
                notify_us: 3.9,
                bus_wait_us: 0.0,
                bus_burst_bytes: 64,
            },
            // Published (§6.4): the interrupted processor's device driver sets the flag, 14 us,
            // with DMA's burst rule ("or signals an interrupt to set the host flag").
            Self::Interrupt => PollTable {
                failed_us: CACHED_POLL_US,
                update_us: 14.0,
                burst: true,
                seen_us: FLAG_MISS_US,
                seen_in_burst_us: CACHED_POLL_US,
                clear_us: CACHED_POLL_US + UNCACHED_BRIDGE_US,
                // Derived: Table 2's compute minus protocol round trip, 76.6 - 71.1.
                notify_us: 5.5,
                bus_wait_us: 0.0,
                bus_burst_bytes: 64,
            },
            // Published (§6.4): failed polls hit the cachable register; a message's arrival
            // costs a miss and a handshake to clear the bit, 1.3 us, for every message (the
            // study states no burst rule for it).
            Self::Typhoon0 => PollTable {
                failed_us: CACHED_POLL_US,
                update_us: 0.0,
                burst: false,
                seen_us: 1.3,
                seen_in_burst_us: 1.3,
                clear_us: 0.0,
                // Derived: Table 2's compute minus protocol round trip, 51.9 - 46.0.
                notify_us: 5.9,
                bus_wait_us: 0.0,
                bus_burst_bytes: 64,
            },
        }
    }
}

/// A polling technique's costs in microseconds (see [`PollMechanism::table`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PollTable {
    /// One poll that finds nothing (the dispatch loop's period).
    pub failed_us: f64,
    /// From a message's arrival in the NI's receive queue to the poll being able to see it.
    pub update_us: f64,
    /// The update is made only for the first message of a burst (until the host clears the
    /// flag once the queue is empty).
    pub burst: bool,
    /// The successful poll of the first message of a burst (every message without a burst rule).
    pub seen_us: f64,
    /// The successful poll of a later message of a burst (the flag is still set and cached).
    pub seen_in_burst_us: f64,
    /// Clearing the flag once the queue is empty (the protocol processor's time).
    pub clear_us: f64,
    /// A compute thread waiting on a condition a protocol handler satisfied learns of it this
    /// much later (Table 2: sending from the compute thread).
    pub notify_us: f64,
    /// Each `bus_burst_bytes` of bulk data DMAed across the I/O bridge, at the sender and at
    /// the receiver, waits this long for the polls sharing the bridge.
    pub bus_wait_us: f64,
    pub bus_burst_bytes: u64,
}

/// A polling technique's costs in the simulator's units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PollCosts {
    pub mechanism: PollMechanism,
    pub failed_ps: u64,
    pub update_ps: u64,
    pub burst: bool,
    /// A successful poll (charged as the handler's entry).
    pub seen_ps: u64,
    pub seen_in_burst_ps: u64,
    pub clear_ps: u64,
    pub notify_ps: u64,
    pub bus_wait_ps: u64,
    pub bus_burst_bytes: u64,
    /// `messaging.poll_receive_cycles` (scaled as a receive overhead).
    pub receive_ps: u64,
}

impl PollCosts {
    pub fn new(mechanism: PollMechanism, receive_ps: u64) -> PollCosts {
        let t = mechanism.table();
        let ps = |us: f64| (us * 1e6).round() as u64;
        PollCosts {
            mechanism,
            failed_ps: ps(t.failed_us).max(1),
            update_ps: ps(t.update_us),
            burst: t.burst,
            seen_ps: ps(t.seen_us),
            seen_in_burst_ps: ps(t.seen_in_burst_us),
            clear_ps: ps(t.clear_us),
            notify_ps: ps(t.notify_us),
            bus_wait_ps: ps(t.bus_wait_us),
            bus_burst_bytes: t.bus_burst_bytes,
            receive_ps,
        }
    }

    /// The wait of `bytes` of bulk data DMAed across the I/O bridge at one end.
    pub fn bus_wait_for(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.bus_burst_bytes) * self.bus_wait_ps
    }
}
