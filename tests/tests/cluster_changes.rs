//! A Valkey Cluster changing under load: 4 limiter instances x 64 clients
//! while a third of the slots move between primaries, and while a primary
//! dies and its replica takes over.
//!
//! Each subject has three rules keyed on the address (so their keys live
//! in one slot): `count`, a token bucket that never limits and fails open,
//! so its tokens consumed in Valkey afterwards must equal its admissions
//! exactly (fewer: counts were lost; more: a check was counted twice);
//! `limit`, a token bucket of `LIMIT` per day, and `window`, a fixed window
//! of `LIMIT` per day (its key tells its window by its expiry, which a
//! migrated key carries only to the ms), both failing closed: what Valkey
//! counted must equal their admissions too.
//!
//! Resharding: a MOVED or ASK reply means the script did not run, so the
//! backend sends that check once more to the node named, within the same
//! deadline (see `ratelimit_valkey::cluster`). Every check is answered by
//! Valkey, counted exactly once (the scripts the nodes ran equal the
//! answers the instances got), and once the slots have moved the
//! redirects stop: the slot map followed.
//!
//! Failover: Valkey replicates asynchronously, so the counts the dead
//! primary acknowledged but had not yet streamed to its replica are lost.
//! The test measures them per subject (admissions minus tokens consumed
//! on the promoted replica) and holds them to what the old primary
//! acknowledged in its last second: on loopback the replica is
//! microseconds behind, and the measured loss is reported.
#![allow(clippy::print_stderr)]

use std::collections::BTreeMap;
use std::time::Duration;

use ratelimit_core::Outcome;
use ratelimit_testkit::valkey::ValkeyCluster;
use ratelimit_tests::support::cluster::{
    assert_latency, broken, busy, clear_of_midnight, consumed, digest, fleet, redirects, rules,
    scripts_run, slot_of, subjects, tally, Clients, RULES,
};
use ratelimit_tests::support::record::Sample;
use ratelimit_tests::support::wall_ms;

