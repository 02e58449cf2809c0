//! Runtime primitives on a machine with both coherent shared memory and messages: remote
//! thread invocation ([`rti`]), a remote-to-local block copy ([`memcpy`]) and a
//! copy-then-compute kernel ([`accum`]), each once with shared memory only and once with
//! messages.
//!
//! What the three share: processor 0 does the work (the invoker, the copier) and its partner
//! is `--param hops` network hops away; a block that must start *clean at a remote home* (no
//! copy in the copier's cache, memory up to date) is written by its home and then read once
//! by a third processor, the one nearest the home, which takes the home's dirty copy back to
//! memory ([`clean_remote_block`]).
//!
//! Timing starts after a barrier and [`SETTLE_CYCLES`] of idling, so no barrier message is in
//! flight; the timed part has no barrier at its end (the others' arrivals would interrupt the
//! measured processors): processors with no part in it finish at once, a home that serves a
//! request does so in its handler after its main thread has returned, and `rti`'s invoker
//! idles [`SETTLE_CYCLES`] before each invocation, by which time the invokee's scheduler is
//! idle again.

pub mod accum;
pub mod memcpy;
pub mod rti;
pub(crate) mod sched;
pub mod signal;
pub mod update;

use crate::app::AppError;
use crate::params::Params;
use commlab_api::{Addr, Backend, HandlerCtx, HandlerId, Message, Node, ProcId};
use sched::Sched;

/// The processor that does the work: the invoker, the copier.
pub(crate) const WORKER: ProcId = 0;

/// Idle time after a barrier before timing begins and before each measured operation, so the
/// barrier's own messages (which interrupt processors) are over and none straddles the start
/// of the timed region: long enough on a machine whose messages cost tens of microseconds (as
/// `miss-latency`'s).
pub(crate) const SETTLE_CYCLES: u64 = 20_000;

/// The first processor `hops` hops from [`WORKER`]; the error names the parameter.
/// (The nearest processor when `hops` was not given and none is that far: [`Params::at_hops`].)
pub(crate) fn partner_at<B: Backend>(backend: &B, params: &Params, app: &str, hops: usize) -> Result<ProcId, AppError> {
    if backend.nprocs() < 2 {
        return Err(AppError::Input(format!(
            "{app} needs at least 2 processors, the machine has {}",
            backend.nprocs()
        )));
    }
    debug_assert_eq!(WORKER, 0);
    params
        .at_hops(backend, hops)
        .ok_or_else(|| AppError::Input(format!("--param hops={hops}: no processor is {hops} hops from processor 0")))
}

/// The processor nearest `home` other than `home` and [`WORKER`] (ties by id), which reads a
/// block in set-up so that the home's dirty copy goes back to memory.
pub(crate) fn cleaner_for<B: Backend>(backend: &B, app: &str, home: ProcId) -> Result<ProcId, AppError> {
    (0..backend.nprocs()).filter(|&p| p != home && p != WORKER).min_by_key(|&p| (backend.hops(home, p), p)).ok_or_else(
        || {
            AppError::Input(format!(
                "{app}: the shared-memory variants need at least 3 processors (the copier, the source's home and a \
                 third that leaves the source clean in memory), the machine has {}",
                backend.nprocs()
            ))
        },
    )
}

/// Untimed set-up of a block homed at `home` holding `values`: the home stores them (its
/// cache holds them dirty), then `cleaner` reads one word of every line, which writes each line
/// back to memory and leaves it Shared at the home and the cleaner. The worker's reads are then
/// clean remote misses served from the home's memory. Every processor calls this.
pub(crate) fn clean_remote_block<N: Node>(
    node: &mut N,
    base: Addr,
    values: &[u64],
    home: ProcId,
    cleaner: ProcId,
    line_words: usize,
) {
    if node.id() == home {
        for (i, &v) in values.iter().enumerate() {
            node.store(base.word(i), v);
        }
    }
    node.barrier();
    if node.id() == cleaner {
        for i in (0..values.len()).step_by(line_words) {
            node.load(base.word(i));
        }
    }
    node.barrier();
}

/// MB/s of `bytes` moved in `cycles` on a machine of `mhz` (bytes per microsecond).
pub(crate) fn mbytes_per_s(bytes: usize, cycles: f64, mhz: f64) -> f64 {
    bytes as f64 * mhz / cycles
}

/// The distance in hops from [`WORKER`] to its partner (the `hops` parameter, unless it was
/// defaulted and no processor is that far) and the partner.
pub(crate) fn partner_param<B: Backend>(backend: &B, params: &Params, app: &str) -> Result<(usize, ProcId), AppError> {
    let hops: usize = params.get("hops", ("a whole number >= 0", |_: usize| true))?;
    let partner = partner_at(backend, params, app, hops)?;
    Ok((backend.hops(WORKER, partner), partner))
}

