//! The run: building the world and the processors' coroutines, the event loop, and the end of
//! a run (its checks and its statistics).
//!
//! Safety: the coroutines reach the [`World`] through a raw pointer that the scheduler passes
//! at every resume. The scheduler never holds a reference into the world across a resume, and
//! a coroutine never holds one across a yield, so the two never alias.
//!
//! Deadlock: no live (non-cross-traffic) event and no application packet in flight (packets behind
//! cross-traffic move as soon as it does: I/O sinks never block).

use super::control::RunControl;
use super::error::SimError;
use super::node::SimNode;
use super::state::{Event, EventCounts, EventKind, MainState, Recording, Wait};
use super::stats::collect_stats;
use super::world::World;
use crate::machine::MachineConfig;
use crate::msg::{MessageRecord, Target};
use commlab_api::{Program, ReceiveMode, RunOutput};
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult};
use std::sync::Arc;

/// How many events run between two looks at the run's [`RunControl`] (a power of two).
const CONTROL_EVERY_EVENTS: u64 = 1 << 12;

/// Bytes of each processor's coroutine stack (a multiple of the page size): address space,
/// of which only the pages a processor touches take memory. Far above what applications use
/// (below), for the margin unoptimised builds need.
pub const STACK_BYTES: usize = 256 * 1024;
/// The most of its stack an application may use, and what the memory estimate counts per
/// stack. Measured with [`RunControl::measure_stacks`]: the deepest of every application and
/// variant is about 9 KB in a release build; a test fails any that goes beyond this.
pub const STACK_USE_BYTES: usize = 32 * 1024;
/// Host bytes per processor besides its stack and cache tags (its `Proc`, memory-side and
/// network state, inbox), rounded up from measurements.
const PROC_BYTES: u64 = 8 * 1024;

/// Estimated host memory of the machine's own state before any application data: per processor
/// a coroutine stack and a fixed share (first), and every cache's tag array (second). Saturates
/// instead of overflowing, so an absurd machine gives an absurd (refusable) figure.
pub(crate) fn machine_bytes(cfg: &MachineConfig) -> (u64, u64) {
    let n = cfg.nprocs() as u64;
    let ways = cfg.mem.associativity.max(1);
    let cache_lines = (cfg.mem.cache_lines / ways).max(1).saturating_mul(ways);
    let procs = (STACK_USE_BYTES as u64 + PROC_BYTES).saturating_mul(n);
    // Per cache line the way's word, and its LRU stamp in a set-associative cache
    // (`mem::cache::way_bytes`): the most the caches can cost, since they start as zeroed
    // memory and pages of sets no processor touches are never mapped.
    let per_line = crate::mem::cache::way_bytes(ways);
    (procs, cache_lines.saturating_mul(per_line).saturating_mul(n))
}

/// A processor's main thread: a coroutine resumed with the world's pointer.
type Coro<S> = Coroutine<*mut World<S>, (), ()>;

/// Run `program` on the machine `cfg`; `checked` switches the coherence invariant checker on.
/// With a `control`, every [`CONTROL_EVERY_EVENTS`] events the loop publishes its progress
/// there and stops with [`SimError::Cancelled`] if it was asked to; it never reads anything else
/// from it, so a run that is not stopped simulates exactly what it would without one.
pub fn run<P: Program>(
    cfg: Arc<MachineConfig>,
    program: Arc<P>,
    checked: bool,
    recording: Recording,
    control: Option<&RunControl>,
) -> Result<RunOutput<P::State>, SimError> {
    let started = std::time::Instant::now();
    let mut world = World::new(&cfg, &*program, checked, recording)?;
    let wp: *mut World<P::State> = &mut *world;
    let mut coros = coroutines(&program, cfg.nprocs())?;
    // SAFETY (all `unsafe { &mut *wp }` here and in `event_loop`): no reference into the world
    // outlives the statement that makes it, and none is held while a coroutine runs.
    unsafe { &mut *wp }.start();
    let events = event_loop(wp, &mut coros, control)?;
    unsafe { &mut *wp }.check_end(events.total(), control)?;
    if let Some(c) = control.filter(|c| c.measuring_stacks()) {
        let deepest = coros.into_iter().map(|co| stack_bytes_used(&co.into_stack())).max().unwrap_or(0);
        c.record_stack_bytes(deepest as u64);
    } else {
        drop(coros);
    }
    // The last, partial stretch of interval statistics: close every stretch that starts before
    // the end.
    if let Some(len) = world.sampler.as_ref().map(|s| s.len) {
        let end = world.now;
        world.sample_until(end.saturating_add(len - 1));
    }
    let stats = collect_stats(&world, &events, started.elapsed().as_secs_f64())?;
    let memory = world.mem.take_data();
    let states = world.procs.into_iter().map(|p| p.state).collect();
    Ok(RunOutput { states, memory, stats })
}

