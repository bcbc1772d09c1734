//! Taking fields out of Slurm's JSON records, with errors that name the record and the field.
//!
//! The readers go through `serde_json::Value` rather than derived structs so that an error can
//! say which job and which field, that unknown fields cost nothing, and that the few shapes a
//! field takes across Slurm versions (a plain number in 22.05, `{"set", "number"}` from 23.02;
//! a state string in 22.05, an array of them later) are accepted in one place.

use fairshare_trace::slurm_output::{Problem, ReadError};
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// The records of the array `key` of Slurm's JSON `text`, after checking its `errors`, each
/// with only its `fields`: the others (a hundred per job in `squeue --json`) are skipped as
/// they are read, never built.
pub(crate) fn records(
    text: &str,
    key: &'static str,
    fields: &'static [&'static str],
) -> Result<Vec<Value>, ReadError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let top = Top { key, fields }
        .deserialize(&mut de)
        .and_then(|top| de.end().map(|()| top))
        .map_err(|e| ReadError::Json(e.to_string()))?;
    if !top.errors.is_empty() {
        return Err(ReadError::Slurm(Value::Array(top.errors).to_string()));
    }
    match top.records {
        Some(Some(records)) => Ok(records),
        Some(None) => Err(ReadError::field_of(
            "top",
            key,
            Problem::WrongType("an array"),
        )),
        None => Err(ReadError::field_of("top", key, Problem::Missing)),
    }
}

/// The top object of Slurm's JSON: its `errors` and the array `key` of records.
struct Top {
    key: &'static str,
    fields: &'static [&'static str],
}

/// What [`Top`] read: the errors, and the records (`Some(None)`: `key` is not an array).
struct Read {
    errors: Vec<Value>,
    records: Option<Option<Vec<Value>>>,
}

impl<'de> DeserializeSeed<'de> for Top {
    type Value = Read;

    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<Read, D::Error> {
        de.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Top {
    type Value = Read;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("Slurm's JSON: an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Read, A::Error> {
        let mut read = Read {
            errors: Vec::new(),
            records: None,
        };
        while let Some(name) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if name == "errors" {
                if let Value::Array(errors) = map.next_value::<Value>()? {
                    read.errors = errors;
                }
            } else if name == self.key {
                read.records = Some(map.next_value_seed(Records(self.fields))?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(read)
    }
}

/// An array of records, each with only these fields; `None` for anything but an array.
struct Records(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for Records {
    type Value = Option<Vec<Value>>;

    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Records {
    type Value = Option<Vec<Value>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of records")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut records = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(record) = seq.next_element_seed(Fields(self.0))? {
            records.push(record);
        }
        Ok(Some(records))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

/// One record as an object of only these fields.
struct Fields(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for Fields {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Fields {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a record: an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut fields = Map::new();
        while let Some(name) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match self.0.contains(&name.as_ref()) {
                true => {
                    fields.insert(name.into_owned(), map.next_value()?);
                }
                false => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Value::Object(fields))
    }
}

/// One JSON record and the name errors give it.
pub(crate) struct Record<'a> {
    /// How errors name the record: `job 3 (id 42)`.
    pub name: String,
    fields: &'a Map<String, Value>,
}

impl<'a> Record<'a> {
    /// The record `value`, named `what index` until [`Record::rename`] adds its identity.
    pub fn new(what: &str, index: usize, value: &'a Value) -> Result<Self, ReadError> {
        let name = format!("{what} {index}");
        match value {
            Value::Object(fields) => Ok(Record { name, fields }),
            _ => Err(ReadError::Json(format!("{name} is not an object"))),
        }
    }

    /// Adds the record's identity (a job id, a node name) to its name.
    pub fn rename(&mut self, identity: &str) {
        self.name = format!("{} ({identity})", self.name);
    }

    /// An error about `field` of this record.
    pub fn error(&self, field: &'static str, problem: Problem) -> ReadError {
        ReadError::field_of(&self.name, field, problem)
    }

    /// The field, `None` when absent or `null`.
    fn get(&self, field: &str) -> Option<&'a Value> {
        self.fields.get(field).filter(|v| !v.is_null())
    }

    /// A required string field.
    pub fn str(&self, field: &'static str) -> Result<&'a str, ReadError> {
        self.opt_str(field)?
            .ok_or_else(|| self.error(field, Problem::Missing))
    }

    /// An optional string field: `None` when absent, `null` or empty.
    pub fn opt_str(&self, field: &'static str) -> Result<Option<&'a str>, ReadError> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str()).filter(|s| !s.is_empty())),
            Some(_) => Err(self.error(field, Problem::WrongType("a string"))),
        }
    }

    /// A required non-negative integer field.
    pub fn u64(&self, field: &'static str) -> Result<u64, ReadError> {
        self.opt_u64(field)?
            .ok_or_else(|| self.error(field, Problem::Missing))
    }

    /// An optional non-negative integer: `None` when absent, `null` or `{"set": false}`.
    pub fn opt_u64(&self, field: &'static str) -> Result<Option<u64>, ReadError> {
        let value = match self.get(field) {
            Some(Value::Object(o)) if o.get("set") == Some(&Value::Bool(false)) => None,
            Some(Value::Object(o)) if o.get("infinite") == Some(&Value::Bool(true)) => None,
            Some(Value::Object(o)) => o.get("number").filter(|v| !v.is_null()),
            other => other,
        };
        match value {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| self.error(field, Problem::WrongType("a non-negative integer"))),
        }
    }

    /// A required integer field that must fit in 32 bits.
    pub fn u32(&self, field: &'static str) -> Result<u32, ReadError> {
        let value = self.u64(field)?;
        u32::try_from(value).map_err(|_| self.error(field, Problem::Invalid(value.to_string())))
    }

    /// A list of strings: a JSON array of strings, or one comma-separated string.
    pub fn strings(&self, field: &'static str) -> Result<Vec<String>, ReadError> {
        match self.get(field) {
            None => Ok(Vec::new()),
            Some(Value::String(s)) => Ok(split_list(s)),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| item.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| self.error(field, Problem::WrongType("an array of strings"))),
            Some(_) => Err(self.error(field, Problem::WrongType("a list of strings"))),
        }
    }
}

/// The items of a comma-separated list, without empty items and Slurm's `(null)`.
pub(crate) fn split_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty() && *item != "(null)")
        .map(str::to_string)
        .collect()
}
