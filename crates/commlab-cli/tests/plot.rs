//! Black-box tests of `commlab plot`: runtime curves and breakdown/volume bars drawn from real
//! sweep and run results (PNG decodes to the plot size with text on it, SVG carries the title,
//! axis labels, every variant and the legend), determinism, and the bad-input contract (exit
//! status 2, one `commlab: ` line).

use crate::common;
use common::*;

use std::path::{Path, PathBuf};

/// Every plot's size in pixels (`plot::SIZE`).
const SIZE: (u32, u32) = (1000, 640);

const EM3D_VARIANTS: [&str; 5] = ["sm", "sm-pf", "mp-int", "mp-poll", "bulk"];

/// A small EM3D sweep (8 processors, every variant, 4 send overheads on a log range, where the
/// variants cross) in `dir`; returns the results file.
fn em3d_sweep(dir: &TempDir) -> PathBuf {
    ok(&[
        "sweep",
        "em3d",
        "--procs",
        "8",
        "--param",
        "nodes=320",
        "--param",
        "iterations=1",
        "--vary",
        "messaging.send_overhead_cycles=10:1000:4:log",
        "--jobs",
        "2",
        "--out",
        dir.arg(),
    ]);
    dir.file("results.jsonl")
}

/// `commlab plot args`; checks that it printed exactly `expected` (paths), one per line.
fn plot_ok(args: &[&str], expected: &[PathBuf]) {
    let mut all = vec!["plot"];
    all.extend(args);
    let out = ok(&all);
    let printed: Vec<PathBuf> = out.lines().map(PathBuf::from).collect();
    assert_eq!(printed, expected, "commlab {all:?} printed:\n{out}");
}

/// Decode a PNG; check its size and that it has dark pixels (text) in the title band and in
/// the left margin (the y axis label and ticks).
fn check_png(path: &Path) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "{}: no PNG signature", path.display());
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().expect("PNG header");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("PNG frame decodes");
    assert_eq!((info.width, info.height), SIZE, "{}", path.display());
    let channels = info.line_size / info.width as usize;
    assert!(channels >= 3, "{}: colour type {:?}", path.display(), info.color_type);
    let dark = |x0: u32, x1: u32, y0: u32, y1: u32| {
        (y0..y1)
            .flat_map(|y| (x0..x1).map(move |x| (x, y)))
            .filter(|&(x, y)| {
                let i = y as usize * info.line_size + x as usize * channels;
                buf[i..i + 3].iter().all(|&c| c < 128)
            })
            .count()
    };
    assert!(dark(0, SIZE.0, 0, 36) > 200, "{}: no title text", path.display());
    assert!(dark(0, 40, 100, SIZE.1 - 100) > 100, "{}: no y axis label", path.display());
}

/// Read an SVG; check it is an SVG document of the plot size holding every one of `needles`
/// as a text element; return its texts.
fn check_svg(path: &Path, needles: &[&str]) -> Vec<String> {
    let svg = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(svg.trim_start().starts_with("<svg") && svg.trim_end().ends_with("</svg>"), "{}", path.display());
    assert_eq!(svg.matches("<text").count(), svg.matches("</text>").count(), "{}", path.display());
    assert!(svg.contains(&format!("width=\"{}\" height=\"{}\"", SIZE.0, SIZE.1)), "{}", path.display());
    let texts = svg_texts(&svg);
    for n in needles {
        assert!(texts.iter().any(|t| t == n), "{}: no text `{n}` in {texts:?}", path.display());
    }
    texts
}

