//! How the split-K TMA kernel cuts a product: which block tile, and over how many K ranges,
//! so that skinny products (few output tiles) still give every SM work. Pure arithmetic.

/// Block tiles of the TMA kernels: rows = 64 per consumer warpgroup, columns = the wgmma N.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TmaTile {
    /// One consumer warpgroup (products of at most 64 rows).
    T64x128,
    T128x128,
    T128x256,
}

impl TmaTile {
    pub fn bm(self) -> usize {
        match self {
            TmaTile::T64x128 => 64,
            TmaTile::T128x128 | TmaTile::T128x256 => 128,
        }
    }

    pub fn bn(self) -> usize {
        match self {
            TmaTile::T64x128 | TmaTile::T128x128 => 128,
            TmaTile::T128x256 => 256,
        }
    }

    /// Shared-memory ring depth: as many 64-deep k-tiles as fit in 192 KiB (one CTA per SM).
    pub fn stages(self) -> usize {
        (192 * 1024) / ((self.bm() + self.bn()) * 128)
    }

    pub fn name(self) -> &'static str {
        match self {
            TmaTile::T64x128 => "64x128",
            TmaTile::T128x128 => "128x128",
            TmaTile::T128x256 => "128x256",
        }
    }

    /// Output tiles of an M x N product.
    pub fn tiles(self, m: usize, n: usize) -> usize {
        m.div_ceil(self.bm()) * n.div_ceil(self.bn())
    }
}

/// Dynamic shared memory of a TMA kernel: the stage ring, 1 KiB to align it to the swizzle
/// pattern, two 8-byte mbarriers per stage and one flag word.
pub fn tma_smem_bytes(tile: TmaTile) -> u32 {
    let st = tile.stages();
    (st * (tile.bm() + tile.bn()) * 128 + 1024 + 16 * st + 16) as u32
}

/// K depth of one TMA k-tile.
pub const TMA_BK: usize = 64;

/// A split-K launch: the tile, the number of K ranges per tile, and the work units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitPlan {
    pub tile: TmaTile,
    pub splits: usize,
    pub units: usize,
}

impl SplitPlan {
    /// f32 workspace the partial sums need: one tile per output tile (0 without a split).
    pub fn workspace_floats(&self, m: usize, n: usize) -> usize {
        if self.splits > 1 {
            self.tile.tiles(m, n) * self.tile.bm() * self.tile.bn()
        } else {
            0
        }
    }

    /// CTAs to launch: every unit, or one per SM (they walk the rest).
    pub fn grid(&self, sms: usize) -> usize {
        self.units.min(sms)
    }
}

