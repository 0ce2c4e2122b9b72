//! The trace's operation classes: their display order and one colour each.

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
];

/// A class's position in `CLASSES`; unknown classes after every known one.
pub fn class_rank(class: &str) -> usize {
    CLASSES.iter().position(|c| *c == class).unwrap_or(99)
}

pub fn class_color(class: &str) -> String {
    let i = CLASSES
        .iter()
        .position(|c| *c == class)
        .unwrap_or(CLASSES.len());
    Palette::nth(i)
}
