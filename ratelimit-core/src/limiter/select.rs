//! Rule selection per request: every site-wide rule, then at most 5 other
//! matching rules, blocking rules before log rules; count rules in their
//! own cap of 5. A skipped rule (missing key with `skip`, no distinct value,
//! or expired) takes no slot.
//!
//! The cap bounds the rules evaluated against the backend, not a running
//! penalty: a blocking rule with a penalty that the cap left out is still
//! looked up in the penalty cache (a local lookup), so a client cannot
//! push its login rule out of evaluation during its penalty by making five
//! other rules match.
//!
//! A missing key with `on_missing_key: reject` answers 400 only under a
//! rule that blocks; a log rule (or any rule while the kill switch is on)
//! lets the request through and records that it would have rejected it.

use std::cell::RefCell;
use std::sync::Arc;

use super::inline::{Inline, MAX_CHECKED, MAX_COUNTED};
use super::published::{Entry, Published};
use crate::algorithm::{distinct, Decision};
use crate::backend::state_key_with;
use crate::rules::{in_canary, MAX_COUNT_RULES, MAX_OTHER_RULES};
use crate::stats::Event;
use crate::subject::label::label;
use crate::subject::{distinct_value, ip_subject, subject_after, KeyOutcome, KeyPrefix};
use crate::switches::Switches;
use crate::{HashKey, KeyDigest, RequestView};

/// One selected rule on its way to an answer. `E` holds its entry:
/// borrowed from the published set when the answer comes at once, shared
/// when it is awaited.
pub(super) struct Pending<E> {
    pub(super) entry: E,
    pub(super) subject: KeyDigest,
    pub(super) blocks: bool,
    /// The distinct value's bit (`distinct` rules).
    pub(super) bit: Option<u16>,
    /// Where the subject's state (and its penalty) is keyed.
    pub(super) key: KeyDigest,
    /// Answered before the backend (penalty cache).
    pub(super) cached: Option<Decision>,
}

impl Pending<&Arc<Entry>> {
    pub(super) fn to_shared(&self) -> Pending<Arc<Entry>> {
        Pending {
            entry: self.entry.clone(),
            subject: self.subject,
            blocks: self.blocks,
            bit: self.bit,
            key: self.key,
            cached: self.cached,
        }
    }
}

/// A request decided up to the backend call. Filled in place by
/// `Pipeline::begin` (its lists live on the stack: moving them costs).
/// The selected rules (`sel.rules`) are the ones waiting for an answer.
pub(super) struct Plan<'p> {
    pub(super) sel: Selection<'p>,
}

impl Plan<'_> {
    // Inlined: the compiler then knows the lists start empty, and filling
    // them drops nothing.
    #[inline(always)]
    pub(super) fn new() -> Self {
        Self {
            sel: Selection::default(),
        }
    }
}

/// A rule picked for this request.
#[derive(Debug)]
pub(crate) struct Picked<'p> {
    pub(crate) entry: &'p Arc<Entry>,
    pub(crate) subject: KeyDigest,
    pub(crate) bit: Option<u16>,
    pub(crate) blocks: bool,
}

/// What selection found.
#[derive(Default)]
pub(crate) struct Selection<'p> {
    /// The rules checked at the backend, each with its state key: the
    /// decision completes them in place (see `Limiter::begin`).
    pub(crate) rules: Inline<Pending<&'p Arc<Entry>>, MAX_CHECKED>,
    pub(crate) counts: Inline<Picked<'p>, MAX_COUNTED>,
    /// Blocking rules with a penalty that the cap left out: only their
    /// penalty cache is consulted.
    /// (Rare lists, with no inline room: empty, such a list is one word
    /// to set and to test, where a `Vec` is three.)
    pub(crate) penalty_only: Inline<Picked<'p>, 0>,
    /// Rules that would have rejected the request (a missing key with
    /// `reject`) but only log.
    pub(crate) would_reject: Inline<&'p Arc<Entry>, 0>,
    pub(crate) reject: bool,
    pub(crate) capped: bool,
}

impl<'p> Picked<'p> {
    /// This rule on its way to the backend: its state key, no answer yet.
    fn pending(self) -> Pending<&'p Arc<Entry>> {
        Pending {
            entry: self.entry,
            subject: self.subject,
            blocks: self.blocks,
            bit: self.bit,
            key: state_key_with(&self.entry.ns_digest, &self.subject),
            cached: None,
        }
    }
}

