//! The ranks of one run, joined over TCP: rank 0 listens on the rendezvous port, every other
//! rank connects and says hello, and from then on rank 0 decides and the others follow
//! (the NCCL id, the collectives per sample, the check verdicts, when sampling stops).

use super::wire::{self, Msg, RankCheck};
use super::RankEnv;
use anyhow::{bail, Context, Result};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// Where this process stands in the group.
pub enum Role {
    /// Rank 0, with a connection to each other rank (ranks 1.. in order).
    Leader(Vec<TcpStream>),
    /// Any other rank, with its connection to rank 0.
    Follower(TcpStream),
}

/// The joined ranks, seen from this process.
pub struct Group {
    pub rank: usize,
    pub world_size: usize,
    pub role: Role,
}

/// How long a rank keeps trying to reach rank 0 (and rank 0 waits for the others) by default.
pub const DEFAULT_RENDEZVOUS_TIMEOUT: Duration = Duration::from_secs(120);

impl Group {
    /// Joins the group `env` describes: rank 0 listens on every interface at
    /// `env.rendezvous_port`; the others connect to MASTER_ADDR at that port. `plan` describes
    /// the run asked for; rank 0 refuses ranks asked for another one. Gives up after `timeout`.
    pub fn join(env: &RankEnv, plan: &str, timeout: Duration) -> Result<Group> {
        if env.rank == 0 {
            let addr = SocketAddr::from(([0, 0, 0, 0], env.rendezvous_port));
            let listener = TcpListener::bind(addr).with_context(|| {
                format!(
                    "rank 0 cannot listen on port {} (from {}) for the other ranks: another \
                     process holds it; set COMM_BENCH_PORT to a free port for every rank",
                    env.rendezvous_port, env.port_source
                )
            })?;
            Group::lead(listener, env.world_size, plan, timeout)
        } else {
            Group::follow(env, plan, timeout)
        }
    }

