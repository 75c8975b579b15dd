//! Reading ministat's input as `fgets` does, one piece at a time: the lines of a stream in
//! pieces of at most [`LINE_PIECE`] bytes, and the field ministat reads from each.

use std::io::BufRead;

use super::{LINE_PIECE, MAX_LINE_BYTES};
use crate::stats::strtod::is_c_space;

/// Calls `f` on each `fgets` piece of `reader` with its number from 1: each line (with its
/// newline, if any) in pieces of at most [`LINE_PIECE`] bytes, without copying pieces that lie
/// within the reader's buffer. Only one piece is ever held, so memory stays bounded whatever
/// the input; a line over [`MAX_LINE_BYTES`] (a stream without newlines: `/dev/zero`) is
/// `too_long`'s error, given the line's number. A read error ends the input, as it ends ministat's `fgets` loop.
pub(super) fn for_each_piece<E>(
    reader: &mut impl BufRead,
    too_long: impl Fn(usize) -> E,
    mut f: impl FnMut(usize, &[u8]) -> Result<(), E>,
) -> Result<(), E> {
    let mut piece = Vec::with_capacity(LINE_PIECE);
    // Pieces, for `f`; whole lines and the current one's length, for the bound.
    let (mut number, mut lines, mut line_len) = (0, 0, 0);
    while let Ok(buffer) = reader.fill_buf() {
        if buffer.is_empty() {
            break;
        }
        let mut used = 0;
        while used < buffer.len() {
            let window = &buffer[used..buffer.len().min(used + LINE_PIECE - piece.len())];
            let (take, ends) = match memchr::memchr(b'\n', window) {
                Some(i) => (i + 1, true),
                None => (window.len(), false),
            };
            line_len += take;
            if line_len > MAX_LINE_BYTES {
                return Err(too_long(lines + 1));
            }
            if ends || piece.len() + take == LINE_PIECE {
                number += 1;
                if piece.is_empty() {
                    f(number, &window[..take])?;
                } else {
                    piece.extend_from_slice(&window[..take]);
                    f(number, &piece)?;
                    piece.clear();
                }
            } else {
                piece.extend_from_slice(&window[..take]);
            }
            if ends {
                (lines, line_len) = (lines + 1, 0);
            }
            used += take;
        }
        let len = buffer.len();
        reader.consume(len);
    }
    if piece.is_empty() {
        Ok(())
    } else {
        f(number + 1, &piece)
    }
}

/// The field ministat reads from one `fgets` piece, `None` when the line has none: the
/// `column`th run of non-delimiters, unless a run starting with `#` comes first.
pub(super) fn field<'a>(
    piece: &'a [u8],
    column: usize,
    is_delimiter: &[bool; 256],
) -> Option<&'a [u8]> {
    // C strings end at the first NUL, and ministat drops trailing white space.
    let mut end = memchr::memchr(0, piece).unwrap_or(piece.len());
    while end > 0 && is_c_space(piece[end - 1]) {
        end -= 1;
    }
    let line = &piece[..end];
    let delimiter = |i: usize| is_delimiter[usize::from(line[i])];
    let (mut pos, mut index) = (0, 1);
    loop {
        while pos < end && delimiter(pos) {
            pos += 1;
        }
        if pos == end || line[pos] == b'#' {
            return None;
        }
        let start = pos;
        while pos < end && !delimiter(pos) {
            pos += 1;
        }
        if index == column {
            return Some(&line[start..pos]);
        }
        index += 1;
    }
}
