//! Matrix Market reader for real symmetric matrices.
//!
//! Our own parser rather than a crate's, because users feed it hand-edited and truncated files
//! and we want one-line errors that name the line and say what would be valid. It never panics
//! on any input. Accepted: `%%MatrixMarket matrix coordinate (real|integer|pattern)
//! (symmetric|general)` (keywords case-insensitive), `%` comment lines and blank lines anywhere
//! after the header, a size line `rows cols entries`, then `entries` lines `i j [value]`
//! (1-based). Gzip input is recognised by its magic bytes.
//!
//! Decisions:
//! - `symmetric` storage: an entry in the upper triangle is taken as its mirror (so files that
//!   store the upper triangle load), but giving both `(i, j)` and `(j, i)` is an error.
//! - `general` storage must be exactly symmetric: every off-diagonal entry needs its mirror
//!   with a bit-identical value (same text in the file gives the same value).
//! - Absent or zero diagonal entries load as 0.0 ([`super::ichol0`] reports them later).
//! - `pattern` matrices get SPD values: off-diagonal -1, diagonal = off-diagonal count of the
//!   row (full matrix) + 1, i.e. [`SymMatrix::with_laplacian_values`]; [`MtxInfo::pattern`] says so.
//! - Orders above [`MAX_ORDER`] are refused so a garbled size line cannot ask for gigabytes.
//! - Values may use a Fortran `D` exponent (`1.5D+03`).

use super::matrix::{from_sorted_lower, key, unkey, SymMatrix, MAX_ORDER};
use std::fmt;
use std::io::{BufRead, BufReader};
use std::path::Path;

/// The header's field keyword.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MtxField {
    Real,
    Integer,
    Pattern,
}

/// What the reader found besides the matrix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MtxInfo {
    /// Order of the matrix.
    pub n: usize,
    pub field: MtxField,
    /// The file had no values; they were made SPD as described in the module docs.
    pub pattern: bool,
    /// The header said `symmetric` (one triangle stored) rather than `general`.
    pub declared_symmetric: bool,
    /// Entry lines read (equals the count declared on the size line).
    pub entries_read: usize,
    /// Upper-triangle entries of `symmetric` storage that were taken as their mirrors.
    pub mirrored_upper: usize,
    /// Rows with no diagonal entry in the file (stored as 0.0 unless `pattern`).
    pub missing_diagonal: usize,
}

/// What kind of problem an [`MtxError`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MtxErrorKind {
    /// Could not open or read the input (not tied to a line).
    Io,
    /// Missing, garbled or unsupported header line.
    Header,
    /// Missing or invalid size line.
    Size,
    /// A malformed entry line: field count, numbers, index range, non-finite value.
    Entry,
    /// A position given twice (including both mirrors in `symmetric` storage).
    Duplicate,
    /// `general` storage that is not symmetric.
    NotSymmetric,
    /// More entry lines than declared.
    TooMany,
    /// End of input before the header, size line or all declared entries (not tied to a line).
    Eof,
}

/// A Matrix Market reading error. Display is one line:
/// `<origin>:<line>: <what is wrong> (<what would be valid>)`, or `<origin>: <message>` when the
/// error is not tied to a line; such messages start with "at end of input" or "I/O error".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MtxError {
    pub origin: String,
    /// 1-based line number, `None` for I/O errors and for input that ends too early.
    pub line: Option<usize>,
    pub kind: MtxErrorKind,
    pub message: String,
}

impl fmt::Display for MtxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: {}", self.origin, l, self.message),
            None => write!(f, "{}: {}", self.origin, self.message),
        }
    }
}

impl std::error::Error for MtxError {}

