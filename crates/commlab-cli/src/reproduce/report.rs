//! What a reproduction reports: every figure the study publishes beside commlab's
//! ([`Row`]: published | measured | ratio, marked as an input the preset is calibrated from or
//! a prediction), every qualitative finding as a check ([`Finding`]), the figures drawn, and
//! the notes (substitute inputs, what is not modelled). Written as `report.txt` and
//! `report.json`; [`Report::status`] is the exit status, derived from the rows and findings:
//! 0 when every finding holds, every input row is within 10% (or carries a `caveat`: a published
//! value that contradicts the study's own other figures) and every run's answer check passed.
//! `[withheld]` figures show the measured value only. A finding that fails on the full-size runs
//! says what is known of why (the mechanism with its what-if command, or what was tried), shown
//! only while it fails.

use serde_json::{json, Value};
use std::fmt::Write as _;

/// What the study states for a row.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Published {
    Value(f64),
    /// A range ("300-600"): a measurement inside it is within 10%.
    Range(f64, f64),
    /// `[withheld]` in the seed: the measured value is shown, not compared.
    Withheld,
}

/// Whether the preset is calibrated from the row (an input) or commlab predicts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Input,
    Prediction,
}

/// How close a measured value is to the published one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Closeness {
    Within10,
    Within35,
    Off,
    Withheld,
    /// No measurement (a run failed, or the quantity is not modelled).
    Missing,
}

impl Closeness {
    fn label(self) -> &'static str {
        match self {
            Closeness::Within10 => "within 10%",
            Closeness::Within35 => "within 35%",
            Closeness::Off => "off",
            Closeness::Withheld => "withheld",
            Closeness::Missing => "no measurement",
        }
    }
}

/// One published figure and commlab's.
#[derive(Clone, Debug)]
pub(crate) struct Row {
    /// Where the study gives it: "Table 1", "Fig. 3", "§4.3.3".
    pub source: String,
    pub item: String,
    pub unit: String,
    pub published: Published,
    /// The value measured, or why there is none.
    pub measured: Result<f64, String>,
    pub kind: Kind,
    /// How it was measured (a counter, a command, a formula).
    pub how: String,
    /// Why the published value cannot be met as printed: it contradicts the study's own other
    /// figures. Such an input row is reported (and counted by closeness) but does not fail the
    /// reproduction.
    pub caveat: Option<String>,
    /// For a row off the study (or an input out of tolerance): the mechanism found responsible
    /// and the what-if command that shows it, or what was tried without explaining it.
    pub why: Option<String>,
}

impl Row {
    pub fn new(source: &str, item: impl Into<String>, unit: &str, published: Published, kind: Kind) -> Row {
        Row {
            source: source.to_string(),
            item: item.into(),
            unit: unit.to_string(),
            published,
            measured: Err("not measured".into()),
            kind,
            how: String::new(),
            caveat: None,
            why: None,
        }
    }

    /// What is known of the row's disagreement on the full run (see [`Row::why`]). Shown (text
    /// and JSON) only when the row is off or an input out of tolerance.
    pub fn why_if_off(mut self, why: &str) -> Row {
        self.why = Some(why.to_string());
        self
    }

    /// Whether the row disagrees with the study: a prediction off by more than 35%, or an
    /// input outside its tolerance.
    pub fn disagrees(&self) -> bool {
        self.closeness() == Closeness::Off || self.input_out_of_tolerance()
    }

    /// `why`, when the row disagrees.
    fn why_shown(&self) -> Option<&str> {
        self.why.as_deref().filter(|_| self.disagrees())
    }

    pub fn caveat(mut self, why: impl Into<String>) -> Row {
        self.caveat = Some(why.into());
        self
    }

    pub fn measured(mut self, m: Result<f64, String>, how: impl Into<String>) -> Row {
        self.measured = m.and_then(|v| if v.is_finite() { Ok(v) } else { Err(format!("not a number ({v})")) });
        self.how = how.into();
        self
    }

