//! Fuzzer bytes, read front to back.

/// Fuzzer bytes, read front to back; reads past the end give zeros.
pub(crate) struct Input<'a> {
    pub(crate) rest: &'a [u8],
}

impl<'a> Input<'a> {
    pub(crate) fn new(rest: &'a [u8]) -> Self {
        Self { rest }
    }

    pub(crate) fn byte(&mut self) -> u8 {
        let (first, rest) = self
            .rest
            .split_first()
            .map_or((0, &[][..]), |(b, r)| (*b, r));
        self.rest = rest;
        first
    }

    pub(crate) fn fill(&mut self, out: &mut [u8]) {
        let n = out.len().min(self.rest.len());
        out[..n].copy_from_slice(&self.rest[..n]);
        self.rest = &self.rest[n..];
    }

    pub(crate) fn chunk(&mut self) -> &'a [u8] {
        let n = usize::from(self.byte()).min(self.rest.len());
        let (chunk, rest) = self.rest.split_at(n);
        self.rest = rest;
        chunk
    }

    pub(crate) fn string(&mut self) -> String {
        String::from_utf8_lossy(self.chunk()).into_owned()
    }
}