/// Chooses the tile and split for an M x N x K product on `sms` SMs, with at most
/// `workspace_floats` of f32 workspace.
///
/// Tile: 64x128 for up to 64 rows, and wherever 64x128 tiles make at most two waves;
/// otherwise 128x128 up to 128 rows or where 128x256 tiles would not fill half the SMs;
/// else 128x256. Split: the reduction through L2 costs more than idle SMs save unless the
/// tiles are few, so K is split only where the tiles fill at most a quarter of the SMs, into
/// as many ranges as make the units fill the SMs once, each at least two k-tiles deep up to
/// 64 rows and eight above (docs/notes/gemm.md has the measurements).
pub fn plan_split(m: usize, n: usize, k: usize, sms: usize, workspace_floats: usize) -> SplitPlan {
    let tile = if m <= 64 || TmaTile::T64x128.tiles(m, n) <= 2 * sms {
        TmaTile::T64x128
    } else if m <= 128 || TmaTile::T128x256.tiles(m, n) < sms / 2 {
        TmaTile::T128x128
    } else {
        TmaTile::T128x256
    };
    let tiles = tile.tiles(m, n);
    let k_tiles = k.div_ceil(TMA_BK);
    let min_range = if m <= 64 { 2 } else { 8 };
    let mut splits = if 4 * tiles <= sms {
        (sms / tiles).clamp(1, (k_tiles / min_range).max(1))
    } else {
        1
    };
    let mut plan = SplitPlan {
        tile,
        splits,
        units: tiles * splits,
    };
    if plan.workspace_floats(m, n) > workspace_floats {
        splits = 1;
        plan = SplitPlan {
            tile,
            splits,
            units: tiles,
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
        assert_eq!(TmaTile::T128x128.stages(), 6);
        assert_eq!(TmaTile::T64x128.stages(), 8);
        // The kernel's own layout: 4 x 48 KiB + 1 KiB + 4 x 16 + 16.
        assert_eq!(tma_smem_bytes(TmaTile::T128x256), 196608 + 1024 + 80);
        for t in [TmaTile::T64x128, TmaTile::T128x128, TmaTile::T128x256] {
            assert!(tma_smem_bytes(t) <= 227 * 1024, "{t:?}");
        }
    }

    #[test]
    fn decode_shapes_split_k() {
        // k/v projection, one token: 2 tiles of 64x128, K = 2048 is 32 k-tiles -> 16 ranges.
        let p = plan_split(1, 256, 2048, 132, WS);
        assert_eq!(p.tile, TmaTile::T64x128);
        assert_eq!(p.splits, 16);
        assert_eq!(p.units, 32);
        assert_eq!(p.grid(132), 32);
        // q/o at 32 tokens: 16 tiles -> 8 ranges of 4 k-tiles, 128 units.
        let p = plan_split(32, 2048, 2048, 132, WS);
        assert_eq!((p.splits, p.units), (8, 128));
        // down at 128 tokens: 32 tiles of 64x128, K = 5632 (88 k-tiles) -> 4 ranges.
        let p = plan_split(128, 2048, 5632, 132, WS);
        assert_eq!(p.tile, TmaTile::T64x128);
        assert_eq!((p.splits, p.units), (4, 128));
        assert_eq!(p.workspace_floats(128, 2048), 32 * 64 * 128);
        // lm_head at 128 tokens: 500 tiles of 64x128 would not fit at once -> 128x128, no split.
        let p = plan_split(128, 32000, 2048, 132, WS);
        assert_eq!((p.tile, p.splits), (TmaTile::T128x128, 1));
        assert_eq!(p.grid(132), 132);
    }

    #[test]
    fn mid_size_shapes_take_64_row_tiles_and_split_only_when_few() {
        // q/o at 512 tokens: 128 tiles of 64x128 make one wave: no split.
        let p = plan_split(512, 2048, 2048, 132, WS);
        assert_eq!((p.tile, p.splits), (TmaTile::T64x128, 1));
        // k/v at 512 tokens: 16 tiles fill an eighth of the SMs -> 4 ranges of 8 k-tiles.
        let p = plan_split(512, 256, 2048, 132, WS);
        assert_eq!((p.tile, p.splits, p.units), (TmaTile::T64x128, 4, 64));
        // k/v at 2048 tokens: 64 tiles, more than a quarter of the SMs: no split.
        let p = plan_split(2048, 256, 2048, 132, WS);
        assert_eq!((p.tile, p.splits), (TmaTile::T64x128, 1));
        // gate/up at 8 tokens: 44 tiles fill a third of the SMs: no split.
        let p = plan_split(8, 5632, 2048, 132, WS);
        assert_eq!((p.tile, p.splits), (TmaTile::T64x128, 1));
        // gate/up at 512 tokens: 352 tiles of 64x128 are more than two waves -> 128x256.
        let p = plan_split(512, 5632, 2048, 132, WS);
        assert_eq!((p.tile, p.splits), (TmaTile::T128x256, 1));
        // k/v at 128 tokens: 4 tiles, K = 32 k-tiles -> 4 ranges (eight k-tiles each).
        let p = plan_split(128, 256, 2048, 132, WS);
        assert_eq!((p.tile, p.splits), (TmaTile::T64x128, 4));
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
        // K = 256: 4 k-tiles -> at most 2 ranges.
        assert_eq!(plan_split(1, 256, 256, 132, WS).splits, 2);
        // No workspace: no split.
        assert_eq!(plan_split(1, 256, 2048, 132, 0).splits, 1);
    }
}
