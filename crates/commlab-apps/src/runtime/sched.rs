//! The runtime's thread scheduler, as the Alewife runtime study measured its primitives: "in
//! the context of a complete thread scheduling and migration system" (§4.3). What its code
//! costs the processor is in the machine's `[costs]`, each an instruction count of the code
//! path (the preset writes the count beside it):
//!
//! - `rti_call`: a thread's call of the runtime's invoke routine and its return, the code
//!   pointer and arguments in registers.
//! - `sched_wake`: a handler makes a thread runnable (puts it on its processor's ready queue);
//!   `rti_enqueue` and `rti_enqueue_word` remain the cost of queueing a new thread's descriptor.
//! - `sched_dequeue`: the scheduler takes the ready queue's head (with message interrupts
//!   masked around it, as handlers also touch the queue); the queue's words are references.
//! - `sched_thread_start`: creating and entering a thread from its descriptor, or resuming a
//!   blocked one: a stack from the free list, its first frame, the arguments into registers,
//!   the descriptor freed, the switch.
//! - `sched_idle_loop`: one pass of an idle scheduler's loop: a look at its own ready queue and
//!   the choice of the next processor to steal from (round robin).
//! - `sched_refuse`: a processor's handler for a steal request it cannot serve (its lazy task
//!   queue is empty): the look at the queue and the refusal (whose send is the machine's).
//!
//! A thread that waits for a message's data ([`Sched::resume_cycles`]) is blocked and resumed
//! through the scheduler: the handler that brings the data pays `sched_wake`, the scheduler
//! `sched_dequeue` and `sched_thread_start`.

use crate::app::{cost, AppError};
use commlab_api::Backend;

/// The scheduler's costs, resolved from the machine before a program is built.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Sched {
    pub call: u64,
    pub wake: u64,
    pub dequeue: u64,
    pub thread_start: u64,
    pub idle_loop: u64,
    pub refuse: u64,
}

impl Sched {
    pub(crate) fn of<B: Backend>(backend: &B) -> Result<Sched, AppError> {
        Ok(Sched {
            call: cost(backend, "rti_call")?,
            wake: cost(backend, "sched_wake")?,
            dequeue: cost(backend, "sched_dequeue")?,
            thread_start: cost(backend, "sched_thread_start")?,
            idle_loop: cost(backend, "sched_idle_loop")?,
            refuse: cost(backend, "sched_refuse")?,
        })
    }

    /// The scheduler's work to resume a thread blocked on a message, once the message's
    /// handler has made it runnable: take it off the ready queue and switch to it.
    pub(crate) fn resume_cycles(&self) -> u64 {
        self.dequeue + self.thread_start
    }
}
