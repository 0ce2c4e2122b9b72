//! Our one-shot all-reduce (feature `cuda`; kernels/comm_oneshot.cu, whose header gives the
//! barrier and the memory-ordering rules): every rank's data region (two halves, used by
//! alternate calls) and signal area, allocated
//! with cuMemAlloc (pool memory cannot be exported), mapped by every other rank through CUDA IPC
//! handles exchanged over the rendezvous, and one launch per call with the call's epoch.

use super::device_mem::DeviceMem;
use super::group::Group;
use super::reference::Element;
use anyhow::{bail, Context, Result};
use cudarc::driver::sys::{self, CUdeviceptr};
use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg,
};
use std::sync::Arc;

#[allow(dead_code)] // ptx.rs holds every kernels/*.cu module; this file uses one.
mod ptx {
    include!(concat!(env!("OUT_DIR"), "/ptx.rs"));
}

/// Ranks the kernel's peer tables hold (kernels/comm_oneshot.cu MAX_RANKS).
pub const MAX_RANKS: usize = 8;
/// Blocks per launch at the most (kernels/comm_oneshot.cu MAX_BLOCKS): few enough to be resident
/// at once on every GPU, since block b of one rank waits for block b of the others.
const MAX_BLOCKS: usize = 32;
const THREADS: u32 = 512;
/// Bytes each block should get before another block is worth its barrier: one 16-byte pack per
/// thread.
const BYTES_PER_BLOCK: usize = THREADS as usize * 16;

/// The kernel's peer table (kernels/comm_oneshot.cu `struct Peers`), passed by value.
#[repr(C)]
#[derive(Clone, Copy)]
struct Peers {
    data: [CUdeviceptr; MAX_RANKS],
    signal: [CUdeviceptr; MAX_RANKS],
}

// SAFETY: plain device addresses in a #[repr(C)] struct laid out as the kernel's `Peers`.
unsafe impl DeviceRepr for Peers {}

/// This rank's side of the one-shot all-reduce.
pub struct OneShot {
    stream: Arc<CudaStream>,
    f32_fn: CudaFunction,
    bf16_fn: CudaFunction,
    peers: Peers,
    /// This rank's data region and signal area, held to be freed after `drop` drained the
    /// stream (the kernel reaches them through `peers`).
    _own: [DeviceMem; 2],
    opened: Vec<CUdeviceptr>,
    rank: usize,
    world: usize,
    /// Largest message (bytes) the data buffers hold.
    pub capacity_bytes: usize,
    epoch: u32,
}