    /// Rank 0 on a bound listener: waits for ranks 1..world_size, each once, asked for `plan`.
    pub fn lead(
        listener: TcpListener,
        world_size: usize,
        plan: &str,
        timeout: Duration,
    ) -> Result<Group> {
        let deadline = Instant::now() + timeout;
        listener.set_nonblocking(true)?;
        let mut links: Vec<Option<TcpStream>> = (1..world_size).map(|_| None).collect();
        while links.iter().any(Option::is_none) {
            let (mut s, from) = match listener.accept() {
                Ok(c) => c,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if Instant::now() >= deadline {
                        let missing: Vec<String> = (1..world_size)
                            .filter(|r| links[r - 1].is_none())
                            .map(|r| r.to_string())
                            .collect();
                        bail!(
                            "rank 0: rank(s) {} did not connect within {:.0} s: were all \
                             {world_size} ranks started, with the same MASTER_ADDR and port? \
                             (--rendezvous-timeout-s)",
                            missing.join(", "),
                            timeout.as_secs_f64()
                        );
                    }
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                }
                Err(e) => return Err(e).context("rank 0: accepting a rank's connection"),
            };
            s.set_nonblocking(false)?;
            s.set_nodelay(true)?;
            s.set_read_timeout(Some(
                deadline
                    .saturating_duration_since(Instant::now())
                    .max(Duration::from_millis(100)),
            ))?;
            let hello = wire::recv(&mut s, &format!("the connection from {from}"))?;
            let Msg::Hello {
                rank,
                world_size: theirs,
                plan: their_plan,
            } = hello
            else {
                bail!(wire::unexpected(&from.to_string(), "a hello", &hello));
            };
            let refuse = |s: &mut TcpStream, why: String| -> anyhow::Error {
                let _ = wire::send(s, &Msg::Failed { why: why.clone() });
                anyhow::anyhow!(why)
            };
            if theirs != world_size || rank == 0 || rank >= world_size {
                return Err(refuse(
                    &mut s,
                    format!(
                        "rank {rank} of {theirs} (from {from}) joined rank 0 of {world_size}: \
                         every rank must be given the same WORLD_SIZE and a rank below it"
                    ),
                ));
            }
            if their_plan != plan {
                return Err(refuse(
                    &mut s,
                    format!(
                        "rank {rank} was asked for another run than rank 0 (rank 0: {plan}; \
                         rank {rank}: {their_plan}): start every rank with the same arguments"
                    ),
                ));
            }
            if links[rank - 1].is_some() {
                return Err(refuse(
                    &mut s,
                    format!("two processes claim rank {rank}: each rank must be started once"),
                ));
            }
            s.set_read_timeout(None)?;
            links[rank - 1] = Some(s);
        }
        Ok(Group {
            rank: 0,
            world_size,
            role: Role::Leader(links.into_iter().flatten().collect()),
        })
    }

    /// Any rank but 0: connects to rank 0 (retrying until `timeout`, since rank 0 may start
    /// later) and says hello.
    pub fn follow(env: &RankEnv, plan: &str, timeout: Duration) -> Result<Group> {
        let target = format!("{}:{}", env.master_addr, env.rendezvous_port);
        let deadline = Instant::now() + timeout;
        let unreachable = |why: String| {
            anyhow::anyhow!(
                "rank {}: cannot reach rank 0 at {target} within {:.1} s ({why}): is rank 0 \
                 running, and was every rank given the same MASTER_ADDR and MASTER_PORT? The \
                 port is {}; --rendezvous-timeout-s waits longer",
                env.rank,
                timeout.as_secs_f64(),
                env.port_source
            )
        };
        let mut last = String::from("no attempt");
        let mut s = loop {
            let now = Instant::now();
            if now >= deadline {
                return Err(unreachable(last));
            }
            let attempt = (deadline - now).min(Duration::from_secs(1));
            match target.to_socket_addrs() {
                Ok(addrs) => {
                    let mut got = None;
                    for a in addrs {
                        match TcpStream::connect_timeout(&a, attempt) {
                            Ok(s) => {
                                got = Some(s);
                                break;
                            }
                            Err(e) => last = e.to_string(),
                        }
                    }
                    if let Some(s) = got {
                        break s;
                    }
                }
                Err(e) => last = format!("MASTER_ADDR does not resolve: {e}"),
            }
            std::thread::sleep(
                Duration::from_millis(50).min(deadline.saturating_duration_since(Instant::now())),
            );
        };
        s.set_nodelay(true)?;
        wire::send(
            &mut s,
            &Msg::Hello {
                rank: env.rank,
                world_size: env.world_size,
                plan: plan.to_string(),
            },
        )
        .map_err(|e| unreachable(format!("{e:#}")))?;
        Ok(Group {
            rank: env.rank,
            world_size: env.world_size,
            role: Role::Follower(s),
        })
    }

    pub fn is_leader(&self) -> bool {
        matches!(self.role, Role::Leader(_))
    }

    /// Sends `m` to every other rank (rank 0 only).
    pub fn broadcast(&mut self, m: &Msg) -> Result<()> {
        let Role::Leader(links) = &mut self.role else {
            bail!("only rank 0 broadcasts");
        };
        for (i, s) in links.iter_mut().enumerate() {
            wire::send(s, m).with_context(|| format!("rank 0: sending to rank {}", i + 1))?;
        }
        Ok(())
    }

    /// One message from every other rank, in rank order (rank 0 only).
    pub fn gather(&mut self) -> Result<Vec<Msg>> {
        let Role::Leader(links) = &mut self.role else {
            bail!("only rank 0 gathers");
        };
        links
            .iter_mut()
            .enumerate()
            .map(|(i, s)| wire::recv(s, &format!("rank {}", i + 1)))
            .collect()
    }

    /// Sends `m` to rank 0 (the other ranks only).
    pub fn tell_leader(&mut self, m: &Msg) -> Result<()> {
        let Role::Follower(s) = &mut self.role else {
            bail!("rank 0 does not send to itself");
        };
        wire::send(s, m).context("sending to rank 0")
    }

    /// The next message from rank 0 (the other ranks only).
    pub fn from_leader(&mut self) -> Result<Msg> {
        let Role::Follower(s) = &mut self.role else {
            bail!("rank 0 does not receive from itself");
        };
        wire::recv(s, "rank 0")
    }

    /// Rank 0's bytes on every rank: rank 0 passes `Some`, the others `None`.
    pub fn share(&mut self, bytes: Option<Vec<u8>>) -> Result<Vec<u8>> {
        match (bytes, self.is_leader()) {
            (Some(b), true) => {
                self.broadcast(&Msg::Share { bytes: b.clone() })?;
                Ok(b)
            }
            (None, false) => match self.from_leader()? {
                Msg::Share { bytes } => Ok(bytes),
                m => Err(wire::unexpected("rank 0", "the shared bytes", &m)),
            },
            _ => bail!("share: rank 0 gives the bytes, the other ranks receive them"),
        }
    }

    /// Every rank's bytes on every rank, in rank order (the peer-memory handles).
    pub fn all_gather_bytes(&mut self, mine: Vec<u8>) -> Result<Vec<Vec<u8>>> {
        if self.is_leader() {
            let mut all = vec![mine];
            for (i, m) in self.gather()?.into_iter().enumerate() {
                match m {
                    Msg::Share { bytes } => all.push(bytes),
                    m => return Err(wire::unexpected(&format!("rank {}", i + 1), "bytes", &m)),
                }
            }
            let joined = serde_json::to_vec(&all)?;
            self.broadcast(&Msg::Share { bytes: joined })?;
            return Ok(all);
        }
        self.tell_leader(&Msg::Share { bytes: mine })?;
        match self.from_leader()? {
            Msg::Share { bytes } => serde_json::from_slice(&bytes)
                .map_err(|e| anyhow::anyhow!("rank 0 sent unreadable gathered bytes: {e}")),
            m => Err(wire::unexpected("rank 0", "the gathered bytes", &m)),
        }
    }

    /// Rank 0's `value` on every rank (the others' own values are ignored).
    pub fn decide(&mut self, value: u64) -> Result<u64> {
        if self.is_leader() {
            self.broadcast(&Msg::Decide { value })?;
            return Ok(value);
        }
        match self.from_leader()? {
            Msg::Decide { value } => Ok(value),
            m => Err(wire::unexpected("rank 0", "a decision", &m)),
        }
    }

    /// Every rank's check of one point reaches rank 0, which tells every rank whether all
    /// passed (only then is the point timed). Rank 0 gets every rank's check in rank order;
    /// the others get only their own back.
    pub fn agree(&mut self, mine: RankCheck) -> Result<(bool, Vec<RankCheck>)> {
        if self.is_leader() {
            let mut all = vec![mine];
            for (i, m) in self.gather()?.into_iter().enumerate() {
                match m {
                    Msg::Checked(c) => all.push(c),
                    m => return Err(wire::unexpected(&format!("rank {}", i + 1), "a check", &m)),
                }
            }
            let time = all.iter().all(|c| c.passed);
            self.broadcast(&Msg::Verdict { time })?;
            return Ok((time, all));
        }
        self.tell_leader(&Msg::Checked(mine.clone()))?;
        match self.from_leader()? {
            Msg::Verdict { time } => Ok((time, vec![mine])),
            m => Err(wire::unexpected("rank 0", "a verdict", &m)),
        }
    }

    /// Waits until every rank finished every point (rank 0 then completes the artifact).
    pub fn finish_together(&mut self) -> Result<()> {
        if !self.is_leader() {
            return self.tell_leader(&Msg::Done);
        }
        for (i, m) in self.gather()?.into_iter().enumerate() {
            if m != Msg::Done {
                return Err(wire::unexpected(&format!("rank {}", i + 1), "done", &m));
            }
        }
        Ok(())
    }

    /// Tells the other ranks this one stopped and why (best effort: the link may be gone).
    pub fn abandon(&mut self, why: &str) {
        let m = Msg::Failed { why: why.into() };
        match &mut self.role {
            Role::Leader(links) => links.iter_mut().for_each(|s| {
                let _ = wire::send(s, &m);
            }),
            Role::Follower(s) => {
                let _ = wire::send(s, &m);
            }
        }
    }
}