/// How `memcpy` and `accum` reach a remote block: a load loop (`sm`), the same loop
/// prefetching one line ahead (`sm-pf`), or a DMA copy by request and bulk reply (`mp`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Reach {
    Loop,
    Prefetch,
    Dma,
}

impl Reach {
    pub(crate) fn of_variant(app: &str, variant: &str) -> Reach {
        match variant {
            "sm" => Reach::Loop,
            "sm-pf" => Reach::Prefetch,
            "mp" => Reach::Dma,
            other => unreachable!("{app} variant `{other}` is listed but not handled"),
        }
    }

    /// The loop's step at word `i` of a `words`-word block at `src`: with `sm-pf`, at the top
    /// of each line, prefetch the next line.
    pub(crate) fn prefetch_ahead<N: Node>(self, node: &mut N, src: Addr, i: usize, words: usize, line_words: usize) {
        if self == Reach::Prefetch && i.is_multiple_of(line_words) && i + line_words < words {
            node.prefetch_read(src.word(i + line_words));
        }
    }

    /// Refuse, before anything runs, a machine whose active messages cannot carry the `mp`
    /// copy's request (source, length, destination: [`FETCH_ARGS`] arguments).
    pub(crate) fn check_messages<B: Backend>(self, backend: &B, app: &str) -> Result<(), AppError> {
        let most = backend.max_am_args();
        if self == Reach::Dma && most < FETCH_ARGS {
            return Err(AppError::Input(format!(
                "{app} mp asks for the block with one active message of {FETCH_ARGS} arguments (source, length, destination), but this machine's messages carry at most {most} (messaging.max_arg_words = {}); use a machine with messaging.max_arg_words >= {}",
                2 * most,
                2 * FETCH_ARGS
            )));
        }
        Ok(())
    }

    /// The processor that leaves the block clean at its home in set-up (the loops need one; a
    /// DMA reads memory whatever the caches hold, and [`WORKER`] stands in).
    pub(crate) fn cleaner<B: Backend>(self, backend: &B, app: &str, home: ProcId) -> Result<ProcId, AppError> {
        match self {
            Reach::Dma => Ok(WORKER),
            Reach::Loop | Reach::Prefetch => cleaner_for(backend, app, home),
        }
    }
}

/// The `mp` copy's two messages: [`WORKER`] sends `FETCH_REQUEST` (the source's address, its
/// length and the destination's address) to the block's home, whose handler replies with the
/// block in one bulk (DMA) message, `FETCH_REPLY`. A program with this copy lists
/// [`on_fetch_request`] and [`on_fetch_reply`] as handlers 0 and 1.
pub(crate) const FETCH_REQUEST: HandlerId = HandlerId(0);
pub(crate) const FETCH_REPLY: HandlerId = HandlerId(1);

/// A processor's side of the `mp` copy.
#[derive(Default)]
pub(crate) struct Fetch {
    /// The block, as the home's memory holds it (the home only).
    pub source: Vec<u64>,
    /// The copy the reply brought (the worker only).
    pub received: Vec<u64>,
    pub arrived: bool,
    /// What the reply's handler pays to make the waiting thread runnable (`costs.sched_wake`).
    pub wake_cycles: u64,
}

/// The arguments of the `mp` copy's request.
pub(crate) const FETCH_ARGS: usize = 3;

/// The `mp` copy from the worker's side: ask `home` for the block at `src` of `words` words
/// (the request names the source, its length and the destination, `dst`), and wait, blocked,
/// for the reply's DMA: its handler makes the thread runnable and the scheduler resumes it
/// (`sched`). The block's values are then in the state's `received`.
pub(crate) fn fetch_block<N: Node>(node: &mut N, home: ProcId, src: Addr, words: usize, dst: Addr, sched: &Sched)
where
    N::State: HasFetch,
{
    let request: [u64; FETCH_ARGS] = [src.0, words as u64, dst.0];
    node.send_am(home, FETCH_REQUEST, &request);
    node.wait_until("the copy's DMA reply", |s: &N::State| s.fetch_ref().arrived);
    node.compute(sched.resume_cycles());
}

/// A program state that holds a [`Fetch`].
pub(crate) trait HasFetch {
    fn fetch(&mut self) -> &mut Fetch;
    fn fetch_ref(&self) -> &Fetch;
}

pub(crate) fn on_fetch_request<S: HasFetch>(s: &mut S, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    ctx.send_bulk(m.src, FETCH_REPLY, &[], &[&s.fetch().source]);
}

pub(crate) fn on_fetch_reply<S: HasFetch>(s: &mut S, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    let f = s.fetch();
    ctx.compute(f.wake_cycles);
    f.received = m.payload.to_vec();
    f.arrived = true;
}
