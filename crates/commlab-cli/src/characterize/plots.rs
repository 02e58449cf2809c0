//! The plots of a characterisation: one heat map (stride x working set, colour = MB/s) per
//! bandwidth kernel and core set, the core-to-core latency matrix, and the dependent-load
//! latency against the working set. `bandwidth_heatmap` (drawn by `chart/heatmap.rs`) is the
//! stride x working-set surface that `experiment copy-transfer` and `reproduce copy-transfer`
//! draw too.

use super::measure::{size_text, Point, CHASE, CORE_TO_CORE, LOCAL_KERNELS, REMOTE_KERNELS};
use crate::chart::{heatmap, line_chart, Heatmap, LineChart, Marker, Series, XKind};
use std::path::{Path, PathBuf};

/// A copy-transfer surface as a heat map into `<stem>.png` and `.svg`: stride (64-bit words)
/// across, working set up, colour = MB/s (`mb_per_s(stride, working set)`, `None`: a missing
/// cell). `commlab characterize` draws the host's with it, `commlab experiment copy-transfer`
/// a simulated machine's.
pub(crate) fn bandwidth_heatmap(
    stem: &Path,
    title: &str,
    strides: &[usize],
    sizes: &[u64],
    mb_per_s: &dyn Fn(usize, u64) -> Option<f64>,
) -> Result<Vec<PathBuf>, String> {
    let columns: Vec<String> = strides.iter().map(|s| s.to_string()).collect();
    let rows: Vec<String> = sizes.iter().map(|&s| size_text(s)).collect();
    let values: Vec<Vec<f64>> =
        sizes.iter().map(|&w| strides.iter().map(|&s| mb_per_s(s, w).unwrap_or(f64::NAN)).collect()).collect();
    heatmap(
        stem,
        &Heatmap {
            title,
            x_label: "stride (64-bit words)",
            y_label: "working set (bytes)",
            unit: "MB/s",
            columns: &columns,
            rows: &rows,
            values: &values,
            annotate: false,
        },
    )
}

/// Draw every plot into `dir`; returns the files written.
/// `markers`: the cache sizes, drawn on the load-latency curve.
pub fn draw(
    dir: &Path,
    host: &str,
    strides: &[usize],
    sizes: &[u64],
    points: &[Point],
    markers: &[Marker],
) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for kernel in LOCAL_KERNELS.iter().chain(&REMOTE_KERNELS) {
        let mut core_sets: Vec<&Vec<usize>> = Vec::new();
        for p in points.iter().filter(|p| p.kernel == *kernel) {
            if !core_sets.contains(&&p.cores) {
                core_sets.push(&p.cores);
            }
        }
        for cores in core_sets {
            let of = |s: usize, w: u64| {
                points
                    .iter()
                    .find(|p| {
                        p.kernel == *kernel
                            && p.cores == *cores
                            && p.stride == Some(s)
                            && p.working_set_bytes == Some(w)
                    })
                    .and_then(|p| p.mb_per_s)
            };
            let on = cores.iter().map(|c| c.to_string()).collect::<Vec<_>>().join("->");
            let title = format!("{host}: {kernel} (core {on})");
            let stem = if cores.len() > 1 {
                dir.join(format!(
                    "heatmap-{kernel}-{}",
                    cores.iter().map(|c| c.to_string()).collect::<Vec<_>>().join("-")
                ))
            } else {
                dir.join(format!("heatmap-{kernel}"))
            };
            files.extend(bandwidth_heatmap(&stem, &title, strides, sizes, &of)?);
        }
    }
    let lat: Vec<&Point> = points.iter().filter(|p| p.kernel == CORE_TO_CORE).collect();
    if !lat.is_empty() {
        let mut cores: Vec<usize> = lat.iter().flat_map(|p| p.cores.iter().copied()).collect();
        cores.sort_unstable();
        cores.dedup();
        let names: Vec<String> = cores.iter().map(|c| c.to_string()).collect();
        let values: Vec<Vec<f64>> = cores
            .iter()
            .map(|&b| {
                cores
                    .iter()
                    .map(|&a| {
                        lat.iter()
                            .find(|p| (p.cores[0], p.cores[1]) == (a, b) || (p.cores[0], p.cores[1]) == (b, a))
                            .map(|p| p.ns)
                            .unwrap_or(f64::NAN)
                    })
                    .collect()
            })
            .collect();
        let title = format!("{host}: core-to-core one-way latency");
        files.extend(heatmap(
            &dir.join("latency-matrix"),
            &Heatmap {
                title: &title,
                x_label: "core",
                y_label: "core",
                unit: "ns",
                columns: &names,
                rows: &names,
                values: &values,
                annotate: cores.len() <= 16,
            },
        )?);
    }
    let chase: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.kernel == CHASE)
        .filter_map(|p| p.working_set_bytes.map(|w| (w as f64, p.ns)))
        .collect();
    if !chase.is_empty() {
        let title = format!("{host}: dependent-load latency");
        let series = [Series { name: "chase".to_string(), points: chase }];
        files.extend(line_chart(
            &dir.join("load-latency"),
            &LineChart {
                title: &title,
                x_label: "working set (bytes)",
                y_label: "ns per load",
                series: &series,
                crossovers: &[],
                markers,
                log_x: true,
                x_kind: XKind::Bytes,
            },
        )?);
    }
    Ok(files)
}
