//! The presets shipped with commlab (`machines/*.toml`), compiled into the binary.

/// Presets shipped with commlab (the files in `machines/`), compiled into the binary.
pub const PRESETS: &[(&str, &str)] = &[
    ("alewife", include_str!("../../../../machines/alewife.toml")),
    ("alewife-sim", include_str!("../../../../machines/alewife-sim.toml")),
    ("blizzard-s", include_str!("../../../../machines/blizzard-s.toml")),
    ("blizzard-e", include_str!("../../../../machines/blizzard-e.toml")),
    ("blizzard-t", include_str!("../../../../machines/blizzard-t.toml")),
    ("cm5", include_str!("../../../../machines/cm5.toml")),
    ("ksr2", include_str!("../../../../machines/ksr2.toml")),
    ("jmachine", include_str!("../../../../machines/jmachine.toml")),
    ("mmachine", include_str!("../../../../machines/mmachine.toml")),
    ("delta", include_str!("../../../../machines/delta.toml")),
    ("paragon", include_str!("../../../../machines/paragon.toml")),
    ("dash", include_str!("../../../../machines/dash.toml")),
    ("flash", include_str!("../../../../machines/flash.toml")),
    ("t0", include_str!("../../../../machines/t0.toml")),
    ("t1", include_str!("../../../../machines/t1.toml")),
    ("t3d", include_str!("../../../../machines/t3d.toml")),
    ("t3e", include_str!("../../../../machines/t3e.toml")),
    ("origin", include_str!("../../../../machines/origin.toml")),
    ("dec8400", include_str!("../../../../machines/dec8400.toml")),
];

/// Names of the shipped presets.
pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|(n, _)| *n).collect()
}

/// The TOML text of a shipped preset.
pub fn preset_text(name: &str) -> Option<&'static str> {
    PRESETS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}
