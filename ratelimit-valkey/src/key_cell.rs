//! A 16-byte key that every decision reads and a background task
//! replaces, rarely: a sequence lock over two atomic words, so that a read
//! takes no lock and writes nothing to a shared cache line.
//!
//! The writer (one at a time, under a mutex) makes the sequence odd,
//! stores the words, then makes it even again; a reader takes the words
//! when the sequence was even and unchanged around its reads, else reads
//! again. Every access is atomic, so a torn read is detected, never seen.

use std::sync::atomic::{fence, AtomicU64, Ordering};
use std::sync::Mutex;

/// An optional 16-byte key.
#[derive(Debug, Default)]
pub(crate) struct KeyCell {
    /// 0 while unset; odd while being written.
    seq: AtomicU64,
    words: [AtomicU64; 2],
    write: Mutex<()>,
}

impl KeyCell {
    /// The key, once set.
    #[inline]
    pub(crate) fn get(&self) -> Option<[u8; 16]> {
        let mut spins = 0u32;
        loop {
            let before = self.seq.load(Ordering::Acquire);
            if before == 0 {
                return None;
            }
            if before & 1 == 0 {
                let a = self.words[0].load(Ordering::Relaxed);
                let b = self.words[1].load(Ordering::Relaxed);
                fence(Ordering::Acquire);
                if self.seq.load(Ordering::Relaxed) == before {
                    return Some(join(a, b));
                }
            }
            // A write is under way (it takes a few nanoseconds, unless its
            // thread was preempted: then let it run).
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }

    /// Sets the key.
    pub(crate) fn set(&self, key: [u8; 16]) {
        let _one = self.write.lock().unwrap_or_else(|e| e.into_inner());
        let seq = self.seq.load(Ordering::Relaxed);
        self.seq.store(seq + 1, Ordering::Relaxed);
        fence(Ordering::Release);
        let (a, b) = split(key);
        self.words[0].store(a, Ordering::Relaxed);
        self.words[1].store(b, Ordering::Relaxed);
        self.seq.store(seq + 2, Ordering::Release);
    }
}

fn split(key: [u8; 16]) -> (u64, u64) {
    let mut a = [0u8; 8];
    let mut b = [0u8; 8];
    a.copy_from_slice(&key[..8]);
    b.copy_from_slice(&key[8..]);
    (u64::from_le_bytes(a), u64::from_le_bytes(b))
}

fn join(a: u64, b: u64) -> [u8; 16] {
    let mut key = [0u8; 16];
    key[..8].copy_from_slice(&a.to_le_bytes());
    key[8..].copy_from_slice(&b.to_le_bytes());
    key
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn unset_then_each_key_set() {
        let cell = KeyCell::default();
        assert_eq!(cell.get(), None);
        let key: [u8; 16] = std::array::from_fn(|i| i as u8);
        cell.set(key);
        assert_eq!(cell.get(), Some(key));
        cell.set([9; 16]);
        assert_eq!(cell.get(), Some([9; 16]));
    }

    #[test]
    fn readers_never_see_half_of_one_key_and_half_of_another() {
        let cell = Arc::new(KeyCell::default());
        cell.set([1; 16]);
        let writer = {
            let cell = cell.clone();
            std::thread::spawn(move || {
                for i in 0..20_000u32 {
                    cell.set([(i % 2) as u8 + 1; 16]);
                }
            })
        };
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let cell = cell.clone();
                std::thread::spawn(move || {
                    for _ in 0..20_000 {
                        let key = cell.get().expect("set");
                        assert!(key == [1; 16] || key == [2; 16], "torn: {key:?}");
                    }
                })
            })
            .collect();
        writer.join().expect("writer");
        for r in readers {
            r.join().expect("reader");
        }
    }
}