/// Reads a `.mtx` or gzip-compressed `.mtx.gz` file (gzip detected by its magic bytes).
pub fn read_matrix_market(path: &Path) -> Result<(SymMatrix, MtxInfo), MtxError> {
    let origin = path.display().to_string();
    let io_err = |what: String| MtxError { origin: origin.clone(), line: None, kind: MtxErrorKind::Io, message: what };
    let file = std::fs::File::open(path).map_err(|e| io_err(format!("I/O error: cannot open: {e}")))?;
    let mut r = BufReader::with_capacity(1 << 16, file);
    let gz = r.fill_buf().map_err(|e| io_err(format!("I/O error: cannot read: {e}")))?.starts_with(&[0x1f, 0x8b]);
    if gz {
        let dec = flate2::bufread::MultiGzDecoder::new(r);
        parse_matrix_market(BufReader::with_capacity(1 << 16, dec), &origin)
    } else {
        parse_matrix_market(r, &origin)
    }
}

/// One entry as read: position in lower-triangle orientation plus where it came from.
#[derive(Clone, Copy)]
struct Item {
    key: u64,
    line: usize,
    val: f64,
    /// Given as `(col, row)` of `key`, i.e. in the upper triangle.
    upper: bool,
}

impl Item {
    /// The 1-based position as written in the file.
    fn as_written(&self) -> (u64, u64) {
        let (r, c) = unkey(self.key);
        let (r, c) = (r as u64 + 1, c as u64 + 1);
        if self.upper {
            (c, r)
        } else {
            (r, c)
        }
    }
}

struct Reader<'o, R> {
    r: R,
    buf: Vec<u8>,
    line: usize,
    origin: &'o str,
}

impl<R: BufRead> Reader<'_, R> {
    fn err(&self, kind: MtxErrorKind, message: String) -> MtxError {
        MtxError { origin: self.origin.to_string(), line: Some(self.line), kind, message }
    }

    fn eof(&self, message: String) -> MtxError {
        MtxError { origin: self.origin.to_string(), line: None, kind: MtxErrorKind::Eof, message }
    }

    /// Reads the next physical line into `buf` (terminator stripped); false at end of input.
    fn next_line(&mut self) -> Result<bool, MtxError> {
        self.buf.clear();
        let got = self.r.read_until(b'\n', &mut self.buf).map_err(|e| MtxError {
            origin: self.origin.to_string(),
            line: None,
            kind: MtxErrorKind::Io,
            message: format!("I/O error after line {}: {e}", self.line),
        })?;
        if got == 0 {
            return Ok(false);
        }
        self.line += 1;
        while matches!(self.buf.last(), Some(b'\n' | b'\r')) {
            self.buf.pop();
        }
        Ok(true)
    }

    /// Advances to the next line that is neither blank nor a `%` comment; false at end of input.
    fn next_content(&mut self) -> Result<bool, MtxError> {
        while self.next_line()? {
            match self.buf.iter().find(|b| !b.is_ascii_whitespace()) {
                None | Some(b'%') => continue,
                Some(_) => return Ok(true),
            }
        }
        Ok(false)
    }
}

/// Splits `line` on ASCII whitespace into at most `N` tokens; returns the total token count.
fn tokens<const N: usize>(line: &[u8]) -> ([&[u8]; N], usize) {
    let mut out: [&[u8]; N] = [&[]; N];
    let mut count = 0;
    for t in line.split(|b| b.is_ascii_whitespace()).filter(|t| !t.is_empty()) {
        if count < N {
            out[count] = t;
        }
        count += 1;
    }
    (out, count)
}

/// A token for an error message, quoted and cut short.
fn show(t: &[u8]) -> String {
    let s = String::from_utf8_lossy(t);
    if s.chars().count() > 24 {
        format!("'{}...'", s.chars().take(24).collect::<String>())
    } else {
        format!("'{s}'")
    }
}

/// A non-negative decimal integer (optional leading '+'), saturating at `u64::MAX`; `None` if
/// the token is not one.
fn parse_uint(t: &[u8]) -> Option<u64> {
    let d = t.strip_prefix(b"+").unwrap_or(t);
    if d.is_empty() || !d.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(d.iter().fold(0u64, |acc, &b| acc.saturating_mul(10).saturating_add((b - b'0') as u64)))
}

fn parse_real(t: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(t).ok()?;
    s.parse::<f64>().ok().or_else(|| {
        // Fortran-style exponent, e.g. 1.5D+03.
        if s.contains(['d', 'D']) {
            s.replace(['d', 'D'], "e").parse::<f64>().ok()
        } else {
            None
        }
    })
}

