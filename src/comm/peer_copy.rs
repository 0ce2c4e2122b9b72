//! The peer-copy ceiling (feature `cuda`): the copy bandwidth from each GPU to each other GPU
//! of the host, measured by rank 0 in its own process (a context on every GPU) before the
//! other ranks start their communicator, so nothing else runs on the links meanwhile.

use super::device_mem::DeviceMem;
use anyhow::{Context, Result};
use cudarc::driver::sys::{self, CUevent_flags};
use cudarc::driver::CudaContext;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Bytes of each peer copy: far past any launch cost.
pub const PEER_COPY_BYTES: usize = 256 << 20;
const SAMPLES: usize = 10;
const COPIES_PER_SAMPLE: usize = 5;

/// Copy bandwidth (GB/s, bytes / time) for every ordered pair of visible GPUs, keyed
/// "SRC->DST", and the method sentence.
pub fn peer_copy_gbps() -> Result<(BTreeMap<String, f64>, String)> {
    let n = CudaContext::device_count().context("counting the GPUs")? as usize;
    let ctxs: Vec<Arc<CudaContext>> = (0..n)
        .map(|i| CudaContext::new(i).with_context(|| format!("opening GPU {i} for peer copies")))
        .collect::<Result<_>>()?;
    let mut out = BTreeMap::new();
    let mut direct = Vec::new();
    for src in 0..n {
        for dst in (0..n).filter(|d| *d != src) {
            let enabled = enable_peer_access(&ctxs[dst], &ctxs[src])?;
            if !enabled {
                direct.push(format!("{src}->{dst}"));
            }
            let gbps = one_pair(&ctxs[src], &ctxs[dst])
                .with_context(|| format!("peer copy from GPU {src} to GPU {dst}"))?;
            out.insert(format!("{src}->{dst}"), gbps);
        }
    }
    let method = format!(
        "peer_copy_gbps: cuMemcpyPeerAsync of {} MiB from each GPU to each other GPU on the \
         destination's stream, bytes / median of {SAMPLES} samples x {COPIES_PER_SAMPLE} copies \
         between CUDA events; peer access enabled {}",
        PEER_COPY_BYTES >> 20,
        if direct.is_empty() {
            "for every pair".to_string()
        } else {
            format!(
                "except {} (the driver refused it: staged copies)",
                direct.join(", ")
            )
        }
    );
    Ok((out, method))
}

/// Lets `ctx` reach `peer`'s memory directly; false where the driver says it cannot.
fn enable_peer_access(ctx: &Arc<CudaContext>, peer: &Arc<CudaContext>) -> Result<bool> {
    let mut can = 0;
    // SAFETY: both devices are valid handles of live contexts; `can` is a valid out pointer.
    unsafe { sys::cuDeviceCanAccessPeer(&mut can, ctx.cu_device(), peer.cu_device()) }
        .result()
        .context("cuDeviceCanAccessPeer")?;
    if can == 0 {
        return Ok(false);
    }
    ctx.bind_to_thread()?;
    // SAFETY: `ctx` is current on this thread and `peer` is a live context.
    let r = unsafe { sys::cuCtxEnablePeerAccess(peer.cu_ctx(), 0) };
    match r {
        sys::CUresult::CUDA_SUCCESS | sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => {
            Ok(true)
        }
        e => Err(anyhow::anyhow!("cuCtxEnablePeerAccess: {e:?}")),
    }
}

fn one_pair(src: &Arc<CudaContext>, dst: &Arc<CudaContext>) -> Result<f64> {
    // cuMemAlloc memory: peer access enabled with cuCtxEnablePeerAccess covers it (pool
    // memory was staged through the host at PCIe speed).
    let from = DeviceMem::zeroed(src, PEER_COPY_BYTES, "the peer copy's source")?;
    let to = DeviceMem::zeroed(dst, PEER_COPY_BYTES, "the peer copy's destination")?;
    let stream = dst.new_stream()?;
    let copy = || -> Result<()> {
        // SAFETY: both regions hold PEER_COPY_BYTES and live until the stream is synchronised
        // (every sample ends with an event read); the stream belongs to `dst`'s context.
        unsafe {
            sys::cuMemcpyPeerAsync(
                to.ptr,
                dst.cu_ctx(),
                from.ptr,
                src.cu_ctx(),
                PEER_COPY_BYTES,
                stream.cu_stream(),
            )
        }
        .result()
        .context("cuMemcpyPeerAsync")
    };
    dst.bind_to_thread()?;
    for _ in 0..2 {
        copy()?;
    }
    stream.synchronize()?;
    let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
    let mut us = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        let start = stream.record_event(flags)?;
        for _ in 0..COPIES_PER_SAMPLE {
            copy()?;
        }
        let end = stream.record_event(flags)?;
        us.push(start.elapsed_ms(&end)? as f64 * 1e3 / COPIES_PER_SAMPLE as f64);
    }
    stream.synchronize()?;
    let p50 = crate::stats::percentile(&us, 50.0)?;
    Ok(PEER_COPY_BYTES as f64 / (p50 * 1e-6) / 1e9)
}
