//! The comm page: collectives across the GPUs of one host (comm_bench): bus bandwidth per
//! collective against the peer-copy ceiling, small-message latency, and our one-shot
//! all-reduce against NCCL.

mod busbw;
mod nccl_table;
mod oneshot;
mod rows;
mod small;

pub use rows::{comm_rows, CommRow};
pub use small::SMALL_MAX_BYTES;

use super::common::{empty_kind, filters, multi_gpu, not_ok_table, Section};
use super::PageContext;
use crate::site::palette::Palette;
use crate::site::points::Point;

/// The collectives, in the order their charts appear.
const COLLECTIVES: [&str; 4] = ["all_reduce", "all_gather", "reduce_scatter", "broadcast"];

pub fn build(page: &mut PageContext, points: &[Point], pal: &Palette) {
    page.intro = "Collectives across the GPUs of one host, one process per GPU (comm_bench under \
                  torchrun): NCCL's all-reduce, all-gather, reduce-scatter and broadcast from 8 \
                  B up, torch.distributed at the same points in the same call, and our one-shot \
                  all-reduce for small messages. Every point was checked against a float64 host \
                  reference before it was timed. Bus bandwidth is nccl-tests' busbw."
        .into();
    if points.is_empty() {
        empty_kind(page, "collective (comm)", "comm_bench");
        return;
    }
    page.filters = filters(points, &["gpu", "dtype", "impl", "ranks"]);
    let rows = rows::comm_rows(points);
    let multi = multi_gpu(points);
    let mut s1 = Section::new(
        "latency",
        "Small messages",
        "Where tensor-parallel decode spends its all-reduces (a few KiB to a few hundred KiB): \
         latency, not bandwidth, decides.",
    );
    s1.charts.push(small::chart(&rows, multi, pal));
    s1.charts.push(oneshot::chart(&rows, multi, pal));
    let mut s2 = Section::new(
        "bandwidth",
        "Bus bandwidth",
        "Large messages: how close each collective comes to the GPU-to-GPU copy bandwidth, \
         one chart per collective and world size.",
    );
    for c in COLLECTIVES {
        s2.charts.extend(busbw::charts(c, points, multi, pal));
    }
    let mut tables = Section::new(
        "nccl-tests",
        "nccl-tests tables",
        "Every point as nccl-tests prints it, per collective and world size.",
    );
    tables.tables = nccl_table::tables(points, &COLLECTIVES);
    let mut s3 = Section::new("correctness", "Points not timed", "");
    s3.tables.extend(not_ok_table(points));
    page.sections = vec![s1, s2, tables, s3];
}
