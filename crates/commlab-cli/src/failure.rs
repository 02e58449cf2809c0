//! The error every command returns: one message, and the exit status it maps to (2 for bad
//! input, 1 for a failed run or check). `main` prints the message as the one `commlab: ` line.

/// A failure and the exit status it maps to.
pub struct Failure {
    pub status: u8,
    pub message: String,
}

/// Bad input: exit status 2.
pub fn input(message: impl Into<String>) -> Failure {
    Failure { status: 2, message: message.into() }
}

/// A run, a check or a write that failed: exit status 1.
pub fn failed(message: impl Into<String>) -> Failure {
    Failure { status: 1, message: message.into() }
}
