//! The text of a Siconos problem file, read: a lexer (whitespace-separated
//! tokens with their line numbers) and a parser that checks every number
//! against the format (module docs of [`super`]) and names the file, line
//! and field of anything wrong.

use std::collections::BTreeMap;

use super::{BlockMatrix, SiconosError, SiconosProblem, Storage};
use crate::material::FrictionLaw;

/// Parses a problem from its text; `file` names it in error messages.
pub(super) fn problem(text: &str, file: &str) -> Result<SiconosProblem, SiconosError> {
    Parser {
        lex: Lexer::new(text),
        file,
    }
    .problem()
}

// ---------------------------------------------------------------------------
// Lexer: whitespace-separated tokens with their line numbers
// ---------------------------------------------------------------------------

struct Lexer<'a> {
    lines: Vec<&'a str>,
    /// Current line (0-based) and byte offset in it.
    line: usize,
    pos: usize,
}

impl<'a> Lexer<'a> {
    fn new(text: &'a str) -> Self {
        let mut lines: Vec<&str> = text.split('\n').collect();
        if lines.len() > 1 && lines.last() == Some(&"") {
            lines.pop();
        }
        Lexer {
            lines,
            line: 0,
            pos: 0,
        }
    }

    /// The line reported for an unexpected end of file: the last line.
    fn eof_line(&self) -> usize {
        self.lines.len().max(1)
    }

    /// Moves to the start of the next token; false at the end of the file.
    fn skip_space(&mut self) -> bool {
        while self.line < self.lines.len() {
            let rest = &self.lines[self.line][self.pos..];
            let trimmed = rest.trim_start();
            if trimmed.is_empty() {
                self.line += 1;
                self.pos = 0;
            } else {
                self.pos += rest.len() - trimmed.len();
                return true;
            }
        }
        false
    }

    /// The next token and its 1-based line.
    fn token(&mut self) -> Option<(usize, &'a str)> {
        if !self.skip_space() {
            return None;
        }
        let rest = &self.lines[self.line][self.pos..];
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        self.pos += end;
        Some((self.line + 1, &rest[..end]))
    }

    /// The rest of the current line from the next token on (skipping blank
    /// lines), trimmed, and its 1-based line; moves to the next line.
    fn rest_of_line(&mut self) -> Option<(usize, &'a str)> {
        if !self.skip_space() {
            return None;
        }
        let rest = self.lines[self.line][self.pos..].trim_end();
        let line = self.line + 1;
        self.line += 1;
        self.pos = 0;
        Some((line, rest))
    }
}

// ---------------------------------------------------------------------------
// Parser
// ---------------------------------------------------------------------------

/// W as read, before it is turned into blocks (which happens after q has
/// been read, so that nc is known to be backed by data).
enum RawMatrix {
    /// Dense values, column-major, n × n.
    Dense(Vec<f64>),
    /// (block row, block column, d×d values row-major) of a sparse-block file.
    Blocks(Vec<(usize, usize, Vec<f64>)>),
    /// (row, column, value) entries of a CSparse dump (duplicates add up).
    Entries(Vec<(usize, usize, f64)>),
}

struct Parser<'a> {
    lex: Lexer<'a>,
    file: &'a str,
}

type Res<T> = Result<T, SiconosError>;

/// Parses a `%g`-printed non-negative integer ("12", or "1e+06" for large
/// values as CSparse prints them).
pub(super) fn parse_index(tok: &str) -> Option<usize> {
    if let Ok(v) = tok.parse::<usize>() {
        return Some(v);
    }
    let v: f64 = tok.parse().ok()?;
    (v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v < 9.0e15).then_some(v as usize)
}

/// Parses a `%g`-printed integer that may be negative (CSparse prints
/// "locations 0 to -1" for an empty first column).
pub(super) fn parse_signed(tok: &str) -> Option<i64> {
    if let Ok(v) = tok.parse::<i64>() {
        return Some(v);
    }
    let v: f64 = tok.parse().ok()?;
    (v.is_finite() && v.fract() == 0.0 && v.abs() < 9.0e15).then_some(v as i64)
}

