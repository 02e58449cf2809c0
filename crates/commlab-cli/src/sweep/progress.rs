//! Progress of a sweep on stderr.

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

/// "1m05s", "12s", "1h02m".
pub(crate) fn duration(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// Progress on stderr: a bar with ETA on a terminal, plain lines otherwise.
pub(super) enum Progress {
    Bar(indicatif::ProgressBar),
    Lines {
        total: usize,
        done: usize,
    },
    /// Nothing shown (an embedding program reports its own progress).
    Silent,
}

impl Progress {
    pub(super) fn new(total: usize) -> Progress {
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
            Progress::Lines { total, done: 0 }
        }
    }

    pub(super) fn done(&mut self, what: &str) {
        match self {
            Progress::Bar(b) => {
                b.inc(1);
                b.set_message(what.to_string());
            }
            Progress::Lines { total, done } => {
                *done += 1;
                eprintln!("point {done}/{total} done: {what}");
            }
            Progress::Silent => {}
        }
    }

    pub(super) fn note(&self, what: &str) {
        match self {
            Progress::Bar(b) => b.println(what),
            Progress::Lines { .. } => eprintln!("{what}"),
            Progress::Silent => {}
        }
    }

    pub(super) fn finish(&self) {
        if let Progress::Bar(b) = self {
            b.finish_and_clear();
        }
    }
}
