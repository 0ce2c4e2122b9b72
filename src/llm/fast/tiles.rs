//! The layout the tensor-core products read their weights in (kernels/decode_gemv_tc.cu): a
//! [n][k] matrix cut into 16-row tiles and 128-column spans, each (tile, span) 4 KiB of
//! contiguous memory ordered the way a warp's 16-byte loads take it, so that each load
//! instruction of a warp reads 512 contiguous bytes and each span is one run of 4 KiB.
//!
//! Within a span the lane (g = lane / 4, t = lane % 4) of the product's warp takes, for each
//! of its four mma steps u, the 16-byte chunk 4u + t of the tile's rows 2g (parity 0) and
//! 2g + 1 (parity 1); chunk (u, parity, lane) sits at ((u * 2 + parity) * 32 + lane) * 8
//! halves. Rows past n and columns past k are zeros, so no load needs a guard. In row-major
//! order each warp load reads eight 64-byte pieces of rows 4 KiB or more apart: at TinyLlama's
//! batch-16 shapes on an H200 a loop of the products' loads alone reads the tiles 7-14% faster
//! (docs/notes/decode.md).

/// Rows of one tile: the mma's m.
pub const TILE_ROWS: usize = super::plan::GEMV_TC_ROWS;
/// 16-byte chunks of one row in a span: the warp's four mma steps of four chunks (U = 4 in
/// kernels/decode_gemv_tc.cu).
pub const SPAN_CHUNKS: usize = 16;
/// Columns of one span.
pub const SPAN_COLS: usize = SPAN_CHUNKS * 8;
/// Elements of one (tile, span): 16 rows x 128 columns, 4 KiB of f16.
pub const SPAN_ELEMS: usize = TILE_ROWS * SPAN_COLS;

/// Elements of a [n][k] matrix in the tiled layout: n rounded up to whole tiles, k to whole
/// spans.
pub fn tiled_len(n: usize, k: usize) -> usize {
    n.div_ceil(TILE_ROWS) * k.div_ceil(SPAN_COLS) * SPAN_ELEMS
}

/// Elements between the starts of matrices in one arena (arena_layout): 64 KiB of f16.
pub const ARENA_ALIGN: usize = 1 << 15;

/// Where matrices of the given [n][k] shapes sit, in order, in one arena of tiled matrices,
/// each from an ARENA_ALIGN boundary: their element offsets and the arena's length.
pub fn arena_layout(shapes: &[(usize, usize)]) -> (Vec<usize>, usize) {
    let mut next = 0;
    let offsets = shapes
        .iter()
        .map(|&(n, k)| {
            let off = next;
            next = (off + tiled_len(n, k)).next_multiple_of(ARENA_ALIGN);
            off
        })
        .collect();
    (offsets, next)
}

/// Whether the tiled layout of [n][k] holds exactly n x k elements (no padding), so that a
/// kernel reading either layout stays inside a buffer of the other.
pub fn tiled_unpadded(n: usize, k: usize) -> bool {
    n.is_multiple_of(TILE_ROWS) && k.is_multiple_of(SPAN_COLS)
}

/// Where element (row, col) of a matrix of k columns sits in the tiled layout.
pub fn tiled_index(row: usize, col: usize, k: usize) -> usize {
    let (tile, in_tile) = (row / TILE_ROWS, row % TILE_ROWS);
    let (g, parity) = (in_tile / 2, in_tile % 2);
    let (chunk, elem) = (col / 8, col % 8);
    let (span, in_span) = (chunk / SPAN_CHUNKS, chunk % SPAN_CHUNKS);
    let (u, t) = (in_span / 4, in_span % 4);
    let lane = g * 4 + t;
    (tile * k.div_ceil(SPAN_COLS) + span) * SPAN_ELEMS + ((u * 2 + parity) * 32 + lane) * 8 + elem
}

