//! `rti`: remote thread invocation. Every processor has a task queue of thread descriptors (a
//! code pointer and `args` argument words); its scheduler takes a descriptor off its queue and
//! starts the thread it names. Processor 0 (the invoker) starts `rounds` threads, one at a
//! time, on the processor `hops` hops away (the invokee), each after the invokee's scheduler
//! has gone idle again.
//!
//! `--param system=complete` (the default): as the study measured it, "in the context of a
//! complete thread scheduling and migration system" (§4.3), whose costs are the machine's
//! (`runtime::sched`). The invoker calls the runtime's invoke routine (`costs.rti_call`).
//! Every processor but the invoker runs its scheduler's idle loop: a look at its own ready
//! queue, then one attempt to steal work from the next processor's lazy task queue, round
//! robin (`costs.sched_idle_loop` a pass); there is none to steal, so each attempt fails. The
//! invokee finds the invocation at its next look, dequeues it (`costs.sched_dequeue`; with
//! shared memory under the queue's lock) and creates and enters the thread
//! (`costs.sched_thread_start`). `system=minimal`: no call, no idle loop (the invokee waits
//! on its queue alone, and the others finish at once), no lock to dequeue, no thread creation:
//! the invoked thread counts as running when its descriptor has been read.
//!
//! - `sm`: the queue is in shared memory homed at the invokee: a lock word, a tail index and
//!   the descriptor slots, the lock and the tail each on a line of their own. The invoker takes
//!   the lock (`Node::lock`), reads the tail, writes the descriptor's words into slot `tail`,
//!   writes `tail + 1`, and unlocks. The invokee's idle scheduler reads the tail in its cache
//!   (its head index is private: it is the only consumer); the invoker's write takes the line
//!   away, the invokee reads the tail again, then the descriptor. A steal attempt reads the
//!   victim's lazy task queue (its top and bottom words, one line homed at the victim, never
//!   written here: cache hits once read). The queue has a slot for every invocation of the run,
//!   so it never fills and its full check (one more read, of the head) is not modelled.
//! - `mp`: the invoker marshals the code pointer and arguments into one active message
//!   (interrupt receive). The handler appends the descriptor to the invokee's private queue,
//!   atomically (handlers are): `costs.rti_enqueue` (tail, full check) plus
//!   `costs.rti_enqueue_word` per descriptor word stored. The scheduler dequeues it (simulated
//!   reads of the descriptor's words from the private ring the handler wrote, warmed into the
//!   cache before timing, as the handler's stores would leave it). A steal attempt is a request
//!   message to the victim, whose handler refuses (`costs.sched_refuse` and a reply message);
//!   the thief waits for the reply, so an invocation that arrives meanwhile waits for it.
//!
//! `counters.t_invoker`: from the start of an invocation until the invoker may proceed (after
//! the unlock; after the send). `counters.t_invokee`: from the start until the invoked thread
//! starts running. Both in cycles, means over the rounds. `counters.steal_attempts`: the idle
//! loops' failed steals (complete system). The check: the invokee ran every invoked thread
//! exactly once, in order, the function its code pointer names, with its arguments intact.

use super::sched::Sched;
use super::{partner_at, SETTLE_CYCLES, WORKER};
use crate::app::common::HOPS;
use crate::app::{barrier_kind_of, cost, result, run_err, AppError, AppInfo, AppResult, Check, ParamDoc};
use crate::params::{Params, COUNT};
use commlab_api::SetCounter;
use commlab_api::{
    Addr, Backend, BarrierKind, Handler, HandlerCtx, HandlerId, Message, Node, Placement, ProcId, Program, ReceiveMode,
};
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

commlab_api::counters! {
    /// The counters this app reports beside the engine's (`commlab counters rti`), each declared
    /// once; its code sets them through these declarations.
    pub COUNTERS [HOPS];
    T_INVOKER = "t_invoker", "cycles",
        "mean time the invoker spends from starting an invocation to proceeding";
    T_INVOKEE = "t_invokee", "cycles",
        "mean time from an invocation's start to the invoked thread running at the invokee";
    STEAL_ATTEMPTS = "steal_attempts", "count",
        "steal attempts the complete scheduling system made, all processors (complete system only)";
}

