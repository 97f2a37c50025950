//! Target `valkey_reply`: the decoder of script replies
//! ([`ratelimit_valkey::decode_reply`]), fed any bytes.

use redis::Value;

/// Decodes `data` as a script reply (a bulk string, and an array of the
/// numbers in it) into a decision. Never panics, whatever the bytes.
pub fn reply(data: &[u8]) {
    let as_array = Value::Array(
        data.split(|&b| b == b' ')
            .map(|w| {
                match std::str::from_utf8(w)
                    .ok()
                    .and_then(|s| s.parse::<i64>().ok())
                {
                    Some(n) => Value::Int(n),
                    None => Value::BulkString(w.to_vec()),
                }
            })
            .collect(),
    );
    for value in [Value::BulkString(data.to_vec()), as_array] {
        let _ = ratelimit_valkey::decode_reply(&value);
    }
}
