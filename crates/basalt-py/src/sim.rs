//! Trace recording and the accelerator models for Python: a program written against
//! `basalt.ckks` / `basalt.bootstrap` runs inside `basalt.sim.record()`, and the kernel stream
//! it emitted is timed on a machine file (data/machines). Only glue: the recorder is
//! basalt-trace's, the models are basalt-sim's.

use std::collections::BTreeMap;
use std::path::Path;

use basalt_sim::Machine;
use basalt_trace::Trace;
use pyo3::prelude::*;

use crate::err;

/// A recorded kernel stream (NTT, BConv, element-wise, automorphism, key and plaintext loads,
/// with their sizes), in program order.
#[pyclass(module = "basalt._basalt", name = "Trace", frozen)]
pub struct PyTrace {
    trace: Trace,
}

#[pymethods]
impl PyTrace {
    /// Work units per kernel kind (limb-NTTs, BConv MACs, element-wise limb ops, words loaded…).
    fn counts(&self) -> BTreeMap<String, u64> {
        self.trace.counts().into_iter().map(|(k, v)| (format!("{k:?}"), v)).collect()
    }

    /// Number of kernels.
    fn __len__(&self) -> usize {
        self.trace.kernels().count()
    }

    /// The trace as JSON, the format `basalt sim run --trace` reads.
    fn to_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.trace).map_err(err)
    }

    /// Parse a trace written by `to_json` or `basalt trace`; anything else raises `BasaltError`.
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<PyTrace> {
        let trace = serde_json::from_str(text).map_err(|e| err(format!("not a trace: {e}")))?;
        Ok(PyTrace { trace })
    }

    fn __repr__(&self) -> String {
        format!("Trace({} kernels)", self.trace.kernels().count())
    }
}

/// Open a recorder on this thread (Python's `record()` context manager pairs it with
/// `trace_end`).
#[pyfunction]
fn trace_begin() {
    basalt_trace::begin();
}

/// Close the innermost recorder and return its trace.
#[pyfunction]
fn trace_end() -> PyResult<PyTrace> {
    basalt_trace::end()
        .map(|trace| PyTrace { trace })
        .ok_or_else(|| err("no recording is open (trace_end without trace_begin)"))
}

/// Load a machine (a file path, or the name of a built-in machine) with `key=value`
/// overrides, validated (unknown fields, negative bandwidths, switches that only a recording
/// reads… raise `BasaltError`).
fn machine(path: &str, overrides: &[String]) -> PyResult<Machine> {
    let sets: Vec<&str> = overrides.iter().map(String::as_str).collect();
    basalt_sim::check_timing_overrides(&sets).map_err(err)?;
    let path = basalt_sim::source::resolve_machine(path).map_err(err)?;
    Machine::load_with(path, &sets).map_err(err)
}

/// The names of the machines built into the package (`craterlake`, `strix`, …).
#[pyfunction]
fn sim_builtin_machines() -> Vec<&'static str> {
    basalt_sim::source::builtin_machines()
}

/// Time `trace` on the machine file at `path`; the report (latency, per-unit utilisation,
/// traffic by kind, stalls, energy) as JSON. With `plot_dir`, also write the run's SVG figures
/// there and return their paths. `bootstrap` is timed once per bootstrap marker of `trace`
/// (a trace with markers is refused without it).
#[pyfunction]
#[pyo3(signature = (trace, path, overrides=vec![], plot_dir=None, bootstrap=None))]
fn sim_run(
    py: Python<'_>,
    trace: &PyTrace,
    path: &str,
    overrides: Vec<String>,
    plot_dir: Option<String>,
    bootstrap: Option<PyRef<'_, PyTrace>>,
) -> PyResult<(String, Vec<String>)> {
    let m = machine(path, &overrides)?;
    let boot = bootstrap.map(|b| b.trace.clone());
    let r = py
        .allow_threads(|| match &boot {
            Some(b) => basalt_sim::refresh::simulate_with_bootstrap(&m, &trace.trace, b),
            None => basalt_sim::simulate(&m, &trace.trace),
        })
        .map_err(err)?;
    let mut written = Vec::new();
    if let Some(dir) = plot_dir {
        let dir = Path::new(&dir);
        std::fs::create_dir_all(dir).map_err(|e| err(format!("{}: {e}", dir.display())))?;
        for (name, svg) in basalt_sim::plot::run_figures(&m, &r) {
            let p = dir.join(name);
            std::fs::write(&p, svg).map_err(|e| err(format!("{}: {e}", p.display())))?;
            written.push(p.display().to_string());
        }
    }
    Ok((serde_json::to_string(&r).map_err(err)?, written))
}

