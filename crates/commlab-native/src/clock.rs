//! Time: the time-stamp counter (or a monotonic clock) read as ticks since the run began,
//! reported in host cycles.
//!
//! On x86_64 with an invariant TSC every figure is a difference of `rdtsc` readings, which
//! are host cycles at the rate [`host_clock`] measured once per process (the TSC against the
//! monotonic clock 20 ms apart). Elsewhere it is measured with [`std::time::Instant`]
//! (`CLOCK_MONOTONIC` on Linux) in nanoseconds, which become host cycles at that rate (a
//! nominal 1000 MHz, one cycle per nanosecond, where there is no TSC, which the backend says).

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

/// A run's clock: ticks since the run began, the same origin on every thread. A tick is one
/// count of the time-stamp counter where it is invariant (x86_64 with the CPUID invariant-TSC
/// bit: one `rdtsc`, about 20 cycles, instead of a monotonic clock read through the vDSO, and
/// the same count on every core), else one nanosecond of [`Instant`].
#[derive(Clone, Copy)]
pub(crate) struct Clock {
    origin: Instant,
    /// The counter at `origin` when ticks are TSC counts.
    tsc_origin: Option<u64>,
    cycles_per_tick: f64,
    ticks_per_ns: f64,
}

impl Clock {
    pub fn new(mhz: f64) -> Clock {
        let origin = Instant::now();
        match invariant_tsc() {
            true => Clock { origin, tsc_origin: Some(read_tsc()), cycles_per_tick: 1.0, ticks_per_ns: mhz / 1e3 },
            false => Clock { origin, tsc_origin: None, cycles_per_tick: mhz / 1e3, ticks_per_ns: 1.0 },
        }
    }

    /// Ticks since the run began.
    #[inline]
    pub fn now(&self) -> u64 {
        match self.tsc_origin {
            Some(t0) => read_tsc().saturating_sub(t0),
            None => self.origin.elapsed().as_nanos() as u64,
        }
    }

    /// Ticks since the run began, read only after every earlier instruction has completed
    /// (`lfence` first): what the program's `now_cycles` returns. An unfenced `rdtsc` may be
    /// executed ahead of the loads before it, and a handler's reading then came out *before*
    /// the load that saw its message returned (one-way message times shorter than a cache line
    /// takes to cross between the cores); the accounting reads need no fence.
    #[inline]
    pub fn now_ordered(&self) -> u64 {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: LFENCE exists on every x86_64 processor (SSE2) and has no preconditions.
        unsafe {
            core::arch::x86_64::_mm_lfence()
        };
        self.now()
    }

    /// Ticks in `ns` nanoseconds.
    pub fn ticks_of_ns(&self, ns: u64) -> u64 {
        (ns as f64 * self.ticks_per_ns) as u64
    }

    /// Nanoseconds in `ticks` ticks.
    pub fn ns_of_ticks(&self, ticks: u64) -> f64 {
        ticks as f64 / self.ticks_per_ns
    }

    /// Ticks in host cycles (the rate [`host_clock`] reports).
    #[inline]
    pub fn cycles(&self, ticks: u64) -> f64 {
        ticks as f64 * self.cycles_per_tick
    }
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn read_tsc() -> u64 {
    // SAFETY: RDTSC exists on every x86_64 processor and has no preconditions.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn read_tsc() -> u64 {
    0
}

/// The time-stamp counter runs at a constant rate in every power state and is what
/// [`host_clock`] measured (CPUID leaf 0x8000_0007, EDX bit 8: "invariant TSC"; a hypervisor
/// that migrates the guest between hosts of different rates clears it).
#[cfg(target_arch = "x86_64")]
fn invariant_tsc() -> bool {
    use core::arch::x86_64::__cpuid;
    // Leaf 0x8000_0000 gives the highest extended leaf, so 0x8000_0007 is only read where it
    // exists.
    let max = __cpuid(0x8000_0000).eax;
    max >= 0x8000_0007 && (__cpuid(0x8000_0007).edx >> 8) & 1 == 1 && host_clock().source == "tsc"
}

#[cfg(not(target_arch = "x86_64"))]
fn invariant_tsc() -> bool {
    false
}

/// The calling thread's CPU time so far (user and system), in nanoseconds; 0 where the host
/// cannot say.
pub(crate) fn thread_cpu_ns() -> u64 {
    #[cfg(unix)]
    {
        let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_gettime writes into the timespec it is given.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0 {
            return t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64;
        }
    }
    0
}
