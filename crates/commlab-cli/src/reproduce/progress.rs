//! Progress of a reproduction on stderr: a bar with an ETA on a terminal; off a terminal (a
//! batch job, a log file) a line at most every [`LINE_EVERY`] with the runs done, the time
//! elapsed and an ETA, so long work is never silent.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// How often a progress line is printed off a terminal.
pub(crate) const LINE_EVERY: Duration = Duration::from_secs(10);

pub(crate) struct Progress {
    what: String,
    started: Instant,
    total: usize,
    done: usize,
    last_line: Instant,
    bar: Option<indicatif::ProgressBar>,
    quiet: bool,
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

impl Progress {
    /// Progress of `what` (e.g. "reproduce alewife"); `quiet`: show nothing.
    pub fn new(what: &str, quiet: bool) -> Progress {
        Progress {
            what: what.to_string(),
            started: Instant::now(),
            total: 0,
            done: 0,
            last_line: Instant::now(),
            bar: None,
            quiet,
        }
    }

    /// `total` runs to do; `resumed` were already done.
    pub fn start(&mut self, total: usize, resumed: usize) {
        self.total = total;
        self.done = 0;
        self.started = Instant::now();
        self.last_line = Instant::now();
        if self.quiet {
            return;
        }
        if resumed > 0 {
            eprintln!("{}: {resumed} runs taken from the earlier reproduction (--resume)", self.what);
        }
        if total == 0 {
            return;
        }
        if std::io::stderr().is_terminal() {
            let bar = indicatif::ProgressBar::new(total as u64);
            let style = indicatif::ProgressStyle::with_template(
                "{elapsed_precise} [{wide_bar}] {pos}/{len} runs, ETA {eta_precise} {msg}",
            )
            .expect("a valid template")
            .progress_chars("=> ");
            bar.set_style(style);
            self.bar = Some(bar);
        } else {
            eprintln!("{}: {total} runs to do", self.what);
        }
    }

    /// One run finished.
    pub fn done(&mut self, what: &str) {
        self.done += 1;
        if self.quiet {
            return;
        }
        if let Some(b) = &self.bar {
            b.inc(1);
            b.set_message(what.to_string());
        } else if self.last_line.elapsed() >= LINE_EVERY || self.done == self.total {
            self.last_line = Instant::now();
            let elapsed = self.started.elapsed();
            let eta = elapsed.mul_f64((self.total - self.done) as f64 / self.done as f64);
            eprintln!(
                "{}: {}/{} runs, {} elapsed, ETA {}",
                self.what,
                self.done,
                self.total,
                duration(elapsed),
                duration(eta)
            );
        }
    }

    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }

    /// Time since the runs started.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}
