//! The messages ranks exchange over the rendezvous socket, and their framing: a 4-byte
//! little-endian length, then the message as JSON. Nothing here is timed: every exchange
//! happens between samples, outside the CUDA events.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::net::TcpStream;

/// Largest frame accepted: far above any message, far below a length read from garbage.
pub const MAX_FRAME_BYTES: usize = 1 << 20;

/// One message between rank 0 and another rank.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Msg {
    /// A rank introduces itself: where it is, and the run it was asked for (every rank must
    /// be given the same sweep).
    Hello {
        rank: usize,
        world_size: usize,
        plan: String,
    },
    /// Rank 0 hands out bytes every rank needs (the NCCL unique id).
    Share { bytes: Vec<u8> },
    /// Rank 0 decides a number every rank must use (collectives per sample).
    Decide { value: u64 },
    /// A rank's check of its output at one point.
    Checked(RankCheck),
    /// Rank 0's verdict on a point: whether every rank passed, so the point is timed.
    Verdict { time: bool },
    /// Rank 0: take one more sample, after waiting up to `recover_ms` for the clocks.
    Sample { recover_ms: Option<f64> },
    /// Rank 0: sampling of this point is over.
    Stop,
    /// A rank's time of one sample (per collective), and whether its clocks were held back.
    Timed { us: f64, throttled: bool },
    /// A rank finished every point.
    Done,
    /// A rank stopped; the others stop too, saying why.
    Failed { why: String },
}

/// A rank's check of its output against the host reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankCheck {
    pub max_abs_err: f64,
    pub max_rel_err: f64,
    pub tolerance: f64,
    pub non_finite: usize,
    pub passed: bool,
}

/// Writes one message.
pub fn send(s: &mut TcpStream, m: &Msg) -> Result<()> {
    let body = serde_json::to_vec(m).context("encoding a rendezvous message")?;
    let mut frame = Vec::with_capacity(4 + body.len());
    frame.extend_from_slice(&(body.len() as u32).to_le_bytes());
    frame.extend_from_slice(&body);
    s.write_all(&frame)?;
    Ok(())
}

/// Reads one message; `who` names the other end in errors ("rank 0", "rank 3").
pub fn recv(s: &mut TcpStream, who: &str) -> Result<Msg> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len).map_err(|e| closed(who, e))?;
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME_BYTES {
        bail!(
            "{who} sent a frame of {len} bytes (at most {MAX_FRAME_BYTES}): is something other \
             than comm_bench on that port?"
        );
    }
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).map_err(|e| closed(who, e))?;
    let m: Msg = serde_json::from_slice(&body)
        .with_context(|| format!("{who} sent a message comm_bench cannot read"))?;
    if let Msg::Failed { why } = &m {
        bail!("{who} stopped: {why}");
    }
    Ok(m)
}

fn closed(who: &str, e: std::io::Error) -> anyhow::Error {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::UnexpectedEof | K::ConnectionReset | K::BrokenPipe => {
            anyhow::anyhow!("{who} closed the connection: it stopped (its own output says why)")
        }
        K::WouldBlock | K::TimedOut => anyhow::anyhow!("{who} did not answer in time"),
        _ => anyhow::anyhow!("reading from {who}: {e}"),
    }
}

/// Names what arrived when something else was expected.
pub fn unexpected(who: &str, want: &str, got: &Msg) -> anyhow::Error {
    anyhow::anyhow!(
        "{who} sent {got:?} where comm_bench expected {want}: the ranks are out of step (were \
         they all started with the same arguments?)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        (a, b)
    }

    #[test]
    fn messages_round_trip_and_a_failure_is_an_error() {
        let (mut a, mut b) = pair();
        let msgs = [
            Msg::Share {
                bytes: (0..128).collect(),
            },
            Msg::Timed {
                us: 12.5,
                throttled: true,
            },
            Msg::Checked(RankCheck {
                max_abs_err: 0.0,
                max_rel_err: 1e-3,
                tolerance: 1e-2,
                non_finite: 0,
                passed: true,
            }),
        ];
        for m in &msgs {
            send(&mut a, m).unwrap();
        }
        for m in &msgs {
            assert_eq!(&recv(&mut b, "rank 0").unwrap(), m);
        }
        send(
            &mut a,
            &Msg::Failed {
                why: "out of memory".into(),
            },
        )
        .unwrap();
        let e = recv(&mut b, "rank 1").unwrap_err().to_string();
        assert!(e.contains("rank 1 stopped: out of memory"), "{e}");
        drop(a);
        let e = recv(&mut b, "rank 1").unwrap_err().to_string();
        assert!(e.contains("rank 1 closed the connection"), "{e}");
    }

    #[test]
    fn a_foreign_frame_is_refused() {
        let (mut a, mut b) = pair();
        a.write_all(b"GET / HTTP/1.1\r\n").unwrap();
        let e = recv(&mut b, "rank 2").unwrap_err().to_string();
        assert!(e.contains("frame of") && e.contains("rank 2"), "{e}");
    }
}
