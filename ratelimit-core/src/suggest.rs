//! "Did you mean": the closest field name for an unknown one, and the
//! accepted spelling of a duration written out in words.
//!
//! Only for error messages: nothing here changes what loads.

/// The name among `names` closest to `word`, if one is close enough to be
/// a slip: at most one edit in four characters (one for short names, case
/// and `-` for `_` counted as no edit).
pub(crate) fn closest<'a>(word: &str, names: &[&'a str]) -> Option<&'a str> {
    let folded: String = word
        .chars()
        .map(|c| {
            if c == '-' {
                '_'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect();
    if folded.len() > 64 {
        return None; // far from every name, and not worth the table
    }
    let allowed = (folded.chars().count() / 4).max(1);
    names
        .iter()
        .map(|n| (edits(&folded, n), *n))
        .filter(|(d, _)| *d <= allowed)
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}

/// The edit distance between `a` and `b` (insertions, deletions,
/// substitutions and swaps of two neighbours), on characters.
fn edits(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows of the optimal string alignment table.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let change = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + change);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                cur[j] = cur[j].min(before[j - 2] + 1);
            }
        }
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The accepted form of a duration written with words or spaces
/// (`"1 minute"` -> `"1m"`, `"1 hour 30 mins"` -> `"1h30m"`, `"2 weeks"` ->
/// `"14d"`), or `None` when `s` is not a count of such units.
pub(crate) fn duration(s: &str) -> Option<String> {
    let mut out = String::new();
    let mut rest = s.trim();
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let n: u64 = rest[..digits].parse().ok()?;
        rest = rest[digits..].trim_start();
        let word = rest
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(rest.len());
        let (n, unit) = unit_of(&rest[..word].to_ascii_lowercase(), n)?;
        out.push_str(&format!("{n}{unit}"));
        rest = rest[word..].trim_start_matches([' ', ',']);
        rest = rest.strip_prefix("and ").unwrap_or(rest).trim_start();
    }
    (!out.is_empty()).then_some(out)
}

/// `n` of the unit called `word`, in the rule format's units.
fn unit_of(word: &str, n: u64) -> Option<(u64, char)> {
    Some(match word {
        "s" | "sec" | "secs" | "second" | "seconds" => (n, 's'),
        "m" | "min" | "mins" | "minute" | "minutes" => (n, 'm'),
        "h" | "hr" | "hrs" | "hour" | "hours" => (n, 'h'),
        "d" | "day" | "days" => (n, 'd'),
        "w" | "wk" | "wks" | "week" | "weeks" => (n.checked_mul(7)?, 'd'),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::FIELDS;

    #[test]
    fn a_slip_in_a_field_name_finds_the_field() {
        let c = |w| closest(w, &FIELDS);
        assert_eq!(c("ratelimit_header"), Some("ratelimit_headers"));
        assert_eq!(c("fail-mode"), Some("fail_mode"));
        assert_eq!(c("Period"), Some("period"));
        assert_eq!(c("experssion"), Some("expression"), "two letters swapped");
        assert_eq!(c("burts"), Some("burst"));
        assert_eq!(c("keys"), Some("key"));
        assert_eq!(c("rate"), None, "nothing close");
        assert_eq!(c("headers"), None);
        assert_eq!(c(""), None);
    }

    #[test]
    fn edits_count_insertions_deletions_changes_and_swaps() {
        assert_eq!(edits("", "abc"), 3);
        assert_eq!(edits("abc", "abc"), 0);
        assert_eq!(edits("abc", "abd"), 1);
        assert_eq!(edits("abc", "acb"), 1);
        assert_eq!(edits("kitten", "sitting"), 3);
    }

    #[test]
    fn a_duration_in_words_gets_its_accepted_form() {
        assert_eq!(duration("1 minute").as_deref(), Some("1m"));
        assert_eq!(duration("30 secs").as_deref(), Some("30s"));
        assert_eq!(duration("1 hour 30 minutes").as_deref(), Some("1h30m"));
        assert_eq!(duration("1h 30m").as_deref(), Some("1h30m"));
        assert_eq!(
            duration("1 day, 2 hours and 5 min").as_deref(),
            Some("1d2h5m")
        );
        assert_eq!(duration("2 weeks").as_deref(), Some("14d"));
        assert_eq!(duration("5ms"), None, "milliseconds have no whole form");
        assert_eq!(duration("1.5m"), None);
        assert_eq!(duration("minute"), None);
        assert_eq!(duration("10"), None);
        assert_eq!(duration(""), None);
    }
}
