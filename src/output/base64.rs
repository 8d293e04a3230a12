//! A streaming base64 encoder (RFC 4648, standard alphabet, `=` padding),
//! used for the inline binary arrays of VTK XML files.

use std::io::{self, Write};

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Encodes one group of 1–3 bytes into 4 characters, padding with `=`.
fn encode_group(group: &[u8], out: &mut [u8; 4]) {
    let b = [
        group[0],
        group.get(1).copied().unwrap_or(0),
        group.get(2).copied().unwrap_or(0),
    ];
    let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
    for (k, o) in out.iter_mut().enumerate() {
        *o = ALPHABET[((n >> (18 - 6 * k)) & 63) as usize];
    }
    if group.len() < 3 {
        out[3] = b'=';
    }
    if group.len() < 2 {
        out[2] = b'=';
    }
}

/// Plain bytes staged before encoding (a multiple of 3, so only the very
/// last group of a stream can need padding).
const STAGE: usize = 3 * 2048;

/// Base64-encodes everything written to it into the inner writer. Plain
/// bytes are staged and encoded in blocks; [`Base64Writer::finish`] encodes
/// the rest, padding the last group. All writes between `new` and `finish`
/// form one base64 stream (as VTK wants for a header plus its data).
pub(crate) struct Base64Writer<'a, W: Write> {
    inner: &'a mut W,
    raw: Vec<u8>,
    coded: Vec<u8>,
    total: u64,
}

impl<'a, W: Write> Base64Writer<'a, W> {
    pub(crate) fn new(inner: &'a mut W) -> Self {
        Base64Writer {
            inner,
            raw: Vec::with_capacity(STAGE),
            coded: Vec::with_capacity(STAGE / 3 * 4),
            total: 0,
        }
    }

    /// Number of plain (not yet encoded) bytes written so far.
    pub(crate) fn bytes_in(&self) -> u64 {
        self.total
    }

    /// Encodes the staged bytes (padding a last partial group) and writes
    /// them to the inner writer.
    fn encode_staged(&mut self) -> io::Result<()> {
        let mut out = [0u8; 4];
        for group in self.raw.chunks(3) {
            encode_group(group, &mut out);
            self.coded.extend_from_slice(&out);
        }
        self.inner.write_all(&self.coded)?;
        self.raw.clear();
        self.coded.clear();
        Ok(())
    }

    /// Encodes and writes everything still staged; must be called once at
    /// the end.
    pub(crate) fn finish(mut self) -> io::Result<()> {
        self.encode_staged()
    }
}

impl<W: Write> Write for Base64Writer<'_, W> {
    fn write(&mut self, mut buf: &[u8]) -> io::Result<usize> {
        let len = buf.len();
        while !buf.is_empty() {
            let take = (STAGE - self.raw.len()).min(buf.len());
            self.raw.extend_from_slice(&buf[..take]);
            buf = &buf[take..];
            if self.raw.len() == STAGE {
                self.encode_staged()?;
            }
        }
        self.total += len as u64;
        Ok(len)
    }

    /// Writes what is encoded so far; a partial group stays staged (a
    /// flush must not pad the middle of the stream).
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
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
        for split in [1usize, 2, 4, 5, 7, 4097, STAGE, STAGE + 1] {
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
