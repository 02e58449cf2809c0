//! From TOML text to a [`MachineSpec`]: parsing, `--set KEY=VALUE` overrides typed by the key
//! table, and the documented TOML `commlab machine show` prints.

use super::error::ConfigError;
use super::spec::{key_doc, key_list, Bound, KeyDoc, Kind, MachineSpec};

/// Parse machine TOML text (`origin` names it in errors) and apply `key=value` overrides.
pub fn parse_spec(text: &str, origin: &str, overrides: &[String]) -> Result<MachineSpec, ConfigError> {
    let mut table: toml::Table = text.parse().map_err(|e: toml::de::Error| ConfigError {
        message: format!("{origin}: malformed TOML: {}", one_line(&e.to_string())),
    })?;
    for ov in overrides {
        apply_override(&mut table, ov)?;
    }
    // I/O nodes are a mesh's: asking for them on another topology is a contradiction (a
    // preset's `io_nodes = true` is left alone when only the topology is changed).
    let asked_io = overrides.iter().any(|ov| ov.split_once('=').is_some_and(|(k, _)| k.trim() == "network.io_nodes"));
    let network = table.get("network").and_then(toml::Value::as_table);
    let io = network.and_then(|n| n.get("io_nodes")).and_then(toml::Value::as_bool) == Some(true);
    let topology = network.and_then(|n| n.get("topology")).and_then(toml::Value::as_str).unwrap_or("mesh");
    if asked_io && io && topology != "mesh" {
        return Err(ConfigError {
            message: format!(
                "--set network.io_nodes=true: I/O nodes sit at the x edges of a mesh, and {origin}'s network.topology is `{topology}` (set network.topology=mesh too, or leave io_nodes off)"
            ),
        });
    }
    MachineSpec::deserialize_table(table, origin)
}

impl MachineSpec {
    fn deserialize_table(table: toml::Table, origin: &str) -> Result<MachineSpec, ConfigError> {
        let text = toml::to_string(&table).expect("a toml table serializes");
        toml::from_str(&text).map_err(|e: toml::de::Error| {
            let msg = plain_range(&one_line(e.message()));
            let hint =
                if msg.contains("unknown field") { format!(" (valid keys: {})", key_list()) } else { String::new() };
            // Name the offending key: the error's span points into `text` (at the whole table for
            // a missing field).
            let table_only = msg.starts_with("missing field");
            let mut at = e.span().and_then(|s| key_at(&text, s.start, table_only));
            // The span of a missing top-level key can be that of the file's first table: name
            // the key where it belongs (a file with only `[processor]` lacks `name`, not
            // `processor.name`).
            if let Some(field) = msg.strip_prefix("missing field `").and_then(|m| m.split('`').next()) {
                let in_table = at.as_ref().is_some_and(|t| key_doc(&format!("{t}.{field}")).is_some());
                if !in_table && key_doc(field).is_some() {
                    at = Some(field.to_string());
                }
            }
            let at = at.map(|k| format!(" machine key `{k}`:"));
            ConfigError { message: format!("{origin}:{} {msg}{hint}", at.unwrap_or_default()) }
        })
    }

    /// The spec as TOML (what [`MachineConfig::fingerprint`](super::MachineConfig::fingerprint) hashes); loading it back gives the
    /// same machine.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a spec serializes")
    }

    /// The spec as TOML with every key's unit and meaning as a comment.
    pub fn to_documented_toml(&self) -> String {
        let text = toml::to_string(self).expect("a spec serializes");
        let mut out = String::new();
        let mut section = String::new();
        for line in text.lines() {
            let trimmed = line.trim();
            if trimmed.starts_with('[') {
                section = trimmed.trim_matches(|c| c == '[' || c == ']').to_string();
                out.push('\n');
                out.push_str(line);
                out.push('\n');
                continue;
            }
            if let Some((k, _)) = trimmed.split_once(" = ") {
                let full = if section.is_empty() { k.to_string() } else { format!("{section}.{k}") };
                if let Some(doc) = key_doc(&full) {
                    out.push_str(&format!("{line:<44} # [{}] {}\n", doc.unit, doc.doc));
                    continue;
                }
            }
            out.push_str(line);
            out.push('\n');
        }
        out
    }
}

