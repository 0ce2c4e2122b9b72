//! Runtime and driver API records from CUPTI's callback API, enabled call by call, when
//! `OPBENCH_TRACE_API_RECORDS=callback` asks for them (the default records the API through
//! the RUNTIME and DRIVER activity kinds). A subscriber is enabled only for the calls
//! `api_filter` keeps (every call with `OPBENCH_TRACE_API=all`); its exit callback writes the
//! same `R`/`V` line an activity record would give: CUPTI's timestamps at entry and exit, the
//! system thread id, the correlation id the kernel, copy and memset records carry, the callback
//! id and the return value. In a host-bound launch loop (scripts/device/launch_floor.cu) a
//! callback on the launch alone costs less than the activity kinds, yet this library with
//! callbacks on every kept call of both domains measured no cheaper than with the activity
//! kinds (docs/notes/trace_tool.md), so it is a setting to measure with, not the default.
//!
//! Lines collect in one buffer, written when it passes `PENDING_BYTES`, by the flush thread
//! every second (`flush`), at exit and when the library steps aside (`stop`), so a killed
//! process loses no more of them than of its activity records.

use crate::{api_filter, out, rawfmt, records};
use cudarc::cupti::sys::{self, CUptiResult, CUpti_CallbackDomain as Domain};
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The subscriber handle while subscribed (0: none).
static SUBSCRIBER: AtomicUsize = AtomicUsize::new(0);
/// Lines of finished calls not yet written.
static PENDING: Mutex<String> = Mutex::new(String::new());
/// Pending lines are written once they pass this size (about 20,000 calls).
const PENDING_BYTES: usize = 1 << 20;

/// Whether API records are to come from callbacks rather than the activity kinds.
pub fn wanted() -> bool {
    std::env::var(rawfmt::API_RECORDS_ENV).as_deref() == Ok("callback")
}

fn pending() -> std::sync::MutexGuard<'static, String> {
    PENDING.lock().unwrap_or_else(|p| p.into_inner())
}

/// Subscribes and enables the callbacks of the calls to record in the domains asked for.
/// Returns warnings (calls CUPTI refused to call back for); an error when CUPTI refused the
/// subscriber, in which case nothing is enabled.
///
/// # Safety
/// CUPTI must be loaded and initialised (called from `InitializeInjection`).
pub unsafe fn start(runtime: bool, driver: bool) -> Result<Vec<String>, String> {
    let mut sub: sys::CUpti_SubscriberHandle = std::ptr::null_mut();
    // SAFETY: a valid out-pointer; on_api lives for the process.
    let r = unsafe { sys::cuptiSubscribe(&mut sub, Some(on_api), std::ptr::null_mut()) };
    if r != CUptiResult::CUPTI_SUCCESS {
        return Err(format!("cuptiSubscribe: {r:?}"));
    }
    SUBSCRIBER.store(sub as usize, Ordering::SeqCst);
    let all = api_filter::record_all();
    let mut warnings = Vec::new();
    let domains = [
        (runtime, Domain::CUPTI_CB_DOMAIN_RUNTIME_API, "runtime"),
        (driver, Domain::CUPTI_CB_DOMAIN_DRIVER_API, "driver"),
    ];
    for (_, domain, what) in domains.into_iter().filter(|d| d.0) {
        let mut refused = 0;
        for (cbid, name) in api_filter::callbacks(domain) {
            if !all && api_filter::is_query(&name) {
                continue;
            }
            // SAFETY: the subscriber is live; cbid is one of the domain's ids.
            let r = unsafe { sys::cuptiEnableCallback(1, sub, domain, cbid) };
            if r != CUptiResult::CUPTI_SUCCESS {
                refused += 1;
            }
        }
        if refused > 0 {
            warnings.push(format!(
                "cuptiEnableCallback refused {refused} {what} API calls: they are not recorded"
            ));
        }
    }
    Ok(warnings)
}

/// Unsubscribes (once) and writes the pending lines: at exit and when the library steps aside.
pub fn stop() {
    let sub = SUBSCRIBER.swap(0, Ordering::SeqCst);
    if sub != 0 {
        // SAFETY: the handle cuptiSubscribe gave, unsubscribed once.
        let _ = unsafe { sys::cuptiUnsubscribe(sub as sys::CUpti_SubscriberHandle) };
    }
    flush();
}

/// Writes the pending lines.
pub fn flush() {
    let lines = std::mem::take(&mut *pending());
    if !lines.is_empty() {
        out::append_records(&lines);
    }
}

/// CUPTI's callback at entry and exit of every enabled call: the entry time goes into the
/// call's correlation data, the exit writes the line.
unsafe extern "C" fn on_api(
    _userdata: *mut c_void,
    domain: Domain,
    cbid: sys::CUpti_CallbackId,
    data: *const c_void,
) {
    if data.is_null() {
        return;
    }
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: for the runtime and driver domains CUPTI passes a CUpti_CallbackData.
        let d = unsafe { &*(data as *const sys::CUpti_CallbackData) };
        let mut now = 0u64;
        // SAFETY: a valid out-pointer.
        unsafe { sys::cuptiGetTimestamp(&mut now) };
        if d.callbackSite == sys::CUpti_ApiCallbackSite::CUPTI_API_ENTER {
            if !d.correlationData.is_null() {
                // SAFETY: CUPTI's per-call slot, kept from entry to exit.
                unsafe { *d.correlationData = now };
            }
            return;
        }
        let start_ns = if d.correlationData.is_null() {
            now
        } else {
            // SAFETY: as above; written at entry.
            unsafe { *d.correlationData }
        };
        let return_value = if d.functionReturnValue.is_null() {
            0
        } else {
            // SAFETY: at exit CUPTI points at the call's cudaError_t or CUresult (an int).
            unsafe { *(d.functionReturnValue as *const u32) }
        };
        let driver = domain == Domain::CUPTI_CB_DOMAIN_DRIVER_API;
        let Some(name_id) = records::api_name(domain, cbid) else {
            return; // the file is closed
        };
        let full = {
            let mut p = pending();
            rawfmt::api(
                &mut p,
                driver,
                &rawfmt::RawApi {
                    start_ns,
                    end_ns: now,
                    tid: crate::nvtx::tid(),
                    correlation_id: crate::pause::correlation(d.correlationId),
                    cbid,
                    return_value,
                    name_id,
                },
            );
            (p.len() >= PENDING_BYTES).then(|| std::mem::take(&mut *p))
        };
        if let Some(lines) = full {
            out::append_records(&lines);
        }
    });
}