const SUPPORTED: &str = "expected '%%MatrixMarket matrix coordinate real|integer|pattern symmetric|general'";

/// Parses Matrix Market text; `origin` names the input in error messages (usually the path).
pub fn parse_matrix_market<R: BufRead>(r: R, origin: &str) -> Result<(SymMatrix, MtxInfo), MtxError> {
    let mut rd = Reader { r, buf: Vec::with_capacity(256), line: 0, origin };
    let (field, symmetric) = read_header(&mut rd)?;
    let pattern = field == MtxField::Pattern;
    let (n, declared, size_line) = read_size(&mut rd, symmetric)?;
    let entries = read_entries(&mut rd, n, declared, field, size_line)?;
    let entries_read = entries.len();
    let (lower_entries, mirrored_upper) = lower_triangle(entries, symmetric, pattern, origin)?;

    let mut has_diag = vec![false; n];
    for e in &lower_entries {
        let (r, c) = unkey(e.key);
        if r == c {
            has_diag[r as usize] = true;
        }
    }
    let missing_diagonal = has_diag.iter().filter(|&&d| !d).count();
    drop(has_diag);
    let mut a = from_sorted_lower(n, || {
        lower_entries.iter().map(|e| {
            let (r, c) = unkey(e.key);
            (r, c, e.val)
        })
    });
    if pattern {
        a = a.with_laplacian_values();
    }
    let info =
        MtxInfo { n, field, pattern, declared_symmetric: symmetric, entries_read, mirrored_upper, missing_diagonal };
    Ok((a, info))
}

/// The header line: the entries' field and whether the matrix is stored symmetric.
fn read_header<R: BufRead>(rd: &mut Reader<'_, R>) -> Result<(MtxField, bool), MtxError> {
    use MtxErrorKind::*;
    if !rd.next_line()? {
        return Err(rd.eof(format!("at end of input: the input is empty ({SUPPORTED} on line 1)")));
    }
    let (h, nh) = tokens::<5>(&rd.buf);
    if nh == 0 || !h[0].eq_ignore_ascii_case(b"%%MatrixMarket") {
        return Err(rd.err(Header, format!("missing '%%MatrixMarket' header ({SUPPORTED})")));
    }
    if nh != 5 {
        return Err(rd.err(Header, format!("header has {nh} fields ({SUPPORTED}: 5 fields)")));
    }
    let lower: Vec<String> = h.iter().map(|t| String::from_utf8_lossy(t).to_ascii_lowercase()).collect();
    if lower[1] != "matrix" {
        return Err(rd.err(Header, format!("object {} is not supported (expected 'matrix')", show(h[1]))));
    }
    match lower[2].as_str() {
        "coordinate" => {}
        "array" => {
            return Err(rd.err(Header, "dense 'array' format is not supported (expected 'coordinate')".into()));
        }
        _ => return Err(rd.err(Header, format!("unknown format {} (expected 'coordinate')", show(h[2])))),
    }
    let field = match lower[3].as_str() {
        "real" => MtxField::Real,
        "integer" => MtxField::Integer,
        "pattern" => MtxField::Pattern,
        "complex" => {
            return Err(rd.err(Header, "'complex' values are not supported (expected real, integer or pattern)".into()))
        }
        _ => return Err(rd.err(Header, format!("unknown field {} (expected real, integer or pattern)", show(h[3])))),
    };
    let symmetric = match lower[4].as_str() {
        "symmetric" => true,
        "general" => false,
        "skew-symmetric" | "hermitian" => {
            return Err(
                rd.err(Header, format!("'{}' storage is not supported (expected symmetric or general)", lower[4]))
            )
        }
        _ => return Err(rd.err(Header, format!("unknown symmetry {} (expected symmetric or general)", show(h[4])))),
    };
    Ok((field, symmetric))
}

