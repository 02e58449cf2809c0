//! An invalid machine description: which key, and what would be valid.

use std::fmt;

/// An invalid machine description: which input, and what would be valid.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub message: String,
}

impl ConfigError {
    pub(super) fn key(key: &str, msg: impl fmt::Display) -> Self {
        ConfigError { message: format!("machine key `{key}`: {msg}") }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}
