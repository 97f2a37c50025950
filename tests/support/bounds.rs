//! What each algorithm promises about admissions, checked against admitted
//! requests whose decision time is known only to lie in a span.
//!
//! Every instance decides with Valkey `TIME`, not its own clock. Valkey runs
//! on this host, so `TIME` and the tests' wall clock are the same clock
//! ([`super::valkey::assert_same_clock`] checks it): a request decided by
//! the script was decided at some millisecond in `[sent_ms, done_ms]` of
//! its call. The checks below never guess where in that span: they pass
//! only if *some* placement of every decision inside its span keeps the
//! promise (calendar windows), or they count only the requests certainly
//! decided inside an interval (buckets, window flips). So they are sound:
//! a failure is a real over-admission, whatever the latencies were.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashSet};

/// The decision happened at some ms in `[lo, hi]`.
pub type Span = (u64, u64);

/// What a calendar-window check found.
#[derive(Debug, Clone, Default)]
pub struct WindowReport {
    /// Windows with at least one admission.
    pub windows: usize,
    /// Admissions checked.
    pub admitted: usize,
    /// The most admissions certainly inside one window.
    pub busiest_certain: u64,
    /// Admissions whose span crosses a window edge.
    pub straddling: usize,
}

/// Fixed and sliding windows: at most `limit` admissions per calendar
/// window `[k * period, (k + 1) * period)`. Passes when the admissions can
/// be placed in their spans so that no window holds more than `limit`
/// (earliest-deadline-first, optimal for intervals over a chain of windows).
pub fn calendar_windows(spans: &[Span], period: u64, limit: u64) -> Result<WindowReport, String> {
    let mut report = WindowReport {
        admitted: spans.len(),
        ..WindowReport::default()
    };
    if spans.is_empty() {
        return Ok(report);
    }
    let mut reqs: Vec<(u64, u64)> = spans
        .iter()
        .map(|&(lo, hi)| (lo / period, hi / period))
        .collect();
    reqs.sort_unstable();
    let mut certain: BTreeMap<u64, u64> = BTreeMap::new();
    let mut touched: HashSet<u64> = HashSet::new();
    for &(a, b) in &reqs {
        if a == b {
            *certain.entry(a).or_default() += 1;
        } else {
            report.straddling += 1;
        }
        touched.insert(a);
        touched.insert(b);
    }
    report.windows = touched.len();
    report.busiest_certain = certain.values().copied().max().unwrap_or(0);
    let first = reqs[0].0;
    let last = reqs.iter().map(|r| r.1).max().unwrap_or(first);
    let mut heap: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
    let mut i = 0;
    for w in first..=last {
        while i < reqs.len() && reqs[i].0 <= w {
            heap.push(Reverse(reqs[i].1));
            i += 1;
        }
        let mut placed = 0;
        while placed < limit && heap.pop().is_some() {
            placed += 1;
        }
        if let Some(&Reverse(deadline)) = heap.peek() {
            if deadline <= w {
                let must: usize = heap.iter().filter(|r| r.0 <= w).count();
                return Err(format!(
                    "window starting at {} ms: {} admissions certainly inside it, and {} more \
                     than the limit of {limit} had to be decided in it",
                    w * period,
                    certain.get(&w).copied().unwrap_or(0),
                    must
                ));
            }
        }
    }
    Ok(report)
}

/// Sliding window, at a window flip: in window `k`, the admissions certainly
/// decided in `[k * period, t]` are at most
/// `limit - ceil(prev * (period - (t - k * period)) / period)`, where `prev`
/// is the number certainly admitted in window `k - 1` (a lower bound of the
/// previous count the estimate weighs). This is "no 2x burst at the flip".
/// Returns how many admissions were checked against a non-trivial bound.
pub fn sliding_flips(spans: &[Span], period: u64, limit: u64) -> Result<usize, String> {
    let mut by_window: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for &(lo, hi) in spans {
        if lo / period == hi / period {
            by_window.entry(lo / period).or_default().push(hi);
        }
    }
    let mut checked = 0;
    for (&w, his) in &by_window {
        let prev = by_window.get(&(w.wrapping_sub(1))).map_or(0, Vec::len) as u64;
        if prev == 0 {
            continue;
        }
        let mut his = his.clone();
        his.sort_unstable();
        for (j, &hi) in his.iter().enumerate() {
            let y = hi - w * period;
            let weighed = (prev * (period - y)).div_ceil(period);
            let bound = limit.saturating_sub(weighed);
            if weighed > 0 {
                checked += 1;
            }
            if j as u64 + 1 > bound {
                return Err(format!(
                    "window starting at {} ms: {} admissions by {y} ms into it, but the previous \
                     window admitted at least {prev} of {limit}: at most {bound} may pass",
                    w * period,
                    j + 1
                ));
            }
        }
    }
    Ok(checked)
}

/// What a bucket check found.
#[derive(Debug, Clone, Default)]
pub struct BucketReport {
    /// Admissions checked.
    pub admitted: usize,
    /// Intervals checked.
    pub intervals: usize,
    /// The smallest margin found: bound minus admissions (can be 0).
    pub tightest: i64,
}

