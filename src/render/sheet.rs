//! Contact sheets: many pictures as thumbnails in a grid, each with a
//! caption underneath — for example the final piles of all runs of a sweep.

use super::image::{Image, Rgb};
use super::text::{draw_text_centred, fit_text, text_height};
use super::RenderError;

/// Width of a thumbnail cell in pixels; wider pictures are shrunk to it
/// (by area averaging, keeping their aspect ratio), narrower ones are
/// centred in it at their own size.
pub const THUMB_WIDTH: u32 = 400;

/// Space between cells and around the sheet, in pixels.
pub const SHEET_GAP: u32 = 12;

/// Height of the caption line under each thumbnail, in pixels (8-pixel text
/// with space above and below).
pub const CAPTION_HEIGHT: u32 = 20;

/// The size of a thumbnail of an `width × height` picture.
pub fn thumbnail_size(width: u32, height: u32) -> (u32, u32) {
    if width <= THUMB_WIDTH {
        return (width, height);
    }
    let h = (u64::from(height) * u64::from(THUMB_WIDTH) + u64::from(width) / 2) / u64::from(width);
    (THUMB_WIDTH, (h as u32).max(1))
}

/// The width and height of the contact sheet of `n` pictures whose tallest
/// thumbnail is `thumb_height` pixels high, in `columns` columns (at most
/// `n`): `cols × THUMB_WIDTH + (cols + 1) × SHEET_GAP` by
/// `rows × (thumb_height + CAPTION_HEIGHT) + (rows + 1) × SHEET_GAP`,
/// rows = ⌈n / cols⌉.
pub fn sheet_size(n: usize, columns: usize, thumb_height: u32) -> (u64, u64) {
    let cols = columns.clamp(1, n.max(1)) as u64;
    let rows = (n.max(1) as u64).div_ceil(cols);
    let w = cols * u64::from(THUMB_WIDTH) + (cols + 1) * u64::from(SHEET_GAP);
    let h = rows * u64::from(thumb_height + CAPTION_HEIGHT) + (rows + 1) * u64::from(SHEET_GAP);
    (w, h)
}

/// Puts `items` (a picture and its caption each) in a grid of `columns`
/// columns, row by row, each as a thumbnail (see [`THUMB_WIDTH`]) with its
/// caption (cut to fit) underneath; the sheet's size is [`sheet_size`].
/// Zero items give a small sheet saying "no pictures".
///
/// Errors: [`RenderError::Invalid`] for `columns == 0`;
/// [`RenderError::Size`] when the sheet would be larger than
/// [`MAX_SIDE`](super::image::MAX_SIDE).
pub fn contact_sheet(items: &[(Image, String)], columns: usize) -> Result<Image, RenderError> {
    if columns == 0 {
        return Err(RenderError::Invalid(
            "a contact sheet needs at least one column".to_string(),
        ));
    }
    let thumbs: Vec<Image> = items
        .iter()
        .map(|(img, _)| {
            let (w, h) = thumbnail_size(img.width(), img.height());
            if (w, h) == (img.width(), img.height()) {
                Ok(img.clone())
            } else {
                img.downscale(w, h)
            }
        })
        .collect::<Result<_, _>>()?;
    let thumb_h = thumbs
        .iter()
        .map(Image::height)
        .max()
        .unwrap_or(THUMB_WIDTH / 2);
    let (w, h) = sheet_size(items.len(), columns, thumb_h);
    let too_big = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    let mut sheet = Image::new(too_big(w), too_big(h), Rgb::WHITE)?;
    if items.is_empty() {
        let th = i64::from(text_height(1));
        draw_text_centred(
            &mut sheet,
            w as i64 / 2,
            h as i64 / 2 - th / 2,
            "no pictures",
            1,
            Rgb::INK,
        );
        return Ok(sheet);
    }
    let cols = columns.min(items.len());
    let gap = i64::from(SHEET_GAP);
    let cell_w = i64::from(THUMB_WIDTH);
    let cell_h = i64::from(thumb_h + CAPTION_HEIGHT);
    for (k, (thumb, (_, caption))) in thumbs.iter().zip(items).enumerate() {
        let (col, row) = ((k % cols) as i64, (k / cols) as i64);
        let x = gap + col * (cell_w + gap);
        let y = gap + row * (cell_h + gap);
        let tx = x + (cell_w - i64::from(thumb.width())) / 2;
        let ty = y + (i64::from(thumb_h) - i64::from(thumb.height())) / 2;
        sheet.blit(thumb, tx, ty);
        let text = fit_text(caption, THUMB_WIDTH, 1);
        let cy = y + i64::from(thumb_h) + (i64::from(CAPTION_HEIGHT) - 8) / 2;
        draw_text_centred(&mut sheet, x + cell_w / 2, cy, &text, 1, Rgb::INK);
    }
    Ok(sheet)
}
