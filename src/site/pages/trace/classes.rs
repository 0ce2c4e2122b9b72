//! The trace's operation classes: their display order and one colour each (the LLM trace's
//! classes, then the names `trace` gives them for any workload: gemm, norm, copy,
//! communication).

use crate::site::palette::Palette;

/// Operation classes in display order (the trace's own list wins when present).
pub const CLASSES: &[&str] = &[
    "matmul",
    "attention",
    "kv_copy",
    "rmsnorm",
    "rope",
    "elementwise",
    "sampling",
    "embedding",
    "memcpy",
    "memset",
    "other",
    "gemm",
    "norm",
    "copy",
    "communication",
];

/// A class's position in `CLASSES`; unknown classes after every known one.
pub fn class_rank(class: &str) -> usize {
    CLASSES.iter().position(|c| *c == class).unwrap_or(99)
}

/// One colour per class, each far from the others (matmul blue, elementwise pink, ...), none
/// of them the reds kept for ceilings and failures; unknown classes take the palette's.
const CLASS_COLORS: &[&str] = &[
    "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
    "#7f7f7f", "#c7c7c7", "#393b79", "#1f77b4", "#9467bd", "#2ca02c", "#637939",
];

pub fn class_color(class: &str) -> String {
    match CLASSES.iter().position(|c| *c == class) {
        Some(i) => CLASS_COLORS[i].to_string(),
        None => Palette::nth(CLASSES.len() + class.len() % 7),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_has_its_own_colour() {
        assert_eq!(CLASS_COLORS.len(), CLASSES.len());
        let mut c: Vec<String> = CLASSES.iter().map(|k| class_color(k)).collect();
        c.dedup();
        assert_eq!(c.len(), CLASSES.len());
        assert_ne!(class_color("matmul"), class_color("elementwise"));
    }
}