enum Pick<'p> {
    Take(Picked<'p>),
    Skip,
    Reject,
}

pub(crate) struct Selector<'a> {
    pub(crate) req: &'a dyn RequestView,
    pub(crate) hash_key: &'a HashKey,
    pub(crate) switches: &'a Switches,
    pub(crate) now: u64,
    /// The last key hashed, for the next rule whose key starts with it.
    pub(crate) prefix: RefCell<Option<KeyPrefix<'a>>>,
}

impl<'a> Selector<'a> {
    fn blocks(&self, e: &Entry) -> bool {
        self.switches
            .blocks(e.rule.is_blocking(), e.added_at_run_time)
    }

    /// Whether `e`'s expression matches (claims missing under the JWT switch).
    fn matches(&self, e: &Entry) -> bool {
        let jwt_off = self.switches.jwt_disabled();
        e.rule.expression.matches_with(self.req, jwt_off)
    }

    /// Keys one matching rule; expired rules are counted and skipped.
    #[inline(always)]
    fn pick<'p: 'a>(&self, e: &'p Arc<Entry>) -> Pick<'p> {
        let pick = if e.plain {
            self.pick_plain(e)
        } else {
            self.pick_with(e, true)
        };
        if let Pick::Take(t) = &pick {
            self.label_if_wanted(e, t.subject);
        }
        pick
    }

    /// Gives `e` the label of `subject` when it waits for it.
    #[inline(always)]
    fn label_if_wanted(&self, e: &Entry, subject: KeyDigest) {
        if e.stats.wants_label(&subject) {
            self.give_label(e, subject);
        }
    }

    /// Gives the rule's heavy-hitters sketch the readable label of
    /// `subject`, which it waits for (see `RuleStats::wants_label`).
    #[cold]
    #[inline(never)]
    pub(super) fn give_label(&self, e: &Entry, subject: KeyDigest) {
        let jwt_off = self.switches.jwt_disabled();
        if let Some(l) = label(&e.rule, self.req, jwt_off) {
            e.stats.give_label(subject, &l);
        }
    }

    /// [`Selector::pick_with`] of a rule with nothing to test but its key
    /// (`Entry::plain`): the same pick, the other tests known false.
    #[inline(always)]
    fn pick_plain<'p: 'a>(&self, e: &'p Arc<Entry>) -> Pick<'p> {
        let (req, key) = (self.req, self.hash_key);
        if e.ip_key {
            return Pick::Take(self.pick_ip(e));
        }
        let jwt_off = self.switches.jwt_disabled();
        match subject_after(&e.rule, req, key, jwt_off, &mut None, false) {
            KeyOutcome::Subject(subject) => Pick::Take(Picked {
                entry: e,
                subject,
                bit: None,
                blocks: self.blocks(e),
            }),
            KeyOutcome::Skip => Pick::Skip,
            KeyOutcome::Reject => Pick::Reject,
        }
    }

    /// [`Selector::pick_plain`] of a rule keyed on the address alone
    /// (`Entry::ip_key`): never missing, the address is always there.
    #[inline(always)]
    fn pick_ip<'p: 'a>(&self, e: &'p Arc<Entry>) -> Picked<'p> {
        Picked {
            entry: e,
            subject: ip_subject(self.hash_key, self.req.client_ip()),
            bit: None,
            blocks: self.blocks(e),
        }
    }

    /// Keys one matching rule, recording skips in its stats when `record`.
    fn pick_with<'p: 'a>(&self, e: &'p Arc<Entry>, record: bool) -> Pick<'p> {
        if e.rule.expired_at(self.now) {
            if record {
                e.stats.record(Event::Expired);
            }
            return Pick::Skip;
        }
        let jwt_off = self.switches.jwt_disabled();
        if e.rule
            .allow
            .as_ref()
            .is_some_and(|a| a.matches(self.req, jwt_off))
        {
            if record {
                e.stats.record(Event::Allowlisted);
            }
            return Pick::Skip;
        }
        let (req, key) = (self.req, self.hash_key);
        let subject = match self.prefix.try_borrow_mut() {
            Ok(mut prefix) => subject_after(&e.rule, req, key, jwt_off, &mut prefix, e.key_shared),
            Err(_) => subject_after(&e.rule, req, key, jwt_off, &mut None, false),
        };
        let subject = match subject {
            KeyOutcome::Subject(s) => s,
            KeyOutcome::Skip => return Pick::Skip,
            KeyOutcome::Reject => return Pick::Reject,
        };
        let bit = match &e.rule.distinct_of {
            Some(of) => match distinct_value(of, self.req) {
                Some(v) => Some(distinct::bit_of(self.hash_key, &v)),
                None => return Pick::Skip,
            },
            None => None,
        };
        let canary_in = e.rule.canary_bp.is_none_or(|bp| in_canary(&subject, bp));
        Pick::Take(Picked {
            entry: e,
            subject,
            bit,
            blocks: self.blocks(e) && canary_in,
        })
    }

    /// A missing key with `reject`: 400 under a blocking rule; a log rule
    /// only records that it would have rejected.
    fn reject<'p>(&self, e: &'p Arc<Entry>, sel: &mut Selection<'p>) {
        if self.blocks(e) {
            sel.reject = true;
        } else {
            e.stats.record(Event::WouldLimit);
            sel.would_reject.push(e);
        }
    }

    /// Fills `sel` (empty) with the rules `p` runs for this request: in
    /// place, as the lists live on the stack. With `plan` (the set's
    /// compiled plan, `Published::compiled`: its only rule, a plain
    /// site-wide `["ip"]` rule) that rule is picked without the loops.
    // Inlined: the plan's pick is then the caller's own code (out of line,
    // it cost 120 instructions an allowed request, `layer_calls`).
    #[inline(always)]
    pub(crate) fn select<'p: 'a>(
        &self,
        p: &'p Published,
        plan: Option<&'p Arc<Entry>>,
        sel: &mut Selection<'p>,
    ) {
        match plan {
            // Plain and keyed on the address alone (`Published::plan`):
            // never skipped or rejected. Picked as such, without the
            // `Pick` of the other keys (it went through memory: about 15
            // instructions a request, `layer_calls`).
            Some(e) => {
                let t = self.pick_ip(e);
                self.label_if_wanted(e, t.subject);
                sel.rules.push(t.pending());
            }
            None => self.select_all(p, sel),
        }
    }

    /// [`Selector::select`] without a plan: every rule group in turn.
    fn select_all<'p: 'a>(&self, p: &'p Published, sel: &mut Selection<'p>) {
        for e in &p.site_wide {
            match self.pick(e) {
                Pick::Take(t) => sel.rules.push(t.pending()),
                Pick::Skip => {}
                Pick::Reject => self.reject(e, sel),
            }
        }
        let mut taken = 0;
        'passes: for blocking_pass in [true, false] {
            for e in &p.others {
                if self.blocks(e) != blocking_pass || !self.matches(e) {
                    continue;
                }
                if sel.capped {
                    // Past the cap: only a running penalty still counts.
                    if !blocking_pass {
                        break 'passes;
                    }
                    if e.rule.penalty_ms.is_some() {
                        if let Pick::Take(t) = self.pick_with(e, false) {
                            sel.penalty_only.push(t);
                        }
                    }
                    continue;
                }
                match self.pick(e) {
                    Pick::Take(_) | Pick::Reject if taken == MAX_OTHER_RULES => {
                        sel.capped = true;
                        e.stats.record(Event::Capped);
                        if !blocking_pass {
                            break 'passes;
                        }
                        if e.rule.penalty_ms.is_some() {
                            if let Pick::Take(t) = self.pick_with(e, false) {
                                sel.penalty_only.push(t);
                            }
                        }
                    }
                    Pick::Take(t) => {
                        sel.rules.push(t.pending());
                        taken += 1;
                    }
                    Pick::Skip => {}
                    Pick::Reject => {
                        self.reject(e, sel);
                        taken += 1;
                    }
                }
            }
        }
        for e in &p.counts {
            if sel.counts.len() == MAX_COUNT_RULES {
                break;
            }
            if !self.matches(e) {
                continue;
            }
            match self.pick(e) {
                Pick::Take(t) => sel.counts.push(t),
                Pick::Skip => {}
                Pick::Reject => self.reject(e, sel),
            }
        }
    }
}
