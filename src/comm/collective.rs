//! The collectives `comm_bench` measures, with their artifact names and what each moves.

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

/// One collective operation over `world` ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Collective {
    /// Every rank ends with the element-wise sum of every rank's buffer.
    AllReduce,
    /// Every rank ends with the concatenation of every rank's chunk (rank order).
    AllGather,
    /// Rank r ends with chunk r of the element-wise sum of every rank's buffer.
    ReduceScatter,
    /// Every rank ends with the root's buffer.
    Broadcast,
}

impl Collective {
    pub const ALL: [Collective; 4] = [
        Collective::AllReduce,
        Collective::AllGather,
        Collective::ReduceScatter,
        Collective::Broadcast,
    ];

    /// The name in artifacts (`params.collective`) and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Collective::AllReduce => "all_reduce",
            Collective::AllGather => "all_gather",
            Collective::ReduceScatter => "reduce_scatter",
            Collective::Broadcast => "broadcast",
        }
    }

    /// Parses a name; `-` and `_` are interchangeable ("all-reduce").
    pub fn parse(s: &str) -> Result<Collective> {
        let norm = s.trim().to_ascii_lowercase().replace('-', "_");
        match Collective::ALL.iter().find(|c| c.name() == norm) {
            Some(c) => Ok(*c),
            None => bail!(
                "unknown collective {s:?}: use one of {}",
                Collective::ALL.map(|c| c.name()).join(", ")
            ),
        }
    }

    /// Whether the message is split in `world` equal chunks (one per rank), so its size must
    /// be a multiple of `world` elements.
    pub fn chunked(self) -> bool {
        matches!(self, Collective::AllGather | Collective::ReduceScatter)
    }
}

impl std::fmt::Display for Collective {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_typos_are_named() {
        for c in Collective::ALL {
            assert_eq!(Collective::parse(c.name()).unwrap(), c);
        }
        assert_eq!(
            Collective::parse("All-Reduce").unwrap(),
            Collective::AllReduce
        );
        let e = Collective::parse("allreduce").unwrap_err().to_string();
        assert!(
            e.contains("\"allreduce\"") && e.contains("all_reduce, all_gather"),
            "{e}"
        );
    }
}
