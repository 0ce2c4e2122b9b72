//! How the split-K TMA kernel cuts a product: which block tile, and over how many K ranges,
//! so that skinny products (few output tiles) still give every SM work. Pure arithmetic.

/// Block tiles (rows x columns of C) of the TMA kernels. The plain ones have 64 rows per
/// consumer warpgroup and the wgmma N as columns; the swapped ones compute C^T = B^T * A^T, so
/// their 64 columns are wgmma's M side and their few rows (tokens) its N side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TmaTile {
    /// One consumer warpgroup (products of at most 64 rows).
    T64x128,
    T128x128,
    /// 128x256 cut narrower, for products whose 128x256 tiles leave much of the last wave idle.
    T128x192,
    T128x256,
    /// Operand-swapped, one consumer warpgroup: 16 rows (tokens) by 64 columns.
    Swap16x64,
    /// Operand-swapped, 32 or 64 rows by 64 columns, whose stages hold two 64-deep k-tiles
    /// (128 of K): each row of A and B is read 256 contiguous bytes at a time.
    Swap32x64K128,
    Swap64x64K128,
}

impl TmaTile {
    pub fn bm(self) -> usize {
        match self {
            TmaTile::Swap16x64 => 16,
            TmaTile::Swap32x64K128 => 32,
            TmaTile::T64x128 | TmaTile::Swap64x64K128 => 64,
            TmaTile::T128x128 | TmaTile::T128x192 | TmaTile::T128x256 => 128,
        }
    }

    pub fn bn(self) -> usize {
        match self {
            TmaTile::Swap16x64 | TmaTile::Swap32x64K128 | TmaTile::Swap64x64K128 => 64,
            TmaTile::T64x128 | TmaTile::T128x128 => 128,
            TmaTile::T128x192 => 192,
            TmaTile::T128x256 => 256,
        }
    }

    /// Whether the kernel swaps the operands (C^T = B^T * A^T).
    pub fn swapped(self) -> bool {
        matches!(
            self,
            TmaTile::Swap16x64 | TmaTile::Swap32x64K128 | TmaTile::Swap64x64K128
        )
    }

    /// Consumer warpgroups of the kernel.
    pub fn consumers(self) -> usize {
        if self.swapped() {
            1
        } else {
            self.bm() / 64
        }
    }

    /// Shared-memory ring depth: as many stages (`ksub` 64-deep k-tiles each) as fit in 192 KiB
    /// (one CTA per SM).
    pub fn stages(self) -> usize {
        (192 * 1024) / ((self.bm() + self.bn()) * 128 * self.ksub())
    }

    /// 64-deep k-tiles the stage ring holds at once.
    pub fn ring_k_tiles(self) -> usize {
        self.stages() * self.ksub()
    }

    /// 64-deep k-tiles per stage.
    pub fn ksub(self) -> usize {
        if matches!(self, TmaTile::Swap32x64K128 | TmaTile::Swap64x64K128) {
            2
        } else {
            1
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TmaTile::T64x128 => "64x128",
            TmaTile::T128x128 => "128x128",
            TmaTile::T128x192 => "128x192",
            TmaTile::T128x256 => "128x256",
            TmaTile::Swap16x64 => "swap_16x64",
            TmaTile::Swap32x64K128 => "swap_32x64_k128",
            TmaTile::Swap64x64K128 => "swap_64x64_k128",
        }
    }

    /// Share of the SM slots of its waves that the tiles of an M x N product fill, one tile
    /// per SM at a time (1.0: the last wave is full).
    pub fn wave_fill(self, m: usize, n: usize, sms: usize) -> f64 {
        let tiles = self.tiles(m, n);
        tiles as f64 / (tiles.div_ceil(sms) * sms) as f64
    }

    /// Output tiles of an M x N product.
    pub fn tiles(self, m: usize, n: usize) -> usize {
        m.div_ceil(self.bm()) * n.div_ceil(self.bn())
    }
}

