//! The page templates, embedded at build time and registered in one place.

use anyhow::{anyhow, Context, Result};
use serde::Serialize;

/// Every template: (name, source). Names ending in `.html` are auto-escaped by Tera.
pub const TEMPLATES: &[(&str, &str)] = &[
    ("base.html", include_str!("../../templates/base.html")),
    ("macros.html", include_str!("../../templates/macros.html")),
    (
        "overview.html",
        include_str!("../../templates/overview.html"),
    ),
    ("kind.html", include_str!("../../templates/kind.html")),
    ("history.html", include_str!("../../templates/history.html")),
    ("traces.html", include_str!("../../templates/traces.html")),
];

/// Static files written beside the pages: (path in the site, contents).
pub const STATIC_FILES: &[(&str, &str)] = &[
    (
        "assets/dashboard.js",
        include_str!("../../templates/static/dashboard.js"),
    ),
    (
        "assets/history.js",
        include_str!("../../templates/static/history.js"),
    ),
    (
        "assets/sort.js",
        include_str!("../../templates/static/sort.js"),
    ),
    (
        "assets/style.css",
        include_str!("../../templates/static/style.css"),
    ),
];

/// The Tera instance with every embedded template.
pub struct Templates {
    tera: tera::Tera,
}

impl Templates {
    pub fn new() -> Result<Self> {
        let mut tera = tera::Tera::default();
        tera.add_raw_templates(TEMPLATES.iter().copied())
            .map_err(|e| anyhow!("{}", error_chain(&e)))
            .context("parsing the embedded templates (templates/*.html)")?;
        Ok(Templates { tera })
    }

    /// Renders `name` with `context`; a missing template names itself and the known ones.
    pub fn render<T: Serialize>(&self, name: &str, context: &T) -> Result<String> {
        if !TEMPLATES.iter().any(|(n, _)| *n == name) {
            let known: Vec<&str> = TEMPLATES.iter().map(|(n, _)| *n).collect();
            anyhow::bail!(
                "no template named {name:?}: add templates/{name} and register it in \
                 src/site/templates.rs (known: {known:?})"
            );
        }
        let ctx = tera::Context::from_serialize(context)
            .with_context(|| format!("building the context of template {name}"))?;
        self.tera
            .render(name, &ctx)
            .map_err(|e| anyhow!("rendering template {name}: {}", error_chain(&e)))
    }
}

/// Tera puts the useful part of an error in its sources.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_template_is_named_in_the_error() {
        let t = Templates::new().unwrap();
        let e = t.render("nope.html", &serde_json::json!({})).unwrap_err();
        assert!(e.to_string().contains("no template named \"nope.html\""));
    }
}
