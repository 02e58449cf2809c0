//! Progress of a sweep on stderr.

use crate::progress::{duration, Lines};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// How often a line is printed while a long grid is checked.
const CHECK_LINE_EVERY: Duration = Duration::from_secs(10);
/// Grids from this many points say at once what they are doing (checking takes a while).
const ANNOUNCE_POINTS: usize = 1000;

/// Progress of checking a grid's points before the runs: a first line at once for a large grid,
/// then a line at most every [`CHECK_LINE_EVERY`]; nothing for a small grid (whose errors
/// stay the one `commlab: ` line) or when `silent`.
pub(super) struct Checking {
    what: String,
    total: usize,
    started: Instant,
    last_line: Instant,
    show: bool,
}

impl Checking {
    pub(super) fn new(silent: bool, what: &str, total: usize) -> Checking {
        let show = !silent && total >= ANNOUNCE_POINTS;
        if show {
            eprintln!("{what}; checking every point's machine before running");
        }
        let now = Instant::now();
        Checking { what: what.to_string(), total, started: now, last_line: now, show }
    }

    /// `done` points checked so far.
    pub(super) fn checked(&mut self, done: usize) {
        if !self.show || self.last_line.elapsed() < CHECK_LINE_EVERY || done == 0 {
            return;
        }
        self.last_line = Instant::now();
        let elapsed = self.started.elapsed();
        let eta = elapsed.mul_f64((self.total - done) as f64 / done as f64);
        eprintln!(
            "{}: checked {done}/{} points, {} elapsed, ETA {}",
            self.what,
            self.total,
            duration(elapsed),
            duration(eta)
        );
    }
}

/// Progress on stderr: a bar with ETA on a terminal; otherwise lines with the runs done, the
/// time elapsed and an ETA at a steady interval ([`crate::progress`]).
pub(super) enum Progress {
    Bar(indicatif::ProgressBar),
    Lines(Lines),
    /// Nothing shown (an embedding program reports its own progress).
    Silent,
}

impl Progress {
    /// Progress of `what` (e.g. "sweep em3d"): `total` runs.
    pub(super) fn new(what: &str, total: usize) -> Progress {
        if std::io::stderr().is_terminal() {
            let bar = indicatif::ProgressBar::new(total as u64);
            let style = indicatif::ProgressStyle::with_template(
                "{elapsed_precise} [{wide_bar}] {pos}/{len} runs, ETA {eta_precise} {msg}",
            )
            .expect("a valid template")
            .progress_chars("=> ");
            bar.set_style(style);
            Progress::Bar(bar)
        } else {
            Progress::Lines(Lines::start(what, total))
        }
    }

    pub(super) fn done(&mut self, what: &str) {
        match self {
            Progress::Bar(b) => {
                b.inc(1);
                b.set_message(what.to_string());
            }
            Progress::Lines(lines) => lines.done(what),
            Progress::Silent => {}
        }
    }

    pub(super) fn note(&self, what: &str) {
        match self {
            Progress::Bar(b) => b.println(what),
            Progress::Lines(_) => eprintln!("{what}"),
            Progress::Silent => {}
        }
    }

    pub(super) fn finish(&mut self) {
        match self {
            Progress::Bar(b) => b.finish_and_clear(),
            Progress::Lines(lines) => lines.finish(),
            Progress::Silent => {}
        }
    }
}
