//! Canvas colors for the light and dark themes, and the stable per-name slice palette.
//!
//! Slice colors come from the name's hash (see `state::tiles::name_hash`), so a name keeps its
//! color across zoom levels, reloads and traces; text on a slice is dark on light fills and light
//! on dark ones.

use std::sync::OnceLock;

/// Light or dark.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Theme {
    /// Dark text on light background.
    #[default]
    Light,
    /// Light text on dark background.
    Dark,
}

/// Hues of the slice palette (degrees), spread so neighbours differ.
const HUES: [u16; 16] = [
    4, 200, 122, 36, 262, 174, 330, 88, 222, 14, 150, 284, 54, 190, 350, 106,
];

/// Everything the painter colors.
pub struct Colors {
    /// Canvas background.
    pub background: &'static str,
    /// Every other lane.
    pub stripe: &'static str,
    /// Group header band.
    pub header: &'static str,
    /// Ruler background.
    pub ruler: &'static str,
    /// Ticks, ruler text, borders.
    pub ink: &'static str,
    /// Step boundary lines.
    pub step: &'static str,
    /// Selected range fill.
    pub range: &'static str,
    /// Selection outline.
    pub selection: &'static str,
    /// Search match outline.
    pub matched: &'static str,
    /// Flow arrows.
    pub flow: &'static str,
    /// Counter track fill.
    pub counter: &'static str,
}

impl Theme {
    /// `light` or `dark` (the `data-theme` attribute).
    pub fn as_str(self) -> &'static str {
        match self {
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }

    /// The other theme.
    pub fn toggled(self) -> Self {
        match self {
            Theme::Light => Theme::Dark,
            Theme::Dark => Theme::Light,
        }
    }

    /// The theme's fixed colors.
    pub fn colors(self) -> &'static Colors {
        match self {
            Theme::Light => &LIGHT,
            Theme::Dark => &DARK,
        }
    }

    /// The palette: fill and text color per slot ([`slot`]), faded copies after the first
    /// [`SLOTS`] entries (a search is active and the slice does not match). Built once per
    /// theme, so a draw list names its colors as `&'static str`.
    pub fn palette(self) -> &'static [(String, &'static str)] {
        static LIGHT_PALETTE: OnceLock<Vec<(String, &'static str)>> = OnceLock::new();
        static DARK_PALETTE: OnceLock<Vec<(String, &'static str)>> = OnceLock::new();
        match self {
            Theme::Light => LIGHT_PALETTE.get_or_init(|| self.build_palette()),
            Theme::Dark => DARK_PALETTE.get_or_init(|| self.build_palette()),
        }
    }

    fn build_palette(self) -> Vec<(String, &'static str)> {
        let (sat, light, text) = match self {
            Theme::Light => (48, 62, "#10131a"),
            Theme::Dark => (42, 38, "#f2f4f8"),
        };
        [1.0, 0.25]
            .into_iter()
            .flat_map(|alpha| {
                HUES.iter().flat_map(move |hue| {
                    [0, 8].map(|shade| (hex(*hue, sat, light + shade, alpha), text))
                })
            })
            .collect()
    }
}

/// `hsla(hue, sat%, light%, alpha)` as `#rrggbbaa`: the canvas parses hex without the CSS
/// parser, and the palette is set once per color batch every frame.
fn hex(hue: u16, sat: u8, light: u8, alpha: f64) -> String {
    let (s, l) = (f64::from(sat) / 100.0, f64::from(light) / 100.0);
    let a = s * l.min(1.0 - l);
    let channel = |n: f64| {
        let k = (n + f64::from(hue) / 30.0) % 12.0;
        let v = l - a * (k - 3.0).min(9.0 - k).clamp(-1.0, 1.0);
        (v * 255.0).round() as u8
    };
    let alpha = (alpha * 255.0).round() as u8;
    format!("#{:02x}{:02x}{:02x}{alpha:02x}", channel(0.0), channel(8.0), channel(4.0))
}

/// Palette slots per fade level.
pub const SLOTS: usize = HUES.len() * 2;

/// The palette slot of a name hash: its hue, and a second bit for lightness so 32 names are
/// told apart, not 16.
pub fn slot(hash: u32) -> usize {
    (hash as usize % HUES.len()) * 2 + ((hash >> 8) & 1) as usize
}

static LIGHT: Colors = Colors {
    background: "#ffffff",
    stripe: "#f5f6f8",
    header: "#e8ebf0",
    ruler: "#f0f2f5",
    ink: "#3a3f4b",
    step: "rgba(40,90,200,0.35)",
    range: "rgba(40,110,230,0.14)",
    selection: "#111111",
    matched: "#f5a400",
    flow: "#d0356a",
    counter: "rgba(40,130,90,0.55)",
};

static DARK: Colors = Colors {
    background: "#15171c",
    stripe: "#1b1e24",
    header: "#252a33",
    ruler: "#1f232a",
    ink: "#c9ced8",
    step: "rgba(120,160,255,0.40)",
    range: "rgba(90,150,255,0.18)",
    selection: "#ffffff",
    matched: "#ffc233",
    flow: "#ff6b9a",
    counter: "rgba(80,200,140,0.50)",
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_matches_css_hsl() {
        assert_eq!(hex(0, 100, 50, 1.0), "#ff0000ff");
        assert_eq!(hex(120, 100, 25, 0.25), "#00800040");
        assert_eq!(hex(210, 48, 62, 1.0), "#709ecdff");
    }
}