/// Token and leaky bucket: over any interval `[a, b]`, the admissions
/// certainly decided in it are at most
/// `burst + floor((b - a) * limit / period) + slack`.
pub fn bucket(
    spans: &[Span],
    limit: u64,
    period: u64,
    burst: u64,
    slack: u64,
) -> Result<BucketReport, String> {
    let mut report = BucketReport {
        admitted: spans.len(),
        tightest: i64::MAX,
        ..BucketReport::default()
    };
    let mut starts: Vec<u64> = spans.iter().map(|s| s.0).collect();
    starts.sort_unstable();
    starts.dedup();
    for &a in &starts {
        let mut ends: Vec<u64> = spans.iter().filter(|s| s.0 >= a).map(|s| s.1).collect();
        ends.sort_unstable();
        for (k, &b) in ends.iter().enumerate() {
            let count = k as u64 + 1;
            let bound = burst + (b - a) * limit / period + slack;
            report.intervals += 1;
            report.tightest = report.tightest.min(bound as i64 - count as i64);
            if count > bound {
                return Err(format!(
                    "{count} admissions certainly decided within [{a}, {b}] ({} ms), but a bucket \
                     of {burst} refilling {limit} per {period} ms admits at most {bound} \
                     (slack {slack} included)",
                    b - a
                ));
            }
        }
    }
    Ok(report)
}

/// What a distinct check found.
#[derive(Debug, Clone, Default)]
pub struct DistinctReport {
    /// Periods seen.
    pub periods: usize,
    /// Admissions checked.
    pub admitted: usize,
    /// The most distinct bits admitted in one period.
    pub most_bits: usize,
}

/// Distinct: within one period of a subject, the admitted values set at
/// most `max_bits` different bits of the 1024-bit map (the admission rule
/// of the algorithm; `max_bits <= limit`). A period starts with the
/// subject's first value, so periods are found from the answers: an
/// admitted request's `reset_ms` is the time to its period's end, so its
/// period ends in `[lo + reset, hi + reset]`. Periods end at least one
/// period apart, so those intervals group the admissions by period.
pub fn distinct_periods(
    admitted: &[(Span, u64, u16)],
    period: u64,
    max_bits: usize,
) -> Result<DistinctReport, String> {
    let mut ends: Vec<(u64, u64, u16)> = admitted
        .iter()
        .map(|&((lo, hi), reset, bit)| (lo + reset, hi + reset, bit))
        .collect();
    ends.sort_unstable();
    let mut report = DistinctReport {
        admitted: admitted.len(),
        ..DistinctReport::default()
    };
    let mut i = 0;
    while i < ends.len() {
        let (start, mut reach) = (ends[i].0, ends[i].1);
        let mut bits = HashSet::new();
        let mut j = i;
        while j < ends.len() && ends[j].0 <= reach {
            reach = reach.max(ends[j].1);
            bits.insert(ends[j].2);
            j += 1;
        }
        if reach - start >= period / 2 {
            return Err(format!(
                "admissions whose period ends spread over {} ms (from {start}): the spans are too \
                 wide to tell periods apart",
                reach - start
            ));
        }
        report.periods += 1;
        report.most_bits = report.most_bits.max(bits.len());
        if bits.len() > max_bits {
            return Err(format!(
                "one period (ending in [{start}, {reach}]) admitted {} different values (bits), \
                 more than the {max_bits} the limit allows",
                bits.len()
            ));
        }
        i = j;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_windows_place_straddlers_where_they_fit() {
        // Window 0 full with certain ones, straddlers fit in window 1.
        let mut spans = vec![(100, 200); 5];
        spans.extend(vec![(990, 1010); 5]);
        assert!(calendar_windows(&spans, 1000, 5).is_ok());
        spans.push((1500, 1600));
        assert!(calendar_windows(&spans, 1000, 5).is_err());
    }

    #[test]
    fn buckets_count_only_certain_decisions() {
        let spans = vec![(0, 1); 10];
        assert!(bucket(&spans, 10, 1000, 10, 0).is_ok());
        let spans = vec![(0, 1); 11];
        assert!(bucket(&spans, 10, 1000, 10, 0).is_err());
        assert!(bucket(&spans, 10, 1000, 10, 1).is_ok());
    }

    #[test]
    fn sliding_flips_bound_the_start_of_a_window() {
        let mut spans = vec![(500, 510); 10];
        spans.extend(vec![(1001, 1002); 3]);
        assert!(sliding_flips(&spans, 1000, 10).is_err());
        let mut spans = vec![(500, 510); 10];
        spans.extend(vec![(1600, 1601); 3]);
        assert!(sliding_flips(&spans, 1000, 10).is_ok());
    }

    #[test]
    fn distinct_groups_by_period_end() {
        let a: Vec<(Span, u64, u16)> = (0..5)
            .map(|b| ((100 + b, 110 + b), 900, b as u16))
            .collect();
        let r = distinct_periods(&a, 1000, 5).expect("fits");
        assert_eq!((r.periods, r.most_bits), (1, 5));
        assert!(distinct_periods(&a, 1000, 4).is_err());
    }
}
