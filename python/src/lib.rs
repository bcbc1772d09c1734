//! `fairshare._native`: the library crates as a Python module. Every function takes and gives
//! what the CLI's `--json` takes and gives, as JSON text, so that a result from Python is the
//! CLI's to the last digit; the `fairshare` package around it turns that text into Python
//! objects and its errors into `fairshare.InputError`.

use fairshare_core::alloc::tasks::Blocking;
use fairshare_core::choice::Choice;
use fairshare_core::instance::Instance;
use fairshare_core::policy::registry::POLICIES;
use fairshare_core::policy::Engine;
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use serde::Serialize;

create_exception!(
    _native,
    InputError,
    PyValueError,
    "An input fairshare cannot use: the message says where and what was expected."
);

/// One policy of the registry, as `fairshare.policies()` lists it.
#[derive(Serialize)]
struct PolicyInfo {
    name: &'static str,
    aliases: &'static [&'static str],
    about: &'static str,
    params: Vec<ParamInfo>,
    engines: Vec<&'static str>,
}

/// One parameter of a policy.
#[derive(Serialize)]
struct ParamInfo {
    key: &'static str,
    value: &'static str,
    about: &'static str,
}

/// Every policy of the registry, as JSON: name, aliases, about, parameters, and the commands
/// that run it.
#[pyfunction]
fn policies_json() -> PyResult<String> {
    let list: Vec<PolicyInfo> = POLICIES
        .iter()
        .map(|e| PolicyInfo {
            name: e.name,
            aliases: e.aliases,
            about: e.about,
            params: (e.params.iter())
                .map(|p| ParamInfo {
                    key: p.key,
                    value: p.value,
                    about: p.about,
                })
                .collect(),
            engines: (e.engines.iter()).map(|e| engine_name(*e)).collect(),
        })
        .collect();
    serde_json::to_string(&list).map_err(|e| InputError::new_err(e.to_string()))
}

/// The name of `engine` as the Python package spells it: the command that runs it.
fn engine_name(engine: Engine) -> &'static str {
    match engine {
        Engine::Allocate => "allocate",
        Engine::Replay => "replay",
        Engine::Simulate => "simulate",
    }
}

/// The allocation of the instance `text` (the JSON of an instance file) under `rule`, as the
/// JSON `fairshare allocate --json` prints.
#[pyfunction]
#[pyo3(signature = (text, rule = "head-of-line"))]
fn allocate_json(py: Python<'_>, text: &str, rule: &str) -> PyResult<String> {
    let rule = Blocking::named(rule).ok_or_else(|| {
        InputError::new_err(format!("rule {rule:?}: expected {}", Blocking::names()))
    })?;
    py.allow_threads(|| {
        let instance = Instance::from_json(text).map_err(|e| e.to_string())?;
        let outcome = instance.solve(rule).map_err(|e| e.to_string())?;
        serde_json::to_string_pretty(&outcome).map_err(|e| e.to_string())
    })
    .map_err(InputError::new_err)
}

/// The module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("InputError", m.py().get_type::<InputError>())?;
    m.add_function(wrap_pyfunction!(policies_json, m)?)?;
    m.add_function(wrap_pyfunction!(allocate_json, m)?)?;
    Ok(())
}
