//! Streaming base64 (RFC 4648, standard alphabet, `=` padding) for the
//! inline binary arrays of VTK XML files: the `base64` crate's encoder (a
//! maintained one rather than our own), with a count of the plain bytes
//! written, which the VTU writer checks against what it announced.

use std::io::{self, Write};

use base64::engine::general_purpose::STANDARD;
use base64::write::EncoderWriter;

/// Base64-encodes everything written to it into the inner writer; all
/// writes between `new` and [`Base64Writer::finish`] form one base64 stream
/// (as VTK wants for a header plus its data), padded at the end only.
pub(crate) struct Base64Writer<'a, W: Write> {
    enc: EncoderWriter<'static, base64::engine::GeneralPurpose, &'a mut W>,
    total: u64,
}

impl<'a, W: Write> Base64Writer<'a, W> {
    pub(crate) fn new(inner: &'a mut W) -> Self {
        Base64Writer {
            enc: EncoderWriter::new(inner, &STANDARD),
            total: 0,
        }
    }

    /// Number of plain (not yet encoded) bytes written so far.
    pub(crate) fn bytes_in(&self) -> u64 {
        self.total
    }

    /// Encodes and writes everything still buffered, padding the last
    /// group; must be called once at the end.
    pub(crate) fn finish(mut self) -> io::Result<()> {
        self.enc.finish().map(|_| ())
    }
}

impl<W: Write> Write for Base64Writer<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.enc.write(buf)?;
        self.total += n as u64;
        Ok(n)
    }

    /// Writes what is encoded so far; a partial group stays buffered (a
    /// flush does not pad the middle of the stream).
    fn flush(&mut self) -> io::Result<()> {
        self.enc.flush()
    }
}

/// Encodes a byte slice to a base64 string.
#[cfg(test)]
pub(crate) fn encode(bytes: &[u8]) -> String {
    let mut out = Vec::new();
    let mut w = Base64Writer::new(&mut out);
    w.write_all(bytes).unwrap();
    w.finish().unwrap();
    String::from_utf8(out).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_test_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, coded) in cases {
            assert_eq!(encode(plain.as_bytes()), coded, "input {plain:?}");
        }
    }

    #[test]
    fn base64_uses_the_whole_alphabet_and_high_bytes() {
        assert_eq!(encode(&[0xff, 0xff, 0xff]), "////");
        assert_eq!(encode(&[0xfb, 0xef, 0xbe]), "++++");
        assert_eq!(encode(&[0, 0, 0]), "AAAA");
        assert_eq!(encode(&[0x00, 0x10, 0x83]), "ABCD");
    }

    #[test]
    fn base64_stream_is_independent_of_how_writes_are_split() {
        let data: Vec<u8> = (0..20_000u32).map(|i| (i * 7919 % 251) as u8).collect();
        let whole = encode(&data);
        for split in [1usize, 2, 4, 5, 7, 1023, 1024, 1025, 4097, 6144, 6145] {
            let mut out = Vec::new();
            let mut w = Base64Writer::new(&mut out);
            for piece in data.chunks(split) {
                w.write_all(piece).unwrap();
            }
            w.finish().unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), whole, "split {split}");
        }
        assert_eq!(whole.len(), data.len().div_ceil(3) * 4);
    }
}
