//! The module graph is one-way: ARCHITECTURE.md's layer picture of `commlab-sim` is checked
//! here against the source, and the crates' module graphs have no cycle.
//!
//! A module's imports are the `crate::NAME` paths in its files (in `use` lines and inline);
//! `NAME` must be one of the crate's top-level modules, never an item of the crate root, so no
//! module can import from `main.rs` or `lib.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// `commlab-sim`'s layers, bottom first: a module may import only from modules before it.
const SIM_LAYERS: &[&str] = &["queue", "topology", "stats", "machine", "net", "mem", "msg", "engine"];

fn crate_src(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(name).join("src")
}

/// Every `.rs` file below `dir`.
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

/// The top-level module a file belongs to (`None` for the crate root).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next().unwrap().as_os_str().to_str().unwrap();
    match first {
        "lib.rs" | "main.rs" => None,
        f => Some(f.trim_end_matches(".rs").to_string()),
    }
}

/// Names after `crate::` in `text`, and in `use crate::{a, b::c}` groups, outside comments.
fn crate_paths(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap();
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                // `crate::{a, b::c}` on one line: the first segment of each entry.
                let inner = group.split('}').next().unwrap();
                names.extend(inner.split(',').map(|e| e.trim().split("::").next().unwrap().to_string()));
            } else {
                let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                names.push(name);
            }
        }
    }
    names.into_iter().filter(|n| !n.is_empty()).collect()
}

/// Module -> the modules it imports, for crate `name`; panics if a path names an item of the root.
fn module_graph(name: &str) -> BTreeMap<String, BTreeSet<String>> {
    let src = crate_src(name);
    let files = rust_files(&src);
    let modules: BTreeSet<String> = files.iter().filter_map(|f| module_of(&src, f)).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = modules.iter().map(|m| (m.clone(), BTreeSet::new())).collect();
    let mut root_items = Vec::new();
    for file in &files {
        let Some(from) = module_of(&src, file) else { continue };
        let text = fs::read_to_string(file).unwrap();
        for to in crate_paths(&text) {
            if modules.contains(&to) {
                if to != from {
                    graph.get_mut(&from).unwrap().insert(to);
                }
            } else {
                root_items.push(format!("{}: crate::{to}", file.strip_prefix(&src).unwrap().display()));
            }
        }
    }
    assert!(
        root_items.is_empty(),
        "{name}: modules import items of the crate root (move them into a module of their own): {root_items:?}"
    );
    graph
}

/// A cycle in `graph`, if there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(m) {
            Some(2) => return None,
            Some(1) => {
                let start = path.iter().position(|p| p == m).unwrap();
                let mut cycle = path[start..].to_vec();
                cycle.push(m.to_string());
                return Some(cycle);
            }
            _ => {}
        }
        state.insert(m.to_string(), 1);
        path.push(m.to_string());
        for next in &graph[m] {
            if let Some(c) = visit(next, graph, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(m.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    graph.keys().find_map(|m| visit(m, graph, &mut state, &mut Vec::new()))
}

#[test]
fn the_simulator_imports_only_downward() {
    let graph = module_graph("commlab-sim");
    let listed: BTreeSet<String> = SIM_LAYERS.iter().map(|s| s.to_string()).collect();
    let found: BTreeSet<String> = graph.keys().cloned().collect();
    assert_eq!(found, listed, "every commlab-sim module has a place in SIM_LAYERS (and ARCHITECTURE.md)");
    let layer = |m: &str| SIM_LAYERS.iter().position(|l| *l == m).unwrap();
    let upward: Vec<String> = graph
        .iter()
        .flat_map(|(from, tos)| {
            tos.iter().filter(|to| layer(to) > layer(from)).map(move |to| format!("{from} -> {to}"))
        })
        .collect();
    assert!(upward.is_empty(), "imports that go up the layers {SIM_LAYERS:?}: {upward:?}");
}

#[test]
fn no_crate_has_an_import_cycle() {
    for name in ["commlab-sim", "commlab-apps", "commlab-native", "commlab-cli"] {
        let graph = module_graph(name);
        assert_eq!(find_cycle(&graph), None, "{name} has an import cycle");
    }
}

#[test]
fn the_checker_sees_imports_and_cycles() {
    // The parser finds plain, grouped and inline paths and skips comments.
    let text = "use crate::net::{A, B};\nuse crate::{mem, msg::Target};\n// crate::engine\nlet x = crate::stats::f();";
    assert_eq!(crate_paths(text), ["net", "mem", "msg", "stats"]);
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.insert("a".into(), ["b".to_string()].into());
    g.insert("b".into(), ["c".to_string()].into());
    g.insert("c".into(), BTreeSet::new());
    assert_eq!(find_cycle(&g), None);
    g.get_mut("c").unwrap().insert("a".into());
    assert_eq!(find_cycle(&g), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
}
