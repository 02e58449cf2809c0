//! [`NativeError`]: why a native run did not complete.

use std::fmt;

/// Why a native run did not complete.
#[derive(Debug, Clone, PartialEq)]
pub enum NativeError {
    /// Every unfinished processor waits and nothing can wake it; the report lists what each
    /// waits for.
    Deadlock(String),
    /// The program asked for something the backend cannot do (bad address or processor, too
    /// many message arguments, ...).
    Program(String),
    /// A processor's thread panicked.
    Panic(String),
    /// The backend could not start (no threads, bad processor count).
    Setup(String),
}

impl fmt::Display for NativeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NativeError::Deadlock(r) => write!(f, "deadlock: {r}"),
            NativeError::Program(m) => write!(f, "program error: {m}"),
            NativeError::Panic(m) => write!(f, "panic: {m}"),
            NativeError::Setup(m) => write!(f, "native backend: {m}"),
        }
    }
}

impl std::error::Error for NativeError {}
