//! commlab-cli's integration tests: the `commlab` command, its outputs, and the map and module checks.
//!
//! One test binary per crate: each file below is a module of it (the files keep their paths,
//! so `tests/FILE.rs::fn` still names a test). Separate binaries would each compile and link
//! the workspace's generic application code against the simulator again, which made most of
//! CI's time. `memory_estimate.rs` is the exception, a binary of its own (see Cargo.toml).

mod common;

mod architecture_map;
mod bench;
mod broken_pipe;
mod characterize;
mod cli;
mod contradictions;
mod detail_stats;
mod every_command;
mod experiment;
mod extreme_values;
mod fuzz_inputs;
mod host;
mod jobs;
mod limits;
mod machine_keys;
mod machines;
mod module_graph;
mod output_format;
mod plot;
mod poll_mechanism;
mod progress;
mod reproduce;
mod reproducible_records;
mod sweep;
mod trace;
mod unstruc;
mod words;