/// The latencies of `basalt.sim.compare` as an SVG bar chart (log scale), as
/// `basalt sim compare --plot` draws them: one bar per (machine, seconds).
#[pyfunction]
fn sim_compare_svg(title: &str, rows: Vec<(String, f64)>) -> String {
    basalt_sim::plot::compare_svg(title, &rows)
}

/// Load and validate a machine file with overrides, raising `BasaltError` on a bad one (so
/// `basalt.sim.compare` refuses a typo before timing anything).
#[pyfunction]
#[pyo3(signature = (path, overrides=vec![]))]
fn sim_check_machine(path: &str, overrides: Vec<String>) -> PyResult<()> {
    machine(path, &overrides).map(|_| ())
}

/// The reproduction report (`basalt sim reproduce`) for one paper or all, with the libraries'
/// own traces for the whole-program rows, as JSON: every row (ours, theirs, ratio, tolerance,
/// kind, how) and the readings where a paper contradicts itself. `data` is a data folder, or
/// `None` for the paper data and machines built into the package.
#[pyfunction]
#[pyo3(signature = (data=None, paper=None))]
fn sim_reproduce(py: Python<'_>, data: Option<String>, paper: Option<String>) -> PyResult<String> {
    let dir = data.map_or_else(|| basalt_sim::source::builtin_dir().to_path_buf(), Into::into);
    let r = py
        .allow_threads(|| basalt_repro::library::reproduce(paper.as_deref(), &dir))
        .map_err(err)?;
    serde_json::to_string(&r).map_err(err)
}

/// A design-space grid (`basalt sim grid`): `trace` on every point of `axes` (field, values)
/// over the machine file at `path`. Returns (points as JSON, CSV, SVG scatter).
#[pyfunction]
fn sim_grid(
    py: Python<'_>,
    trace: &PyTrace,
    path: &str,
    axes: Vec<(String, Vec<String>)>,
) -> PyResult<(String, String, String)> {
    let axes: Vec<basalt_sim::grid::GridAxis> = axes
        .into_iter()
        .map(|(field, values)| basalt_sim::grid::GridAxis { field, values })
        .collect();
    let name = Path::new(path).file_stem().map_or_else(String::new, |s| s.to_string_lossy().into());
    // A built-in machine's name or a file of the user's.
    let file = basalt_sim::source::resolve_machine(path).map_err(err)?;
    let pts =
        py.allow_threads(|| basalt_sim::grid::grid(&file, &trace.trace, &axes)).map_err(err)?;
    Ok((
        serde_json::to_string(&pts).map_err(err)?,
        basalt_sim::grid::csv(&pts),
        basalt_sim::plot::grid_svg(&name, &pts),
    ))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTrace>()?;
    m.add_function(wrap_pyfunction!(trace_begin, m)?)?;
    m.add_function(wrap_pyfunction!(trace_end, m)?)?;
    m.add_function(wrap_pyfunction!(sim_run, m)?)?;
    m.add_function(wrap_pyfunction!(sim_check_machine, m)?)?;
    m.add_function(wrap_pyfunction!(sim_compare_svg, m)?)?;
    m.add_function(wrap_pyfunction!(sim_reproduce, m)?)?;
    m.add_function(wrap_pyfunction!(sim_builtin_machines, m)?)?;
    m.add_function(wrap_pyfunction!(sim_grid, m)?)?;
    Ok(())
}