/// The size line: the order, the entries declared and the line it is on.
fn read_size<R: BufRead>(rd: &mut Reader<'_, R>, symmetric: bool) -> Result<(usize, usize, usize), MtxError> {
    use MtxErrorKind::*;
    if !rd.next_content()? {
        return Err(rd.eof("at end of input: no size line (expected 'rows cols entries' after the header)".into()));
    }
    let size_line = rd.line;
    let (s, ns) = tokens::<3>(&rd.buf);
    if ns != 3 {
        return Err(rd.err(Size, format!("size line has {ns} fields (expected 3: rows cols entries)")));
    }
    let mut nums = [0u64; 3];
    for (k, what) in ["row count", "column count", "entry count"].iter().enumerate() {
        nums[k] = parse_uint(s[k])
            .ok_or_else(|| rd.err(Size, format!("bad {what} {} (expected a non-negative integer)", show(s[k]))))?;
    }
    let [rows, cols, declared] = nums;
    if rows != cols {
        return Err(rd.err(Size, format!("matrix is not square: {rows} rows, {cols} columns (expected equal counts)")));
    }
    if rows == 0 {
        return Err(rd.err(Size, "matrix order is 0 (expected at least 1 row)".into()));
    }
    if rows > MAX_ORDER as u64 {
        return Err(rd.err(Size, format!("matrix order {rows} is too large (at most {MAX_ORDER} supported)")));
    }
    let n = rows as usize;
    let capacity = if symmetric { n as u128 * (n as u128 + 1) / 2 } else { n as u128 * n as u128 };
    if declared as u128 > capacity {
        return Err(rd.err(
            Size,
            format!(
                "{declared} entries declared, more than a {n}x{n} {} matrix holds (at most {capacity})",
                if symmetric { "symmetric" } else { "general" }
            ),
        ));
    }
    let declared = declared as usize;
    Ok((n, declared, size_line))
}

/// The entry lines: exactly the `declared` entries, each in the lower-triangle orientation.
fn read_entries<R: BufRead>(
    rd: &mut Reader<'_, R>,
    n: usize,
    declared: usize,
    field: MtxField,
    size_line: usize,
) -> Result<Vec<Item>, MtxError> {
    use MtxErrorKind::*;
    let pattern = field == MtxField::Pattern;
    let want = if pattern { 2 } else { 3 };
    let fields_doc = if pattern { "row col" } else { "row col value" };
    let mut entries: Vec<Item> = Vec::with_capacity(declared.min(1 << 20));
    while rd.next_content()? {
        if entries.len() == declared {
            return Err(rd.err(
                TooMany,
                format!("more entries than the {declared} declared on line {size_line} (expected exactly {declared})"),
            ));
        }
        let (t, nt) = tokens::<3>(&rd.buf);
        if nt != want {
            return Err(rd.err(Entry, format!("entry has {nt} fields (expected {want}: {fields_doc})")));
        }
        let mut ij = [0u32; 2];
        for (k, what) in ["row", "column"].iter().enumerate() {
            let x = parse_uint(t[k]).ok_or_else(|| {
                rd.err(Entry, format!("bad {what} index {} (expected an integer in 1..={n})", show(t[k])))
            })?;
            if x == 0 || x > n as u64 {
                return Err(rd.err(Entry, format!("{what} index {x} out of range (valid: 1..={n})")));
            }
            ij[k] = (x - 1) as u32;
        }
        let val = match field {
            MtxField::Pattern => 1.0,
            MtxField::Real => match parse_real(t[2]) {
                Some(v) if v.is_finite() => v,
                Some(_) => {
                    return Err(rd.err(Entry, format!("value {} is not finite (expected a finite real)", show(t[2]))))
                }
                None => return Err(rd.err(Entry, format!("bad value {} (expected a real number)", show(t[2])))),
            },
            MtxField::Integer => match std::str::from_utf8(t[2]).ok().and_then(|s| s.parse::<i64>().ok()) {
                Some(v) => v as f64,
                None => {
                    return Err(rd.err(
                        Entry,
                        format!("bad value {} (expected an integer: the header says 'integer')", show(t[2])),
                    ))
                }
            },
        };
        let [i, j] = ij;
        let upper = i < j;
        let k = if upper { key(j, i) } else { key(i, j) };
        entries.push(Item { key: k, line: rd.line, val, upper });
    }
    if entries.len() < declared {
        return Err(rd.eof(format!(
            "at end of input: found {} of the {declared} entries declared on line {size_line} (expected {declared})",
            entries.len()
        )));
    }
    Ok(entries)
}

