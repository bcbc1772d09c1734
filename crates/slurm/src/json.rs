//! Taking fields out of Slurm's JSON records, with errors that name the record and the field.
//!
//! The readers go through `serde_json::Value` rather than derived structs so that an error can
//! say which job and which field, that unknown fields cost nothing, and that the few shapes a
//! field takes across Slurm versions (a plain number in 22.05, `{"set", "number"}` from 23.02;
//! a state string in 22.05, an array of them later) are accepted in one place.

use fairshare_trace::slurm_output::{Problem, ReadError};
use serde_json::{Map, Value};

/// The records of the array `key` of Slurm's JSON `text`, after checking its `errors`.
pub(crate) fn records(text: &str, key: &'static str) -> Result<Vec<Value>, ReadError> {
    let top: Value = serde_json::from_str(text).map_err(|e| ReadError::Json(e.to_string()))?;
    let Value::Object(mut top) = top else {
        return Err(ReadError::Json("the top is not an object".into()));
    };
    if let Some(Value::Array(errors)) = top.get("errors") {
        if !errors.is_empty() {
            return Err(ReadError::Slurm(Value::Array(errors.clone()).to_string()));
        }
    }
    match top.remove(key) {
        Some(Value::Array(records)) => Ok(records),
        Some(_) => Err(ReadError::field_of(
            "top",
            key,
            Problem::WrongType("an array"),
        )),
        None => Err(ReadError::field_of("top", key, Problem::Missing)),
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
