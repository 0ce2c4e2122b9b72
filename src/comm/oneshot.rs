//! Our one-shot all-reduces (feature `cuda`; kernels/comm_oneshot.cu, whose comments give the
//! barrier, the memory-ordering rules and the reuse argument of each): every rank's regions,
//! allocated with cuMemAlloc (pool memory cannot be exported), mapped by every other rank through
//! CUDA IPC handles exchanged over the rendezvous, and one launch per call with the call's epoch.
//! `Kernel::Push` (implementation "opbench") stores its input as flagged lines into every peer's
//! receive region and polls only its own, in one shot or, from `--ours-twoshot-from` on 3 ranks
//! and more, in two (a reduce-scatter, then an all-gather of the sums); `Kernel::OneShot` and
//! `Kernel::TwoShot` run one of the two at every size; `Kernel::Pull` ("opbench-pull") copies its
//! input into its own region, raises a flag per block in every peer, and reads the peers'
//! regions.

use super::device_mem::DeviceMem;
use super::group::Group;
use super::ours::Kernel;
use super::reference::Element;
use crate::dtype::Dtype;
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
/// at once on every GPU, since a block of one rank waits for data a block of another sends.
const MAX_BLOCKS: usize = 32;
/// Blocks per push launch at the most: at most one per SM of an H100/H200 (132), so every
/// block is resident at once, as the polls need (a block waits for lines another GPU's block
/// stores).
const MAX_PUSH_BLOCKS: usize = 128;
const THREADS: u32 = 512;
/// Bytes each block should get before another block is worth its barrier: one 16-byte pack per
/// thread.
const BYTES_PER_BLOCK: usize = THREADS as usize * 16;

/// Bytes of each region a rank exports: the pull kernel's data region (two halves) and signal
/// area; the push kernel's receive region (two halves of one slot per rank).
fn region_bytes(kernel: Kernel, capacity_bytes: usize, world: usize) -> Vec<usize> {
    if kernel == Kernel::Pull {
        vec![2 * capacity_bytes, MAX_RANKS * MAX_BLOCKS * 4]
    } else {
        vec![2 * world * slot_bytes(capacity_bytes)]
    }
}

/// The entry point for `dtype` (f32 and bf16 only) of the pull kernel (`pull`), or of the push
/// kernels: the one-shot one, or the two-shot one (`two_shot`).
fn entry(pull: bool, two_shot: bool, dtype: Dtype) -> Option<&'static str> {
    Some(match (pull, two_shot, dtype) {
        (true, _, Dtype::F32) => "opbench_oneshot_allreduce_f32",
        (true, _, Dtype::Bf16) => "opbench_oneshot_allreduce_bf16",
        (false, false, Dtype::F32) => "opbench_push_allreduce_f32",
        (false, false, Dtype::Bf16) => "opbench_push_allreduce_bf16",
        (false, true, Dtype::F32) => "opbench_twoshot_allreduce_f32",
        (false, true, Dtype::Bf16) => "opbench_twoshot_allreduce_bf16",
        _ => return None,
    })
}

/// A push slot: one 16-byte line per 8 bytes of a message of `capacity_bytes`.
fn slot_bytes(capacity_bytes: usize) -> usize {
    capacity_bytes.div_ceil(8) * 16
}

/// The pull kernel's peer table (kernels/comm_oneshot.cu `struct Peers`), passed by value.
#[repr(C)]
#[derive(Clone, Copy)]
struct Peers {
    data: [CUdeviceptr; MAX_RANKS],
    signal: [CUdeviceptr; MAX_RANKS],
}

/// The push kernel's peer table (kernels/comm_oneshot.cu `struct PushPeers`).
#[repr(C)]
#[derive(Clone, Copy)]
struct PushPeers {
    recv: [CUdeviceptr; MAX_RANKS],
}

// SAFETY: plain device addresses in #[repr(C)] structs laid out as the kernel's.
unsafe impl DeviceRepr for Peers {}
unsafe impl DeviceRepr for PushPeers {}

/// This rank's side of one of our all-reduces.
pub struct OneShot {
    pub kernel: Kernel,
    stream: Arc<CudaStream>,
    /// The one-shot (or pull) entry points: f32, bf16.
    one: [CudaFunction; 2],
    /// The two-shot entry points (push kernels only).
    two: Option<[CudaFunction; 2]>,
    /// Where `Kernel::Push` turns two-shot.
    twoshot_from: u64,
    /// Every rank's mapping of each exported region: `mapped[region][rank]`.
    mapped: Vec<[CUdeviceptr; MAX_RANKS]>,
    /// This rank's regions, held to be freed after `drop` drained the stream (the kernel
    /// reaches them through `mapped`).
    _own: Vec<DeviceMem>,
    opened: Vec<CUdeviceptr>,
    rank: usize,
    world: usize,
    /// Largest message (bytes) the regions hold.
    pub capacity_bytes: usize,
    epoch: u32,
}