pub const INFO: AppInfo = AppInfo {
    name: "rti",
    summary: "remote thread invocation into a task queue: lock + shared writes (sm) or one active message (mp), in a complete scheduling system or a minimal one; counters.t_invoker, t_invokee",
    variants: &["sm", "mp"],
    counters: COUNTERS,
    params: &[
        ParamDoc { name: "hops", default: "1", doc: "hops from the invoker (processor 0) to the invokee (by default 1, or the nearest processor where none is 1 hop away, as natively: counters.hops)" },
        ParamDoc { name: "rounds", default: "8", doc: "invocations measured (one at a time)" },
        ParamDoc { name: "args", default: "2", doc: "argument words per thread descriptor (0 to 7)" },
        ParamDoc { name: "system", default: "complete", doc: "complete (the study's: the invoke routine's call, every other processor's idle scheduler looking for work to steal, the queue lock to dequeue, thread creation) or minimal (the invokee waits on its queue alone)" },
    ],
};

const ENQUEUE: HandlerId = HandlerId(0);
const STEAL: HandlerId = HandlerId(1);
const REFUSE: HandlerId = HandlerId(2);
const DONE: HandlerId = HandlerId(3);
/// Words between the lock and the tail (512 bytes: a line each on any machine).
const PAD_WORDS: usize = 64;
/// Descriptors in the `mp` invokee's private ring.
const RING: usize = 16;
/// Most argument words a descriptor carries.
const MAX_ARGS: usize = 7;

/// The thread table: a code pointer is `CODE_BASE + CODE_STRIDE * k` for function `k`.
const CODE_BASE: u64 = 0x1000;
const CODE_STRIDE: u64 = 0x40;
type Thread = fn(&mut State, &[u64]);
const THREADS: [Thread; 3] = [thread_a, thread_b, thread_c];

/// Each thread records which function ran and the arguments it was given.
fn thread_a(s: &mut State, args: &[u64]) {
    s.ran.push((0, args.to_vec()));
}
fn thread_b(s: &mut State, args: &[u64]) {
    s.ran.push((1, args.to_vec()));
}
fn thread_c(s: &mut State, args: &[u64]) {
    s.ran.push((2, args.to_vec()));
}

/// Run the thread a descriptor names; a code pointer that names none is counted as a fault.
fn run_thread(s: &mut State, desc: &[u64]) {
    let k = desc[0].wrapping_sub(CODE_BASE) / CODE_STRIDE;
    match THREADS.get(k as usize) {
        Some(f) if desc[0] >= CODE_BASE && desc[0].is_multiple_of(CODE_STRIDE) => f(s, &desc[1..]),
        _ => s.faults += 1,
    }
}

