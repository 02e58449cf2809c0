//! `commlab reproduce STUDY --quick`: every table and figure of the study with numbers is in the
//! report (published | measured | ratio, input or prediction), every figure decodes as PNG and
//! has its data, every finding is reported with its test and figures, and the exit status
//! agrees with the report. Run at reduced size, where the findings are not expected to hold:
//! what is tested is that nothing is missing or hidden, that the report is deterministic, and
//! that an interrupted reproduction resumes.

use crate::common;

use common::{bad_input, commlab, TempDir};
use serde_json::Value;
use std::path::Path;

const MATRICES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/matrices");

/// Run `reproduce STUDY --quick --json` into `dir`; the report and the exit status.
fn reproduce(study: &str, dir: &Path, extra: &[&str]) -> (Value, Option<i32>, String) {
    let out = commlab()
        .args(["reproduce", study, "--quick", "--json", "--matrices", MATRICES, "--out"])
        .arg(dir)
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    (report, out.status.code(), stderr)
}

/// The report's own verdict: failing findings, inputs out of tolerance or failed runs.
fn expected_status(r: &Value) -> i32 {
    let s = &r["summary"];
    let bad = s["findings_held"] != s["findings"]
        || s["inputs_out_of_tolerance"].as_u64() != Some(0)
        || !r["problems"].as_array().unwrap().is_empty();
    i32::from(bad)
}

fn check_common(r: &Value, code: Option<i32>, stderr: &str, dir: &Path) {
    assert_eq!(r["quick"], true);
    assert_eq!(code, Some(expected_status(r)), "exit status vs report: {stderr}");
    assert_eq!(r["status"].as_i64(), Some(expected_status(r) as i64));
    if code == Some(1) {
        assert!(stderr.contains("findings"), "{stderr}");
    }
    for row in r["rows"].as_array().unwrap() {
        for key in ["source", "item", "unit", "kind", "closeness"] {
            assert!(row[key].as_str().is_some_and(|s| !s.is_empty()), "{key} missing in {row}");
        }
        assert!(["input", "prediction"].contains(&row["kind"].as_str().unwrap()), "{row}");
        // A measured value or the reason there is none.
        assert!(row["measured"].is_number() || row["missing"].is_string(), "{row}");
        if let (Some(m), Some(p), Some(ratio)) =
            (row["measured"].as_f64(), row["published"].as_f64(), row["ratio"].as_f64())
        {
            assert!((ratio - m / p).abs() < 1e-9 * ratio.abs().max(1.0), "{row}");
        }
        if row["published"] == "withheld" {
            assert!(row["ratio"].is_null() && row["closeness"] != "within 10%", "{row}");
        }
        // A row's why is shown only while it disagrees (off, or an input out of tolerance).
        if row["why"].is_string() {
            let input_out = row["kind"] == "input" && row["caveat"].is_null() && row["closeness"] != "within 10%";
            assert!(row["closeness"] == "off" || input_out, "{row}");
        }
    }
    let row_whys = r["rows"].as_array().unwrap().iter().filter(|x| x["why"].is_string()).count();
    assert_eq!(r["summary"]["rows_disagreeing_explained"].as_u64(), Some(row_whys as u64));
    let findings = r["findings"].as_array().unwrap();
    for f in findings {
        for key in ["source", "app", "claim", "test", "measured"] {
            assert!(f[key].as_str().is_some_and(|s| !s.is_empty()), "{key} missing in {f}");
        }
    }
    let held = findings.iter().filter(|f| f["holds"] == true).count();
    assert_eq!(r["summary"]["findings_held"].as_u64(), Some(held as u64));
    // What is known of a failure is shown with the failure only, in JSON and in text alike.
    for f in findings {
        if let Some(why) = f["why"].as_str() {
            assert!(f["holds"] == false && !why.is_empty(), "{f}");
        }
    }
    let whys = findings.iter().filter(|f| f["why"].is_string()).count();
    for fig in r["figures"].as_array().unwrap() {
        let files: Vec<&str> = fig["files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
        for ext in ["png", "svg", "csv", "json"] {
            assert!(files.iter().any(|f| f.ends_with(ext)), "{} lacks .{ext}: {files:?}", fig["id"]);
        }
        for f in files {
            let bytes = std::fs::read(f).unwrap();
            if f.ends_with(".png") {
                assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "{f} is not a PNG");
            }
        }
    }
    let text = std::fs::read_to_string(dir.join("report.txt")).unwrap();
    // The text says the same, finding by finding.
    let verdicts: Vec<Option<bool>> = text
        .lines()
        .filter_map(|l| {
            l.strip_prefix("holds ")
                .map(|_| Some(true))
                .or(l.strip_prefix("FAILS ").map(|_| Some(false)))
                .or(l.strip_prefix("NOT EVALUATED ").map(|_| None))
        })
        .collect();
    let json_verdicts: Vec<Option<bool>> = findings.iter().map(|f| f["holds"].as_bool()).collect();
    assert_eq!(verdicts, json_verdicts);
    assert_eq!(text.lines().filter(|l| l.starts_with("      why (the full-size runs): ")).count(), whys);
    assert_eq!(text.matches("(why it disagrees, the full-size runs: ").count(), row_whys);
    let runs = std::fs::read_to_string(dir.join("runs.jsonl")).unwrap();
    assert_eq!(runs.lines().count() as u64, r["runs"].as_u64().unwrap());
}

