//! commlab-apps' integration tests: the applications and microbenchmarks on simulated machines.
//!
//! One test binary per crate: each file below is a module of it (the files keep their paths,
//! so `tests/FILE.rs::fn` still names a test). Separate binaries would each compile and link
//! the workspace's generic application code against the simulator again, which made most of
//! CI's time.

mod common;

mod apps;
mod blizzard_apps;
mod copy_transfer;
mod counters;
mod fft2d;
mod jacobi;
mod lazy;
mod micro;
mod moldyn;
mod net_models;
mod poll_mechanism;
mod remote_validation;
mod runtime;
mod sparse;
mod unstruc;
