//! Machine configuration: TOML presets, `--set` overrides, `--procs` resizing and validation
//! into a checked [`MachineConfig`] whose fields are in the simulator's units (picoseconds).
//!
//! Flow: preset text ─parse─▶ `toml::Table` ─`--set`─▶ table ─deserialize─▶ [`MachineSpec`]
//! ─`--procs`─▶ spec ─[`MachineConfig::from_spec`]─▶ checked config. Every error names the key.
//!
//! The keys themselves are declared once, in `spec.rs` (its module documentation says what comes
//! from that table). [`MachineConfig::from_spec`] is the one place machine keys are converted:
//! network times to picoseconds, [`MessagingCosts`] in cycles (`*_cycles`, the send and receive
//! overheads scaled by `messaging.overhead_scale`), [`MemoryConfig`] (geometry, and every latency
//! in `*_ps`), [`Coherence`]`::{Hardware, Software(DsmCosts)}` with [`DsmHandlers`] an enum, and
//! [`MachineConfig::cost_cycles`] for the applications' `[costs]` entries. It checks the table's
//! bounds (`check_bounds`) and that no implied time (a latency, a cost in cycles as scaled, the
//! largest packet's serialization or DMA, a DSM block copy) outlasts `limits.max_sim_time_ms`
//! (`check_times_fit`, naming the key and the largest accepted value), so no conversion to
//! picoseconds saturates, overflows or silently becomes zero. [`PRESETS`] embeds `machines/*.toml`;
//! [`MachineConfig::fingerprint`] (FNV-1a of the resolved machine's TOML) is what results records
//! carry. `poll.rs` holds the polling techniques' cost tables; [`Instrumentation`] the Blizzard COW
//! study's access-check levels.

mod build;
mod config;
mod error;
mod overrides;
mod poll;
mod presets;
mod spec;

pub use crate::queue::TieOrder;
pub use build::resize_spec;
pub use config::*;
pub use error::ConfigError;
pub use overrides::parse_spec;
pub use poll::{PollCosts, PollMechanism, PollTable};
pub use presets::{preset_names, preset_text, PRESETS};
pub use spec::{
    key_doc, key_list, keys, Bound, Conv, DramSpec, DsmSpec, HierarchySpec, KeyDoc, Kind, LevelSpec, MachineSpec,
    MemorySpec, SimulationSpec, StreamSpec,
};

/// The key table is the one declaration of every key: a machine with every key given (a value
/// of each key's kind) deserializes, its documented TOML names every key with its unit and
/// meaning and nothing undeclared, and `--set` accepts every key.
#[cfg(test)]
mod key_table_tests {
    use super::*;

    /// A value of `kind` that `--set` and the spec's types accept.
    fn sample(kind: Kind) -> &'static str {
        match kind {
            Kind::Whole => "3",
            Kind::Number => "1.5",
            Kind::Bool => "true",
            Kind::Text => "\"mesh\"",
            Kind::List => "[2, 2]",
            Kind::Section | Kind::Map => unreachable!("flattened"),
        }
    }

    /// TOML text giving every key of the table a sample value (`costs.*` as `costs.sample`).
    fn full_toml() -> String {
        let mut sections: Vec<(String, Vec<String>)> = vec![(String::new(), Vec::new())];
        for k in keys() {
            let (section, name) = match k.key.rsplit_once('.') {
                Some((s, "*")) => (s.to_string(), "sample"),
                Some((s, n)) => (s.to_string(), n),
                None => (String::new(), k.key),
            };
            let line = format!("{name} = {}", sample(k.kind));
            match sections.iter_mut().find(|(s, _)| *s == section) {
                Some((_, lines)) => lines.push(line),
                None => sections.push((section, vec![line])),
            }
        }
        let mut text = String::new();
        for (section, lines) in sections {
            if !section.is_empty() {
                text.push_str(&format!("[{section}]\n"));
            }
            for l in lines {
                text.push_str(&l);
                text.push('\n');
            }
        }
        text
    }

    #[test]
    fn machine_key_table_declares_every_key_of_the_spec_once() {
        let spec = parse_spec(&full_toml(), "full", &[]).expect("every key of the table deserializes");
        let doc = spec.to_documented_toml();
        let mut section = String::new();
        let mut seen = Vec::new();
        for line in doc.lines().map(str::trim).filter(|l| !l.is_empty()) {
            if line.starts_with('[') {
                section = line.trim_matches(|c| c == '[' || c == ']').to_string();
                continue;
            }
            let (k, _) = line.split_once(" = ").expect("key = value");
            let full = if section.is_empty() { k.to_string() } else { format!("{section}.{k}") };
            let d = key_doc(&full).unwrap_or_else(|| panic!("`{full}` is in the spec but not in the key table"));
            assert!(line.ends_with(&format!("# [{}] {}", d.unit, d.doc)), "{full}: {line}");
            seen.push(if full.starts_with("costs.") { "costs.*".to_string() } else { full });
        }
        // Every key once (a section's plain keys come before its sub-tables in TOML).
        let mut table: Vec<&str> = keys().iter().map(|k| k.key).collect();
        table.sort();
        seen.sort();
        assert_eq!(seen, table, "the documented TOML lists every key of the table, once");
        table.dedup();
        assert_eq!(table.len(), keys().len(), "a key is declared twice");
    }

    #[test]
    fn set_accepts_every_key_of_the_table_with_its_type() {
        let full = full_toml();
        for k in keys() {
            let key = k.key.replace(".*", ".other");
            let ov = [format!("{key}={}", sample(k.kind))];
            let spec = parse_spec(&full, "full", &ov).unwrap_or_else(|e| panic!("--set {}: {e}", ov[0]));
            assert!(spec.to_documented_toml().contains(&format!("# [{}] {}", k.unit, k.doc)), "{key}");
            // A value of another kind is refused, naming the key.
            let wrong = if k.kind == Kind::Bool { "[1]" } else { "true" };
            let e = parse_spec(&full, "full", &[format!("{key}={wrong}")]).expect_err(&key);
            assert!(e.message.contains(&format!("`{key}`")), "{key}: {e}");
        }
        assert!(parse_spec(&full, "full", &["no.such_key=1".into()])
            .unwrap_err()
            .message
            .contains("unknown machine key"));
    }

    #[test]
    fn key_bounds_come_from_the_table() {
        // A bound declared on a key is checked by from_spec, in --set's words.
        for (key, value, want) in [
            ("messaging.max_arg_words", "1", "must be at least 2, got 1"),
            ("hierarchy.l1.associativity", "0", "must be at least 1, got 0"),
            ("network.link_bytes_per_ns", "0", "must be a positive number, got 0.0"),
            ("node.procs_per_node", "3", "must be 1 or 2"),
        ] {
            let machine = if key.starts_with("hierarchy") { "t3e" } else { "alewife" };
            let e = MachineConfig::preset(machine, &[format!("{key}={value}")], None).unwrap_err();
            assert!(e.message.contains(&format!("`{key}`: {want}")), "{key}: {e}");
        }
        let positive: Vec<&str> = keys().iter().filter(|k| k.bound == Bound::Positive).map(|k| k.key).collect();
        assert!(positive.contains(&"hierarchy.l2.bytes_per_cycle") && positive.contains(&"processor.clock_mhz"));
        // Every overhead the scale multiplies is in messaging and in cycles.
        for k in keys().iter().filter(|k| k.conv == Conv::Overhead) {
            assert!(k.key.starts_with("messaging.") && k.unit == "cycles", "{}", k.key);
        }
    }
}