#[test]
fn runtime_breakdown_and_volume_from_a_sweep() {
    let dir = TempDir::new("sweep");
    let results = em3d_sweep(&dir);
    let r = results.to_str().unwrap();
    let pair = |stem: &str| vec![dir.file(&format!("{stem}.png")), dir.file(&format!("{stem}.svg"))];

    plot_ok(&["runtime", r], &pair("runtime"));
    check_png(&dir.file("runtime.png"));
    let mut needles = vec![
        "em3d: runtime vs messaging.send_overhead_cycles (alewife, 8 procs)",
        "messaging.send_overhead_cycles (cycles)",
        "runtime (processor cycles)",
        "legend",
        "crossover",
    ];
    needles.extend(EM3D_VARIANTS);
    let texts = check_svg(&dir.file("runtime.svg"), &needles);
    // The summary's crossovers are marked with their "a/b" labels.
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.file("summary.json")).unwrap()).unwrap();
    let crossovers = summary["groups"][0]["crossovers"].as_array().unwrap();
    assert!(!crossovers.is_empty(), "this sweep has crossovers");
    for c in crossovers {
        let label = format!("{}/{}", c["a"].as_str().unwrap(), c["b"].as_str().unwrap());
        assert!(texts.contains(&label), "no crossover label {label}");
    }

    plot_ok(&["breakdown", r], &pair("breakdown"));
    check_png(&dir.file("breakdown.png"));
    let mut needles = vec![
        "em3d: time per processor by category (alewife, 8 procs, messaging.send_overhead_cycles=10)",
        "mean time per processor (processor cycles)",
        "legend",
        "compute",
        "memory & NI wait",
        "message overhead",
        "synchronization",
    ];
    needles.extend(EM3D_VARIANTS);
    check_svg(&dir.file("breakdown.svg"), &needles);

    let out = TempDir::new("volume-out");
    plot_ok(&["volume", r, "--at", "1000", "--out", out.arg()], &[out.file("volume.png"), out.file("volume.svg")]);
    check_png(&out.file("volume.png"));
    let mut needles = vec![
        "em3d: network traffic by class (alewife, 8 procs, messaging.send_overhead_cycles=1000)",
        "traffic volume (bytes)",
        "legend",
        "invalidates",
        "requests",
        "headers",
        "data",
        "cross-traffic",
    ];
    needles.extend(EM3D_VARIANTS);
    check_svg(&out.file("volume.svg"), &needles);
}

#[test]
fn plots_are_byte_identical_across_renders() {
    let dir = TempDir::new("det");
    let results = em3d_sweep(&dir);
    let (a, b) = (TempDir::new("det-a"), TempDir::new("det-b"));
    for kind in ["runtime", "breakdown", "volume"] {
        for out in [&a, &b] {
            ok(&["plot", kind, results.to_str().unwrap(), "--out", out.arg()]);
        }
        for ext in ["png", "svg"] {
            let name = format!("{kind}.{ext}");
            let (x, y) = (std::fs::read(a.file(&name)).unwrap(), std::fs::read(b.file(&name)).unwrap());
            assert!(x == y, "{name} differs between two renders");
        }
    }
}

#[test]
fn plain_run_output_draws_bars_but_no_runtime() {
    let dir = TempDir::new("run");
    std::fs::create_dir_all(dir.path()).unwrap();
    let results = dir.file("em3d.jsonl");
    let r = results.to_str().unwrap();
    ok(&["run", "em3d", "--procs", "8", "--param", "nodes=320", "--param", "iterations=1", "--json", "--out", r]);
    for kind in ["breakdown", "volume"] {
        plot_ok(&[kind, r], &[dir.file(&format!("{kind}.png")), dir.file(&format!("{kind}.svg"))]);
        check_png(&dir.file(&format!("{kind}.png")));
        let texts = check_svg(&dir.file(&format!("{kind}.svg")), &EM3D_VARIANTS);
        assert!(texts[0].ends_with("(alewife, 8 procs)"), "{kind}: title names machine and processors: {}", texts[0]);
    }
    bad_input(&["plot", "runtime", r], &["line 1", "no \"vary\"", "commlab sweep"]);
    bad_input(&["plot", "breakdown", r, "--at", "10"], &["--at", "plain run results"]);
}

