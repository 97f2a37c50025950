//! The backend-generic scenarios (operator features, penalties, fail
//! modes; `ratelimit_testkit::scenarios`) on the in-memory backend.

ratelimit_testkit::scenarios!(ratelimit_testkit::scenarios::MemoryBackends);
