//! What the processors of one run share: memory, message channels, the shared-memory barrier's lines,
//! the first error, and what each processor waits for (read by the watchdog).

use crate::arena::Arena;
use crate::clock::Clock;
use crate::error::NativeError;
use crate::inbox::{BufferPool, Channels};
use commlab_api::ReceiveMode;
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The unwinding payload that stops a processor's thread after a run failed (no panic message
/// is printed: `resume_unwind` does not run the panic hook).
pub(crate) struct Abort;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WaitKind {
    Cond,
    Spin,
    Lock,
    BarrierMessages,
    BarrierShared,
    /// The main thread returned; handling messages until the run ends.
    Finished,
}

/// What a processor waits for, for the deadlock report.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WaitInfo {
    pub kind: WaitKind,
    pub what: &'static str,
    /// The barrier's epoch, or the address spun on.
    pub detail: u64,
    pub mode: ReceiveMode,
}

/// One processor's waiting, as the watchdog sees it.
pub(crate) struct Status {
    /// Odd while the processor is inside a wait; one more at every entry and exit.
    pub gen: AtomicU64,
    /// Looks at the condition (each finding it false) so far, in 64s.
    pub checks: AtomicU64,
    pub info: Mutex<WaitInfo>,
}

pub(crate) struct Shared {
    pub nprocs: usize,
    /// How long (clock ticks) a wait spins after the last message before it yields the core
    /// once in 64 looks.
    pub spin_ticks: u64,
    pub clock: Clock,
    pub arena: Arena,
    pub channels: Channels,
    /// Every processor's pool of bulk receive buffers (the process's, kept across runs).
    pub pools: Vec<std::sync::Arc<BufferPool>>,
    /// What a send without payload costs, in clock ticks, by number of argument words
    /// (measured once per process by `node::short_send_ticks`).
    pub send_ticks: [u64; crate::inbox::MAX_ARGS + 1],
    /// The shared-memory barrier: per processor a counter its children add to and a flag its
    /// parent sets, each on its own line.
    pub bar_count: Vec<CachePadded<AtomicU64>>,
    pub bar_flag: Vec<CachePadded<AtomicU64>>,
    /// Some processor called `begin_timing`: messages sent from now on are counted.
    pub timing_started: AtomicBool,
    /// Main threads that returned.
    pub finished: AtomicUsize,
    /// Every processor finished and no message is left: the threads may return.
    pub stop: AtomicBool,
    /// The run failed: every thread unwinds at its next wait.
    pub abort: AtomicBool,
    pub fatal: Mutex<Option<NativeError>>,
    pub status: Vec<CachePadded<Status>>,
}

impl Shared {
    pub fn new(nprocs: usize, clock: Clock, spin_ns: u64, send_ticks: [u64; crate::inbox::MAX_ARGS + 1]) -> Shared {
        let info = WaitInfo { kind: WaitKind::Cond, what: "", detail: 0, mode: ReceiveMode::Interrupt };
        Shared {
            nprocs,
            spin_ticks: clock.ticks_of_ns(spin_ns),
            clock,
            arena: Arena::new(),
            channels: Channels::new(nprocs),
            pools: (0..nprocs).map(BufferPool::of).collect(),
            send_ticks,
            bar_count: (0..nprocs).map(|_| CachePadded::new(AtomicU64::new(0))).collect(),
            bar_flag: (0..nprocs).map(|_| CachePadded::new(AtomicU64::new(0))).collect(),
            timing_started: AtomicBool::new(false),
            finished: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            abort: AtomicBool::new(false),
            fatal: Mutex::new(None),
            status: (0..nprocs)
                .map(|_| {
                    CachePadded::new(Status {
                        gen: AtomicU64::new(0),
                        checks: AtomicU64::new(0),
                        info: Mutex::new(info),
                    })
                })
                .collect(),
        }
    }

    /// Record the run's first error and make every thread stop.
    pub fn set_fatal(&self, e: NativeError) {
        self.fatal.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
        self.abort.store(true, Ordering::SeqCst);
    }

    /// A program error on this thread: record it and unwind.
    #[cold]
    pub fn fail(&self, msg: String) -> ! {
        self.set_fatal(NativeError::Program(msg));
        std::panic::resume_unwind(Box::new(Abort))
    }