/// The lower triangle, each position once, sorted by (key, line): a symmetric file's entries
/// (with how many were given in the upper triangle and mirrored), or a general file's lower
/// entries once its upper ones are checked to mirror them.
fn lower_triangle(
    mut entries: Vec<Item>,
    symmetric: bool,
    pattern: bool,
    origin: &str,
) -> Result<(Vec<Item>, usize), MtxError> {
    use MtxErrorKind::*;
    let err_at = |line: usize, kind: MtxErrorKind, message: String| MtxError {
        origin: origin.to_string(),
        line: Some(line),
        kind,
        message,
    };
    let mut mirrored_upper = 0;
    let lower_entries: Vec<Item> = if symmetric {
        mirrored_upper = entries.iter().filter(|e| e.upper).count();
        entries.sort_unstable_by_key(|e| (e.key, e.line));
        if let Some((first, dup)) = first_duplicate(&entries) {
            let (i, j) = dup.as_written();
            let msg = if first.upper == dup.upper {
                format!(
                    "duplicate entry ({i}, {j}), first given on line {} (each position may appear once)",
                    first.line
                )
            } else {
                format!(
                    "entry ({i}, {j}) duplicates its mirror ({j}, {i}) given on line {} \
                     (symmetric storage lists each off-diagonal pair once)",
                    first.line
                )
            };
            return Err(err_at(dup.line, Duplicate, msg));
        }
        entries
    } else {
        let (mut up, mut low): (Vec<_>, Vec<_>) = entries.into_iter().partition(|e| e.upper);
        up.sort_unstable_by_key(|e| (e.key, e.line));
        low.sort_unstable_by_key(|e| (e.key, e.line));
        let dup = [first_duplicate(&up), first_duplicate(&low)].into_iter().flatten().min_by_key(|d| d.1.line);
        if let Some((first, dup)) = dup {
            let (i, j) = dup.as_written();
            return Err(err_at(
                dup.line,
                Duplicate,
                format!(
                    "duplicate entry ({i}, {j}), first given on line {} (each position may appear once)",
                    first.line
                ),
            ));
        }
        if let Some((line, msg)) = first_asymmetry(&low, &up, pattern) {
            return Err(err_at(line, NotSymmetric, msg));
        }
        low
    };
    Ok((lower_entries, mirrored_upper))
}

/// In entries sorted by (key, line): the repeated position whose second occurrence comes first
/// in the file, as (first occurrence, second occurrence).
fn first_duplicate(sorted: &[Item]) -> Option<(Item, Item)> {
    let mut best: Option<(Item, Item)> = None;
    let mut start = 0;
    for k in 1..=sorted.len() {
        if k == sorted.len() || sorted[k].key != sorted[start].key {
            // A run of equal keys, earliest line first: its second element is the first repeat.
            if k - start >= 2 && best.is_none_or(|b| sorted[start + 1].line < b.1.line) {
                best = Some((sorted[start], sorted[start + 1]));
            }
            start = k;
        }
    }
    best
}