/// Dynamic shared memory of a TMA kernel: the stage ring, 1 KiB to align it to the swizzle
/// pattern, two 8-byte mbarriers per stage and one flag word, then (aligned to 128 bytes) the
/// epilogue's two alternating buffers of C rows of 128 bytes: a 64 x 64 subtile per consumer
/// warpgroup for the plain tiles, the whole bm x 64 tile for the swapped ones.
pub fn tma_smem_bytes(tile: TmaTile) -> u32 {
    let st = tile.stages();
    let epilogue = if tile.swapped() {
        128 + 2 * tile.bm() * 128
    } else {
        128 + tile.consumers() * 2 * 64 * 128
    };
    (st * tile.ksub() * (tile.bm() + tile.bn()) * 128 + 1024 + 16 * st + 16 + epilogue) as u32
}

/// K depth of one TMA k-tile.
pub const TMA_BK: usize = 64;

/// How the partial tiles of a split meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduction {
    /// Every range adds into one zeroed f32 tile (vector atomics in L2); the last to arrive
    /// reads the sum and zeroes the tile again.
    Atomic,
    /// Every range stores its partial tile in its own slot; the last to arrive adds the
    /// others' slots to its registers (no atomics, no zeroing, `splits` tiles of workspace).
    Slots,
}

impl Reduction {
    pub fn name(self) -> &'static str {
        match self {
            Reduction::Atomic => "atomic",
            Reduction::Slots => "slots",
        }
    }
}

/// A split-K launch: the tile, the number of K ranges per tile, how their partial tiles
/// meet, and the work units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitPlan {
    pub tile: TmaTile,
    pub splits: usize,
    pub reduction: Reduction,
    pub units: usize,
}

impl SplitPlan {
    /// f32 workspace the partial sums need: one tile per output tile, or one per range with
    /// slots (0 without a split).
    pub fn workspace_floats(&self, m: usize, n: usize) -> usize {
        if self.splits == 1 {
            return 0;
        }
        let per_tile = match self.reduction {
            Reduction::Atomic => 1,
            Reduction::Slots => self.splits,
        };
        self.tile.tiles(m, n) * per_tile * self.tile.bm() * self.tile.bn()
    }

    /// CTAs to launch: every unit, or one per SM (they walk the rest).
    pub fn grid(&self, sms: usize) -> usize {
        self.units.min(sms)
    }
}

