//! In-process kernel tracing with CUPTI's activity API (cudarc's `cupti` bindings, CUDA 13.0
//! record layouts): concurrent-kernel, memcpy and memset records with device timestamps.
//!
//! CUPTI hands filled buffers to `buffer_completed` (on its own thread or in a flush); the
//! records are decoded there into owned [`Activity`] values kept in a process-wide list.
//! Only the leading fields of each record are read (kind, start, end, ids, grid, block, name),
//! which every record version since CUDA 11 lays out identically; each record's `kind` is
//! checked before it is decoded.

use super::record::{Activity, ActivityKind};
use anyhow::{bail, Result};
use cudarc::cupti::result::{activity, CuptiError};
use cudarc::cupti::sys::{
    self, CUptiResult, CUpti_Activity, CUpti_ActivityKernel10 as KernelRec,
    CUpti_ActivityKind as Kind, CUpti_ActivityMemcpy6 as MemcpyRec,
    CUpti_ActivityMemset4 as MemsetRec,
};
use std::alloc::{alloc, dealloc, Layout};
use std::ptr::addr_of;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, Once};

const BUFFER_BYTES: usize = 8 << 20;
const BUFFER_ALIGN: usize = 8;
const KINDS: [Kind; 3] = [
    Kind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    Kind::CUPTI_ACTIVITY_KIND_MEMCPY,
    Kind::CUPTI_ACTIVITY_KIND_MEMSET,
];

static RECORDS: Mutex<Vec<Activity>> = Mutex::new(Vec::new());
static DROPPED: AtomicU64 = AtomicU64::new(0);
static REGISTER: Once = Once::new();
static REGISTERED: Mutex<Option<String>> = Mutex::new(None);

/// CUPTI's name for an error, e.g. "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES".
fn err(what: &str, e: CuptiError) -> anyhow::Error {
    anyhow::anyhow!("CUPTI {what}: {:?}", e.0)
}

fn layout() -> Layout {
    Layout::from_size_align(BUFFER_BYTES, BUFFER_ALIGN).expect("constant layout")
}

unsafe extern "C" fn buffer_requested(buffer: *mut *mut u8, size: *mut usize, max: *mut usize) {
    // SAFETY: CUPTI passes valid out-pointers; the buffer is freed in buffer_completed.
    unsafe {
        *buffer = alloc(layout());
        *size = if (*buffer).is_null() { 0 } else { BUFFER_BYTES };
        *max = 0;
    }
}

unsafe extern "C" fn buffer_completed(
    ctx: cudarc::driver::sys::CUcontext,
    stream: u32,
    buffer: *mut u8,
    _size: usize,
    valid: usize,
) {
    if buffer.is_null() {
        return;
    }
    let mut got = Vec::new();
    let mut rec: *mut CUpti_Activity = std::ptr::null_mut();
    // SAFETY: buffer/valid come from CUPTI; rec is an out-pointer into that buffer. The loop
    // ends at CUPTI_ERROR_MAX_LIMIT_REACHED (no more valid records).
    while let Ok(()) = unsafe { activity::get_next_record(buffer, valid, &mut rec) } {
        // SAFETY: rec points at a complete record inside the buffer.
        if let Some(a) = unsafe { decode(rec) } {
            got.push(a);
        }
    }
    let mut dropped = 0usize;
    // SAFETY: ctx/stream are the ones CUPTI gave for this buffer.
    if unsafe { activity::get_num_dropped_records(ctx, stream, &mut dropped) }.is_ok() {
        DROPPED.fetch_add(dropped as u64, Ordering::Relaxed);
    }
    if let Ok(mut r) = RECORDS.lock() {
        r.extend(got);
    }
    // SAFETY: allocated in buffer_requested with the same layout.
    unsafe { dealloc(buffer, layout()) };
}

