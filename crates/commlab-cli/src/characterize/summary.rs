//! The summary of a characterisation: plateaus per cache level, remote/local and fetch/deposit
//! ratios, whether packing by a local copy could ever pay, the core-to-core latency, as a
//! table and as `summary.json`.

use super::measure::{size_text, Point, CHASE, CORE_TO_CORE};
use super::topology::Topology;
use serde::Serialize;
use std::collections::BTreeMap;

/// One band of working sets and what the kernels reach in it.
#[derive(Clone, Debug, Serialize)]
pub struct Plateau {
    /// `L1`, `L2`, ... or `memory`.
    pub level: String,
    /// The cache's size (none for memory).
    pub cache_bytes: Option<u64>,
    /// The working sets taken as the plateau (those well inside the level: above the previous
    /// level's size, at most half of this one's; beyond twice the last level for memory).
    pub working_sets: Vec<u64>,
    /// Median MB/s of load-sum at stride 1 over those working sets.
    pub load_sum_mb_per_s: Option<f64>,
    /// Median MB/s of the contiguous copy (copy-strided-load at stride 1).
    pub copy_mb_per_s: Option<f64>,
    /// Median dependent-load latency (chase), ns.
    pub load_latency_ns: Option<f64>,
}

/// Ratios for one core pair (geometric means over every stride x working set measured).
#[derive(Clone, Debug, Serialize)]
pub struct PairSummary {
    pub cores: Vec<usize>,
    pub pair: String,
    pub remote_over_local_fetch: Option<f64>,
    pub remote_over_local_deposit: Option<f64>,
    /// Remote fetch MB/s over remote deposit MB/s.
    pub fetch_over_deposit: Option<f64>,
    /// Largest stride-1 remote fetch MB/s (the bulk-transfer bandwidth).
    pub bulk_mb_per_s: Option<f64>,
    /// At the working set of the best stride-1 remote fetch.
    pub bulk_working_set_bytes: Option<u64>,
    pub packing: Vec<Packing>,
}

/// Whether packing (a local strided copy into a contiguous buffer, then a contiguous transfer)
/// beats transferring strided data directly: time per byte `1/B_copy(s) + 1/B_remote(1)`
/// against `1/B_remote(s)`, at every stride s > 1 and working set.
#[derive(Clone, Debug, Serialize)]
pub struct Packing {
    /// `remote-fetch` or `remote-deposit`.
    pub transfer: String,
    pub points: usize,
    pub pays_at: usize,
    /// The largest speed-up of packing (direct time / packed time) and where.
    pub best_gain: Option<f64>,
    pub best_stride: Option<usize>,
    pub best_working_set_bytes: Option<u64>,
}

/// Core-to-core one-way latency.
#[derive(Clone, Debug, Serialize)]
pub struct Latency {
    pub pairs: usize,
    pub min_ns: f64,
    pub median_ns: f64,
    pub max_ns: f64,
    /// Median by pair class.
    pub by_class: BTreeMap<String, f64>,
}

/// Everything `summary.json` holds.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub host: String,
    pub clock_mhz: Option<f64>,
    pub topology: Topology,
    pub strides: Vec<usize>,
    pub working_sets: Vec<u64>,
    pub plateaus: Vec<Plateau>,
    /// Set when the largest working set is within the last-level cache.
    pub memory_not_reached: Option<String>,
    pub pairs: Vec<PairSummary>,
    pub core_to_core: Option<Latency>,
    pub points: usize,
    pub wall_seconds: f64,
}

pub(crate) fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 })
}

pub(crate) fn geomean(v: &[f64]) -> Option<f64> {
    let v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite() && *x > 0.0).collect();
    if v.is_empty() {
        return None;
    }
    Some((v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp())
}

/// MB/s of `kernel` at (stride, working set), for pair `cores` (or any cores when empty).
struct Index<'a>(BTreeMap<(&'a str, usize, u64, &'a [usize]), f64>);

