//! What ran, as a short stable hash: the `code` setting of our implementations' rows.
//!
//! Every GPU module a process loads (our PTX through `Gpu::function`, a user's cubin or PTX
//! through kernel_bench) is recorded here by name with a hash of its bytes. A row then names
//! the modules its kernels came from ([`of_modules`]), and the hash of those modules is its
//! `code`. With the launch plan, which the row records as settings too, that is what ran on the
//! GPU. So two runs at different commits whose rows carry one `code` ran the same kernels, and
//! the gate may take the one as a replicate of the other (`compare::processes`,
//! `compare::calibrate`); a row without it leaves the commit to stand for the code. The hash is
//! FNV-1a over names and bytes (PTX without its source locations, [`hash_module`]): stable across
//! builds, checkouts and machines, unlike std's hasher.

use crate::artifact::ResultRow;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// The row setting that carries the hash.
pub const SETTING: &str = "code";

/// Modules loaded in this process: name -> hash of its bytes.
static LOADED: Mutex<BTreeMap<String, u64>> = Mutex::new(BTreeMap::new());

/// FNV-1a, 64 bits, over `bytes`, continuing from `h`.
fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// The hash of one module's bytes.
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    fnv1a(FNV_OFFSET, bytes)
}

/// The `code` value of named module hashes: each name and hash in name order, so neither the
/// load order nor a module's name moving to another one's bytes goes unseen.
pub fn combine<'a>(modules: impl IntoIterator<Item = (&'a str, u64)>) -> String {
    let mut sorted: Vec<(&str, u64)> = modules.into_iter().collect();
    sorted.sort();
    let mut h = FNV_OFFSET;
    for (name, m) in sorted {
        h = fnv1a(h, name.as_bytes());
        h = fnv1a(h, &[0]);
        h = fnv1a(h, &m.to_le_bytes());
    }
    format!("{h:016x}")
}

/// The hash of a module's code. For PTX: every line but its source locations (`.file` and
/// `.loc`, the line info `-lineinfo` adds), which name the build folder and move with any edit
/// above them, so one source built in two checkouts, or edited only in its comments, hashes
/// alike. Other bytes (a cubin) are hashed whole.
pub fn hash_module(bytes: &[u8]) -> u64 {
    let text = match std::str::from_utf8(bytes) {
        Ok(t) if t.contains(".target") => t,
        _ => return hash_bytes(bytes),
    };
    let mut h = FNV_OFFSET;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with(".file") || t.starts_with(".loc") {
            continue;
        }
        h = fnv1a(h, line.as_bytes());
        h = fnv1a(h, b"\n");
    }
    h
}

/// Records a module this process loaded. Like the driver's module cache (cudarc loads a name
/// once), the first bytes under a name are the ones kept.
pub fn record_module(name: &str, bytes: &[u8]) {
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    if !loaded.contains_key(name) {
        loaded.insert(name.to_string(), hash_module(bytes));
    }
}

/// Records a module under a name of its own (a user's cubin, which may be loaded again after
/// a rebuild): these bytes replace any earlier ones.
pub fn replace_module(name: &str, bytes: &[u8]) {
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    loaded.insert(name.to_string(), hash_module(bytes));
}

/// The `code` of the loaded modules whose names start with one of `prefixes`; None when none
/// of them is loaded (the row then records no `code`, and its commit stands for it).
pub fn of_modules(prefixes: &[&str]) -> Option<String> {
    let loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    let picked: Vec<(&str, u64)> = loaded
        .iter()
        .filter(|(n, _)| prefixes.iter().any(|p| n.starts_with(p)))
        .map(|(n, h)| (n.as_str(), *h))
        .collect();
    (!picked.is_empty()).then(|| combine(picked))
}

/// Sets the row's `code` to the loaded modules named by `prefixes`, when one of them is loaded.
pub fn tag(row: &mut ResultRow, prefixes: &[&str]) {
    if let Some(c) = of_modules(prefixes) {
        row.params.insert(SETTING.to_string(), c.into());
    }
}

/// Library versions this process ran, by implementation (cuBLAS's as the loaded library reports
/// it): recorded where the library is first used.
static LIBRARIES: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());

/// Records the version of library `implementation` (as rows name it) that this process runs.
pub fn record_library(implementation: &str, version: &str) {
    if let Ok(mut l) = LIBRARIES.lock() {
        l.insert(implementation.to_string(), version.to_string());
    }
}

/// The candle version Cargo.lock pins (build.rs); empty when the build had no Cargo.lock.
const CANDLE_VERSION: &str = env!("OPBENCH_CANDLE_VERSION");

/// The `code` of a library row: "<implementation> <version>", where this process knows the
/// version of that library (candle's from the build, others' as recorded).
fn library_code(implementation: &str) -> Option<String> {
    let version = match implementation {
        "candle" => Some(CANDLE_VERSION.to_string()).filter(|v| !v.is_empty()),
        other => LIBRARIES.lock().ok()?.get(other).cloned(),
    }?;
    Some(format!("{implementation} {version}"))
}

