//! commlab-sim's integration tests: the engine, memory system, protocols and message paths.
//!
//! One test binary per crate: each file below is a module of it (the files keep their paths,
//! so `tests/FILE.rs::fn` still names a test). Separate binaries would each compile and link
//! the workspace's generic application code against the simulator again, which made most of
//! CI's time.

mod control;
mod delivery_modes;
mod engine;
mod flow_control;
mod home_blocks;
mod instrumentation;
mod limitless;
mod memory;
mod message_classes;
mod one_sided;
mod overflow_trap;
mod page_protection;
mod private_memory;
mod snooping;
mod tempest;