/// For `general` storage: `low` holds entries with row >= col, `up` the others transposed, both
/// sorted and without repeats. Returns the earliest line whose off-diagonal entry has no mirror
/// or a different value from its mirror.
fn first_asymmetry(low: &[Item], up: &[Item], pattern: bool) -> Option<(usize, String)> {
    let mut best: Option<(usize, String)> = None;
    let mut note = |line: usize, msg: &dyn Fn() -> String| {
        if best.as_ref().is_none_or(|b| line < b.0) {
            best = Some((line, msg()));
        }
    };
    let missing = |e: &Item| {
        let (i, j) = e.as_written();
        format!("entry ({i}, {j}) has no mirror entry ({j}, {i}) (general storage must hold a symmetric matrix)")
    };
    let low_off: Vec<&Item> = low.iter().filter(|e| unkey(e.key).0 != unkey(e.key).1).collect();
    let (mut a, mut b) = (0, 0);
    while a < low_off.len() || b < up.len() {
        let ka = low_off.get(a).map(|e| e.key).unwrap_or(u64::MAX);
        let kb = up.get(b).map(|e| e.key).unwrap_or(u64::MAX);
        if ka < kb {
            note(low_off[a].line, &|| missing(low_off[a]));
            a += 1;
        } else if kb < ka {
            note(up[b].line, &|| missing(&up[b]));
            b += 1;
        } else {
            let (x, y) = (low_off[a], &up[b]);
            if !pattern && x.val.to_bits() != y.val.to_bits() {
                let (later, earlier) = if x.line > y.line { (x, y) } else { (y, x) };
                let (i, j) = later.as_written();
                note(later.line, &|| {
                    format!(
                        "entry ({i}, {j}) = {} differs from its mirror ({j}, {i}) = {} on line {} \
                         (general storage must hold a symmetric matrix)",
                        later.val, earlier.val, earlier.line
                    )
                });
            }
            a += 1;
            b += 1;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use MtxErrorKind::*;

    fn parse(text: &str) -> Result<(SymMatrix, MtxInfo), MtxError> {
        parse_matrix_market(text.as_bytes(), "t.mtx")
    }

    /// Asserts an error of `kind` at `line` whose message contains `phrase`.
    fn fails(text: &str, kind: MtxErrorKind, line: Option<usize>, phrase: &str) -> MtxError {
        let e = parse(text).expect_err("should fail");
        assert_eq!((e.kind, e.line), (kind, line), "{e}");
        assert!(e.message.contains(phrase), "message {:?} lacks {phrase:?}", e.message);
        assert!(!e.to_string().contains('\n'));
        e
    }

    const HDR: &str = "%%MatrixMarket matrix coordinate real symmetric\n";

    #[test]
    fn loads_symmetric_real() {
        let (a, info) = parse(&format!("{HDR}% c\n3 3 4\n1 1 4\n2 1 -1\n2 2 4.5e0\n3 3 2\n")).unwrap();
        a.check().unwrap();
        assert_eq!(a.n, 3);
        assert_eq!(a.nnz(), 5);
        assert_eq!(a.row(0), (&[0u32, 1][..], &[4.0, -1.0][..]));
        let want = MtxInfo {
            n: 3,
            field: MtxField::Real,
            pattern: false,
            declared_symmetric: true,
            entries_read: 4,
            mirrored_upper: 0,
            missing_diagonal: 0,
        };
        assert_eq!(info, want);
    }

    #[test]
    fn tolerant_syntax() {
        let text = "%%matrixmarket MATRIX Coordinate REAL Symmetric\r\n\r\n% comment\r\n  3 3 3  \r\n\r\n\
                    1 1 1.5D+00\r\n% mid comment\r\n\t2 1 -1\r\n+3 3 2\r\n\r\n";
        let (a, _) = parse(text).unwrap();
        assert_eq!(a.diag(0), 1.5);
        assert_eq!(a.diag(2), 2.0);
        let (a, info) =
            parse("%%MatrixMarket matrix coordinate integer general\n2 2 4\n1 1 3\n1 2 -1\n2 1 -1\n2 2 3\n").unwrap();
        assert_eq!(info.field, MtxField::Integer);
        assert!(!info.declared_symmetric);
        assert_eq!(a.row(1), (&[0u32, 1][..], &[-1.0, 3.0][..]));
    }

    #[test]
    fn pattern_gets_spd_values() {
        let (a, info) = parse("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n2 1\n3 1\n2 2\n").unwrap();
        assert!(info.pattern);
        assert_eq!(info.missing_diagonal, 2);
        assert_eq!(a.row(0), (&[0u32, 1, 2][..], &[3.0, -1.0, -1.0][..]));
        assert_eq!(a.row(1), (&[0u32, 1][..], &[-1.0, 2.0][..]));
        assert_eq!(a.row(2), (&[0u32, 2][..], &[-1.0, 2.0][..]));
    }

    #[test]
    fn lone_upper_entry_is_its_mirror() {
        let (a, info) = parse(&format!("{HDR}2 2 3\n1 1 2\n1 2 -1\n2 2 2\n")).unwrap();
        assert_eq!(info.mirrored_upper, 1);
        assert_eq!(a, parse(&format!("{HDR}2 2 3\n1 1 2\n2 1 -1\n2 2 2\n")).unwrap().0);
    }

    #[test]
    fn absent_and_zero_diagonal_load() {
        let (a, info) = parse(&format!("{HDR}3 3 2\n2 1 -1\n3 3 0\n")).unwrap();
        a.check().unwrap();
        assert_eq!(info.missing_diagonal, 2);
        assert_eq!((a.diag(0), a.diag(1), a.diag(2)), (0.0, 0.0, 0.0));
        assert!(super::super::ichol0(&a).unwrap_err().contains("row 0"));
    }

    #[test]
    fn general_must_be_symmetric() {
        let g = "%%MatrixMarket matrix coordinate real general\n";
        let (a, _) = parse(&format!("{g}2 2 4\n1 1 2\n1 2 -1\n2 1 -1\n2 2 2\n")).unwrap();
        assert_eq!(a, parse(&format!("{HDR}2 2 3\n1 1 2\n2 1 -1\n2 2 2\n")).unwrap().0);
        fails(
            &format!("{g}3 3 4\n1 1 2\n3 1 -1\n1 2 5\n2 1 5\n"),
            NotSymmetric,
            Some(4),
            "(3, 1) has no mirror entry (1, 3)",
        );
        fails(&format!("{g}3 3 4\n1 1 2\n1 3 -1\n3 1 -1.5\n2 2 1\n"), NotSymmetric, Some(5), "differs from its mirror");
        fails(
            "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 3\n2 2\n",
            NotSymmetric,
            Some(3),
            "no mirror",
        );
        fails(&format!("{g}2 2 3\n2 1 1\n1 2 1\n2 1 1\n"), Duplicate, Some(5), "first given on line 3");
    }

    #[test]
    fn header_errors() {
        let e = fails("", Eof, None, "empty");
        assert!(e.to_string().starts_with("t.mtx: at end of input"));
        fails("3 3 1\n1 1 1\n", Header, Some(1), "missing '%%MatrixMarket'");
        fails("% hello\n", Header, Some(1), "missing '%%MatrixMarket'");
        fails("%%MatrixMarket matrix coordinate real\n", Header, Some(1), "header has 4 fields");
        fails("%%MatrixMarket vector coordinate real general\n", Header, Some(1), "expected 'matrix'");
        fails("%%MatrixMarket matrix array real symmetric\n", Header, Some(1), "'array' format is not supported");
        fails("%%MatrixMarket matrix blob real symmetric\n", Header, Some(1), "unknown format");
        fails(
            "%%MatrixMarket matrix coordinate complex symmetric\n",
            Header,
            Some(1),
            "expected real, integer or pattern",
        );
        fails("%%MatrixMarket matrix coordinate float symmetric\n", Header, Some(1), "unknown field");
        for s in ["hermitian", "skew-symmetric"] {
            fails(
                &format!("%%MatrixMarket matrix coordinate real {s}\n"),
                Header,
                Some(1),
                "not supported (expected symmetric or general)",
            );
        }
        fails("%%MatrixMarket matrix coordinate real upper\n", Header, Some(1), "unknown symmetry");
    }

    #[test]
    fn size_line_errors() {
        fails(&format!("{HDR}% only comments\n\n"), Eof, None, "no size line");
        fails(&format!("{HDR}% c\n3 4 1\n"), Size, Some(3), "not square: 3 rows, 4 columns");
        fails(&format!("{HDR}3 3\n"), Size, Some(2), "size line has 2 fields");
        fails(&format!("{HDR}3 x 1\n"), Size, Some(2), "bad column count 'x'");
        fails(&format!("{HDR}3 3 -1\n"), Size, Some(2), "bad entry count '-1'");
        fails(&format!("{HDR}0 0 0\n"), Size, Some(2), "order is 0");
        fails(&format!("{HDR}99999999999 99999999999 1\n"), Size, Some(2), "too large");
        fails(&format!("{HDR}2 2 4\n"), Size, Some(2), "at most 3");
    }

    #[test]
    fn entry_errors() {
        fails(&format!("{HDR}3 3 2\n1 1 1\n4 1 1\n"), Entry, Some(4), "row index 4 out of range (valid: 1..=3)");
        fails(&format!("{HDR}3 3 2\n1 1 1\n1 0 1\n"), Entry, Some(4), "column index 0 out of range");
        fails(&format!("{HDR}3 3 1\n-1 1 1\n"), Entry, Some(3), "bad row index '-1' (expected an integer in 1..=3)");
        fails(&format!("{HDR}3 3 1\n99999999999999999999999 1 1\n"), Entry, Some(3), "out of range");
        fails(&format!("{HDR}3 3 1\n1 1\n"), Entry, Some(3), "entry has 2 fields (expected 3: row col value)");
        fails(&format!("{HDR}3 3 1\n1 1 1 1\n"), Entry, Some(3), "entry has 4 fields");
        fails(
            "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 1\n1 1 1\n",
            Entry,
            Some(3),
            "expected 2: row col",
        );
        fails(&format!("{HDR}3 3 1\n1 1 abc\n"), Entry, Some(3), "bad value 'abc' (expected a real number)");
        fails(
            "%%MatrixMarket matrix coordinate integer symmetric\n3 3 1\n1 1 1.5\n",
            Entry,
            Some(3),
            "expected an integer",
        );
        for v in ["NaN", "inf", "-Infinity", "1e400"] {
            fails(&format!("{HDR}3 3 1\n1 1 {v}\n"), Entry, Some(3), "is not finite");
        }
        fails(&format!("{HDR}3 3 1\n1 1 \u{e9}\n"), Entry, Some(3), "bad value");
    }

    #[test]
    fn count_and_duplicate_errors() {
        let e =
            fails(&format!("{HDR}3 3 3\n1 1 1\n\n2 2 1\n"), Eof, None, "found 2 of the 3 entries declared on line 2");
        assert!(e.to_string().starts_with("t.mtx: at end of input: found 2"));
        let e =
            fails(&format!("{HDR}3 3 1\n1 1 1\n% c\n2 2 1\n"), TooMany, Some(5), "more entries than the 1 declared");
        assert!(e.to_string().starts_with("t.mtx:5: more entries"));
        fails(
            &format!("{HDR}3 3 3\n2 1 1\n1 1 1\n2 1 1\n"),
            Duplicate,
            Some(5),
            "duplicate entry (2, 1), first given on line 3",
        );
        fails(
            &format!("{HDR}3 3 3\n2 1 1\n1 2 1\n3 3 1\n"),
            Duplicate,
            Some(4),
            "(1, 2) duplicates its mirror (2, 1) given on line 3",
        );
        // The earliest repeat in the file is reported, not the first in sorted order.
        fails(&format!("{HDR}3 3 4\n3 3 1\n2 1 1\n2 1 1\n3 3 1\n"), Duplicate, Some(5), "(2, 1)");
    }

    #[test]
    fn io_error_is_not_tied_to_a_line() {
        struct Broken;
        impl std::io::Read for Broken {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("disk on fire"))
            }
        }
        let e = parse_matrix_market(BufReader::new(Broken), "x").unwrap_err();
        assert_eq!((e.kind, e.line), (Io, None));
        assert!(e.to_string().starts_with("x: I/O error"), "{e}");
        let e = read_matrix_market(Path::new("/nonexistent/file.mtx")).unwrap_err();
        assert_eq!((e.kind, e.line), (Io, None));
        assert!(e.message.contains("cannot open"));
    }
}
