//! The engine: the event loop, processor coroutines, handler dispatch and run results.
//!
//! Each simulated processor's main thread is a stackful coroutine running `Program::main`.
//! It runs only when the scheduler resumes it at a `Wake` event, takes zero simulated time
//! while running, and yields inside `Node` calls that take time (`Timed`) or block (`Blocked`).
//! Everything else (packets, handlers, cross-traffic) is an event the loop hands to `World`.
//!
//! The files, each depending only on those before it: `error.rs` ([`SimError`]), `control.rs`
//! ([`RunControl`]), `state.rs` (plain data: events, processor states, mechanism counters),
//! `world.rs` (`World`'s data and shared methods: scheduling, message records, launching,
//! cross-traffic), then the behaviour, each an `impl World` block of its own: `overflow.rs`,
//! `poll.rs` (mechanisms), `node.rs` (the `Node` interface a coroutine sees), `one_sided.rs`,
//! `dispatch.rs` (the delivery policy and handlers), `effects.rs` (carrying out the memory's
//! and network's reports), `stats.rs` (the run's statistics) and `run.rs` (the run and its
//! event loop). This file only declares them and re-exports what the crate uses.

mod control;
mod dispatch;
mod effects;
mod error;
mod node;
mod one_sided;
mod overflow;
mod poll;
mod run;
mod state;
mod stats;
mod world;

pub use control::RunControl;
pub use error::SimError;
pub(crate) use run::machine_bytes;
pub use run::{run, STACK_BYTES, STACK_USE_BYTES};
pub use state::Recording;
