//! A bounded heavy-hitters sketch (Space-Saving): the subjects seen most
//! often, in fixed memory, with counts that may overestimate by at most the
//! smallest count held.

use crate::KeyDigest;

/// Subjects kept by default.
pub(crate) const DEFAULT_TOP: usize = 16;

/// The top subjects of a stream, in at most `capacity` slots.
#[derive(Debug, Clone)]
pub(crate) struct TopK {
    slots: Vec<(KeyDigest, u64)>,
    capacity: usize,
}

impl Default for TopK {
    fn default() -> Self {
        Self::new(DEFAULT_TOP)
    }
}

impl TopK {
    /// A sketch of `capacity` slots.
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            slots: Vec::with_capacity(capacity),
            capacity: capacity.max(1),
        }
    }

    /// Counts one sighting of `subject`.
    pub(crate) fn add(&mut self, subject: KeyDigest) {
        if let Some(slot) = self.slots.iter_mut().find(|(k, _)| *k == subject) {
            slot.1 += 1;
        } else if self.slots.len() < self.capacity {
            self.slots.push((subject, 1));
        } else if let Some(min) = self.slots.iter_mut().min_by_key(|(_, c)| *c) {
            // Space-Saving: the newcomer inherits the smallest count.
            *min = (subject, min.1 + 1);
        }
    }

    /// The subjects, most frequent first, with their (upper-bound) counts.
    pub(crate) fn top(&self) -> Vec<(KeyDigest, u64)> {
        let mut v = self.slots.clone();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_heavy_hitter_in_a_stream_of_noise() {
        let mut t = TopK::new(4);
        for i in 0..1000u32 {
            t.add(KeyDigest([(i % 250) as u8 + 1; 16]));
            if i % 3 == 0 {
                t.add(KeyDigest([0; 16]));
            }
        }
        let top = t.top();
        assert_eq!(top[0].0, KeyDigest([0; 16]));
        assert!(top[0].1 >= 334);
        assert_eq!(top.len(), 4);
    }
}
