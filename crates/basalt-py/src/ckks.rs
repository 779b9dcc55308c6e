//! CKKS bindings: a context holding parameters, keys and an evaluator; ciphertexts as opaque
//! handles; numpy arrays in and out.

use basalt_ckks::precision::PrecisionStats;
use basalt_ckks::{
    Ciphertext, Encoder, Evaluator, KeyGenerator, Parameters, ParametersLiteral, PublicKey,
    SecretKey, encryptor,
};
use num_complex::Complex64;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::err;

/// A CKKS context: parameters, a secret/public key pair, evaluation keys for the requested
/// rotations, an encoder and an evaluator. A symbolic context (trace mode) has no key pair:
/// its ciphertexts carry shape, level and scale only, and its operations emit the kernels a
/// real run would execute without doing the arithmetic.
#[pyclass(module = "basalt._basalt", name = "CkksContext", frozen)]
pub struct PyCkks {
    pub(crate) params: Parameters,
    pub(crate) encoder: Encoder,
    key_pair: Option<(SecretKey, PublicKey)>,
    pub(crate) eval: Evaluator,
    /// What the evaluation keys were made for (`with_rotations` extends them).
    keys_for: KeysFor,
}

/// The rotations, conjugation and seeding the evaluation keys cover.
#[derive(Clone)]
struct KeysFor {
    rotations: Vec<i64>,
    conjugate: bool,
    seeded: bool,
}

/// An encrypted vector (opaque; decrypt it with its context).
#[pyclass(module = "basalt._basalt", name = "CkksCiphertext", frozen)]
#[derive(Clone)]
pub struct PyCiphertext {
    ct: Ciphertext,
}

impl From<Ciphertext> for PyCiphertext {
    fn from(ct: Ciphertext) -> Self {
        PyCiphertext { ct }
    }
}

impl PyCiphertext {
    pub(crate) fn inner(&self) -> &Ciphertext {
        &self.ct
    }
}

#[pymethods]
impl PyCiphertext {
    #[getter]
    fn level(&self) -> usize {
        self.ct.level()
    }
    #[getter]
    fn scale(&self) -> f64 {
        self.ct.scale()
    }
    #[getter]
    fn slots(&self) -> usize {
        self.ct.slots()
    }
    fn __repr__(&self) -> String {
        format!(
            "CkksCiphertext(level={}, log2(scale)={:.2}, slots={})",
            self.ct.level(),
            self.ct.scale().log2(),
            self.ct.slots()
        )
    }
}

fn build(
    params: Parameters,
    rotations: Vec<i64>,
    conjugate: bool,
    seeded: bool,
    symbolic: bool,
) -> PyResult<PyCkks> {
    let key_pair = (!symbolic).then(|| {
        let kg = KeyGenerator::new(&params);
        let sk = kg.gen_secret_key();
        let pk = kg.gen_public_key(&sk);
        (sk, pk)
    });
    with_keys(params, key_pair, KeysFor { rotations, conjugate, seeded })
}

/// A context over `params` with `key_pair` (none: symbolic) and evaluation keys for `keys_for`.
fn with_keys(
    params: Parameters,
    key_pair: Option<(SecretKey, PublicKey)>,
    keys_for: KeysFor,
) -> PyResult<PyCkks> {
    let kg = KeyGenerator::new(&params);
    let KeysFor { rotations, conjugate, seeded } = &keys_for;
    let keys = match &key_pair {
        None => kg.gen_symbolic_evaluation_keys(rotations, *conjugate, *seeded),
        Some((sk, _)) => kg.gen_evaluation_keys(sk, rotations, *conjugate, *seeded),
    };
    let eval = Evaluator::new(&params, keys).map_err(err)?;
    let encoder = Encoder::new(&params);
    Ok(PyCkks { params, encoder, key_pair, eval, keys_for })
}

/// The key pair of a real context; a symbolic one has none to encrypt or decrypt with.
fn key_pair(c: &PyCkks) -> PyResult<&(SecretKey, PublicKey)> {
    c.key_pair.as_ref().ok_or_else(|| {
        err("this context is symbolic (trace mode): it computes shapes and kernels, not \
             values; use encrypt_symbolic, and a real context to encrypt or decrypt")
    })
}

