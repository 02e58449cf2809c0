//! The module graph is one-way: ARCHITECTURE.md's layer picture of `commlab-sim` is checked
//! here against the source, the crates' top-level module graphs have no cycle, and neither do
//! their file graphs (no two files import each other, `super::` included).
//!
//! A top-level module's imports are the `crate::NAME` paths in its files (in `use` lines and
//! inline); `NAME` must be one of the crate's top-level modules, never an item of the crate
//! root, so no module can import from `main.rs` or `lib.rs`.
//!
//! A file's imports (see [`file_imports`]) are the paths in its code that reach another file's
//! module through `crate::`, `super::`, `self::` or a child module's name, re-exports included
//! (`pub use child::Item` in `mod.rs` depends on the child, so the child must not import from
//! `mod.rs`: what children share lives in a file of its own). Not read: `#[cfg(test)]`
//! modules, comments and string literals.

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

/// `text` without comments and without the contents of string and character literals
/// (newlines kept), so braces and paths inside them are not read as code.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            let end = rest.find("*/").map_or(rest.len(), |e| e + 2);
            out.extend(rest[..end].chars().filter(|c| *c == '\n'));
            i += end;
        } else if let Some(hashes) = raw_string_start(rest) {
            let open = 2 + hashes; // r, the hashes, the quote
            let close = format!("\"{}", "#".repeat(hashes));
            let end = rest[open..].find(&close).map_or(rest.len(), |e| open + e + close.len());
            out.extend(rest[..end].chars().filter(|c| *c == '\n'));
            out.push_str("\"\"");
            i += end;
        } else if rest.starts_with('"') {
            let mut j = 1;
            while j < rest.len() && rest.as_bytes()[j] != b'"' {
                j += if rest.as_bytes()[j] == b'\\' { 2 } else { 1 };
            }
            out.extend(rest[..j.min(rest.len())].chars().filter(|c| *c == '\n'));
            out.push_str("\"\"");
            i += (j + 1).min(rest.len());
        } else if let Some(len) = char_literal_len(rest) {
            out.push_str("' '");
            i += len;
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The number of `#`s of a raw string literal starting `text` (`r"`, `r#"`, `br"`...).
fn raw_string_start(text: &str) -> Option<usize> {
    let t = text.strip_prefix('b').unwrap_or(text).strip_prefix('r')?;
    let hashes = t.chars().take_while(|c| *c == '#').count();
    t[hashes..].starts_with('"').then_some(hashes)
}

/// The length of a character literal starting `text` (`'x'`, `'\n'`, `'\u{7f}'`), or `None`
/// for a lifetime or label (`'a`).
fn char_literal_len(text: &str) -> Option<usize> {
    let t = text.strip_prefix('\'')?;
    if let Some(esc) = t.strip_prefix('\\') {
        return esc.find('\'').map(|e| e + 3);
    }
    let c = t.chars().next()?;
    t[c.len_utf8()..].starts_with('\'').then_some(c.len_utf8() + 2)
}

/// A file's module path (`["mem", "protocol"]` for `src/mem/protocol.rs`, `[]` for the root).
fn file_module(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_str().unwrap().to_string()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

/// The paths (as segments) a piece of code names: `a::b::c`, and each member of a group
/// `a::{b, c::{d, e}}`, starting at an identifier not itself after `::`, each with its offset.
fn code_paths(code: &str) -> Vec<(Vec<String>, usize)> {
    let b = code.as_bytes();
    let ident = |i: usize| -> usize {
        let mut j = i;
        while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
            j += 1;
        }
        j
    };
    // Expands `prefix::{...}` starting at `at` (just after the `{`); returns the paths and the
    // index after the closing brace.
    fn group(code: &str, mut at: usize, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
        let b = code.as_bytes();
        let mut segs: Vec<String> = prefix.to_vec();
        while at < b.len() {
            let c = b[at];
            if c.is_ascii_alphanumeric() || c == b'_' {
                let end = at + code[at..].find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(code.len() - at);
                segs.push(code[at..end].to_string());
                at = end;
            } else if code[at..].starts_with("::{") {
                at = group(code, at + 3, &segs, out);
                segs = prefix.to_vec();
            } else if code[at..].starts_with("::") {
                at += 2;
            } else if c == b',' || c == b'}' {
                if segs.len() > prefix.len() {
                    out.push(segs.clone());
                }
                segs = prefix.to_vec();
                at += 1;
                if c == b'}' {
                    return at;
                }
            } else if code[at..].starts_with(" as ") {
                // The path so far stands; the alias after `as` is not a path.
                if segs.len() > prefix.len() {
                    out.push(segs.clone());
                }
                segs = prefix.to_vec();
                at += 4;
                at += code[at..].find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(code.len() - at);
            } else {
                at += 1; // `*`, whitespace
            }
        }
        at
    }
    let mut found = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let starts_ident = (c.is_ascii_alphabetic() || c == b'_')
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
            && !(i >= 2 && &code[i - 2..i] == "::");
        if !starts_ident {
            i += 1;
            continue;
        }
        let mut segs = Vec::new();
        let mut j = i;
        loop {
            let end = ident(j);
            segs.push(code[j..end].to_string());
            j = end;
            if code[j..].starts_with("::{") || !code[j..].starts_with("::") {
                break;
            }
            if !b.get(j + 2).is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_') {
                break;
            }
            j += 2;
        }
        if code[j..].starts_with("::{") {
            let mut members = Vec::new();
            j = group(code, j + 3, &segs, &mut members);
            found.extend(members.into_iter().map(|m| (m, i)));
        } else if segs.len() > 1 {
            found.push((segs, i));
        }
        i = j.max(i + 1);
    }
    found
}