/// Chooses the tile and split for an M x N x K product on `sms` SMs, with at most
/// `workspace_floats` of f32 workspace (docs/notes/gemm.md has the measurements behind it).
///
/// Few rows (tokens): wherever the operand-swapped tiles make at most one wave, they are
/// used, as libraries do: a plain tile's 64 rows would be mostly padding. They are 16 rows up
/// to 16, else 32, by 64 columns; above 64 rows, 64 where K has 64 k-tiles or more (half the
/// reads of B from L2, paid for by a split into ranges that are still deep) or where 32-row
/// tiles would make more than one wave. The 32- and 64-row tiles take two k-tiles per stage
/// (with one, k/v at 2048 tokens reads its operands from DRAM 128 bytes per row at a time:
/// 81-82% of cuBLAS on the H200 against 87-88%). Their K split fills the SMs once; where the
/// tiles already fill an eighth of them, each range is at least two turns of the stage ring (a
/// range the ring holds whole is all pipeline fill and drain, and still pays its reduction:
/// q/o at 32 tokens, two such ranges, 84-87% of cuBLAS on the H100 against 90-93% unsplit),
/// else two k-tiles.
///
/// Otherwise the plain tiles, unsplit (there are then too many tiles for a split to pay:
/// docs/notes/gemm.md): 64x128 for up to 64 rows and wherever 64x128 tiles make at most two
/// waves; otherwise 128x128 up to 128 rows or where 128x256 tiles would not fill half the
/// SMs; else 128x256, or 128x192 where those fill their waves' SM slots at least 10 points
/// better (gate/up at 512 tokens: 120 tiles on 132 SMs against 88).
///
/// Two ranges meet through slots (one store and one read), more through atomics (the work
/// of the sum spread over every range).
pub fn plan_split(m: usize, n: usize, k: usize, sms: usize, workspace_floats: usize) -> SplitPlan {
    let k_tiles = k.div_ceil(TMA_BK);
    let swap = if m <= 16 {
        TmaTile::Swap16x64
    } else if m <= 64 || (k_tiles < 64 && TmaTile::Swap32x64K128.tiles(m, n) <= sms) {
        TmaTile::Swap32x64K128
    } else {
        TmaTile::Swap64x64K128
    };
    let (tile, splits) = if swap.tiles(m, n) <= sms {
        let tiles = swap.tiles(m, n);
        let min_range = if 8 * tiles <= sms {
            2
        } else {
            2 * swap.ring_k_tiles()
        };
        let splits = (sms / tiles).clamp(1, (k_tiles / min_range).max(1));
        (swap, splits)
    } else if m <= 64 || TmaTile::T64x128.tiles(m, n) <= 2 * sms {
        (TmaTile::T64x128, 1)
    } else if m <= 128 || TmaTile::T128x256.tiles(m, n) < sms / 2 {
        (TmaTile::T128x128, 1)
    } else if TmaTile::T128x192.wave_fill(m, n, sms) >= TmaTile::T128x256.wave_fill(m, n, sms) + 0.1
    {
        (TmaTile::T128x192, 1)
    } else {
        (TmaTile::T128x256, 1)
    };
    let plan = SplitPlan {
        tile,
        splits,
        reduction: if splits == 2 {
            Reduction::Slots
        } else {
            Reduction::Atomic
        },
        units: tile.tiles(m, n) * splits,
    };
    if plan.workspace_floats(m, n) > workspace_floats {
        return SplitPlan {
            tile,
            splits: 1,
            reduction: Reduction::Atomic,
            units: tile.tiles(m, n),
        };
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    const WS: usize = 16 << 20;

    #[test]
    fn stage_rings_fill_192_kib() {
        assert_eq!(TmaTile::T128x256.stages(), 4);
        assert_eq!(TmaTile::T128x192.stages(), 4);
        assert_eq!(TmaTile::T128x128.stages(), 6);
        assert_eq!(TmaTile::T64x128.stages(), 8);
        // The kernel's own layout: 4 x 48 KiB + 1 KiB + 4 x 16 + 16, then 128 + 4 x 8 KiB.
        assert_eq!(
            tma_smem_bytes(TmaTile::T128x256),
            196608 + 1024 + 80 + 128 + 32768
        );
        for t in [
            TmaTile::T64x128,
            TmaTile::T128x128,
            TmaTile::T128x192,
            TmaTile::T128x256,
        ] {
            assert!(tma_smem_bytes(t) <= 227 * 1024, "{t:?}");
        }
    }

    #[test]
    fn swapped_stage_rings_match_the_kernels() {
        assert_eq!(TmaTile::Swap16x64.stages(), 19);
        assert_eq!(TmaTile::Swap32x64K128.stages(), 8);
        assert_eq!(TmaTile::Swap64x64K128.stages(), 6);
        assert_eq!(TmaTile::Swap16x64.ring_k_tiles(), 19);
        assert_eq!(TmaTile::Swap32x64K128.ring_k_tiles(), 16);
        assert_eq!(TmaTile::Swap64x64K128.ring_k_tiles(), 12);
        // The kernel source instantiates the same tiles, ring depths and k-tiles per stage.
        let src = include_str!("../../kernels/gemm_tc_tma.cu");
        for (t, sym) in [
            (TmaTile::Swap16x64, "16x64"),
            (TmaTile::Swap32x64K128, "32x64_k128"),
            (TmaTile::Swap64x64K128, "64x64_k128"),
        ] {
            assert_eq!(format!("swap_{sym}"), t.name());
            let inst = format!(
                "TMA_GEMM_SWAP_ALL({sym}, {}, {}, {})",
                t.bm(),
                t.stages(),
                t.ksub()
            );
            assert!(src.contains(&inst), "kernels/gemm_tc_tma.cu lacks {inst}");
            assert!(tma_smem_bytes(t) <= 227 * 1024, "{t:?}");
            assert_eq!((t.bn(), t.consumers()), (64, 1));
            assert!(t.swapped());
        }
        assert!(!TmaTile::T64x128.swapped());
        // The kernel's own layout for 64 rows: 6 stages of two (64 + 64) x 128-byte k-tiles,
        // 1 KiB, 6 x 16 + 16 of barriers and flag, then 128 + two 64 x 128-byte C tiles.
        assert_eq!(
            tma_smem_bytes(TmaTile::Swap64x64K128),
            6 * 2 * 128 * 128 + 1024 + 96 + 16 + 128 + 2 * 64 * 128
        );
    }

    #[test]
    fn decode_shapes_take_swapped_tiles() {
        // k/v projection, one token: 4 tiles of 16x64, K = 2048 is 32 k-tiles -> 16 ranges.
        let p = plan_split(1, 256, 2048, 132, WS);
        assert_eq!(p.tile, TmaTile::Swap16x64);
        assert_eq!(
            (p.splits, p.units, p.reduction),
            (16, 64, Reduction::Atomic)
        );
        assert_eq!(p.grid(132), 64);
        // q/o at one token: 32 tiles of 16x64 fill more than an eighth of the SMs -> ranges
        // of at least two turns of the 19-stage ring: no split.
        let p = plan_split(1, 2048, 2048, 132, WS);
        assert_eq!((p.tile, p.splits), (TmaTile::Swap16x64, 1));
        // q/o at 32 tokens: 32 tiles of 32x64; ranges of two turns of the 16-k-tile ring would
        // be 32 k-tiles, all of K: no split.
        let p = plan_split(32, 2048, 2048, 132, WS);
        assert_eq!((p.tile, p.splits, p.units), (TmaTile::Swap32x64K128, 1, 32));
        assert_eq!(p.workspace_floats(32, 2048), 0);
        // down at one token: 32 tiles, K = 5632 (88 k-tiles), ranges of at least 38 -> 2,
        // through slots.
        let p = plan_split(1, 2048, 5632, 132, WS);
        assert_eq!(p.tile, TmaTile::Swap16x64);
        assert_eq!((p.splits, p.units, p.reduction), (2, 64, Reduction::Slots));
        assert_eq!(p.workspace_floats(1, 2048), 32 * 2 * 16 * 64);
        // q/o at 128 tokens: 128 tiles of 32x64, one wave, no split.
        let p = plan_split(128, 2048, 2048, 132, WS);
        assert_eq!(
            (p.tile, p.splits, p.units),
            (TmaTile::Swap32x64K128, 1, 128)
        );
        // down at 128 tokens, K = 88 k-tiles: 64 tiles of 64x64, two ranges through slots.
        let p = plan_split(128, 2048, 5632, 132, WS);
        assert_eq!(p.tile, TmaTile::Swap64x64K128);
        assert_eq!((p.splits, p.units, p.reduction), (2, 128, Reduction::Slots));
        // down at 32 tokens stays at 32-row tiles: 32 of them, 88 k-tiles -> 2 ranges.
        let p = plan_split(32, 2048, 5632, 132, WS);
        assert_eq!((p.tile, p.splits), (TmaTile::Swap32x64K128, 2));
        // k/v at 128 tokens: 16 tiles (an eighth of the SMs) -> 8 ranges of 4 k-tiles; at 512
        // tokens: 64 tiles, 32 k-tiles, no split.
        let p = plan_split(128, 256, 2048, 132, WS);
        assert_eq!((p.tile, p.splits), (TmaTile::Swap32x64K128, 8));
        let p = plan_split(512, 256, 2048, 132, WS);
        assert_eq!((p.tile, p.splits), (TmaTile::Swap32x64K128, 1));
        // gate/up at 8 tokens: 88 tiles, no split.
        let p = plan_split(8, 5632, 2048, 132, WS);
        assert_eq!((p.tile, p.splits), (TmaTile::Swap16x64, 1));
        // lm_head at 128 tokens: 2000 swapped tiles -> plain 128x128 (500 tiles of 64x128
        // would not fit at once), no split.
        let p = plan_split(128, 32000, 2048, 132, WS);
        assert_eq!((p.tile, p.splits), (TmaTile::T128x128, 1));
        assert_eq!(p.grid(132), 132);
    }

    #[test]
    fn mid_size_shapes_take_the_tile_that_fills_a_wave() {
        // q/o at 512 tokens: 128 tiles of 64x128 make one wave: no split.
        let p = plan_split(512, 2048, 2048, 132, WS);
        assert_eq!((p.tile, p.splits), (TmaTile::T64x128, 1));
        // k/v at 2048 tokens: 256 swapped tiles of 32 rows, 128 of 64 rows: one wave of
        // those, no split.
        let p = plan_split(2048, 256, 2048, 132, WS);
        assert_eq!((p.tile, p.splits), (TmaTile::Swap64x64K128, 1));
        // gate/up at 128 tokens: 352 swapped tiles -> 88 of 64x128.
        let p = plan_split(128, 5632, 2048, 132, WS);
        assert_eq!((p.tile, p.splits), (TmaTile::T64x128, 1));
        // gate/up at 512 tokens: 352 tiles of 64x128 are more than two waves; 88 tiles of
        // 128x256 fill two thirds of the SMs, 120 of 128x192 nine tenths -> 128x192.
        let p = plan_split(512, 5632, 2048, 132, WS);
        assert_eq!((p.tile, p.splits), (TmaTile::T128x192, 1));
        assert!((TmaTile::T128x256.wave_fill(512, 5632, 132) - 88.0 / 132.0).abs() < 1e-12);
        // gate/up at 2048 tokens: 352 tiles of 128x256 (89% of three waves) against 480 of
        // 128x192 (91% of four) -> 128x256; lm_head at 512 tokens: 500 tiles (95%) -> 128x256.
        assert_eq!(
            plan_split(2048, 5632, 2048, 132, WS).tile,
            TmaTile::T128x256
        );
        assert_eq!(
            plan_split(512, 32000, 2048, 132, WS).tile,
            TmaTile::T128x256
        );
        // Plain tiles never split: there are more than a quarter as many as SMs.
        for (m, n) in [(160, 4288), (2048, 384), (17, 8512), (16384, 64)] {
            let p = plan_split(m, n, 8192, 132, WS);
            assert!(!p.tile.swapped() && p.splits == 1, "{m}x{n}: {p:?}");
        }
    }

    #[test]
    fn large_products_do_not_split() {
        let p = plan_split(4096, 4096, 4096, 132, WS);
        assert_eq!(p.tile, TmaTile::T128x256);
        assert_eq!((p.splits, p.units), (1, 512));
        assert_eq!(p.workspace_floats(4096, 4096), 0);
        // lm_head at one token: 250 tiles of 64x128 already cover the SMs.
        assert_eq!(plan_split(1, 32000, 2048, 132, WS).splits, 1);
        assert_eq!(plan_split(1, 32000, 2048, 132, WS).grid(132), 132);
    }

    #[test]
    fn split_never_exceeds_the_k_tiles_or_the_workspace() {
        // K = 64: one k-tile, nothing to split.
        assert_eq!(plan_split(1, 256, 64, 132, WS).splits, 1);
        // K = 256: 4 k-tiles -> at most 2 ranges, which meet through slots.
        let p = plan_split(1, 256, 256, 132, WS);
        assert_eq!((p.splits, p.reduction), (2, Reduction::Slots));
        // No workspace: no split.
        assert_eq!(plan_split(1, 256, 2048, 132, 0).splits, 1);
    }
}
