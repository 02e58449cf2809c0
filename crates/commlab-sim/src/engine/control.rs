//! [`RunControl`]: how a caller on another thread watches a run and stops it. The engine
//! publishes its progress and reads the stop flag; it never reads a clock.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A window on running simulations from another thread: the engine publishes how far it has got
/// (events, simulated time) every few thousand events and stops with [`crate::SimError::Cancelled`]
/// once [`RunControl::stop`] was called. The simulator never reads a clock: whoever holds the
/// control (the CLI) decides when to stop, so a run that is not stopped is bit-identical to one
/// without a control.
#[derive(Debug, Default)]
pub struct RunControl {
    stop: AtomicBool,
    events: AtomicU64,
    now_ps: AtomicU64,
    /// What the program last said of its progress (`Node::progress`): steps done and total.
    work_done: AtomicU64,
    work_total: AtomicU64,
    /// Measure how deep the coroutine stacks went ([`RunControl::measure_stacks`]).
    measure_stacks: AtomicBool,
    stack_bytes: AtomicU64,
}

impl RunControl {
    /// Ask every run using this control to stop at its next look (within a few thousand events).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Whether [`RunControl::stop`] was called.
    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// The last published progress of the current run: (events handled, simulated time in ps).
    pub fn progress(&self) -> (u64, u64) {
        (self.events.load(Ordering::Relaxed), self.now_ps.load(Ordering::Relaxed))
    }

    /// The program's own progress of the current run: (steps done, total steps; 0 if it
    /// says nothing).
    pub fn work(&self) -> (u64, u64) {
        (self.work_done.load(Ordering::Relaxed), self.work_total.load(Ordering::Relaxed))
    }

    /// Have runs record their processors' deepest stack use ([`RunControl::stack_bytes`]). It
    /// costs a scan of every stack after the run, so it is off unless asked for.
    pub fn measure_stacks(&self) {
        self.measure_stacks.store(true, Ordering::Relaxed);
    }

    /// The deepest any processor's coroutine stack went, in bytes, in the last completed run
    /// that measured it (0 before one). How much of [`crate::STACK_BYTES`] the application uses.
    pub fn stack_bytes(&self) -> u64 {
        self.stack_bytes.load(Ordering::Relaxed)
    }

    pub(crate) fn measuring_stacks(&self) -> bool {
        self.measure_stacks.load(Ordering::Relaxed)
    }

    pub(crate) fn record_stack_bytes(&self, bytes: u64) {
        self.stack_bytes.store(bytes, Ordering::Relaxed);
    }

    pub(crate) fn publish(&self, events: u64, now_ps: u64, work: (u64, u64)) {
        self.events.store(events, Ordering::Relaxed);
        self.now_ps.store(now_ps, Ordering::Relaxed);
        self.work_done.store(work.0, Ordering::Relaxed);
        self.work_total.store(work.1, Ordering::Relaxed);
    }
}
