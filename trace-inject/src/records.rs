//! CUPTI's activity buffers: allocated on request, decoded into raw-file lines when CUPTI
//! completes them. Each record's kind is read as a plain integer before its layout is used;
//! only the fields every CUDA 13.x version of the record has are read.

use crate::rawfmt::{self, RawApi, RawGpu, RawGraph, RawKernel, RawMem, RawSync};
use crate::{out, pause, writer};
use cudarc::cupti::sys::{
    self, CUpti_Activity, CUpti_ActivityAPI as ApiRec, CUpti_ActivityDevice5 as DeviceRec,
    CUpti_ActivityGraphTrace2 as GraphRec, CUpti_ActivityKernel10 as KernelRec,
    CUpti_ActivityKind as Kind, CUpti_ActivityMemcpy6 as MemcpyRec,
    CUpti_ActivityMemset4 as MemsetRec, CUpti_ActivitySynchronization as SyncRec,
    CUpti_CallbackDomain as Domain,
};
use std::alloc::{alloc, dealloc, Layout};
use std::ffi::CStr;
use std::ptr::addr_of;

const BUFFER_BYTES: usize = 8 << 20;

fn layout() -> Layout {
    Layout::from_size_align(BUFFER_BYTES, 8).expect("constant layout")
}

pub unsafe extern "C" fn buffer_requested(buffer: *mut *mut u8, size: *mut usize, max: *mut usize) {
    // SAFETY: CUPTI passes valid out-pointers; the buffer is freed in buffer_completed.
    unsafe {
        *buffer = alloc(layout());
        *size = if (*buffer).is_null() { 0 } else { BUFFER_BYTES };
        *max = 0;
    }
}

/// CUPTI's completion callback: reads the dropped-record count (which needs the buffer's
/// context and stream) and hands the buffer to the writer thread (`writer.rs`).
pub unsafe extern "C" fn buffer_completed(
    ctx: cudarc::driver::sys::CUcontext,
    stream: u32,
    buffer: *mut u8,
    _size: usize,
    valid: usize,
) {
    if buffer.is_null() {
        return;
    }
    let mut dropped = 0usize;
    // SAFETY: ctx/stream are the ones CUPTI gave for this buffer.
    let r = unsafe { sys::cuptiActivityGetNumDroppedRecords(ctx, stream, &mut dropped) };
    if r != sys::CUptiResult::CUPTI_SUCCESS {
        dropped = 0;
    }
    let job = writer::Job {
        buffer,
        valid,
        dropped,
    };
    // A panic here may lose the buffer; nothing more is safe to do with it from C's frame.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| writer::submit(job)));
}

/// Decodes a completed buffer into lines, appends them to the raw file and frees the buffer.
pub fn process(job: writer::Job) {
    let writer::Job {
        buffer,
        valid,
        dropped,
    } = job;
    let _ = std::panic::catch_unwind(|| {
        let mut buf = String::with_capacity(1 << 20);
        let mut rec: *mut CUpti_Activity = std::ptr::null_mut();
        // SAFETY: buffer/valid come from CUPTI; the loop ends when no record is left.
        while unsafe { sys::cuptiActivityGetNextRecord(buffer, valid, &mut rec) }
            == sys::CUptiResult::CUPTI_SUCCESS
        {
            // SAFETY: rec points at a complete record inside the buffer.
            if unsafe { decode(rec, &mut buf) }.is_none() {
                return; // the file is closed: nothing to write to
            }
        }
        out::append_records(&buf);
        if dropped > 0 {
            if let Some(total) = out::with(|o| {
                o.dropped += dropped as u64;
                o.dropped
            }) {
                let mut line = String::new();
                rawfmt::dropped(&mut line, total);
                out::append(&line);
            }
        }
    });
    // SAFETY: allocated in buffer_requested with the same layout; CUPTI is done with it.
    unsafe { dealloc(buffer, layout()) };
}