/// Inline modules of a file: (name, start, end) byte ranges of their bodies in `code`, and
/// whether each is a `#[cfg(test)]` module.
fn inline_modules(code: &str) -> Vec<(String, usize, usize, bool)> {
    let mut mods = Vec::new();
    let mut search = 0;
    while let Some(at) = code[search..].find("mod ").map(|a| a + search) {
        search = at + 4;
        if at > 0 && (code.as_bytes()[at - 1].is_ascii_alphanumeric() || code.as_bytes()[at - 1] == b'_') {
            continue;
        }
        let rest = &code[at + 4..];
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let after = rest[name.len()..].trim_start();
        if name.is_empty() || !after.starts_with('{') {
            continue; // `mod name;`: a file module
        }
        let open = code.len() - after.len();
        let mut depth = 0;
        let mut end = code.len();
        for (k, ch) in code[open..].char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + k;
                        break;
                    }
                }
                _ => {}
            }
        }
        let head = &code[..at];
        let attrs_start = head.rfind([';', '}']).map_or(0, |p| p + 1);
        let test = head[attrs_start..].contains("cfg(test)") || head[attrs_start..].contains("cfg(all(test");
        mods.push((name, open, end, test));
    }
    mods
}

/// The files a file imports, as module paths of the crate's files.
fn file_imports(module: &[String], code: &str, files: &BTreeSet<Vec<String>>) -> BTreeSet<Vec<String>> {
    let inline = inline_modules(code);
    let mut out = BTreeSet::new();
    for (path, at) in code_paths(code) {
        let enclosing: Vec<&(String, usize, usize, bool)> = inline.iter().filter(|m| m.1 < at && at < m.2).collect();
        if enclosing.iter().any(|m| m.3) {
            continue; // test code
        }
        // The scope the path is read in: the file's module, then the inline modules around it.
        let mut scope: Vec<String> = module.to_vec();
        scope.extend(enclosing.iter().map(|m| m.0.clone()));
        let (mut base, mut segs) = match path[0].as_str() {
            "crate" => (Vec::new(), &path[1..]),
            "self" => (scope.clone(), &path[1..]),
            "super" => (scope.clone(), &path[..]),
            first if enclosing.is_empty() && files.contains(&[module, &[first.to_string()]].concat()) => {
                (module.to_vec(), &path[..])
            }
            _ => continue,
        };
        while segs.first().is_some_and(|s| s == "super") {
            base.pop();
            segs = &segs[1..];
        }
        // The deepest file module the path reaches.
        while !files.contains(&base) {
            base.pop();
        }
        for s in segs {
            let next = [base.clone(), vec![s.clone()]].concat();
            if !files.contains(&next) {
                break;
            }
            base = next;
        }
        if base != module {
            out.insert(base);
        }
    }
    out
}

/// File module -> the file modules it imports, for crate `name`.
fn file_graph(name: &str) -> BTreeMap<String, BTreeSet<String>> {
    let src = crate_src(name);
    let files = rust_files(&src);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| file_module(&src, f)).collect();
    let show = |m: &Vec<String>| if m.is_empty() { "crate".to_string() } else { m.join("::") };
    let mut graph = BTreeMap::new();
    for file in &files {
        let module = file_module(&src, file);
        let code = code_only(&fs::read_to_string(file).unwrap());
        let imports = file_imports(&module, &code, &modules);
        graph.insert(show(&module), imports.iter().map(show).collect());
    }
    graph
}

/// Pairs of files that still import each other, each as `crate: a <-> b` (none left: the last,
/// `mem <-> mem::dsm`, went when software DSM became a cost model `Memory` owns). The test fails
/// when a listed pair is gone too, so this list only shrinks.
const KNOWN_PAIRS: &[&str] = &[];

