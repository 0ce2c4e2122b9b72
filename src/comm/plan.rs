//! The message sizes a `comm_bench` sweep runs: doubling from a smallest to a largest size
//! (8 B to 4 GiB by default), each a whole number of elements, and for the chunked collectives
//! (all-gather, reduce-scatter) a whole number of elements per rank.

use super::Collective;
use anyhow::{bail, Context, Result};

/// Default smallest message: 8 bytes.
pub const DEFAULT_MIN_BYTES: u64 = 8;
/// Default largest message: 4 GiB.
pub const DEFAULT_MAX_BYTES: u64 = 4 << 30;

/// The sizes of one sweep, in bytes, ascending and distinct.
#[derive(Debug, Clone, PartialEq)]
pub struct SizePlan {
    pub bytes: Vec<u64>,
    /// Sizes the doubling asked for that were raised to a whole number of elements per rank
    /// (said once in the run's notes).
    pub raised: Vec<(u64, u64)>,
}

/// Largest message size asked for: 1 TiB. Far above any GPU's memory, and far enough below
/// 2^64 that doubling a size and rounding it up to whole elements cannot overflow.
pub const MAX_BYTES_LIMIT: u64 = 1 << 40;

/// Doubling sizes from `min_bytes` to `max_bytes` (both included when they are powers of two
/// apart), each rounded up to a multiple of `elem_bytes` (times `world` for a chunked
/// collective); sizes that round to the same value are kept once.
pub fn size_plan(
    c: Collective,
    world: usize,
    elem_bytes: u64,
    min_bytes: u64,
    max_bytes: u64,
) -> Result<SizePlan> {
    if world < 2 {
        bail!("a collective needs at least 2 ranks, got {world}");
    }
    if elem_bytes == 0 {
        bail!("an element of 0 bytes");
    }
    if min_bytes == 0 || min_bytes > max_bytes {
        bail!(
            "--min-bytes {min_bytes} and --max-bytes {max_bytes}: give 0 < min <= max, e.g. \
             --min-bytes 8 --max-bytes 4G"
        );
    }
    if max_bytes > MAX_BYTES_LIMIT {
        bail!(
            "--max-bytes {max_bytes}: at most {} GiB (1 TiB, more than any GPU holds); give e.g. \
             --max-bytes 4G",
            MAX_BYTES_LIMIT >> 30
        );
    }
    let unit = if c.chunked() {
        elem_bytes * world as u64
    } else {
        elem_bytes
    };
    let (mut bytes, mut raised) = (Vec::new(), Vec::new());
    let mut want = min_bytes;
    loop {
        let got = want.div_ceil(unit) * unit;
        if got != want {
            raised.push((want, got));
        }
        if bytes.last() != Some(&got) {
            bytes.push(got);
        }
        if want >= max_bytes {
            break;
        }
        want = (want * 2).min(max_bytes);
    }
    Ok(SizePlan { bytes, raised })
}

/// Parses a size: bytes, or a number with a binary suffix K, M or G (KiB, MiB, GiB), an
/// optional trailing B: "8", "256K", "4G", "64MiB".
pub fn parse_bytes(s: &str) -> Result<u64> {
    let t = s.trim();
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(t);
    let (num, shift) = match t.chars().last() {
        Some('K' | 'k') => (&t[..t.len() - 1], 10),
        Some('M' | 'm') => (&t[..t.len() - 1], 20),
        Some('G' | 'g') => (&t[..t.len() - 1], 30),
        _ => (t, 0),
    };
    let n: u64 = num
        .trim()
        .parse()
        .with_context(|| format!("size {s:?}: give bytes or a number with K, M or G, e.g. 256K"))?;
    n.checked_mul(1 << shift)
        .with_context(|| format!("size {s:?} is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_bytes_to_four_gib_doubling() {
        let p = size_plan(Collective::AllReduce, 2, 2, 8, 4 << 30).unwrap();
        assert_eq!(p.bytes.len(), 30); // 2^3 .. 2^32
        assert_eq!(p.bytes[0], 8);
        assert_eq!(*p.bytes.last().unwrap(), 4 << 30);
        assert!(p.bytes.windows(2).all(|w| w[1] == 2 * w[0]));
        assert!(p.raised.is_empty());
    }

    #[test]
    fn chunked_collectives_get_whole_elements_per_rank() {
        // f32 over 4 ranks: 16 bytes at least; 8 is raised, and 16 is kept once.
        let p = size_plan(Collective::AllGather, 4, 4, 8, 64).unwrap();
        assert_eq!(p.bytes, vec![16, 32, 64]);
        assert_eq!(p.raised, vec![(8, 16)]);
        // 3 ranks of bf16: multiples of 6 bytes.
        let p = size_plan(Collective::ReduceScatter, 3, 2, 8, 32).unwrap();
        assert_eq!(p.bytes, vec![12, 18, 36]);
        assert!(p.bytes.iter().all(|b| b % 6 == 0));
    }

    #[test]
    fn a_max_between_powers_of_two_is_the_last_size() {
        let p = size_plan(Collective::Broadcast, 2, 4, 8, 100).unwrap();
        assert_eq!(p.bytes, vec![8, 16, 32, 64, 100]);
    }

    #[test]
    fn bad_plans_are_refused_with_the_fix() {
        assert!(size_plan(Collective::AllReduce, 1, 4, 8, 64)
            .unwrap_err()
            .to_string()
            .contains("at least 2 ranks"));
        let e = size_plan(Collective::AllReduce, 2, 4, 64, 8)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--min-bytes 64 and --max-bytes 8"), "{e}");
    }

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_bytes("8").unwrap(), 8);
        assert_eq!(parse_bytes("256K").unwrap(), 256 << 10);
        assert_eq!(parse_bytes("64MiB").unwrap(), 64 << 20);
        assert_eq!(parse_bytes("4G").unwrap(), 4 << 30);
        assert!(parse_bytes("4T").is_err());
        assert!(parse_bytes("99999999999G")
            .unwrap_err()
            .to_string()
            .contains("too large"));
    }
}
