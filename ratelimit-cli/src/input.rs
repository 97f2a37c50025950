//! Reading a file given on the command line: bounded in size, and text.
//!
//! A rule file or an access log is refused before it is read whole when it
//! is larger than the limit (its size from the file system, or, for a pipe,
//! after reading one byte past the limit), and a rule file that holds a
//! NUL byte or is not UTF-8 is refused as binary.

use std::fmt;
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// The largest rule file read: far above any real rule set (a rule is
/// about 300 bytes), far below what would exhaust memory.
pub(crate) const MAX_RULE_FILE: u64 = 16 << 20;

/// Why a file could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum InputError {
    /// The file could not be opened or read.
    Io(String),
    /// The file is larger than the limit.
    TooLarge {
        /// Its size in bytes, when known without reading it.
        size: Option<u64>,
        /// The limit in bytes.
        limit: u64,
    },
    /// The file holds a NUL byte or is not UTF-8.
    Binary {
        /// Where the first offending byte is.
        offset: usize,
    },
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::Io(e) => f.write_str(e),
            InputError::TooLarge {
                size: Some(size),
                limit,
            } => write!(
                f,
                "the file is {size} bytes, more than the {limit} bytes read: refused unread"
            ),
            InputError::TooLarge { size: None, limit } => {
                write!(f, "the input is more than the {limit} bytes read: refused")
            }
            InputError::Binary { offset } => write!(
                f,
                "not a text file (a NUL byte or invalid UTF-8 at byte {offset}): expected JSON"
            ),
        }
    }
}

impl std::error::Error for InputError {}

/// Reads `path` whole, refusing it when larger than `limit` bytes.
///
/// # Errors
///
/// The file cannot be opened or read, or is larger than `limit`.
pub(crate) fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    let file = File::open(path).map_err(|e| InputError::Io(e.to_string()))?;
    let meta = file.metadata().map_err(|e| InputError::Io(e.to_string()))?;
    if meta.is_dir() {
        return Err(InputError::Io("is a directory".to_owned()));
    }
    if meta.is_file() && meta.len() > limit {
        return Err(InputError::TooLarge {
            size: Some(meta.len()),
            limit,
        });
    }
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| InputError::Io(e.to_string()))?;
    if bytes.len() as u64 > limit {
        return Err(InputError::TooLarge { size: None, limit });
    }
    Ok(bytes)
}

/// Reads a rule file: at most [`MAX_RULE_FILE`] bytes of UTF-8 text.
///
/// # Errors
///
/// As [`read_bounded`], or the file is binary.
pub(crate) fn read_text(path: &Path) -> Result<String, InputError> {
    let bytes = read_bounded(path, MAX_RULE_FILE)?;
    text(bytes)
}

/// `bytes` as text, unless it holds a NUL byte or is not UTF-8.
///
/// # Errors
///
/// [`InputError::Binary`] with the first offending byte.
pub(crate) fn text(bytes: Vec<u8>) -> Result<String, InputError> {
    if let Some(offset) = bytes.iter().position(|&b| b == 0) {
        return Err(InputError::Binary { offset });
    }
    String::from_utf8(bytes).map_err(|e| InputError::Binary {
        offset: e.utf8_error().valid_up_to(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_is_refused_at_the_first_bad_byte() {
        assert_eq!(
            text(b"[]\0".to_vec()),
            Err(InputError::Binary { offset: 2 })
        );
        assert_eq!(
            text(vec![b'[', 0xff, b']']),
            Err(InputError::Binary { offset: 1 })
        );
        assert_eq!(text(b"[]".to_vec()).as_deref(), Ok("[]"));
    }
}