    /// measured / published (the middle of a range).
    pub fn ratio(&self) -> Option<f64> {
        let m = *self.measured.as_ref().ok()?;
        let p = match self.published {
            Published::Value(p) => p,
            Published::Range(lo, hi) => (lo + hi) / 2.0,
            Published::Withheld => return None,
        };
        (p != 0.0).then_some(m / p)
    }

    pub fn closeness(&self) -> Closeness {
        let Ok(m) = self.measured else { return Closeness::Missing };
        let err = match self.published {
            Published::Withheld => return Closeness::Withheld,
            Published::Range(lo, hi) if (lo..=hi).contains(&m) => 0.0,
            Published::Range(lo, hi) => ((m - lo) / lo).abs().min(((m - hi) / hi).abs()),
            Published::Value(0.0) => {
                if m.abs() < 1e-9 {
                    0.0
                } else {
                    f64::INFINITY
                }
            }
            Published::Value(p) => ((m - p) / p).abs(),
        };
        if err <= 0.10 + 1e-12 {
            Closeness::Within10
        } else if err <= 0.35 + 1e-12 {
            Closeness::Within35
        } else {
            Closeness::Off
        }
    }

    /// An input row out of its 10% tolerance (what `commlab validate` would fail), unless its
    /// published value contradicts the study's own figures (`caveat`).
    pub fn input_out_of_tolerance(&self) -> bool {
        self.kind == Kind::Input
            && self.caveat.is_none()
            && !matches!(self.closeness(), Closeness::Within10 | Closeness::Withheld)
    }

    fn published_text(&self) -> String {
        match self.published {
            Published::Value(p) => number(p),
            Published::Range(lo, hi) => format!("{}-{}", number(lo), number(hi)),
            Published::Withheld => "[withheld]".into(),
        }
    }

    fn json(&self) -> Value {
        json!({
            "source": self.source, "item": self.item, "unit": self.unit,
            "published": match self.published {
                Published::Value(p) => json!(p),
                Published::Range(lo, hi) => json!([lo, hi]),
                Published::Withheld => json!("withheld"),
            },
            "measured": self.measured.as_ref().ok(),
            "missing": self.measured.as_ref().err(),
            "ratio": self.ratio(),
            "kind": match self.kind { Kind::Input => "input", Kind::Prediction => "prediction" },
            "closeness": self.closeness().label(),
            "how": self.how,
            "caveat": self.caveat,
            "why": self.why_shown(),
        })
    }
}

/// A number as a table shows it: 3 significant figures, no exponent for ordinary sizes.
pub(crate) fn number(x: f64) -> String {
    let a = x.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1e7 {
        format!("{:.3}M", x / 1e6)
    } else if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else if a >= 0.01 {
        format!("{x:.2}")
    } else {
        format!("{x:.2e}")
    }
}

/// A qualitative finding of the study, tested.
#[derive(Clone, Debug)]
pub(crate) struct Finding {
    /// Where the study says it: "§5.2".
    pub source: String,
    /// The application(s) it is about.
    pub app: String,
    /// The study's words.
    pub claim: String,
    /// The exact test, written from the claim's words before any run.
    pub test: String,
    /// The figures the test used.
    pub measured: String,
    /// `None`: a run it needs failed, so it could not be evaluated.
    pub holds: Option<bool>,
    /// For a finding that fails: the mechanism found responsible and the what-if run that shows it.
    pub why: Option<String>,
}

impl Finding {
    pub fn new(source: &str, app: &str, claim: &str, test: &str) -> Finding {
        Finding {
            source: source.into(),
            app: app.into(),
            claim: claim.into(),
            test: test.into(),
            measured: String::new(),
            holds: None,
            why: None,
        }
    }

    /// The outcome: `Ok((figures, holds))`, or `Err(why it could not be evaluated)`.
    pub fn outcome(mut self, o: Result<(String, bool), String>) -> Finding {
        match o {
            Ok((m, h)) => {
                self.measured = m;
                self.holds = Some(h);
            }
            Err(e) => {
                self.measured = format!("not evaluated: {e}");
                self.holds = None;
            }
        }
        self
    }

