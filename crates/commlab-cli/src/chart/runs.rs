//! Stacked bars of runs, one bar per run record: the time breakdown (mean cycles per processor
//! by category) or the traffic volume (bytes by class). `commlab plot breakdown|volume` and
//! every experiment draw them through here, so both label them alike: the layers are the
//! `commlab-api` categories and classes, in their `ALL` order, bottom first, named by their
//! `label()`, and the y axis is named by [`Stack::y_label`].

use super::bars::stacked_bars;
use super::spec::BarChart;
use crate::record::ResultRecord;
use commlab_api::{Category, TrafficClass};
use std::path::{Path, PathBuf};

/// What the bars of runs stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stack {
    /// Mean cycles per processor in each [`Category`].
    Time,
    /// Bytes injected in each [`TrafficClass`].
    Traffic,
}

impl Stack {
    /// The y axis label.
    pub fn y_label(self) -> &'static str {
        match self {
            Stack::Time => "mean time per processor (processor cycles)",
            Stack::Traffic => "traffic volume (bytes)",
        }
    }

    /// The layers, bottom first: (legend label, value per run). A value a record lacks is NaN
    /// (drawn as nothing).
    pub fn layers(self, runs: &[&ResultRecord]) -> Vec<(String, Vec<f64>)> {
        match self {
            Stack::Time => Category::ALL
                .iter()
                .map(|&c| (c.label().to_string(), runs.iter().map(|r| r.time(c)).collect()))
                .collect(),
            Stack::Traffic => TrafficClass::ALL
                .iter()
                .map(|&c| {
                    let bytes = runs.iter().map(|r| r.bytes(c).map_or(f64::NAN, |b| b as f64)).collect();
                    (c.label().to_string(), bytes)
                })
                .collect(),
        }
    }
}

/// A stacked bar chart of runs: its text, and one bar name per run.
pub struct RunBars<'a> {
    pub stack: Stack,
    pub title: &'a str,
    pub bars: &'a [String],
    pub runs: &'a [&'a ResultRecord],
}

/// Draw `<stem>.png` and `<stem>.svg`; returns both paths.
pub fn draw(stem: &Path, chart: &RunBars) -> Result<Vec<PathBuf>, String> {
    let layers = chart.stack.layers(chart.runs);
    let y_label = chart.stack.y_label();
    stacked_bars(stem, &BarChart { title: chart.title, y_label, bars: chart.bars, layers: &layers })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_follow_the_api_order_with_its_labels() {
        let mut r = ResultRecord::default();
        r.breakdown.insert("memory_ni_wait".into(), 5.0);
        r.volume_bytes.insert("cross_traffic".into(), 7);
        let time = Stack::Time.layers(&[&r]);
        let names: Vec<&str> = time.iter().map(|l| l.0.as_str()).collect();
        assert_eq!(names, ["compute", "memory & NI wait", "message overhead", "synchronization"]);
        assert!(time[0].1[0].is_nan() && time[1].1 == [5.0]);
        let traffic = Stack::Traffic.layers(&[&r]);
        let names: Vec<&str> = traffic.iter().map(|l| l.0.as_str()).collect();
        assert_eq!(names, ["invalidates", "requests", "headers", "data", "cross-traffic"]);
        assert_eq!(traffic[4].1, [7.0]);
    }
}
