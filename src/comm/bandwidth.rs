//! Algorithm and bus bandwidth, by nccl-tests' published formulas (its doc/PERFORMANCE.md).
//!
//! `bytes` is nccl-tests' "size": the whole message of one rank, i.e. the all-reduce and
//! broadcast buffer, the all-gather output (`world` chunks) and the reduce-scatter input.
//! algbw = bytes / time. busbw = algbw x factor, where the factor makes the figure comparable
//! with the hardware's link bandwidth whatever the rank count: a ring all-reduce moves
//! 2(n-1)/n of the buffer over each link, all-gather and reduce-scatter (n-1)/n, broadcast 1.

use super::Collective;

/// nccl-tests' bus-bandwidth factor for `world` ranks.
pub fn busbw_factor(c: Collective, world: usize) -> f64 {
    let n = world as f64;
    match c {
        Collective::AllReduce => 2.0 * (n - 1.0) / n,
        Collective::AllGather | Collective::ReduceScatter => (n - 1.0) / n,
        Collective::Broadcast => 1.0,
    }
}

/// Algorithm bandwidth in GB/s (1e9 bytes per second) of `bytes` in `time_us`.
pub fn algbw_gbps(bytes: u64, time_us: f64) -> f64 {
    bytes as f64 / (time_us * 1e-6) / 1e9
}

/// Bus bandwidth in GB/s.
pub fn busbw_gbps(c: Collective, world: usize, bytes: u64, time_us: f64) -> f64 {
    algbw_gbps(bytes, time_us) * busbw_factor(c, world)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_published_factors() {
        // nccl-tests' PERFORMANCE.md: all-reduce 2(n-1)/n, all-gather and reduce-scatter
        // (n-1)/n, broadcast 1.
        assert_eq!(busbw_factor(Collective::AllReduce, 2), 1.0);
        assert_eq!(busbw_factor(Collective::AllReduce, 4), 1.5);
        assert_eq!(busbw_factor(Collective::AllReduce, 8), 1.75);
        assert_eq!(busbw_factor(Collective::AllGather, 4), 0.75);
        assert_eq!(busbw_factor(Collective::ReduceScatter, 2), 0.5);
        assert_eq!(busbw_factor(Collective::Broadcast, 8), 1.0);
    }

    #[test]
    fn a_gibibyte_in_ten_milliseconds() {
        let bytes = 1u64 << 30;
        let alg = algbw_gbps(bytes, 10_000.0);
        assert!((alg - 107.374_182_4).abs() < 1e-6, "{alg}");
        let bus = busbw_gbps(Collective::AllReduce, 4, bytes, 10_000.0);
        assert!((bus - alg * 1.5).abs() < 1e-9);
    }
}
