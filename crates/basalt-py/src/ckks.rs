//! CKKS bindings: a context holding parameters, keys and an evaluator; ciphertexts as opaque
//! handles; numpy arrays in and out.

use basalt_circuits::bootstrap::{BootstrapConfig, Bootstrapper, Encapsulation};
use basalt_ckks::precision::PrecisionStats;
use basalt_ckks::{
    Ciphertext, Encoder, EvaluationKeys, Evaluator, KeyGenerator, KeyId, Parameters,
    ParametersLiteral, PublicKey, SecretDistribution, SecretKey, encryptor,
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
    /// The bootstrapping circuit and its encapsulation keys, if the context bootstraps.
    pub(crate) boot: Option<Boot>,
}

/// Bootstrapping as a capability of a context: the circuit (rebuilt from the parameters and
/// its configuration, so a server needs no secret for it) and the encapsulation keys.
#[derive(Clone)]
pub(crate) struct Boot {
    cfg: BootstrapConfig,
    bt: Bootstrapper,
    encaps: Option<Encapsulation>,
}

impl Boot {
    fn bootstrap(&self, eval: &Evaluator, ct: &Ciphertext) -> basalt_circuits::Result<Ciphertext> {
        self.bt.bootstrap(eval, self.encaps.as_ref(), ct)
    }
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
    /// The key set it is encrypted under (32 hex digits).
    #[getter]
    fn key_id(&self) -> String {
        self.ct.key_id().to_hex()
    }
    /// Serialized (checksummed, carrying the key id).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.ct.to_bytes().map_err(err)?))
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
    with_keys(params, key_pair, KeysFor { rotations, conjugate, seeded }, None)
}

/// Evaluation keys for `keys_for` plus, with a bootstrapping configuration, the circuit's.
fn make_keys(
    params: &Parameters,
    sk: &SecretKey,
    keys_for: &KeysFor,
    boot: Option<&BootstrapConfig>,
) -> PyResult<(EvaluationKeys, Option<Boot>)> {
    let kg = KeyGenerator::new(params);
    let KeysFor { rotations, conjugate, seeded } = keys_for;
    // Refuses keys beyond the memory available; Ctrl-C stops between keys.
    let progress = crate::progress::PyProgress::new(None);
    let mut keys = kg
        .gen_evaluation_keys_with(sk, rotations, *conjugate, *seeded, false, &progress)
        .map_err(|e| progress.error(e))?;
    let boot = match boot {
        None => None,
        Some(cfg) => {
            let bt = Bootstrapper::new(params, *cfg).map_err(err)?;
            let (bk, encaps) = bt.generate_keys(sk, *seeded).map_err(err)?;
            // The circuit's keys serve only the levels it runs at; the program's keys stay.
            keys.relin = bk.relin.or(keys.relin);
            for (g, k) in bk.galois {
                keys.galois.entry(g).or_insert(k);
            }
            Some(Boot { cfg: *cfg, bt, encaps })
        }
    };
    Ok((keys, boot))
}

/// A context over `params` with `key_pair` (none: symbolic) and evaluation keys for `keys_for`
/// (and the bootstrapping circuit of `boot`).
fn with_keys(
    params: Parameters,
    key_pair: Option<(SecretKey, PublicKey)>,
    keys_for: KeysFor,
    boot: Option<BootstrapConfig>,
) -> PyResult<PyCkks> {
    let kg = KeyGenerator::new(&params);
    let KeysFor { rotations, conjugate, seeded } = &keys_for;
    let (keys, boot) = match &key_pair {
        None => {
            if boot.is_some() {
                return Err(err("a symbolic context cannot bootstrap: use basalt.bootstrap"));
            }
            (kg.gen_symbolic_evaluation_keys(rotations, *conjugate, *seeded), None)
        }
        Some((sk, _)) => make_keys(&params, sk, &keys_for, boot.as_ref())?,
    };
    let eval = Evaluator::new(&params, keys).map_err(err)?;
    let encoder = Encoder::new(&params);
    Ok(PyCkks { params, encoder, key_pair, eval, keys_for, boot })
}

