//! HELR training for Python (`basalt.helr`): the task (shape, data, schedule, cleartext twin)
//! and the pieces of one iteration a server runs — the whole step, or FAB-2's split of it
//! (partial gradients on the workers, their sum and the update on one node) — bound from
//! `basalt_workloads::logreg`, so the single-process and the distributed training run the same
//! Rust code. Only glue lives here.

use basalt_ckks::{Ciphertext, Evaluator};
use basalt_workloads::helr_digits::{self, Task};
use basalt_workloads::logreg::{self, Iteration, LogReg};
use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;

use crate::ckks::{PyCiphertext, PyServer};
use crate::err;

/// A HELR training task: the packing, the mini-batch in data ciphertexts and the iteration
/// count (`quick`: the toy ring's, `fab`: FAB's shape at 2^15 slots).
#[pyclass(module = "basalt._basalt", name = "HelrTask", frozen)]
#[derive(Clone)]
pub struct PyHelrTask {
    task: Task,
    kind: String,
}

fn cts(list: &[PyRef<'_, PyCiphertext>]) -> Vec<Ciphertext> {
    list.iter().map(|c| c.inner().clone()).collect()
}

/// The bootstrap as [`LogReg`] calls it: the server's own circuit and keys.
type Refresh<'a> = dyn FnMut(&Ciphertext) -> basalt_circuits::Result<Ciphertext> + 'a;

/// What the whole step and the gathering node's update share: the weights `vw` and the
/// iteration from Python, `f` run without the GIL on the task's [`LogReg`], the server's
/// evaluator and its bootstrap (an error if the server cannot bootstrap and `it` refreshes),
/// the next `(v, w)` back to Python.
fn next_weights(
    py: Python<'_>,
    server: &PyServer,
    task: &PyHelrTask,
    it: (usize, bool),
    vw: (PyRef<'_, PyCiphertext>, PyRef<'_, PyCiphertext>),
    f: impl FnOnce(
        &LogReg,
        &Evaluator,
        Iteration,
        (&Ciphertext, &Ciphertext),
        &mut Refresh<'_>,
    ) -> basalt_circuits::Result<(Ciphertext, Ciphertext)>
    + Send,
) -> PyResult<(PyCiphertext, PyCiphertext)> {
    let (v, w) = (vw.0.inner().clone(), vw.1.inner().clone());
    let it = Iteration { level: it.0, refresh: it.1 };
    let lr = task.task.lr;
    py.allow_threads(|| {
        let mut boot = |ct: &Ciphertext| -> basalt_circuits::Result<Ciphertext> {
            let b = server.boot.as_ref().ok_or_else(|| {
                basalt_circuits::CircuitError::Invalid(
                    "this server cannot bootstrap: it needs bootstrapping parameters and keys"
                        .into(),
                )
            })?;
            b.bt.bootstrap(&server.eval, b.encaps.as_ref(), ct)
        };
        let (v, w) =
            f(&lr, &server.eval, it, (&v, &w), &mut boot as &mut Refresh<'_>).map_err(err)?;
        Ok((v.into(), w.into()))
    })
}

#[pymethods]
impl PyHelrTask {
    /// `kind` is `"quick"` (4×4 images, 512-slot ciphertexts, 10 iterations) or `"fab"` (14×14
    /// images, 2^15 slots, 30 iterations); `cts` overrides the data ciphertexts per mini-batch,
    /// `iterations` the iteration count.
    #[new]
    #[pyo3(signature = (kind="quick", cts=None, iterations=None))]
    fn new(kind: &str, cts: Option<usize>, iterations: Option<usize>) -> PyResult<Self> {
        let mut task = match kind {
            "quick" => Task::quick(),
            "fab" => Task::fab(),
            other => return Err(err(format!("unknown HELR task {other:?} (quick, fab)"))),
        };
        if let Some(c) = cts {
            if c == 0 {
                return Err(err("cts must be at least 1"));
            }
            // γ·(samples per mini-batch) stays the task's: the step follows the mean gradient.
            task.lr.helr.gamma *= task.lr.cts as f64 / c as f64;
            task.lr.cts = c;
        }
        if let Some(i) = iterations {
            if i == 0 {
                return Err(err("iterations must be at least 1"));
            }
            task.iterations = i;
        }
        Ok(PyHelrTask { task, kind: kind.to_string() })
    }
    #[getter]
    fn kind(&self) -> String {
        self.kind.clone()
    }
    #[getter]
    fn cts(&self) -> usize {
        self.task.lr.cts
    }
    #[getter]
    fn iterations(&self) -> usize {
        self.task.iterations
    }
    /// Slots of every ciphertext (2^(log_features + log_samples)).
    #[getter]
    fn slots(&self) -> usize {
        self.task.lr.slots()
    }
    /// Slots of one sample (features, bias and padding).
    #[getter]
    fn block(&self) -> usize {
        1 << self.task.lr.helr.log_features
    }
    /// Rotation steps an iteration needs (the conjugation key is needed too).
    #[getter]
    fn rotations(&self) -> Vec<i64> {
        self.task.lr.rotations()
    }
    /// The training mini-batches (`batches[b][c]`: the slots of data ciphertext `c`) and the
    /// test split as (features, label ±1) pairs: digits 3-vs-8, resized and centred.
    #[allow(clippy::type_complexity)]
    fn data(&self) -> PyResult<(Vec<Vec<Vec<f64>>>, Vec<(Vec<f64>, f64)>)> {
        let digits = basalt_workloads::digits::load().map_err(err)?;
        let (train, test) = self.task.data(&digits).map_err(err)?;
        Ok((self.task.batches(&train), test))
    }
    /// The iterations from weights at the bootstrap's output level `top`: `(level, refresh)`
    /// each, a bootstrap after any iteration that leaves too few levels for the next.
    fn schedule(&self, server: &PyServer, top: usize) -> PyResult<Vec<(usize, bool)>> {
        let s = self.task.lr.schedule(&server.params, top, top, self.task.iterations);
        Ok(s.map_err(err)?.into_iter().map(|it| (it.level, it.refresh)).collect())
    }
    /// The cleartext twin over the same mini-batches: the plaintext-trained model (one block).
    fn train_plain<'py>(
        &self,
        py: Python<'py>,
        batches: Vec<Vec<Vec<f64>>>,
    ) -> Bound<'py, PyArray1<f64>> {
        self.task.train_plain(&batches).into_pyarray(py)
    }
    /// Accuracy of the model `w` on `test` (`w·x > 0` predicts +1).
    fn accuracy(&self, w: Vec<f64>, test: Vec<(Vec<f64>, f64)>) -> f64 {
        helr_digits::predict(&w, &test).0
    }
    fn __repr__(&self) -> String {
        format!(
            "HelrTask({:?}, cts={}, iterations={}, slots={})",
            self.kind,
            self.task.lr.cts,
            self.task.iterations,
            self.task.lr.slots()
        )
    }
}

