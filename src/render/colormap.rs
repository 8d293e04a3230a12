//! The viridis colour map (perceptually uniform, readable in grey and by
//! most colour-blind readers) as a small table with linear interpolation,
//! and a qualitative palette for plot lines.

use super::image::Rgb;

/// Viridis at t = 0, 0.1, …, 1 (matplotlib's values).
const VIRIDIS: [[u8; 3]; 11] = [
    [68, 1, 84],
    [72, 36, 117],
    [65, 68, 135],
    [53, 95, 141],
    [42, 120, 142],
    [33, 145, 140],
    [34, 168, 132],
    [68, 191, 112],
    [122, 209, 81],
    [189, 223, 38],
    [253, 231, 37],
];

/// The viridis colour at `t` in 0…1 (dark purple → blue → green → yellow);
/// `t` outside is clamped, NaN gives the colour at 0.
pub fn viridis(t: f64) -> Rgb {
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let x = t * (VIRIDIS.len() - 1) as f64;
    let i = (x.floor() as usize).min(VIRIDIS.len() - 2);
    Rgb(VIRIDIS[i]).mix(Rgb(VIRIDIS[i + 1]), x - i as f64)
}

/// Ten well-separated colours for plot series (Tableau 10), in order.
pub const PALETTE: [Rgb; 10] = [
    Rgb([31, 119, 180]),
    Rgb([255, 127, 14]),
    Rgb([44, 160, 44]),
    Rgb([214, 39, 40]),
    Rgb([148, 103, 189]),
    Rgb([140, 86, 75]),
    Rgb([227, 119, 194]),
    Rgb([127, 127, 127]),
    Rgb([188, 189, 34]),
    Rgb([23, 190, 207]),
];

/// The colour of series number `i` (the palette repeats after 10).
pub fn series_colour(i: usize) -> Rgb {
    PALETTE[i % PALETTE.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn viridis_ends_and_clamps() {
        assert_eq!(viridis(0.0), Rgb([68, 1, 84]));
        assert_eq!(viridis(1.0), Rgb([253, 231, 37]));
        assert_eq!(viridis(-3.0), viridis(0.0));
        assert_eq!(viridis(7.0), viridis(1.0));
        assert_eq!(viridis(f64::NAN), viridis(0.0));
        assert_eq!(viridis(0.5), Rgb([33, 145, 140]));
        // Brightness (sum of channels) rises along the map.
        let sum = |c: Rgb| c.0.iter().map(|&v| u32::from(v)).sum::<u32>();
        for k in 0..20 {
            let (a, b) = (viridis(k as f64 / 20.0), viridis((k + 1) as f64 / 20.0));
            assert!(sum(b) > sum(a), "{k}: {a:?} {b:?}");
        }
    }
}
