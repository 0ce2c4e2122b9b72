//! Pieces every detail page uses: sections, GPU series, peer look-ups, labels, table text and
//! category order, one idea per file.

mod distinguish;
mod facet;
mod gpus;
mod order;
mod peers;
mod section;
mod tables;
mod text;

pub use distinguish::{distinguishing, with_extra, Distinguishing};
pub use facet::{facets, per_gpu, per_gpu_by, slug, split_by};
pub use gpus::{gpu_pattern, gpus, multi_gpu, series};
pub use order::{ordered_categories, rank, DTYPE_ORDER};
pub use peers::{p50_us, peer_index, peer_key};
pub use section::{empty_kind, NamedTable, Section};
pub use tables::{not_ok_table, other_rows_table};
pub use text::{correctness_text, params_text};

use crate::site::chart::Dims;
use crate::site::filters::FilterView;
use crate::site::points::Point;

/// Filters of a page from its points.
pub fn filters(points: &[Point], allowed: &[&str]) -> Vec<FilterView> {
    let dims: Vec<Dims> = points.iter().map(|p| p.dims()).collect();
    crate::site::filters::collect(dims.iter(), allowed)
}