    /// Watch the run from the calling thread until it ends: every processor finished with no
    /// message left (the threads are told to return), a deadlock (the error names what every
    /// processor waits for), or another failure. Returns when the threads may be joined.
    pub fn watch(&self) {
        let started = Instant::now();
        let mut nap = Duration::from_micros(20);
        let mut first: Option<Snapshot> = None;
        let mut second: Option<Snapshot> = None;
        while !self.abort.load(Ordering::SeqCst) {
            std::thread::sleep(nap);
            nap = (nap * 2).min(Duration::from_millis(5));
            let now = self.snapshot();
            if !now.quiet() {
                (first, second) = (None, None);
                continue;
            }
            match (&first, &second) {
                (Some(f), _) if !f.same_waits(&now) => (first, second) = (Some(now), None),
                (None, _) => first = Some(now),
                (Some(_), None) => second = Some(now),
                (Some(_), Some(s)) => {
                    // Every processor has looked at its condition at least twice since the
                    // second look, all of them waiting the whole time, no message sent or
                    // handled: nothing can change any more.
                    if !now.rechecked_since(s) {
                        continue;
                    }
                    if now.waits.iter().all(|w| w.info.kind == WaitKind::Finished) {
                        self.stop.store(true, Ordering::SeqCst);
                    } else {
                        let report = self.deadlock_report(&now, started.elapsed());
                        self.set_fatal(NativeError::Deadlock(report));
                    }
                    return;
                }
            }
        }
    }

    fn snapshot(&self) -> Snapshot {
        let waits = self
            .status
            .iter()
            .map(|s| {
                let gen = s.gen.load(Ordering::SeqCst);
                let checks = s.checks.load(Ordering::SeqCst);
                let info = *s.info.lock().unwrap_or_else(|p| p.into_inner());
                WaitSeen { gen, checks, info }
            })
            .collect();
        let counts = self.channels.counts();
        let sent = counts.iter().map(|c| c.0).sum();
        let handled = counts.iter().map(|c| c.1).sum();
        Snapshot { waits, sent, handled }
    }

    fn deadlock_report(&self, s: &Snapshot, after: Duration) -> String {
        let mut lines = vec![format!(
            "after {:.3} s every unfinished processor waits and no message is in flight or being handled",
            after.as_secs_f64()
        )];
        let mut done = 0;
        for (p, w) in s.waits.iter().enumerate() {
            let i = w.info;
            let what = match i.kind {
                WaitKind::Finished => {
                    done += 1;
                    continue;
                }
                WaitKind::Cond => format!("waits in wait_until(\"{}\")", i.what),
                WaitKind::Spin => format!("spins in {} on address {:#x}", i.what, i.detail),
                WaitKind::Lock => format!("spins in lock on address {:#x}", i.detail),
                WaitKind::BarrierMessages => format!("waits at message barrier #{}: {}", i.detail, i.what),
                WaitKind::BarrierShared => format!("waits at shared-memory barrier #{}: {}", i.detail, i.what),
            };
            let mode = match i.mode {
                ReceiveMode::Interrupt => "interrupt",
                ReceiveMode::Polling => "polling",
            };
            lines.push(format!("  P{p}: {what}; receives by {mode}"));
        }
        if done > 0 {
            lines.push(format!("  ({done} processors finished)"));
        }
        lines.join("\n")
    }
}

#[derive(Clone, Copy)]
struct WaitSeen {
    gen: u64,
    checks: u64,
    info: WaitInfo,
}

/// One look at every processor and the message counts.
struct Snapshot {
    waits: Vec<WaitSeen>,
    /// Messages sent and handled by all processors.
    sent: u64,
    handled: u64,
}

impl Snapshot {
    /// Every processor inside a wait, every message sent handled.
    fn quiet(&self) -> bool {
        self.waits.iter().all(|w| w.gen % 2 == 1) && self.sent == self.handled
    }

    /// The same waits (no processor left one) and no message since `earlier`.
    fn same_waits(&self, earlier: &Snapshot) -> bool {
        self.waits.iter().zip(&earlier.waits).all(|(a, b)| a.gen == b.gen)
            && (self.sent, self.handled) == (earlier.sent, earlier.handled)
    }

    fn rechecked_since(&self, earlier: &Snapshot) -> bool {
        self.waits.iter().zip(&earlier.waits).all(|(a, b)| a.checks >= b.checks + 2)
    }
}
