//! Rankers written in Python: an object with a `priority` method, given in a replay's policies
//! beside the registry's names, orders the waiting users through the same engine, scheduler
//! and placement as they do (the core's [`RankerFactory`] seam).
//!
//! Its priorities are keys that change only when a user does: the engine asks again when a
//! user's holdings or head job change, never because time passed (as for DRF). Lower is served
//! first; equal priorities go to the user who appears first in the trace, the registry's rule
//! ([`KeyedRanker`]: ties by client), so that a DRF written in Python is the registry's DRF to
//! the byte. An exception, or a value that is not a number, stops the replay and is raised
//! from it once the runs end.

use crate::Failure;
use fairshare_core::policy::PolicySpec;
use fairshare_core::priority::PriorityKey;
use fairshare_core::rank::{Accounts, Head, KeyedRanker, Ranker, RankerFactory, Share};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyString;
use std::sync::{Arc, Mutex, OnceLock};

/// A Python object's `priority` method as a ranker factory.
pub struct PythonRanker {
    object: PyObject,
    name: String,
    users: OnceLock<Vec<String>>,
    failure: Arc<Mutex<Option<PyErr>>>,
}

impl PythonRanker {
    /// The ranker `object` is, named by its `name` attribute or else its class's name; refused
    /// without a callable `priority`.
    fn new(object: &Bound<'_, PyAny>, place: usize) -> Result<PythonRanker, Failure> {
        let priority = object.getattr("priority").ok().filter(|p| p.is_callable());
        if priority.is_none() {
            return Err(format!(
                "policies[{place}]: expected a policy name or an object with a \
                 priority(user, holdings, waiting_since, size) method, found {}",
                describe(object)
            )
            .into());
        }
        let name = match object.getattr("name") {
            Ok(name) => name
                .extract::<String>()
                .map_err(|_| format!("policies[{place}]: its name attribute must be a string"))?,
            Err(_) => object
                .get_type()
                .name()
                .map_or_else(|_| "python-ranker".to_owned(), |n| n.to_string()),
        };
        Ok(PythonRanker {
            object: object.clone().unbind(),
            name,
            users: OnceLock::new(),
            failure: Arc::new(Mutex::new(None)),
        })
    }

    /// Names the users, by index, as the replay's workload lists them.
    pub fn know_users(&self, users: &[String]) {
        // A replay sets them once, before its runs; a second call would name the same users.
        let _ = self.users.set(users.to_vec());
    }

    /// The first exception its `priority` raised (or its refusal of what it returned), if any.
    pub fn failure(&self) -> Option<PyErr> {
        self.failure.lock().map_or(None, |mut f| f.take())
    }
}

impl RankerFactory for PythonRanker {
    fn ranker(&self, _: usize, shares: &[Share], _: Option<&Accounts>) -> Box<dyn Ranker> {
        let users = self.users.get().cloned().unwrap_or_default();
        let (object, names) = Python::with_gil(|py| {
            let names: Vec<Py<PyString>> = users
                .iter()
                .map(|u| PyString::new(py, u).unbind())
                .collect();
            (self.object.clone_ref(py), names)
        });
        let failure = Arc::clone(&self.failure);
        let name = self.name.clone();
        let key = move |client: u32, holdings: &[f64], head: &Head| -> PriorityKey {
            let failed = failure.lock().map_or(true, |f| f.is_some());
            let priority = match failed {
                true => f64::INFINITY,
                false => Python::with_gil(|py| {
                    let user = names.get(client as usize).map(|n| n.clone_ref(py));
                    ask(py, &object, &name, user, holdings, head)
                })
                .unwrap_or_else(|error| {
                    if let Ok(mut slot) = failure.lock() {
                        slot.get_or_insert(error);
                    }
                    f64::INFINITY
                }),
            };
            PriorityKey(priority)
        };
        Box::new(KeyedRanker::with_key(
            shares.len(),
            Arc::new(key),
            |k: &PriorityKey| k.0,
        ))
    }
}

/// `work` run on this thread with a Python thread state kept for its whole length, so that
/// each call of a Python ranker takes the GIL only, where on a thread Python does not know
/// it would also create and discard a thread state (ten times the cost of the call).
pub fn on_python_thread<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    Python::with_gil(|py| py.allow_threads(work))
}

/// One call of `object.priority(user, holdings, waiting_since, size)`, refused unless a number.
fn ask(
    py: Python<'_>,
    object: &PyObject,
    name: &str,
    user: Option<Py<PyString>>,
    holdings: &[f64],
    head: &Head,
) -> PyResult<f64> {
    let args = (
        user,
        holdings.to_vec(),
        head.arrival.as_secs_f64(),
        head.size,
    );
    let value = object.call_method1(py, "priority", args)?;
    let number = value.extract::<f64>(py).ok().filter(|p| !p.is_nan());
    number.ok_or_else(|| {
        PyValueError::new_err(format!(
            "{name}.priority returned {}: expected a number (lower is served first)",
            describe(value.bind(py))
        ))
    })
}

/// An object as an error message shows it: its repr, cut short.
fn describe(object: &Bound<'_, PyAny>) -> String {
    let text = object
        .repr()
        .map_or_else(|_| "?".to_owned(), |r| r.to_string());
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// The policies of a replay: each a registry name or a Python ranker; the rankers are also
/// returned, to be told the users and asked for their failures.
pub fn policies(
    given: &[Bound<'_, PyAny>],
) -> Result<(Vec<PolicySpec>, Vec<Arc<PythonRanker>>), Failure> {
    let mut specs = Vec::with_capacity(given.len());
    let mut rankers = Vec::new();
    for (place, policy) in given.iter().enumerate() {
        if let Ok(text) = policy.extract::<String>() {
            specs.push(text.parse().map_err(|e| format!("{e}"))?);
            continue;
        }
        let ranker = Arc::new(PythonRanker::new(policy, place)?);
        let spec = PolicySpec::plugged(&ranker.name, ranker.clone() as Arc<dyn RankerFactory>)
            .map_err(|e| format!("policies[{place}]: {e}"))?;
        specs.push(spec);
        rankers.push(ranker);
    }
    Ok((specs, rankers))
}