/// # Safety
/// `p` must be null or a NUL-terminated string.
unsafe fn text(p: *const std::ffi::c_char, or: &str) -> String {
    if p.is_null() {
        or.to_string()
    } else {
        // SAFETY: per the contract.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// The name id of an API function (CUPTI's name looked up once per function); None without
/// an open file.
pub(crate) fn api_name(domain: Domain, cbid: u32) -> Option<u32> {
    let key = (domain == Domain::CUPTI_CB_DOMAIN_DRIVER_API, cbid);
    if let Some(id) = out::with(|o| o.api_names.as_ref().and_then(|m| m.get(&key).copied())) {
        if id.is_some() {
            return id;
        }
    }
    let mut p: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: p is a valid out-pointer; CUPTI returns a static string.
    let r = unsafe { sys::cuptiGetCallbackName(domain, cbid, &mut p) };
    let name = if r == sys::CUptiResult::CUPTI_SUCCESS {
        // SAFETY: CUPTI's string.
        unsafe { text(p, "") }
    } else {
        String::new()
    };
    let name = if name.is_empty() {
        format!("cbid {cbid}")
    } else {
        name
    };
    out::with(|o| {
        let id = o.name_id(&name);
        o.api_names
            .get_or_insert_with(Default::default)
            .insert(key, id);
        id
    })
}

/// Appends the line of one record to `buf` (kinds not recorded are skipped). None when the
/// file is closed (a name could not be interned).
///
/// # Safety
/// `rec` must point at a valid CUPTI activity record.
unsafe fn decode(rec: *const CUpti_Activity, buf: &mut String) -> Option<()> {
    // SAFETY (whole body): rec is a valid record of the kind read first; fields are read
    // unaligned from the packed layouts.
    unsafe {
        let kind = (rec as *const u32).read_unaligned();
        if kind == Kind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL as u32
            || kind == Kind::CUPTI_ACTIVITY_KIND_KERNEL as u32
        {
            let k = rec as *const KernelRec;
            let name = text(addr_of!((*k).name).read_unaligned(), "<unnamed kernel>");
            let name_id = out::intern(&name)?;
            rawfmt::kernel(
                buf,
                &RawKernel {
                    start_ns: addr_of!((*k).start).read_unaligned(),
                    end_ns: addr_of!((*k).end).read_unaligned(),
                    device: addr_of!((*k).deviceId).read_unaligned(),
                    stream: addr_of!((*k).streamId).read_unaligned(),
                    correlation_id: pause::correlation(
                        addr_of!((*k).correlationId).read_unaligned(),
                    ),
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
                    registers_per_thread: addr_of!((*k).registersPerThread).read_unaligned(),
                    static_shared_bytes: addr_of!((*k).staticSharedMemory).read_unaligned(),
                    dynamic_shared_bytes: addr_of!((*k).dynamicSharedMemory).read_unaligned(),
                    graph_id: addr_of!((*k).graphId).read_unaligned(),
                    name_id,
                },
            );
        } else if kind == Kind::CUPTI_ACTIVITY_KIND_GRAPH_TRACE as u32 {
            let g = rec as *const GraphRec;
            rawfmt::graph(
                buf,
                &RawGraph {
                    start_ns: addr_of!((*g).start).read_unaligned(),
                    end_ns: addr_of!((*g).end).read_unaligned(),
                    device: addr_of!((*g).deviceId).read_unaligned(),
                    stream: addr_of!((*g).streamId).read_unaligned(),
                    correlation_id: pause::correlation(
                        addr_of!((*g).correlationId).read_unaligned(),
                    ),
                    graph_id: addr_of!((*g).graphId).read_unaligned(),
                },
            );
        } else if kind == Kind::CUPTI_ACTIVITY_KIND_MEMCPY as u32 {
            let m = rec as *const MemcpyRec;
            rawfmt::memcpy(
                buf,
                &RawMem {
                    start_ns: addr_of!((*m).start).read_unaligned(),
                    end_ns: addr_of!((*m).end).read_unaligned(),
                    device: addr_of!((*m).deviceId).read_unaligned(),
                    stream: addr_of!((*m).streamId).read_unaligned(),
                    correlation_id: pause::correlation(
                        addr_of!((*m).correlationId).read_unaligned(),
                    ),
                    bytes: addr_of!((*m).bytes).read_unaligned(),
                    copy_kind: addr_of!((*m).copyKind).read_unaligned(),
                    value: 0,
                    graph_id: addr_of!((*m).graphId).read_unaligned(),
                },
            );
        } else if kind == Kind::CUPTI_ACTIVITY_KIND_MEMSET as u32 {
            let m = rec as *const MemsetRec;
            rawfmt::memset(
                buf,
                &RawMem {
                    start_ns: addr_of!((*m).start).read_unaligned(),
                    end_ns: addr_of!((*m).end).read_unaligned(),
                    device: addr_of!((*m).deviceId).read_unaligned(),
                    stream: addr_of!((*m).streamId).read_unaligned(),
                    correlation_id: pause::correlation(
                        addr_of!((*m).correlationId).read_unaligned(),
                    ),
                    bytes: addr_of!((*m).bytes).read_unaligned(),
                    copy_kind: 0,
                    value: addr_of!((*m).value).read_unaligned(),
                    graph_id: addr_of!((*m).graphId).read_unaligned(),
                },
            );
        } else if kind == Kind::CUPTI_ACTIVITY_KIND_RUNTIME as u32
            || kind == Kind::CUPTI_ACTIVITY_KIND_DRIVER as u32
        {
            let driver = kind == Kind::CUPTI_ACTIVITY_KIND_DRIVER as u32;
            let a = rec as *const ApiRec;
            let cbid: u32 = addr_of!((*a).cbid).read_unaligned();
            let domain = if driver {
                Domain::CUPTI_CB_DOMAIN_DRIVER_API
            } else {
                Domain::CUPTI_CB_DOMAIN_RUNTIME_API
            };
            let name_id = api_name(domain, cbid)?;
            rawfmt::api(
                buf,
                driver,
                &RawApi {
                    start_ns: addr_of!((*a).start).read_unaligned(),
                    end_ns: addr_of!((*a).end).read_unaligned(),
                    tid: addr_of!((*a).threadId).read_unaligned(),
                    correlation_id: pause::correlation(
                        addr_of!((*a).correlationId).read_unaligned(),
                    ),
                    cbid,
                    return_value: addr_of!((*a).returnValue).read_unaligned(),
                    name_id,
                },
            );
        } else if kind == Kind::CUPTI_ACTIVITY_KIND_SYNCHRONIZATION as u32 {
            let s = rec as *const SyncRec;
            rawfmt::sync(
                buf,
                &RawSync {
                    start_ns: addr_of!((*s).start).read_unaligned(),
                    end_ns: addr_of!((*s).end).read_unaligned(),
                    sync_type: (addr_of!((*s).type_) as *const u32).read_unaligned(),
                    stream: addr_of!((*s).streamId).read_unaligned(),
                    correlation_id: pause::correlation(
                        addr_of!((*s).correlationId).read_unaligned(),
                    ),
                },
            );
        } else if kind == Kind::CUPTI_ACTIVITY_KIND_DEVICE as u32 {
            let d = rec as *const DeviceRec;
            rawfmt::gpu(
                buf,
                &RawGpu {
                    id: addr_of!((*d).id).read_unaligned(),
                    name: text(addr_of!((*d).name).read_unaligned(), "unknown GPU"),
                    compute_major: addr_of!((*d).computeCapabilityMajor).read_unaligned(),
                    compute_minor: addr_of!((*d).computeCapabilityMinor).read_unaligned(),
                    sm_count: addr_of!((*d).numMultiprocessors).read_unaligned(),
                    memory_bytes: addr_of!((*d).globalMemorySize).read_unaligned(),
                },
            );
        }
    }
    Some(())
}
