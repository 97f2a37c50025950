//! Plays the conformance timeline cases against a backend and reports each.
//!
//! `ratelimit-conformance --backend memory|valkey [--via core|tower|grpc] CASE.json...`
//! prints one line per case, then `N passed, M failed` (and `K skipped` when
//! a case does not apply to the backend), and exits non-zero when anything
//! failed. `--via tower` plays the requests through the tower layer as
//! `http::Request`s instead of calling the limiter directly; `--via grpc`
//! plays them as unary calls of a tonic client to a tonic server behind the
//! layer, over loopback, and reads each gRPC status back as HTTP.
#![forbid(unsafe_code)]
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ratelimit_conformance::{load_case, run_memory_via, ValkeyEnv, Verdict, Via};

fn usage() -> ExitCode {
    eprintln!(
        "usage: ratelimit-conformance --backend memory|valkey [--via core|tower|grpc] CASE.json..."
    );
    ExitCode::from(2)
}

/// The command line: the backend, how requests are played, the cases.
struct Args {
    backend: String,
    via: Via,
    files: Vec<PathBuf>,
}

/// Reads the command line; `None` for a usage error.
fn args() -> Option<Args> {
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
                    Some("grpc") => Via::Grpc,
                    _ => return None,
                }
            }
            "-h" | "--help" => return None,
            _ => files.push(a.into()),
        }
    }
    let backend = backend?;
    (!files.is_empty()).then_some(Args {
        backend,
        via,
        files,
    })
}

/// The runtime and, for `--backend valkey`, a Valkey; a message when one
/// cannot be had.
fn start(backend: &str) -> Result<(tokio::runtime::Runtime, Option<ValkeyEnv>), String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a runtime: {e}"))?;
    let valkey = match backend {
        "valkey" => {
            Some(ValkeyEnv::start().map_err(|e| format!("no Valkey for --backend valkey: {e}"))?)
        }
        _ => None,
    };
    Ok((rt, valkey))
}

/// Plays one case file.
fn play(
    rt: &tokio::runtime::Runtime,
    valkey: Option<&ValkeyEnv>,
    args: &Args,
    f: &Path,
) -> Verdict {
    match load_case(f) {
        Err(e) => Verdict::Failed(e),
        Ok(case) => match args.backend.as_str() {
            "memory" => rt.block_on(run_memory_via(&case, args.via)),
            "valkey" => match valkey {
                Some(env) => rt.block_on(env.run(&case, args.via)),
                None => Verdict::Failed("no Valkey".into()),
            },
            other => Verdict::Failed(format!("unknown backend {other:?}")),
        },
    }
}

fn main() -> ExitCode {
    let Some(args) = args() else {
        return usage();
    };
    let (rt, valkey) = match start(&args.backend) {
        Ok(started) => started,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let (mut passed, mut failed, mut skipped) = (0, 0, 0);
    for f in &args.files {
        let name = f.display();
        match play(&rt, valkey.as_ref(), &args, f) {
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
