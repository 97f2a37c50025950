//! Reading a log: the reader's buffer, large or small, does not change
//! what is replayed (lines across two fills, too long, not UTF-8).

use std::io::BufReader;

use super::*;

const RULES: &str = r#"[{"id": "one", "expression": "true", "algorithm": "fixed_window",
    "limit": 2, "period": "1m", "key": ["ip"]}]"#;

/// A log with every kind of line: CRLF, empty, too long, not UTF-8,
/// garbage, and a last line without a newline.
fn log() -> Vec<u8> {
    let line = |i: usize| {
        format!(
            "192.0.2.{} - - [01/Dec/2026:10:00:{:02} +0000] \"GET /{i} HTTP/1.1\" 200 5 \"-\" \"ua\"",
            i % 3,
            i % 60
        )
    };
    let mut log = Vec::new();
    for i in 0..40 {
        log.extend_from_slice(line(i).as_bytes());
        log.extend_from_slice(if i % 4 == 0 { b"\r\n" } else { b"\n" });
        match i {
            7 => log.extend_from_slice(b"\n"),
            11 => {
                log.extend_from_slice(&[b'x'; MAX_LINE + 100]);
                log.push(b'\n');
            }
            12 => log.extend_from_slice(b"\n\xff\xfe not utf-8\n"),
            20 => log.extend_from_slice(b"garbage\n"),
            _ => {}
        }
    }
    log.extend_from_slice(line(40).as_bytes());
    log
}

/// The report of `log` read through a buffer of `capacity` bytes.
fn report(log: &[u8], capacity: usize) -> (String, Tally) {
    let rules = RuleSet::from_json(RULES).unwrap();
    let mut replay = Replay::new(rules, LogFormat::Combined);
    replay
        .read(BufReader::with_capacity(capacity, log))
        .unwrap();
    let mut out = Vec::new();
    output::text(&mut out, "access.log", &replay.tally, 5).unwrap();
    (String::from_utf8(out).unwrap(), replay.tally)
}

#[test]
fn any_buffer_size_replays_a_log_alike() {
    let log = log();
    let (text, tally) = report(&log, 1 << 20);
    // 41 requests, 2 a minute per client allowed, the 3 bad lines shown.
    assert_eq!((tally.lines, tally.bad), (44, 3), "{text}");
    assert_eq!(tally.outcomes[0] + tally.outcomes[1], 41, "{text}");
    assert!(tally.outcomes[1] > 0, "{text}");
    for why in ["longer than 64 KiB", "not UTF-8", "garbage"] {
        assert!(text.contains(why), "{why}: {text}");
    }
    for capacity in [1, 7, 100, 1 << 16] {
        assert_eq!(
            report(&log, capacity).0,
            text,
            "a buffer of {capacity} bytes"
        );
    }
}

/// The rest of a too-long line is skipped to its end and counted whole,
/// its newline included (the progress bar's bytes), however the reader
/// hands it over, and the next line is left to read.
#[test]
fn skipping_a_line_counts_every_byte_to_its_end() {
    let long = vec![b'x'; 200_000];
    let cases: [(Vec<u8>, u64, &str); 4] = [
        ([&long[..], b"\nnext\n"].concat(), 200_001, "next\n"),
        (long.clone(), 200_000, ""),
        (b"\nnext\n".to_vec(), 1, "next\n"),
        (Vec::new(), 0, ""),
    ];
    for (input, skipped, left) in cases {
        let mut reader = BufReader::with_capacity(1000, &input[..]);
        assert_eq!(skip_line(&mut reader).expect("read"), skipped);
        let mut after = String::new();
        reader.read_line(&mut after).expect("read");
        assert_eq!(after, left);
    }
}
