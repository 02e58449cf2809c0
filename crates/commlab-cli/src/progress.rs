//! Progress off a terminal (a batch job, a log file) and how long a command took, on stderr so
//! that stdout stays parseable.
//!
//! [`Lines`] prints a line with the runs done, the time elapsed and an ETA at a steady
//! interval ([`every`]): when a run finishes and the interval has passed, and from a ticker
//! thread while no run finishes (one slow point is never silent). [`took`] is the closing line of a command that ran more than a few seconds.
//!
//! `COMMLAB_PROGRESS_EVERY_S` sets the interval in seconds (default 10); 0 prints a line
//! for every run and a closing line for every command.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Seconds between progress lines off a terminal unless `COMMLAB_PROGRESS_EVERY_S` says otherwise.
const DEFAULT_EVERY: Duration = Duration::from_secs(10);
/// A command that ran this long (or the progress interval, if shorter) ends with how long it took.
const TOOK_AFTER: Duration = Duration::from_secs(3);
/// The largest interval taken from the environment (a day); more is read as this.
const LONGEST_EVERY_S: f64 = 86_400.0;

/// The interval between progress lines off a terminal: `COMMLAB_PROGRESS_EVERY_S` (seconds,
/// fractions allowed) or 10 s; a value that is not a non-negative number is ignored.
pub(crate) fn every() -> Duration {
    std::env::var("COMMLAB_PROGRESS_EVERY_S")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(|s| Duration::from_secs_f64(s.min(LONGEST_EVERY_S)))
        .unwrap_or(DEFAULT_EVERY)
}

/// "0.4s", "12.0s", "1m05s", "1h02m".
pub(crate) fn duration(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("{:.1}s", d.as_secs_f64()),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// The closing line of a command (`command`: e.g. "sweep") that started at `started`, if it
/// ran long enough to deserve one.
pub fn took_line(command: &str, started: Instant) -> Option<String> {
    let elapsed = started.elapsed();
    (elapsed >= TOOK_AFTER.min(every())).then(|| format!("commlab {command}: done in {}", duration(elapsed)))
}

/// What the lines report, shared with the ticker thread.
struct State {
    what: String,
    total: usize,
    done: usize,
    started: Instant,
    last_line: Instant,
    finished: bool,
}

impl State {
    fn line(&mut self, last: Option<&str>) -> String {
        self.last_line = Instant::now();
        let elapsed = self.started.elapsed();
        let eta = if self.done == 0 {
            "unknown".to_string()
        } else {
            duration(elapsed.mul_f64((self.total.saturating_sub(self.done)) as f64 / self.done as f64))
        };
        let last = last.map(|l| format!(" ({l})")).unwrap_or_default();
        format!("{}: {}/{} runs, {} elapsed, ETA {eta}{last}", self.what, self.done, self.total, duration(elapsed))
    }
}

type Shared = Arc<(Mutex<State>, Condvar)>;

fn lock(shared: &Shared) -> MutexGuard<'_, State> {
    // A panic elsewhere while holding the lock leaves a state that is still fine to print.
    shared.0.lock().unwrap_or_else(|e| e.into_inner())
}

/// Progress lines of `total` runs off a terminal (see the module's documentation).
pub(crate) struct Lines {
    shared: Shared,
    every: Duration,
    ticker: Option<JoinHandle<()>>,
}

impl Lines {
    /// Progress of `total` runs of `what`, the ticker started. Nothing is printed yet: a run
    /// may still refuse its input (an app on too few processors), and bad input is one line.
    pub(crate) fn start(what: &str, total: usize) -> Lines {
        let now = Instant::now();
        let state = State { what: what.to_string(), total, done: 0, started: now, last_line: now, finished: false };
        let shared: Shared = Arc::new((Mutex::new(state), Condvar::new()));
        let every = every();
        // With no interval every run prints its line; a ticker would spin.
        let ticker = (!every.is_zero() && total > 0).then(|| {
            let shared = shared.clone();
            std::thread::spawn(move || tick(&shared, every))
        });
        Lines { shared, every, ticker }
    }

    /// One run finished (`what`: which, and its result).
    pub(crate) fn done(&mut self, what: &str) {
        let mut s = lock(&self.shared);
        s.done += 1;
        if s.done >= s.total || s.last_line.elapsed() >= self.every {
            let line = s.line(Some(what));
            eprintln!("{line}");
        }
    }

    /// Stops the ticker.
    pub(crate) fn finish(&mut self) {
        lock(&self.shared).finished = true;
        self.shared.1.notify_all();
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Lines {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The ticker: a line whenever `every` passes without one, until finished.
fn tick(shared: &Shared, every: Duration) {
    let mut s = lock(shared);
    loop {
        if s.finished {
            return;
        }
        let since = s.last_line.elapsed();
        if since >= every {
            let line = s.line(None);
            eprintln!("{line}");
            continue;
        }
        s = shared.1.wait_timeout(s, every - since).map(|(g, _)| g).unwrap_or_else(|e| e.into_inner().0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_short() {
        assert_eq!(duration(Duration::from_millis(430)), "0.4s");
        assert_eq!(duration(Duration::from_secs(65)), "1m05s");
        assert_eq!(duration(Duration::from_secs(3720)), "1h02m");
    }

    #[test]
    fn a_line_has_elapsed_and_eta() {
        let now = Instant::now();
        let mut s = State { what: "sweep x".into(), total: 4, done: 0, started: now, last_line: now, finished: false };
        assert!(s.line(None).starts_with("sweep x: 0/4 runs, 0.0s elapsed, ETA unknown"), "{}", s.line(None));
        s.done = 2;
        let l = s.line(Some("x [a] k=1: 5 cycles"));
        assert!(l.contains("2/4 runs") && l.contains("elapsed, ETA ") && l.ends_with("(x [a] k=1: 5 cycles)"), "{l}");
    }
}
