//! The evaluation engine: parameters, evaluation keys and (optionally) the bootstrapping circuit,
//! no secret. It is the `Server` of the Python API, and the client context holds one on its own
//! evaluation keys, so every homomorphic operation is bound once and the two roles cannot
//! drift apart.

use std::sync::Arc;

use basalt_circuits::bootstrap::{BootstrapConfig, Bootstrapper, Encapsulation};
use basalt_ckks::progress::Progress;
use basalt_ckks::{Ciphertext, Encoder, Evaluator, Parameters};
use num_complex::Complex64;
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::ciphertext::PyCiphertext;
use super::keys::{PyEvalKeys, PyParams};
use crate::err;
use crate::progress::PyProgress;

/// Bootstrapping as a capability of an engine: the circuit (rebuilt from the parameters and
/// its configuration, so a server needs no secret for it; shared by the engines of equal
/// parameters, see [`super::circuit`]) and the encapsulation keys.
#[derive(Clone)]
pub(crate) struct Boot {
    pub(crate) cfg: BootstrapConfig,
    pub(crate) bt: Arc<Bootstrapper>,
    pub(crate) encaps: Option<Encapsulation>,
}

/// The server role: parameters and evaluation keys only. Every homomorphic operation
/// (bootstrapping included, when the keys carry it); no secret key, no decryption.
#[pyclass(module = "basalt._basalt", name = "CkksServer", frozen)]
pub struct PyServer {
    pub(crate) params: Parameters,
    pub(crate) encoder: Encoder,
    pub(crate) eval: Evaluator,
    pub(crate) boot: Option<Boot>,
    /// The parameters' bootstrapping configuration, whether or not the keys serve it.
    pub(crate) config: Option<BootstrapConfig>,
    /// Why it cannot bootstrap, when `boot` is none and the reason is known.
    pub(crate) cannot_bootstrap: Option<&'static str>,
}

/// Why a server cannot bootstrap: its parameters have no circuit.
const NOT_BOOTSTRAPPING_PARAMETERS: &str = "its parameters have no bootstrapping circuit (build the client with bootstrapping=True \
     and the server from the client's parameters)";
/// Why a server cannot bootstrap: the circuit switches to an ephemeral secret, and the
/// evaluation keys lack the switching keys.
const NO_ENCAPSULATION_KEYS: &str = "its evaluation keys hold no bootstrapping keys (the circuit's encapsulation keys: \
     EvaluationKeys.bootstrapping is None; make them with evaluation_keys(bootstrapping=True))";

impl PyServer {
    /// An engine over `params` with `eval`'s keys and the bootstrapping capability `boot`
    /// (the parameters' configuration is `boot`'s).
    pub(crate) fn assemble(params: Parameters, eval: Evaluator, boot: Option<Boot>) -> PyServer {
        let config = boot.as_ref().map(|b| b.cfg);
        PyServer {
            encoder: Encoder::new(&params),
            params,
            eval,
            boot,
            config,
            cannot_bootstrap: None,
        }
    }

    fn boot(&self) -> PyResult<&Boot> {
        self.boot.as_ref().ok_or_else(|| match self.cannot_bootstrap {
            None => err("this context or server cannot bootstrap: it needs bootstrapping \
                       parameters and keys (build the context with bootstrapping=True)"),
            Some(why) => err(format!("this server cannot bootstrap: {why}")),
        })
    }
}