#[test]
fn a_grid_draws_one_chart_per_combination_of_the_other_keys() {
    let dir = TempDir::new("grid");
    ok(&[
        "sweep",
        "am-latency",
        "--vary",
        "messaging.send_overhead_cycles=10,100,1000",
        "--vary",
        "hops=1,4",
        "--out",
        dir.arg(),
    ]);
    let results = dir.file("results.jsonl");
    let r = results.to_str().unwrap();
    bad_input(&["plot", "runtime", r], &["several keys", "hops", "messaging.send_overhead_cycles", "--x"]);
    bad_input(
        &["plot", "runtime", r, "--x", "nodes"],
        &["--x `nodes`", "varied: hops, messaging.send_overhead_cycles"],
    );
    let expected: Vec<PathBuf> = ["hops=1", "hops=4"]
        .iter()
        .flat_map(|h| ["png", "svg"].map(|e| dir.file(&format!("runtime-{h}.{e}"))))
        .collect();
    plot_ok(&["runtime", r, "--x", "messaging.send_overhead_cycles", "--mark", "alewife=18"], &expected);
    check_png(&expected[0]);
    check_svg(
        &expected[3],
        &["am-latency: runtime vs messaging.send_overhead_cycles (alewife, 32 procs, hops=4)", "alewife"],
    );
    // Bars at one x of each combination; x values along the other key work too.
    let expected: Vec<PathBuf> = [
        "messaging.send_overhead_cycles=10",
        "messaging.send_overhead_cycles=100",
        "messaging.send_overhead_cycles=1000",
    ]
    .iter()
    .flat_map(|h| ["png", "svg"].map(|e| dir.file(&format!("breakdown-{h}.{e}"))))
    .collect();
    plot_ok(&["breakdown", r, "--x", "hops", "--at", "4"], &expected);
    bad_input(&["plot", "volume", r, "--x", "hops", "--at", "3"], &["--at 3", "no runs at hops=3", "x values: 1, 4"]);
}

#[test]
fn bad_inputs_are_one_line_and_exit_2() {
    let dir = TempDir::new("bad");
    std::fs::create_dir_all(dir.path()).unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.file(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let missing = dir.file("missing.jsonl");
    bad_input(&["plot", "runtime", missing.to_str().unwrap()], &["cannot read results file", "missing.jsonl"]);
    let good = r#"{"app":"em3d","variant":"sm","cycles":10,"vary":{"k":1}}"#;
    let malformed = write("malformed.jsonl", &format!("{good}\n\n{{\"variant\": \"sm\", \n"));
    bad_input(&["plot", "runtime", &malformed], &["malformed.jsonl", "line 3", "not valid JSON"]);
    let not_result = write("other.jsonl", "[1, 2]\n");
    bad_input(&["plot", "breakdown", &not_result], &["line 1", "not a commlab result"]);
    let empty = write("empty.jsonl", "\n");
    bad_input(&["plot", "volume", &empty], &["holds no results"]);
    bad_input(&["plot", "pie", &malformed], &["unknown plot kind `pie`", "runtime, breakdown, volume"]);
    let text_x = write(
        "text.jsonl",
        r#"{"app":"em3d","variant":"sm","cycles":10,"vary":{"topology":"mesh"}}
{"app":"em3d","variant":"sm","cycles":12,"vary":{"topology":"torus"}}
"#,
    );
    bad_input(&["plot", "runtime", &text_x], &["line 1", "no numeric x", "topology"]);
    let mixed = write("mixed.jsonl", &format!("{good}\n{{\"app\":\"em3d\",\"variant\":\"sm\",\"cycles\":10}}\n"));
    bad_input(&["plot", "volume", &mixed], &["line 2", "mixed sweep and run results"]);
    let ok_file = write("ok.jsonl", &format!("{good}\n"));
    bad_input(&["plot", "runtime", &ok_file, "--mark", "alewife"], &["--mark `alewife`", "LABEL=X"]);
    bad_input(&["plot", "runtime", &ok_file, "--mark", "alewife=x"], &["`x` is not a number"]);
    bad_input(&["plot", "runtime", &ok_file, "--x-scale", "cubic"], &["cubic"]);
    let zero = write("zero.jsonl", r#"{"app":"em3d","variant":"sm","cycles":10,"vary":{"k":0}}"#);
    bad_input(&["plot", "runtime", &zero, "--x-scale", "log"], &["log", "x = 0"]);
    let nan = write("nan.jsonl", r#"{"app":"em3d","variant":"sm","cycles":null,"vary":{"k":1}}"#);
    bad_input(&["plot", "runtime", &nan], &["line 1: cycles is missing or null"]);
    let file_as_out = write("plain-file", "");
    bad_input(&["plot", "runtime", &ok_file, "--out", &file_as_out], &["not a directory"]);
}
