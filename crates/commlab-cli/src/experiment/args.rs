//! `commlab experiment`'s arguments: which experiment, and the sweep each runs.

use crate::sweep::SweepArgs;
use std::path::{Path, PathBuf};

/// `commlab experiment --help`.
pub const LONG_ABOUT: &str = "Run one of the classic communication-mechanism experiments: a sweep of the machine \
with results, a summary with crossovers, and plots (PNG and SVG) in DIR.\n\n\
  bisection    cross-traffic from 0 to 90% of the bisection; x = bisection bandwidth left to the application \
(bytes per processor cycle): the bisection less the cross-traffic each run achieved \
(counters.cross_traffic_bytes_per_cycle), not the configured rate (with FIFO arbitration, the study's, it can be less)\n  \
latency      processor clock scaled with the network held fixed; x = one-way latency of a 24-byte message \
(processor cycles); DIR/delay/ holds the second method, a fixed delay added to every remote miss\n  \
overhead     message send and receive overheads scaled 1x to 10x\n  \
aggregation  iccg only: one message per edge, then buffers of 2 to 16 edges (speedup, edges per message)\n  \
volume       traffic volume per variant by class\n  \
grain        grain app: leaf delay l from 0 to 1000 cycles (log steps); speedup of sm and mp (default machine \
alewife-sim)\n  \
memcpy       memcpy app: block size 16 to 16384 bytes; MB/s of each copy variant (default machine alewife-sim)\n  \
copy-transfer  copy-transfer app: MB/s over strides (1 to 64 words) x working sets (4 KB to beyond the last cache \
level), local and each remote variant the machine has (fetch; get and put with one-sided access), as heat maps; \
and the large transfers (16 MiB) by stride, strided loads vs strided stores, per variant; \
--quick: a few small points (default machine t3e)\n  \
fft2d        fft2d app: MFlop/s against problem size (n = 64 to 1024, 4 processors) for each transpose variant the \
machine has: total, local computation (row FFTs) and transposes; --quick: n = 16, 32 (default machine t3e)\n  \
blizzard     the Blizzard study's five apps (dsmc, barnes, appbt, moldyn, em3d; no app argument) in stache and custom on blizzard-s, -e \
and -t at 1 to 16 processors at the study's inputs (SMP nodes polling Typhoon-0, the presets' own; em3d custom at 128-byte \
blocks): speedup plots per app, run times at 16 processors; --quick: small sizes at 1, 2, 4\n\n\
Real machines (the presets) are marked on the bisection and latency axes by their figures normalised by \
local-miss time and expressed in this machine's cycles. Results are appended as they finish; rerun with \
--resume to continue an interrupted experiment.\n\n\
--procs runs an experiment at one machine size; to vary the processor count, sweep it: \
`commlab sweep APP --vary procs=4,8,16,32` (add the experiment's key as a second --vary for a grid, e.g. \
--vary messaging.overhead_scale=1:10:4).\n\n\
Examples:\n  \
commlab experiment bisection em3d --jobs 2\n  \
commlab experiment latency em3d --points 6\n  \
commlab experiment aggregation iccg --param matrix=../shared/data/matrices/bcsstk32.mtx.gz\n  \
commlab experiment volume em3d --out em3d-volume\n  \
commlab experiment grain --procs 64\n  \
commlab experiment memcpy\n  \
commlab experiment copy-transfer --machine t3d --quick\n  \
commlab experiment fft2d --machine t3d\n  \
commlab experiment blizzard --quick";

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Name {
    Bisection,
    Latency,
    Overhead,
    Aggregation,
    Volume,
    Grain,
    Memcpy,
    CopyTransfer,
    Fft2d,
    Blizzard,
}

