//! A bounded heavy-hitters sketch (Space-Saving): the subjects seen most
//! often, in fixed memory, with counts that may overestimate by at most the
//! smallest count held. Each slot may also hold the subject's readable
//! label (bounded by `subject::label`); a slot taken over by a newcomer drops
//! it, so at most `capacity` labels are ever held.

use crate::KeyDigest;

/// Subjects kept by default.
pub(crate) const DEFAULT_TOP: usize = 16;

/// The top subjects of a stream, in at most `capacity` slots.
#[derive(Debug, Clone)]
pub(crate) struct TopK {
    slots: Vec<Slot>,
    capacity: usize,
}

#[derive(Debug, Clone)]
struct Slot {
    subject: KeyDigest,
    count: u64,
    label: Option<Box<str>>,
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

    /// Counts one sighting of `subject`; true when it is held without a
    /// label afterwards.
    pub(crate) fn add(&mut self, subject: KeyDigest) -> bool {
        if let Some(slot) = self.slots.iter_mut().find(|s| s.subject == subject) {
            slot.count += 1;
            return slot.label.is_none();
        }
        let count = if self.slots.len() < self.capacity {
            1
        } else if let Some(min) = self.slots.iter().map(|s| s.count).min() {
            // Space-Saving: the newcomer inherits the smallest count.
            let at = self.slots.iter().position(|s| s.count == min).unwrap_or(0);
            self.slots.swap_remove(at);
            min + 1
        } else {
            return false;
        };
        self.slots.push(Slot {
            subject,
            count,
            label: None,
        });
        true
    }

    /// Gives `subject` its readable label, if it is held without one.
    pub(crate) fn set_label(&mut self, subject: KeyDigest, label: &str) {
        if let Some(slot) = self.slots.iter_mut().find(|s| s.subject == subject) {
            slot.label.get_or_insert_with(|| label.into());
        }
    }

    /// The subjects held without a label (at most `capacity`).
    pub(crate) fn unlabeled(&self) -> impl Iterator<Item = &KeyDigest> {
        self.slots
            .iter()
            .filter(|s| s.label.is_none())
            .map(|s| &s.subject)
    }

    /// The subjects, most frequent first, with their (upper-bound) counts
    /// and labels.
    pub(crate) fn top(&self) -> Vec<(KeyDigest, u64, Option<&str>)> {
        let mut v: Vec<_> = self
            .slots
            .iter()
            .map(|s| (s.subject, s.count, s.label.as_deref()))
            .collect();
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

    #[test]
    fn a_label_stays_with_its_subject_and_goes_with_its_slot() {
        let (a, b, c) = (KeyDigest([1; 16]), KeyDigest([2; 16]), KeyDigest([3; 16]));
        let mut t = TopK::new(2);
        assert!(t.add(a), "new: unlabeled");
        t.set_label(a, "ip=192.0.2.1");
        assert!(!t.add(a), "labeled now");
        assert!(t.add(b));
        t.set_label(c, "not held: ignored");
        assert_eq!(t.top()[0], (a, 2, Some("ip=192.0.2.1")));
        assert_eq!(t.top()[1], (b, 1, None));
        // c takes b's slot (the smallest count) and no label with it.
        assert!(t.add(c));
        assert_eq!(t.top()[1], (c, 2, None));
        assert_eq!(t.top().len(), 2);
    }
}
