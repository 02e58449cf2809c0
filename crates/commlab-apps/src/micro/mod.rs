//! Microbenchmarks of the messaging machine: latency, throughput, bulk bandwidth, stress.

pub mod alltoall_stress;
pub mod am_latency;
pub mod am_throughput;
pub mod bisection_bw;
pub mod bulk_bw;

use commlab_api::ReceiveMode;

/// The two ways of receiving, as variant names.
pub(crate) const MP_VARIANTS: &[&str] = &["mp-int", "mp-poll"];

pub(crate) fn receive_mode(variant: &str) -> ReceiveMode {
    match variant {
        "mp-poll" => ReceiveMode::Polling,
        _ => ReceiveMode::Interrupt,
    }
}
