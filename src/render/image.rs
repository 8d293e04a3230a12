//! A plain RGB raster ([`Image`]) and the few drawing operations the
//! pictures need: filled rectangles, thick lines, filled circles, copying
//! one image into another and downscaling by area averaging.
//!
//! Drawing clips to the image: pixels outside it are silently skipped, so
//! callers never index out of bounds.

use super::RenderError;

/// The largest width or height of an [`Image`], in pixels.
pub const MAX_SIDE: u32 = 16_384;

/// An 8-bit-per-channel RGB colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rgb(pub [u8; 3]);

impl Rgb {
    /// White.
    pub const WHITE: Rgb = Rgb([255, 255, 255]);
    /// Black.
    pub const BLACK: Rgb = Rgb([0, 0, 0]);
    /// The dark grey used for text and axes.
    pub const INK: Rgb = Rgb([40, 40, 40]);
    /// A light grey for frames and grid lines.
    pub const LIGHT_GREY: Rgb = Rgb([200, 200, 200]);

    /// The colour with every channel multiplied by `k` (clamped to 0…255).
    pub fn scaled(self, k: f64) -> Rgb {
        let c = |v: u8| (f64::from(v) * k).round().clamp(0.0, 255.0) as u8;
        Rgb([c(self.0[0]), c(self.0[1]), c(self.0[2])])
    }

    /// The colour `t` of the way from `self` to `other` (`t` clamped to 0…1).
    pub fn mix(self, other: Rgb, t: f64) -> Rgb {
        let t = if t.is_finite() {
            t.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let c = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * t).round() as u8;
        Rgb([
            c(self.0[0], other.0[0]),
            c(self.0[1], other.0[1]),
            c(self.0[2], other.0[2]),
        ])
    }
}

/// A `width × height` RGB image, rows from top to bottom, 3 bytes a pixel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    width: u32,
    height: u32,
    data: Vec<u8>,
}

impl Image {
    /// A `width × height` image filled with `fill`.
    ///
    /// Errors: [`RenderError::Size`] when a side is 0 or larger than
    /// [`MAX_SIDE`].
    pub fn new(width: u32, height: u32, fill: Rgb) -> Result<Image, RenderError> {
        check_size(width, height)?;
        let n = width as usize * height as usize;
        let mut data = Vec::with_capacity(3 * n);
        for _ in 0..n {
            data.extend_from_slice(&fill.0);
        }
        Ok(Image {
            width,
            height,
            data,
        })
    }

    /// An image from raw RGB bytes (rows top to bottom).
    ///
    /// Errors: [`RenderError::Size`] for a bad size, [`RenderError::Invalid`]
    /// when `data` is not exactly `3 × width × height` bytes.
    pub fn from_rgb(width: u32, height: u32, data: Vec<u8>) -> Result<Image, RenderError> {
        check_size(width, height)?;
        let want = 3 * width as usize * height as usize;
        if data.len() != want {
            return Err(RenderError::Invalid(format!(
                "{width}×{height} RGB image needs {want} bytes, got {}",
                data.len()
            )));
        }
        Ok(Image {
            width,
            height,
            data,
        })
    }

    /// Width in pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The raw RGB bytes, rows from top to bottom.
    pub fn as_rgb(&self) -> &[u8] {
        &self.data
    }

    fn index(&self, x: i64, y: i64) -> Option<usize> {
        if x < 0 || y < 0 || x >= i64::from(self.width) || y >= i64::from(self.height) {
            return None;
        }
        Some(3 * (y as usize * self.width as usize + x as usize))
    }

    /// The pixel at column `x`, row `y` (0, 0 = top left); `None` outside.
    pub fn get(&self, x: i64, y: i64) -> Option<Rgb> {
        self.index(x, y)
            .map(|i| Rgb([self.data[i], self.data[i + 1], self.data[i + 2]]))
    }

