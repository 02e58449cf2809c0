//! Every counter is declared once, with a unit and a meaning (issue 30, item 2): the engine's in
//! `commlab_sim::counters::ENGINE_COUNTERS`, each app's in its module's `COUNTERS` table
//! (`AppInfo::counters`, shared ones in `app.rs`). Checked here: no counter is inserted by a
//! string literal in the simulator's, the apps' or the native backend's source; every counter a
//! run of any app and variant reports is declared for that app or the engine, and every app
//! counter declared is reported by some run (small parameters on six presets, and a few runs
//! with the parameters that add a counter); names are unique
//! within each table, and an app's name equals an engine counter's only where the app's
//! declaration replaces it; every declaration has a unit and a meaning.

use crate::common;

use commlab_api::Counter;
use commlab_apps::{run_app, variants_on, APPS};
use commlab_sim::counters::ENGINE_COUNTERS;
use common::{preset, small_params};
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Runs (app, variant, parameters beside the small ones) that report the counters only some
/// parameters do.
const CONDITIONAL: &[(&str, &str, &[&str])] = &[
    ("am-latency", "mp-int", &["from=protocol"]),
    ("bulk-bw", "mp-int", &["stream=2"]),
    ("bulk-bw", "mp-int", &["repeat=2"]),
    ("iccg", "sm", &["partition=cut", "nonlocal=0.3"]),
    ("memcpy", "sm", &["layout=next-line"]),
];

/// App counters that replace the engine's counter of the same name (the app's own figure).
const REPLACING: &[(&str, &str)] = &[("unstruc", "prefetches_useful")];

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// Lines of `text` (1-based) that insert a counter by name: an `insert(` or `entry(` whose key
/// is a string literal, or any `counters.insert(` (a counter goes through its declaration,
/// `SetCounter::set`). Comments are skipped, and so is everything from the first `#[cfg(test)]`
/// on (the test modules close their files).
fn literal_insertions(text: &str) -> Vec<(usize, String)> {
    let code_end = text.find("#[cfg(test)]").unwrap_or(text.len());
    let code = &text[..code_end];
    // Join each call's lines, so a key on the line after `insert(` is seen.
    let mut hits = Vec::new();
    let lines: Vec<&str> = code.lines().map(|l| l.split("//").next().unwrap()).collect();
    for (i, line) in lines.iter().enumerate() {
        let joined = format!("{line} {}", lines.get(i + 1).map_or("", |l| l.trim_start()));
        let literal_key = ["insert(", "entry("].iter().any(|call| {
            joined
                .match_indices(call)
                .any(|(at, _)| at < line.len() && joined[at + call.len()..].trim_start().starts_with('"'))
        });
        if literal_key || line.contains("counters.insert(") {
            hits.push((i + 1, line.trim().to_string()));
        }
    }
    hits
}

#[test]
fn the_scan_finds_literal_insertions_and_passes_declared_ones() {
    let bad = "fn f() {\n    c.insert(\"hops\".into(), 1.0);\n    counters.insert(\n        \"x\".to_string(), 2.0);\n    m.entry(\"y\".to_string());\n    r.counters.insert(name, 3.0);\n}\n";
    let lines: Vec<usize> = literal_insertions(bad).into_iter().map(|(l, _)| l).collect();
    assert_eq!(lines, [2, 3, 5, 6]);
    let good = "fn f() {\n    c.set(&HOPS, 1.0); // was c.insert(\"hops\".into(), 1.0)\n    seen.insert(k.to_string());\n}\n#[cfg(test)]\nmod tests {\n    fn t() { c.insert(\"hops\".into(), 1.0); }\n}\n";
    assert_eq!(literal_insertions(good), []);
}

#[test]
fn no_counter_is_inserted_by_a_string_literal() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    let mut files = 0;
    for krate in ["commlab-sim", "commlab-apps", "commlab-native"] {
        for file in rust_files(&root.join(krate).join("src")) {
            files += 1;
            for (line, text) in literal_insertions(&fs::read_to_string(&file).unwrap()) {
                found.push(format!("{}:{line}: {text}", file.display()));
            }
        }
    }
    assert!(files > 100, "only {files} source files found");
    assert!(found.is_empty(), "counters inserted by name, not through a declaration:\n{}", found.join("\n"));
}