/// Every processor's main thread as a coroutine on its own stack, running `Program::main`.
fn coroutines<P: Program>(program: &Arc<P>, n: usize) -> Result<Vec<Coro<P::State>>, SimError> {
    let mut coros: Vec<Coro<P::State>> = Vec::with_capacity(n);
    for id in 0..n {
        let prog = Arc::clone(program);
        let stack = DefaultStack::new(STACK_BYTES).map_err(|e| SimError::Internal(format!("coroutine stack: {e}")))?;
        coros.push(Coroutine::with_stack(stack, move |yielder, wp| {
            let mut node = SimNode::new(id, wp, yielder);
            prog.main(&mut node);
            node.flush();
        }));
    }
    Ok(coros)
}

/// The event loop: pop and handle events (a processor's wake-up resumes its coroutine) until
/// none keeps the run alive; returns how many events of each kind were queued and handled.
/// Stops with an error at the event or time limit, on the control's request, at the first
/// error, or when every unfinished processor is blocked with nothing in flight (deadlock).
fn event_loop<S>(
    wp: *mut World<S>,
    coros: &mut [Coro<S>],
    control: Option<&RunControl>,
) -> Result<EventCounts, SimError> {
    let cfg = Arc::clone(&unsafe { &*wp }.cfg);
    // Events handled so far: the event limit and the control's cadence go by it.
    let mut handled: u64 = 0;
    let mut counts = EventCounts::default();
    loop {
        let w = unsafe { &mut *wp };
        let Some((t, ev)) = w.q.pop() else { break };
        handled += 1;
        counts.count(ev.kind());
        if t >= w.next_sample_ps() {
            w.sample_until(t);
        }
        w.now = t;
        if handled > cfg.max_events {
            return Err(SimError::EventLimit { events: handled - 1, cycles: cfg.ps_to_cycles(t) });
        }
        if t > cfg.max_time_ps {
            return Err(SimError::TimeLimit { cycles: cfg.ps_to_cycles(t) });
        }
        if handled.is_multiple_of(CONTROL_EVERY_EVENTS) {
            if let Some(c) = control {
                let events = counts.total();
                c.publish(events, t, w.work);
                if c.stop_requested() {
                    return Err(SimError::Cancelled { cycles: cfg.ps_to_cycles(t), events });
                }
            }
        }
        match ev {
            Event::Wake { p, gen } => {
                let woke = resume(wp, coros, p as usize, gen);
                if woke != EventKind::WakeTimed {
                    counts.reclassify(EventKind::WakeTimed, woke);
                }
            }
            other => w.handle(other),
        }
        let w = unsafe { &mut *wp };
        if let Some(e) = w.take_fatal() {
            return Err(e);
        }
        if w.q.live() == 0 {
            if w.all_done() {
                break; // only cross-traffic remains
            }
            if w.net.app_packets_in_flight == 0 || w.q.len() == 0 {
                return Err(SimError::Deadlock(w.deadlock_report()));
            }
        }
    }
    Ok(counts)
}

/// `Event::Wake`: resume processor `p`'s main thread if `gen` is still its current generation,
/// until it yields or returns, then carry out what the network reported meanwhile. Returns the
/// wake-up's kind: it ended the processor's own time (`WakeTimed`), a wait (`WakeBlocked`), or
/// nothing (`WakeSuperseded`).
#[inline]
fn resume<S>(wp: *mut World<S>, coros: &mut [Coro<S>], p: usize, gen: u32) -> EventKind {
    let w = unsafe { &mut *wp };
    if w.procs[p].gen != gen {
        return EventKind::WakeSuperseded;
    }
    let woke = match w.procs[p].main {
        MainState::Timed { .. } => EventKind::WakeTimed,
        _ => EventKind::WakeBlocked,
    };
    w.procs[p].main = MainState::Running;
    match coros[p].resume(wp) {
        CoroutineResult::Yield(()) => {}
        CoroutineResult::Return(()) => {
            let w = unsafe { &mut *wp };
            w.proc_finished(p);
            w.try_dispatch(p);
        }
    }
    let w = unsafe { &mut *wp };
    w.drain_notices();
    woke
}

/// How deep a finished coroutine's stack went: its usable part (the top `STACK_BYTES`, above
/// the guard page) starts as fresh zeroed memory, so the lowest word written non-zero bounds
/// the deepest frame (a deepest frame that stored only zeros would go unseen: tests keep a wide
/// margin).
fn stack_bytes_used(stack: &DefaultStack) -> usize {
    use corosensei::stack::Stack;
    let top = stack.base().get();
    let lowest = top - STACK_BYTES;
    let words = STACK_BYTES / 8;
    // SAFETY: [lowest, top) is the stack's readable and writable part (the guard page lies
    // below `lowest`), and its coroutine has finished, so nothing writes it any more.
    let memory = unsafe { std::slice::from_raw_parts(lowest as *const u64, words) };
    let first_used = memory.iter().position(|&w| w != 0).unwrap_or(words);
    (words - first_used) * 8
}

