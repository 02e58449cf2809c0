//! Progress of a sweep on stderr.

use std::io::IsTerminal;

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