/// A level argument checked against the chain, naming the argument.
fn level_arg(params: &Parameters, level: Option<i64>) -> PyResult<usize> {
    match level {
        None => Ok(params.max_level()),
        Some(l) if l < 0 || l as usize > params.max_level() => Err(err(format!(
            "level={l} is out of range 0..={} for this parameter set",
            params.max_level()
        ))),
        Some(l) => Ok(l as usize),
    }
}

/// The scale must leave room under `Q_level`, as SEAL refuses a scale beyond the modulus.
fn scale_arg(params: &Parameters, scale: Option<f64>, level: usize) -> PyResult<f64> {
    let s = scale.unwrap_or(params.default_scale());
    let log_q: f64 = params.q()[..=level].iter().map(|&q| (q as f64).log2()).sum();
    if !(s.is_finite() && s >= 1.0) || s.log2() >= log_q - 1.0 {
        return Err(err(format!(
            "scale=2^{:.1} does not fit under the modulus at level {level} (Q = 2^{log_q:.1}): \
             pick a scale below 2^{:.0}",
            s.log2(),
            log_q - 1.0
        )));
    }
    Ok(s)
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
    /// Context for a named preset (`basalt.ckks_presets()` lists them). Presets estimated below
    /// 128-bit security (`basalt security` lists them) are refused unless `allow_insecure=True`.
    /// `symbolic`: trace mode (no key pair, no arithmetic), so full-size presets trace in
    /// milliseconds.
    #[staticmethod]
    #[pyo3(signature = (name, rotations=vec![], conjugate=false, seeded_keys=false, symbolic=false, bootstrapping=false, log_slots=None, allow_insecure=false))]
    #[allow(clippy::too_many_arguments)]
    fn preset(
        py: Python<'_>,
        name: &str,
        rotations: Vec<i64>,
        conjugate: bool,
        seeded_keys: bool,
        symbolic: bool,
        bootstrapping: bool,
        log_slots: Option<u32>,
        allow_insecure: bool,
    ) -> PyResult<PyCkks> {
        let params = Parameters::preset_with(name, allow_insecure).map_err(err)?;
        if !bootstrapping {
            return py.allow_threads(|| build(params, rotations, conjugate, seeded_keys, symbolic));
        }
        let cfg = basalt_circuits::bootstrap::config::for_preset(name, log_slots, params.log_n())
            .ok_or_else(|| err(format!("preset {name:?} has no bootstrapping circuit")))?;
        py.allow_threads(|| {
            let kg = KeyGenerator::new(&params);
            let sk = kg.gen_secret_key();
            let pk = kg.gen_public_key(&sk);
            let keys_for = KeysFor { rotations, conjugate, seeded: seeded_keys };
            with_keys(params, Some((sk, pk)), keys_for, Some(cfg))
        })
    }

    /// A small, INSECURE context that bootstraps (Lattigo's chain shape on N = 2^log_n), with
    /// keys for `rotations` too.
    #[staticmethod]
    #[pyo3(signature = (log_n=10, log_slots=None, residual_levels=2, rotations=vec![]))]
    fn toy_bootstrappable(
        py: Python<'_>,
        log_n: u32,
        log_slots: Option<u32>,
        residual_levels: usize,
        rotations: Vec<i64>,
    ) -> PyResult<PyCkks> {
        if !(8..=14).contains(&log_n) {
            return Err(err(format!("log_n={log_n} is out of range 8..=14")));
        }
        let params = basalt_circuits::testing::toy_bootstrap_params(
            log_n,
            residual_levels,
            2,
            3,
            SecretDistribution::Hamming { h: 64 },
        );
        let cfg = BootstrapConfig {
            cts_levels: 3,
            stc_levels: 2,
            ..BootstrapConfig::lattigo_default(log_slots.unwrap_or(log_n - 1))
        };
        py.allow_threads(|| {
            let kg = KeyGenerator::new(&params);
            let sk = kg.gen_secret_key();
            let pk = kg.gen_public_key(&sk);
            let keys_for = KeysFor { rotations, conjugate: false, seeded: false };
            with_keys(params, Some((sk, pk)), keys_for, Some(cfg))
        })
    }

    /// The identity of the key set (32 hex digits): every ciphertext and evaluation key made
    /// here carries it.
    #[getter]
    fn key_id(&self) -> String {
        self.key_pair
            .as_ref()
            .map_or_else(|| KeyId::UNBOUND.to_hex(), |(sk, _)| sk.key_id().to_hex())
    }

    /// The parameters (and bootstrapping configuration) a server needs, without keys.
    fn parameters(&self) -> PyParams {
        PyParams { params: self.params.clone(), boot: self.boot.as_ref().map(|b| b.cfg) }
    }

    /// Evaluation keys for a server: relinearisation, the rotations asked for (default: this
    /// context's), conjugation if asked, and the bootstrapping circuit's keys (encapsulation
    /// keys included) if this context bootstraps and `bootstrapping` is true. `seeded`: store
    /// the seeded form (half the bytes; expanded on load).
    #[pyo3(signature = (rotations=None, conjugate=false, seeded=false, bootstrapping=true))]
    fn evaluation_keys(
        &self,
        py: Python<'_>,
        rotations: Option<Vec<i64>>,
        conjugate: bool,
        seeded: bool,
        bootstrapping: bool,
    ) -> PyResult<PyEvalKeys> {
        let (sk, _) = key_pair(self)?;
        let keys_for = KeysFor {
            rotations: rotations.unwrap_or_else(|| self.keys_for.rotations.clone()),
            conjugate,
            seeded,
        };
        let cfg = if bootstrapping { self.boot.as_ref().map(|b| b.cfg) } else { None };
        // The keys this context already holds, if they are the ones asked for: no second
        // generation (minutes and gigabytes at N = 2^16).
        let same = keys_for.rotations == self.keys_for.rotations
            && conjugate == self.keys_for.conjugate
            && seeded == self.keys_for.seeded
            && cfg.is_some() == self.boot.is_some();
        if same {
            return Ok(PyEvalKeys {
                params: self.params.clone(),
                keys: self.eval.keys().clone(),
                encaps: self.boot.as_ref().and_then(|b| b.encaps.clone()),
            });
        }
        py.allow_threads(|| {
            let (keys, boot) = make_keys(&self.params, sk, &keys_for, cfg.as_ref())?;
            Ok(PyEvalKeys {
                params: self.params.clone(),
                keys,
                encaps: boot.and_then(|b| b.encaps),
            })
        })
    }

    /// The secret key as bytes: the one way it leaves this process. Whoever holds them can
    /// decrypt everything encrypted under this key set.
    fn export_secret_key<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let (sk, _) = key_pair(self)?;
        Ok(PyBytes::new(py, &sk.export_bytes().map_err(err)?))
    }

    /// Whether this context holds the keys to bootstrap.
    #[getter]
    fn can_bootstrap(&self) -> bool {
        self.boot.is_some()
    }

    /// Level of a bootstrapped ciphertext (`None` if the context does not bootstrap).
    #[getter]
    fn bootstrap_output_level(&self) -> Option<usize> {
        self.boot.as_ref().map(|b| b.bt.budget().output_level)
    }

    /// Largest scale a ciphertext may have when it is bootstrapped.
    #[getter]
    fn bootstrap_input_scale(&self) -> Option<f64> {
        self.boot.as_ref().map(|b| self.params.default_scale().min(b.bt.max_input_scale()))
    }

    /// Refresh `ct` (any level, the circuit's slot count) to `bootstrap_output_level`.
    fn bootstrap(&self, py: Python<'_>, ct: &PyCiphertext) -> PyResult<PyCiphertext> {
        let b = self.boot.as_ref().ok_or_else(|| {
            err("this context does not bootstrap: build it with bootstrapping=True")
        })?;
        py.allow_threads(|| Ok(PyCiphertext { ct: b.bootstrap(&self.eval, &ct.ct).map_err(err)? }))
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
        let boot = self.boot.as_ref().map(|b| b.cfg);
        py.allow_threads(|| with_keys(params, key_pair, keys_for, boot))
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
        level: Option<i64>,
        scale: Option<f64>,
    ) -> PyResult<PyCiphertext> {
        let v = values.as_slice().map_err(err)?.to_vec();
        let (_, pk) = key_pair(self)?;
        let level = level_arg(&self.params, level)?;
        let scale = scale_arg(&self.params, scale, level)?;
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

    /// `ct + v` / `ct · v` for a plaintext vector `v` (`op` is `"add"` or `"mul"`).
    fn plain_op(
        &self,
        ct: &PyCiphertext,
        v: PyReadonlyArray1<'_, Complex64>,
        op: &str,
    ) -> PyResult<PyCiphertext> {
        let v = v.as_slice().map_err(err)?;
        Ok(PyCiphertext { ct: plain_op(&self.encoder, &self.eval, &ct.ct, v, op)? })
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
        Ok(PyCiphertext { ct: chebyshev(py, &self.eval, &ct.ct, f, (a, b, degree))? })
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
        Ok(PyCiphertext { ct: mul_const(&self.eval, &a.ct, c)? })
    }
    /// Multiply by a complex constant (rescale after).
    fn mul_const_complex(&self, a: &PyCiphertext, c: Complex64) -> PyResult<PyCiphertext> {
        if c.im == 0.0 {
            return self.mul_const(a, c.re);
        }
        if a.ct.level() == 0 {
            return Err(err("a complex constant product needs a level to rescale; at level 0 \
                 multiply before the last rescale (or bootstrap first)"));
        }
        Ok(PyCiphertext { ct: self.eval.mul_const_complex(&a.ct, c).map_err(err)? })
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
    /// Rotate the slots left by `k` (needs the rotation key for `k`; a multiple of the slot
    /// count is the identity and needs none).
    fn rotate(&self, py: Python<'_>, a: &PyCiphertext, k: i64) -> PyResult<PyCiphertext> {
        if k.rem_euclid(a.ct.slots() as i64) == 0 {
            return Ok(a.clone());
        }
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
        let id = self.key_pair.as_ref().map_or(KeyId::UNBOUND, |(sk, _)| sk.key_id());
        Ok(PyCiphertext { ct: Ciphertext::from_bytes_for(&self.params, id, data).map_err(err)? })
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
        let mine = self.key_pair.as_ref().map_or(KeyId::UNBOUND, |(sk, _)| sk.key_id());
        py.allow_threads(|| {
            let k = basalt_ckks::EvaluationKeys::from_bytes(&self.params, &data).map_err(err)?;
            // The keys must belong to this context's key set, not merely be well formed.
            let theirs = k.key_id().map_err(err)?.unwrap_or(KeyId::UNBOUND);
            mine.join(theirs, "the evaluation keys").map_err(err)?;
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
pub(crate) fn mul_const(eval: &Evaluator, ct: &Ciphertext, c: f64) -> PyResult<Ciphertext> {
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

/// Names and aliases of the CKKS presets.
#[pyfunction]
fn ckks_presets() -> Vec<(String, Vec<String>)> {
    basalt_ckks::params::presets::names()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyCkks>()?;
    m.add_class::<PyCiphertext>()?;
    m.add_class::<PyParams>()?;
    m.add_class::<PyEvalKeys>()?;
    m.add_class::<PyServer>()?;
    m.add_function(wrap_pyfunction!(ckks_presets, m)?)?;
    Ok(())
}

/// The parameters of a context (and its bootstrapping configuration), without any key: what a
/// server is built from together with the evaluation keys. Serializes to JSON.
#[pyclass(module = "basalt._basalt", name = "CkksParameters", frozen)]
#[derive(Clone)]
pub struct PyParams {
    params: Parameters,
    boot: Option<BootstrapConfig>,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct ParamsWire {
    literal: ParametersLiteral,
    bootstrapping: Option<BootstrapConfig>,
}

#[pymethods]
impl PyParams {
    #[getter]
    fn name(&self) -> String {
        self.params.name().to_string()
    }
    #[getter]
    fn can_bootstrap(&self) -> bool {
        self.boot.is_some()
    }
    fn to_json(&self) -> PyResult<String> {
        let w = ParamsWire { literal: self.params.literal().clone(), bootstrapping: self.boot };
        serde_json::to_string(&w).map_err(err)
    }
    /// Parameters from `to_json`'s output, validated again (an insecure set loads only if the
    /// JSON carries its opt-in).
    #[staticmethod]
    fn from_json(s: &str) -> PyResult<PyParams> {
        let w: ParamsWire = serde_json::from_str(s).map_err(|e| err(format!("parameters: {e}")))?;
        let params = Parameters::new(w.literal).map_err(err)?;
        if let Some(cfg) = &w.bootstrapping {
            Bootstrapper::new(&params, *cfg).map_err(err)?;
        }
        Ok(PyParams { params, boot: w.bootstrapping })
    }
    fn __repr__(&self) -> String {
        format!("CkksParameters({:?}, bootstrapping={})", self.params.name(), self.boot.is_some())
    }
}

/// Evaluation keys of one key set (no secret): relinearisation, rotations, conjugation and,
/// for a bootstrapping context, the circuit's keys and encapsulation keys.
#[pyclass(module = "basalt._basalt", name = "CkksEvaluationKeys", frozen)]
#[derive(Clone)]
pub struct PyEvalKeys {
    params: Parameters,
    keys: EvaluationKeys,
    encaps: Option<Encapsulation>,
}

/// `[u64 length of the key set][key set][encapsulation keys, possibly empty]`.
fn evk_to_bytes(k: &PyEvalKeys) -> PyResult<Vec<u8>> {
    let a = k.keys.to_bytes().map_err(err)?;
    let mut out = (a.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&a);
    if let Some(e) = &k.encaps {
        out.extend_from_slice(&e.to_bytes().map_err(err)?);
    }
    Ok(out)
}

fn evk_from_bytes(
    p: &PyParams,
    data: &[u8],
    steps: Option<&[i64]>,
    conjugate: bool,
) -> PyResult<PyEvalKeys> {
    let bad = |m: &str| err(format!("evaluation keys: {m}"));
    let len = data
        .get(..8)
        .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")) as usize)
        .ok_or_else(|| bad("truncated"))?;
    let rest = &data[8..];
    if len > rest.len() {
        return Err(bad("truncated"));
    }
    let (a, b) = rest.split_at(len);
    let mut steps = steps.map(<[i64]>::to_vec);
    let mut conjugate = conjugate;
    let boot = match &p.boot {
        Some(cfg) => Some(Bootstrapper::new(&p.params, *cfg).map_err(err)?),
        None => None,
    };
    // A bootstrapping server needs the circuit's keys whatever the program lists.
    if let (Some(s), Some(bt)) = (steps.as_mut(), &boot) {
        s.extend(bt.rotations());
        conjugate = true;
    }
    let keys = EvaluationKeys::from_bytes_selected(&p.params, a, steps.as_deref(), conjugate)
        .map_err(err)?
        .expanded(&p.params)
        .map_err(err)?;
    let encaps = match (&p.boot, b.is_empty()) {
        (_, true) => None,
        (Some(cfg), false) => {
            let h =
                cfg.ephemeral_h.ok_or_else(|| bad("encapsulation keys for a circuit without"))?;
            let e = Encapsulation::from_bytes(&p.params, h, b).map_err(err)?;
            let id = keys.key_id().map_err(err)?.unwrap_or(KeyId::UNBOUND);
            id.join(e.key_id(), "the encapsulation keys").map_err(err)?;
            Some(e)
        }
        (None, false) => {
            return Err(bad("encapsulation keys, but the parameters do not bootstrap"));
        }
    };
    Ok(PyEvalKeys { params: p.params.clone(), keys, encaps })
}

#[pymethods]
impl PyEvalKeys {
    /// The key set they belong to (32 hex digits).
    #[getter]
    fn key_id(&self) -> PyResult<String> {
        Ok(self.keys.key_id().map_err(err)?.unwrap_or(KeyId::UNBOUND).to_hex())
    }
    /// Rotation steps held.
    #[getter]
    fn rotations(&self) -> Vec<i64> {
        self.keys.rotations(&self.params)
    }
    #[getter]
    fn has_conjugation(&self) -> bool {
        self.keys.has_conjugation(&self.params)
    }
    #[getter]
    fn has_bootstrapping(&self) -> bool {
        self.encaps.is_some()
    }
    /// Bytes of key material held (seeded keys: their stored half).
    #[getter]
    fn size_bytes(&self) -> usize {
        self.keys.size_bytes()
    }
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let b = py.allow_threads(|| evk_to_bytes(self))?;
        Ok(PyBytes::new(py, &b))
    }
    /// Load and validate keys for `params`; with `rotations`, only those rotation keys (and
    /// the bootstrapping circuit's, if the parameters bootstrap) are decoded and kept.
    #[staticmethod]
    #[pyo3(signature = (params, data, rotations=None, conjugate=false))]
    fn from_bytes(
        py: Python<'_>,
        params: &PyParams,
        data: &[u8],
        rotations: Option<Vec<i64>>,
        conjugate: bool,
    ) -> PyResult<PyEvalKeys> {
        let data = data.to_vec();
        py.allow_threads(|| evk_from_bytes(params, &data, rotations.as_deref(), conjugate))
    }
    /// Only the relinearisation key, the rotation keys for `steps` and (if asked) conjugation.
    #[pyo3(signature = (steps, conjugate=false))]
    fn select(&self, steps: Vec<i64>, conjugate: bool) -> PyResult<PyEvalKeys> {
        let keys = self.keys.select(&self.params, &steps, conjugate).map_err(err)?;
        Ok(PyEvalKeys { params: self.params.clone(), keys, encaps: self.encaps.clone() })
    }
}

/// The server role: parameters and evaluation keys only. Every homomorphic operation
/// (bootstrapping included, when the keys carry it); no secret key, no decryption.
#[pyclass(module = "basalt._basalt", name = "CkksServer", frozen)]
pub struct PyServer {
    pub(crate) params: Parameters,
    pub(crate) encoder: Encoder,
    pub(crate) eval: Evaluator,
    boot: Option<Boot>,
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
            let boot = match (&params.boot, &keys.encaps) {
                (Some(cfg), encaps) => {
                    let bt = Bootstrapper::new(&params.params, *cfg).map_err(err)?;
                    if cfg.ephemeral_h.is_some() && encaps.is_none() {
                        None
                    } else {
                        Some(Boot { cfg: *cfg, bt, encaps: encaps.clone() })
                    }
                }
                (None, _) => None,
            };
            Ok(PyServer {
                encoder: Encoder::new(&params.params),
                params: params.params.clone(),
                eval,
                boot,
            })
        })
    }
    #[getter]
    fn key_id(&self) -> String {
        self.eval.key_id().to_hex()
    }
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
    #[getter]
    fn can_bootstrap(&self) -> bool {
        self.boot.is_some()
    }
    #[getter]
    fn bootstrap_output_level(&self) -> Option<usize> {
        self.boot.as_ref().map(|b| b.bt.budget().output_level)
    }
    /// Load a ciphertext; one under another key set than the server's keys is refused.
    fn ciphertext_from_bytes(&self, data: &[u8]) -> PyResult<PyCiphertext> {
        let ct = Ciphertext::from_bytes_for(&self.params, self.eval.key_id(), data).map_err(err)?;
        Ok(PyCiphertext { ct })
    }
    fn ciphertext_to_bytes<'py>(
        &self,
        py: Python<'py>,
        ct: &PyCiphertext,
    ) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &ct.ct.to_bytes().map_err(err)?))
    }

    /// `ct + v` / `ct · v` for a plaintext vector `v` (`op` is `"add"` or `"mul"`).
    fn plain_op(
        &self,
        ct: &PyCiphertext,
        v: PyReadonlyArray1<'_, Complex64>,
        op: &str,
    ) -> PyResult<PyCiphertext> {
        let v = v.as_slice().map_err(err)?;
        Ok(PyCiphertext { ct: plain_op(&self.encoder, &self.eval, &ct.ct, v, op)? })
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
        Ok(PyCiphertext { ct: chebyshev(py, &self.eval, &ct.ct, f, (a, b, degree))? })
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
    fn mul(&self, py: Python<'_>, a: &PyCiphertext, b: &PyCiphertext) -> PyResult<PyCiphertext> {
        py.allow_threads(|| {
            Ok(PyCiphertext { ct: self.eval.mul_relin(&a.ct, &b.ct).map_err(err)? })
        })
    }
    fn mul_const(&self, a: &PyCiphertext, c: f64) -> PyResult<PyCiphertext> {
        Ok(PyCiphertext { ct: mul_const(&self.eval, &a.ct, c)? })
    }
    fn mul_const_complex(&self, a: &PyCiphertext, c: Complex64) -> PyResult<PyCiphertext> {
        if c.im == 0.0 {
            return self.mul_const(a, c.re);
        }
        Ok(PyCiphertext { ct: self.eval.mul_const_complex(&a.ct, c).map_err(err)? })
    }
    fn add_const(&self, a: &PyCiphertext, c: Complex64) -> PyResult<PyCiphertext> {
        Ok(PyCiphertext { ct: self.eval.add_const(&a.ct, c).map_err(err)? })
    }
    fn rescale(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
        py.allow_threads(|| Ok(PyCiphertext { ct: self.eval.rescale(&a.ct).map_err(err)? }))
    }
    fn drop_to_level(&self, a: &PyCiphertext, level: usize) -> PyResult<PyCiphertext> {
        let mut ct = a.ct.clone();
        ct.drop_to_level(level).map_err(err)?;
        Ok(PyCiphertext { ct })
    }
    fn rotate(&self, py: Python<'_>, a: &PyCiphertext, k: i64) -> PyResult<PyCiphertext> {
        if k.rem_euclid(a.ct.slots() as i64) == 0 {
            return Ok(a.clone());
        }
        py.allow_threads(|| Ok(PyCiphertext { ct: self.eval.rotate(&a.ct, k).map_err(err)? }))
    }
    fn conjugate(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
        py.allow_threads(|| Ok(PyCiphertext { ct: self.eval.conjugate(&a.ct).map_err(err)? }))
    }
    fn bootstrap(&self, py: Python<'_>, ct: &PyCiphertext) -> PyResult<PyCiphertext> {
        let b = self.boot.as_ref().ok_or_else(|| {
            err("this server cannot bootstrap: it needs bootstrapping parameters and keys")
        })?;
        py.allow_threads(|| Ok(PyCiphertext { ct: b.bootstrap(&self.eval, &ct.ct).map_err(err)? }))
    }
}