impl<S> World<S> {
    /// The loop has ended: publish the last progress, and fail if a processor never finished or
    /// flow control still holds buffered messages.
    fn check_end(&mut self, events: u64, control: Option<&RunControl>) -> Result<(), SimError> {
        if let Some(c) = control {
            c.publish(events, self.now, self.work);
        }
        if !self.all_done() {
            return Err(SimError::Deadlock(self.deadlock_report()));
        }
        if self.flow.buffered_now() > 0 {
            return Err(SimError::Internal(format!(
                "flow control: {} messages still buffered when the run ended",
                self.flow.buffered_now()
            )));
        }
        Ok(())
    }

    fn handle(&mut self, ev: Event) {
        let now = self.now;
        match ev {
            Event::Net(ev) => self.net.handle(&mut self.q, now, ev),
            Event::HandlerDone { p } => self.on_handler_done(p as usize),
            // An SMP node's protocol processor is free, or a compute processor at a back-edge.
            Event::Dispatch { p } => {
                self.procs[p as usize].dispatch_queued = false;
                self.try_dispatch(p as usize);
            }
            Event::CrossGen { pair } => self.cross_gen(pair as usize),
            Event::OverflowDrain { p } => self.overflow_step(p as usize),
            Event::Proto { msg, dst } => self.mem_receive(dst as usize, msg),
            Event::OneSided { msg, node } => self.one_sided_arrive(node as usize, msg),
            Event::OneSidedServe { msg, node } => self.one_sided_serve(node as usize, msg),
            Event::Trap { p, body_ps } => {
                let msg = self.alloc_msg(MessageRecord::new(p, Target::Trap { body_ps }, Vec::new(), Vec::new()));
                self.procs[p as usize].inbox.push_back(msg);
                self.try_dispatch(p as usize);
            }
            Event::Wake { .. } => unreachable!("wake-ups are handled by the scheduler"),
        }
        self.drain_notices();
    }

    fn deadlock_report(&self) -> String {
        let cfg = &self.cfg;
        let mut lines = vec![format!(
            "at cycle {:.1} every unfinished processor is blocked and nothing in flight can wake it",
            cfg.ps_to_cycles(self.now)
        )];
        for (i, p) in self.procs.iter().enumerate() {
            let mode = match p.mode {
                ReceiveMode::Interrupt => "interrupt",
                ReceiveMode::Polling => "polling",
            };
            let what = match p.main {
                MainState::Done => continue,
                MainState::Blocked { wait, since, .. } => {
                    let w = match wait {
                        Wait::Cond(what) => format!("waits in wait_until(\"{what}\")"),
                        Wait::Barrier(e) => format!(
                            "waits at barrier #{e} ({} child arrivals pending, released through #{})",
                            p.barrier.arrivals, p.barrier.released
                        ),
                        Wait::NiOutput => "waits for NI output queue space".to_string(),
                        Wait::Drain => "waits for its handlers to drain".to_string(),
                        Wait::Miss(line) => format!("waits for a miss on line {line}"),
                        Wait::PrefetchBuffer => "waits for a prefetch-buffer entry".to_string(),
                        Wait::OneSided => "waits for its one-sided (get/put) requests".to_string(),
                        Wait::Credit(d) => format!("waits for flow-control credit to send to P{d}"),
                        Wait::Tag(line) => format!("waits for Tempest user block {line}'s tag to allow its access"),
                        Wait::Spin(what, line) => {
                            let addr = line * self.cfg.mem.line_bytes;
                            let holder = self
                                .mem
                                .lock_holder(addr..addr + self.cfg.mem.line_bytes)
                                .map(|h| format!(", held by P{h}"))
                                .unwrap_or_default();
                            format!("spins in {what} on line {line} (address {addr:#x}{holder})")
                        }
                    };
                    format!("{w} since cycle {:.1}", cfg.ps_to_cycles(since))
                }
                other => format!("{other:?}"),
            };
            lines.push(format!("  P{i}: {what}; {} messages waiting; receives by {mode}", p.inbox.len()));
        }
        let done = self.procs.iter().filter(|p| p.main == MainState::Done).count();
        if done > 0 {
            lines.push(format!("  ({done} processors finished)"));
        }
        lines.push(format!("  network: {}", self.net.stuck_summary()));
        lines.join("\n")
    }
}
