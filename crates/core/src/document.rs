//! Every document fairshare writes starts with `schema_version` ([`SCHEMA_VERSION`], the layout
//! `docs/json.md` describes), and every reader refuses another. A document type carries the
//! version in its JSON only, not as a field: its derives are `#[serde(remote = "Self")]`
//! (which makes them inherent functions), and [`versioned_json!`](crate::versioned_json)
//! implements `Serialize` and `Deserialize` around them, writing the version first and
//! refusing a document of another version on reading. The simulator's and the lab's
//! documents share this one implementation.

pub use crate::instance::SCHEMA_VERSION;
#[doc(hidden)]
pub use serde;
use serde::{Deserialize, Serialize};

/// A document's JSON: the layout version, then the document's own fields.
#[doc(hidden)]
#[derive(Serialize, Deserialize)]
pub struct Versioned<T> {
    /// The layout version.
    pub schema_version: u32,
    /// The document's own fields.
    #[serde(flatten)]
    pub fields: T,
}

/// Refuses a document written in another layout than this program's.
#[doc(hidden)]
pub fn check_version<E: serde::de::Error>(found: u32) -> Result<(), E> {
    if found == SCHEMA_VERSION {
        Ok(())
    } else {
        Err(E::custom(format!(
            "schema_version {found}: this fairshare reads schema_version {SCHEMA_VERSION}"
        )))
    }
}

/// Implements `Serialize` and `Deserialize` for document types whose derives carry
/// `#[serde(remote = "Self")]`, through [`Versioned`]: the version first, then the fields.
#[macro_export]
macro_rules! versioned_json {
    ($($t:ty),*) => {$(
        impl $crate::document::serde::Serialize for $t {
            fn serialize<S: $crate::document::serde::Serializer>(
                &self,
                serializer: S,
            ) -> Result<S::Ok, S::Error> {
                struct Fields<'a>(&'a $t);
                impl $crate::document::serde::Serialize for Fields<'_> {
                    fn serialize<S: $crate::document::serde::Serializer>(
                        &self,
                        s: S,
                    ) -> Result<S::Ok, S::Error> {
                        <$t>::serialize(self.0, s)
                    }
                }
                let document = $crate::document::Versioned {
                    schema_version: $crate::document::SCHEMA_VERSION,
                    fields: Fields(self),
                };
                $crate::document::serde::Serialize::serialize(&document, serializer)
            }
        }

        impl<'de> $crate::document::serde::Deserialize<'de> for $t {
            fn deserialize<D: $crate::document::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> Result<Self, D::Error> {
                struct Fields($t);
                impl<'de> $crate::document::serde::Deserialize<'de> for Fields {
                    fn deserialize<D: $crate::document::serde::Deserializer<'de>>(
                        d: D,
                    ) -> Result<Self, D::Error> {
                        <$t>::deserialize(d).map(Fields)
                    }
                }
                let document: $crate::document::Versioned<Fields> =
                    $crate::document::serde::Deserialize::deserialize(deserializer)?;
                $crate::document::check_version(document.schema_version)?;
                Ok(document.fields.0)
            }
        }
    )*};
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    /// A document of one field.
    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(remote = "Self")]
    struct Note {
        text: String,
    }

    crate::versioned_json!(Note);

    #[test]
    fn a_document_starts_with_its_version_and_reads_back() {
        let note = Note { text: "hi".into() };
        let json = serde_json::to_string(&note).unwrap();
        assert_eq!(json, r#"{"schema_version":1,"text":"hi"}"#);
        assert_eq!(serde_json::from_str::<Note>(&json).unwrap(), note);
    }

    #[test]
    fn another_or_no_version_is_refused() {
        let error = serde_json::from_str::<Note>(r#"{"schema_version":2,"text":"hi"}"#);
        assert_eq!(
            error.unwrap_err().to_string(),
            "schema_version 2: this fairshare reads schema_version 1"
        );
        let error = serde_json::from_str::<Note>(r#"{"text":"hi"}"#).unwrap_err();
        assert!(error.to_string().contains("schema_version"), "{error}");
    }
}
