//! comm_bench's rendezvous and stop protocol on localhost, without a GPU: ranks on threads
//! join over TCP, share a fake NCCL id, agree on check verdicts and sample in lockstep; an
//! unreachable rank 0, a missing rank and mismatched arguments fail fast and say why.

use opbench::comm::group::{Group, Role};
use opbench::comm::lockstep::sample_in_lockstep;
use opbench::comm::wire::RankCheck;
use opbench::comm::RankEnv;
use opbench::sampling::{Prepare, Sample, Sampling};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const PLAN: &str = "all_reduce f32 8..64 B";
const WAIT: Duration = Duration::from_secs(20);

fn env(rank: usize, world: usize, port: u16) -> RankEnv {
    RankEnv {
        rank,
        world_size: world,
        local_rank: rank,
        master_addr: "127.0.0.1".into(),
        master_port: port,
        rendezvous_port: port,
        port_source: "MASTER_PORT".into(),
    }
}

fn listener() -> (TcpListener, u16) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    (l, port)
}

fn check(passed: bool) -> RankCheck {
    RankCheck {
        max_abs_err: 0.0,
        max_rel_err: if passed { 0.0 } else { 0.5 },
        tolerance: 0.01,
        non_finite: 0,
        passed,
    }
}

/// A sample that takes 10 + rank microseconds, plus a little noise so the interval can
/// settle only after several samples.
fn fake_sample(rank: usize, n: &AtomicUsize) -> Sample {
    let k = n.fetch_add(1, Ordering::SeqCst);
    let noise = if k.is_multiple_of(2) { 0.01 } else { -0.01 };
    Sample::timed(10.0 + rank as f64 + noise, Duration::from_micros(5), false)
}

/// What every rank does at one point: the id, a decision, a check, then samples.
fn one_rank(
    mut g: Group,
    sampling: Sampling,
    fail_check: bool,
    counts: Arc<Vec<AtomicUsize>>,
) -> (
    Vec<u8>,
    u64,
    bool,
    Option<opbench::comm::lockstep::Lockstep>,
) {
    let rank = g.rank;
    let id = g
        .share(if g.is_leader() {
            Some((0..128u8).collect())
        } else {
            None
        })
        .unwrap();
    let k = g.decide(if g.is_leader() { 7 } else { 99 }).unwrap();
    let handles = g.all_gather_bytes(vec![rank as u8; 64]).unwrap();
    let want: Vec<Vec<u8>> = (0..g.world_size).map(|r| vec![r as u8; 64]).collect();
    assert_eq!(handles, want, "rank {rank}");
    let (time, _) = g.agree(check(!fail_check)).unwrap();
    let sampled = sample_in_lockstep(&mut g, &sampling, |_p: Prepare| {
        Ok(fake_sample(rank, &counts[rank]))
    })
    .unwrap();
    g.finish_together().unwrap();
    (id, k, time, sampled)
}

#[test]
fn four_ranks_share_the_id_agree_and_stop_together() {
    let (l, port) = listener();
    let world = 4;
    let counts: Arc<Vec<AtomicUsize>> = Arc::new((0..world).map(|_| AtomicUsize::new(0)).collect());
    let sampling = Sampling {
        min_samples: 5,
        max_samples: 200,
        target_rel: 0.01,
        budget: Duration::from_secs(30),
        recover_throttled: false,
    };
    let followers: Vec<_> = (1..world)
        .map(|r| {
            let counts = counts.clone();
            std::thread::spawn(move || {
                let g = Group::follow(&env(r, world, port), PLAN, WAIT).unwrap();
                one_rank(g, sampling, r == 2, counts)
            })
        })
        .collect();
    let leader = Group::lead(l, world, PLAN, WAIT).unwrap();
    assert!(matches!(&leader.role, Role::Leader(links) if links.len() == 3));
    let (id, k, time, sampled) = one_rank(leader, sampling, false, counts.clone());
    let sampled = sampled.expect("rank 0 gets the samples");
    assert_eq!(id, (0..128u8).collect::<Vec<_>>());
    assert_eq!(k, 7);
    assert!(!time, "rank 2 failed its check, so no rank times the point");
    for f in followers {
        let (fid, fk, ftime, fs) = f.join().unwrap();
        assert_eq!((fid, fk, ftime), (id.clone(), 7, false));
        assert!(fs.is_none());
    }
    // Every rank took exactly the samples rank 0 took, and each sample is the ranks' mean.
    let n = sampled.sampled.samples_us.len();
    assert!((5..200).contains(&n), "{n} samples");
    for c in counts.iter() {
        assert_eq!(c.load(Ordering::SeqCst), n);
    }
    assert_eq!(sampled.per_rank_us.len(), world);
    assert!(sampled.per_rank_us.iter().all(|v| v.len() == n));
    let mean = sampled.sampled.samples_us[0];
    assert!((mean - 11.51).abs() < 1e-9, "{mean}");
}

#[test]
fn an_unreachable_rank_0_is_a_clear_error_within_the_timeout() {
    let (l, port) = listener();
    drop(l); // nothing listens on `port` now
    let t = Instant::now();
    let e = Group::follow(&env(1, 2, port), PLAN, Duration::from_millis(400))
        .err()
        .expect("no rank 0")
        .to_string();
    assert!(
        e.contains(&format!("cannot reach rank 0 at 127.0.0.1:{port}")),
        "{e}"
    );
    assert!(e.contains("--rendezvous-timeout-s"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
}

#[test]
fn rank_0_names_the_ranks_that_never_came() {
    let (l, port) = listener();
    let one = std::thread::spawn(move || Group::follow(&env(1, 3, port), PLAN, WAIT).map(|_| ()));
    let e = Group::lead(l, 3, PLAN, Duration::from_millis(500))
        .err()
        .expect("rank 2 never joins")
        .to_string();
    assert!(e.contains("rank(s) 2 did not connect"), "{e}");
    one.join().unwrap().unwrap();
}

#[test]
fn ranks_given_other_arguments_are_refused_on_both_sides() {
    let (l, port) = listener();
    let other = std::thread::spawn(move || {
        let mut g = Group::follow(&env(1, 2, port), "broadcast bf16", WAIT).unwrap();
        g.share(None).err().unwrap().to_string()
    });
    let e = Group::lead(l, 2, PLAN, WAIT).err().unwrap().to_string();
    assert!(
        e.contains("another run") && e.contains("broadcast bf16"),
        "{e}"
    );
    let theirs = other.join().unwrap();
    assert!(
        theirs.contains("rank 0 stopped") && theirs.contains("same arguments"),
        "{theirs}"
    );
}

#[test]
fn a_rank_that_fails_mid_sampling_stops_rank_0_with_its_reason() {
    let (l, port) = listener();
    let follower = std::thread::spawn(move || {
        let mut g = Group::follow(&env(1, 2, port), PLAN, WAIT).unwrap();
        let mut n = 0;
        sample_in_lockstep(&mut g, &Sampling::fixed(10), |_| {
            n += 1;
            if n == 3 {
                anyhow::bail!("CUDA error: an illegal memory access");
            }
            Ok(Sample::timed(1.0, Duration::ZERO, false))
        })
        .err()
        .unwrap()
        .to_string()
    });
    let mut g = Group::lead(l, 2, PLAN, WAIT).unwrap();
    let e = sample_in_lockstep(&mut g, &Sampling::fixed(10), |_| {
        Ok(Sample::timed(1.0, Duration::ZERO, false))
    })
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.contains("rank 1 stopped") && e.contains("illegal memory access"),
        "{e}"
    );
    assert!(follower.join().unwrap().contains("illegal memory access"));
}
