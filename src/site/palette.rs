//! Colors: one per implementation, the same on every page and chart.

use std::collections::BTreeMap;

/// Fixed colors for the implementations every page shows.
const KNOWN: &[(&str, &str)] = &[
    ("opbench", "#2563eb"),
    ("candle", "#f59e0b"),
    ("cublas", "#374151"),
    ("transformers-eager", "#9333ea"),
    ("torch-cudagraph", "#be185d"),
    ("torch-compile-cudagraph", "#059669"),
    ("reference", "#9ca3af"),
];

/// The rest, assigned in name order: 19 hues apart from each other and from the reds kept for
/// ceilings and failures, so the site's ~20 implementations never share a colour.
const CYCLE: &[&str] = &[
    "#0891b2", "#16a34a", "#7c3aed", "#a16207", "#db2777", "#0d9488", "#4f46e5", "#65a30d",
    "#c026d3", "#0369a1", "#854d0e", "#15803d", "#1e3a8a", "#a855f7", "#06b6d4", "#84cc16",
    "#f472b6", "#14b8a6", "#6b21a8",
];

/// Colors for guide lines (ceilings, bounds, parity).
pub const GUIDE: &str = "#6b7280";
pub const CEILING: &str = "#b91c1c";
pub const FAIL: &str = "#dc2626";

/// Implementation -> color, built once for the whole site.
#[derive(Debug, Clone, Default)]
pub struct Palette {
    map: BTreeMap<String, String>,
}

impl Palette {
    pub fn new<'a>(implementations: impl Iterator<Item = &'a str>) -> Self {
        let mut map: BTreeMap<String, String> = KNOWN
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut names: Vec<&str> = implementations.collect();
        names.sort_unstable();
        names.dedup();
        // The cycle without the fixed colours, so no two implementations share one.
        let free: Vec<&str> = CYCLE
            .iter()
            .copied()
            .filter(|c| KNOWN.iter().all(|(_, k)| k != c))
            .collect();
        let mut i = 0;
        for n in names {
            if !map.contains_key(n) {
                map.insert(n.to_string(), free[i % free.len()].to_string());
                i += 1;
            }
        }
        Palette { map }
    }

    pub fn of(&self, imp: &str) -> String {
        self.map
            .get(imp)
            .cloned()
            .unwrap_or_else(|| GUIDE.to_string())
    }

    /// The n-th color of the cycle, for series that are not implementations (shapes, percentiles).
    pub fn nth(n: usize) -> String {
        CYCLE[n % CYCLE.len()].to_string()
    }
}