/// `w` ([n][k], row-major) in the tiled layout, padding zero (`T::default()`).
pub fn tile<T: Copy + Default>(w: &[T], n: usize, k: usize) -> Vec<T> {
    assert_eq!(w.len(), n * k, "tile: {} elements for [{n}][{k}]", w.len());
    let mut out = vec![T::default(); tiled_len(n, k)];
    for (row, src) in w.chunks_exact(k).enumerate() {
        for (c, piece) in src.chunks(8).enumerate() {
            let at = tiled_index(row, c * 8, k);
            out[at..at + piece.len()].copy_from_slice(piece);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arena_places_each_matrix_aligned_after_the_one_before() {
        let shapes = [
            (2560, 2048),
            (2048, 2048),
            (11264, 2048),
            (2048, 5632),
            (1002, 240),
        ];
        let (off, len) = arena_layout(&shapes);
        assert_eq!(off[0], 0);
        for (i, &(n, k)) in shapes.iter().enumerate() {
            assert!(
                off[i].is_multiple_of(ARENA_ALIGN),
                "matrix {i} at {}",
                off[i]
            );
            let end = off[i] + tiled_len(n, k);
            let next = off.get(i + 1).copied().unwrap_or(len);
            assert!(
                end <= next && next - end < ARENA_ALIGN,
                "matrix {i}: {end} .. {next}"
            );
        }
        // 1002 x 240: 63 tiles x 2 spans, padded to one 64 KiB boundary.
        assert_eq!(
            len - off[4],
            ARENA_ALIGN
                .max(63 * 2 * SPAN_ELEMS)
                .next_multiple_of(ARENA_ALIGN)
        );
        assert_eq!(arena_layout(&[]), (vec![], 0));
    }

    /// What the kernel's lane (g, t) loads for step u of span s of a tile, from the tile's
    /// base, written the kernel's way: its pointer plus the lane's offset plus the step's.
    fn kernel_chunk(
        tiled: &[u32],
        tile: usize,
        spans: usize,
        s: usize,
        u: usize,
        parity: usize,
        lane: usize,
    ) -> &[u32] {
        let at = tile * spans * SPAN_ELEMS + lane * 8 + s * SPAN_ELEMS + u * 512 + parity * 256;
        &tiled[at..at + 8]
    }

    #[test]
    fn each_load_gets_the_chunk_the_mma_step_wants() {
        // Awkward sizes: a partial last tile (n = 40) and a partial last span (k = 200).
        let (n, k) = (40usize, 200usize);
        let w: Vec<u32> = (0..n * k).map(|i| i as u32 + 1).collect();
        let tiled = tile(&w, n, k);
        let spans = k.div_ceil(SPAN_COLS);
        assert_eq!(tiled.len(), 3 * 2 * SPAN_ELEMS);
        for tl in 0..n.div_ceil(16) {
            for s in 0..spans {
                for u in 0..4 {
                    for parity in 0..2 {
                        for lane in 0..32 {
                            let (g, t) = (lane / 4, lane % 4);
                            let row = tl * 16 + 2 * g + parity;
                            let col0 = (s * SPAN_CHUNKS + 4 * u + t) * 8;
                            let want: Vec<u32> = (col0..col0 + 8)
                                .map(|c| if row < n && c < k { w[row * k + c] } else { 0 })
                                .collect();
                            assert_eq!(
                                kernel_chunk(&tiled, tl, spans, s, u, parity, lane),
                                &want[..],
                                "tile {tl} span {s} u {u} parity {parity} lane {lane}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn every_element_has_its_own_place_and_the_rest_is_padding() {
        let (n, k) = (24usize, 136usize);
        let mut seen = vec![false; tiled_len(n, k)];
        for r in 0..n {
            for c in 0..k {
                let i = tiled_index(r, c, k);
                assert!(!seen[i], "({r}, {c}) shares {i}");
                seen[i] = true;
            }
        }
        assert_eq!(seen.iter().filter(|&&s| s).count(), n * k);
        let tiled = tile(&vec![7u8; n * k], n, k);
        assert_eq!(tiled.iter().filter(|&&v| v == 7).count(), n * k);
        assert_eq!(tiled.len(), 32 * 256);
    }

    #[test]
    fn a_warp_load_reads_512_contiguous_bytes() {
        // Lanes 0..31 of one load (same u, parity) sit 8 halves apart, in lane order.
        let k = 2048;
        for lane in 0..32 {
            let (g, t) = (lane / 4, lane % 4);
            let i = tiled_index(2 * g + 1, (4 * 2 + t) * 8, k);
            assert_eq!(i, (2 * 2 + 1) * 256 + lane * 8);
        }
    }

    #[test]
    fn padding_only_where_the_shape_needs_it() {
        // TinyLlama's products: qkv 2560 x 2048, o 2048 x 2048, gate/up 11264 x 2048,
        // down 2048 x 5632, lm_head 32000 x 2048.
        for (n, k) in [
            (2560, 2048),
            (2048, 2048),
            (11264, 2048),
            (2048, 5632),
            (32000, 2048),
        ] {
            assert!(tiled_unpadded(n, k));
            assert_eq!(tiled_len(n, k), n * k);
        }
        assert!(!tiled_unpadded(1002, 240));
        assert_eq!(tiled_len(1002, 240), 1008 * 256);
    }
}
