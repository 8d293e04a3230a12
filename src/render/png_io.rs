//! PNG files: writing an [`Image`] (8-bit RGB, atomically through
//! [`write_atomic`]) and reading one back (any 8-bit PNG the `png` crate
//! decodes, turned into RGB).

use std::io::{self, Write};
use std::path::Path;

use crate::output::write_atomic;

use super::image::Image;
use super::RenderError;

/// Encodes `img` as an 8-bit RGB PNG into `w`.
pub fn encode_png<W: Write>(w: W, img: &Image) -> io::Result<()> {
    let mut enc = png::Encoder::new(w, img.width(), img.height());
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_compression(png::Compression::Fast);
    let mut writer = enc.write_header().map_err(png_to_io)?;
    writer.write_image_data(img.as_rgb()).map_err(png_to_io)?;
    writer.finish().map_err(png_to_io)
}

/// Writes `img` as a PNG file at `path`, atomically (the file is complete
/// or left as it was). Errors name the file.
pub fn write_png(path: impl AsRef<Path>, img: &Image) -> io::Result<()> {
    write_atomic(path.as_ref(), |w| encode_png(w, img))
}

/// Reads a PNG file into an RGB [`Image`]. Grey, grey+alpha and RGBA
/// images are converted (alpha dropped); palette images are expanded.
///
/// Errors: [`RenderError::Io`] when the file cannot be read,
/// [`RenderError::Invalid`] when it is not a PNG this reader understands
/// (both naming the file).
pub fn read_png(path: impl AsRef<Path>) -> Result<Image, RenderError> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|err| RenderError::Io {
        path: path.to_owned(),
        err,
    })?;
    decode_png(&bytes).map_err(|e| match e {
        RenderError::Invalid(why) => RenderError::Invalid(format!("{}: {why}", path.display())),
        other => other,
    })
}

/// Decodes PNG bytes into an RGB [`Image`] (see [`read_png`]).
pub fn decode_png(bytes: &[u8]) -> Result<Image, RenderError> {
    let bad = |e: png::DecodingError| RenderError::Invalid(format!("not a readable PNG: {e}"));
    let mut dec = png::Decoder::new(io::Cursor::new(bytes));
    dec.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = dec.read_info().map_err(bad)?;
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| RenderError::Invalid("PNG too large to decode".to_string()))?;
    let mut buf = vec![0; size];
    let info = reader.next_frame(&mut buf).map_err(bad)?;
    buf.truncate(info.buffer_size());
    let (w, h) = (info.width, info.height);
    let rgb: Vec<u8> = match info.color_type {
        png::ColorType::Rgb => buf,
        png::ColorType::Rgba => buf
            .chunks_exact(4)
            .flat_map(|p| [p[0], p[1], p[2]])
            .collect(),
        png::ColorType::Grayscale => buf.iter().flat_map(|&g| [g, g, g]).collect(),
        png::ColorType::GrayscaleAlpha => buf
            .chunks_exact(2)
            .flat_map(|p| [p[0], p[0], p[0]])
            .collect(),
        png::ColorType::Indexed => {
            return Err(RenderError::Invalid(
                "palette PNG was not expanded".to_string(),
            ))
        }
    };
    Image::from_rgb(w, h, rgb)
}

fn png_to_io(e: png::EncodingError) -> io::Error {
    match e {
        png::EncodingError::IoError(e) => e,
        other => io::Error::other(other.to_string()),
    }
}
