//! Noise-stopped sampling across ranks: rank 0 runs the harness's loop (`sample_until`) and,
//! before each sample, tells every rank to take one; every rank times its own sample and
//! sends the time back; a sample's time is the mean over ranks (nccl-tests' default), and
//! rank 0 alone decides when to stop. Deciding per rank would hang: a rank that wants one
//! more sample than the others waits forever in a collective nobody else joins.

use super::group::Group;
use super::wire::{self, Msg};
use crate::sampling::{sample_until, Prepare, Sample, Sampled, Sampling};
use anyhow::Result;
use std::time::{Duration, Instant};

/// The samples of one point: rank 0's view of every rank, or nothing on the other ranks.
#[derive(Debug, Clone, PartialEq)]
pub struct Lockstep {
    /// The samples as the harness kept them (each the mean of the ranks' times).
    pub sampled: Sampled,
    /// Every rank's own time of every sample taken, rank order (samples of a throttled first
    /// phase included).
    pub per_rank_us: Vec<Vec<f64>>,
}

/// Takes one point's samples on every rank of `group`: `local` times one sample on this rank
/// (all ranks call it the same number of times, in step). Rank 0 gets `Some`.
pub fn sample_in_lockstep(
    group: &mut Group,
    sampling: &Sampling,
    mut local: impl FnMut(Prepare) -> Result<Sample>,
) -> Result<Option<Lockstep>> {
    if !group.is_leader() {
        loop {
            let prepare = match group.from_leader()? {
                Msg::Sample { recover_ms: None } => Prepare::BackToBack,
                Msg::Sample {
                    recover_ms: Some(ms),
                } => Prepare::Recover(Duration::from_secs_f64(ms.max(0.0) / 1e3)),
                Msg::Stop => return Ok(None),
                m => return Err(wire::unexpected("rank 0", "a sample or stop", &m)),
            };
            let s = match local(prepare) {
                Ok(s) => s,
                Err(e) => {
                    group.abandon(&format!("rank {}: {e:#}", group.rank));
                    return Err(e);
                }
            };
            group.tell_leader(&Msg::Timed {
                us: s.us,
                throttled: s.throttled,
            })?;
        }
    }
    let world = group.world_size;
    let mut per_rank_us: Vec<Vec<f64>> = vec![Vec::new(); world];
    let sampled = sample_until(sampling, &mut |prepare| {
        let t = Instant::now();
        let recover_ms = match prepare {
            Prepare::BackToBack => None,
            Prepare::Recover(d) => Some(d.as_secs_f64() * 1e3),
        };
        group.broadcast(&Msg::Sample { recover_ms })?;
        let mine = local(prepare)?;
        let mut us = vec![mine.us];
        let mut throttled = mine.throttled;
        for (i, m) in group.gather()?.into_iter().enumerate() {
            match m {
                Msg::Timed {
                    us: theirs,
                    throttled: t,
                } => {
                    us.push(theirs);
                    throttled |= t;
                }
                m => return Err(wire::unexpected(&format!("rank {}", i + 1), "a time", &m)),
            }
        }
        for (r, u) in us.iter().enumerate() {
            per_rank_us[r].push(*u);
        }
        Ok(Sample {
            us: us.iter().sum::<f64>() / world as f64,
            wall: t.elapsed(),
            throttled,
            recovered: mine.recovered,
        })
    });
    match sampled {
        Ok(sampled) => {
            group.broadcast(&Msg::Stop)?;
            Ok(Some(Lockstep {
                sampled,
                per_rank_us,
            }))
        }
        Err(e) => {
            group.abandon(&format!("rank 0 stopped sampling: {e:#}"));
            Err(e)
        }
    }
}