impl<'a> Index<'a> {
    fn new(points: &'a [Point]) -> Index<'a> {
        let mut m = BTreeMap::new();
        for p in points {
            if let (Some(s), Some(ws), Some(mb)) = (p.stride, p.working_set_bytes, p.mb_per_s) {
                m.insert((p.kernel.as_str(), s, ws, &p.cores[..]), mb);
            }
        }
        Index(m)
    }

    fn get(&self, kernel: &str, stride: usize, ws: u64, cores: &[usize]) -> Option<f64> {
        self.0.get(&(kernel, stride, ws, cores)).copied()
    }
}

/// Summarise the points (`wall_seconds` is left 0 for the caller to set).
pub fn summarise(
    host: &str,
    clock_mhz: Option<f64>,
    topo: &Topology,
    strides: &[usize],
    sizes: &[u64],
    home: usize,
    points: &[Point],
) -> Summary {
    let idx = Index::new(points);
    let home_cores = [home];
    let chase: BTreeMap<u64, f64> =
        points.iter().filter(|p| p.kernel == CHASE).filter_map(|p| p.working_set_bytes.map(|ws| (ws, p.ns))).collect();
    let band = |level: String, cache: Option<u64>, lo: u64, hi: u64| {
        let ws: Vec<u64> = sizes.iter().copied().filter(|&s| s > lo && s <= hi).collect();
        let pick = |k: &str| median(ws.iter().filter_map(|&w| idx.get(k, 1, w, &home_cores)).collect());
        Plateau {
            level,
            cache_bytes: cache,
            load_sum_mb_per_s: pick("load-sum"),
            copy_mb_per_s: pick("copy-strided-load"),
            load_latency_ns: median(chase.iter().filter(|(w, _)| **w > lo && **w <= hi).map(|(_, ns)| *ns).collect()),
            working_sets: ws,
        }
    };
    let mut plateaus = Vec::new();
    let mut prev = 0u64;
    // One band per level, the largest cache of each level (data over unified at level 1).
    let mut levels: Vec<(u8, u64)> = Vec::new();
    for c in &topo.caches {
        match levels.iter_mut().find(|l| l.0 == c.level) {
            Some(l) => l.1 = l.1.max(c.size_bytes),
            None => levels.push((c.level, c.size_bytes)),
        }
    }
    for &(level, size) in &levels {
        plateaus.push(band(format!("L{level}"), Some(size), prev, size / 2));
        prev = size;
    }
    let llc = levels.last().map(|l| l.1);
    let memory_from = llc.map(|l| 2 * l).unwrap_or(u64::MAX);
    let memory = band("memory".to_string(), None, memory_from - 1, u64::MAX);
    let largest = sizes.last().copied().unwrap_or(0);
    let memory_not_reached = match llc {
        Some(l) if memory.working_sets.is_empty() => Some(format!(
            "the largest working set ({}) is not beyond twice the last-level cache ({}): memory was not measured{} (give --sizes to go further)",
            size_text(largest),
            size_text(l),
            if largest > l { " alone" } else { "" }
        )),
        None => Some("the caches are unknown: no plateau per level".to_string()),
        _ => None,
    };
    plateaus.push(memory);

    let mut pairs_seen: Vec<(Vec<usize>, String)> = Vec::new();
    for p in points.iter().filter(|p| p.kernel.starts_with("remote-")) {
        if !pairs_seen.iter().any(|(c, _)| *c == p.cores) {
            pairs_seen.push((p.cores.clone(), p.pair.clone().unwrap_or_default()));
        }
    }
    let pairs =
        pairs_seen.into_iter().map(|(cores, pair)| pair_summary(&idx, strides, sizes, home, cores, pair)).collect();

    let lat: Vec<&Point> = points.iter().filter(|p| p.kernel == CORE_TO_CORE).collect();
    let core_to_core = (!lat.is_empty()).then(|| {
        let ns: Vec<f64> = lat.iter().map(|p| p.ns).collect();
        let mut by: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for p in &lat {
            by.entry(p.pair.clone().unwrap_or_default()).or_default().push(p.ns);
        }
        Latency {
            pairs: lat.len(),
            min_ns: ns.iter().copied().fold(f64::INFINITY, f64::min),
            median_ns: median(ns.clone()).unwrap_or(f64::NAN),
            max_ns: ns.iter().copied().fold(0.0, f64::max),
            by_class: by.into_iter().filter_map(|(k, v)| median(v).map(|m| (k, m))).collect(),
        }
    });
    Summary {
        host: host.to_string(),
        clock_mhz,
        topology: topo.clone(),
        strides: strides.to_vec(),
        working_sets: sizes.to_vec(),
        plateaus,
        memory_not_reached,
        pairs,
        core_to_core,
        points: points.len(),
        wall_seconds: 0.0,
    }
}

fn pair_summary(
    idx: &Index,
    strides: &[usize],
    sizes: &[u64],
    home: usize,
    cores: Vec<usize>,
    pair: String,
) -> PairSummary {
    let ratio = |num: &str, num_cores: &[usize], den: &str, den_cores: &[usize]| {
        let mut v = Vec::new();
        for &s in strides {
            for &w in sizes {
                if let (Some(a), Some(b)) = (idx.get(num, s, w, num_cores), idx.get(den, s, w, den_cores)) {
                    v.push(a / b);
                }
            }
        }
        geomean(&v)
    };
    let home_cores = [home];
    let bulk = sizes
        .iter()
        .filter_map(|&w| idx.get("remote-fetch", 1, w, &cores).map(|mb| (w, mb)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let packing = ["remote-fetch", "remote-deposit"]
        .iter()
        .map(|&transfer| {
            let mut pk = Packing {
                transfer: transfer.to_string(),
                points: 0,
                pays_at: 0,
                best_gain: None,
                best_stride: None,
                best_working_set_bytes: None,
            };
            for &s in strides.iter().filter(|&&s| s > 1) {
                for &w in sizes {
                    let (Some(direct), Some(pack), Some(contig)) = (
                        idx.get(transfer, s, w, &cores),
                        idx.get("copy-strided-load", s, w, &home_cores),
                        idx.get(transfer, 1, w, &cores),
                    ) else {
                        continue;
                    };
                    pk.points += 1;
                    let gain = (1.0 / direct) / (1.0 / pack + 1.0 / contig);
                    if gain > 1.0 {
                        pk.pays_at += 1;
                    }
                    if pk.best_gain.is_none_or(|g| gain > g) {
                        pk.best_gain = Some(gain);
                        pk.best_stride = Some(s);
                        pk.best_working_set_bytes = Some(w);
                    }
                }
            }
            pk
        })
        .collect();
    PairSummary {
        remote_over_local_fetch: ratio("remote-fetch", &cores, "local-fetch", &home_cores),
        remote_over_local_deposit: ratio("remote-deposit", &cores, "local-deposit", &home_cores),
        fetch_over_deposit: ratio("remote-fetch", &cores, "remote-deposit", &cores),
        bulk_mb_per_s: bulk.map(|b| b.1),
        bulk_working_set_bytes: bulk.map(|b| b.0),
        cores,
        pair,
        packing,
    }
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map(|x| format!("{x:.digits$}")).unwrap_or_else(|| "-".to_string())
}

/// The summary as the table `commlab characterize` prints.
pub fn table(s: &Summary) -> String {
    let mut out = String::new();
    let t = &s.topology;
    out.push_str(&format!(
        "host {}: {} cores, {} NUMA node(s), clock {}\n",
        s.host,
        t.cores.len(),
        t.numa_nodes,
        s.clock_mhz.map(|m| format!("{m:.0} MHz (measured)")).unwrap_or_else(|| "not measured".into())
    ));
    for c in &t.caches {
        out.push_str(&format!(
            "  L{} {:<8} {:>6}, {}-byte lines, {}-way, shared by up to {} logical processors\n",
            c.level,
            c.kind,
            size_text(c.size_bytes),
            c.line_bytes,
            c.ways,
            c.shared_by
        ));
    }
    out.push_str(&format!(
        "\nplateaus (home core; stride 1)\n{:<8} {:>8}  {:<14} {:>14} {:>12} {:>12}\n",
        "level", "size", "working sets", "load-sum MB/s", "copy MB/s", "load ns"
    ));
    for p in &s.plateaus {
        let ws = match (p.working_sets.first(), p.working_sets.last()) {
            (Some(a), Some(b)) if a == b => size_text(*a),
            (Some(a), Some(b)) => format!("{}-{}", size_text(*a), size_text(*b)),
            _ => "none".to_string(),
        };
        out.push_str(&format!(
            "{:<8} {:>8}  {:<14} {:>14} {:>12} {:>12}\n",
            p.level,
            p.cache_bytes.map(size_text).unwrap_or_else(|| "-".into()),
            ws,
            opt(p.load_sum_mb_per_s, 0),
            opt(p.copy_mb_per_s, 0),
            opt(p.load_latency_ns, 1)
        ));
    }
    if let Some(note) = &s.memory_not_reached {
        out.push_str(&format!("note: {note}\n"));
    }
    for p in &s.pairs {
        out.push_str(&format!(
            "\npair {} -> {} ({}), geometric means over {} strides x {} working sets\n",
            p.cores[0],
            p.cores[1],
            p.pair,
            s.strides.len(),
            s.working_sets.len()
        ));
        out.push_str(&format!("  remote/local fetch     {}\n", opt(p.remote_over_local_fetch, 3)));
        out.push_str(&format!("  remote/local deposit   {}\n", opt(p.remote_over_local_deposit, 3)));
        out.push_str(&format!("  fetch/deposit (remote) {}\n", opt(p.fetch_over_deposit, 3)));
        out.push_str(&format!(
            "  bulk (stride-1 remote fetch, best) {} MB/s at {}\n",
            opt(p.bulk_mb_per_s, 0),
            p.bulk_working_set_bytes.map(size_text).unwrap_or_else(|| "-".into())
        ));
        for k in &p.packing {
            let verdict = if k.points == 0 {
                "not measured (needs strides 1 and > 1)".to_string()
            } else if k.pays_at == 0 {
                format!(
                    "never pays ({} points; best {:.2}x at stride {}, {})",
                    k.points,
                    k.best_gain.unwrap_or(f64::NAN),
                    k.best_stride.unwrap_or(0),
                    size_text(k.best_working_set_bytes.unwrap_or(0))
                )
            } else {
                format!(
                    "pays at {} of {} points (best {:.2}x at stride {}, {})",
                    k.pays_at,
                    k.points,
                    k.best_gain.unwrap_or(f64::NAN),
                    k.best_stride.unwrap_or(0),
                    size_text(k.best_working_set_bytes.unwrap_or(0))
                )
            };
            out.push_str(&format!("  packing by local copy, then {}: {verdict}\n", k.transfer));
        }
    }
    if s.pairs.is_empty() {
        out.push_str("\nno core pair: remote kernels not measured (one core available)\n");
    }
    if let Some(l) = &s.core_to_core {
        out.push_str(&format!(
            "\ncore-to-core one-way latency over {} pair(s): min {:.1} ns, median {:.1} ns, max {:.1} ns",
            l.pairs, l.min_ns, l.median_ns, l.max_ns
        ));
        if let Some(mhz) = s.clock_mhz {
            out.push_str(&format!(" (median {:.0} cycles)", l.median_ns * mhz / 1000.0));
        }
        out.push('\n');
        for (class, ns) in &l.by_class {
            out.push_str(&format!("  {class}: {ns:.1} ns\n"));
        }
    }
    out.push_str(&format!("\n{} points in {:.1} s\n", s.points, s.wall_seconds));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_means() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(vec![f64::NAN]), None);
        assert!((geomean(&[2.0, 8.0]).unwrap() - 4.0).abs() < 1e-12);
        assert_eq!(geomean(&[]), None);
    }

    fn bw(kernel: &str, stride: usize, ws: u64, mb: f64, cores: Vec<usize>) -> Point {
        Point {
            kernel: kernel.into(),
            stride: Some(stride),
            working_set_bytes: Some(ws),
            mb_per_s: Some(mb),
            ns: ws as f64 / mb * 1e3,
            cores,
            pair: None,
            samples: 1,
        }
    }

    #[test]
    fn packing_pays_when_the_strided_transfer_is_slow() {
        // Strided remote fetch at 100 MB/s; a local packing copy at 1000 and a contiguous
        // remote fetch at 1000: packed time per byte 2/1000 < 1/100, a 5x gain.
        let pts = vec![
            bw("remote-fetch", 1, 4096, 1000.0, vec![0, 1]),
            bw("remote-fetch", 8, 4096, 100.0, vec![0, 1]),
            bw("copy-strided-load", 8, 4096, 1000.0, vec![0]),
            bw("local-fetch", 1, 4096, 2000.0, vec![0]),
            bw("local-fetch", 8, 4096, 200.0, vec![0]),
        ];
        let idx = Index::new(&pts);
        let p = pair_summary(&idx, &[1, 8], &[4096], 0, vec![0, 1], "same-cache".into());
        assert_eq!(p.packing[0].points, 1);
        assert_eq!(p.packing[0].pays_at, 1);
        assert!((p.packing[0].best_gain.unwrap() - 5.0).abs() < 1e-9);
        assert!((p.remote_over_local_fetch.unwrap() - 0.5).abs() < 1e-9);
        assert_eq!(p.bulk_mb_per_s, Some(1000.0));
        assert_eq!(p.packing[1].points, 0, "no deposit points");
    }
}