/// The tests take turns: their latency bounds must not depend on each other.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const INSTANCES: usize = 4;
const CLIENTS: usize = 64;
/// A client pauses 1 to this many ms between requests.
const PAUSE_MS: u64 = 20;
const DEADLINE: Duration = Duration::from_millis(250);
/// Scheduling slack on this small shared machine, on top of the deadline.
const SLACK_MS: u64 = 250;
const BOUND_MS: u64 = 250 + SLACK_MS;
const LIMIT: u64 = 500;
/// After the promotion is visible, checks on the promoted replica's slots
/// succeed within this: a failing node asks for a slot map read at most
/// once a second, plus the read itself.
const FOLLOW_MS: u64 = 2_500;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resharding_under_load_answers_and_counts_every_check_once() {
    let _turn = SERIAL.lock().await;
    clear_of_midnight().await;
    let c = ValkeyCluster::start(3).unwrap_or_else(|e| panic!("{e}"));
    let set = rules(LIMIT);
    let who = subjects(&set, &c, 9, 8);
    let f = fleet(&c, &set, INSTANCES, DEADLINE).await;
    let before: Vec<Option<usize>> = who.iter().map(|&w| c.owner_of(slot_of(&set, w))).collect();
    let urls = c.urls();
    let (moved0, ask0) = redirects(&urls).await;
    let run0 = scripts_run(&urls).await;
    let clients = Clients::start(&f.limiters, CLIENTS, &who, PAUSE_MS);
    tokio::time::sleep(Duration::from_millis(1000)).await;
    // A third of the slots: the first third of each primary's, to the next.
    let t_mig = wall_ms();
    let mut moved = ratelimit_testkit::valkey::Migration::default();
    for from in 0..3usize {
        let first = (from * 5461) as u16;
        let m = tokio::task::block_in_place(|| {
            c.migrate_slots(
                from,
                (from + 1) % 3,
                first..=first + 1820,
                64,
                Duration::from_millis(200),
            )
        })
        .unwrap_or_else(|e| panic!("migration: {e}"));
        moved.slots += m.slots;
        moved.keys += m.keys;
    }
    let t_done = wall_ms();
    // The slot map follows: after a settling second, no more redirects.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let (moved1, ask1) = redirects(&urls).await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let (moved2, ask2) = redirects(&urls).await;
    let answers = clients.stop().await;
    let samples = f.log.samples();
    let run1 = scripts_run(&urls).await;

    let what = "resharding";
    let (max, p99) = assert_latency(what, &answers, DEADLINE, SLACK_MS);
    // Every check answered by Valkey (a redirect followed), but for
    // time-outs of a busy machine (SETSLOT also saves the node's config).
    let failed: Vec<&Sample> = samples.iter().filter(|s| broken(s)).collect();
    assert!(
        failed.is_empty(),
        "{what}: {} checks failed other than by time-out, e.g. {:?}",
        failed.len(),
        failed.first()
    );
    let timeouts = busy(&samples) as u64;
    assert!(
        timeouts * 50 <= samples.len() as u64,
        "{what}: {timeouts} of {} checks timed out (or met a breaker opened by time-outs)",
        samples.len()
    );
    let answered = samples.len() as u64 - timeouts;
    let ran = run1 - run0;
    assert!(
        answered <= ran && ran <= answered + timeouts,
        "{what}: the nodes ran {ran} scripts for {answered} answered checks and {timeouts} \
         time-outs: a check was sent twice, or never"
    );
    assert!(
        moved1 > moved0 && ask1 > ask0,
        "{what}: the migration caused no MOVED ({moved0} -> {moved1}) or no ASK ({ask0} -> {ask1})"
    );
    assert_eq!(
        (moved2, ask2),
        (moved1, ask1),
        "{what}: redirects continue a second after the migration: the slot map did not follow"
    );
    let mut lines = Vec::new();
    let mut migrated = 0;
    for (k, &w) in who.iter().enumerate() {
        let d = digest(&set, w);
        let after = c.owner_of(slot_of(&set, w));
        migrated += usize::from(after != before[k]);
        for rule in RULES {
            // A time-out may have counted.
            let (admitted, failed) = tally(&samples, rule, d);
            let used = consumed(&f.backend, &set, rule, w).await;
            assert!(
                admitted <= used && used <= admitted + failed,
                "{what}: {w} {rule}: {admitted} admitted ({failed} timed out) but {used} counted \
                 in Valkey"
            );
            if rule != "count" {
                assert!(admitted <= LIMIT, "{what}: {w}: {admitted} > {LIMIT}");
            }
        }
        let (c_adm, _) = tally(&samples, "count", d);
        let (l_adm, _) = tally(&samples, "limit", d);
        let (w_adm, _) = tally(&samples, "window", d);
        lines.push(format!(
            "{w} node {:?}->{:?} count {c_adm} limit {l_adm}/{LIMIT} window {w_adm}/{LIMIT}",
            before[k], after
        ));
    }
    assert!(migrated >= 4, "{what}: only {migrated} subjects moved");
    eprintln!(
        "{what}: {} slots / {} keys moved in {} ms; {} requests, all answered within {BOUND_MS} ms \
         (max {max} ms, p99 {p99} ms); {} checks, {timeouts} timed out (busy machine), none failed otherwise, \
         {ran} scripts run; MOVED {}, ASK {} (none in the last second); {migrated} of {} subjects \
         moved; over-admission 0 on every subject (admitted <= counted <= admitted + \
         time-outs); {}",
        moved.slots,
        moved.keys,
        t_done - t_mig,
        answers.len(),
        samples.len(),
        moved1 - moved0,
        ask1 - ask0,
        who.len(),
        lines.join("; ")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failover_under_load_follows_fail_mode_then_the_promoted_replica() {
    let _turn = SERIAL.lock().await;
    clear_of_midnight().await;
    let mut c = ValkeyCluster::start_with(3, 1, Duration::from_millis(1000))
        .unwrap_or_else(|e| panic!("{e}"));
    let set = rules(LIMIT);
    let who = subjects(&set, &c, 10, 8);
    let f = fleet(&c, &set, INSTANCES, DEADLINE).await;
    let victim = 1;
    let replica = c.replica_of(victim).expect("the primary has a replica");
    let on_victim: Vec<bool> = who
        .iter()
        .map(|&w| c.node_of_slot(slot_of(&set, w)) == victim)
        .collect();
    let clients = Clients::start(&f.limiters, CLIENTS, &who, PAUSE_MS);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let t_kill = wall_ms();
    c.kill(victim);
    let t_killed = wall_ms();
    let took = tokio::task::block_in_place(|| c.wait_promoted(replica, Duration::from_secs(20)))
        .unwrap_or_else(|e| panic!("{e}"));
    let t_promoted = wall_ms();
    tokio::time::sleep(Duration::from_millis(FOLLOW_MS + 1500)).await;
    let answers = clients.stop().await;
    let samples = f.log.samples();

    let what = "failover";
    let (max, p99) = assert_latency(what, &answers, DEADLINE, SLACK_MS);
    let mut lines = Vec::new();
    let mut gap_answers: BTreeMap<(&str, String), usize> = BTreeMap::new();
    let mut slowest_recovery = 0;
    let mut over = 0;
    let (mut lost_max, mut lost_all) = (0i64, 0i64);
    for (k, &w) in who.iter().enumerate() {
        let d = digest(&set, w);
        let mine: Vec<&Sample> = samples.iter().filter(|s| s.subject == d).collect();
        let failed: Vec<&&Sample> = mine.iter().filter(|s| broken(s)).collect();
        if !on_victim[k] {
            assert!(
                failed.is_empty(),
                "{what}: {w} is not on the dead primary, yet {} checks failed: {:?} (killed at \
                 {t_kill}, promoted by {t_promoted})",
                failed.len(),
                failed
                    .iter()
                    .map(|s| (s.sent_ms, s.done_ms, s.result))
                    .collect::<Vec<_>>()
            );
        }
        for s in &failed {
            assert!(
                s.done_ms >= t_kill && s.sent_ms <= t_promoted + FOLLOW_MS,
                "{what}: {w}: a check failed outside the failover: {s:?}"
            );
        }
        if on_victim[k] {
            // The gap: the replica cannot be promoted before a node time-out.
            for a in answers.iter().filter(|a| {
                a.ip == w
                    && a.start_ms > t_killed + 100
                    && a.start_ms + a.latency_us / 1000 < t_kill + 900
            }) {
                let want = if a.path == "/count" {
                    Outcome::Forward
                } else {
                    Outcome::Unavailable
                };
                assert_eq!(a.outcome, want, "{what}: {w} {} during the gap", a.path);
                *gap_answers
                    .entry((a.path, format!("{:?}", a.outcome)))
                    .or_default() += 1;
            }
            let recovered = mine
                .iter()
                .filter(|s| !s.failed() && s.sent_ms > t_killed)
                .map(|s| s.done_ms)
                .min()
                .expect("checks succeed again after the promotion");
            assert!(
                recovered <= t_promoted + FOLLOW_MS,
                "{what}: {w}: first success {} ms after the promotion was visible",
                recovered.saturating_sub(t_promoted)
            );
            slowest_recovery = slowest_recovery.max(recovered.saturating_sub(t_promoted));
        }
        for rule in RULES {
            let (admitted, failed) = tally(&samples, rule, d);
            let used = consumed(&f.backend, &set, rule, w).await;
            // Checks cut at the kill may have counted without an answer.
            let lost = admitted as i64 - used as i64;
            lost_max = lost_max.max(lost);
            lost_all += lost.max(0);
            if !on_victim[k] {
                assert!(
                    lost <= 0 && -lost <= failed as i64,
                    "{what}: {w} {rule}: {admitted} admitted ({failed} timed out), {used} counted"
                );
                continue;
            }
            let last_second = mine
                .iter()
                .filter(|s| &*s.rule == rule && s.admitted())
                .filter(|s| s.done_ms + 1000 >= t_kill && s.done_ms <= t_killed)
                .count() as i64;
            assert!(
                lost <= last_second && -lost <= failed as i64,
                "{what}: {w} {rule}: {admitted} admitted, {used} counted on the promoted replica: \
                 {lost} lost, more than the {last_second} the dead primary acknowledged in its last \
                 second (or more counted than {failed} unanswered checks explain)"
            );
            if rule != "count" {
                assert!(
                    admitted <= LIMIT + lost.max(0) as u64,
                    "{what}: {w}: {admitted} > {LIMIT} + {lost}"
                );
                over = over.max(admitted.saturating_sub(LIMIT));
            }
            lines.push(format!(
                "{w} {rule}: {admitted} admitted, {used} counted, lost {lost} (acked in the last \
                 second {last_second}, failed {failed})"
            ));
        }
    }
    assert!(
        gap_answers.values().sum::<usize>() >= 10,
        "{what}: too few requests during the gap: {gap_answers:?}"
    );
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for s in samples.iter().filter(|s| s.failed()) {
        if let Err(k) = s.result {
            *kinds.entry(format!("{k:?}")).or_default() += 1;
        }
    }
    eprintln!(
        "{what}: primary {victim} killed, replica {replica} promoted {took:?} later; {} requests, \
         all answered within {BOUND_MS} ms (max {max} ms, p99 {p99} ms); {} checks, failed \
         {kinds:?} (all on the dead primary's subjects, between the kill and {FOLLOW_MS} ms after \
         the promotion); during the gap {gap_answers:?}; checks succeeded again at most \
         {slowest_recovery} ms after the promotion was visible; counts lost: at most \
         {lost_max} for one subject and rule, {lost_all} in all; `limit` / `window` \
         over-admission at most {over}; {}",
        answers.len(),
        samples.len(),
        lines.join("; ")
    );
}

/// A planned failover (`CLUSTER FAILOVER` on the replica, as for
/// maintenance): the primary pauses writes until its replica has caught
/// up, then hands over, so no count is lost; the checks it gets afterwards
/// are answered `MOVED` and followed to the new primary. Every check is
/// answered by Valkey, but for time-outs while writes pause for the
/// hand-over, and once the slot map is read again the redirects stop.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn planned_failover_under_load_loses_nothing() {
    let _turn = SERIAL.lock().await;
    clear_of_midnight().await;
    let c = ValkeyCluster::start_with(3, 1, Duration::from_millis(1000))
        .unwrap_or_else(|e| panic!("{e}"));
    let set = rules(LIMIT);
    let who = subjects(&set, &c, 11, 8);
    let f = fleet(&c, &set, INSTANCES, DEADLINE).await;
    let old = 2;
    let replica = c.replica_of(old).expect("the primary has a replica");
    let urls = c.urls();
    let (moved0, _) = redirects(&urls).await;
    let clients = Clients::start(&f.limiters, CLIENTS, &who, PAUSE_MS);
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let took = tokio::task::block_in_place(|| {
        c.failover(replica, false)?;
        c.wait_promoted(replica, Duration::from_secs(10))
    })
    .unwrap_or_else(|e| panic!("{e}"));
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (moved1, _) = redirects(&urls).await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let (moved2, _) = redirects(&urls).await;
    let answers = clients.stop().await;
    let samples = f.log.samples();

    let what = "planned failover";
    assert!(
        !c.is_primary(old),
        "{what}: the old primary still says it is one"
    );
    let (max, p99) = assert_latency(what, &answers, DEADLINE, SLACK_MS);
    let failed: Vec<&Sample> = samples.iter().filter(|s| broken(s)).collect();
    assert!(
        failed.is_empty(),
        "{what}: {} checks failed other than by time-out, e.g. {:?}",
        failed.len(),
        failed.first()
    );
    let timeouts = busy(&samples);
    assert!(
        timeouts * 50 <= samples.len(),
        "{what}: {timeouts} of {} checks timed out (or met a breaker opened by time-outs)",
        samples.len()
    );
    assert!(moved1 > moved0, "{what}: the old primary sent no MOVED");
    assert_eq!(
        moved2, moved1,
        "{what}: MOVED continue 1.5 s after the hand-over: the slot map did not follow"
    );
    let mut over = 0;
    for &w in &who {
        let d = digest(&set, w);
        for rule in RULES {
            let (admitted, failed) = tally(&samples, rule, d);
            let used = consumed(&f.backend, &set, rule, w).await;
            assert!(
                admitted <= used && used <= admitted + failed,
                "{what}: {w} {rule}: {admitted} admitted ({failed} timed out), {used} counted"
            );
            if rule != "count" {
                assert!(admitted <= LIMIT, "{what}: {w}: {admitted} > {LIMIT}");
                over = over.max(admitted.saturating_sub(LIMIT));
            }
        }
    }
    eprintln!(
        "{what}: replica {replica} took over from {old} in {took:?}; {} requests, all answered \
         within {BOUND_MS} ms (max {max} ms, p99 {p99} ms); {} checks, {} timed out (a busy \
         machine, or writes paused for the hand-over), none failed otherwise; MOVED {} (none after the map was read again); no \
         count lost (admitted <= counted <= admitted + time-outs on all {} subjects), \
         over-admission {over}",
        answers.len(),
        samples.len(),
        timeouts,
        moved1 - moved0,
        who.len()
    );
}