/// Gives a library row of `kind` (cuBLAS, candle) its `code` setting, the library's version,
/// so that `compare` can tell a library that changed from a machine that moved. Rows that
/// carry a `code` already, our own rows, and kinds that do not declare the setting are left
/// as they are.
pub fn tag_library(kind: &str, row: &mut ResultRow) {
    if !crate::identity::is_library(&row.implementation)
        || row.params.contains_key(SETTING)
        || !crate::identity::is_setting(kind, SETTING)
    {
        return;
    }
    if let Some(c) = library_code(&row.implementation) {
        row.params.insert(SETTING.to_string(), c.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_its_published_test_vectors() {
        assert_eq!(hash_bytes(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(hash_bytes(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(hash_bytes(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn the_code_changes_with_any_byte_or_name_and_not_with_the_order() {
        let a = combine([("layernorm", hash_bytes(b"ptx one"))]);
        assert_eq!(a, combine([("layernorm", hash_bytes(b"ptx one"))]));
        assert_ne!(a, combine([("layernorm", hash_bytes(b"ptx One"))]));
        assert_ne!(a, combine([("layernorm2", hash_bytes(b"ptx one"))]));
        assert_eq!(a.len(), 16);
        let x = ("decode_gemv", hash_bytes(b"g"));
        let y = ("decode_attn", hash_bytes(b"t"));
        assert_eq!(combine([x, y]), combine([y, x]));
        assert_ne!(combine([x, y]), combine([x]));
    }

    #[test]
    fn ptx_hashes_without_its_source_locations_and_with_every_instruction() {
        let ptx = |dir: &str, line: u32, op: &str| {
            format!(
                "//\n.version 8.8\n.target sm_90\n\t.file\t1 \"{dir}/kernels/ln.cu\"\n\
                 .entry k()\n{{\n\t.loc\t1 {line} 5\n\t{op}.f32 %f1, %f2, %f3;\n}}\n"
            )
        };
        let a = hash_module(ptx("/work/main", 40, "add").as_bytes());
        assert_eq!(a, hash_module(ptx("/tmp/wb", 41, "add").as_bytes()));
        assert_ne!(a, hash_module(ptx("/work/main", 40, "mul").as_bytes()));
        // Not PTX (a cubin's bytes): hashed whole.
        assert_eq!(hash_module(b"\x7fELF.file"), hash_bytes(b"\x7fELF.file"));
    }

    #[test]
    fn rows_name_modules_by_prefix_and_get_none_before_any_is_loaded() {
        assert_eq!(of_modules(&["code_id_test_never_loaded"]), None);
        record_module("code_id_test_decode_a", b"a");
        record_module("code_id_test_decode_b", b"b");
        record_module("code_id_test_other", b"c");
        let both = of_modules(&["code_id_test_decode_"]).unwrap();
        assert_eq!(
            both,
            combine([
                ("code_id_test_decode_a", hash_bytes(b"a")),
                ("code_id_test_decode_b", hash_bytes(b"b")),
            ])
        );
        assert_ne!(both, of_modules(&["code_id_test_"]).unwrap());
        record_module("code_id_test_decode_b", b"b2");
        assert_eq!(both, of_modules(&["code_id_test_decode_"]).unwrap());
        replace_module("code_id_test_decode_b", b"b2");
        let now = of_modules(&["code_id_test_decode_"]).unwrap();
        assert_ne!(both, now);
        let mut row = ResultRow::new("b", "i");
        tag(&mut row, &["code_id_test_never_loaded"]);
        assert!(!row.params.contains_key(SETTING));
        tag(&mut row, &["code_id_test_decode_"]);
        assert_eq!(row.param_str(SETTING), Some(now));
    }

    #[test]
    fn library_rows_carry_their_version_and_ours_are_left_alone() {
        let row = |implementation: &str| ResultRow::new("gemm", implementation);
        let mut candle = row("candle");
        tag_library("gemm", &mut candle);
        let code = candle.params.get(SETTING).map(|p| p.to_string());
        assert_eq!(code, Some(format!("candle {CANDLE_VERSION}")));
        assert!(!CANDLE_VERSION.is_empty(), "build.rs reads Cargo.lock");
        record_library("cublas", "12.9.1");
        let mut cublas = row("cublas");
        tag_library("gemm", &mut cublas);
        assert_eq!(
            cublas.params.get(SETTING).map(|p| p.to_string()),
            Some("cublas 12.9.1".to_string())
        );
        let mut ours = row("tma_ws_splitk");
        tag_library("gemm", &mut ours);
        assert!(!ours.params.contains_key(SETTING));
        // A kind that does not declare `code` keeps its identity.
        let mut nccl = row("nccl");
        record_library("nccl", "2.21");
        tag_library("comm", &mut nccl);
        assert!(!nccl.params.contains_key(SETTING));
    }
}
