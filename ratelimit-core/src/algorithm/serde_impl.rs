//! [`Algorithm`] as its JSON name (`"token_bucket"`), written by hand so
//! the core needs no `serde_derive` (and its `syn` build) for one enum.

use serde::de::{Deserialize, Deserializer, Error as _};
use serde::ser::{Serialize, Serializer};

use super::Algorithm;

impl Serialize for Algorithm {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Algorithm {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Algorithm::from_name(&name)
            .ok_or_else(|| D::Error::unknown_variant(&name, &Algorithm::NAMES))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn algorithms_round_trip_as_their_json_names() {
        for a in Algorithm::ALL {
            let json = serde_json::to_string(&a).expect("serializes");
            assert_eq!(json, format!("\"{}\"", a.as_str()));
            let back: Algorithm = serde_json::from_str(&json).expect("deserializes");
            assert_eq!(back, a);
        }
    }

    #[test]
    fn an_unknown_name_is_refused_with_the_known_ones() {
        let err = serde_json::from_str::<Algorithm>("\"gcra\"").expect_err("unknown");
        let msg = err.to_string();
        assert!(msg.contains("unknown variant `gcra`"), "{msg}");
        assert!(msg.contains("token_bucket"), "{msg}");
        assert!(serde_json::from_str::<Algorithm>("3").is_err());
    }
}
