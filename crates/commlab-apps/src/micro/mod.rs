//! Microbenchmarks: messaging latency, throughput, bulk bandwidth and stress; shared-memory
//! miss and lock latency; barriers.

pub mod alltoall_stress;
pub mod am_latency;
pub mod am_throughput;
pub mod barrier;
pub mod bisection_bw;
pub mod bulk_bw;
pub mod lock_latency;
pub mod mem_refs;
pub mod miss_latency;
pub mod remote_bw;

use commlab_api::ReceiveMode;

/// The two ways of receiving, as variant names.
pub(crate) const MP_VARIANTS: &[&str] = &["mp-int", "mp-poll"];

pub(crate) fn receive_mode(variant: &str) -> ReceiveMode {
    match variant {
        "mp-poll" => ReceiveMode::Polling,
        _ => ReceiveMode::Interrupt,
    }
}