impl OneShot {
    /// Allocates this rank's buffers, exchanges IPC handles with every rank of `group` and maps
    /// theirs; every rank must call it at the same point of the run.
    pub fn open(
        gpu: &crate::gpu::Gpu,
        group: &mut Group,
        capacity_bytes: usize,
    ) -> Result<OneShot> {
        let (rank, world) = (group.rank, group.world_size);
        if world > MAX_RANKS {
            bail!("our one-shot all-reduce serves at most {MAX_RANKS} ranks, this run has {world}");
        }
        let f32_fn = gpu.function(
            "opbench_comm_oneshot",
            ptx::COMM_ONESHOT,
            "opbench_oneshot_allreduce_f32",
        )?;
        let bf16_fn = gpu.function(
            "opbench_comm_oneshot",
            ptx::COMM_ONESHOT,
            "opbench_oneshot_allreduce_bf16",
        )?;
        let signal_bytes = MAX_RANKS * MAX_BLOCKS * 4;
        // Halves of whole 16-byte units, so both start aligned for any element type.
        let capacity_bytes = capacity_bytes.max(16).next_multiple_of(16);
        // Zeroed before any peer can see them.
        let own = [
            DeviceMem::zeroed(&gpu.ctx, 2 * capacity_bytes, "the data region")?,
            DeviceMem::zeroed(&gpu.ctx, signal_bytes, "the signal area")?,
        ];
        let mut mine = Vec::with_capacity(128);
        for mem in &own {
            let mut h = sys::CUipcMemHandle { reserved: [0; 64] };
            // SAFETY: `mem` is a cuMemAlloc allocation of this context; `h` is a valid out value.
            unsafe { sys::cuIpcGetMemHandle(&mut h, mem.ptr) }
                .result()
                .context("cuIpcGetMemHandle")?;
            mine.extend(h.reserved.iter().map(|c| *c as u8));
        }
        let all = group.all_gather_bytes(mine)?;
        let mut peers = Peers {
            data: [0; MAX_RANKS],
            signal: [0; MAX_RANKS],
        };
        let mut opened = Vec::new();
        for (r, bytes) in all.iter().enumerate() {
            if bytes.len() != 128 {
                bail!(
                    "rank {r} sent {} bytes of IPC handles, not 128",
                    bytes.len()
                );
            }
            let mut mapped = [0 as CUdeviceptr; 2];
            if r == rank {
                mapped = [own[0].ptr, own[1].ptr];
            } else {
                for (k, m) in mapped.iter_mut().enumerate() {
                    let mut h = sys::CUipcMemHandle { reserved: [0; 64] };
                    for (d, s) in h.reserved.iter_mut().zip(&bytes[k * 64..(k + 1) * 64]) {
                        *d = *s as std::ffi::c_char;
                    }
                    // SAFETY: `h` is a handle another rank exported from a live allocation;
                    // `m` is a valid out pointer. Peer access is enabled lazily by the flag.
                    unsafe {
                        sys::cuIpcOpenMemHandle_v2(
                            m,
                            h,
                            sys::CUipcMem_flags_enum::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS as u32,
                        )
                    }
                    .result()
                    .with_context(|| {
                        format!("cuIpcOpenMemHandle of rank {r}'s buffer (can this GPU reach it?)")
                    })?;
                    opened.push(*m);
                }
            }
            peers.data[r] = mapped[0];
            peers.signal[r] = mapped[1];
        }
        Ok(OneShot {
            stream: gpu.stream.clone(),
            f32_fn,
            bf16_fn,
            peers,
            _own: own,
            opened,
            rank,
            world,
            capacity_bytes,
            epoch: 0,
        })
    }

    /// Enqueues one all-reduce of `src` into `dst` (equal lengths) on the benchmark's stream.
    pub fn launch<T: Element + DeviceRepr>(
        &mut self,
        src: &CudaSlice<T>,
        dst: &mut CudaSlice<T>,
    ) -> Result<()> {
        let n = src.len();
        let bytes = n * std::mem::size_of::<T>();
        if dst.len() != n || bytes > self.capacity_bytes {
            bail!(
                "one-shot all-reduce of {bytes} bytes into {} elements: at most {} bytes, equal lengths",
                dst.len(),
                self.capacity_bytes
            );
        }
        let func = match T::DTYPE {
            crate::dtype::Dtype::F32 => &self.f32_fn,
            crate::dtype::Dtype::Bf16 => &self.bf16_fn,
            d => bail!("one-shot all-reduce of {}: f32 and bf16 only", d.name()),
        };
        self.epoch = self.epoch.wrapping_add(1);
        let blocks = bytes.div_ceil(BYTES_PER_BLOCK).clamp(1, MAX_BLOCKS) as u32;
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let (n64, half, me, world, epoch) = (
            n as u64,
            self.capacity_bytes as u64,
            self.rank as i32,
            self.world as i32,
            self.epoch,
        );
        let mut b = self.stream.launch_builder(func);
        b.arg(src)
            .arg(dst)
            .arg(&n64)
            .arg(&self.peers)
            .arg(&half)
            .arg(&me)
            .arg(&world)
            .arg(&epoch);
        // SAFETY: the arguments match opbench_oneshot_allreduce_{f32,bf16}(in, out, n, peers,
        // half_bytes, me, world, epoch); `src` and `dst` hold `n` elements; every peer pointer
        // maps a live region of two halves of `capacity_bytes` (checked above) and a signal area
        // of MAX_RANKS x MAX_BLOCKS flags.
        unsafe { b.launch(cfg) }.context("launching the one-shot all-reduce")?;
        Ok(())
    }
}

impl Drop for OneShot {
    fn drop(&mut self) {
        // Best effort at exit: a peer may still be mapped elsewhere; errors are not actionable.
        let _ = self.stream.synchronize();
        for p in &self.opened {
            // SAFETY: each was opened by cuIpcOpenMemHandle in `open` and is closed once.
            let _ = unsafe { sys::cuIpcCloseMemHandle(*p) };
        }
    }
}
