//! The UNSTRUC mesh file format (`--param mesh=PATH`), a plain text format:
//!
//! ```text
//! # comment: from '#' to the end of the line; blank lines are ignored
//! nodes N
//! x y z              N lines: node 0, 1, ... (finite numbers)
//! edges M
//! a b                M lines: two distinct node numbers (0-based), each pair at most once
//! faces F
//! k n1 .. nk         F lines: k = 3 or 4, then k distinct node numbers
//! ```
//!
//! The three sections come in this order, each header once; `faces 0` may be omitted at the
//! end. Every error is one line, `PATH:LINE: what is wrong (what would be valid)`.
//! [`super::mesh::Mesh::to_text`] writes this format.

use super::mesh::{Face, Mesh};
use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;

/// A mesh file error: the file, the 1-based line, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MeshError {
    pub origin: String,
    /// `None` when the file cannot be read at all.
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for MeshError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: {}", self.origin, l, self.message),
            None => write!(f, "{}: {}", self.origin, self.message),
        }
    }
}

impl std::error::Error for MeshError {}

/// Read a mesh file, plain or gzip-compressed (detected by its magic bytes, as matrices are).
pub fn read_mesh(path: &Path) -> Result<Mesh, MeshError> {
    use std::io::Read;
    let origin = path.display().to_string();
    let err = |e: std::io::Error| MeshError {
        origin: origin.clone(),
        line: None,
        message: format!("cannot read the mesh file: {e}"),
    };
    let bytes = std::fs::read(path).map_err(err)?;
    let text = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut text = String::new();
        flate2::read::MultiGzDecoder::new(&bytes[..]).read_to_string(&mut text).map_err(err)?;
        text
    } else {
        String::from_utf8(bytes)
            .map_err(|e| err(std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error())))?
    };
    parse_mesh(&text, &origin)
}

/// Content lines of a mesh file: (1-based line number, fields), comments and blanks skipped.
struct Lines<'a> {
    origin: &'a str,
    items: Box<dyn Iterator<Item = (usize, Vec<&'a str>)> + 'a>,
    last_line: usize,
}

impl<'a> Lines<'a> {
    fn err(&self, line: usize, message: String) -> MeshError {
        MeshError { origin: self.origin.to_string(), line: Some(line), message }
    }

    /// The next content line; at the end of input, an error saying what was `expected`.
    fn next(&mut self, expected: impl FnOnce() -> String) -> Result<(usize, Vec<&'a str>), MeshError> {
        match self.items.next() {
            Some(item) => Ok(item),
            None => Err(self.err(self.last_line, format!("end of input: expected {}", expected()))),
        }
    }

    /// A `NAME COUNT` header; `None` at the end of input when `optional`.
    fn header(&mut self, name: &str, optional: bool) -> Result<Option<usize>, MeshError> {
        let (ln, f) = match self.items.next() {
            None if optional => return Ok(None),
            None => return Err(self.err(self.last_line, format!("end of input: expected the `{name} COUNT` line"))),
            Some(item) => item,
        };
        if f.len() != 2 || f[0] != name {
            return Err(self.err(ln, format!("expected `{name} COUNT`, found `{}`", f.join(" "))));
        }
        let count = f[1]
            .parse::<usize>()
            .map_err(|_| self.err(ln, format!("`{}` is not a count (a whole number >= 0)", f[1])))?;
        Ok(Some(count))
    }
}

