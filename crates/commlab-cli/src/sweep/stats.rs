//! `commlab sweep --stats KIND`: the detailed statistics of `run --stats` for every run of a
//! sweep, one file per run and kind, named by its point: `DIR/stats/KIND/p<point>.<variant>.jsonl`
//! (the rows of `run --stats KIND=FILE.jsonl`, each with the run's `point` and `vary`). A run
//! redone by `--resume` replaces its files, so a file is whole when its record is in
//! results.jsonl. Latency distributions are in each record too (`latencies`).

use crate::detail_stats::{self, Detail};
use crate::failure::{failed, input, Failure};
use commlab_apps::AppResult;
use commlab_sim::machine::MachineConfig;
use commlab_sim::Simulator;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// The statistics a sweep keeps for every run, and where.
#[derive(Clone, Debug, Default)]
pub struct PointStats {
    kinds: Vec<Detail>,
    dir: PathBuf,
}

/// Parse a sweep's `--stats` (kinds without files: the sweep names the files).
pub fn parse_kinds(args: &[String]) -> Result<Vec<Detail>, Failure> {
    let mut kinds = Vec::new();
    for arg in args {
        let other = arg.trim();
        let kind = match (Detail::named(other), other.strip_prefix("interval=")) {
            (Some(kind), _) => kind,
            (None, Some(cycles)) => Detail::interval(cycles, &format!("--stats `{other}`"))?,
            (None, None) if other.contains('=') => {
                return Err(input(format!(
                    "--stats `{other}`: a sweep names its statistics files itself (DIR/stats/KIND/p<point>.<variant>.jsonl); give the kind alone: per-node, per-link, latency or interval=CYCLES"
                )))
            }
            (None, None) => {
                return Err(input(format!(
                    "--stats `{other}`: valid kinds are per-node, per-link, latency and interval=CYCLES"
                )))
            }
        };
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    detail_stats::one_interval(kinds.iter().copied())?;
    Ok(kinds)
}

impl PointStats {
    /// The statistics `args` ask for, kept under `out/stats` (its directories made now).
    pub fn new(args: &[String], out: &Path) -> Result<PointStats, Failure> {
        let stats = PointStats { kinds: parse_kinds(args)?, dir: out.join("stats") };
        for k in &stats.kinds {
            let d = stats.dir.join(k.name());
            std::fs::create_dir_all(&d).map_err(|e| input(format!("cannot create `{}`: {e}", d.display())))?;
        }
        Ok(stats)
    }

    /// The simulator for one run, recording what the files need.
    pub fn simulator(&self, cfg: MachineConfig) -> Simulator {
        let interval = detail_stats::one_interval(self.kinds.iter().copied()).ok().flatten(); // one length: parse_kinds
        Simulator::new(cfg).record_latencies(self.kinds.contains(&Detail::Latency)).intervals(interval)
    }

    /// The file of `kind` for (point, variant).
    pub fn path(&self, kind: Detail, point: usize, variant: &str) -> PathBuf {
        self.dir.join(kind.name()).join(format!("p{point:05}.{variant}.jsonl"))
    }

    /// Write the run's files (replacing any a resumed sweep left).
    pub fn write(&self, r: &AppResult, point: usize, vary: &Map<String, Value>) -> Result<(), Failure> {
        for &kind in &self.kinds {
            let mut text = String::new();
            for mut row in detail_stats::rows(r, kind) {
                row["point"] = json!(point);
                row["vary"] = Value::Object(vary.clone());
                text.push_str(&row.to_string());
                text.push('\n');
            }
            let path = self.path(kind, point, r.variant);
            std::fs::write(&path, text)
                .map_err(|e| failed(format!("writing --stats {} `{}`: {e}", kind.name(), path.display())))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_parse_or_name_the_bad_input() {
        let ok = |a: &[&str]| parse_kinds(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(
            ok(&["latency", "interval=500", "per-node", "latency"]).map_err(|f| f.message).unwrap(),
            vec![Detail::Latency, Detail::Interval(500.0), Detail::PerNode]
        );
        for (bad, says) in [
            (&["latency=l.jsonl"][..], "names its statistics files itself"),
            (&["nodes"][..], "valid kinds"),
            (&["interval=0"][..], "at least 1 cycle"),
            (&["interval=x"][..], "not a number"),
            (&["interval=10", "interval=20"][..], "two lengths"),
        ] {
            let Err(e) = ok(bad) else { panic!("{bad:?} accepted") };
            assert_eq!(e.status, 2);
            assert!(e.message.contains(says), "{bad:?}: {}", e.message);
        }
    }
}