    /// What is known of the finding's failure on the full run: the mechanism found responsible
    /// and the what-if command that shows it, or what was tried without explaining it. Shown
    /// (text and JSON) only when the finding fails.
    pub fn why_if_fails(mut self, why: &str) -> Finding {
        self.why = Some(why.to_string());
        self
    }

    /// `why`, when the finding fails.
    fn why_shown(&self) -> Option<&str> {
        self.why.as_deref().filter(|_| self.holds == Some(false))
    }

    fn json(&self) -> Value {
        json!({
            "source": self.source, "app": self.app, "claim": self.claim, "test": self.test,
            "measured": self.measured, "holds": self.holds, "why": self.why_shown(),
        })
    }
}

/// A figure drawn: its number in the study, title and files.
#[derive(Clone, Debug)]
pub(crate) struct Drawn {
    pub id: String,
    pub number: String,
    pub title: String,
    pub about: String,
    pub files: Vec<String>,
}

/// A study's whole report.
#[derive(Default)]
pub(crate) struct Report {
    pub study: String,
    pub seed: String,
    pub title: String,
    pub machine: String,
    pub quick: bool,
    /// What differs from the study's set-up (substitutes, reduced sizes, what is not modelled).
    pub notes: Vec<String>,
    pub rows: Vec<Row>,
    pub findings: Vec<Finding>,
    pub figures: Vec<Drawn>,
    /// Runs that failed or failed their answer check.
    pub problems: Vec<String>,
    pub runs: usize,
    pub wall_seconds: f64,
}

/// Counts of rows by closeness and of findings.
#[derive(Default, Debug, PartialEq)]
pub(crate) struct Summary {
    pub within10: usize,
    pub within35: usize,
    pub off: usize,
    pub withheld: usize,
    pub missing: usize,
    pub inputs_out: usize,
    pub findings: usize,
    pub held: usize,
    pub not_evaluated: usize,
    /// Rows that disagree with the study (off, or inputs out of tolerance) ...
    pub disagreeing: usize,
    /// ... and how many of them name a mechanism ([`Row::why`]).
    pub disagreeing_explained: usize,
}

impl Report {
    pub fn summary(&self) -> Summary {
        let mut s = Summary::default();
        for r in &self.rows {
            match r.closeness() {
                Closeness::Within10 => s.within10 += 1,
                Closeness::Within35 => s.within35 += 1,
                Closeness::Off => s.off += 1,
                Closeness::Withheld => s.withheld += 1,
                Closeness::Missing => s.missing += 1,
            }
            s.inputs_out += r.input_out_of_tolerance() as usize;
            s.disagreeing += r.disagrees() as usize;
            s.disagreeing_explained += r.why_shown().is_some() as usize;
        }
        s.findings = self.findings.len();
        s.held = self.findings.iter().filter(|f| f.holds == Some(true)).count();
        s.not_evaluated = self.findings.iter().filter(|f| f.holds.is_none()).count();
        s
    }

    /// 0 when every finding holds, every input row is within its tolerance and every run
    /// passed its answer check; 1 otherwise.
    pub fn status(&self) -> u8 {
        let s = self.summary();
        u8::from(s.held < s.findings || s.inputs_out > 0 || !self.problems.is_empty())
    }

    /// The one-line verdict.
    pub fn verdict(&self) -> String {
        let s = self.summary();
        format!(
            "{}: rows {} within 10%, {} within 35%, {} off, {} withheld, {} without a measurement; inputs out of \
             tolerance {}; findings {} of {} hold{}{}",
            self.study,
            s.within10,
            s.within35,
            s.off,
            s.withheld,
            s.missing,
            s.inputs_out,
            s.held,
            s.findings,
            if s.not_evaluated > 0 { format!(" ({} not evaluated)", s.not_evaluated) } else { String::new() },
            if self.problems.is_empty() { String::new() } else { format!("; {} runs failed", self.problems.len()) },
        )
    }

