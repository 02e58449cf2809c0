//! `commlab sweep`'s arguments and its limit on the number of runs.

use std::path::PathBuf;

/// `commlab sweep --help`.
pub const LONG_ABOUT: &str = "Run an application over a range or grid of machine keys and app parameters, one \
simulation per (point, variant), and find where the variants change order.\n\n\
KEY is an app parameter (see `commlab apps`), `procs` (the processor count: the machine resized as --procs \
resizes it, whole numbers >= 1; records carry each run's `procs`), or any machine key `--set` accepts (see \
`commlab machine show`); parameters are looked up first. SPEC is one of:\n  \
a:b:steps        `steps` (>= 2) evenly spaced values from a to b, both included\n  \
a:b:steps:log    geometric spacing (a and b > 0)\n  \
v1,v2,...        exactly these values\n\
Keys whose values are whole numbers (e.g. messaging.send_overhead_cycles, nodes) take whole numbers: a range's \
inner values are rounded and repeated values dropped; a list must be whole numbers. Several --vary form a grid \
(cartesian product; the first --vary is the outermost and is the x axis of the summary). A sweep has at most \
100000 runs (points x variants): the grid is counted before anything is built, and a larger one is refused \
with its count. Every point's machine is checked, one point at a time, before the first run; a grid of 1000 \
points or more says so at once.\n\n\
Results: each run is appended to DIR/results.jsonl as soon as it finishes (the object of `run --json` plus \
\"vary\" and \"point\"), so an interrupted sweep loses nothing: rerun it with --resume to skip the (point, variant) \
pairs already there (an incomplete last line is dropped and redone); the grid is recorded in DIR/sweep.json, and \
a resume whose grid does not hold every point already run (another range or spacing) is refused, naming both \
(more values of the same keys are fine). Without --resume an existing non-empty \
results.jsonl is an error. At the end DIR/summary.json holds, for each combination of the other keys, the cycles \
of every variant along the first key, the fastest variant at each value and the crossovers (where two variants \
change order, interpolated linearly); a short summary is printed. Results are identical for any --jobs.\n\n\
Detailed statistics: --stats KIND (per-node, per-link, latency, interval=CYCLES; repeatable) keeps, for every \
run, the rows `commlab run --stats KIND=FILE` writes, in DIR/stats/KIND/p<point>.<variant>.jsonl (each row with \
its point and vary; Python's commlab.read_stats(DIR, KIND) reads them into one DataFrame).\n\n\
Examples:\n  \
commlab sweep em3d --vary cross_traffic.rate_bytes_per_cycle=0:8:9 --jobs 2\n  \
commlab sweep am-latency --vary messaging.send_overhead_cycles=10:1000:5:log --variant all\n  \
commlab sweep em3d --procs 8 --param iterations=2 --vary nodes=320,640,1280 --vary remote=0.1,0.5 --out em3d-grid\n  \
commlab sweep iccg --vary procs=4,8,16,32 --variant sm,mp-int\n  \
commlab sweep em3d --vary cross_traffic.rate_bytes_per_cycle=0:8:9 --resume";

#[derive(clap::Args)]
pub struct SweepArgs {
    /// Application name (see `commlab apps`).
    pub(crate) app: String,
    /// A key to vary and its values: KEY=a:b:steps, KEY=a:b:steps:log or KEY=v1,v2,... (repeatable: a grid).
    #[arg(long = "vary", value_name = "KEY=SPEC", required = true)]
    pub(crate) vary: Vec<String>,
    /// Variant to run, several separated by commas, or `all`.
    #[arg(long, default_value = "all")]
    pub(crate) variant: String,
    /// Set an application parameter for every point, e.g. iterations=2 (repeatable).
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub(crate) param: Vec<String>,
    /// Override a machine key for every point (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(crate) set: Vec<String>,
    /// Preset name or path to a machine TOML file.
    #[arg(long, default_value = "alewife")]
    pub(crate) machine: String,
    /// Resize the machine to N processors.
    #[arg(long)]
    pub(crate) procs: Option<usize>,
    /// Seed of every pseudo-random choice.
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Runs at once, on as many threads [default: the number of cores]; fewer if memory is
    /// short. Results do not depend on it.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) jobs: Option<u64>,
    /// Directory for results.jsonl and summary.json [default: sweep-APP].
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// Continue the sweep in DIR: skip the (point, variant) runs already in results.jsonl.
    #[arg(long)]
    pub(crate) resume: bool,
    /// Refuse a point whose estimated memory exceeds SIZE (as `commlab run --max-memory`);
    /// without it, the memory available. Each of the --jobs workers runs one point at a time.
    #[arg(long, value_name = "SIZE", value_parser = crate::memory_check::parse_size)]
    pub(crate) max_memory: Option<u64>,
    /// Keep detailed statistics of every run, one file per run: per-node, per-link, latency or
    /// interval=CYCLES (repeatable), written to DIR/stats/KIND/p<point>.<variant>.jsonl (the rows
    /// of `run --stats`, each with its point and vary); latency distributions are in each
    /// record too. A resumed sweep keeps the files of the runs already done.
    #[arg(long = "stats", value_name = "KIND")]
    pub(crate) stats: Vec<String>,
    /// Experiments print their own summary instead of the sweep's.
    #[arg(skip)]
    pub(crate) quiet: bool,
    /// No progress on stderr (an embedding program reports its own).
    #[arg(skip)]
    pub(crate) silent: bool,
}

/// The most runs (points x variants) a sweep may have: its grid is counted before anything is
/// built, and a larger one is refused with the count (a grid of 1e12 points used to be
/// materialized, and the allocation failed).
pub const MAX_RUNS: usize = 100_000;
