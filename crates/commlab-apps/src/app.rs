//! What an application is: its listing ([`AppInfo`], `ParamDoc`), its outcome ([`AppResult`],
//! [`Check`]), its errors (`AppError`), and the helpers every application module shares.
//!
//! Each application module has an `AppInfo` (name, variants, documented parameters) and a `run`
//! that resolves the work costs it charges (`Backend::cost_cycles`, before anything runs, so a
//! missing `[costs]` entry is an error naming it), builds the `Program`, runs it on any
//! `Backend` and checks the answer.

use commlab_api::{Backend, BarrierKind, ReceiveMode, RunStats};
use std::collections::BTreeMap;
use std::fmt;

/// One declared parameter (`--param NAME=VALUE`).
pub struct ParamDoc {
    pub name: &'static str,
    pub default: &'static str,
    pub doc: &'static str,
}

/// An application as `commlab apps` lists it.
pub struct AppInfo {
    pub name: &'static str,
    pub summary: &'static str,
    /// Variants in the order `--variant all` runs them.
    pub variants: &'static [&'static str],
    pub params: &'static [ParamDoc],
    /// The counters the app reports beside the engine's, each declared once.
    pub counters: &'static [commlab_api::Counter],
}

impl AppInfo {
    /// The variants `--variant V` selects (`all` = every variant); the error lists valid ones.
    pub fn select_variants(&self, v: &str) -> Result<Vec<&'static str>, AppError> {
        if v == "all" {
            return Ok(self.variants.to_vec());
        }
        match self.variants.iter().find(|x| **x == v) {
            Some(x) => Ok(vec![*x]),
            None => Err(AppError::Input(format!(
                "unknown variant `{v}` for app `{}` (valid: {}, all)",
                self.name,
                self.variants.join(", ")
            ))),
        }
    }
}

/// Why a variant built on Tempest user regions cannot run on a machine without fine-grain
/// access control ([`Backend::access_control`]).
pub(crate) const NEEDS_TEMPEST: &str =
    "needs Tempest fine-grain access control (memory.model = \"software\", e.g. blizzard-s/e/t)";

/// Whether the app's answer was right.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    pub ok: bool,
    /// Largest error found (relative for numerical answers, count of faults otherwise).
    pub max_error: f64,
    /// One line describing what was checked, or what went wrong.
    pub detail: String,
}

/// The outcome of one run of one variant.
#[derive(Clone, Debug)]
pub struct AppResult {
    pub app: &'static str,
    pub variant: &'static str,
    pub params: BTreeMap<String, String>,
    pub stats: RunStats,
    /// App-level figures (e.g. `one_way_cycles`) merged over the backend's counters.
    pub counters: BTreeMap<String, f64>,
    pub check: Check,
}

#[derive(Debug, Clone, PartialEq)]
pub enum AppError {
    /// Bad user input: unknown app, variant or parameter, or a value out of range.
    Input(String),
    /// The run itself failed (deadlock, limit reached, program error).
    Run(String),
}

impl fmt::Display for AppError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AppError::Input(m) | AppError::Run(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for AppError {}

/// The five communication variants most applications come in.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Variant {
    Sm,
    SmPrefetch,
    MpInt,
    MpPoll,
    Bulk,
}

impl Variant {
    /// Their names, in the order `--variant all` runs them.
    pub const NAMES: &'static [&'static str] = &["sm", "sm-pf", "mp-int", "mp-poll", "bulk"];

    /// The variant named `v` (one of [`Variant::NAMES`]; the app has checked it).
    pub fn from_name(v: &str) -> Variant {
        match v {
            "sm" => Variant::Sm,
            "sm-pf" => Variant::SmPrefetch,
            "mp-int" => Variant::MpInt,
            "mp-poll" => Variant::MpPoll,
            "bulk" => Variant::Bulk,
            other => unreachable!("variant `{other}` is listed but not handled"),
        }
    }

    pub fn shared_memory(self) -> bool {
        matches!(self, Variant::Sm | Variant::SmPrefetch)
    }

    /// How the variant's nodes receive: by polling for `mp-poll`, else by interrupt.
    pub fn receive_mode(self) -> ReceiveMode {
        receive_mode_of(self == Variant::MpPoll)
    }

    /// The variant's barrier: the shared-memory tree for `sm`/`sm-pf`, messages otherwise.
    pub fn barrier_kind(self) -> BarrierKind {
        barrier_kind_of(self.shared_memory())
    }
}

/// A partial result an app returns; `run_app` fills in the name, variant and parameters.
pub(crate) fn result(stats: RunStats, counters: BTreeMap<String, f64>, check: Check) -> AppResult {
    AppResult { app: "", variant: "", params: BTreeMap::new(), stats, counters, check }
}

