//! An experiment's finished runs read back from its results file, and its summary files.

use crate::failure::{failed, input, Failure};
use crate::record::{self, ResultRecord};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// One finished run, as read back from results.jsonl.
pub(super) struct Row {
    /// The varied key's value (sweeping experiments).
    pub(super) vary: f64,
    pub(super) record: ResultRecord,
}

/// The runs of a results file, in the app's variant order (`variants`), then by the varied
/// key's value: not in file order, which is the order runs finished in (it depends on --jobs
/// and thread timing, and on what an earlier, resumed run did).
pub(super) fn read_rows(path: &Path, key: Option<&str>, variants: &[&str]) -> Result<Vec<Row>, Failure> {
    let text = std::fs::read_to_string(path).map_err(|e| input(format!("cannot read `{}`: {e}", path.display())))?;
    let records = record::read_records(&text).map_err(|bad| input(bad.message(path)))?;
    let mut rows: Vec<Row> = records
        .into_iter()
        .map(|n| Row { vary: key.map_or(0.0, |k| n.record.vary_number(k)), record: n.record })
        .collect();
    let rank = |r: &Row| variants.iter().position(|v| *v == r.record.variant).unwrap_or(usize::MAX);
    rows.sort_by(|a, b| {
        rank(a).cmp(&rank(b)).then_with(|| a.record.variant.cmp(&b.record.variant)).then(a.vary.total_cmp(&b.vary))
    });
    Ok(rows)
}

fn write_file(path: &Path, text: &str) -> Result<(), Failure> {
    std::fs::write(path, text).map_err(|e| failed(format!("writing `{}`: {e}", path.display())))
}

/// The plots' names as `experiment.json` records them: relative to the experiment's folder, so a
/// folder that is moved or committed does not name the directory it was written in.
pub(super) fn plot_names(files: &[PathBuf]) -> Vec<String> {
    files
        .iter()
        .map(|f| f.file_name().map_or_else(|| f.display().to_string(), |n| n.to_string_lossy().into_owned()))
        .collect()
}

/// Write an experiment's `experiment.json` (`summary`) and `experiment.txt` (`text`) into `dir`;
/// returns `text` followed by the plots' paths, as the experiment prints it.
pub(super) fn write_summary(dir: &Path, summary: &Value, text: String, plots: &[PathBuf]) -> Result<String, Failure> {
    write_file(&dir.join("experiment.json"), &(serde_json::to_string_pretty(summary).expect("json") + "\n"))?;
    write_file(&dir.join("experiment.txt"), &text)?;
    let mut shown = text;
    for f in plots {
        shown.push_str(&format!("  plot: {}\n", f.display()));
    }
    Ok(shown)
}