#[pymethods]
impl PyCkks {
    /// Context for a named preset (`basalt.ckks_presets()` lists them). Presets below 128-bit
    /// security are refused unless loaded by name from their data file, which opts in.
    /// `symbolic`: trace mode (no key pair, no arithmetic), so full-size presets trace in
    /// milliseconds.
    #[staticmethod]
    #[pyo3(signature = (name, rotations=vec![], conjugate=false, seeded_keys=false, symbolic=false))]
    fn preset(
        py: Python<'_>,
        name: &str,
        rotations: Vec<i64>,
        conjugate: bool,
        seeded_keys: bool,
        symbolic: bool,
    ) -> PyResult<PyCkks> {
        let params = Parameters::preset(name).map_err(err)?;
        py.allow_threads(|| build(params, rotations, conjugate, seeded_keys, symbolic))
    }

    /// A small, INSECURE context for experiments and tests: N = 2^log_n, `levels` rescaling
    /// primes of `log_q` bits above a `log_q0`-bit base prime, `k` special primes, `dnum` digits.
    #[staticmethod]
    #[pyo3(signature = (log_n=12, levels=4, log_q0=55, log_q=40, log_p=56, k=1, dnum=None, rotations=vec![], conjugate=false, symbolic=false))]
    #[allow(clippy::too_many_arguments)]
    fn toy_insecure(
        py: Python<'_>,
        log_n: u32,
        levels: usize,
        log_q0: u32,
        log_q: u32,
        log_p: u32,
        k: usize,
        dnum: Option<usize>,
        rotations: Vec<i64>,
        conjugate: bool,
        symbolic: bool,
    ) -> PyResult<PyCkks> {
        let dnum = dnum.unwrap_or(levels + 1);
        let lit = ParametersLiteral::toy(log_n, log_q0, log_q, levels, log_p, k, dnum);
        let params = Parameters::new_insecure(lit).map_err(err)?;
        py.allow_threads(|| build(params, rotations, conjugate, false, symbolic))
    }

    #[getter]
    fn symbolic(&self) -> bool {
        self.key_pair.is_none()
    }

    /// Rotation steps the evaluation keys cover.
    #[getter]
    fn rotations(&self) -> Vec<i64> {
        self.keys_for.rotations.clone()
    }

    /// The same context (parameters and key pair, so its ciphertexts stay valid) with
    /// evaluation keys for `rotations` too; the keys are generated anew.
    fn with_rotations(&self, py: Python<'_>, rotations: Vec<i64>) -> PyResult<PyCkks> {
        let mut keys_for = self.keys_for.clone();
        keys_for.rotations.extend(rotations);
        keys_for.rotations.sort_unstable();
        keys_for.rotations.dedup();
        let (params, key_pair) = (self.params.clone(), self.key_pair.clone());
        py.allow_threads(|| with_keys(params, key_pair, keys_for))
    }

    /// A shape-only ciphertext of `slots` slots at `level` (default: the top), for tracing on a
    /// symbolic context: what `encrypt` of a vector that long would give, without values.
    #[pyo3(signature = (slots, level=None, scale=None))]
    fn encrypt_symbolic(
        &self,
        slots: usize,
        level: Option<usize>,
        scale: Option<f64>,
    ) -> PyResult<PyCiphertext> {
        if self.key_pair.is_some() {
            return Err(err("encrypt_symbolic needs a symbolic context (symbolic=True)"));
        }
        if !slots.is_power_of_two() || slots > self.params.n() / 2 {
            return Err(err(format!(
                "slots must be a power of two of at most N/2 = {}, not {slots}",
                self.params.n() / 2
            )));
        }
        let level = level.unwrap_or(self.params.max_level());
        let mut ct = Ciphertext::symbolic(&self.params, level).map_err(err)?;
        ct.set_scale(scale.unwrap_or(self.params.default_scale()));
        ct.set_slots(slots);
        Ok(PyCiphertext { ct })
    }

    #[getter]
    fn slots(&self) -> usize {
        self.params.n() / 2
    }
    #[getter]
    fn max_level(&self) -> usize {
        self.params.max_level()
    }
    #[getter]
    fn default_scale(&self) -> f64 {
        self.params.default_scale()
    }
    #[getter]
    fn name(&self) -> String {
        self.params.name().to_string()
    }