/// The descriptor of invocation `r`: code pointer, then `args` argument words.
fn descriptor(r: usize, args: usize) -> Vec<u64> {
    let code = CODE_BASE + CODE_STRIDE * (r % THREADS.len()) as u64;
    let mut d = vec![code];
    d.extend((0..args).map(|k| (r as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(8 * k as u32)));
    d
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Shared,
    Messages,
}

struct Rti {
    kind: Kind,
    invokee: ProcId,
    rounds: usize,
    args: usize,
    enqueue_cycles: u64,
    /// The complete system's costs; `None`: the minimal system.
    sched: Option<Sched>,
}

#[derive(Default)]
pub struct State {
    /// Invoker: start of each invocation and when it could proceed.
    started: Vec<f64>,
    proceeded: Vec<f64>,
    /// Invokee: when each thread started running; the threads that ran.
    running: Vec<f64>,
    ran: Vec<(usize, Vec<u64>)>,
    faults: u64,
    /// Invokee (`mp`): the private queue and what the handler charges per enqueue.
    queue: VecDeque<Vec<u64>>,
    enqueue_cycles: u64,
    overflows: u64,
    /// Invokee: descriptors dequeued so far (its private head index).
    head: usize,
    /// Complete system: the next processor to steal from, a steal's reply (`mp`), the end of
    /// the run (`mp`), what a refusal costs, the failed steal attempts.
    next_victim: usize,
    reply: bool,
    done: bool,
    refuse_cycles: u64,
    steal_attempts: u64,
}

fn on_enqueue(s: &mut State, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    ctx.compute(s.enqueue_cycles);
    if s.queue.len() >= RING {
        s.overflows += 1;
        return;
    }
    s.queue.push_back(m.args.to_vec());
}

/// A steal request: this processor's lazy task queue is empty; refuse.
fn on_steal(s: &mut State, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    ctx.compute(s.refuse_cycles);
    ctx.send_am(m.src, REFUSE, &[]);
}

fn on_refuse(s: &mut State, _: &mut dyn HandlerCtx, _: &Message<'_>) {
    s.reply = true;
}

fn on_done(s: &mut State, _: &mut dyn HandlerCtx, _: &Message<'_>) {
    s.done = true;
}

/// `sm`'s shared words.
#[derive(Clone, Copy)]
struct Words {
    lock: Addr,
    tail: Addr,
    slots: Addr,
    /// Every processor's lazy task queue (top and bottom on one line homed at it).
    deques: Addr,
    /// The end of the run (homed at the invoker).
    done: Addr,
}

impl Rti {
    /// One pass of an idle scheduler beyond its look at its own queue: a failed steal attempt
    /// on the next processor, and the loop's own work.
    fn steal_attempt<N: Node<State = State>>(&self, node: &mut N, w: Option<Words>, sched: &Sched) {
        let (me, n) = (node.id(), node.nprocs());
        let victim = node.state(|s| {
            let v = s.next_victim;
            let mut next = (v + 1) % n;
            if next == me {
                next = (next + 1) % n;
            }
            s.next_victim = next;
            s.steal_attempts += 1;
            v
        });
        match w {
            Some(w) => {
                let dq = w.deques.word(victim * PAD_WORDS);
                let (top, bottom) = (node.load(dq), node.load(dq.word(1)));
                debug_assert!(top >= bottom, "no processor has work to steal");
            }
            None => {
                node.state(|s| s.reply = false);
                node.send_am(victim, STEAL, &[]);
                node.wait_until("a steal reply", |s| s.reply);
            }
        }
        node.compute(sched.idle_loop);
    }

    fn is_done<N: Node<State = State>>(&self, node: &mut N, w: Option<Words>) -> bool {
        match w {
            Some(w) => node.load(w.done) != 0,
            None => node.state(|s| s.done),
        }
    }

    /// The invokee's next thread: wait for it (the idle loop, or alone in the minimal system),
    /// dequeue it and start it; None when the run is over first (complete system).
    fn next_thread<N: Node<State = State>>(&self, node: &mut N, w: Option<Words>) -> Option<Vec<u64>> {
        let dw = 1 + self.args;
        let head = node.state(|s| s.head);
        let available = |node: &mut N| match w {
            Some(w) => node.load(w.tail) as usize > head,
            None => node.state(|s| !s.queue.is_empty()),
        };
        match self.sched {
            None => match w {
                Some(w) => {
                    node.spin_until("work in the task queue", w.tail, |t| t as usize > head);
                }
                None => node.wait_until("work in the task queue", |s| !s.queue.is_empty()),
            },
            Some(sched) => loop {
                if available(node) {
                    break;
                }
                if self.is_done(node, w) {
                    if available(node) {
                        break;
                    }
                    return None;
                }
                self.steal_attempt(node, w, &sched);
            },
        }
        if let Some(sched) = self.sched {
            node.compute(sched.dequeue);
        }
        let desc = match w {
            Some(w) => {
                let locked = self.sched.is_some();
                if locked {
                    node.lock(w.lock);
                    node.load(w.tail);
                }
                let d: Vec<u64> = (0..dw).map(|k| node.load(w.slots.word(head * dw + k))).collect();
                if locked {
                    node.unlock(w.lock);
                }
                d
            }
            None => {
                let ring = node.private_array(0);
                for k in 0..dw {
                    node.private_read(ring.word((head % RING) * dw + k));
                }
                node.state(|s| s.queue.pop_front()).unwrap_or_default()
            }
        };
        if let Some(sched) = self.sched {
            node.compute(sched.thread_start);
        }
        Some(desc)
    }
}

impl Program for Rti {
    type State = State;
    fn handlers(&self) -> Vec<Handler<State>> {
        vec![on_enqueue, on_steal, on_refuse, on_done]
    }
    fn receive_mode(&self) -> ReceiveMode {
        ReceiveMode::Interrupt
    }
    fn barrier_kind(&self) -> BarrierKind {
        barrier_kind_of(self.kind == Kind::Shared)
    }
    fn private_arrays(&self, id: ProcId) -> Vec<usize> {
        if id == self.invokee && self.kind == Kind::Messages {
            vec![RING * (1 + self.args)]
        } else {
            Vec::new()
        }
    }
    fn init_state(&self, id: ProcId, nprocs: usize) -> State {
        let mut next = (id + 1) % nprocs;
        if next == id {
            next = (next + 1) % nprocs;
        }
        State {
            enqueue_cycles: self.enqueue_cycles,
            refuse_cycles: self.sched.map_or(0, |s| s.refuse),
            next_victim: next,
            ..State::default()
        }
    }
    fn main<N: Node<State = State>>(&self, node: &mut N) {
        let (id, n) = (node.id(), node.nprocs());
        let dw = 1 + self.args;
        let w = match self.kind {
            Kind::Shared => Some(Words {
                lock: node.alloc_shared(PAD_WORDS, Placement::OnNode(self.invokee)),
                tail: node.alloc_shared(PAD_WORDS, Placement::OnNode(self.invokee)),
                slots: node.alloc_shared(self.rounds * dw, Placement::OnNode(self.invokee)),
                deques: node.alloc_shared(n * PAD_WORDS, Placement::Block),
                done: node.alloc_shared(PAD_WORDS, Placement::OnNode(WORKER)),
            }),
            Kind::Messages => None,
        };
        if id == self.invokee && self.kind == Kind::Messages {
            // The ring is the handler's working set: in the cache, as its stores leave it.
            let ring = node.private_array(0);
            for k in 0..RING * dw {
                node.private_write(ring.word(k));
            }
        }
        node.barrier();
        node.compute(SETTLE_CYCLES); // the barrier's messages are over before anything is timed
        node.begin_timing();
        if id == WORKER {
            for r in 0..self.rounds {
                node.progress(r as u64, self.rounds as u64);
                node.compute(SETTLE_CYCLES); // the invokee's scheduler is idle by now
                let desc = descriptor(r, self.args);
                let t0 = node.now_cycles();
                if let Some(sched) = self.sched {
                    node.compute(sched.call);
                }
                match w {
                    Some(w) => {
                        node.lock(w.lock);
                        let t = node.load(w.tail) as usize;
                        for (k, &v) in desc.iter().enumerate() {
                            node.store(w.slots.word(t * dw + k), v);
                        }
                        node.store(w.tail, t as u64 + 1);
                        node.unlock(w.lock);
                    }
                    None => node.send_am(self.invokee, ENQUEUE, &desc),
                }
                let t1 = node.now_cycles();
                node.state(|s| {
                    s.started.push(t0);
                    s.proceeded.push(t1);
                });
            }
            if self.sched.is_some() {
                // The end of the run, for the idle schedulers.
                match w {
                    Some(w) => node.store(w.done, 1),
                    None => {
                        for p in (0..n).filter(|&p| p != id) {
                            node.send_am(p, DONE, &[]);
                        }
                    }
                }
            }
        } else if id == self.invokee {
            for _ in 0..self.rounds {
                let Some(desc) = self.next_thread(node, w) else { break };
                let t = node.now_cycles();
                node.state(|s| {
                    s.head += 1;
                    s.running.push(t);
                    if desc.is_empty() {
                        s.faults += 1;
                    } else {
                        run_thread(s, &desc);
                    }
                });
            }
            if let Some(sched) = self.sched {
                // Idle again until the end of the run.
                while !self.is_done(node, w) {
                    self.steal_attempt(node, w, &sched);
                }
            }
        } else if let Some(sched) = self.sched {
            while !self.is_done(node, w) {
                self.steal_attempt(node, w, &sched);
            }
        }
    }
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    sum / n.max(1) as f64
}

pub fn run<B: Backend>(backend: &B, variant: &str, params: &Params) -> Result<AppResult, AppError> {
    let kind = match variant {
        "sm" => Kind::Shared,
        "mp" => Kind::Messages,
        other => unreachable!("rti variant `{other}` is listed but not handled"),
    };
    let hops: usize = params.get("hops", ("a whole number >= 0", |_: usize| true))?;
    let rounds: usize = params.get("rounds", COUNT)?;
    let args: usize = params.get("args", ("a whole number from 0 to 7", |v: usize| v <= MAX_ARGS))?;
    let complete = match params.raw("system") {
        "complete" => true,
        "minimal" => false,
        other => {
            return Err(AppError::Input(format!("--param system={other}: rti needs complete or minimal")));
        }
    };
    let invokee = partner_at(backend, params, INFO.name, hops)?;
    if kind == Kind::Messages && 1 + args > backend.max_am_args() {
        return Err(AppError::Input(format!(
            "--param args={args}: rti mp sends the code pointer and {args} arguments in one active message, but this \
             machine's messages carry at most {} words (use args <= {})",
            backend.max_am_args(),
            backend.max_am_args().saturating_sub(1)
        )));
    }
    let enqueue_cycles = match kind {
        Kind::Messages => cost(backend, "rti_enqueue")? + (1 + args) as u64 * cost(backend, "rti_enqueue_word")?,
        Kind::Shared => 0,
    };
    let sched = if complete { Some(Sched::of(backend)?) } else { None };
    let out = backend.run(Arc::new(Rti { kind, invokee, rounds, args, enqueue_cycles, sched })).map_err(run_err)?;

    let (inv, ee) = (&out.states[WORKER], &out.states[invokee]);
    let expected: Vec<(usize, Vec<u64>)> = (0..rounds)
        .map(|r| {
            let d = descriptor(r, args);
            (((d[0] - CODE_BASE) / CODE_STRIDE) as usize, d[1..].to_vec())
        })
        .collect();
    let wrong =
        (0..rounds).filter(|&r| ee.ran.get(r) != Some(&expected[r])).count() + ee.ran.len().saturating_sub(rounds);
    let timed = inv.started.len() == rounds && ee.running.len() == rounds;
    let ok = wrong == 0 && ee.faults == 0 && ee.overflows == 0 && ee.queue.is_empty() && timed;
    let t_invoker = mean(inv.started.iter().zip(&inv.proceeded).map(|(a, b)| b - a));
    let t_invokee = mean(inv.started.iter().zip(&ee.running).map(|(a, b)| b - a));
    let mut counters = BTreeMap::new();
    counters.set(&T_INVOKER, crate::app::cycles_figure(t_invoker, backend.cycles_per_us()));
    counters.set(&T_INVOKEE, crate::app::cycles_figure(t_invokee, backend.cycles_per_us()));
    counters.set(&HOPS, backend.hops(WORKER, invokee) as f64);
    if complete {
        counters.set(&STEAL_ATTEMPTS, out.states.iter().map(|s| s.steal_attempts).sum::<u64>() as f64);
    }
    let check = Check {
        ok,
        max_error: (wrong as u64 + ee.faults + ee.overflows) as f64,
        detail: format!(
            "{} of {rounds} invoked threads ran once, in order, with their arguments intact ({} bad code pointers, {} queue overflows)",
            rounds - wrong.min(rounds),
            ee.faults,
            ee.overflows
        ),
    };
    Ok(result(out.stats, counters, check))
}
