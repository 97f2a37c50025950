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

/// The encoded `google.rpc.Status`.
fn status(code: u8, message: &str, pushback_ms: u64) -> Vec<u8> {
    let mut duration = Vec::new();
    varint_field(&mut duration, 1, pushback_ms / 1000);
    // Below a second: never more than 999 999 000 nanoseconds.
    varint_field(&mut duration, 2, (pushback_ms % 1000) * 1_000_000);
    let mut retry_info = Vec::new();
    bytes_field(&mut retry_info, 1, &duration);
    let mut any = Vec::new();
    bytes_field(&mut any, 1, RETRY_INFO_TYPE.as_bytes());
    bytes_field(&mut any, 2, &retry_info);
    let mut status = Vec::new();
    varint_field(&mut status, 1, u64::from(code));
    bytes_field(&mut status, 2, message.as_bytes());
    bytes_field(&mut status, 3, &any);
    status
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
    varint(buf, (u64::from(field) << 3) | 2);
    varint(buf, value.len() as u64);
    buf.extend_from_slice(value);
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