/// Items per step of a batch: progress is reported, and Ctrl-C checked, between steps; each
/// step still gives every core several items.
fn batch_step() -> usize {
    4 * std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `f` over `items` in steps, GIL released in each, `progress(stage, done, total)` between.
fn stepped<I: Sync, O: Send>(
    py: Python<'_>,
    stage: &str,
    items: &[I],
    progress: Option<Py<PyAny>>,
    f: impl Fn(&[I]) -> basalt_ckks::Result<Vec<O>> + Sync,
) -> PyResult<Vec<O>> {
    let progress = PyProgress::new(progress);
    progress.stage(stage, items.len() as u64);
    let mut out = Vec::with_capacity(items.len());
    for chunk in items.chunks(batch_step()) {
        out.extend(py.allow_threads(|| f(chunk)).map_err(err)?);
        progress
            .step(out.len() as u64)
            .map_err(|c| progress.error(basalt_ckks::CkksError::from(c)))?;
    }
    Ok(out)
}

fn wrap(r: basalt_ckks::Result<Ciphertext>) -> PyResult<PyCiphertext> {
    r.map(PyCiphertext::from).map_err(err)
}

#[pymethods]
impl PyServer {
    #[new]
    fn new(py: Python<'_>, params: &PyParams, keys: &PyEvalKeys) -> PyResult<PyServer> {
        if keys.params.id() != params.params.id() {
            return Err(err("the evaluation keys belong to another parameter set"));
        }
        py.allow_threads(|| {
            let eval = Evaluator::new(&params.params, keys.keys.clone()).map_err(err)?;
            let (boot, why_not) = match params.boot {
                None => (None, Some(NOT_BOOTSTRAPPING_PARAMETERS)),
                // A circuit with an ephemeral secret bootstraps only with its encapsulation
                // keys: without them no circuit is encoded.
                Some(cfg) if cfg.ephemeral_h.is_some() && keys.encaps.is_none() => {
                    (None, Some(NO_ENCAPSULATION_KEYS))
                }
                Some(cfg) => {
                    let bt = super::circuit::shared(&params.params, cfg)?;
                    (Some(Boot { cfg, bt, encaps: keys.encaps.clone() }), None)
                }
            };
            let mut server = PyServer::assemble(params.params.clone(), eval, boot);
            server.config = params.boot;
            server.cannot_bootstrap = why_not;
            Ok(server)
        })
    }
    /// The key set of its evaluation keys (32 hex digits).
    #[getter]
    fn key_id(&self) -> String {
        self.eval.key_id().to_hex()
    }
    /// Rotation steps its keys cover.
    #[getter]
    fn rotations(&self) -> Vec<i64> {
        self.eval.keys().rotations(&self.params)
    }
    #[getter]
    fn slots(&self) -> usize {
        self.params.max_slots()
    }
    #[getter]
    fn max_level(&self) -> usize {
        self.params.max_level()
    }
    #[getter]
    fn default_scale(&self) -> f64 {
        self.params.default_scale()
    }
    /// The parameters (and bootstrapping configuration) it computes under, without keys: what
    /// a server is built from. Their name is the engine's.
    fn parameters(&self) -> PyParams {
        PyParams { params: self.params.clone(), boot: self.config }
    }
    /// Whether this engine bootstraps: its parameters have a circuit *and* its keys serve it
    /// (`CkksParameters.can_bootstrap` says only the first).
    #[getter]
    fn can_bootstrap(&self) -> bool {
        self.boot.is_some()
    }
    #[getter]
    fn bootstrap_output_level(&self) -> Option<usize> {
        self.boot.as_ref().map(|b| b.bt.budget().output_level)
    }
    /// The largest scale a bootstrap input may have (the default scale if smaller).
    #[getter]
    fn bootstrap_input_scale(&self) -> Option<f64> {
        self.boot.as_ref().map(|b| self.params.default_scale().min(b.bt.max_input_scale()))
    }
    /// Rotation steps the bootstrapping circuit needs keys for (empty if it does not bootstrap).
    #[getter]
    fn bootstrap_rotations(&self) -> Vec<i64> {
        self.boot.as_ref().map(|b| b.bt.rotations()).unwrap_or_default()
    }

    /// Load a ciphertext, validating it against the parameters (id, limb counts, every
    /// residue below its modulus) and the key set of the evaluation keys: bad bytes or a
    /// ciphertext of another key set raise `BasaltError`.
    fn ciphertext_from_bytes(&self, data: &[u8]) -> PyResult<PyCiphertext> {
        wrap(Ciphertext::from_bytes_for(&self.params, self.eval.key_id(), data))
    }
    /// Serialize a ciphertext (parameter-set id, key id, shape and residues).
    fn ciphertext_to_bytes<'py>(
        &self,
        py: Python<'py>,
        ct: &PyCiphertext,
    ) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &ct.inner().to_bytes().map_err(err)?))
    }

    /// `ct + v` / `ct · v` for a plaintext vector `v` (`op` is `"add"` or `"mul"`).
    fn plain_op(
        &self,
        ct: &PyCiphertext,
        v: PyReadonlyArray1<'_, Complex64>,
        op: &str,
    ) -> PyResult<PyCiphertext> {
        let v = v.as_slice().map_err(err)?;
        Ok(plain_op(&self.encoder, &self.eval, ct.inner(), v, op)?.into())
    }
    /// `f` on every slot through its Chebyshev interpolant on `[a, b]` of `degree`.
    fn evaluate_chebyshev(
        &self,
        py: Python<'_>,
        ct: &PyCiphertext,
        f: &Bound<'_, PyAny>,
        a: f64,
        b: f64,
        degree: usize,
    ) -> PyResult<PyCiphertext> {
        Ok(chebyshev(py, &self.eval, ct.inner(), f, (a, b, degree))?.into())
    }
    fn add(&self, a: &PyCiphertext, b: &PyCiphertext) -> PyResult<PyCiphertext> {
        wrap(self.eval.add(a.inner(), b.inner()))
    }
    fn sub(&self, a: &PyCiphertext, b: &PyCiphertext) -> PyResult<PyCiphertext> {
        wrap(self.eval.sub(a.inner(), b.inner()))
    }
    fn neg(&self, a: &PyCiphertext) -> PyResult<PyCiphertext> {
        wrap(self.eval.neg(a.inner()))
    }
    /// Ciphertext product, relinearised (not rescaled: call `rescale`).
    fn mul(&self, py: Python<'_>, a: &PyCiphertext, b: &PyCiphertext) -> PyResult<PyCiphertext> {
        py.allow_threads(|| wrap(self.eval.mul_relin(a.inner(), b.inner())))
    }
    /// Multiply by a real constant (encoded at the ciphertext's top prime's scale; rescale after).
    fn mul_const(&self, a: &PyCiphertext, c: f64) -> PyResult<PyCiphertext> {
        Ok(mul_const(&self.eval, a.inner(), c)?.into())
    }
    /// Multiply by a complex constant (rescale after).
    fn mul_const_complex(&self, a: &PyCiphertext, c: Complex64) -> PyResult<PyCiphertext> {
        if c.im == 0.0 {
            return self.mul_const(a, c.re);
        }
        if a.inner().level() == 0 {
            return Err(err("a complex constant product needs a level to rescale; at level 0 \
                 multiply before the last rescale (or bootstrap first)"));
        }
        wrap(self.eval.mul_const_complex(a.inner(), c))
    }
    fn add_const(&self, a: &PyCiphertext, c: Complex64) -> PyResult<PyCiphertext> {
        wrap(self.eval.add_const(a.inner(), c))
    }
    fn rescale(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
        py.allow_threads(|| wrap(self.eval.rescale(a.inner())))
    }
    /// Drop to `level` without rescaling.
    fn drop_to_level(&self, a: &PyCiphertext, level: usize) -> PyResult<PyCiphertext> {
        let mut ct = a.inner().clone();
        ct.drop_to_level(level).map_err(err)?;
        Ok(ct.into())
    }
    /// Rotate the slots left by `k` (needs the rotation key for `k`; a multiple of the slot
    /// count is the identity and needs none).
    fn rotate(&self, py: Python<'_>, a: &PyCiphertext, k: i64) -> PyResult<PyCiphertext> {
        if k.rem_euclid(a.inner().slots() as i64) == 0 {
            return Ok(a.clone());
        }
        py.allow_threads(|| wrap(self.eval.rotate(a.inner(), k)))
    }
    /// `a` at `level` (below its own) with scale `scale`: dropped to `level + 1`, multiplied by
    /// 1 encoded at the scale the rescale to `level` turns into `scale`, rescaled. Aligns two
    /// operands whose scales differ because a rescale divides by a prime, not by the scale; the
    /// message changes by one part in that constant's scale.
    fn match_level_and_scale(
        &self,
        py: Python<'_>,
        a: &PyCiphertext,
        level: usize,
        scale: f64,
    ) -> PyResult<PyCiphertext> {
        let ct = a.inner();
        if level >= ct.level() {
            return Err(err(format!(
                "level {level} is not below the ciphertext's level {}",
                ct.level()
            )));
        }
        if !(scale.is_finite() && scale >= 1.0) {
            return Err(err(format!("scale {scale} must be a finite number of at least 1")));
        }
        let q = self.params.q()[level + 1] as f64;
        let c = scale * q / ct.scale();
        if !(1.0..2f64.powi(62)).contains(&c) {
            return Err(err(format!(
                "cannot bring scale 2^{:.1} to 2^{:.1} with one rescale",
                ct.scale().log2(),
                scale.log2()
            )));
        }
        py.allow_threads(|| {
            let mut low = ct.clone();
            low.drop_to_level(level + 1)?;
            let m = self.eval.mul_const_scaled(&low, 1.0, c)?;
            self.eval.rescale(&m)
        })
        .map(PyCiphertext::from)
        .map_err(err)
    }
    fn conjugate(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
        py.allow_threads(|| wrap(self.eval.conjugate(a.inner())))
    }

    /// Throughput mode: `a × b` (relinearised) for every pair, one pair per task on Rust's
    /// thread pool (`RAYON_NUM_THREADS` cores), with the GIL released. `progress(stage, done,
    /// total)` is called as the batch advances; Ctrl-C (or an exception it raises) stops it.
    #[pyo3(signature = (pairs, progress=None))]
    fn mul_batch(
        &self,
        py: Python<'_>,
        pairs: Vec<(PyRef<'_, PyCiphertext>, PyRef<'_, PyCiphertext>)>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Vec<PyCiphertext>> {
        let pairs: Vec<(&Ciphertext, &Ciphertext)> =
            pairs.iter().map(|(a, b)| (a.inner(), b.inner())).collect();
        let out = stepped(py, "mul_batch", &pairs, progress, |c| self.eval.mul_relin_batch(c))?;
        Ok(out.into_iter().map(PyCiphertext::from).collect())
    }
    /// Throughput mode: every ciphertext rotated left by `k`, one per task, GIL released.
    #[pyo3(signature = (cts, k, progress=None))]
    fn rotate_batch(
        &self,
        py: Python<'_>,
        cts: Vec<PyRef<'_, PyCiphertext>>,
        k: i64,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Vec<PyCiphertext>> {
        let cts: Vec<Ciphertext> = cts.iter().map(|c| c.inner().clone()).collect();
        let out = stepped(py, "rotate_batch", &cts, progress, |c| self.eval.rotate_batch(c, k))?;
        Ok(out.into_iter().map(PyCiphertext::from).collect())
    }
    /// Throughput mode: every ciphertext rescaled, one per task, GIL released.
    #[pyo3(signature = (cts, progress=None))]
    fn rescale_batch(
        &self,
        py: Python<'_>,
        cts: Vec<PyRef<'_, PyCiphertext>>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Vec<PyCiphertext>> {
        let cts: Vec<Ciphertext> = cts.iter().map(|c| c.inner().clone()).collect();
        let out = stepped(py, "rescale_batch", &cts, progress, |c| self.eval.rescale_batch(c))?;
        Ok(out.into_iter().map(PyCiphertext::from).collect())
    }

    /// Refresh `ct` (any level, the circuit's slot count) to `bootstrap_output_level`.
    /// `progress(stage, done, total)` is called after each of its five stages; Ctrl-C (or an
    /// exception it raises) stops it there.
    #[pyo3(signature = (ct, progress=None))]
    fn bootstrap(
        &self,
        py: Python<'_>,
        ct: &PyCiphertext,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<PyCiphertext> {
        let b = self.boot()?;
        let progress = PyProgress::new(progress);
        py.allow_threads(|| {
            let (out, _) =
                b.bt.bootstrap_with(&self.eval, b.encaps.as_ref(), ct.inner(), &progress)
                    .map_err(|e| progress.error(e))?;
            Ok(out.into())
        })
    }
}

/// `ct ⊕ v` for a plaintext vector `v` of the ciphertext's slots: `add` encodes it at the
/// ciphertext's level and scale; `mul` at scale `q_l` (rescale after, as for a constant).
fn plain_op(
    encoder: &Encoder,
    eval: &Evaluator,
    ct: &Ciphertext,
    v: &[Complex64],
    op: &str,
) -> PyResult<Ciphertext> {
    let params = eval.params();
    match op {
        "add" => {
            let pt = encoder.encode(v, ct.slots(), ct.level(), ct.scale()).map_err(err)?;
            eval.add_plain(ct, &pt).map_err(err)
        }
        "mul" => {
            if ct.level() == 0 {
                return Err(err("a plaintext product needs a level to rescale; at level 0 \
                     multiply before the last rescale (or bootstrap first)"));
            }
            let s = params.q()[ct.level()] as f64;
            let pt = encoder.encode(v, ct.slots(), ct.level(), s).map_err(err)?;
            eval.mul_plain(ct, &pt).map_err(err)
        }
        other => Err(err(format!("unknown plaintext operation {other:?}"))),
    }
}

/// `f` (a Python callable) on `[a, b]`, interpolated in Chebyshev form of `degree` and
/// evaluated homomorphically by the library's polynomial evaluator.
fn chebyshev(
    py: Python<'_>,
    eval: &Evaluator,
    ct: &Ciphertext,
    f: &Bound<'_, PyAny>,
    (a, b, degree): (f64, f64, usize),
) -> PyResult<Ciphertext> {
    let failure = std::cell::RefCell::new(None);
    let p = basalt_circuits::polynomial::Chebyshev::interpolate(
        |x| match f.call1((x,)).and_then(|y| y.extract::<f64>()) {
            Ok(y) if y.is_finite() => y,
            Ok(y) => {
                failure
                    .borrow_mut()
                    .get_or_insert_with(|| err(format!("f({x}) = {y} is not finite")));
                0.0
            }
            Err(e) => {
                failure.borrow_mut().get_or_insert(e);
                0.0
            }
        },
        a,
        b,
        degree,
    )
    .map_err(err)?;
    if let Some(e) = failure.into_inner() {
        return Err(e);
    }
    py.allow_threads(|| basalt_circuits::polynomial::evaluate(eval, ct, &p, None)).map_err(err)
}

/// `ct · c`. Above level 0 the constant is encoded at `q_l` (the next rescale restores the
/// scale); at level 0 there is no rescale left, so an integer is multiplied exactly and any
/// other constant is encoded at the largest power of two that keeps the product's scale under
/// `q_0` (the scale grows, the message is kept), or refused if there is no room.
fn mul_const(eval: &Evaluator, ct: &Ciphertext, c: f64) -> PyResult<Ciphertext> {
    if !c.is_finite() {
        return Err(err(format!("the constant {c} is not finite")));
    }
    if ct.level() > 0 || c.fract() == 0.0 {
        return eval.mul_const(ct, c).map_err(err);
    }
    let q0 = (eval.params().q()[0] as f64).log2();
    let room = (q0 - ct.scale().log2() - c.abs().max(1.0).log2() - 2.0).floor();
    if room < 10.0 {
        return Err(err(format!(
            "at level 0 the constant {c} cannot be encoded: the scale 2^{:.1} leaves {room} bits \
             under q_0; multiply before the last rescale",
            ct.scale().log2()
        )));
    }
    eval.mul_const_scaled(ct, c, room.exp2()).map_err(err)
}