    pub fn text(&self) -> String {
        let mut t = String::new();
        let _ = writeln!(t, "commlab reproduce {}: {} (seed {})", self.study, self.title, self.seed);
        let _ = writeln!(
            t,
            "machine {}, {} inputs; {} runs, {:.0} s of simulation here",
            self.machine,
            if self.quick { "--quick (reduced)" } else { "the study's" },
            self.runs,
            self.wall_seconds
        );
        for n in &self.notes {
            let _ = writeln!(t, "note: {n}");
        }
        let _ = writeln!(
            t,
            "\nPUBLISHED | MEASURED | RATIO   (input: the preset is calibrated from it; prediction: commlab's)"
        );
        let wi = self.rows.iter().map(|r| r.item.chars().count()).max().unwrap_or(10).min(64);
        let ws = self.rows.iter().map(|r| r.source.chars().count()).max().unwrap_or(6);
        for r in &self.rows {
            let m = match &r.measured {
                Ok(v) => number(*v),
                Err(_) => "-".into(),
            };
            let ratio = r.ratio().map_or("-".into(), |x| format!("{x:.2}"));
            let _ = writeln!(
                t,
                "{:<ws$}  {:<wi$}  {:<10} {:>11} {:>11} {:>6}  {:<10} {}",
                r.source,
                r.item,
                match r.kind {
                    Kind::Input => "input",
                    Kind::Prediction => "prediction",
                },
                r.published_text(),
                m,
                ratio,
                r.closeness().label(),
                r.unit,
            );
            if let Err(e) = &r.measured {
                let _ = writeln!(t, "{:<ws$}  {:<wi$}  ({e})", "", "");
            }
            if let Some(c) = &r.caveat {
                let _ = writeln!(t, "{:<ws$}  {:<wi$}  (the study's own figures disagree: {c})", "", "");
            }
            if let Some(w) = r.why_shown() {
                let _ = writeln!(t, "{:<ws$}  (why it disagrees, the full-size runs: {w})", "");
            }
        }
        let s = self.summary();
        let _ = writeln!(
            t,
            "rows that disagree (off, or inputs out of tolerance): {}, of which {} name a mechanism",
            s.disagreeing, s.disagreeing_explained
        );
        let _ = writeln!(t, "\nFINDINGS");
        for f in &self.findings {
            let mark = match f.holds {
                Some(true) => "holds",
                Some(false) => "FAILS",
                None => "NOT EVALUATED",
            };
            let _ = writeln!(t, "{mark} {} {}: \"{}\"", f.source, f.app, f.claim);
            let _ = writeln!(t, "      test: {}", f.test);
            let _ = writeln!(t, "      measured: {}", f.measured);
            if let Some(w) = f.why_shown() {
                let _ = writeln!(t, "      why (the full-size runs): {w}");
            }
        }
        if !self.figures.is_empty() {
            let _ = writeln!(t, "\nFIGURES");
            for d in &self.figures {
                let _ = writeln!(t, "{} {}: {}", d.number, d.id, d.title);
                let _ = writeln!(t, "      {}", d.about);
                let _ = writeln!(t, "      files: {}", d.files.join(", "));
            }
        }
        if !self.problems.is_empty() {
            let _ = writeln!(t, "\nRUNS THAT FAILED");
            for p in &self.problems {
                let _ = writeln!(t, "  {p}");
            }
        }
        let _ = writeln!(t, "\n{}", self.verdict());
        t
    }