impl OneShot {
    /// Allocates this rank's regions, exchanges IPC handles with every rank of `group` and maps
    /// theirs; every rank must call it at the same point of the run.
    pub fn open(
        gpu: &crate::gpu::Gpu,
        group: &mut Group,
        kernel: Kernel,
        capacity_bytes: usize,
        twoshot_from: u64,
    ) -> Result<OneShot> {
        let (rank, world) = (group.rank, group.world_size);
        if world > MAX_RANKS {
            bail!("our one-shot all-reduce serves at most {MAX_RANKS} ranks, this run has {world}");
        }
        let pull = kernel == Kernel::Pull;
        let load = |two_shot| -> Result<[CudaFunction; 2]> {
            let f = |dtype| {
                let name = entry(pull, two_shot, dtype).expect("f32 and bf16 entries exist");
                gpu.function("opbench_comm_oneshot", ptx::COMM_ONESHOT, name)
            };
            Ok([f(Dtype::F32)?, f(Dtype::Bf16)?])
        };
        let one = load(false)?;
        let two = if pull { None } else { Some(load(true)?) };
        // Whole 16-byte units, so every half starts aligned for any element type.
        let capacity_bytes = capacity_bytes.max(16).next_multiple_of(16);
        // Zeroed before any peer can see them.
        let own = region_bytes(kernel, capacity_bytes, world)
            .into_iter()
            .map(|bytes| DeviceMem::zeroed(&gpu.ctx, bytes, "an all-reduce region"))
            .collect::<Result<Vec<_>>>()?;
        let mut mine = Vec::with_capacity(64 * own.len());
        for mem in &own {
            let mut h = sys::CUipcMemHandle { reserved: [0; 64] };
            // SAFETY: `mem` is a cuMemAlloc allocation of this context; `h` is a valid out value.
            unsafe { sys::cuIpcGetMemHandle(&mut h, mem.ptr) }
                .result()
                .context("cuIpcGetMemHandle")?;
            mine.extend(h.reserved.iter().map(|c| *c as u8));
        }
        let want = mine.len();
        let all = group.all_gather_bytes(mine)?;
        let mut mapped = vec![[0 as CUdeviceptr; MAX_RANKS]; own.len()];
        let mut opened = Vec::new();
        for (r, bytes) in all.iter().enumerate() {
            if bytes.len() != want {
                bail!(
                    "rank {r} sent {} bytes of IPC handles, not {want}",
                    bytes.len()
                );
            }
            for (k, m) in mapped.iter_mut().enumerate() {
                if r == rank {
                    m[r] = own[k].ptr;
                    continue;
                }
                let mut h = sys::CUipcMemHandle { reserved: [0; 64] };
                for (d, s) in h.reserved.iter_mut().zip(&bytes[k * 64..(k + 1) * 64]) {
                    *d = *s as std::ffi::c_char;
                }
                // SAFETY: `h` is a handle another rank exported from a live allocation; `m[r]`
                // is a valid out pointer. Peer access is enabled lazily by the flag.
                unsafe {
                    sys::cuIpcOpenMemHandle_v2(
                        &mut m[r],
                        h,
                        sys::CUipcMem_flags_enum::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS as u32,
                    )
                }
                .result()
                .with_context(|| {
                    format!("cuIpcOpenMemHandle of rank {r}'s buffer (can this GPU reach it?)")
                })?;
                opened.push(m[r]);
            }
        }
        Ok(OneShot {
            kernel,
            stream: gpu.stream.clone(),
            one,
            two,
            twoshot_from,
            mapped,
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
        let d = match T::DTYPE {
            Dtype::F32 => 0,
            Dtype::Bf16 => 1,
            d => bail!("one-shot all-reduce of {}: f32 and bf16 only", d.name()),
        };
        let two_shot = self
            .kernel
            .two_shot(bytes as u64, self.world, self.twoshot_from);
        let func = match (&self.two, two_shot) {
            (Some(two), true) => &two[d],
            _ => &self.one[d],
        };
        self.epoch = self.epoch.wrapping_add(1);
        let pull = self.kernel == Kernel::Pull;
        let blocks = if pull {
            bytes.div_ceil(BYTES_PER_BLOCK).clamp(1, MAX_BLOCKS)
        } else {
            // One 8-byte unit per thread: no barrier to pay per block, and every store in
            // flight at once.
            bytes
                .div_ceil(8 * THREADS as usize)
                .clamp(1, MAX_PUSH_BLOCKS)
        } as u32;
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let (n64, me, world, epoch) = (n as u64, self.rank as i32, self.world as i32, self.epoch);
        let pull_peers = Peers {
            data: self.mapped[0],
            signal: *self.mapped.get(1).unwrap_or(&[0; MAX_RANKS]),
        };
        let push_peers = PushPeers {
            recv: self.mapped[0],
        };
        // The pull kernel's half size, the push kernels' slot size.
        let region = if pull {
            self.capacity_bytes as u64
        } else {
            slot_bytes(self.capacity_bytes) as u64
        };
        let mut b = self.stream.launch_builder(func);
        b.arg(src).arg(dst).arg(&n64);
        if pull {
            b.arg(&pull_peers);
        } else {
            b.arg(&push_peers);
        }
        b.arg(&region).arg(&me).arg(&world).arg(&epoch);
        // SAFETY: the arguments match opbench_{oneshot,push,twoshot}_allreduce_{f32,bf16}(in, out, n,
        // peers, half_bytes | slot_bytes, me, world, epoch); `src` and `dst` hold `n` elements;
        // every peer pointer maps a live region of the size `Kernel::region_bytes` gives for
        // `capacity_bytes` (checked above) and this run's world.
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
