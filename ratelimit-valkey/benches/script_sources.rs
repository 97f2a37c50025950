//! Writes the Lua scripts exactly as the backend sends them into a folder,
//! for `benches/script_instructions.sh`, which counts the server
//! instructions each costs per `EVALSHA` under valgrind:
//!
//! ```text
//! cargo bench -p ratelimit-valkey --bench script_sources -- <folder>
//! ```
//!
//! One file per script: `fw.lua`, `sw.lua`, `tb.lua`, `lb.lua`,
//! `distinct.lua` (one check each) and `batch.lua` (the checks of one
//! request in one call).
#![allow(clippy::print_stdout)]

use std::path::PathBuf;

use ratelimit_core::algorithm::Algorithm;
use ratelimit_valkey::{batch_script_source, script_source};

fn main() {
    // `cargo bench` passes `--bench`; the folder is the one other argument.
    let Some(dir) = std::env::args().skip(1).find(|a| !a.starts_with("--")) else {
        println!("usage: cargo bench -p ratelimit-valkey --bench script_sources -- <folder>");
        return;
    };
    let dir = PathBuf::from(dir);
    std::fs::create_dir_all(&dir).expect("the folder");
    let scripts = [
        (
            "fw",
            script_source(Algorithm::FixedWindow).expect("a script"),
        ),
        (
            "sw",
            script_source(Algorithm::SlidingWindow).expect("a script"),
        ),
        (
            "tb",
            script_source(Algorithm::TokenBucket).expect("a script"),
        ),
        (
            "lb",
            script_source(Algorithm::LeakyBucket).expect("a script"),
        ),
        (
            "distinct",
            script_source(Algorithm::Distinct).expect("a script"),
        ),
        ("batch", batch_script_source()),
    ];
    for (name, source) in scripts {
        let path = dir.join(format!("{name}.lua"));
        std::fs::write(&path, source).expect("write a script");
        println!("{}", path.display());
    }
}