/// Each table's names, checked unique within it.
fn names(what: &str, table: &[Counter]) -> BTreeSet<&'static str> {
    let mut seen = BTreeSet::new();
    for c in table {
        assert!(seen.insert(c.name), "{what}: counter `{}` declared twice", c.name);
    }
    seen
}

#[test]
fn every_declaration_has_a_unit_and_a_meaning_and_names_are_unique() {
    let tables = std::iter::once(("engine", ENGINE_COUNTERS)).chain(APPS.iter().map(|a| (a.name, a.counters)));
    let engine = names("engine", ENGINE_COUNTERS);
    let mut collisions = Vec::new();
    for (what, table) in tables {
        assert!(!table.is_empty(), "{what}: no counters declared");
        for c in table {
            let ok = |s: &str| !s.trim().is_empty() && s.trim() == s;
            assert!(
                ok(c.name) && c.name.chars().all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_'),
                "{what}: bad counter name `{}`",
                c.name
            );
            assert!(ok(c.unit), "{what}: `{}` has no unit", c.name);
            assert!(ok(c.meaning) && c.meaning.len() >= 10, "{what}: `{}` has no meaning", c.name);
        }
        if what != "engine" {
            collisions.extend(names(what, table).intersection(&engine).map(|n| (what, *n)));
        }
    }
    assert_eq!(collisions, REPLACING, "app counters named as an engine counter (each must replace it on purpose)");
    for (app, name) in REPLACING {
        let info = APPS.iter().find(|a| a.name == *app).unwrap();
        let c = info.counters.iter().find(|c| c.name == *name).unwrap();
        assert!(c.meaning.contains("replaces the engine's"), "{app}: `{name}` must say it replaces the engine's");
    }
}

/// Run every app, every variant `all` selects there, at small parameters on `machine`; return the
/// counters each app reported that neither its table nor the engine's declares.
fn undeclared_on(
    machine: &str,
    procs: Option<usize>,
    seen: &mut BTreeMap<&'static str, BTreeSet<String>>,
) -> Vec<String> {
    let engine = names("engine", ENGINE_COUNTERS);
    let s = preset(machine, &[], procs);
    let mut undeclared = Vec::new();
    for info in APPS {
        let own = names(info.name, info.counters);
        // An app none of whose variants runs here (remote-bw without one-sided access) runs on
        // another of the machines.
        let Ok(variants) = variants_on(&s, info, "all") else { continue };
        for v in variants {
            let params = small_params(info.name, &s);
            let r = run_app(&s, info.name, v, &params, 1)
                .unwrap_or_else(|e| panic!("{} [{v}] on {machine}: {e}", info.name));
            for name in r.counters.keys() {
                seen.entry(info.name).or_default().insert(name.clone());
                if !own.contains(name.as_str()) && !engine.contains(name.as_str()) {
                    undeclared.push(format!("{machine}: {} [{v}] reports `{name}`", info.name));
                }
            }
        }
    }
    undeclared
}

#[test]
fn every_counter_a_run_reports_is_declared() {
    let mut seen = BTreeMap::new();
    let mut undeclared = undeclared_on("alewife", Some(4), &mut seen);
    undeclared.extend(undeclared_on("blizzard-s", Some(4), &mut seen));
    for machine in ["alewife-sim", "blizzard-e", "t3e", "dash"] {
        undeclared.extend(undeclared_on(machine, Some(4), &mut seen));
    }
    assert!(undeclared.is_empty(), "undeclared counters:\n{}", undeclared.join("\n"));
    // The counters only some parameters report, each run once more with them.
    let s = preset("alewife", &[], Some(4));
    for (app, variant, extra) in CONDITIONAL {
        let mut params = small_params(app, &s);
        params.extend(extra.iter().map(|p| p.to_string()));
        let r = run_app(&s, app, variant, &params, 1).unwrap_or_else(|e| panic!("{app} [{variant}] {extra:?}: {e}"));
        seen.entry(app).or_default().extend(r.counters.keys().cloned());
    }
    // Every declaration is reported by some run: a table holds no counter the app lacks.
    for info in APPS {
        let got = seen.get(info.name).unwrap_or_else(|| panic!("{} never ran", info.name));
        let unseen: Vec<&str> = info.counters.iter().map(|c| c.name).filter(|n| !got.contains(*n)).collect();
        assert!(unseen.is_empty(), "{}: declared but never reported: {unseen:?}", info.name);
    }
}