/// A time in processor cycles as a result reports it: rounded to the decimal digits that 10 ps
/// of simulated time justify (3 at 20 and 33 MHz, 2 at 1 GHz). Simulated time is whole
/// picoseconds and `now_cycles` is a float, so a difference of two times carries float residue
/// (a spread of 4.12e-13 where every sample was the same) and a cost of 9 cycles at 33 MHz is
/// 272727 ps, 8.999991 cycles; neither is a figure.
pub(crate) fn cycles_figure(cycles: f64, cycles_per_us: f64) -> f64 {
    let cycle_ps = 1e6 / cycles_per_us;
    if !cycles.is_finite() || !cycle_ps.is_finite() || cycle_ps <= 0.0 {
        return cycles;
    }
    let digits = (cycle_ps / 10.0).log10().floor().clamp(0.0, 12.0) as i32;
    let scale = 10f64.powi(digits);
    let v = (cycles * scale).round() / scale;
    if v == 0.0 {
        0.0
    } else {
        v
    }
}

/// Cycles of the machine's work cost `costs.NAME` (resolved before a program is built).
pub(crate) fn cost<B: Backend>(backend: &B, name: &str) -> Result<u64, AppError> {
    backend.cost_cycles(name).map_err(run_err)
}

/// Map a backend error to a run failure.
pub(crate) fn run_err<E: fmt::Display>(e: E) -> AppError {
    AppError::Run(e.to_string())
}

/// A per-component random seed derived from the run seed (SplitMix64 finalizer), so each
/// processor's stream is independent of how many others exist.
pub(crate) fn component_seed(seed: u64, component: u64) -> u64 {
    let mut z = seed ^ component.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// How a variant's nodes receive: by polling for `mp-poll`-style variants, else by interrupt.
pub(crate) fn receive_mode_of(polling: bool) -> ReceiveMode {
    if polling {
        ReceiveMode::Polling
    } else {
        ReceiveMode::Interrupt
    }
}

/// A variant's barrier: shared-memory variants use the shared-memory tree, the others messages.
pub(crate) fn barrier_kind_of(shared_memory: bool) -> BarrierKind {
    if shared_memory {
        BarrierKind::SharedMemory
    } else {
        BarrierKind::Messages
    }
}

#[cfg(test)]
mod figure_tests {
    use super::cycles_figure;

    #[test]
    fn cycle_times_lose_their_float_residue_and_keep_their_digits() {
        // Regression (issue 36): t_invoker = 8.99999 and a spread of 4.12e-13.
        assert_eq!(cycles_figure(8.999990999998772, 33.0), 9.0);
        assert_eq!(cycles_figure(4.121147867408581e-13, 20.0), 0.0);
        assert_eq!(cycles_figure(10239.999999999996, 20.0), 10240.0);
        assert_eq!(cycles_figure(102.35556000000001, 20.0), 102.356);
        assert_eq!(cycles_figure(1052.53336, 1000.0), 1052.53);
        assert_eq!(cycles_figure(-1e-14, 20.0).to_string(), "0");
        assert!(cycles_figure(f64::NAN, 20.0).is_nan());
    }
}

/// Counters several apps report with one meaning, declared once here; each app's table
/// (`COUNTERS`) lists those it reports.
pub mod common {
    commlab_api::counters! {
        /// Every shared counter.
        pub SHARED_COUNTERS;
        HOPS = "hops", "hops",
            "network hops between the two processors the measurement involves (the resolved `hops` parameter: processor 0 and its partner, the line's home, or the invokee)";
        SPEEDUP = "speedup", "ratio",
            "the sequential baseline's cycles (`serial_cycles` or `sequential_cycles`) over this run's parallel cycles";
        SERIAL_CYCLES = "serial_cycles", "cycles",
            "cycles of the app's sequential baseline: a sequential program on one processor of the same machine (the app's module doc names which)";
        SEQUENTIAL_CYCLES = "sequential_cycles", "cycles",
            "cycles of the sequential program on one processor of the same machine (the speedup's baseline)";
        CYCLES_PER_ITERATION = "cycles_per_iteration", "cycles",
            "the timed region's cycles over the iterations it timed";
        APP_MESSAGES = "app_messages", "messages",
            "messages the application's own code sent, by its tally (the engine's `messages` also counts barriers', runtimes' and flow control's)";
        SYNCHRONIZATION_CYCLES_MEAN = "synchronization_cycles_mean", "cycles",
            "mean over processors of time in the synchronization category (barriers, locks, waiting for flags and counters)";
        REMOTE_MISSES = "remote_misses", "count",
            "the engine's `cache_misses` minus `local_misses`: misses served by another node (when any access reached the caches)";
        LOCK_ACQUISITIONS = "lock_acquisitions", "count",
            "locks the application's code acquired, all processors";
        LOCK_RELEASES = "lock_releases", "count",
            "locks the application's code released, all processors";
        PREFETCHES_ISSUED = "prefetches_issued", "count",
            "prefetches the application's code issued (prefetch variants), whether or not the line was already held";
    }
}