/// serde's words for a negative number given to a whole-number key (`invalid value: integer
/// `-1`, expected u64`) in the words `--set` uses (`must be a non-negative whole number, got
/// `-1``); any other message as it is.
fn plain_range(msg: &str) -> String {
    let unsigned = ["u8", "u16", "u32", "u64", "usize"].iter().any(|t| msg.ends_with(&format!(", expected {t}")));
    match msg.strip_prefix("invalid value: integer `").and_then(|m| m.split_once('`')) {
        Some((v, _)) if unsigned && v.starts_with('-') => format!("must be a non-negative whole number, got `{v}`"),
        _ => msg.to_string(),
    }
}

/// The dotted key (or table) at byte `offset` of serialized TOML `text`; only a table header
/// if `table_only`.
fn key_at(text: &str, offset: usize, table_only: bool) -> Option<String> {
    let mut section = String::new();
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        let is_header = trimmed.starts_with('[');
        if is_header {
            section = trimmed.trim_matches(|c| c == '[' || c == ']').trim().to_string();
        }
        if offset < start + line.len() {
            if is_header {
                return Some(section);
            }
            if table_only {
                return None;
            }
            let key = trimmed.split_once('=')?.0.trim();
            return Some(if section.is_empty() { key.to_string() } else { format!("{section}.{key}") });
        }
        start += line.len();
    }
    None
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Apply one `key=value` override to the raw table, checking that the key exists (or is a
/// `costs.*` entry) and that the value has the key's type (its [`Kind`] in [`keys`]).
fn apply_override(table: &mut toml::Table, ov: &str) -> Result<(), ConfigError> {
    let (key, raw) = ov.split_once('=').ok_or_else(|| ConfigError {
        message: format!("--set `{ov}`: expected key=value, e.g. network.link_bytes_per_ns=0.09"),
    })?;
    let key = key.trim();
    let raw = raw.trim();
    let Some(doc) = key_doc(key).filter(|_| key != "costs.*") else {
        return Err(ConfigError {
            message: format!("--set `{key}`: unknown machine key (valid keys: {})", key_list()),
        });
    };
    // Parse the value as a TOML value; a bare word is taken as a string.
    let value: toml::Value = match format!("v = {raw}").parse::<toml::Table>() {
        Ok(mut t) => t.remove("v").expect("parsed key"),
        Err(_) => toml::Value::String(raw.to_string()),
    };
    let path: Vec<&str> = key.split('.').collect();
    let (last, parents) = path.split_last().expect("non-empty key");
    let mut cur = &mut *table;
    for p in parents {
        cur = cur
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()
            .ok_or_else(|| ConfigError::key(key, format!("`{p}` is not a table in this machine")))?;
    }
    let value = match doc.kind {
        Kind::Whole | Kind::Number => number(key, raw, doc, value)?,
        kind => coerce(key, kind, value)?,
    };
    cur.insert(last.to_string(), value);
    Ok(())
}

/// Check an override of a numeric key: every numeric key takes a finite, non-negative number
/// (a whole one where the key is whole), and `-1`, `NaN`, `nan` and `inf` are all refused with
/// the same words ("positive" for a key whose [`Bound`] is positive), naming the key and the
/// value as given. (Zero for a positive key, and other ranges, are checked after, by
/// [`MachineConfig::from_spec`], in the same words.)
fn number(key: &str, raw: &str, doc: &KeyDoc, new: toml::Value) -> Result<toml::Value, ConfigError> {
    use toml::Value as V;
    let whole = doc.kind == Kind::Whole;
    let sign = if doc.bound == Bound::Positive { "positive" } else { "non-negative" };
    match (whole, new) {
        (true, V::Integer(i)) if i >= 0 => Ok(V::Integer(i)),
        (false, V::Integer(i)) if i >= 0 => Ok(V::Float(i as f64)),
        (false, V::Float(f)) if f.is_finite() && f >= 0.0 => Ok(V::Float(f)),
        _ => Err(ConfigError::key(
            key,
            format!("must be a {sign} {}, got `{raw}`", if whole { "whole number" } else { "number" }),
        )),
    }
}

/// Check an override of a key that is not a number against its kind.
fn coerce(key: &str, kind: Kind, new: toml::Value) -> Result<toml::Value, ConfigError> {
    use toml::Value as V;
    let ok =
        matches!((kind, &new), (Kind::Bool, V::Boolean(_)) | (Kind::Text, V::String(_)) | (Kind::List, V::Array(_)));
    if ok {
        Ok(new)
    } else {
        Err(ConfigError::key(key, format!("expected {}, got `{new}`", kind.type_str())))
    }
}
