//! Which of our all-reduce kernels (kernels/comm_oneshot.cu) a run times, by `--ours-kernel`
//! name, and the implementation name of each one's rows.

use super::row::{OURS, OURS_ONESHOT, OURS_PULL, OURS_TWOSHOT};

/// Where our all-reduce turns two-shot by default (`--ours-twoshot-from`, whose default text
/// the CLI test holds to this): on 4 H200s the two-shot kernel was level with the one-shot one at
/// 64 KiB and faster from 128 KiB (docs/notes/comm.md).
pub const DEFAULT_TWOSHOT_FROM_BYTES: u64 = 128 << 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// Our all-reduce: flagged lines stored into the peers' memory (LL), one-shot, or two-shot
    /// from `--ours-twoshot-from` on 3 ranks and more; no barrier, no remote load.
    Push,
    /// The one-shot push kernel at every size.
    OneShot,
    /// The two-shot push kernel at every size (one-shot where the message has fewer units
    /// than ranks).
    TwoShot,
    /// Own copy, a flag per block in every peer, then remote loads.
    Pull,
}

impl Kernel {
    pub const ALL: [Kernel; 4] = [Kernel::Push, Kernel::OneShot, Kernel::TwoShot, Kernel::Pull];

    /// The name `--ours-kernel` takes.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Push => "push",
            Kernel::OneShot => "oneshot",
            Kernel::TwoShot => "twoshot",
            Kernel::Pull => "pull",
        }
    }

    /// The implementation name of its rows.
    pub fn implementation(self) -> &'static str {
        match self {
            Kernel::Push => OURS,
            Kernel::OneShot => OURS_ONESHOT,
            Kernel::TwoShot => OURS_TWOSHOT,
            Kernel::Pull => OURS_PULL,
        }
    }

    pub fn parse(s: &str) -> Result<Kernel, String> {
        Kernel::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| format!("unknown kernel {s:?}: push, oneshot, twoshot or pull"))
    }

    /// Whether a call of `bytes` over `world` ranks runs the two-shot kernel. Never with fewer
    /// 8-byte units than ranks: the two-shot kernel's reuse argument needs a unit in every
    /// rank's chunk.
    pub fn two_shot(self, bytes: u64, world: usize, twoshot_from: u64) -> bool {
        let wanted = match self {
            Kernel::Push => world >= 3 && bytes >= twoshot_from,
            Kernel::TwoShot => true,
            Kernel::OneShot | Kernel::Pull => false,
        };
        wanted && bytes.div_ceil(8) >= world as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_rows_are_told_apart() {
        for k in Kernel::ALL {
            assert_eq!(Kernel::parse(k.name()), Ok(k));
        }
        let imps: std::collections::BTreeSet<_> =
            Kernel::ALL.iter().map(|k| k.implementation()).collect();
        assert_eq!(imps.len(), Kernel::ALL.len());
        assert!(Kernel::parse("ll").unwrap_err().contains("push, oneshot"));
    }

    #[test]
    fn two_shot_from_the_threshold_on_three_ranks_and_more() {
        let from = 128 << 10;
        assert!(!Kernel::Push.two_shot(from, 2, from));
        assert!(!Kernel::Push.two_shot(from - 8, 4, from));
        assert!(Kernel::Push.two_shot(from, 4, from));
        assert!(Kernel::TwoShot.two_shot(8 * 4, 4, from));
        // A part-filled last unit counts as a unit.
        assert!(Kernel::TwoShot.two_shot(8 * 3 + 2, 4, from));
        // Fewer units than ranks: one-shot whatever was asked.
        assert!(!Kernel::TwoShot.two_shot(8 * 3, 4, from));
        assert!(!Kernel::OneShot.two_shot(1 << 30, 8, from));
        assert!(!Kernel::Pull.two_shot(1 << 30, 8, from));
    }
}