/// A report without what differs between two identical reproductions into other directories:
/// its wall time and its figures' file paths.
fn without_paths(mut v: Value) -> Value {
    v["wall_seconds"] = Value::Null;
    for f in v["figures"].as_array_mut().unwrap() {
        f["files"] = Value::Null;
    }
    v
}

fn sources(r: &Value) -> Vec<String> {
    r["rows"].as_array().unwrap().iter().map(|x| x["source"].as_str().unwrap().to_string()).collect()
}

fn figure_ids(r: &Value) -> Vec<String> {
    r["figures"].as_array().unwrap().iter().map(|x| x["id"].as_str().unwrap().to_string()).collect()
}

fn items(r: &Value, source: &str) -> Vec<String> {
    r["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["source"] == source)
        .map(|x| x["item"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn alewife_every_table_and_figure_and_finding() {
    let dir = TempDir::new("reproduce-alewife");
    let (r, code, stderr) = reproduce("alewife", dir.path(), &["--jobs", "2"]);
    check_common(&r, code, &stderr, dir.path());
    assert_eq!(r["study"], "alewife");
    assert_eq!(r["seed"], "000");
    // Table 1: the 14 machines, clock and local miss each; Table 2; the miss table (validate).
    let t1 = items(&r, "Table 1");
    for machine in [
        "MIT Alewife",
        "TMC CM5",
        "KSR-2",
        "MIT J-Machine",
        "MIT M-Machine",
        "Intel Delta",
        "Intel Paragon",
        "Stanford DASH",
        "Stanford FLASH",
        "Wisconsin T0",
        "Wisconsin T1",
        "Cray T3D",
        "Cray T3E",
        "SGI Origin",
    ] {
        for what in ["processor clock", "local miss"] {
            assert!(t1.contains(&format!("{machine}: {what}")), "Table 1 lacks {machine}: {what}");
        }
    }
    // Bisection (none for T0, T1), network latency (none for KSR-2), remote miss (none for CM5,
    // J-Machine, Delta, Paragon).
    assert_eq!(t1.len(), 14 * 2 + 12 + 13 + 10, "{t1:?}");
    assert_eq!(items(&r, "Table 2").len(), 12 + 13);
    assert!(items(&r, "Fig. 3 / §3.2").len() >= 12, "the miss table's twelve rows at least");
    for s in ["§4.3.3", "§4.4.3", "§1.2, §5.2", "§2.1", "§6 (Fig. 10)", "§4"] {
        assert!(sources(&r).contains(&s.to_string()), "no row from {s}");
    }
    let ids = figure_ids(&r);
    let mut want = vec!["fig4-breakdown".to_string(), "fig5-volume".into(), "fig7-message-length".into()];
    for n in ["fig8", "fig9", "fig10"] {
        for app in ["em3d", "iccg", "unstruc", "moldyn"] {
            want.push(format!("{n}-{app}"));
        }
    }
    assert_eq!(ids, want);
    // Every finding: 16 of §4, 5 of §2.1 and §5.1, 3 of §1.2 on EM3D and 2 per app of §5.2, 4
    // per app and 1 on EM3D of §5.3, and §6's.
    assert_eq!(r["findings"].as_array().unwrap().len(), 16 + 5 + 3 + 4 * 2 + 4 + 1 + 1, "{}", r["findings"]);

    // Resumed: nothing is run again and the report is the same (figures byte for byte).
    let png = std::fs::read(dir.path().join("fig8-em3d.png")).unwrap();
    let (again, code2, stderr2) = reproduce("alewife", dir.path(), &["--resume", "--jobs", "1"]);
    assert!(stderr2.contains(&format!("{} runs taken from the earlier reproduction", r["runs"])), "{stderr2}");
    assert_eq!(code2, code);
    let strip = |mut v: Value| {
        v["wall_seconds"] = Value::Null;
        v
    };
    assert_eq!(strip(again), strip(r));
    assert_eq!(std::fs::read(dir.path().join("fig8-em3d.png")).unwrap(), png);
    // Without --resume an existing reproduction is not overwritten.
    bad_input(
        &["reproduce", "alewife", "--quick", "--matrices", MATRICES, "--out", dir.path().to_str().unwrap()],
        &["already holds a reproduction", "--resume"],
    );
}

#[test]
fn iccg_every_table_and_figure_and_finding() {
    let dir = TempDir::new("reproduce-iccg");
    let (r, code, stderr) = reproduce("iccg", dir.path(), &[]);
    check_common(&r, code, &stderr, dir.path());
    assert_eq!(r["seed"], "004");
    let s = sources(&r);
    for t in ["Table 1", "Table 2", "Table 4", "Table 5", "Table 6", "§4.1", "§4.1.2", "§5.2"] {
        assert!(s.contains(&t.to_string()), "no row from {t}");
    }
    // Table 4: the three small matrices that are files at 4 to 32 processors, each on the
    // study's cut (an input) and on commlab's partitioner; the reduced stand-ins for BCSSTK18
    // (4 to 32), OCEAN (16, 32) and BCSSTK32 (32) on commlab's; the iteration counts of BUS1138
    // and BCSSTK18 at 1 to 32.
    assert_eq!(items(&r, "Table 4").len(), 3 * 4 * 2 + 4 + 2 + 1 + 10);
    let inputs: Vec<&Value> =
        r["rows"].as_array().unwrap().iter().filter(|x| x["source"] == "Table 4" && x["kind"] == "input").collect();
    assert_eq!(inputs.len(), 12);
    assert!(inputs.iter().all(|x| x["closeness"] == "within 10%"), "the cut is an input: {inputs:?}");
    // Table 5: buffer 2, 3, 4 on the small matrices at four sizes, OCEAN at two, BCSSTK32 at one.
    assert_eq!(items(&r, "Table 5").len(), 4 * 3 * 4 + 2 * 3 + 3);
    // Table 6 is withheld: three columns x its variants x three measures, measured values shown.
    let t6: Vec<&Value> = r["rows"].as_array().unwrap().iter().filter(|x| x["source"] == "Table 6").collect();
    assert!(t6.len() >= 3 * 5 * 3, "{}", t6.len());
    assert!(t6.iter().all(|x| x["published"] == "withheld" && x["closeness"] != "within 10%"));
    assert!(t6.iter().any(|x| x["measured"].is_number()));
    // The substitutes are named on every row measured on one.
    assert!(items(&r, "Table 4").iter().any(|i| i.starts_with("BCSSTK18 (substitute: generated 2-D")));
    let ids = figure_ids(&r);
    for id in [
        "fig6-bus1138",
        "fig6-bcsstk18",
        "fig6-can1072",
        "fig6-bcspwr10",
        "fig7-bcsstk18",
        "fig8-speedup",
        "fig8-length",
        "fig9-overhead",
    ] {
        assert!(ids.contains(&id.to_string()), "no {id}: {ids:?}");
    }
    assert!(r["findings"].as_array().unwrap().len() >= 10);
}

#[test]
fn alewife_runtime_every_figure_and_finding() {
    let dir = TempDir::new("reproduce-alewife-runtime");
    let (r, code, stderr) = reproduce("alewife-runtime", dir.path(), &["--jobs", "2"]);
    check_common(&r, code, &stderr, dir.path());
    assert_eq!(r["study"], "alewife-runtime");
    assert_eq!(r["seed"], "001");
    assert_eq!(r["machine"], "alewife-sim");
    // §4.2: the clock, the two trees' levels (inputs), the two barriers.
    let b = items(&r, "§4.2");
    assert_eq!(b.len(), 5, "{b:?}");
    // §4.3: T_invoker and T_invokee, shared memory and messages.
    assert_eq!(items(&r, "§4.3 (Fig. 6)").len(), 4);
    // Fig. 7: three copies at 256 B and 4 KB, and the two ratios at 256 B; Fig. 8: two ratios.
    assert_eq!(items(&r, "§4.4 (Fig. 7)").len(), 3 * 2 + 2);
    assert_eq!(items(&r, "§4.4 (Fig. 8)").len(), 2);
    // §4.5: grain's two sequential times (inputs) and four withheld speedups, shown measured.
    assert_eq!(items(&r, "§4.5").len(), 2);
    let withheld: Vec<&Value> =
        r["rows"].as_array().unwrap().iter().filter(|x| x["source"] == "§4.5 (Fig. 9)").collect();
    assert_eq!(withheld.len(), 4);
    assert!(withheld.iter().all(|x| x["published"] == "withheld" && x["measured"].is_number()));
    assert_eq!(items(&r, "§4.5 (Fig. 10)").len(), 2);
    let inputs = r["rows"].as_array().unwrap().iter().filter(|x| x["kind"] == "input").count();
    assert_eq!(inputs, 6);
    assert!(r["rows"].as_array().unwrap().iter().all(|x| x["measured"].is_number()), "every row measured");
    assert_eq!(
        figure_ids(&r),
        ["barrier", "fig6-rti", "fig7-memcpy", "fig8-accum", "fig9-grain", "fig10-aq", "fig11-jacobi"]
    );
    // §4.2 2, §4.3 2, Fig. 7 4, Fig. 8 2, Fig. 9 2, Fig. 10 2, Fig. 11 3, §1/§6 7.
    assert_eq!(r["findings"].as_array().unwrap().len(), 24, "{}", r["findings"]);
    // A finding that fails names its mechanism and the what-if run that shows it (or says
    // that none was found); one that holds has no why.
    for f in r["findings"].as_array().unwrap() {
        match f["holds"].as_bool() {
            Some(false) => assert!(
                f["why"].as_str().is_some_and(|w| w.contains("mechanism"))
                    && f["why"].as_str().is_some_and(
                        |w| w.contains("`commlab reproduce alewife-runtime") || w.ends_with("No what-if found")
                    ),
                "a failing finding without its why and what-if: {f}"
            ),
            _ => assert!(f["why"].is_null(), "{f}"),
        }
    }
    // So does every row that disagrees with the study (off, or an input out of tolerance).
    let disagreeing = r["summary"]["rows_disagreeing"].as_u64().unwrap();
    assert_eq!(r["summary"]["rows_disagreeing_explained"].as_u64(), Some(disagreeing), "{}", r["summary"]);
    // (A row's why is shown only while it disagrees: check_common.)
    for row in r["rows"].as_array().unwrap().iter().filter(|x| x["closeness"] == "off" || x["why"].is_string()) {
        let why = row["why"].as_str().unwrap_or_else(|| panic!("an off row without its why: {row}"));
        assert!(
            why.contains("mechanism") && (why.contains("`commlab ") || why.ends_with("No what-if found")),
            "an off row's why without its mechanism and what-if: {row}"
        );
    }
    let text = std::fs::read_to_string(dir.path().join("report.txt")).unwrap();
    let failing = r["findings"].as_array().unwrap().iter().filter(|f| f["holds"] == false).count();
    assert_eq!(text.lines().filter(|l| l.trim_start().starts_with("why (the full-size runs): ")).count(), failing);
    // Deterministic: run again (on one thread, and without the matrices this study does not
    // read), the same report.
    let dir2 = TempDir::new("reproduce-alewife-runtime-2");
    let out = commlab()
        .args(["reproduce", "alewife-runtime", "--quick", "--json", "--jobs", "1", "--matrices", "/nonexistent/dir"])
        .arg("--out")
        .arg(dir2.path())
        .output()
        .unwrap();
    let again: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), code);
    assert_eq!(without_paths(again), without_paths(r));
    assert_eq!(
        std::fs::read(dir.path().join("fig7-memcpy.png")).unwrap(),
        std::fs::read(dir2.path().join("fig7-memcpy.png")).unwrap()
    );
}

#[test]
fn bad_requests_are_one_line_errors() {
    bad_input(&["reproduce", "nosuchstudy"], &["unknown study `nosuchstudy`", "alewife", "iccg"]);
    bad_input(&["reproduce", "nosuchstudy"], &["alewife-runtime", "blizzard-cow"]);
    bad_input(&["reproduce", "alewife", "--quick", "--matrices", "/nonexistent/dir"], &["--matrices /nonexistent/dir"]);
    bad_input(
        &["reproduce", "alewife", "--quick", "--matrices", MATRICES, "--set", "network.no_such_key=1"],
        &["no_such_key"],
    );
}

/// A figure's files decode: the PNG's frame, the SVG as an `<svg>` document, the CSV as a
/// header and rows of as many fields, the JSON.
fn check_figure_files(fig: &Value) {
    for f in fig["files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()) {
        let bytes = std::fs::read(f).unwrap_or_else(|e| panic!("{f}: {e}"));
        match Path::new(f).extension().and_then(|e| e.to_str()) {
            Some("png") => {
                let mut reader = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().expect("PNG header");
                let mut buf = vec![0; reader.output_buffer_size()];
                let info = reader.next_frame(&mut buf).unwrap_or_else(|e| panic!("{f}: {e}"));
                assert!(info.width > 0 && info.height > 0, "{f}");
            }
            Some("svg") => {
                let t = String::from_utf8(bytes).unwrap();
                assert!(t.contains("<svg") && t.trim_end().ends_with("</svg>"), "{f} is not an SVG document");
            }
            Some("csv") => {
                let t = String::from_utf8(bytes).unwrap();
                let mut lines = t.lines();
                // Fields: commas outside double quotes separate them.
                let count = |l: &str| 1 + l.split('"').step_by(2).map(|part| part.matches(',').count()).sum::<usize>();
                let fields = count(lines.next().expect("a header"));
                let rows: Vec<&str> = lines.collect();
                assert!(!rows.is_empty(), "{f}: no rows");
                assert!(rows.iter().all(|l| count(l) == fields), "{f}: ragged rows");
            }
            Some("json") => {
                serde_json::from_slice::<Value>(&bytes).unwrap_or_else(|e| panic!("{f}: {e}"));
            }
            other => panic!("{f}: unexpected file type {other:?}"),
        }
    }
}

/// Issue 33: every figure of seed 002 with numbers (Figs. 1-8 as heat maps, 9-14 by stride,
/// 15-17 and §8 against problem size and processors), every number of its text as a row, every
/// finding of §5-§9 as a check; deterministic (the same report on one thread).
#[test]
fn copy_transfer_every_figure_row_and_finding() {
    let dir = TempDir::new("reproduce-copy-transfer");
    let (r, code, stderr) = reproduce("copy-transfer", dir.path(), &["--jobs", "2"]);
    check_common(&r, code, &stderr, dir.path());
    assert_eq!((r["study"].as_str(), r["seed"].as_str()), (Some("copy-transfer"), Some("002")));
    assert_eq!(r["machine"], "dec8400, t3d, t3e");
    copy_transfer_rows(&r);
    copy_transfer_figures(&r, dir.path());
    copy_transfer_findings_and_whys(&r);

    // Deterministic: the same report on one thread (figures byte for byte).
    let dir2 = TempDir::new("reproduce-copy-transfer-2");
    let (again, code2, _) = reproduce("copy-transfer", dir2.path(), &["--jobs", "1"]);
    assert_eq!(code2, code);
    assert_eq!(without_paths(again), without_paths(r));
    for f in ["fig13-t3d-remote-copies.png", "fig4-t3d-get.svg", "fig15-fft2d-total.csv"] {
        assert_eq!(std::fs::read(dir.path().join(f)).unwrap(), std::fs::read(dir2.path().join(f)).unwrap(), "{f}");
    }
}

/// Copy-transfer's rows: the 17 inputs measured, a sample of each section's numbers with their
/// published values, §5.1's loading rows, the withheld FFT figures measured.
fn copy_transfer_rows(r: &Value) {
    let rows = r["rows"].as_array().unwrap();
    let item = |needle: &str| -> &Value {
        let found: Vec<&Value> = rows.iter().filter(|x| x["item"].as_str().unwrap().contains(needle)).collect();
        assert_eq!(found.len(), 1, "one row `{needle}`: {found:?}");
        found[0]
    };
    // The calibration rows are inputs, all measured.
    let inputs: Vec<&Value> = rows.iter().filter(|x| x["kind"] == "input").collect();
    assert_eq!(inputs.len(), 17, "validate's 8 + 2 + 2 load rows and 5 remote rows");
    assert!(inputs.iter().all(|x| x["measured"].is_number()), "{inputs:?}");
    // Every number of the text (a sample of each section), with its published value.
    for (needle, published) in [
        ("DEC 8400: local loads from L1, contiguous", 1100.0),
        ("L2 for large strides", 750.0),
        ("L2, contiguous (64 KB): the plateau", 700.0),
        ("L3, contiguous", 600.0),
        ("L3, strided", 120.0),
        ("DEC 8400: local loads from DRAM, contiguous", 150.0),
        ("DEC 8400: local loads from DRAM, strided", 28.0),
        ("remote loads (producer's cache)", 140.0),
        ("DEC 8400: remote loads from DRAM, strided", 22.0),
        ("T3D / DEC 8400 contiguous DRAM loads", 1.3),
        ("Cray T3D: local loads from DRAM, strided", 43.0),
        ("Cray T3E: local loads from DRAM, contiguous", 430.0),
        ("Cray T3E: local loads from DRAM, strided", 42.0),
        ("remote fetch, contiguous", 350.0),
        ("remote fetch, strided: vector gets", 140.0),
        ("one word per get", 70.0),
        ("DEC 8400: large local copy, contiguous", 57.0),
        ("DEC 8400: large local copy, strided", 18.0),
        ("Cray T3D: large local copy, contiguous", 100.0),
        ("strided stores, \"up to\"", 70.0),
        ("Cray T3E: large local copy, contiguous", 200.0),
        ("by strided deposits", 55.0),
        ("limited to about 20", 20.0),
        ("DEC 8400: large strided remote transfers", 22.0),
        ("Cray T3E: large remote copy, contiguous", 350.0),
        ("the best way", 140.0),
        ("the worst way", 70.0),
        ("a 2 fold improvement", 2.0),
        ("a 2.75 fold improvement", 2.75),
        ("a factor of 2.5", 2.5),
        ("a factor of 6.5", 6.5),
        ("about a factor of 1.5", 1.5),
        ("more than a factor 2.5", 2.5),
        ("up to 200", 200.0),
        ("Cray T3D: 2-D FFT on", 8750.0),
        ("around 20", 20.0),
    ] {
        let row = item(needle);
        assert_eq!(row["published"].as_f64(), Some(published), "{row}");
        assert!(row["measured"].is_number(), "{row}");
    }
    // §5.1's concurrent loading: measured with --param loaders=4, or "not yet modelled".
    for needle in ["all 4 processors loading / alone, contiguous", "all 4 processors loading / alone, strided"] {
        let row = item(needle);
        assert!(
            row["measured"].is_number() || row["missing"].as_str().is_some_and(|m| m.contains("not yet modelled")),
            "{row}"
        );
    }
    // §7.2's withheld FFT figures are shown measured.
    let withheld: Vec<&Value> = rows.iter().filter(|x| x["published"] == "withheld").collect();
    assert_eq!(withheld.len(), 5);
    assert!(withheld.iter().all(|x| x["measured"].is_number() && x["closeness"] == "withheld"), "{withheld:?}");
}

/// Copy-transfer's figures: the surfaces, large transfers, FFT and scaling, every file decoding,
/// a heat map's cells all measured.
fn copy_transfer_figures(r: &Value, dir: &Path) {
    // Figures: the eight surfaces, the six large-transfer figures, the three FFT figures and the
    // T3D's scaling (and §5.1's loading where modelled); every file decodes.
    let ids = figure_ids(r);
    let mut want: Vec<String> = [
        "fig1-dec8400-local",
        "fig2-dec8400-fetch",
        "fig3-t3d-local",
        "fig4-t3d-get",
        "fig5-t3d-put",
        "fig6-t3e-local",
        "fig7-t3e-get",
        "fig8-t3e-put",
    ]
    .map(String::from)
    .to_vec();
    if ids.contains(&"s5.1-dec8400-loaders".to_string()) {
        want.push("s5.1-dec8400-loaders".into());
    }
    for (n, m) in [(9, "dec8400"), (10, "t3d"), (11, "t3e")] {
        want.push(format!("fig{n}-{m}-local-copies"));
    }
    for (n, m) in [(12, "dec8400"), (13, "t3d"), (14, "t3e")] {
        want.push(format!("fig{n}-{m}-remote-copies"));
    }
    want.extend(
        ["fig15-fft2d-total", "fig16-fft2d-local", "fig17-fft2d-transposes", "s8-fft2d-t3d-scaling"].map(String::from),
    );
    assert_eq!(ids, want);
    for fig in r["figures"].as_array().unwrap() {
        check_figure_files(fig);
    }
    // A heat map's data: every working set x stride cell, each measured.
    let surface: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("fig5-t3d-put.json")).unwrap()).unwrap();
    let grid = surface["mb_per_s"].as_array().unwrap();
    assert_eq!(grid.len(), surface["working_sets_bytes"].as_array().unwrap().len());
    assert!(grid.iter().all(|row| row.as_array().unwrap().iter().all(Value::is_number)), "{surface}");
}

