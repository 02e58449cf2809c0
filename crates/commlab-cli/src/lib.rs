//! The commlab command's library: one module per subcommand (`run`, `sweep`, `experiment`,
//! `plot`, `machines`, `apps`, `validate`, `bench`, `reproduce`), what they share, and
//! [`embed`], the same operations as functions for a program that embeds commlab (the Python
//! package in `python/`).
//!
//! Shared modules: `failure` (the error and its exit status), `machine_arg` (loading
//! `--machine`), `machine_table` (measured preset figures), `record` (a run as a JSON line),
//! `output` (text and CSV of runs), `crossover`, `chart`, `memory_check`.
//!
//! Only this crate reads files, writes files and talks to the terminal; [`embed`] does neither
//! of the latter two (it returns text and records).

pub mod alloc_failure;
pub mod apps;
pub mod bench;
pub mod characterize;
mod chart;
mod copy_study;
mod crossover;
mod detail_stats;
pub mod embed;
pub mod experiment;
pub mod failure;
mod host;
mod instructions;
mod machine_arg;
pub mod machine_table;
pub mod machines;
mod memory_check;
mod output;
mod outputs;
pub mod plot;
pub mod progress;
pub mod record;
pub mod reproduce;
pub mod run;
pub mod sweep;
mod timeline;
mod trace_out;
pub mod validate;
mod variant_arg;
