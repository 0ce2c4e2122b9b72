//! Buffer rotation for cold timing without a flush per launch: how many input/output sets.
//!
//! The rule: launches cycle through `sets` distinct buffer sets in order, so between two
//! launches on one set the other `sets - 1` launches stream `(sets - 1) * bytes_per_set` bytes
//! of other data through L2. When that is at least `l2_multiple` times the L2 size (2 by
//! default, the same margin as the flush memset), no launch finds data its own set left in L2.
//! Pure arithmetic, so it is tested without a GPU.

/// `Timing::method` of a measurement by rotation (`gpu::measure_rotating`, 2 sets or more).
pub const METHOD: &str = "cuda_events_rotating_buffers";
/// `Timing::method` of `gpu::measure_rotating` with one set: warm, back to back, stream held.
pub const METHOD_HELD: &str = "cuda_events_held";

/// The most sets a rotation uses; a point that would need more (tiny shapes: a decode row
/// needs ~13 000 sets of 8 KB) is timed with an L2 flush per launch instead.
pub const MAX_SETS: usize = 64;

/// Default multiple of the L2 size that must pass between two touches of one set.
pub const DEFAULT_L2_MULTIPLE: usize = 2;

/// Sets needed for the rule: the fewest `sets` with `(sets - 1) * bytes_per_set >=
/// l2_multiple * l2_bytes`, and at least 2 (even a set larger than L2 alternates with another,
/// so the start of its input is never the tail the previous launch left in L2).
pub fn sets_needed(bytes_per_set: usize, l2_bytes: usize, l2_multiple: usize) -> usize {
    let need = l2_multiple
        .saturating_mul(l2_bytes)
        .div_ceil(bytes_per_set.max(1));
    need.saturating_add(1).max(2)
}

/// Whether `sets` sets of `bytes_per_set` bytes, launched in cycle order, satisfy the rule.
pub fn evicts(sets: usize, bytes_per_set: usize, l2_bytes: usize, l2_multiple: usize) -> bool {
    sets >= 2 && (sets - 1).saturating_mul(bytes_per_set) >= l2_multiple.saturating_mul(l2_bytes)
}

/// The sets a point should rotate through, or None when it would need more than `MAX_SETS`
/// (then it is timed with a flush per launch).
pub fn plan_sets(bytes_per_set: usize, l2_bytes: usize, l2_multiple: usize) -> Option<usize> {
    let sets = sets_needed(bytes_per_set, l2_bytes, l2_multiple);
    (sets <= MAX_SETS).then_some(sets)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB: usize = 1 << 20;

    #[test]
    fn sets_leave_at_least_the_multiple_of_l2_between_touches() {
        // H100/H200-like L2 of 50 MiB; 2 x L2 = 100 MiB must pass between two touches.
        let l2 = 50 * MB;
        // 64 MiB moved (4096x2048 f32): 2 sets give only 64 MiB between touches; 3 give 128.
        assert_eq!(sets_needed(64 * MB, l2, 2), 3);
        // Exactly divisible: 100 MiB / 25 MiB = 4 others, plus the set itself.
        assert_eq!(sets_needed(25 * MB, l2, 2), 5);
        // Larger than 2 x L2: still two sets, alternating.
        assert_eq!(sets_needed(128 * MB, l2, 2), 2);
        assert_eq!(sets_needed(1024 * MB, l2, 2), 2);
        // A 16 MiB seed case: ceil(100 / 16) = 7 others.
        assert_eq!(sets_needed(16 * MB, l2, 2), 8);
        // A stricter multiple needs more sets.
        assert_eq!(sets_needed(16 * MB, l2, 4), 14);
        for bytes in [
            1,
            4096,
            8 * MB,
            16 * MB,
            33 * MB,
            64 * MB,
            67 * MB,
            129 * MB,
            2048 * MB,
        ] {
            for mult in [1, 2, 4] {
                let s = sets_needed(bytes, l2, mult);
                assert!(s >= 2, "{bytes} {mult}");
                assert!(evicts(s, bytes, l2, mult), "{bytes} {mult}: {s} sets");
                // The fewest: one set fewer breaks the rule (unless at the floor of 2).
                assert!(
                    s == 2 || !evicts(s - 1, bytes, l2, mult),
                    "{bytes} {mult}: {s}"
                );
            }
        }
        // Degenerate inputs do not divide by zero or overflow.
        assert_eq!(sets_needed(0, l2, 2), 2 * l2 + 1);
        assert_eq!(sets_needed(usize::MAX, usize::MAX, 2), 2);
        assert!(!evicts(1, 1024 * MB, l2, 2));
    }

    #[test]
    fn tiny_points_fall_back_to_a_flush() {
        let l2 = 50 * MB;
        // One decode row of 2048 f16: 8 KiB moved, ~12 800 sets: flushed instead.
        assert_eq!(plan_sets(8 * 1024, l2, 2), None);
        // The [4, 512, 1024] f16 seed case: 8 MiB moved, 14 sets.
        assert_eq!(plan_sets(8 * MB, l2, 2), Some(14));
        // The smallest set that still rotates: (64 - 1) sets cover 100 MiB.
        let smallest = (2 * l2).div_ceil(MAX_SETS - 1);
        assert_eq!(plan_sets(smallest, l2, 2), Some(MAX_SETS));
        assert_eq!(plan_sets(smallest - 1, l2, 2), None);
    }
}
