//! Canvas colors for the light and dark themes, and the stable per-name slice palette.
//!
//! Slice colors come from the name's hash (see `state::tiles::name_hash`), so a name keeps its
//! color across zoom levels, reloads and traces; text on a slice is dark on light fills and light
//! on dark ones.

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
    /// [`SLOTS`] entries (a search is active and the slice does not match).
    pub fn palette(self) -> Vec<(String, &'static str)> {
        let (sat, light, text) = match self {
            Theme::Light => (48, 62, "#10131a"),
            Theme::Dark => (42, 38, "#f2f4f8"),
        };
        [1.0, 0.25]
            .into_iter()
            .flat_map(|alpha| {
                HUES.iter().flat_map(move |hue| {
                    [0, 8].map(|shade| {
                        (format!("hsla({hue},{sat}%,{}%,{alpha})", light + shade), text)
                    })
                })
            })
            .collect()
    }
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
