//! Which libcupti this library records through, loaded before cudarc first looks one up by
//! name. Two libcupti instances in one process refuse each other's subscribers (PyTorch's
//! profiler then records nothing), so there must be one:
//! - a program that loaded its own libcupti before CUDA started (PyTorch loads the one its
//!   wheel ships) is recorded through that one, and the names in `trace`'s alias folder
//!   (`rawfmt::CUPTI_ALIAS_ENV`, first on the library path) are pointed at it, so that
//!   cudarc's lookup of `libcupti.so` gets it too;
//! - otherwise the file the alias folder names (where `trace` made one; an earlier process of
//!   the run may have pointed it at its program's libcupti), else the one `OPBENCH_CUPTI_LIB`
//!   names (`trace --cupti`, or a toolkit's), is loaded with RTLD_GLOBAL, found by its soname
//!   afterwards.

use crate::{out, rawfmt};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

extern "C" {
    fn dlopen(file: *const c_char, mode: c_int) -> *mut c_void;
    fn dlerror() -> *const c_char;
    fn dlinfo(handle: *mut c_void, request: c_int, info: *mut c_void) -> c_int;
}

const RTLD_NOW: c_int = 2;
const RTLD_NOLOAD: c_int = 4;
const RTLD_GLOBAL: c_int = 0x100;
const RTLD_DI_LINKMAP: c_int = 2;

/// The start of glibc's `struct link_map` (the public part of <link.h>).
#[repr(C)]
struct LinkMap {
    l_addr: usize,
    l_name: *const c_char,
}

/// What to tell `trace` about the choice, written once the raw file is open.
static NOTE: Mutex<Option<String>> = Mutex::new(None);

/// Loads the libcupti to record through (once per process); see the module's comment.
pub(crate) fn preload() -> Result<(), String> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        let alias = std::env::var_os(rawfmt::CUPTI_ALIAS_ENV).map(PathBuf::from);
        let chosen = alias
            .as_deref()
            .and_then(|d| std::fs::read_link(d.join(rawfmt::CUPTI_SONAME)).ok())
            .or_else(|| std::env::var_os(rawfmt::CUPTI_LIB_ENV).map(PathBuf::from));
        if let Some(own) = loaded_by_soname(rawfmt::CUPTI_SONAME) {
            if !chosen.as_deref().is_some_and(|c| same_file(c, &own)) {
                let how = match alias.as_deref().map(|d| point_alias(d, &own)) {
                    Some(Err(e)) => format!(" ({e}: a second instance may still load)"),
                    _ => String::new(),
                };
                *NOTE.lock().unwrap_or_else(|p| p.into_inner()) = Some(format!(
                    "recording through the program's own libcupti {}{how}, loaded before CUDA \
                     started, instead of {}: one instance, so a profiler inside the program \
                     (torch.profiler) records too",
                    own.display(),
                    chosen
                        .as_deref()
                        .map_or("the library path's".into(), |c| c.display().to_string()),
                ));
            }
            return Ok(());
        }
        let Some(path) = chosen else {
            return Ok(());
        };
        let shown = path.display().to_string();
        let c = CString::new(std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()))
            .map_err(|_| format!("{}={shown:?} holds a NUL byte", rawfmt::CUPTI_LIB_ENV))?;
        // SAFETY: dlopen with a valid C string; dlerror's string is read at once.
        unsafe {
            if dlopen(c.as_ptr(), RTLD_NOW | RTLD_GLOBAL).is_null() {
                let e = dlerror();
                let why = if e.is_null() {
                    "unknown error".to_string()
                } else {
                    CStr::from_ptr(e).to_string_lossy().into_owned()
                };
                return Err(format!(
                    "cannot load libcupti {shown}: {why}; nothing recorded"
                ));
            }
        }
        Ok(())
    })
    .clone()
}

/// Writes the note of `preload`'s choice, if any, into the open raw file (once).
pub(crate) fn write_note() {
    if let Some(n) = NOTE.lock().unwrap_or_else(|p| p.into_inner()).take() {
        out::warn(&n);
    }
}

/// The file of an already loaded library whose soname (or name) is `soname`.
fn loaded_by_soname(soname: &str) -> Option<PathBuf> {
    let c = CString::new(soname).ok()?;
    // SAFETY: dlopen with RTLD_NOLOAD loads nothing; dlinfo fills a link_map pointer that
    // lives as long as the library stays loaded, which the handle just taken guarantees.
    unsafe {
        let h = dlopen(c.as_ptr(), RTLD_NOW | RTLD_NOLOAD);
        if h.is_null() {
            return None;
        }
        let mut map: *const LinkMap = std::ptr::null();
        if dlinfo(h, RTLD_DI_LINKMAP, &mut map as *mut _ as *mut c_void) != 0 || map.is_null() {
            return None;
        }
        let name = (*map).l_name;
        if name.is_null() {
            return None;
        }
        let p = PathBuf::from(CStr::from_ptr(name).to_string_lossy().into_owned());
        p.is_absolute().then_some(p)
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

/// Points `dir`'s lookup names at `lib`, each replaced in one rename (other processes of the
/// same run may be looking them up).
fn point_alias(dir: &Path, lib: &Path) -> Result<(), String> {
    for name in rawfmt::CUPTI_NAMES {
        let link = dir.join(name);
        let tmp = dir.join(format!(".{name}.{}", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        std::os::unix::fs::symlink(lib, &tmp)
            .and_then(|_| std::fs::rename(&tmp, &link))
            .map_err(|e| format!("cannot point {} at it: {e}", link.display()))?;
    }
    Ok(())
}