impl Name {
    /// The app an experiment is about, when it is about one app only.
    pub(super) fn own_app(self) -> Option<&'static str> {
        match self {
            Name::Grain => Some("grain"),
            Name::Memcpy => Some("memcpy"),
            Name::CopyTransfer => Some("copy-transfer"),
            Name::Fft2d => Some("fft2d"),
            _ => None,
        }
    }

    /// As typed on the command line.
    pub(super) fn text(self) -> String {
        use clap::ValueEnum;
        self.to_possible_value().expect("every experiment has a name").get_name().to_string()
    }
}

#[derive(clap::Args)]
pub struct ExperimentArgs {
    /// Which experiment.
    #[arg(value_enum)]
    pub(super) name: Name,
    /// Application name (see `commlab apps`); grain, memcpy and copy-transfer name their own app,
    /// blizzard runs its own set.
    pub(super) app: Option<String>,
    /// Variant to run, several separated by commas, or `all` (copy-transfer: those the machine
    /// has).
    #[arg(long, default_value = "all")]
    pub(super) variant: String,
    /// Set an application parameter (repeatable).
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub(super) param: Vec<String>,
    /// Override a machine key for every run (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(super) set: Vec<String>,
    /// Preset name or path to a machine TOML file [default: alewife; alewife-sim for grain and
    /// memcpy, the runtime study's machine; t3e for copy-transfer].
    #[arg(long)]
    pub(super) machine: Option<String>,
    /// Resize the machine to N processors.
    #[arg(long)]
    pub(super) procs: Option<usize>,
    /// Seed of every pseudo-random choice.
    #[arg(long, default_value_t = 1)]
    pub(super) seed: u64,
    /// Runs at once, on as many threads [default: the number of cores]; fewer if memory is
    /// short. Results do not depend on it.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(super) jobs: Option<u64>,
    /// Points along the x axis (sweeping experiments).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(2..))]
    pub(super) points: u64,
    /// Output directory [default: experiment-NAME-APP].
    #[arg(long, value_name = "DIR")]
    pub(super) out: Option<PathBuf>,
    /// Continue an interrupted experiment in DIR.
    #[arg(long)]
    pub(super) resume: bool,
    /// Do not mark where the preset machines sit on the x axis.
    #[arg(long)]
    pub(super) no_marks: bool,
    /// copy-transfer: 4 strides x 3 small working sets (seconds), not the whole surface;
    /// fft2d: n = 16 and 32; blizzard: small parameters at 1, 2 and 4 processors.
    #[arg(long)]
    pub(super) quick: bool,
    /// Keep detailed statistics of every run (per-node, per-link, latency, interval=CYCLES;
    /// repeatable), as `commlab sweep --stats`: one file per run under the results' directory,
    /// stats/KIND/p<point>.<variant>.jsonl.
    #[arg(long = "stats", value_name = "KIND")]
    pub(super) stats: Vec<String>,
}

pub(super) fn sweep_args(a: &ExperimentArgs, vary: String, dir: &Path) -> SweepArgs {
    SweepArgs {
        app: app_name(a).to_string(),
        vary: vec![vary],
        variant: a.variant.clone(),
        param: a.param.clone(),
        set: a.set.clone(),
        machine: machine_name(a).to_string(),
        procs: a.procs,
        seed: a.seed,
        jobs: a.jobs,
        out: Some(dir.to_path_buf()),
        resume: a.resume,
        max_memory: None,
        stats: a.stats.clone(),
        quiet: true,
        silent: false,
    }
}

/// The app the experiment runs (checked by `run`).
pub(super) fn app_name(a: &ExperimentArgs) -> &str {
    a.app.as_deref().or(a.name.own_app()).unwrap_or("")
}

/// The machine the experiment runs on.
pub(super) fn machine_name(a: &ExperimentArgs) -> &str {
    a.machine.as_deref().unwrap_or(match a.name {
        Name::CopyTransfer | Name::Fft2d => "t3e",
        Name::Grain | Name::Memcpy => "alewife-sim",
        _ => "alewife",
    })
}
