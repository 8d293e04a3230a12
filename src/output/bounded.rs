//! Reading tables repose wrote without trusting their size: a reader that
//! refuses a line longer than any table of ours has ([`MAX_LINE`]), so a
//! file of a gigabyte with no line break is refused after its first
//! [`MAX_LINE`] bytes instead of read whole into memory, and [`clip`],
//! which shortens a field or a header to what an error message should
//! quote (the start of a line, never a megabyte of it).

use std::io::{self, Read};
use std::path::Path;

/// The longest line a table repose writes can have, with room to spare:
/// a `final.csv` row is about 400 bytes, a `sweep.csv` row holds an error
/// message of at most a few kilobytes.
pub const MAX_LINE: usize = 64 * 1024;

/// The most characters of a field or header an error message quotes.
pub const QUOTED: usize = 80;

/// `s` cut to its first [`QUOTED`] characters, with "…" and the full
/// length when cut.
pub fn clip(s: &str) -> String {
    match s.char_indices().nth(QUOTED) {
        None => s.to_string(),
        Some((at, _)) => format!("{}… ({} bytes in all)", &s[..at], s.len()),
    }
}

/// A reader that fails with `InvalidData` once a line (bytes since the
/// last `\n`) grows past [`MAX_LINE`] bytes; the error says which line.
pub struct LineLimit<R> {
    inner: R,
    run: usize,
    line: usize,
}

impl<R: Read> LineLimit<R> {
    /// Wraps `inner`.
    pub fn new(inner: R) -> Self {
        LineLimit {
            inner,
            run: 0,
            line: 1,
        }
    }
}

impl<R: Read> Read for LineLimit<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // Never hand out more than the rest of the allowed line at once,
        // so the limit holds however large `buf` is.
        let room = MAX_LINE + 1 - self.run;
        let want = buf.len().min(room.max(1));
        let n = self.inner.read(&mut buf[..want])?;
        for &b in &buf[..n] {
            if b == b'\n' {
                self.run = 0;
                self.line += 1;
            } else {
                self.run += 1;
                if self.run > MAX_LINE {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                            "line {} is longer than {MAX_LINE} bytes: not a table repose wrote",
                            self.line
                        ),
                    ));
                }
            }
        }
        Ok(n)
    }
}

/// The file at `path` opened for streaming through [`LineLimit`].
pub fn open(path: &Path) -> io::Result<LineLimit<io::BufReader<std::fs::File>>> {
    Ok(LineLimit::new(io::BufReader::new(std::fs::File::open(
        path,
    )?)))
}

/// The text of the file at `path`, read through [`LineLimit`]: a file
/// with a line past [`MAX_LINE`] bytes (a binary file, a file of NUL
/// bytes) is refused once that line is read, not held whole.
pub fn read_text(path: &Path) -> io::Result<String> {
    let mut text = String::new();
    open(path)?.read_to_string(&mut text)?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_past_the_limit_is_refused_after_reading_little_more_than_it() {
        let big = vec![0u8; 10 * MAX_LINE];
        let mut r = LineLimit::new(&big[..]);
        let mut sink = Vec::new();
        let e = r.read_to_end(&mut sink).unwrap_err();
        assert!(e.to_string().contains("line 1 is longer than"), "{e}");
        assert!(sink.len() <= MAX_LINE + 1, "read {} bytes", sink.len());
        let ok = b"a,b\n1,2\n".repeat(1000);
        let mut all = Vec::new();
        LineLimit::new(&ok[..]).read_to_end(&mut all).unwrap();
        assert_eq!(all, ok);
    }

    #[test]
    fn clip_keeps_short_text_and_cuts_long_text_at_a_character() {
        assert_eq!(clip("run,seed"), "run,seed");
        let long = "é".repeat(1000);
        let c = clip(&long);
        assert!(
            c.starts_with(&"é".repeat(QUOTED)) && c.ends_with("(2000 bytes in all)"),
            "{c}"
        );
    }
}
