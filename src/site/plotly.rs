//! Which Plotly.js the pages load: the vendored copy written beside the pages (the default:
//! works offline), or one pinned version from a CDN with an SRI hash.

use serde::Serialize;

/// The pinned Plotly.js version (npm package `plotly.js-cartesian-dist-min`: the cartesian
/// bundle, with every trace type the pages draw: scatter, bar and heatmap).
pub const VERSION: &str = "4.1.1";
/// The vendored file, byte-identical to `plotly-cartesian.min.js` in
/// `plotly.js-cartesian-dist-min@4.1.1` from npm.
pub const VENDORED_JS: &str = include_str!("../../templates/vendor/plotly-cartesian-4.1.1.min.js");
/// Plotly's MIT license, shipped beside the vendored copy.
pub const LICENSE: &str = include_str!("../../templates/vendor/plotly-LICENSE.txt");
/// The CDN serves npm package files unchanged, so the vendored file's hash is the CDN file's.
pub const CDN_URL: &str =
    "https://cdn.jsdelivr.net/npm/plotly.js-cartesian-dist-min@4.1.1/plotly-cartesian.min.js";
/// `sha384` of `VENDORED_JS`, base64 (checked by a test).
pub const SRI: &str = "sha384-zc4SwKObGL/W0M3RUI09UPWjlgIZHfbwMgcZO6713mRh78tfUmIQKhzCyE2LIiUg";
/// Where `--plotly inline` writes the vendored copy, relative to the site root.
pub const LOCAL_PATH: &str = "assets/plotly-cartesian-4.1.1.min.js";
pub const LOCAL_LICENSE_PATH: &str = "assets/plotly-LICENSE.txt";

/// How pages get Plotly.js.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PlotlyMode {
    /// Load the pinned version from a CDN, checked by its integrity hash (pages need the network).
    Cdn,
    /// Copy the vendored Plotly.js into the site (assets/) and load it from there with
    /// `<script src>`: no network, works from file://. The default.
    #[default]
    Inline,
}

/// The script tag's attributes, for the templates.
#[derive(Debug, Clone, Serialize)]
pub struct PlotlyTag {
    pub mode: PlotlyMode,
    pub version: &'static str,
    pub src: &'static str,
    /// Empty for the local copy.
    pub integrity: &'static str,
}

impl PlotlyMode {
    pub fn tag(self) -> PlotlyTag {
        match self {
            PlotlyMode::Cdn => PlotlyTag {
                mode: self,
                version: VERSION,
                src: CDN_URL,
                integrity: SRI,
            },
            PlotlyMode::Inline => PlotlyTag {
                mode: self,
                version: VERSION,
                src: LOCAL_PATH,
                integrity: "",
            },
        }
    }
}
