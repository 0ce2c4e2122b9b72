//! Which rank this process is, read from the environment the way launchers set it: torchrun
//! (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), Slurm (SLURM_PROCID,
//! SLURM_NTASKS, SLURM_LOCALID) and a Kubernetes indexed Job (JOB_COMPLETION_INDEX with
//! WORLD_SIZE). `comm_bench` has no launcher of its own.
//!
//! Under torchrun, MASTER_PORT is already taken: torchrun's agent serves its own store there
//! (it says so with TORCHELASTIC_USE_AGENT_STORE=True), so rank 0 listens on the next port.
//! COMM_BENCH_PORT overrides either choice.

use anyhow::{bail, Context, Result};

/// This process's place in the job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankEnv {
    pub rank: usize,
    pub world_size: usize,
    /// The GPU index on this host.
    pub local_rank: usize,
    /// Where rank 0 listens for the others (the NCCL id is handed out there).
    pub master_addr: String,
    pub master_port: u16,
    /// The port rank 0 listens on for the other ranks: COMM_BENCH_PORT, else MASTER_PORT + 1
    /// under a torchrun agent that holds MASTER_PORT, else MASTER_PORT.
    pub rendezvous_port: u16,
    /// Which variable chose `rendezvous_port`, for messages ("MASTER_PORT + 1 (torchrun's
    /// store holds MASTER_PORT)").
    pub port_source: String,
}

impl RankEnv {
    /// From the process environment.
    pub fn from_env() -> Result<RankEnv> {
        RankEnv::from_lookup(|k| std::env::var(k).ok())
    }

    /// From any variable lookup (tests pass a map).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<RankEnv> {
        let num = |keys: &[&str]| -> Result<Option<(String, usize)>> {
            for k in keys {
                if let Some(v) = get(k) {
                    let n = v
                        .trim()
                        .parse::<usize>()
                        .with_context(|| format!("{k}={v:?} is not a non-negative whole number"))?;
                    return Ok(Some((k.to_string(), n)));
                }
            }
            Ok(None)
        };
        let rank = num(&["RANK", "SLURM_PROCID", "JOB_COMPLETION_INDEX"])?;
        let world = num(&["WORLD_SIZE", "SLURM_NTASKS"])?;
        let (Some((rank_key, rank)), Some((world_key, world_size))) = (rank, world) else {
            bail!(
                "no rank environment: start one process per GPU with a launcher that sets RANK \
                 and WORLD_SIZE (torchrun --nproc-per-node N, Slurm srun, a Kubernetes indexed \
                 Job with WORLD_SIZE), or set them by hand, e.g. RANK=0 WORLD_SIZE=2 \
                 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500"
            );
        };
        if world_size < 2 {
            bail!(
                "{world_key}={world_size}: a collective needs at least 2 ranks (one process per \
                 GPU); on a machine with one GPU there is nothing to measure"
            );
        }
        if rank >= world_size {
            bail!("{rank_key}={rank} is not below {world_key}={world_size}");
        }
        let local_rank = num(&["LOCAL_RANK", "SLURM_LOCALID"])?.map_or(rank, |(_, n)| n);
        let master_addr = get("MASTER_ADDR").unwrap_or_else(|| "127.0.0.1".into());
        let master_port = match get("MASTER_PORT") {
            Some(p) => p
                .trim()
                .parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .with_context(|| format!("MASTER_PORT={p:?} is not a port (1-65535)"))?,
            None => 29500,
        };
        let agent_store = get("TORCHELASTIC_USE_AGENT_STORE")
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        let (rendezvous_port, port_source) = match get("COMM_BENCH_PORT") {
            Some(p) => (
                p.trim()
                    .parse::<u16>()
                    .ok()
                    .filter(|p| *p > 0)
                    .with_context(|| format!("COMM_BENCH_PORT={p:?} is not a port (1-65535)"))?,
                "COMM_BENCH_PORT".to_string(),
            ),
            None if agent_store => (
                master_port.checked_add(1).with_context(|| {
                    "MASTER_PORT=65535 leaves no next port for comm_bench's rendezvous \
                     (torchrun's store holds MASTER_PORT): set COMM_BENCH_PORT"
                })?,
                "MASTER_PORT + 1 (torchrun's store holds MASTER_PORT)".to_string(),
            ),
            None => (master_port, "MASTER_PORT".to_string()),
        };
        Ok(RankEnv {
            rank,
            world_size,
            local_rank,
            master_addr,
            master_port,
            rendezvous_port,
            port_source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> Result<RankEnv> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        RankEnv::from_lookup(|k| m.get(k).cloned())
    }

    #[test]
    fn torchrun_slurm_and_kubernetes() {
        let t = env(&[
            ("RANK", "3"),
            ("WORLD_SIZE", "4"),
            ("LOCAL_RANK", "1"),
            ("MASTER_ADDR", "10.0.0.2"),
            ("MASTER_PORT", "29400"),
        ])
        .unwrap();
        assert_eq!((t.rank, t.world_size, t.local_rank), (3, 4, 1));
        assert_eq!((t.master_addr.as_str(), t.master_port), ("10.0.0.2", 29400));
        let s = env(&[
            ("SLURM_PROCID", "1"),
            ("SLURM_NTASKS", "2"),
            ("SLURM_LOCALID", "1"),
        ])
        .unwrap();
        assert_eq!((s.rank, s.world_size, s.local_rank), (1, 2, 1));
        assert_eq!(
            (s.master_addr.as_str(), s.master_port),
            ("127.0.0.1", 29500)
        );
        let k = env(&[("JOB_COMPLETION_INDEX", "0"), ("WORLD_SIZE", "2")]).unwrap();
        assert_eq!((k.rank, k.local_rank), (0, 0));
    }

    #[test]
    fn the_rendezvous_port_steps_aside_from_torchruns_store() {
        let base = [("RANK", "1"), ("WORLD_SIZE", "2"), ("MASTER_PORT", "29400")];
        assert_eq!(env(&base).unwrap().rendezvous_port, 29400);
        let mut torchrun = base.to_vec();
        torchrun.push(("TORCHELASTIC_USE_AGENT_STORE", "True"));
        let t = env(&torchrun).unwrap();
        assert_eq!((t.master_port, t.rendezvous_port), (29400, 29401));
        assert!(t.port_source.contains("torchrun"), "{}", t.port_source);
        torchrun.push(("COMM_BENCH_PORT", "31000"));
        assert_eq!(env(&torchrun).unwrap().rendezvous_port, 31000);
        let e = env(&[("RANK", "0"), ("WORLD_SIZE", "2"), ("COMM_BENCH_PORT", "x")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("COMM_BENCH_PORT=\"x\""), "{e}");
    }

    #[test]
    fn one_gpu_or_no_launcher_is_a_clear_error() {
        let e = env(&[]).unwrap_err().to_string();
        assert!(
            e.contains("no rank environment") && e.contains("torchrun"),
            "{e}"
        );
        let e = env(&[("RANK", "0"), ("WORLD_SIZE", "1")])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("WORLD_SIZE=1") && e.contains("at least 2 ranks"),
            "{e}"
        );
        let e = env(&[("RANK", "2"), ("WORLD_SIZE", "2")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("RANK=2 is not below WORLD_SIZE=2"), "{e}");
        let e = env(&[("RANK", "x"), ("WORLD_SIZE", "2")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("RANK=\"x\""), "{e}");
        let e = env(&[("RANK", "0"), ("WORLD_SIZE", "2"), ("MASTER_PORT", "0")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("MASTER_PORT=\"0\""), "{e}");
    }
}
