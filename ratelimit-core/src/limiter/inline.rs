//! [`Inline`]: a short list kept on the stack, for the per-request lists
//! of the decision (the rules picked, the rules waiting for an answer),
//! whose length the selection caps bound: no allocation per
//! request. Past `N` it spills to the heap, so a longer list (rules added
//! at run time beyond the caps' assumptions) is still handled, only slower.

use crate::rules::{MAX_COUNT_RULES, MAX_OTHER_RULES, MAX_SITE_WIDE};
use smallvec::SmallVec;

/// Most rules a request is checked against at the backend: every site-wide
/// rule and the capped others.
pub(crate) const MAX_CHECKED: usize = MAX_SITE_WIDE + MAX_OTHER_RULES;
/// Most count rules a request runs.
pub(crate) const MAX_COUNTED: usize = MAX_COUNT_RULES;

/// Up to `N` items inline, the rest on the heap (not allocated until
/// used): a `SmallVec`, whose inline room is left uninitialised until
/// written (an array of `Option`s cost a store per slot per request) and
/// whose items iterate as one slice.
#[derive(Debug)]
pub(crate) struct Inline<T, const N: usize> {
    items: SmallVec<[T; N]>,
}

impl<T, const N: usize> Default for Inline<T, N> {
    #[inline]
    fn default() -> Self {
        Self {
            items: SmallVec::new(),
        }
    }
}

impl<T, const N: usize> Inline<T, N> {
    /// Adds `item` at the end.
    #[inline]
    pub(crate) fn push(&mut self, item: T) {
        self.items.push(item);
    }

    /// How many items there are.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// The items in order.
    #[inline]
    pub(crate) fn iter(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }

    /// The items in order, to change in place.
    #[inline]
    pub(crate) fn iter_mut(&mut self) -> std::slice::IterMut<'_, T> {
        self.items.iter_mut()
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
            assert_eq!(l.iter().cloned().collect::<Vec<_>>(), want);
        }
    }
}
