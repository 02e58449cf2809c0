//! The files a command will write, checked before anything runs: each can be written (its
//! missing directory is created), and no file is named for two outputs, since the second
//! would silently replace the first (`run --json --out r.jsonl --stats per-node=r.jsonl` used
//! to leave only the per-node rows).

use crate::failure::{input, Failure};
use std::path::{Path, PathBuf};

/// One output: the flag that names it (`--out`, `--stats per-node`) and its path.
pub(crate) struct Output<'a> {
    pub flag: String,
    pub path: &'a Path,
}

/// Check every output before a run: each is a writable file (a missing directory is created,
/// an existing file is left as it is) and no two name the same file. Errors name the flag and
/// the file.
pub(crate) fn check(outputs: &[Output]) -> Result<(), Failure> {
    let mut seen: Vec<(FileId, &Output)> = Vec::new();
    for o in outputs {
        check_writable(o)?;
        let id = FileId::of(o.path);
        if let Some((_, first)) = seen.iter().find(|(other, _)| *other == id) {
            return Err(input(format!(
                "{} `{}` and {} `{}` are the same file: one output would replace the other; give each its own file",
                first.flag,
                first.path.display(),
                o.flag,
                o.path.display()
            )));
        }
        seen.push((id, o));
    }
    Ok(())
}

/// What identifies a file: its device and inode when it exists (so two names of one file,
/// through `..`, a symbolic or a hard link, are the same), else its absolute path with `.`
/// and `..` resolved in its (canonical) directory.
#[derive(PartialEq, Debug)]
enum FileId {
    Inode(u64, u64),
    Path(PathBuf),
}

impl FileId {
    fn of(path: &Path) -> FileId {
        #[cfg(unix)]
        if let Ok(m) = std::fs::metadata(path) {
            use std::os::unix::fs::MetadataExt;
            return FileId::Inode(m.dev(), m.ino());
        }
        let name = path.file_name().map(PathBuf::from).unwrap_or_default();
        let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
            Some(d) => d.to_path_buf(),
            None => PathBuf::from("."),
        };
        let dir = std::fs::canonicalize(&dir).or_else(|_| std::path::absolute(&dir)).unwrap_or(dir);
        FileId::Path(dir.join(name))
    }
}

/// `o` can be written: not a directory, its directory exists or can be made, and the file can
/// be opened for writing (an existing file is not truncated here; a new one is removed again).
fn check_writable(o: &Output) -> Result<(), Failure> {
    let p = o.path;
    let fail = |why: String| {
        input(format!(
            "cannot write {} `{}`: {why} (give a writable file; a missing directory is created)",
            o.flag,
            p.display()
        ))
    };
    if p.as_os_str().is_empty() {
        return Err(fail("no file name".to_string()));
    }
    if p.is_dir() {
        return Err(fail("it is a directory".to_string()));
    }
    if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
        if dir.exists() && !dir.is_dir() {
            return Err(fail(format!("`{}` is not a directory", dir.display())));
        }
        std::fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create its directory: {e}")))?;
    }
    let existed = p.exists();
    let opened = std::fs::OpenOptions::new().write(true).create(true).truncate(false).open(p);
    match opened {
        Ok(_) if !existed => {
            let _ = std::fs::remove_file(p);
            Ok(())
        }
        Ok(f) => {
            // Files of /proc and /sys open as regular files but refuse or fail the write itself.
            let regular = f.metadata().map(|m| m.is_file()).unwrap_or(false) && !on_kernel_filesystem(&f);
            let writable_special = ["/dev/null", "/dev/stdout", "/dev/stderr"].iter().any(|s| p == Path::new(s));
            if regular || writable_special || is_fifo_or_tty(&f) {
                Ok(())
            } else {
                Err(fail("it is not a regular file".to_string()))
            }
        }
        Err(e) => Err(fail(e.to_string())),
    }
}

/// The file is in procfs or sysfs (Linux), whose files look regular but are not storage.
fn on_kernel_filesystem(f: &std::fs::File) -> bool {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        const PROC_SUPER_MAGIC: i64 = 0x9fa0;
        const SYSFS_MAGIC: i64 = 0x6265_6572;
        let mut st: libc::statfs = unsafe { std::mem::zeroed() };
        // SAFETY: `st` is a valid, writable statfs and the descriptor is open for the call.
        if unsafe { libc::fstatfs(f.as_raw_fd(), &mut st) } == 0 {
            #[allow(clippy::unnecessary_cast)]
            let t = st.f_type as i64;
            return t == PROC_SUPER_MAGIC || t == SYSFS_MAGIC;
        }
    }
    let _ = f;
    false
}

/// A pipe, socket or terminal (`--out /dev/fd/1`, a named pipe): writable as a stream.
fn is_fifo_or_tty(f: &std::fs::File) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if let Ok(m) = f.metadata() {
            let t = m.file_type();
            return t.is_fifo() || t.is_socket() || t.is_char_device();
        }
    }
    let _ = f;
    false
}

/// Every file a run writes (`--out`, each `--stats`, each `--trace` file), checked before it runs: writable, and
/// no file named twice.
pub(crate) fn check_run_outputs(
    out: Option<&std::path::Path>,
    detail: &[crate::detail_stats::Request],
    traces: &[PathBuf],
) -> Result<(), Failure> {
    let mut outputs: Vec<Output> = Vec::new();
    if let Some(p) = out {
        outputs.push(Output { flag: "--out".to_string(), path: p });
    }
    for d in detail {
        outputs.push(Output { flag: format!("--stats {}", d.detail.name()), path: &d.path });
    }
    for t in traces {
        outputs.push(Output { flag: "--trace".to_string(), path: t });
    }
    check(&outputs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("commlab-outputs-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn two_names_of_one_file_are_refused() {
        let d = temp("same");
        let a = d.join("r.jsonl");
        let b = d.join("sub/../r.jsonl");
        std::fs::create_dir_all(d.join("sub")).unwrap();
        for (x, y) in [(&a, &a), (&a, &b)] {
            let outs = [Output { flag: "--out".into(), path: x }, Output { flag: "--stats per-node".into(), path: y }];
            let e = check(&outs).expect_err("refused");
            assert_eq!(e.status, 2);
            assert!(e.message.contains("same file") && e.message.contains("--stats per-node"), "{}", e.message);
            assert!(!a.exists(), "nothing created");
        }
        // Existing files: by inode, through a symbolic link too.
        std::fs::write(&a, "keep").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(&a, d.join("link.jsonl")).unwrap();
        #[cfg(unix)]
        {
            let link = d.join("link.jsonl");
            let outs = [Output { flag: "--out".into(), path: &a }, Output { flag: "--stats".into(), path: &link }];
            assert!(check(&outs).is_err());
        }
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "keep", "an existing file is not truncated");
        let other = d.join("other.jsonl");
        let outs = [Output { flag: "--out".into(), path: &a }, Output { flag: "--stats".into(), path: &other }];
        assert!(check(&outs).is_ok());
        assert!(!other.exists(), "the probe removes a file it created");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn special_and_unwritable_files_are_named() {
        let outs = [Output { flag: "--out".into(), path: Path::new("/proc/version") }];
        let e = check(&outs).expect_err("refused");
        assert!(e.message.contains("/proc/version") && e.message.contains("--out"), "{}", e.message);
        let outs = [Output { flag: "--out".into(), path: Path::new("/dev/null") }];
        assert!(check(&outs).is_ok());
    }
}
