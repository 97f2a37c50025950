//! `grpc-status-details-bin`: a `google.rpc.Status` whose details hold one
//! `google.rpc.RetryInfo`, encoded by hand (four small messages: no protobuf
//! crate), then base64 as gRPC's `-bin` metadata are.
//!
//! ```text
//! Status    { int32 code = 1; string message = 2; repeated Any details = 3; }
//! Any       { string type_url = 1; bytes value = 2; }
//! RetryInfo { Duration retry_delay = 1; }
//! Duration  { int64 seconds = 1; int32 nanos = 2; }
//! ```

use base64::engine::general_purpose::STANDARD_NO_PAD;
use base64::Engine;
use http::HeaderValue;

const RETRY_INFO_TYPE: &str = "type.googleapis.com/google.rpc.RetryInfo";

/// The header value: `code`, `message` and a retry delay of `pushback_ms`.
pub(super) fn retry_info(code: u8, message: &str, pushback_ms: u64) -> HeaderValue {
    let encoded = STANDARD_NO_PAD.encode(status(code, message, pushback_ms));
    // base64 is printable ASCII.
    HeaderValue::try_from(encoded).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The encoded `google.rpc.Status`, in one buffer of the exact size: the
/// nested messages' lengths are known before they are written.
fn status(code: u8, message: &str, pushback_ms: u64) -> Vec<u8> {
    let Lengths {
        secs,
        nanos,
        duration,
        retry_info,
        any,
        total,
    } = Lengths::of(code, message, pushback_ms);
    let mut out = Vec::with_capacity(total);
    varint_field(&mut out, 1, u64::from(code));
    bytes_field(&mut out, 2, message.as_bytes());
    field_head(&mut out, 3, any);
    bytes_field(&mut out, 1, RETRY_INFO_TYPE.as_bytes());
    field_head(&mut out, 2, retry_info);
    field_head(&mut out, 1, duration);
    varint_field(&mut out, 1, secs);
    varint_field(&mut out, 2, nanos);
    out
}

/// The parts of a `google.rpc.Status` with a `RetryInfo`, and the encoded
/// lengths of its nested messages.
struct Lengths {
    secs: u64,
    nanos: u64,
    duration: usize,
    retry_info: usize,
    any: usize,
    total: usize,
}

impl Lengths {
    fn of(code: u8, message: &str, pushback_ms: u64) -> Self {
        // Below a second: never more than 999 000 000 nanoseconds.
        let (secs, nanos) = (pushback_ms / 1000, (pushback_ms % 1000) * 1_000_000);
        let duration = varint_field_len(secs) + varint_field_len(nanos);
        let retry_info = bytes_field_len(duration);
        let any = bytes_field_len(RETRY_INFO_TYPE.len()) + bytes_field_len(retry_info);
        let total = varint_field_len(u64::from(code))
            + bytes_field_len(message.len())
            + bytes_field_len(any);
        Self {
            secs,
            nanos,
            duration,
            retry_info,
            any,
            total,
        }
    }
}

/// The encoded length of a varint field holding `value` (none for 0).
fn varint_field_len(value: u64) -> usize {
    if value == 0 {
        0
    } else {
        1 + varint_len(value)
    }
}

/// The encoded length of a length-delimited field of `len` bytes.
fn bytes_field_len(len: usize) -> usize {
    1 + varint_len(len as u64) + len
}

fn varint_len(mut value: u64) -> usize {
    let mut n = 1;
    while value >= 0x80 {
        value >>= 7;
        n += 1;
    }
    n
}

/// A varint field (wire type 0); a zero is left out, as proto3 does.
fn varint_field(buf: &mut Vec<u8>, field: u8, value: u64) {
    if value != 0 {
        varint(buf, u64::from(field) << 3);
        varint(buf, value);
    }
}

/// A length-delimited field (wire type 2).
fn bytes_field(buf: &mut Vec<u8>, field: u8, value: &[u8]) {
    field_head(buf, field, value.len());
    buf.extend_from_slice(value);
}

/// The tag and length of a length-delimited field of `len` bytes, whose
/// bytes follow.
fn field_head(buf: &mut Vec<u8>, field: u8, len: usize) {
    varint(buf, (u64::from(field) << 3) | 2);
    varint(buf, len as u64);
}

fn varint(buf: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        buf.push((value as u8) | 0x80);
        value >>= 7;
    }
    buf.push(value as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_with_retry_info_encodes_as_protobuf() {
        // Checked field by field: code 8, message "hi", one Any.
        let bytes = status(8, "hi", 1500);
        let mut want = vec![0x08, 8, 0x12, 2, b'h', b'i', 0x1a];
        // Duration{seconds: 1, nanos: 500_000_000}.
        let duration = [0x08, 1, 0x10, 0x80, 0xca, 0xb5, 0xee, 0x01];
        let mut any = vec![0x0a, RETRY_INFO_TYPE.len() as u8];
        any.extend_from_slice(RETRY_INFO_TYPE.as_bytes());
        any.extend_from_slice(&[0x12, duration.len() as u8 + 2, 0x0a, duration.len() as u8]);
        any.extend_from_slice(&duration);
        want.push(any.len() as u8);
        want.extend_from_slice(&any);
        assert_eq!(bytes, want);
        // The lengths written are the lengths predicted: zero seconds or
        // nanoseconds left out, a long message's length in two bytes.
        let long = "m".repeat(300);
        for (ms, message) in [
            (1500, "hi"),
            (0, "x"),
            (999, "x"),
            (3_000, &long),
            (u64::MAX, ""),
        ] {
            let bytes = status(14, message, ms);
            assert_eq!(bytes.len(), Lengths::of(14, message, ms).total, "{ms} ms");
        }
    }

    #[test]
    fn varints_carry_seven_bits_a_byte() {
        for (value, want) in [
            (0u64, &[0u8][..]),
            (300, &[0xac, 0x02]),
            (u64::MAX, &[0xff; 9]),
        ] {
            let mut buf = Vec::new();
            varint(&mut buf, value);
            assert_eq!(&buf[..want.len()], want, "{value}");
        }
    }
}
