//! The network overflow trap (Alewife; `messaging.overflow_*`, off unless the machine sets
//! `messaging.overflow_timeout_cycles`, and then nothing here runs).
//!
//! The network's detector (`net/overflow.rs`) reports a processor whose NI input queue has been
//! full, with packets waiting for its ejection link, for the timeout. The engine then puts a
//! `Target::OverflowTrap` record in the processor's inbox right behind the handler that is
//! running, if any (handlers are atomic), so the trap is the next thing the processor does; it
//! is taken at once, as an interrupt, in either receive mode (`try_dispatch`). The trap runs in
//! steps, each occupying the processor as a handler does (`World::occupy`, message overhead,
//! interrupted work extended, the main thread held, so it sends nothing): entry; then, one at a
//! time, each message in the inbox that the processor's software would handle
//! (`Target::drained_on_overflow`) and that is still in the NI is copied into memory
//! (`in_memory`), its NI slot freed at the end of its copy, which lets the next waiting packet
//! in, and which the trap copies too if it arrives before the copying is over; then exit. The
//! record is then removed as a handler's message is (`on_handler_done`), and the detector
//! re-armed. The copied messages stay in the inbox in arrival order and are dispatched by the
//! usual rules, but from memory: `messaging.overflow_dispatch_cycles` instead of interrupt
//! entry and exit (or poll dispatch), and no NI slot to free at their end.
//!
//! Invariant: every message is handled exactly once whether or not it was copied (it never
//! leaves the inbox until its handler ends); the trap's time is message overhead, so the
//! categories still sum to busy time (`tests/overflow_trap.rs`).
//!
//! *Overflow trap*: counters `overflow_traps`, `overflow_messages_drained`, `overflow_trap_cycles`
//! (timed region).

use super::state::Event;
use super::world::World;
use crate::machine::MachineConfig;
use crate::msg::{MessageRecord, Target};
use crate::queue::Priority;
use commlab_api::Category;

/// Dispatching a message the trap copied into memory.
pub(super) fn dispatch_ps(cfg: &MachineConfig) -> u64 {
    cfg.msg.overflow.map_or(0, |o| o.dispatch_ps)
}

impl<S> World<S> {
    /// The detector reports processor `p`: queue its trap right behind the running handler.
    pub(super) fn overflow_trap(&mut self, p: usize) {
        let msg = self.alloc_msg(MessageRecord::new(p as u32, Target::OverflowTrap, Vec::new(), Vec::new()));
        let proc = &mut self.procs[p];
        let at = usize::from(proc.handler_active).min(proc.inbox.len());
        proc.inbox.insert(at, msg);
        self.try_dispatch(p);
    }

    /// The trap starts on `p`'s processor (its record heads the inbox): entry.
    pub(super) fn start_overflow_trap(&mut self, p: usize) {
        let costs = self.cfg.msg.overflow.expect("a machine without the trap never reports one");
        let proc = &mut self.procs[p];
        proc.handler_active = true;
        proc.overflow_scan = 1; // behind the trap's own record
        if !self.cfg.smp_nodes {
            proc.acct.switch(Category::MessageOverhead, self.now);
        }
        self.overflow.traps += 1;
        self.overflow_busy(p, costs.entry_ps, Event::OverflowDrain { p: p as u32 });
    }

    /// `Event::OverflowDrain`: the last step is over. Free the slot of the message just copied,
    /// then copy the next one still in the NI, or leave the trap.
    pub(super) fn overflow_step(&mut self, p: usize) {
        let costs = self.cfg.msg.overflow.expect("trap on a machine with one");
        if self.procs[p].overflow_copy.take().is_some() {
            self.net.consume(&mut self.q, self.now, p);
        }
        let proc = &self.procs[p];
        let next = proc.inbox.iter().copied().enumerate().skip(proc.overflow_scan).find(|&(_, m)| {
            let rec = self.msg(m);
            rec.target.drained_on_overflow() && !rec.in_memory
        });
        match next {
            Some((i, m)) => {
                self.procs[p].overflow_scan = i + 1;
                let rec = self.msg_mut(m);
                rec.in_memory = true;
                let words = rec.args.len() + rec.payload.len();
                self.procs[p].overflow_copy = Some(m);
                self.overflow.drained += 1;
                self.overflow_busy(p, costs.drain_ps(words), Event::OverflowDrain { p: p as u32 });
            }
            None => self.overflow_busy(p, costs.exit_ps, Event::HandlerDone { p: p as u32 }),
        }
    }

    /// One step of the trap: `ps` on the processor, then `next`.
    fn overflow_busy(&mut self, p: usize, ps: u64, next: Event) {
        let now = self.now;
        self.overflow.trap_ps += ps;
        self.occupy(p, now, ps);
        self.push(now + ps, Priority::HandlerDone, next);
    }
}
