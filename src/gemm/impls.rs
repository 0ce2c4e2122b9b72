//! The catalog of GEMM implementations: libraries (cuBLAS, candle) and our kernel ladder, with
//! the dtypes each supports and the shapes each kernel accepts.

use super::dtype::Dtype;
use clap::ValueEnum;

/// Who computes a point. Ladder kernels are named after the optimization they add.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, ValueEnum)]
pub enum Impl {
    /// cuBLAS `cublasGemmEx` through cudarc: the reference peak.
    #[value(name = "cublas")]
    Cublas,
    /// candle's `Tensor::matmul` (cuBLAS underneath on the GPU, the gemm crate on the CPU).
    #[value(name = "candle")]
    Candle,
    /// f32 ladder 1: one thread per output, threads walk rows (uncoalesced).
    #[value(name = "naive")]
    Naive,
    /// f32 ladder 2: one thread per output, threads walk columns (coalesced).
    #[value(name = "coalesced")]
    Coalesced,
    /// f32 ladder 3: 32x32 shared-memory tiles.
    #[value(name = "smem_tiled")]
    SmemTiled,
    /// f32 ladder 4: 128x128 block tile, 8x8 outputs per thread in registers.
    #[value(name = "blocktile_2d")]
    Blocktile2d,
    /// f32 ladder 5: step 4 with float4 loads/stores and transposed A in shared memory.
    #[value(name = "vectorized_2d")]
    Vectorized2d,
    /// f32 ladder 6: warp tiling, double-buffered shared memory, BK = 8.
    #[value(name = "warptile_bk8")]
    WarptileBk8,
    /// f32 ladder 6': the same with BK = 16.
    #[value(name = "warptile_bk16")]
    WarptileBk16,
    /// Tensor cores 1: mma.sync + ldmatrix, one synchronous shared-memory stage.
    #[value(name = "mma_smem")]
    MmaSmem,
    /// Tensor cores 2: mma.sync, 128x128 tile, 4-stage cp.async pipeline.
    #[value(name = "mma_pipelined_128x128")]
    MmaPipelined128x128,
    /// Tensor cores 2': mma.sync, 128x256 tile, 3-stage cp.async pipeline.
    #[value(name = "mma_pipelined_128x256")]
    MmaPipelined128x256,
    /// Tensor cores 3: Hopper wgmma (m64n256k16) from 128B-swizzled shared memory, 128x256 tile.
    #[value(name = "wgmma_128x256")]
    Wgmma128x256,
    /// Tensor cores 4: tiles by TMA into an mbarrier-guarded ring; consumer thread 0 issues
    /// the loads between its own MMAs; one wgmma group kept in flight.
    #[value(name = "tma_128x256")]
    Tma128x256,
    /// Tensor cores 5: a producer warpgroup issues the TMA loads (warp specialization with
    /// setmaxnreg), two consumer warpgroups only multiply.
    #[value(name = "tma_ws_128x256")]
    TmaWs128x256,
    /// Tensor cores 6: step 5 launched persistent (one CTA per SM walking the tiles), so the
    /// producer loads the next tile while the consumers store the last.
    #[value(name = "tma_ws_persistent_128x256")]
    TmaWsPersistent128x256,
    /// Tensor cores 7: step 6 in 2-CTA clusters on vertically adjacent tiles, each CTA loading
    /// half of the shared B tile and multicasting it to both.
    #[value(name = "tma_ws_cluster2_128x256")]
    TmaWsCluster2,
    /// Tensor cores 8: step 6 with the tile and K split chosen per shape so skinny products
    /// fill the GPU: for few rows (tokens) the operands swapped (64 weight columns on wgmma's M
    /// side, 16, 32 or 64 tokens on its N side) and K split; otherwise 64x128, 128x128 or 128x256
    /// tiles. Partial tiles meet in an f32 workspace.
    #[value(name = "tma_ws_splitk")]
    TmaWsSplitK,
}

/// What kind of code an implementation is (param `impl_kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImplKind {
    Library,
    Simt,
    TensorCore,
}

impl ImplKind {
    pub fn name(self) -> &'static str {
        match self {
            ImplKind::Library => "library",
            ImplKind::Simt => "simt_ladder",
            ImplKind::TensorCore => "tensor_core_ladder",
        }
    }
}

const F32_ONLY: &[Dtype] = &[Dtype::F32];
const HALF: &[Dtype] = &[Dtype::F16, Dtype::Bf16];

impl Impl {
    pub const ALL: [Impl; 18] = [
        Impl::Cublas,
        Impl::Candle,
        Impl::Naive,
        Impl::Coalesced,
        Impl::SmemTiled,
        Impl::Blocktile2d,
        Impl::Vectorized2d,
        Impl::WarptileBk8,
        Impl::WarptileBk16,
        Impl::MmaSmem,
        Impl::MmaPipelined128x128,
        Impl::MmaPipelined128x256,
        Impl::Wgmma128x256,
        Impl::Tma128x256,
        Impl::TmaWs128x256,
        Impl::TmaWsPersistent128x256,
        Impl::TmaWsCluster2,
        Impl::TmaWsSplitK,
    ];

