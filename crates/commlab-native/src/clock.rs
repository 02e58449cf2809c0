//! Time: a monotonic clock read as nanoseconds since the run began, reported in host cycles.
//!
//! Every figure is measured with [`std::time::Instant`] (`CLOCK_MONOTONIC` on Linux, which
//! reads the TSC through the vDSO where the kernel trusts it). Nanoseconds become "host cycles"
//! at the rate [`host_clock`] measured once per process: on x86_64 the time-stamp counter's
//! rate, found by reading the TSC and the monotonic clock 20 ms apart; elsewhere a nominal
//! 1000 MHz (one cycle per nanosecond), which the backend says it is.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The host's cycle rate in MHz and how it was found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostClock {
    pub mhz: f64,
    /// `"tsc"` (measured time-stamp counter rate) or `"nominal"` (1000 MHz, no counter read).
    pub source: &'static str,
}

/// The host clock, measured on first use (about 20 ms) and kept for the process.
pub fn host_clock() -> HostClock {
    static CLOCK: OnceLock<HostClock> = OnceLock::new();
    *CLOCK.get_or_init(measure)
}

#[cfg(target_arch = "x86_64")]
fn measure() -> HostClock {
    use core::arch::x86_64::_rdtsc;
    // Each end reads both clocks back to back (tens of nanoseconds apart), so over 20 ms the
    // error is about one part in 10^5; the thread may sleep in between, both clocks run on.
    // SAFETY: RDTSC exists on every x86_64 processor and has no preconditions.
    let (t0, c0) = (Instant::now(), unsafe { _rdtsc() });
    std::thread::sleep(Duration::from_millis(20));
    let (c1, t1) = (unsafe { _rdtsc() }, Instant::now());
    let ns = t1.duration_since(t0).as_nanos().max(1);
    let mhz = c1.wrapping_sub(c0) as f64 * 1e3 / ns as f64;
    if mhz.is_finite() && mhz > 1.0 {
        HostClock { mhz, source: "tsc" }
    } else {
        HostClock { mhz: 1000.0, source: "nominal" }
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn measure() -> HostClock {
    HostClock { mhz: 1000.0, source: "nominal" }
}

/// A run's clock: nanoseconds since the run began, the same origin on every thread.
#[derive(Clone, Copy)]
pub(crate) struct Clock {
    origin: Instant,
    cycles_per_ns: f64,
}

impl Clock {
    pub fn new(mhz: f64) -> Clock {
        Clock { origin: Instant::now(), cycles_per_ns: mhz / 1e3 }
    }

    #[inline]
    pub fn now_ns(&self) -> u64 {
        self.origin.elapsed().as_nanos() as u64
    }

    #[inline]
    pub fn cycles(&self, ns: u64) -> f64 {
        ns as f64 * self.cycles_per_ns
    }
}