/// Decodes one record if it is a kernel, memcpy or memset.
///
/// # Safety
/// `rec` must point at a valid CUPTI activity record.
unsafe fn decode(rec: *const CUpti_Activity) -> Option<Activity> {
    // Read the kind as a plain u32 first: an unknown value must not become a Rust enum.
    let kind = unsafe { (rec as *const u32).read_unaligned() };
    if kind == Kind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL as u32
        || kind == Kind::CUPTI_ACTIVITY_KIND_KERNEL as u32
    {
        let k = rec as *const KernelRec;
        unsafe {
            let name_ptr = addr_of!((*k).name).read_unaligned();
            let name = if name_ptr.is_null() {
                "<unnamed kernel>".to_string()
            } else {
                std::ffi::CStr::from_ptr(name_ptr)
                    .to_string_lossy()
                    .into_owned()
            };
            Some(Activity {
                kind: ActivityKind::Kernel,
                name,
                start_ns: addr_of!((*k).start).read_unaligned(),
                end_ns: addr_of!((*k).end).read_unaligned(),
                stream: addr_of!((*k).streamId).read_unaligned(),
                grid: [
                    addr_of!((*k).gridX).read_unaligned(),
                    addr_of!((*k).gridY).read_unaligned(),
                    addr_of!((*k).gridZ).read_unaligned(),
                ],
                block: [
                    addr_of!((*k).blockX).read_unaligned(),
                    addr_of!((*k).blockY).read_unaligned(),
                    addr_of!((*k).blockZ).read_unaligned(),
                ],
                bytes: 0,
                correlation_id: addr_of!((*k).correlationId).read_unaligned(),
                device: addr_of!((*k).deviceId).read_unaligned(),
                graph_id: addr_of!((*k).graphId).read_unaligned(),
                registers_per_thread: addr_of!((*k).registersPerThread).read_unaligned(),
                static_shared_bytes: addr_of!((*k).staticSharedMemory).read_unaligned(),
                dynamic_shared_bytes: addr_of!((*k).dynamicSharedMemory).read_unaligned(),
                copy_kind: 0,
            })
        }
    } else if kind == Kind::CUPTI_ACTIVITY_KIND_MEMCPY as u32 {
        let m = rec as *const MemcpyRec;
        unsafe {
            let ck = addr_of!((*m).copyKind).read_unaligned();
            let dir = match ck {
                1 => "HtoD",
                2 => "DtoH",
                8 => "DtoD",
                10 => "PtoP",
                _ => "other",
            };
            Some(Activity {
                kind: ActivityKind::Memcpy,
                name: format!("memcpy {dir}"),
                start_ns: addr_of!((*m).start).read_unaligned(),
                end_ns: addr_of!((*m).end).read_unaligned(),
                stream: addr_of!((*m).streamId).read_unaligned(),
                grid: [0; 3],
                block: [0; 3],
                bytes: addr_of!((*m).bytes).read_unaligned(),
                correlation_id: addr_of!((*m).correlationId).read_unaligned(),
                device: addr_of!((*m).deviceId).read_unaligned(),
                graph_id: addr_of!((*m).graphId).read_unaligned(),
                registers_per_thread: 0,
                static_shared_bytes: 0,
                dynamic_shared_bytes: 0,
                copy_kind: ck,
            })
        }
    } else if kind == Kind::CUPTI_ACTIVITY_KIND_MEMSET as u32 {
        let m = rec as *const MemsetRec;
        unsafe {
            Some(Activity {
                kind: ActivityKind::Memset,
                name: "memset".into(),
                start_ns: addr_of!((*m).start).read_unaligned(),
                end_ns: addr_of!((*m).end).read_unaligned(),
                stream: addr_of!((*m).streamId).read_unaligned(),
                grid: [0; 3],
                block: [0; 3],
                bytes: addr_of!((*m).bytes).read_unaligned(),
                correlation_id: addr_of!((*m).correlationId).read_unaligned(),
                device: addr_of!((*m).deviceId).read_unaligned(),
                graph_id: addr_of!((*m).graphId).read_unaligned(),
                registers_per_thread: 0,
                static_shared_bytes: 0,
                dynamic_shared_bytes: 0,
                copy_kind: 0,
            })
        }
    } else {
        None
    }
}

/// Registers the buffer callbacks once per process. Fails with CUPTI's reason (no
/// libcupti, another profiler attached, insufficient privileges, ...).
pub fn init() -> Result<()> {
    REGISTER.call_once(|| {
        let r = activity::register_callbacks(Some(buffer_requested), Some(buffer_completed));
        if let Err(e) = r {
            *REGISTERED.lock().unwrap_or_else(|p| p.into_inner()) =
                Some(format!("cuptiActivityRegisterCallbacks: {:?}", e.0));
        }
    });
    if let Some(e) = REGISTERED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
    {
        bail!("CUPTI refused: {e}");
    }
    Ok(())
}

/// Starts recording kernels, copies and memsets.
pub fn enable() -> Result<()> {
    for k in KINDS {
        activity::enable(k).map_err(|e| err(&format!("cuptiActivityEnable({k:?})"), e))?;
    }
    Ok(())
}

/// Stops recording (records already made stay buffered until [`take`]).
pub fn disable() -> Result<()> {
    for k in KINDS {
        activity::disable(k).map_err(|e| err(&format!("cuptiActivityDisable({k:?})"), e))?;
    }
    Ok(())
}

/// CUPTI's clock (ns), the one activity timestamps use.
pub fn now_ns() -> Result<u64> {
    let mut t = 0u64;
    // SAFETY: t is a valid out-pointer.
    let r: CUptiResult = unsafe { sys::cuptiGetTimestamp(&mut t) };
    r.result().map_err(|e| err("cuptiGetTimestamp", e))?;
    Ok(t)
}

/// Flushes every buffer and returns all records collected so far and the dropped count.
pub fn take() -> Result<(Vec<Activity>, u64)> {
    // 1 = CUPTI_ACTIVITY_FLAG_FLUSH_FORCED: also flush buffers that are not full.
    activity::flush_all(1).map_err(|e| err("cuptiActivityFlushAll", e))?;
    let recs = std::mem::take(&mut *RECORDS.lock().unwrap_or_else(|p| p.into_inner()));
    Ok((recs, DROPPED.swap(0, Ordering::Relaxed)))
}
