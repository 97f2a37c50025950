//! [`Inline`]: a short list kept on the stack, for the per-request lists
//! of the decision (the rules picked, the rules waiting for an answer),
//! whose length the selection caps bound: no allocation per
//! request. Past `N` it spills into a `Vec`, so a longer list (rules added
//! at run time beyond the caps' assumptions) is still handled, only slower.

use super::select::{MAX_COUNT_RULES, MAX_OTHER_RULES};
use crate::rules::MAX_SITE_WIDE;

/// Most rules a request is checked against at the backend: every site-wide
/// rule and the capped others.
pub(crate) const MAX_CHECKED: usize = MAX_SITE_WIDE + MAX_OTHER_RULES;
/// Most count rules a request runs.
pub(crate) const MAX_COUNTED: usize = MAX_COUNT_RULES;

/// Up to `N` items inline, the rest in a `Vec` (not allocated until used).
#[derive(Debug)]
pub(crate) struct Inline<T, const N: usize> {
    items: [Option<T>; N],
    len: usize,
    spill: Vec<T>,
}

impl<T, const N: usize> Default for Inline<T, N> {
    fn default() -> Self {
        Self {
            // Each slot written in place (`[const { None }; N]` copies a
            // whole template array: a `memcpy` per list per request).
            items: std::array::from_fn(|_| None),
            len: 0,
            spill: Vec::new(),
        }
    }
}

impl<T, const N: usize> Inline<T, N> {
    /// Adds `item` at the end.
    pub(crate) fn push(&mut self, item: T) {
        match self.items.get_mut(self.len) {
            Some(slot) => {
                *slot = Some(item);
                self.len += 1;
            }
            None => self.spill.push(item),
        }
    }

    /// How many items there are.
    pub(crate) fn len(&self) -> usize {
        self.len + self.spill.len()
    }

    /// The items in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.items[..self.len].iter().flatten().chain(&self.spill)
    }

    /// The items in order, to change in place.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.items[..self.len]
            .iter_mut()
            .flatten()
            .chain(&mut self.spill)
    }

    /// Takes the items out in order, leaving the list empty (in place: the
    /// inline array is not moved).
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = T> + '_ {
        let len = std::mem::take(&mut self.len);
        self.items[..len]
            .iter_mut()
            .filter_map(Option::take)
            .chain(self.spill.drain(..))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_inline_and_past_the_inline_room() {
        for n in [0usize, 1, 3, 4, 9] {
            let mut l = Inline::<String, 3>::default();
            for i in 0..n {
                l.push(i.to_string());
            }
            let want: Vec<String> = (0..n).map(|i| i.to_string()).collect();
            assert_eq!(l.len(), n);
            assert_eq!(l.iter().cloned().collect::<Vec<_>>(), want);
            l.iter_mut().for_each(|s| s.push('!'));
            let want: Vec<String> = want.iter().map(|s| format!("{s}!")).collect();
            assert_eq!(l.drain().collect::<Vec<_>>(), want);
            assert_eq!(l.len(), 0);
            assert_eq!(l.iter().count(), 0);
        }
    }
}
