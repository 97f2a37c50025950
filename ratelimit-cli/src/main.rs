//! The `ratelimit` binary: see the library's docs and `ratelimit --help`.

fn main() {
    let words: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let code = ratelimit_cli::run(&words, &mut std::io::stdout(), &mut std::io::stderr());
    std::process::exit(code);
}