    /// Sets the pixel at (`x`, `y`); does nothing outside the image.
    pub fn set(&mut self, x: i64, y: i64, c: Rgb) {
        if let Some(i) = self.index(x, y) {
            self.data[i..i + 3].copy_from_slice(&c.0);
        }
    }

    /// Blends `c` over the pixel at (`x`, `y`) with opacity `alpha` (0…1).
    pub fn blend(&mut self, x: i64, y: i64, c: Rgb, alpha: f64) {
        if let Some(old) = self.get(x, y) {
            self.set(x, y, old.mix(c, alpha));
        }
    }

    /// Fills the rectangle with top-left corner (`x`, `y`), `w` wide and `h`
    /// high (clipped to the image).
    pub fn fill_rect(&mut self, x: i64, y: i64, w: i64, h: i64, c: Rgb) {
        let x0 = x.max(0);
        let y0 = y.max(0);
        let x1 = x.saturating_add(w).min(i64::from(self.width));
        let y1 = y.saturating_add(h).min(i64::from(self.height));
        for yy in y0..y1 {
            for xx in x0..x1 {
                self.set(xx, yy, c);
            }
        }
    }

    /// Draws the one-pixel outline of a rectangle (as [`fill_rect`](Self::fill_rect)).
    pub fn stroke_rect(&mut self, x: i64, y: i64, w: i64, h: i64, c: Rgb) {
        if w <= 0 || h <= 0 {
            return;
        }
        self.fill_rect(x, y, w, 1, c);
        self.fill_rect(x, y + h - 1, w, 1, c);
        self.fill_rect(x, y, 1, h, c);
        self.fill_rect(x + w - 1, y, 1, h, c);
    }

    /// Fills the disk of radius `r` pixels centred at (`cx`, `cy`) (pixel
    /// coordinates, pixel centres at half-integers).
    pub fn fill_circle(&mut self, cx: f64, cy: f64, r: f64, c: Rgb) {
        if !(cx.is_finite() && cy.is_finite() && r.is_finite()) || r <= 0.0 {
            return;
        }
        let (x0, x1) = clip_span(cx - r, cx + r, self.width);
        let (y0, y1) = clip_span(cy - r, cy + r, self.height);
        for y in y0..y1 {
            let dy = y as f64 + 0.5 - cy;
            for x in x0..x1 {
                let dx = x as f64 + 0.5 - cx;
                if dx * dx + dy * dy <= r * r {
                    self.set(x, y, c);
                }
            }
        }
    }

