//! The backend-generic scenarios (operator features, penalties, fail
//! modes; `ratelimit_testkit::scenarios`) on Valkey: a server per test,
//! the limiter's time injected into the scripts, two instances as two
//! backends on one key prefix, an outage as a chaos proxy gone down.

ratelimit_testkit::scenarios!(ratelimit_testkit::scenarios::ValkeyBackends::start());
