//! Which of our all-reduce kernels (kernels/comm_oneshot.cu) a run times, by `--ours-kernel`
//! name, and the implementation name of each one's rows.

use super::row::{OURS, OURS_PULL};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// Flagged lines stored into the peers' memory (LL); no barrier, no remote load.
    Push,
    /// Own copy, a flag per block in every peer, then remote loads.
    Pull,
}

impl Kernel {
    pub const ALL: [Kernel; 2] = [Kernel::Push, Kernel::Pull];

    /// The name `--ours-kernel` takes.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Push => "push",
            Kernel::Pull => "pull",
        }
    }

    /// The implementation name of its rows.
    pub fn implementation(self) -> &'static str {
        match self {
            Kernel::Push => OURS,
            Kernel::Pull => OURS_PULL,
        }
    }

    pub fn parse(s: &str) -> Result<Kernel, String> {
        Kernel::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| format!("unknown kernel {s:?}: push or pull"))
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
        assert_ne!(Kernel::Push.implementation(), Kernel::Pull.implementation());
        assert!(Kernel::parse("ll").unwrap_err().contains("push or pull"));
    }
}
