//! Which runtime and driver API calls become records. By default every call except queries
//! that neither enqueue GPU work nor wait for it (cudaGetDevice, cudaGetLastError,
//! cuCtxGetCurrent, cuKernelGetFunction, ...): in a traced eager PyTorch decode they were 13
//! of every 14 API records (14.3 per kernel; 1.06 without them), and they say nothing about
//! launch latency or host waits. `OPBENCH_TRACE_API=all` records them too, and
//! `OPBENCH_TRACE_API=none` no API call at all.

use crate::rawfmt;
use cudarc::cupti::sys::{self, CUpti_CallbackDomain as Domain};

/// Name prefixes of the calls left out: reads of state (device, context, attributes,
/// versions, errors, capture status, function handles) and switches of the current
/// device or context, none of which enqueues work or waits for the GPU.
const QUERY_PREFIXES: &[&str] = &[
    "cudaGet",
    "cudaPeekAtLastError",
    "cudaDeviceGet",
    "cudaDeviceCanAccessPeer",
    "cudaSetDevice",
    "cudaPointerGetAttributes",
    "cudaFuncGetAttributes",
    "cudaOccupancy",
    "cudaDriverGetVersion",
    "cudaRuntimeGetVersion",
    "cudaStreamIsCapturing",
    "cudaStreamGetCaptureInfo",
    "cudaStreamGetPriority",
    "cudaStreamGetFlags",
    "cudaStreamGetId",
    "cudaThreadExchangeStreamCaptureMode",
    "cuGet",
    "cuDriverGetVersion",
    "cuDeviceGet",
    "cuDeviceCanAccessPeer",
    "cuDeviceComputeCapability",
    "cuDeviceTotalMem",
    "cuDevicePrimaryCtxGetState",
    "cuCtxGet",
    "cuCtxSetCurrent",
    "cuCtxPushCurrent",
    "cuCtxPopCurrent",
    "cuPointerGetAttribute",
    "cuFuncGetAttribute",
    "cuKernelGet",
    "cuLibraryGet",
    "cuModuleGetFunction",
    "cuModuleGetGlobal",
    "cuOccupancy",
    "cuStreamIsCapturing",
    "cuStreamGetCaptureInfo",
    "cuStreamGetPriority",
    "cuStreamGetFlags",
    "cuStreamGetCtx",
    "cuStreamGetId",
    "cuThreadExchangeStreamCaptureMode",
];

/// Whether the call named `name` (CUPTI's callback name, e.g. "cudaGetDevice_v3020") is a
/// query left out by default.
pub fn is_query(name: &str) -> bool {
    QUERY_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Whether every call is to be recorded (`OPBENCH_TRACE_API=all`).
pub fn record_all() -> bool {
    std::env::var(rawfmt::API_ENV).is_ok_and(|v| v == "all")
}

/// Whether no call is to be recorded (`OPBENCH_TRACE_API=none`).
pub fn record_none() -> bool {
    std::env::var(rawfmt::API_ENV).is_ok_and(|v| v == "none")
}

/// Every callback id of `domain` with CUPTI's name for it (ids CUPTI has no name for are
/// skipped).
///
/// # Safety
/// CUPTI must be loaded.
pub unsafe fn callbacks(domain: Domain) -> Vec<(u32, String)> {
    let size = if domain == Domain::CUPTI_CB_DOMAIN_RUNTIME_API {
        sys::CUpti_runtime_api_trace_cbid::CUPTI_RUNTIME_TRACE_CBID_SIZE as u32
    } else {
        sys::CUpti_driver_api_trace_cbid::CUPTI_DRIVER_TRACE_CBID_SIZE as u32
    };
    (1..size)
        .filter_map(|cbid| {
            let mut p: *const std::ffi::c_char = std::ptr::null();
            // SAFETY: p is a valid out-pointer; CUPTI returns a static string or an error.
            let r = unsafe { sys::cuptiGetCallbackName(domain, cbid, &mut p) };
            if r != sys::CUptiResult::CUPTI_SUCCESS || p.is_null() {
                return None;
            }
            // SAFETY: CUPTI's NUL-terminated static string.
            let name = unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy();
            Some((cbid, name.into_owned()))
        })
        .collect()
}

/// Turns off the activity records of the query calls of both API domains; returns a warning
/// for each domain where CUPTI refused (its queries are then recorded). The RUNTIME and DRIVER
/// kinds must be enabled already.
///
/// # Safety
/// CUPTI must be loaded and initialised (called from `InitializeInjection`).
pub unsafe fn leave_out_queries() -> Vec<String> {
    let mut warnings = Vec::new();
    let domains = [
        (Domain::CUPTI_CB_DOMAIN_RUNTIME_API, "runtime"),
        (Domain::CUPTI_CB_DOMAIN_DRIVER_API, "driver"),
    ];
    for (domain, what) in domains {
        // SAFETY: per the contract.
        for (cbid, name) in unsafe { callbacks(domain) } {
            if !is_query(&name) {
                continue;
            }
            // SAFETY: plain CUPTI calls with a callback id of their domain.
            let r = unsafe {
                if domain == Domain::CUPTI_CB_DOMAIN_RUNTIME_API {
                    sys::cuptiActivityEnableRuntimeApi(cbid, 0)
                } else {
                    sys::cuptiActivityEnableDriverApi(cbid, 0)
                }
            };
            if r != sys::CUptiResult::CUPTI_SUCCESS {
                warnings.push(format!(
                    "leaving out {what} API queries ({name}): {r:?}: every {what} API call is \
                     recorded"
                ));
                break;
            }
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::is_query;

    #[test]
    fn queries_are_left_out_and_work_and_waits_are_kept() {
        for q in [
            "cudaGetDevice_v3020",
            "cudaGetLastError_v3020",
            "cudaStreamIsCapturing_v10000",
            "cudaSetDevice_v3020",
            "cuCtxGetCurrent",
            "cuGetProcAddress_v2",
            "cuKernelGetFunction",
            "cuDeviceGetAttribute",
        ] {
            assert!(is_query(q), "{q}");
        }
        for kept in [
            "cudaLaunchKernel_v7000",
            "cudaMemcpyAsync_v3020",
            "cudaStreamSynchronize_v3020",
            "cudaDeviceSynchronize_v3020",
            "cudaEventQuery_v3020",
            "cudaGraphLaunch_v10000",
            "cudaMalloc_v3020",
            "cudaFree_v3020",
            "cuLaunchKernelEx",
            "cuStreamSynchronize",
            "cuMemcpyHtoD_v2",
            "cuGraphLaunch",
            "cuModuleLoadData",
        ] {
            assert!(!is_query(kept), "{kept}");
        }
    }
}