impl<'a> Parser<'a> {
    fn err<T>(&self, line: usize, reason: impl Into<String>) -> Res<T> {
        Err(SiconosError::Parse {
            file: self.file.to_string(),
            line,
            reason: reason.into(),
        })
    }

    fn eof<T>(&self, what: &str) -> Res<T> {
        self.err(
            self.lex.eof_line(),
            format!("unexpected end of file while reading {what}"),
        )
    }

    /// A non-negative integer.
    fn index(&mut self, what: &str) -> Res<(usize, usize)> {
        let Some((line, tok)) = self.lex.token() else {
            return self.eof(what);
        };
        match parse_index(tok) {
            Some(v) => Ok((v, line)),
            None => self.err(
                line,
                format!("expected a non-negative integer for {what}, found {tok:?}"),
            ),
        }
    }

    /// A literal token such as ":" or "to".
    fn literal(&mut self, want: &str, context: &str) -> Res<()> {
        let Some((line, tok)) = self.lex.token() else {
            return self.eof(context);
        };
        if tok == want {
            Ok(())
        } else {
            self.err(
                line,
                format!("expected {want:?} in {context}, found {tok:?}"),
            )
        }
    }

    /// A finite number; `what` names it in messages (`"q[3]"`), `eof_what` is
    /// what an end of file interrupts ("q (got 3 of 9 values)").
    fn number(
        &mut self,
        what: &dyn Fn() -> String,
        eof_what: &dyn Fn() -> String,
    ) -> Res<(f64, usize)> {
        let Some((line, tok)) = self.lex.token() else {
            return self.eof(&eof_what());
        };
        match tok.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok((v, line)),
            Ok(_) => self.err(line, format!("{} is not finite ({tok})", what())),
            Err(_) => self.err(
                line,
                format!("expected a number for {}, found {tok:?}", what()),
            ),
        }
    }

    /// `n` finite numbers named `name[k]`; values are pushed as read, so a
    /// bogus `n` only costs the tokens the file really has.
    fn vector(&mut self, n: usize, name: &str) -> Res<Vec<(f64, usize)>> {
        let mut out = Vec::new();
        for k in 0..n {
            out.push(self.number(&|| format!("{name}[{k}]"), &|| {
                format!("{name} (got {k} of {n} values)")
            })?);
        }
        Ok(out)
    }

    fn problem(mut self) -> Res<SiconosProblem> {
        let (dim, line) = self.index("the dimension d")?;
        if dim != 3 && dim != 5 && dim != 6 {
            return self.err(
                line,
                format!(
                    "unsupported dimension {dim}: expected 3 (fc3d), 5 (rfc3d) \
                     or 6 (repose's rolling and spinning)"
                ),
            );
        }
        let (nc, line) = self.index("the number of contacts")?;
        if nc == 0 {
            return self.err(line, "the problem has no contacts");
        }
        let Some(n) = dim.checked_mul(nc) else {
            return self.err(line, format!("{nc} contacts is too many"));
        };
        let (st, st_line) = self.index("the storage type of W")?;
        let (size0, line0) = self.index("the number of rows of W")?;
        if size0 != n {
            return self.err(
                line0,
                format!("W has {size0} rows, expected d·nc = {dim}·{nc} = {n}"),
            );
        }
        let (size1, line1) = self.index("the number of columns of W")?;
        if size1 != n {
            return self.err(
                line1,
                format!("W has {size1} columns, expected d·nc = {dim}·{nc} = {n}"),
            );
        }
        let (storage, raw) = match st {
            0 => (Storage::Dense, self.dense(n)?),
            1 => (Storage::SparseBlock, self.sparse_block(dim, nc)?),
            2 => (Storage::Sparse, self.csparse(n)?),
            _ => {
                return self.err(
                    st_line,
                    format!(
                        "unsupported storage type {st} for W \
                         (expected 0 dense, 1 sparse-block or 2 sparse)"
                    ),
                )
            }
        };
        let q = self.vector(n, "q")?.into_iter().map(|(v, _)| v).collect();
        let mu = self.coefficients(nc, "μ")?;
        let mu_r = if dim >= 5 {
            self.coefficients(nc, "μ_r")?
        } else {
            Vec::new()
        };
        let mu_s = if dim == 6 {
            self.coefficients(nc, "μ_s")?
        } else {
            Vec::new()
        };
        let law = self.end()?;
        Ok(SiconosProblem {
            dim,
            n_contacts: nc,
            w: build_blocks(dim, nc, raw),
            q,
            mu,
            mu_r,
            mu_s,
            law,
            storage,
        })
    }

    /// `nc` friction coefficients, each ≥ 0.
    fn coefficients(&mut self, nc: usize, name: &str) -> Res<Vec<f64>> {
        let v = self.vector(nc, name)?;
        for (k, &(x, line)) in v.iter().enumerate() {
            if x < 0.0 {
                return self.err(line, format!("{name}[{k}] = {x} is negative"));
            }
        }
        Ok(v.into_iter().map(|(x, _)| x).collect())
    }

    /// After the data: optionally `law associated|desaxce` (repose's
    /// extension; the law, De Saxcé by default), then nothing or the legacy
    /// `isComplete` flag (0 or 1).
    fn end(&mut self) -> Res<FrictionLaw> {
        let mut law = FrictionLaw::DeSaxce;
        let mut next = self.lex.token();
        if let Some((line, "law")) = next {
            law = match self.lex.token() {
                Some((_, "associated")) => FrictionLaw::Associated,
                Some((_, "desaxce")) => FrictionLaw::DeSaxce,
                Some((line, tok)) => {
                    return self.err(
                        line,
                        format!("unknown law {tok:?}: expected associated or desaxce"),
                    )
                }
                None => {
                    return self.err(line, "`law` without a name: expected associated or desaxce")
                }
            };
            next = self.lex.token();
        }
        if let Some((line, tok)) = next {
            if tok != "0" && tok != "1" {
                return self.err(
                    line,
                    format!("trailing garbage after the end of the problem: {tok:?}"),
                );
            }
        }
        if let Some((line, tok)) = self.lex.token() {
            return self.err(
                line,
                format!("trailing garbage after the end of the problem: {tok:?}"),
            );
        }
        Ok(law)
    }

    fn dense(&mut self, n: usize) -> Res<RawMatrix> {
        let (r, line) = self.index("the dense row count of W")?;
        let (c, _) = self.index("the dense column count of W")?;
        if r != n || c != n {
            return self.err(
                line,
                format!("dense W is declared {r}×{c}, expected {n}×{n}"),
            );
        }
        let Some(total) = n.checked_mul(n) else {
            return self.err(line, format!("dense W of size {n}×{n} is too large"));
        };
        let mut vals = Vec::new();
        for k in 0..total {
            let (v, _) = self.number(&|| format!("W({}, {})", k % n, k / n), &|| {
                format!("dense W (got {k} of {total} values)")
            })?;
            vals.push(v);
        }
        Ok(RawMatrix::Dense(vals))
    }

    /// Cumulative block sizes: value k must be (k + 1)·d.
    fn block_sizes(&mut self, count: usize, dim: usize, which: &str) -> Res<()> {
        for k in 0..count {
            let (v, line) = self.index(&format!("the cumulative {which} block size {k}"))?;
            if Some(v) != (k + 1).checked_mul(dim) {
                return self.err(
                    line,
                    format!(
                        "inconsistent block sizes: {which} block {k} ends at {v}, \
                         expected {} (every block must be {dim}×{dim})",
                        (k + 1).saturating_mul(dim)
                    ),
                );
            }
        }
        Ok(())
    }

    fn sparse_block(&mut self, dim: usize, nc: usize) -> Res<RawMatrix> {
        let (nbblocks, _) = self.index("the number of blocks of W")?;
        if nbblocks == 0 {
            return Ok(RawMatrix::Blocks(Vec::new()));
        }
        for which in ["row", "column"] {
            let (bn, line) = self.index(&format!("the number of block {which}s of W"))?;
            if bn != nc {
                return self.err(
                    line,
                    format!("W has {bn} block {which}s, expected one per contact ({nc})"),
                );
            }
        }
        self.block_sizes(nc, dim, "row")?;
        self.block_sizes(nc, dim, "column")?;
        let (filled1, line) = self.index("filled1 (block-row pointers) of W")?;
        if filled1 != nc + 1 {
            return self.err(
                line,
                format!("filled1 = {filled1}, expected block rows + 1 = {}", nc + 1),
            );
        }
        let (filled2, line) = self.index("filled2 (block columns) of W")?;
        if filled2 != nbblocks {
            return self.err(
                line,
                format!("filled2 = {filled2}, expected the number of blocks {nbblocks}"),
            );
        }
        let mut ptr = Vec::new();
        for k in 0..filled1 {
            let (p, line) = self.index(&format!("block-row pointer {k}"))?;
            let prev = ptr.last().copied().unwrap_or(0);
            let bad = if k == 0 {
                p != 0
            } else if k == nc {
                p != nbblocks
            } else {
                p < prev || p > nbblocks
            };
            if bad {
                return self.err(
                    line,
                    format!(
                        "block-row pointer {k} = {p} is invalid (pointers start at 0, \
                         never decrease and end at the number of blocks {nbblocks})"
                    ),
                );
            }
            ptr.push(p);
        }
        let mut cols = Vec::new();
        for k in 0..filled2 {
            let (c, line) = self.index(&format!("the block column of block {k}"))?;
            if c >= nc {
                return self.err(
                    line,
                    format!(
                        "block {k} has block column {c}, beyond the last one {}",
                        nc - 1
                    ),
                );
            }
            cols.push((c, line));
        }
        let mut blocks = Vec::new();
        for i in 0..nc {
            for k in ptr[i]..ptr[i + 1] {
                let (c, cline) = cols[k];
                if cols[ptr[i]..k].iter().any(|&(c2, _)| c2 == c) {
                    return self.err(
                        cline,
                        format!("block {k} repeats block ({i}, {c}) of block row {i}"),
                    );
                }
                let (num, line) = self.index(&format!("the number of block {k}"))?;
                if num != k {
                    return self.err(
                        line,
                        format!("expected the number of block {k}, found {num}"),
                    );
                }
                let mut b = vec![0.0; dim * dim];
                for e in 0..dim * dim {
                    // Column-major entries of the block.
                    let (v, _) = self.number(
                        &|| format!("W block {k} ({i}, {c}) entry ({}, {})", e % dim, e / dim),
                        &|| format!("W block {k} (got {e} of {} values)", dim * dim),
                    )?;
                    b[(e % dim) * dim + e / dim] = v;
                }
                blocks.push((i, c, b));
            }
        }
        Ok(RawMatrix::Blocks(blocks))
    }

    fn csparse(&mut self, n: usize) -> Res<RawMatrix> {
        self.index("the origin flag of the sparse W")?;
        match self.lex.rest_of_line() {
            None => return self.eof("the CSparse banner"),
            Some((line, l)) if !l.starts_with("CSparse") => {
                return self.err(
                    line,
                    format!("expected the CSparse banner (\"CSparse Version …\"), found {l:?}"),
                )
            }
            Some(_) => {}
        }
        let Some((line, header)) = self.lex.rest_of_line() else {
            return self.eof("the CSparse size line");
        };
        let (triplet, body) = match header.strip_prefix("triplet:") {
            Some(b) => (true, b.trim_start()),
            None => (false, header),
        };
        let mut words = body.split_whitespace();
        let size = words.next().unwrap_or("").trim_end_matches(',');
        let dims = size
            .split_once("-by-")
            .and_then(|(a, b)| Some((parse_index(a)?, parse_index(b)?)));
        let Some((m, ncol)) = dims else {
            return self.err(
                line,
                format!("expected the CSparse size line \"m-by-n, nzmax: …\", found {header:?}"),
            );
        };
        if m != n || ncol != n {
            return self.err(
                line,
                format!("the CSparse matrix is {m}-by-{ncol}, expected {n}-by-{n}"),
            );
        }
        let mut entries = Vec::new();
        if triplet {
            let nnz = words
                .skip_while(|w| *w != "nnz:")
                .nth(1)
                .and_then(|w| parse_index(w.trim_end_matches(',')));
            let Some(nnz) = nnz else {
                return self.err(line, format!("no \"nnz:\" count in {header:?}"));
            };
            for k in 0..nnz {
                let what = format!("CSparse triplet {k} of {nnz}");
                let (i, iline) = self.index(&format!("the row of {what}"))?;
                let (j, _) = self.index(&format!("the column of {what}"))?;
                if i >= n || j >= n {
                    return self.err(
                        iline,
                        format!("{what}: entry ({i}, {j}) is outside the {n}×{n} matrix"),
                    );
                }
                self.literal(":", &what)?;
                let (v, _) = self.number(&|| format!("W({i}, {j})"), &|| what.clone())?;
                entries.push((i, j, v));
            }
        } else {
            let mut next = 0i64;
            for j in 0..n {
                let what = format!("the CSparse header of column {j}");
                self.literal("col", &what)?;
                let (jj, jline) = self.index(&what)?;
                if jj != j {
                    return self.err(jline, format!("expected column {j}, found column {jj}"));
                }
                self.literal(":", &what)?;
                self.literal("locations", &what)?;
                let (a, b, line) = {
                    let loc = |p: &mut Self| -> Res<(i64, usize)> {
                        match p.lex.token() {
                            None => p.eof(&what),
                            Some((l, t)) => match parse_signed(t) {
                                Some(v) => Ok((v, l)),
                                None => {
                                    p.err(l, format!("expected a location in {what}, found {t:?}"))
                                }
                            },
                        }
                    };
                    let (a, line) = loc(self)?;
                    self.literal("to", &what)?;
                    let (b, _) = loc(self)?;
                    (a, b, line)
                };
                if a != next || b < a.saturating_sub(1) {
                    return self.err(
                        line,
                        format!(
                            "column {j} has locations {a} to {b}, expected them to start \
                             at {next} and not to end before {}",
                            next - 1
                        ),
                    );
                }
                next = b.saturating_add(1);
                for _ in a..=b {
                    let (i, iline) = self.index(&format!("a row index of column {j}"))?;
                    if i >= n {
                        return self.err(
                            iline,
                            format!(
                                "row index {i} of column {j} is beyond the last row {}",
                                n - 1
                            ),
                        );
                    }
                    self.literal(":", &format!("entry ({i}, {j})"))?;
                    let (v, _) = self.number(&|| format!("W({i}, {j})"), &|| {
                        format!("column {j} of the CSparse W")
                    })?;
                    entries.push((i, j, v));
                }
            }
        }
        Ok(RawMatrix::Entries(entries))
    }
}