    /// The `implementation` field of a result row.
    pub fn name(self) -> &'static str {
        match self {
            Impl::Cublas => "cublas",
            Impl::Candle => "candle",
            Impl::Naive => "naive",
            Impl::Coalesced => "coalesced",
            Impl::SmemTiled => "smem_tiled",
            Impl::Blocktile2d => "blocktile_2d",
            Impl::Vectorized2d => "vectorized_2d",
            Impl::WarptileBk8 => "warptile_bk8",
            Impl::WarptileBk16 => "warptile_bk16",
            Impl::MmaSmem => "mma_smem",
            Impl::MmaPipelined128x128 => "mma_pipelined_128x128",
            Impl::MmaPipelined128x256 => "mma_pipelined_128x256",
            Impl::Wgmma128x256 => "wgmma_128x256",
            Impl::Tma128x256 => "tma_128x256",
            Impl::TmaWs128x256 => "tma_ws_128x256",
            Impl::TmaWsPersistent128x256 => "tma_ws_persistent_128x256",
            Impl::TmaWsCluster2 => "tma_ws_cluster2_128x256",
            Impl::TmaWsSplitK => "tma_ws_splitk",
        }
    }

    pub fn kind(self) -> ImplKind {
        match self {
            Impl::Cublas | Impl::Candle => ImplKind::Library,
            Impl::Naive
            | Impl::Coalesced
            | Impl::SmemTiled
            | Impl::Blocktile2d
            | Impl::Vectorized2d
            | Impl::WarptileBk8
            | Impl::WarptileBk16 => ImplKind::Simt,
            Impl::MmaSmem
            | Impl::MmaPipelined128x128
            | Impl::MmaPipelined128x256
            | Impl::Wgmma128x256
            | Impl::Tma128x256
            | Impl::TmaWs128x256
            | Impl::TmaWsPersistent128x256
            | Impl::TmaWsCluster2
            | Impl::TmaWsSplitK => ImplKind::TensorCore,
        }
    }

    /// Position on its ladder (param `ladder_step`); 0 for libraries.
    pub fn ladder_step(self) -> i64 {
        match self {
            Impl::Cublas | Impl::Candle => 0,
            Impl::Naive | Impl::MmaSmem => 1,
            Impl::Coalesced | Impl::MmaPipelined128x128 | Impl::MmaPipelined128x256 => 2,
            Impl::SmemTiled | Impl::Wgmma128x256 => 3,
            Impl::Blocktile2d => 4,
            Impl::Vectorized2d => 5,
            Impl::WarptileBk8 | Impl::WarptileBk16 => 6,
            Impl::Tma128x256 => 4,
            Impl::TmaWs128x256 => 5,
            Impl::TmaWsPersistent128x256 => 6,
            Impl::TmaWsCluster2 => 7,
            Impl::TmaWsSplitK => 8,
        }
    }

    /// The dtypes this implementation computes on the GPU.
    pub fn gpu_dtypes(self) -> &'static [Dtype] {
        match self {
            Impl::Cublas => &[Dtype::F32, Dtype::Tf32, Dtype::F16, Dtype::Bf16],
            Impl::Candle => &[Dtype::F32, Dtype::F16, Dtype::Bf16],
            k if k.kind() == ImplKind::Simt => F32_ONLY,
            _ => HALF,
        }
    }

    /// Whether it runs on the model (TinyLlama) shapes by default: the libraries and the top
    /// of the tensor-core ladder (the cp.async wgmma kernel for reference, the persistent,
    /// cluster and split-K TMA kernels).
    pub fn in_model_sweep(self) -> bool {
        matches!(
            self,
            Impl::Cublas
                | Impl::Candle
                | Impl::Wgmma128x256
                | Impl::TmaWsPersistent128x256
                | Impl::TmaWsCluster2
                | Impl::TmaWsSplitK
        )
    }

    /// Whether it reads B stored [N, K] (`--b-layouts nk`): the libraries and the
    /// warp-specialized TMA kernels (a K-major B tile is one TMA box, as A's is).
    pub fn reads_b_nk(self) -> bool {
        matches!(
            self,
            Impl::Cublas
                | Impl::Candle
                | Impl::TmaWs128x256
                | Impl::TmaWsPersistent128x256
                | Impl::TmaWsCluster2
                | Impl::TmaWsSplitK
        )
    }

    /// Naive kernels take seconds per launch on the biggest shapes: they are skipped above
    /// `slow_max_gflop` (the sweep's setting).
    pub fn is_slow(self) -> bool {
        matches!(self, Impl::Naive | Impl::Coalesced)
    }

    /// `Err(reason)` when the kernel cannot compute this shape (tile divisibility, grid limits).
    pub fn supports(self, m: usize, n: usize, k: usize) -> Result<(), String> {
        let need = |what: &str, v: usize, d: usize| -> Result<(), String> {
            if v.is_multiple_of(d) {
                Ok(())
            } else {
                Err(format!(
                    "{} needs {what} % {d} == 0 ({what} = {v})",
                    self.name()
                ))
            }
        };
        if m == 0 || n == 0 || k == 0 {
            return Err("empty matrix".into());
        }
        if m.max(n).max(k) > i32::MAX as usize / 2 {
            return Err("dimension too large for 32-bit kernel indices".into());
        }
        match self {
            Impl::Cublas | Impl::Candle => Ok(()),
            Impl::Naive => {
                if n.div_ceil(32) > 65535 {
                    Err(format!(
                        "naive puts N/32 on grid.y, at most 65535 (N = {n})"
                    ))
                } else {
                    Ok(())
                }
            }
            Impl::Coalesced | Impl::SmemTiled => {
                if m.div_ceil(32) > 65535 {
                    Err(format!(
                        "{} puts M/32 on grid.y, at most 65535 (M = {m})",
                        self.name()
                    ))
                } else {
                    Ok(())
                }
            }
            Impl::Blocktile2d | Impl::Vectorized2d | Impl::WarptileBk8 => {
                need("M", m, 128)?;
                need("N", n, 128)?;
                need("K", k, 8)
            }
            Impl::WarptileBk16 => {
                need("M", m, 128)?;
                need("N", n, 128)?;
                need("K", k, 16)
            }
            Impl::MmaSmem | Impl::MmaPipelined128x128 => {
                need("N", n, 128)?;
                need("K", k, 32)
            }
            Impl::MmaPipelined128x256 => {
                need("N", n, 256)?;
                need("K", k, 32)
            }
            Impl::Wgmma128x256 => {
                need("N", n, 256)?;
                need("K", k, 64)
            }
            // TMA row strides must be multiples of 16 bytes; edges are zero-filled boxes and
            // predicated stores.
            Impl::Tma128x256
            | Impl::TmaWs128x256
            | Impl::TmaWsPersistent128x256
            | Impl::TmaWsCluster2
            | Impl::TmaWsSplitK => {
                need("N", n, 8)?;
                need("K", k, 8)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_ladders_ordered() {
        let mut names: Vec<_> = Impl::ALL.iter().map(|i| i.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Impl::ALL.len());
        assert!(Impl::Naive.ladder_step() < Impl::WarptileBk8.ladder_step());
        assert!(Impl::MmaSmem.ladder_step() < Impl::MmaPipelined128x128.ladder_step());
        assert_eq!(Impl::Cublas.kind(), ImplKind::Library);
    }

    #[test]
    fn cli_names_are_artifact_names() {
        use clap::ValueEnum;
        for i in Impl::ALL {
            assert_eq!(i.to_possible_value().unwrap().get_name(), i.name());
        }
    }

    #[test]
    fn the_transposed_b_layout_is_read_by_the_libraries_and_the_ws_tma_kernels() {
        let nk: Vec<_> = Impl::ALL.into_iter().filter(|i| i.reads_b_nk()).collect();
        assert_eq!(
            nk,
            vec![
                Impl::Cublas,
                Impl::Candle,
                Impl::TmaWs128x256,
                Impl::TmaWsPersistent128x256,
                Impl::TmaWsCluster2,
                Impl::TmaWsSplitK
            ]
        );
    }

    #[test]
    fn dtypes_per_family() {
        assert_eq!(Impl::WarptileBk16.gpu_dtypes(), &[Dtype::F32]);
        assert_eq!(Impl::MmaSmem.gpu_dtypes(), &[Dtype::F16, Dtype::Bf16]);
        assert!(Impl::Cublas.gpu_dtypes().contains(&Dtype::Tf32));
        assert!(!Impl::Candle.gpu_dtypes().contains(&Dtype::Tf32));
    }

    #[test]
    fn shape_requirements() {
        assert!(Impl::WarptileBk16.supports(4096, 4096, 4096).is_ok());
        let e = Impl::WarptileBk16.supports(100, 4096, 4096).unwrap_err();
        assert!(e.contains("M % 128"), "{e}");
        // tensor-core kernels take any M (decode: one token) but tile N and K.
        assert!(Impl::MmaPipelined128x128.supports(1, 2048, 5632).is_ok());
        assert!(Impl::MmaPipelined128x256.supports(8, 32000, 2048).is_ok());
        assert!(Impl::MmaPipelined128x256.supports(8, 128, 2048).is_err());
        assert!(Impl::Wgmma128x256.supports(1, 5632, 2048).is_ok());
        assert!(Impl::Wgmma128x256.supports(128, 256, 96).is_err());
        assert!(Impl::Naive.supports(3, 5, 7).is_ok());
        // TMA kernels take any M and edge tiles, but 16-byte row strides.
        assert!(Impl::TmaWsSplitK.supports(1, 256, 2048).is_ok());
        assert!(Impl::TmaWsCluster2.supports(333, 1000, 1032).is_ok());
        let e = Impl::TmaWs128x256.supports(64, 1001, 64).unwrap_err();
        assert!(e.contains("N % 8"), "{e}");
        assert!(Impl::Cublas.supports(0, 5, 7).is_err());
    }
}
