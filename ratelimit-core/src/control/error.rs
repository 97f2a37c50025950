//! Why a control action was refused, and the check every publish makes.

use std::fmt;

use super::Published;
use crate::rules::RuleSet;

/// Why a control action was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ControlError {
    /// Another publish came first: start again from version `current`.
    Conflict {
        /// The version now published.
        current: u64,
    },
    /// Live instances read an older schema than the set needs; the publish
    /// waits until they are upgraded (or gone).
    Held {
        /// The schema the set needs.
        needs_schema: u32,
        /// The instances in the way, with the schema each reads.
        instances: Vec<(String, u32)>,
    },
    /// The set (or the request) is invalid; the text names the rule id and
    /// the field.
    Invalid(String),
    /// The store did not answer (Valkey down, or not allowed).
    Unavailable(String),
}

impl fmt::Display for ControlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ControlError::Conflict { current } => write!(
                f,
                "another publish came first: version {current} is published; start again from it"
            ),
            ControlError::Held {
                needs_schema,
                instances,
            } => {
                write!(f, "held: the set needs schema {needs_schema}, and ")?;
                for (i, (id, schema)) in instances.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    write!(f, "{sep}{id} reads schema {schema}")?;
                }
                Ok(())
            }
            ControlError::Invalid(why) => write!(f, "invalid: {why}"),
            ControlError::Unavailable(why) => write!(f, "unavailable: {why}"),
        }
    }
}

impl std::error::Error for ControlError {}

impl Published {
    /// Checks a rule set before it is published or applied: at most
    /// [`Published::MAX_SET_BYTES`], a schema this build reads, and a set that loads.
    ///
    /// # Errors
    ///
    /// [`ControlError::Invalid`] naming the size, the schema, or the rule id
    /// and field of the first error.
    ///
    /// # Examples
    ///
    /// ```
    /// use ratelimit_core::control::Published;
    ///
    /// assert!(Published::check_set("[]", Published::SCHEMA).is_ok());
    /// let err = Published::check_set("[]", Published::SCHEMA + 1).unwrap_err();
    /// assert!(err.to_string().contains("schema 2"), "{err}");
    /// let err = Published::check_set(r#"[{"id": "x"}]"#, Published::SCHEMA).unwrap_err();
    /// assert!(err.to_string().contains("\"x\""), "{err}");
    /// ```
    pub fn check_set(json: &str, schema: u32) -> Result<RuleSet, ControlError> {
        if json.len() > Self::MAX_SET_BYTES {
            return Err(ControlError::Invalid(format!(
                "the rule set is {} bytes, over the limit of {}",
                json.len(),
                Self::MAX_SET_BYTES
            )));
        }
        if schema > Self::SCHEMA {
            return Err(ControlError::Invalid(format!(
                "the rule set needs schema {schema}; this build reads schema {}",
                Self::SCHEMA
            )));
        }
        RuleSet::from_json(json).map_err(|e| ControlError::Invalid(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_oversized_set_is_refused_before_it_is_parsed() {
        let json = format!("[{}]", " ".repeat(Published::MAX_SET_BYTES));
        let err = Published::check_set(&json, Published::SCHEMA).unwrap_err();
        assert!(err.to_string().contains("over the limit"), "{err}");
    }

    #[test]
    fn a_hold_names_every_instance_in_the_way() {
        let e = ControlError::Held {
            needs_schema: 2,
            instances: vec![("edge-1".into(), 1), ("edge-2".into(), 1)],
        };
        let text = e.to_string();
        assert!(
            text.contains("edge-1 reads schema 1, edge-2 reads schema 1"),
            "{text}"
        );
    }
}
