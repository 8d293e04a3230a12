//! A CSV file appended to as a run goes, whole records at a time: the
//! shared part of [`TrackWriter`](super::csv::TrackWriter) and
//! [`WallsWriter`](super::walls_csv::WallsWriter).
//!
//! Rows are collected in memory and go out in one `write` once
//! [`CHUNK`] bytes are pending, on [`RowFile::flush`], and on drop, never
//! through a buffer that could flush half a row: a process killed at any
//! moment leaves a file that ends on a row boundary (without the rows still
//! pending).

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::with_path;

/// Pending bytes past which [`RowFile::end_record`] writes them out.
const CHUNK: usize = 1 << 16;

/// An open row file and its pending rows.
#[derive(Debug)]
pub(crate) struct RowFile {
    path: PathBuf,
    /// `None` once finished.
    out: Option<File>,
    /// Whole records not yet written.
    pending: Vec<u8>,
}

impl RowFile {
    /// Creates (or truncates) the file at `path` and writes `header` as its
    /// first line.
    pub(crate) fn create(path: &Path, header: &str) -> io::Result<Self> {
        let mut file = File::create(path).map_err(|e| with_path(path, e))?;
        file.write_all(format!("{header}\n").as_bytes())
            .map_err(|e| with_path(path, e))?;
        Ok(RowFile::on(path.to_owned(), file))
    }

    /// Rows appended to `file` (open, positioned at its end).
    pub(crate) fn on(path: PathBuf, file: File) -> Self {
        RowFile {
            path,
            out: Some(file),
            pending: Vec::with_capacity(CHUNK),
        }
    }

    /// The file being written.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The pending bytes, to write a record's rows into (writes to a `Vec`
    /// do not fail); errors once finished.
    pub(crate) fn rows(&mut self) -> io::Result<&mut Vec<u8>> {
        match self.out {
            Some(_) => Ok(&mut self.pending),
            None => Err(self.finished()),
        }
    }

    /// Ends a record: writes the pending rows out once [`CHUNK`] bytes
    /// are pending.
    pub(crate) fn end_record(&mut self) -> io::Result<()> {
        if self.pending.len() >= CHUNK {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the pending rows (whole records, one write).
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        match self.out.as_mut() {
            Some(out) if !self.pending.is_empty() => {
                let result = out.write_all(&self.pending);
                self.pending.clear();
                result.map_err(|e| with_path(&self.path, e))
            }
            _ => Ok(()),
        }
    }

    /// Writes the pending rows and returns the file's length.
    pub(crate) fn flushed_len(&mut self) -> io::Result<u64> {
        self.flush()?;
        match &self.out {
            Some(f) => f
                .metadata()
                .map(|m| m.len())
                .map_err(|e| with_path(&self.path, e)),
            None => Err(self.finished()),
        }
    }

    /// The error of a write after [`finish`](Self::finish).
    fn finished(&self) -> io::Error {
        io::Error::other(format!("{}: already finished", self.path.display()))
    }

    /// Writes the pending rows and closes the file, reporting any error.
    pub(crate) fn finish(&mut self) -> io::Result<()> {
        let result = self.flush();
        self.out = None;
        result
    }
}

impl Drop for RowFile {
    fn drop(&mut self) {
        if let Err(e) = self.flush() {
            log::error!("could not write the last rows: {e}");
        }
    }
}
