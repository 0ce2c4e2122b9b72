//! Peers: the same point measured by another implementation, and the time they compare.

use crate::site::names;
use crate::site::points::Point;
use std::collections::HashMap;

/// Key of "the same point measured by another implementation": GPU and the point's problem
/// (`crate::identity`: kind, benchmark, problem parameters; settings such as a kernel's
/// launch configuration are not part of it, so they do not keep peers apart).
pub fn peer_key(p: &Point) -> String {
    format!("{}\u{1f}{}", p.gpu(), p.identity().problem())
}

/// Index: (peer key, implementation) -> point, for ok points.
pub fn peer_index<'a>(
    points: &[Point<'a>],
    key: impl Fn(&Point) -> String,
) -> HashMap<(String, String), Point<'a>> {
    points
        .iter()
        .filter(|p| p.ok())
        .map(|p| ((key(p), p.imp().to_string()), *p))
        .collect()
}

/// The P50 of the row's main timing, in microseconds.
pub fn p50_us(p: &Point) -> Option<f64> {
    names::primary_stat(p.row).map(|(k, s)| s.p50 * names::to_us(k))
}
