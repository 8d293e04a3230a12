//! Text from a built-in 8×8 bitmap font (the public-domain `font8x8`
//! glyphs), so labels look the same on every machine and need no system
//! fonts.
//!
//! Covered: printable ASCII, Latin-1 (`°`, `±`, `µ`, `×`, …) and the Greek
//! letters (`θ`, `σ`, `ρ`, `μ`, …); any other character is drawn as `?`.
//! Text is drawn at an integer `scale` (1 = 8 pixels per character cell).

use font8x8::legacy::{BASIC_LEGACY, GREEK_LEGACY, LATIN_LEGACY};

use super::image::{Image, Rgb};

/// Width and height of one character cell at scale 1, in pixels.
pub const GLYPH_SIZE: u32 = 8;

/// The 8 rows of the glyph for `c` (bit `i` of a row = column `i`).
fn glyph(c: char) -> [u8; 8] {
    let u = c as u32;
    let g = match u {
        0x20..=0x7E => BASIC_LEGACY[u as usize],
        0xA0..=0xFF => LATIN_LEGACY[(u - 0xA0) as usize],
        0x390..=0x3C9 => GREEK_LEGACY[(u - 0x390) as usize],
        _ => [0; 8],
    };
    if g == [0; 8] && c != ' ' && c != '\u{A0}' {
        BASIC_LEGACY[b'?' as usize]
    } else {
        g
    }
}

/// Width of `text` in pixels at `scale` (one cell per character).
pub fn text_width(text: &str, scale: u32) -> u32 {
    let n = u32::try_from(text.chars().count()).unwrap_or(u32::MAX);
    n.saturating_mul(GLYPH_SIZE * scale.max(1))
}

/// Height of one line of text in pixels at `scale`.
pub fn text_height(scale: u32) -> u32 {
    GLYPH_SIZE * scale.max(1)
}

/// Draws `text` with its top-left corner at (`x`, `y`), each font pixel a
/// `scale × scale` square of colour `c` (clipped to the image).
pub fn draw_text(img: &mut Image, x: i64, y: i64, text: &str, scale: u32, c: Rgb) {
    let s = i64::from(scale.max(1));
    for (k, ch) in text.chars().enumerate() {
        let x0 = x + k as i64 * 8 * s;
        if x0 >= i64::from(img.width()) {
            break;
        }
        for (row, bits) in glyph(ch).iter().enumerate() {
            for col in 0..8 {
                if bits & (1 << col) != 0 {
                    img.fill_rect(x0 + col * s, y + row as i64 * s, s, s, c);
                }
            }
        }
    }
}

/// Draws `text` centred horizontally on `cx`, top at `y`.
pub fn draw_text_centred(img: &mut Image, cx: i64, y: i64, text: &str, scale: u32, c: Rgb) {
    let w = i64::from(text_width(text, scale));
    draw_text(img, cx - w / 2, y, text, scale, c);
}

/// Draws `text` rotated a quarter turn anticlockwise (reading upwards, as a
/// y-axis label), centred vertically on `cy`, its left edge at `x`.
pub fn draw_text_vertical(img: &mut Image, x: i64, cy: i64, text: &str, scale: u32, c: Rgb) {
    let s = i64::from(scale.max(1));
    let w = i64::from(text_width(text, scale));
    let bottom = cy + w / 2;
    for (k, ch) in text.chars().enumerate() {
        let base = bottom - k as i64 * 8 * s;
        for (row, bits) in glyph(ch).iter().enumerate() {
            for col in 0..8 {
                if bits & (1 << col) != 0 {
                    // Font (col, row) → image (row, −col).
                    img.fill_rect(x + row as i64 * s, base - (col + 1) * s, s, s, c);
                }
            }
        }
    }
}

/// `text` cut to at most `max_width` pixels at `scale`, ending in `...`
/// when it was cut.
pub fn fit_text(text: &str, max_width: u32, scale: u32) -> String {
    if text_width(text, scale) <= max_width {
        return text.to_string();
    }
    let cell = GLYPH_SIZE * scale.max(1);
    let keep = (max_width / cell).saturating_sub(3) as usize;
    let mut s: String = text.chars().take(keep).collect();
    s.push_str("...");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glyphs_cover_ascii_latin_greek() {
        assert_ne!(glyph('A'), [0; 8]);
        assert_eq!(glyph(' '), [0; 8]);
        assert_ne!(glyph('±'), [0; 8]);
        assert_ne!(glyph('°'), [0; 8]);
        assert_ne!(glyph('θ'), [0; 8]);
        // Unknown characters become '?'.
        assert_eq!(glyph('\u{2603}'), glyph('?'));
        assert_eq!(glyph('\u{1}'), glyph('?'));
    }

    #[test]
    fn vertical_text_stays_in_its_column() {
        let mut img = Image::new(40, 100, Rgb::WHITE).unwrap();
        draw_text_vertical(&mut img, 10, 50, "HELLO", 1, Rgb::BLACK);
        for y in 0..100 {
            for x in 0..40 {
                let ink = img.get(x, y) != Some(Rgb::WHITE);
                if ink {
                    assert!((10..18).contains(&x) && (30..70).contains(&y), "({x},{y})");
                }
            }
        }
    }

    #[test]
    fn fit_text_cuts_long_text() {
        assert_eq!(fit_text("abc", 100, 1), "abc");
        let s = fit_text("abcdefghijklmnop", 80, 1);
        assert_eq!(s, "abcdefg...");
        assert!(text_width(&s, 1) <= 80);
    }
}
