//! An allocation that fails ends the `commlab` process with one `commlab: ` line saying what was
//! being built and how many bytes were asked for, and exit status 1, instead of Rust's default
//! ("memory allocation of N bytes failed", a backtrace and SIGABRT, exit 134).
//!
//! Stable Rust has no hook for this (`std::alloc::set_alloc_error_hook` is unstable, and a
//! `#[global_allocator]` must not unwind), so the binary's global allocator is
//! [`ReportingAllocator`]: the system allocator, and when it returns null, a message written
//! with `write(2)` from a stack buffer (nothing may allocate then) and `_exit(1)`. Results
//! already written stay: every results file is flushed record by record, and standard output
//! is flushed per line. The memory estimate (`memory_check`) refuses a run that would not fit
//! before it is built, so this is the last line of defence, not the usual path.
//!
//! The Python extension does not install it: a library must not end its host process. There
//! the checks before a run (memory and address space) raise `InputError`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

/// The system allocator, reporting a failure as one line and exit status 1.
pub struct ReportingAllocator;

// SAFETY: every method forwards to `System` with the caller's arguments; on failure it does
// not return.
unsafe impl GlobalAlloc for ReportingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if p.is_null() && !in_fallible() {
            fail(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if p.is_null() && !in_fallible() {
            fail(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if p.is_null() && !in_fallible() {
            fail(new_size);
        }
        p
    }
}

thread_local! {
    /// This thread is inside [`fallible`]: a failed allocation returns null to its caller.
    static FALLIBLE: Cell<bool> = const { Cell::new(false) };
}

fn in_fallible() -> bool {
    // A const-initialised `Cell` has no destructor to register: reading it never allocates.
    FALLIBLE.try_with(Cell::get).unwrap_or(false)
}

/// Run `f`, whose allocations may fail without ending the process: for reads of a user's
/// file into memory (`std::fs::read_to_string` reserves the file's size fallibly and says
/// "out of memory"), so that a file too big is bad input naming the file, as without this
/// allocator.
pub fn fallible<T>(f: impl FnOnce() -> T) -> T {
    let before = FALLIBLE.with(|c| c.replace(true));
    let out = f();
    FALLIBLE.with(|c| c.set(before));
    out
}

/// What the process is running now, for the message: bytes and length, written and read
/// without allocating or locking (a message written while another thread sets a new context
/// may mix the two; it is still one line).
const CONTEXT_BYTES: usize = 240;
static CONTEXT: [AtomicU8; CONTEXT_BYTES] = [const { AtomicU8::new(0) }; CONTEXT_BYTES];
static CONTEXT_LEN: AtomicUsize = AtomicUsize::new(0);

/// Say what is being run from now on, e.g. "em3d [sm] on 31000 processors (estimated 3.4 GiB
/// of memory)" (cut at 240 bytes).
pub fn running(what: &str) {
    let mut n = what.len().min(CONTEXT_BYTES);
    while !what.is_char_boundary(n) {
        n -= 1;
    }
    CONTEXT_LEN.store(0, Ordering::Release);
    for (slot, b) in CONTEXT.iter().zip(&what.as_bytes()[..n]) {
        slot.store(*b, Ordering::Relaxed);
    }
    CONTEXT_LEN.store(n, Ordering::Release);
}

/// A fixed buffer that formats without allocating; what does not fit is cut off.
struct StackText {
    bytes: [u8; 1024],
    len: usize,
}

impl std::fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let room = self.bytes.len() - self.len;
        let n = s.len().min(room);
        self.bytes[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// The one line for a failed allocation of `size` bytes.
fn message(size: usize, context: Option<&str>, out: &mut StackText) {
    use std::fmt::Write;
    let _ = write!(out, "commlab: out of memory: an allocation of {size} bytes failed");
    if let Some(c) = context {
        let _ = write!(out, " while running {c}");
    }
    let _ = writeln!(
        out,
        "; give smaller inputs (sizes, processors, files), run fewer at once (--jobs 1), or raise the memory or address-space limit (ulimit -v)"
    );
    if out.len == out.bytes.len() {
        out.bytes[out.len - 1] = b'\n';
    }
}

fn fail(size: usize) -> ! {
    let mut out = StackText { bytes: [0; 1024], len: 0 };
    let mut ctx = [0u8; CONTEXT_BYTES];
    let n = CONTEXT_LEN.load(Ordering::Acquire).min(CONTEXT_BYTES);
    for (b, slot) in ctx.iter_mut().zip(&CONTEXT[..n]) {
        *b = slot.load(Ordering::Relaxed);
    }
    let context = match std::str::from_utf8(&ctx[..n]) {
        Ok(c) if n > 0 => Some(c),
        Ok(_) => None,
        Err(e) => std::str::from_utf8(&ctx[..e.valid_up_to()]).ok(),
    };
    message(size, context, &mut out);
    // SAFETY: writes bytes of a live buffer to standard error, then ends the process without
    // running anything that could allocate.
    unsafe {
        libc::write(2, out.bytes.as_ptr().cast(), out.len);
        libc::_exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_is_one_line_naming_the_size_and_the_run() {
        let mut out = StackText { bytes: [0; 1024], len: 0 };
        message(744000, Some("em3d [sm] on 31000 processors (estimated 3.4 GiB)"), &mut out);
        let text = std::str::from_utf8(&out.bytes[..out.len]).unwrap();
        assert!(text.starts_with("commlab: out of memory: an allocation of 744000 bytes failed while running em3d"));
        assert_eq!(text.lines().count(), 1);
        assert!(text.ends_with('\n'));
        // Too long a context is cut off, not an overflow.
        let mut out = StackText { bytes: [0; 1024], len: 0 };
        message(1, Some(&"x".repeat(5000)), &mut out);
        assert_eq!((out.len, out.bytes[1023]), (1024, b'\n'));
        running("barrier on 64 processors");
        assert_eq!(CONTEXT_LEN.load(Ordering::Relaxed), 24);
    }
}