#[test]
fn no_crate_has_a_file_import_cycle() {
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for name in ["commlab-sim", "commlab-apps", "commlab-native", "commlab-cli"] {
        let mut graph = file_graph(name);
        let g = &graph;
        let pairs: Vec<(String, String)> = g
            .iter()
            .flat_map(|(a, tos)| {
                tos.iter().filter(move |b| a < *b && g[*b].contains(a)).map(move |b| (a.clone(), b.clone()))
            })
            .collect();
        let mut new = Vec::new();
        for (a, b) in pairs {
            let pair = format!("{name}: {a} <-> {b}");
            if KNOWN_PAIRS.contains(&pair.as_str()) {
                // Checked for longer cycles without the child's edge back.
                graph.get_mut(&b).unwrap().remove(&a);
                seen.insert(pair);
            } else {
                new.push(pair);
            }
        }
        if !new.is_empty() {
            problems.push(format!("files that import each other: {new:?}"));
        } else if let Some(cycle) = find_cycle(&graph) {
            problems.push(format!("{name}: a file import cycle: {}", cycle.join(" -> ")));
        }
    }
    let gone: Vec<&&str> = KNOWN_PAIRS.iter().filter(|p| !seen.contains(**p)).collect();
    if !gone.is_empty() {
        problems.push(format!("KNOWN_PAIRS lists pairs that no longer import each other (remove them): {gone:?}"));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The longest a function may be, in lines from its `fn` to its closing brace (issue 30: "no
/// function over about 120 lines").
const MAX_FUNCTION_LINES: usize = 120;

/// Every function of `code` (comments and literals already blanked) with its first line and its
/// length in lines; functions without a body (trait declarations) are skipped.
fn function_lengths(code: &str) -> Vec<(String, usize, usize)> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut search = 0;
    while let Some(at) = code[search..].find("fn ").map(|a| a + search) {
        search = at + 3;
        if at > 0 && (b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_') {
            continue;
        }
        let name: String = code[at + 3..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if name.is_empty() {
            continue; // `fn(` in a type
        }
        // The body's `{`, or a `;` ending a declaration, outside the signature's brackets.
        let mut depth = 0i32;
        let mut open = None;
        for (k, c) in code[at..].char_indices() {
            match c {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                ';' if depth == 0 => break,
                '{' if depth == 0 => {
                    open = Some(at + k);
                    break;
                }
                _ => {}
            }
        }
        let Some(open) = open else { continue };
        let mut braces = 0;
        let mut close = code.len();
        for (k, c) in code[open..].char_indices() {
            match c {
                '{' => braces += 1,
                '}' => {
                    braces -= 1;
                    if braces == 0 {
                        close = open + k;
                        break;
                    }
                }
                _ => {}
            }
        }
        let first = code[..at].matches('\n').count() + 1;
        let lines = code[at..close].matches('\n').count() + 1;
        out.push((name, first, lines));
    }
    out
}

#[test]
fn no_function_is_longer_than_the_limit() {
    let mut long = Vec::new();
    for name in ["commlab-api", "commlab-sim", "commlab-apps", "commlab-native", "commlab-cli"] {
        let dir = crate_src(name).join("..");
        for sub in ["src", "tests"] {
            let path = dir.join(sub);
            if !path.exists() {
                continue;
            }
            for file in rust_files(&path) {
                let code = code_only(&fs::read_to_string(&file).unwrap());
                for (f, line, lines) in function_lengths(&code) {
                    if lines > MAX_FUNCTION_LINES {
                        let rel = file.strip_prefix(&path).unwrap().display();
                        long.push(format!("{name}/{sub}/{rel}:{line} {f} ({lines} lines)"));
                    }
                }
            }
        }
    }
    assert!(long.is_empty(), "functions over {MAX_FUNCTION_LINES} lines (split them by responsibility): {long:#?}");
    // The counter itself: a body's lines, a declaration skipped, brackets in a signature.
    let code = code_only("trait T { fn a(&self); }\nfn b(x: [u8; 2]) -> u8 {\n    let s = \"}\";\n    x[0]\n}\n");
    assert_eq!(function_lengths(&code), vec![("b".to_string(), 2, 4)]);
}

#[test]
fn the_file_graph_reads_super_groups_reexports_and_tests() {
    let files: BTreeSet<Vec<String>> =
        [vec![], vec!["m".to_string()], vec!["m".into(), "a".into()], vec!["m".into(), "b".into()], vec!["n".into()]]
            .into_iter()
            .collect();
    let m = vec!["m".to_string()];
    let a = vec!["m".to_string(), "a".into()];
    let set = |v: &[&[&str]]| -> BTreeSet<Vec<String>> {
        v.iter().map(|p| p.iter().map(|s| s.to_string()).collect()).collect()
    };
    // A child reaches its parent and a sibling through super::, groups included.
    let code = code_only("use super::{b::X as Z, Y};\nfn f() { crate::n::g(); }");
    assert_eq!(file_imports(&a, &code, &files), set(&[&["m"], &["m", "b"], &["n"]]));
    // A parent's re-export of a child and its use of a child's item are imports.
    assert_eq!(
        file_imports(&m, &code_only("pub use a::Z;\npub(crate) use b::{P, Q};"), &files),
        set(&[&["m", "a"], &["m", "b"]])
    );
    assert_eq!(file_imports(&m, &code_only("use a::Z;\nfn f() { b::g() }"), &files), set(&[&["m", "a"], &["m", "b"]]));
    // super:: in an inline module is the file's own module; test modules, comments and strings
    // are not read.
    let code = code_only(
        "mod inner {\n use super::Thing;\n}\n#[cfg(test)]\nmod tests { use super::super::n::X; }\n// crate::n::Y\nconst S: &str = \"crate::n::Z {\";\nconst C: char = '{';",
    );
    assert_eq!(file_imports(&a, &code, &files), set(&[]));
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