    pub fn json(&self) -> Value {
        let s = self.summary();
        json!({
            "study": self.study, "seed": self.seed, "title": self.title, "machine": self.machine,
            "quick": self.quick, "notes": self.notes, "runs": self.runs, "wall_seconds": self.wall_seconds,
            "rows": self.rows.iter().map(Row::json).collect::<Vec<_>>(),
            "findings": self.findings.iter().map(Finding::json).collect::<Vec<_>>(),
            "figures": self.figures.iter().map(|d| json!({
                "id": d.id, "number": d.number, "title": d.title, "about": d.about, "files": d.files,
            })).collect::<Vec<_>>(),
            "problems": self.problems,
            "summary": {
                "rows_within_10pct": s.within10, "rows_within_35pct": s.within35, "rows_off": s.off,
                "rows_withheld": s.withheld, "rows_without_measurement": s.missing,
                "inputs_out_of_tolerance": s.inputs_out,
                "findings": s.findings, "findings_held": s.held, "findings_not_evaluated": s.not_evaluated,
                "rows_disagreeing": s.disagreeing, "rows_disagreeing_explained": s.disagreeing_explained,
            },
            "status": self.status(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rows_why_shows_only_while_it_disagrees() {
        let why = "mechanism: m. What-if: `commlab x --set a=1`";
        let close = row(Published::Value(100.0), 120.0, Kind::Prediction).why_if_off(why);
        let off = row(Published::Value(100.0), 200.0, Kind::Prediction).why_if_off(why);
        let input_out = row(Published::Value(100.0), 120.0, Kind::Input).why_if_off(why);
        let unexplained = row(Published::Value(100.0), 10.0, Kind::Prediction);
        assert_eq!(close.json()["why"], Value::Null);
        assert_eq!(off.json()["why"], why);
        assert_eq!(input_out.json()["why"], why);
        let r = Report { rows: vec![close, off, input_out, unexplained], ..Report::default() };
        let s = r.summary();
        assert_eq!((s.disagreeing, s.disagreeing_explained), (3, 2));
        assert_eq!(r.text().matches(why).count(), 2);
    }

    fn row(p: Published, m: f64, kind: Kind) -> Row {
        Row::new("T", "x", "cycles", p, kind).measured(Ok(m), "")
    }

    #[test]
    fn closeness_bands_and_ranges() {
        assert_eq!(row(Published::Value(100.0), 109.0, Kind::Input).closeness(), Closeness::Within10);
        assert_eq!(row(Published::Value(100.0), 89.0, Kind::Input).closeness(), Closeness::Within35);
        assert_eq!(row(Published::Value(100.0), 136.0, Kind::Input).closeness(), Closeness::Off);
        assert_eq!(row(Published::Range(300.0, 600.0), 450.0, Kind::Input).closeness(), Closeness::Within10);
        assert_eq!(row(Published::Range(300.0, 600.0), 640.0, Kind::Input).closeness(), Closeness::Within10);
        assert_eq!(row(Published::Range(300.0, 600.0), 700.0, Kind::Input).closeness(), Closeness::Within35);
        assert_eq!(row(Published::Withheld, 5.0, Kind::Prediction).closeness(), Closeness::Withheld);
        let none = Row::new("T", "x", "", Published::Value(1.0), Kind::Input).measured(Err("failed".into()), "");
        assert_eq!(none.closeness(), Closeness::Missing);
        assert!(none.input_out_of_tolerance());
        assert_eq!(row(Published::Value(4.0), 6.0, Kind::Prediction).ratio(), Some(1.5));
    }

    #[test]
    fn status_follows_findings_inputs_and_runs() {
        let mut r = Report { rows: vec![row(Published::Value(10.0), 10.5, Kind::Input)], ..Report::default() };
        r.findings.push(Finding::new("§1", "a", "c", "t").outcome(Ok(("m".into(), true))));
        assert_eq!(r.status(), 0);
        // A prediction far off does not fail the reproduction; an input out of tolerance does.
        r.rows.push(row(Published::Value(10.0), 30.0, Kind::Prediction));
        assert_eq!(r.status(), 0);
        r.rows.push(row(Published::Value(10.0), 12.0, Kind::Input));
        assert_eq!(r.status(), 1);
        r.rows.pop();
        // ... unless the published value contradicts the study's own figures.
        r.rows.push(row(Published::Value(10.0), 12.0, Kind::Input).caveat("Table 2 is not Table 1's product"));
        assert_eq!(r.status(), 0);
        assert_eq!(r.summary().within35, 1);
        r.findings.push(Finding::new("§2", "a", "c", "t").outcome(Err("run failed".into())));
        assert_eq!(r.status(), 1);
        assert_eq!(r.summary().not_evaluated, 1);
        let j = r.json();
        assert_eq!(j["status"], 1);
        assert_eq!(j["summary"]["rows_disagreeing"], 1);
        assert_eq!(j["summary"]["findings_held"], 1);
    }
}