    /// Encrypt a complex128 vector (length a power of two, at most N/2) with the public key.
    #[pyo3(signature = (values, level=None, scale=None))]
    fn encrypt(
        &self,
        py: Python<'_>,
        values: PyReadonlyArray1<'_, Complex64>,
        level: Option<usize>,
        scale: Option<f64>,
    ) -> PyResult<PyCiphertext> {
        let v = values.as_slice().map_err(err)?.to_vec();
        let (_, pk) = key_pair(self)?;
        let level = level.unwrap_or(self.params.max_level());
        let scale = scale.unwrap_or(self.params.default_scale());
        py.allow_threads(|| {
            let slots = v.len();
            let pt = self.encoder.encode(&v, slots, level, scale).map_err(err)?;
            let ct = encryptor::encrypt_pk(&self.params, &pt, pk).map_err(err)?;
            Ok(PyCiphertext { ct })
        })
    }

    /// Decrypt and decode to a complex128 vector of the ciphertext's slot count.
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        ct: &PyCiphertext,
    ) -> PyResult<Bound<'py, PyArray1<Complex64>>> {
        let (sk, _) = key_pair(self)?;
        let v = py.allow_threads(|| {
            let pt = encryptor::decrypt(&self.params, &ct.ct, sk).map_err(err)?;
            self.encoder.decode(&pt).map_err(err)
        })?;
        Ok(v.into_pyarray(py))
    }

    fn add(&self, a: &PyCiphertext, b: &PyCiphertext) -> PyResult<PyCiphertext> {
        Ok(PyCiphertext { ct: self.eval.add(&a.ct, &b.ct).map_err(err)? })
    }
    fn sub(&self, a: &PyCiphertext, b: &PyCiphertext) -> PyResult<PyCiphertext> {
        Ok(PyCiphertext { ct: self.eval.sub(&a.ct, &b.ct).map_err(err)? })
    }
    fn neg(&self, a: &PyCiphertext) -> PyResult<PyCiphertext> {
        Ok(PyCiphertext { ct: self.eval.neg(&a.ct).map_err(err)? })
    }
    /// Ciphertext product, relinearised (not rescaled: call `rescale`).
    fn mul(&self, py: Python<'_>, a: &PyCiphertext, b: &PyCiphertext) -> PyResult<PyCiphertext> {
        py.allow_threads(|| {
            Ok(PyCiphertext { ct: self.eval.mul_relin(&a.ct, &b.ct).map_err(err)? })
        })
    }
    /// Multiply by a real constant (encoded at the ciphertext's top prime's scale; rescale after).
    fn mul_const(&self, a: &PyCiphertext, c: f64) -> PyResult<PyCiphertext> {
        Ok(PyCiphertext { ct: self.eval.mul_const(&a.ct, c).map_err(err)? })
    }
    fn add_const(&self, a: &PyCiphertext, c: Complex64) -> PyResult<PyCiphertext> {
        Ok(PyCiphertext { ct: self.eval.add_const(&a.ct, c).map_err(err)? })
    }
    fn rescale(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
        py.allow_threads(|| Ok(PyCiphertext { ct: self.eval.rescale(&a.ct).map_err(err)? }))
    }
    /// Drop to `level` without rescaling.
    fn drop_to_level(&self, a: &PyCiphertext, level: usize) -> PyResult<PyCiphertext> {
        let mut ct = a.ct.clone();
        ct.drop_to_level(level).map_err(err)?;
        Ok(PyCiphertext { ct })
    }
    /// Rotate the slots left by `k` (needs the rotation key for `k`).
    fn rotate(&self, py: Python<'_>, a: &PyCiphertext, k: i64) -> PyResult<PyCiphertext> {
        py.allow_threads(|| Ok(PyCiphertext { ct: self.eval.rotate(&a.ct, k).map_err(err)? }))
    }
    /// Throughput mode: `a × b` (relinearised) for every pair, one pair per task on Rust's
    /// thread pool (`RAYON_NUM_THREADS` cores), with the GIL released for the whole batch.
    fn mul_batch(
        &self,
        py: Python<'_>,
        pairs: Vec<(PyRef<'_, PyCiphertext>, PyRef<'_, PyCiphertext>)>,
    ) -> PyResult<Vec<PyCiphertext>> {
        let pairs: Vec<(&Ciphertext, &Ciphertext)> =
            pairs.iter().map(|(a, b)| (&a.ct, &b.ct)).collect();
        let out = py.allow_threads(|| self.eval.mul_relin_batch(&pairs)).map_err(err)?;
        Ok(out.into_iter().map(PyCiphertext::from).collect())
    }
    /// Throughput mode: every ciphertext rotated left by `k`, one per task, GIL released.
    fn rotate_batch(
        &self,
        py: Python<'_>,
        cts: Vec<PyRef<'_, PyCiphertext>>,
        k: i64,
    ) -> PyResult<Vec<PyCiphertext>> {
        let cts: Vec<Ciphertext> = cts.iter().map(|c| c.ct.clone()).collect();
        let out = py.allow_threads(|| self.eval.rotate_batch(&cts, k)).map_err(err)?;
        Ok(out.into_iter().map(PyCiphertext::from).collect())
    }
    /// Throughput mode: every ciphertext rescaled, one per task, GIL released.
    fn rescale_batch(
        &self,
        py: Python<'_>,
        cts: Vec<PyRef<'_, PyCiphertext>>,
    ) -> PyResult<Vec<PyCiphertext>> {
        let cts: Vec<Ciphertext> = cts.iter().map(|c| c.ct.clone()).collect();
        let out = py.allow_threads(|| self.eval.rescale_batch(&cts)).map_err(err)?;
        Ok(out.into_iter().map(PyCiphertext::from).collect())
    }
    fn conjugate(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
        py.allow_threads(|| Ok(PyCiphertext { ct: self.eval.conjugate(&a.ct).map_err(err)? }))
    }

    /// Serialize a ciphertext (parameter-set id, shape and residues).
    fn ciphertext_to_bytes<'py>(
        &self,
        py: Python<'py>,
        ct: &PyCiphertext,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let b = ct.ct.to_bytes().map_err(err)?;
        Ok(PyBytes::new(py, &b))
    }

    /// Load a ciphertext, validating it against this context's parameters (id, limb counts,
    /// every residue below its modulus): bad bytes raise `BasaltError`.
    fn ciphertext_from_bytes(&self, data: &[u8]) -> PyResult<PyCiphertext> {
        Ok(PyCiphertext { ct: Ciphertext::from_bytes(&self.params, data).map_err(err)? })
    }

    /// Serialize the evaluation keys (relinearisation and Galois keys).
    fn evaluation_keys_to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let b = self.eval.keys().to_bytes().map_err(err)?;
        Ok(PyBytes::new(py, &b))
    }

    /// Validate serialized evaluation keys against this context (raises `BasaltError` on any
    /// corruption); returns how many Galois keys they hold.
    fn check_evaluation_keys(&self, py: Python<'_>, data: &[u8]) -> PyResult<usize> {
        let data = data.to_vec();
        py.allow_threads(|| {
            let k = basalt_ckks::EvaluationKeys::from_bytes(&self.params, &data).map_err(err)?;
            Ok(k.galois.len())
        })
    }

    /// Precision of `have` against `want` in bits, as Lattigo reports it.
    #[staticmethod]
    fn precision<'py>(
        py: Python<'py>,
        want: PyReadonlyArray1<'_, Complex64>,
        have: PyReadonlyArray1<'_, Complex64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (w, h) = (want.as_slice().map_err(err)?, have.as_slice().map_err(err)?);
        if w.len() != h.len() {
            return Err(err(format!("length mismatch: {} vs {}", w.len(), h.len())));
        }
        let s = PrecisionStats::new(w, h);
        let d = PyDict::new(py);
        let named = [
            ("min", s.min),
            ("max", s.max),
            ("mean", s.mean),
            ("median", s.median),
            ("mean_error", s.mean_error),
        ];
        for (k, b) in named {
            d.set_item(k, b.l2)?;
            d.set_item(format!("{k}_real"), b.real)?;
        }
        Ok(d)
    }
}

/// Names and aliases of the CKKS presets.
#[pyfunction]
fn ckks_presets() -> Vec<(String, Vec<String>)> {
    basalt_ckks::params::presets::names()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyCkks>()?;
    m.add_class::<PyCiphertext>()?;
    m.add_function(wrap_pyfunction!(ckks_presets, m)?)?;
    Ok(())
}