/// The contiguous shares `(start, end)` of `n` data ciphertexts over `k` workers, in order.
#[pyfunction]
fn helr_shares(n: usize, k: usize) -> PyResult<Vec<(usize, usize)>> {
    Ok(logreg::shares(n, k).map_err(err)?.into_iter().map(|r| (r.start, r.end)).collect())
}

/// One iteration on `server` (the single-process training): the batch cut into `shares`,
/// partial gradients summed in share order, the NAG update, the bootstrap if `refresh`.
/// Returns the next `(v, w)`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn helr_step(
    py: Python<'_>,
    server: &PyServer,
    task: &PyHelrTask,
    it: (usize, bool),
    batch: Vec<PyRef<'_, PyCiphertext>>,
    shares: usize,
    vw: (PyRef<'_, PyCiphertext>, PyRef<'_, PyCiphertext>),
    scales: (f64, f64),
) -> PyResult<(PyCiphertext, PyCiphertext)> {
    let batch = cts(&batch);
    next_weights(py, server, task, it, vw, |lr, eval, it, vw, boot| {
        lr.step_in_shares(eval, it, &batch, shares, vw, scales, boot)
    })
}

/// A worker's part of an iteration: the partial gradient of its `share` at the weights `v`.
#[pyfunction]
fn helr_partial_gradient(
    py: Python<'_>,
    server: &PyServer,
    task: &PyHelrTask,
    share: Vec<PyRef<'_, PyCiphertext>>,
    v: PyRef<'_, PyCiphertext>,
) -> PyResult<PyCiphertext> {
    let share = cts(&share);
    let v = v.inner().clone();
    let lr = task.task.lr;
    py.allow_threads(|| Ok(lr.partial_gradient(&server.eval, &share, &v).map_err(err)?.into()))
}

/// The gathering node's part: the `partials` summed in order, the NAG update, the bootstrap
/// if `refresh`. Returns the next `(v, w)`.
#[pyfunction]
fn helr_update(
    py: Python<'_>,
    server: &PyServer,
    task: &PyHelrTask,
    it: (usize, bool),
    partials: Vec<PyRef<'_, PyCiphertext>>,
    vw: (PyRef<'_, PyCiphertext>, PyRef<'_, PyCiphertext>),
    scales: (f64, f64),
) -> PyResult<(PyCiphertext, PyCiphertext)> {
    let partials = cts(&partials);
    next_weights(py, server, task, it, vw, |lr, eval, it, vw, boot| {
        lr.update(eval, it, &partials, vw, scales, boot)
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyHelrTask>()?;
    m.add_function(wrap_pyfunction!(helr_shares, m)?)?;
    m.add_function(wrap_pyfunction!(helr_step, m)?)?;
    m.add_function(wrap_pyfunction!(helr_partial_gradient, m)?)?;
    m.add_function(wrap_pyfunction!(helr_update, m)?)?;
    Ok(())
}
