//! Plays the conformance timeline cases against a backend and reports each.
//!
//! `ratelimit-conformance --backend memory|valkey [--via core|tower] CASE.json...`
//! prints one line per case, then `N passed, M failed` (and `K skipped` when
//! a case does not apply to the backend), and exits non-zero when anything
//! failed. `--via tower` plays the requests through the tower layer as
//! `http::Request`s instead of calling the limiter directly.
#![forbid(unsafe_code)]
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::PathBuf;
use std::process::ExitCode;

use ratelimit_conformance::{load_case, run_memory_via, ValkeyEnv, Verdict, Via};

fn usage() -> ExitCode {
    eprintln!(
        "usage: ratelimit-conformance --backend memory|valkey [--via core|tower] CASE.json..."
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut backend = None;
    let mut via = Via::Core;
    let mut files: Vec<PathBuf> = Vec::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--backend" => backend = args.next(),
            "--via" => {
                via = match args.next().as_deref() {
                    Some("core") => Via::Core,
                    Some("tower") => Via::Tower,
                    _ => return usage(),
                }
            }
            "-h" | "--help" => return usage(),
            _ => files.push(a.into()),
        }
    }
    let Some(backend) = backend else {
        return usage();
    };
    if files.is_empty() {
        return usage();
    }
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start a runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let valkey = match backend.as_str() {
        "valkey" => match ValkeyEnv::start() {
            Ok(env) => Some(env),
            Err(e) => {
                eprintln!("no Valkey for --backend valkey: {e}");
                return ExitCode::from(2);
            }
        },
        _ => None,
    };
    let (mut passed, mut failed, mut skipped) = (0, 0, 0);
    for f in &files {
        let verdict = match load_case(f) {
            Err(e) => Verdict::Failed(e),
            Ok(case) => match backend.as_str() {
                "memory" => rt.block_on(run_memory_via(&case, via)),
                "valkey" => match &valkey {
                    Some(env) => rt.block_on(env.run(&case, via)),
                    None => Verdict::Failed("no Valkey".into()),
                },
                other => Verdict::Failed(format!("unknown backend {other:?}")),
            },
        };
        let name = f.display();
        match verdict {
            Verdict::Passed => {
                passed += 1;
                println!("PASS {name}");
            }
            Verdict::Failed(why) => {
                failed += 1;
                println!("FAIL {name}: {why}");
            }
            Verdict::Skipped(why) => {
                skipped += 1;
                println!("SKIP {name}: {why}");
            }
        }
    }
    if skipped > 0 {
        println!("{passed} passed, {failed} failed, {skipped} skipped");
    } else {
        println!("{passed} passed, {failed} failed");
    }
    if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