/// Parse a mesh from `text`; `origin` names it in errors.
pub fn parse_mesh(text: &str, origin: &str) -> Result<Mesh, MeshError> {
    let items = text.lines().enumerate().filter_map(|(i, l)| {
        let content = l.split('#').next().unwrap_or("").trim();
        (!content.is_empty()).then(|| (i + 1, content.split_whitespace().collect::<Vec<_>>()))
    });
    let mut lines = Lines { origin, items: Box::new(items), last_line: text.lines().count().max(1) };

    let n = lines.header("nodes", false)?.expect("required");
    let mut pos = Vec::with_capacity(n.min(1 << 20));
    for i in 0..n {
        let (ln, f) = lines.next(|| format!("{n} nodes, found {i}"))?;
        if f.len() != 3 {
            return Err(lines.err(ln, format!("node {i}: expected 3 coordinates `x y z`, found {} fields", f.len())));
        }
        let mut p = [0.0; 3];
        for (a, s) in f.iter().enumerate() {
            p[a] = s
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| lines.err(ln, format!("node {i}: coordinate `{s}` is not a finite number")))?;
        }
        pos.push(p);
    }
    let node = |lines: &Lines, ln: usize, s: &str| -> Result<u32, MeshError> {
        s.parse::<u32>()
            .ok()
            .filter(|&v| (v as usize) < n)
            .ok_or_else(|| lines.err(ln, format!("`{s}` is not a node number (0 to {})", n.saturating_sub(1))))
    };

    let m = lines.header("edges", false)?.expect("required");
    let mut edges = Vec::with_capacity(m.min(1 << 22));
    let mut seen = BTreeSet::new();
    for i in 0..m {
        let (ln, f) = lines.next(|| format!("{m} edges, found {i}"))?;
        if f.len() != 2 {
            return Err(lines.err(ln, format!("edge {i}: expected two node numbers `a b`, found {} fields", f.len())));
        }
        let (a, b) = (node(&lines, ln, f[0])?, node(&lines, ln, f[1])?);
        if a == b {
            return Err(lines.err(ln, format!("edge {i}: joins node {a} to itself (an edge needs two distinct nodes)")));
        }
        if !seen.insert([a.min(b), a.max(b)]) {
            return Err(
                lines.err(ln, format!("edge {i}: nodes {a} and {b} are already joined (each pair at most once)"))
            );
        }
        edges.push([a, b]);
    }

    let mut faces = Vec::new();
    if let Some(fcount) = lines.header("faces", true)? {
        for i in 0..fcount {
            let (ln, f) = lines.next(|| format!("{fcount} faces, found {i}"))?;
            let k = match f[0] {
                "3" => 3,
                "4" => 4,
                other => return Err(lines.err(ln, format!("face {i}: `{other}` nodes (a face has 3 or 4)"))),
            };
            if f.len() != k + 1 {
                return Err(lines
                    .err(ln, format!("face {i}: expected {k} node numbers after the count, found {}", f.len() - 1)));
            }
            let nodes: Vec<u32> = f[1..].iter().map(|s| node(&lines, ln, s)).collect::<Result<_, _>>()?;
            let distinct: BTreeSet<u32> = nodes.iter().copied().collect();
            if distinct.len() != k {
                return Err(lines.err(ln, format!("face {i}: a node appears twice (a face has distinct nodes)")));
            }
            faces.push(Face::new(&nodes));
        }
    }
    if let Some((ln, f)) = lines.items.next() {
        return Err(lines.err(ln, format!("unexpected `{}` after the last section", f.join(" "))));
    }
    Ok(Mesh { pos, edges, faces })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_meshes_round_trip_through_the_text_format() {
        let mesh = super::super::mesh::generate(300, 5);
        assert_eq!(parse_mesh(&mesh.to_text(), "m").unwrap(), mesh);
    }

    #[test]
    fn a_small_mesh_with_comments() {
        let text =
            "# a tetrahedron\nnodes 4\n0 0 0\n1 0 0 # x\n0 1 0\n\n0 0 1\nedges 3\n0 1\n1 2\n3 0\nfaces 1\n3 0 1 2\n";
        let m = parse_mesh(text, "t").unwrap();
        assert_eq!((m.nodes(), m.edges.len(), m.faces.len()), (4, 3, 1));
        let no_faces = parse_mesh("nodes 2\n0 0 0\n1 1 1\nedges 1\n0 1\n", "t").unwrap();
        assert!(no_faces.faces.is_empty());
    }

    #[test]
    fn errors_name_the_line() {
        let cases: &[(&str, &str)] = &[
            ("nodes 2\n0 0 0\n1 1\n", "t:3: node 1: expected 3 coordinates"),
            ("nodes 1\n0 0 nan\nedges 0\n", "t:2: node 0: coordinate `nan`"),
            ("nodes 2\n0 0 0\n1 1 1\nedges 1\n0 2\n", "t:5: `2` is not a node number (0 to 1)"),
            ("nodes 2\n0 0 0\n1 1 1\nedges 2\n0 1\n1 0\n", "t:6: edge 1: nodes 1 and 0 are already joined"),
            ("nodes 2\n0 0 0\n1 1 1\nedges 1\n1 1\n", "t:5: edge 0: joins node 1 to itself"),
            ("nodes 3\n0 0 0\n1 1 1\n2 2 2\nedges 0\nfaces 1\n5 0 1 2\n", "t:7: face 0: `5` nodes"),
            ("nodes 3\n0 0 0\n1 1 1\n2 2 2\nedges 0\nfaces 1\n3 0 1 1\n", "t:7: face 0: a node appears twice"),
            ("nodes 3\n0 0 0\n1 1 1\n", "t:3: end of input: expected 3 nodes, found 2"),
            ("verts 3\n", "t:1: expected `nodes COUNT`, found `verts 3`"),
            ("nodes 1\n0 0 0\nedges 0\nfaces 0\nextra\n", "t:5: unexpected `extra`"),
        ];
        for (text, want) in cases {
            let e = parse_mesh(text, "t").unwrap_err().to_string();
            assert!(e.starts_with(want), "{text:?}: got `{e}`, want `{want}...`");
        }
    }
}