    /// Draws a line `width` pixels thick from (`x0`, `y0`) to (`x1`, `y1`)
    /// (pixel coordinates), with round ends. Non-finite ends draw nothing;
    /// the part outside the image is skipped.
    pub fn line(&mut self, x0: f64, y0: f64, x1: f64, y1: f64, width: f64, c: Rgb) {
        if ![x0, y0, x1, y1, width].iter().all(|v| v.is_finite()) {
            return;
        }
        let r = (width / 2.0).max(0.5);
        // Clip the segment to the image grown by the pen radius, so that a
        // far-away end cannot make the loop below long.
        let pad = r + 1.0;
        let Some((x0, y0, x1, y1)) = clip_segment(
            (x0, y0, x1, y1),
            (
                -pad,
                -pad,
                f64::from(self.width) + pad,
                f64::from(self.height) + pad,
            ),
        ) else {
            return;
        };
        let len = ((x1 - x0).powi(2) + (y1 - y0).powi(2)).sqrt();
        let (bx0, bx1) = clip_span(x0.min(x1) - r, x0.max(x1) + r, self.width);
        let (by0, by1) = clip_span(y0.min(y1) - r, y0.max(y1) + r, self.height);
        for y in by0..by1 {
            let py = y as f64 + 0.5;
            for x in bx0..bx1 {
                let px = x as f64 + 0.5;
                // Distance from the pixel centre to the segment.
                let t = if len > 0.0 {
                    (((px - x0) * (x1 - x0) + (py - y0) * (y1 - y0)) / (len * len)).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                let (qx, qy) = (x0 + t * (x1 - x0), y0 + t * (y1 - y0));
                let d = ((px - qx).powi(2) + (py - qy).powi(2)).sqrt();
                if d <= r - 0.5 {
                    self.set(x, y, c);
                } else if d < r + 0.5 {
                    // One pixel of antialiasing at the edge.
                    self.blend(x, y, c, r + 0.5 - d);
                }
            }
        }
    }

    /// Copies `src` into this image with its top-left corner at (`x`, `y`)
    /// (clipped).
    pub fn blit(&mut self, src: &Image, x: i64, y: i64) {
        for sy in 0..i64::from(src.height) {
            for sx in 0..i64::from(src.width) {
                if let Some(c) = src.get(sx, sy) {
                    self.set(x + sx, y + sy, c);
                }
            }
        }
    }

    /// This image shrunk to `width × height` by area averaging: each new
    /// pixel is the mean of the old pixels it covers, weighted by the
    /// covered fraction of each. Enlarging a side repeats pixels instead.
    ///
    /// Errors: [`RenderError::Size`] for a bad size.
    pub fn downscale(&self, width: u32, height: u32) -> Result<Image, RenderError> {
        check_size(width, height)?;
        let wx = area_weights(self.width, width);
        let wy = area_weights(self.height, height);
        let (sw, sh) = (self.width as usize, self.height as usize);
        // Horizontal pass into f32 rows, then vertical pass.
        let mut tmp = vec![0f32; 3 * width as usize * sh];
        for y in 0..sh {
            for (ox, ws) in wx.iter().enumerate() {
                let mut acc = [0f32; 3];
                for &(sx, w) in ws {
                    let i = 3 * (y * sw + sx);
                    for (a, v) in acc.iter_mut().zip(&self.data[i..i + 3]) {
                        *a += w * f32::from(*v);
                    }
                }
                let o = 3 * (y * width as usize + ox);
                tmp[o..o + 3].copy_from_slice(&acc);
            }
        }
        let mut data = vec![0u8; 3 * width as usize * height as usize];
        for (oy, ws) in wy.iter().enumerate() {
            for ox in 0..width as usize {
                let mut acc = [0f32; 3];
                for &(sy, w) in ws {
                    let i = 3 * (sy * width as usize + ox);
                    for (a, v) in acc.iter_mut().zip(&tmp[i..i + 3]) {
                        *a += w * v;
                    }
                }
                let o = 3 * (oy * width as usize + ox);
                for (d, a) in data[o..o + 3].iter_mut().zip(acc) {
                    *d = a.round().clamp(0.0, 255.0) as u8;
                }
            }
        }
        Image::from_rgb(width, height, data)
    }
}

fn check_size(width: u32, height: u32) -> Result<(), RenderError> {
    if width == 0 || height == 0 || width > MAX_SIDE || height > MAX_SIDE {
        return Err(RenderError::Size {
            width,
            height,
            max: MAX_SIDE,
        });
    }
    Ok(())
}

/// The pixel range `[lo, hi)` of pixels whose centres may lie in `[a, b]`,
/// clipped to `0..n`.
pub(crate) fn clip_span(a: f64, b: f64, n: u32) -> (i64, i64) {
    let lo = (a - 0.5).floor().max(0.0);
    let hi = ((b - 0.5).ceil() + 1.0).min(f64::from(n));
    if hi <= lo {
        return (0, 0);
    }
    (lo as i64, hi as i64)
}

/// For each of `m` output cells over `n` input cells, the input cells it
/// covers and their weights (the covered fraction, normalised to sum 1).
fn area_weights(n: u32, m: u32) -> Vec<Vec<(usize, f32)>> {
    let scale = f64::from(n) / f64::from(m);
    (0..m)
        .map(|o| {
            let a = f64::from(o) * scale;
            let b = a + scale;
            if scale <= 1.0 {
                // Enlarging: nearest input cell.
                let i = ((a + b) / 2.0).floor().clamp(0.0, f64::from(n - 1)) as usize;
                return vec![(i, 1.0)];
            }
            let mut ws = Vec::new();
            let first = a.floor() as usize;
            let last = (b.ceil() as usize).min(n as usize);
            for i in first..last {
                let cover = (b.min(i as f64 + 1.0) - a.max(i as f64)).max(0.0);
                if cover > 0.0 {
                    ws.push((i, (cover / scale) as f32));
                }
            }
            ws
        })
        .collect()
}

/// Liang–Barsky clipping of a segment to the box `(xmin, ymin, xmax, ymax)`.
fn clip_segment(
    (x0, y0, x1, y1): (f64, f64, f64, f64),
    (xmin, ymin, xmax, ymax): (f64, f64, f64, f64),
) -> Option<(f64, f64, f64, f64)> {
    let (dx, dy) = (x1 - x0, y1 - y0);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [
        (-dx, x0 - xmin),
        (dx, xmax - x0),
        (-dy, y0 - ymin),
        (dy, ymax - y0),
    ] {
        if p == 0.0 {
            if q < 0.0 {
                return None;
            }
        } else {
            let r = q / p;
            if p < 0.0 {
                t0 = t0.max(r);
            } else {
                t1 = t1.min(r);
            }
        }
    }
    if t0 > t1 {
        return None;
    }
    Some((x0 + t0 * dx, y0 + t0 * dy, x0 + t1 * dx, y0 + t1 * dy))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_rejects_bad_sizes() {
        assert!(Image::new(0, 5, Rgb::WHITE).is_err());
        assert!(Image::new(5, MAX_SIDE + 1, Rgb::WHITE).is_err());
        assert!(Image::from_rgb(2, 2, vec![0; 11]).is_err());
    }

    #[test]
    fn drawing_outside_is_clipped() {
        let mut img = Image::new(4, 4, Rgb::WHITE).unwrap();
        img.set(-1, 0, Rgb::BLACK);
        img.set(4, 4, Rgb::BLACK);
        img.fill_rect(-10, -10, 12, 12, Rgb::BLACK);
        img.line(-1e12, 2.5, 1e12, 2.5, 1.0, Rgb::BLACK);
        img.fill_circle(f64::NAN, 1.0, 3.0, Rgb::BLACK);
        assert_eq!(img.get(0, 0), Some(Rgb::BLACK));
        assert_eq!(img.get(3, 0), Some(Rgb::WHITE));
        assert_eq!(img.get(3, 2), Some(Rgb::BLACK));
        assert_eq!(img.get(4, 0), None);
    }

    #[test]
    fn downscale_averages_areas() {
        // 4×2 image: left half black, right half white → 2×1: black, white;
        // → 1×1: mid grey.
        let mut img = Image::new(4, 2, Rgb::WHITE).unwrap();
        img.fill_rect(0, 0, 2, 2, Rgb::BLACK);
        let half = img.downscale(2, 1).unwrap();
        assert_eq!(half.get(0, 0), Some(Rgb::BLACK));
        assert_eq!(half.get(1, 0), Some(Rgb::WHITE));
        let one = img.downscale(1, 1).unwrap();
        assert_eq!(one.get(0, 0), Some(Rgb([128, 128, 128])));
        // A factor of 4/3: the middle output pixel covers 2/3 of a black
        // pixel and 2/3 of a white one.
        let third = img.downscale(3, 1).unwrap();
        assert_eq!(third.get(0, 0), Some(Rgb::BLACK));
        assert_eq!(third.get(1, 0), Some(Rgb([128, 128, 128])));
        assert_eq!(third.get(2, 0), Some(Rgb::WHITE));
    }
}