/// Turns the raw matrix into d×d blocks: drops all-zero off-diagonal blocks,
/// keeps (or adds, as zero) every diagonal block.
fn build_blocks(dim: usize, nc: usize, raw: RawMatrix) -> BlockMatrix {
    let s = dim * dim;
    let n = dim * nc;
    let mut rows: Vec<BTreeMap<usize, Vec<f64>>> = vec![BTreeMap::new(); nc];
    match raw {
        RawMatrix::Dense(vals) => {
            for (k, v) in vals.into_iter().enumerate() {
                if v != 0.0 {
                    let (i, j) = (k % n, k / n);
                    rows[i / dim].entry(j / dim).or_insert_with(|| vec![0.0; s])
                        [(i % dim) * dim + j % dim] = v;
                }
            }
        }
        RawMatrix::Blocks(blocks) => {
            for (i, j, b) in blocks {
                rows[i].insert(j, b);
            }
        }
        RawMatrix::Entries(entries) => {
            for (i, j, v) in entries {
                rows[i / dim].entry(j / dim).or_insert_with(|| vec![0.0; s])
                    [(i % dim) * dim + j % dim] += v;
            }
        }
    }
    let mut w = BlockMatrix {
        dim,
        row_offsets: vec![0],
        ..Default::default()
    };
    for (i, mut row) in rows.into_iter().enumerate() {
        row.entry(i).or_insert_with(|| vec![0.0; s]);
        for (j, b) in row {
            if j == i || b.iter().any(|&v| v != 0.0) {
                w.cols.push(j);
                w.blocks.extend_from_slice(&b);
            }
        }
        w.row_offsets.push(w.cols.len());
    }
    w
}