/// Copy-transfer's 28 findings, and a mechanism with a what-if for every failing finding and
/// every row that disagrees.
fn copy_transfer_findings_and_whys(r: &Value) {
    let rows = r["rows"].as_array().unwrap();
    // Every finding of §5-§9: 4 on the loads, §5.1's loading, 15 on the copies, 8 on the FFT.
    let findings = r["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 28, "{}", r["findings"]);
    let not_evaluated: Vec<&Value> = findings.iter().filter(|f| f["holds"].is_null()).collect();
    assert!(
        not_evaluated.iter().all(|f| f["measured"].as_str().unwrap().contains("not yet modelled")),
        "only §5.1's loading may be left unevaluated (before the loaders parameter): {not_evaluated:?}"
    );
    // Every failing finding and every row that disagrees with the study (off, or an input out
    // of its tolerance) names its mechanism and a what-if command, or says none was found.
    let explained = |why: &Value| {
        why.as_str()
            .is_some_and(|w| w.contains("mechanism") && (w.contains("`commlab ") || w.ends_with("No what-if found")))
    };
    for f in findings.iter().filter(|f| f["holds"] == false) {
        assert!(explained(&f["why"]), "a failing finding without its mechanism and what-if: {f}");
    }
    let disagrees = |x: &Value| {
        x["closeness"] == "off"
            || (x["kind"] == "input"
                && x["caveat"].is_null()
                && !(x["closeness"] == "within 10%" || x["closeness"] == "withheld"))
    };
    let disagreeing: Vec<&Value> = rows.iter().filter(|x| disagrees(x)).collect();
    for x in &disagreeing {
        assert!(explained(&x["why"]), "a row that disagrees without its mechanism and what-if: {x}");
    }
    assert_eq!(r["summary"]["rows_disagreeing"].as_u64(), Some(disagreeing.len() as u64), "{}", r["summary"]);
    assert_eq!(r["summary"]["rows_disagreeing_explained"], r["summary"]["rows_disagreeing"], "{}", r["summary"]);
}

#[test]
fn blizzard_cow_every_table_figure_and_finding() {
    let dir = TempDir::new("reproduce-blizzard-cow");
    let (r, code, stderr) = reproduce("blizzard-cow", dir.path(), &["--jobs", "2"]);
    check_common(&r, code, &stderr, dir.path());
    assert_eq!((r["study"].as_str(), r["seed"].as_str()), (Some("blizzard-cow"), Some("003")));
    assert_eq!(r["machine"], "blizzard-s, blizzard-e, blizzard-t");
    let rows = r["rows"].as_array().unwrap();
    let of = |source: &str| -> Vec<&Value> { rows.iter().filter(|x| x["source"] == source).collect() };
    // Table 1: five apps, the uninstrumented time (an input) and four normalised levels each.
    let t1 = of("Table 1");
    assert_eq!(t1.len(), 25);
    assert_eq!(t1.iter().filter(|x| x["kind"] == "input").count(), 5);
    // Table 3: the calibration (validate's rows), every one within 10% of the study.
    let t3 = of("Table 3");
    assert_eq!(t3.len(), 3 * 3 * 4);
    for x in &t3 {
        assert!(x["kind"] == "input" && x["closeness"] == "within 10%", "{x}");
    }
    // Table 4: access control's share of each miss, a percentage of it.
    let t4 = of("Table 4");
    assert_eq!(t4.len(), 3 * 3 * 4);
    for x in &t4 {
        let v = x["measured"].as_f64().unwrap();
        assert!(x["kind"] == "prediction" && (0.0..100.0).contains(&v), "{x}");
    }
    // Blizzard-E's write miss is mostly access control (the ECC set), its read miss is not.
    let share = |needle: &str| {
        t4.iter().find(|x| x["item"].as_str().unwrap().starts_with(needle)).unwrap()["measured"].as_f64().unwrap()
    };
    assert!(share("Blizzard-E: write miss, 64-byte") > 3.0 * share("Blizzard-E: read miss, 64-byte"));
    assert_eq!(of("§9").len(), 5, "the five sequential times");
    // Table 5: run times at the largest count (quick: 4), three machines and the CM-5 column
    // (no preset: shown without a measurement), two protocols, five apps.
    let t5 = of("Table 5");
    assert_eq!(t5.len(), 5 * 2 * 4);
    assert_eq!(t5.iter().filter(|x| x["missing"].as_str().is_some_and(|m| m.contains("CM-5"))).count(), 10);
    // Tables 6-10: speedups, withheld in the seed, shown measured: 2 protocols x 3 machines x
    // the quick counts 2 and 4.
    for t in 6..=10 {
        let rows = of(&format!("Table {t}"));
        assert_eq!(rows.len(), 2 * 3 * 2, "Table {t}");
        assert!(rows.iter().all(|x| x["published"] == "withheld" && x["measured"].is_number()), "Table {t}");
    }
    // Table 2: four polling mechanisms x two sending threads, within 15% (validate's rows);
    // Figs. 2-3: the 32-byte round trip and the large-message throughput (inputs) and the two
    // bandwidths with no benchmark yet.
    let t2 = of("Table 2");
    assert_eq!(t2.len(), 8);
    for x in &t2 {
        let ratio = x["ratio"].as_f64().unwrap();
        assert!((ratio - 1.0).abs() <= 0.15, "{x}");
    }
    assert_eq!(of("§6.5.2 (Fig. 2)").len(), 1);
    assert_eq!(of("§6.5.3 (Fig. 3)").len(), 1);
    assert_eq!(of("§6.5.3").iter().filter(|x| x["missing"].is_string()).count(), 2);
    assert_eq!(
        figure_ids(&r),
        ["fig2-latency", "fig3-throughput", "fig4-appbt", "fig4-barnes", "fig4-dsmc", "fig4-em3d", "fig4-moldyn"]
    );
    // §1 1, §4.1 4, §6.5 3, §8.1 5, §9 12, §9.1 2.
    assert_eq!(r["findings"].as_array().unwrap().len(), 27, "{}", r["findings"]);
    for f in r["findings"].as_array().unwrap() {
        if let Some(w) = f["why"].as_str() {
            assert!(w.contains("mechanism"), "{f}");
        }
    }
    // Deterministic: again on one thread, the same report.
    let dir2 = TempDir::new("reproduce-blizzard-cow-2");
    let (again, code2, _) = reproduce("blizzard-cow", dir2.path(), &["--jobs", "1"]);
    assert_eq!(code2, code);
    assert_eq!(without_paths(again), without_paths(r));
}
