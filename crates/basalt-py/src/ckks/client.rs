//! The client role: the secret and public keys, encryption and decryption, and the generation
//! of every evaluation key. Its homomorphic operations are those of the engine it holds on its
//! own evaluation keys ([`PyServer`]), the same code a server runs.

use std::sync::Arc;

use basalt_circuits::bootstrap::{BootstrapConfig, Bootstrapper};
use basalt_ckks::precision::PrecisionStats;
use basalt_ckks::{
    Ciphertext, EvaluationKeys, Evaluator, KeyGenerator, KeyId, Parameters, ParametersLiteral,
    PublicKey, SecretKey, encryptor,
};
use num_complex::Complex64;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use super::ciphertext::PyCiphertext;
use super::keys::{KeyObj, PyEvalKeys, PyKey};
use super::server::{Boot, PyServer};
use crate::err;
use crate::progress::PyProgress;

/// A CKKS client context: parameters, a secret/public key pair, and an engine holding
/// evaluation keys for the requested rotations. A symbolic context (trace mode) has no key
/// pair: its ciphertexts carry shape, level and scale only, and its operations emit the
/// kernels a real run would execute without doing the arithmetic.
#[pyclass(module = "basalt._basalt", name = "CkksContext", frozen)]
pub struct PyCkks {
    engine: Py<PyServer>,
    key_pair: Option<(SecretKey, PublicKey)>,
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

impl PyCkks {
    /// The engine: parameters, encoder, evaluator and bootstrapping circuit.
    pub(crate) fn engine(&self) -> &PyServer {
        self.engine.get()
    }
}

/// A fresh key pair (none for a symbolic context).
fn key_pair(params: &Parameters, symbolic: bool) -> Option<(SecretKey, PublicKey)> {
    (!symbolic).then(|| {
        let kg = KeyGenerator::new(params);
        let sk = kg.gen_secret_key();
        let pk = kg.gen_public_key(&sk);
        (sk, pk)
    })
}

/// Evaluation keys for `keys_for` plus, with a bootstrapping configuration, the circuit's.
/// Refuses keys beyond the memory available; `progress` hears of every key and Ctrl-C stops
/// the generation between keys. The returned circuit is the real one (diagonals encoded) if
/// `circuit`, else its shape: enough to make its keys, not to bootstrap.
fn make_keys(
    params: &Parameters,
    sk: &SecretKey,
    keys_for: &KeysFor,
    boot: Option<&BootstrapConfig>,
    circuit: bool,
    progress: &PyProgress,
) -> PyResult<(EvaluationKeys, Option<Boot>)> {
    let kg = KeyGenerator::new(params);
    let KeysFor { rotations, conjugate, seeded } = keys_for;
    let Some(cfg) = boot else {
        let keys = kg
            .gen_evaluation_keys_with(sk, rotations, *conjugate, *seeded, false, progress)
            .map_err(|e| progress.error(e))?;
        return Ok((keys, None));
    };
    // One relinearisation key, the circuit's: it serves every level a rescale reaches, the
    // program's products included, so the program's keys are its rotations and conjugation.
    let mut keys = kg
        .gen_galois_keys_with(sk, rotations, *conjugate, *seeded, false, progress)
        .map_err(|e| progress.error(e))?;
    let bt = if circuit {
        super::circuit::shared(params, *cfg)?
    } else {
        Arc::new(Bootstrapper::symbolic(params, *cfg).map_err(err)?)
    };
    let (bk, encaps) =
        bt.generate_keys_with(sk, *seeded, false, progress).map_err(|e| progress.error(e))?;
    keys.relin = bk.relin;
    // The circuit's rotation keys serve only the levels it runs at; the program's stay.
    for (g, k) in bk.galois {
        keys.galois.entry(g).or_insert(k);
    }
    let boot = Some(Boot { cfg: *cfg, bt, encaps });
    Ok((keys, boot))
}

/// A context over `params` with `key_pair` (none: symbolic) and evaluation keys for `keys_for`
/// (and the bootstrapping circuit of `boot`), built without the GIL; `progress` as in
/// [`make_keys`].
fn with_keys(
    py: Python<'_>,
    params: Parameters,
    key_pair: Option<(SecretKey, PublicKey)>,
    keys_for: KeysFor,
    boot: Option<BootstrapConfig>,
    progress: Option<Py<PyAny>>,
) -> PyResult<PyCkks> {
    let progress = PyProgress::new(progress);
    let engine = py.allow_threads(|| {
        let kg = KeyGenerator::new(&params);
        let KeysFor { rotations, conjugate, seeded } = &keys_for;
        let (keys, boot) = match &key_pair {
            None => {
                if boot.is_some() {
                    return Err(err("a symbolic context cannot bootstrap: use basalt.bootstrap"));
                }
                (kg.gen_symbolic_evaluation_keys(rotations, *conjugate, *seeded), None)
            }
            Some((sk, _)) => make_keys(&params, sk, &keys_for, boot.as_ref(), true, &progress)?,
        };
        let eval = Evaluator::new(&params, keys).map_err(err)?;
        Ok(PyServer::assemble(params, eval, boot))
    })?;
    Ok(PyCkks { engine: Py::new(py, engine)?, key_pair, keys_for })
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
fn keys_of(c: &PyCkks) -> PyResult<&(SecretKey, PublicKey)> {
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
    /// milliseconds. `progress(stage, done, total)` hears of every key generated.
    #[staticmethod]
    #[pyo3(signature = (name, rotations=vec![], conjugate=false, seeded_keys=false, symbolic=false, bootstrapping=false, log_slots=None, allow_insecure=false, progress=None))]
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
        progress: Option<Py<PyAny>>,
    ) -> PyResult<PyCkks> {
        let params = Parameters::preset_with(name, allow_insecure).map_err(err)?;
        let cfg = if bootstrapping {
            let cfg =
                basalt_circuits::bootstrap::config::for_preset(name, log_slots, params.log_n())
                    .ok_or_else(|| err(format!("preset {name:?} has no bootstrapping circuit")))?;
            Some(cfg)
        } else {
            None
        };
        let keys_for = KeysFor { rotations, conjugate, seeded: seeded_keys };
        let pair = py.allow_threads(|| key_pair(&params, symbolic));
        with_keys(py, params, pair, keys_for, cfg, progress)
    }

    /// A small, INSECURE context that bootstraps (Lattigo's chain shape on N = 2^log_n), with
    /// keys for `rotations` too.
    #[staticmethod]
    #[pyo3(signature = (log_n=10, log_slots=None, residual_levels=2, rotations=vec![], progress=None))]
    fn toy_bootstrappable(
        py: Python<'_>,
        log_n: u32,
        log_slots: Option<u32>,
        residual_levels: usize,
        rotations: Vec<i64>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<PyCkks> {
        if !(8..=14).contains(&log_n) {
            return Err(err(format!("log_n={log_n} is out of range 8..=14")));
        }
        let (params, cfg) = crate::bootstrap::toy_ring(log_n, log_slots, residual_levels);
        let keys_for = KeysFor { rotations, conjugate: false, seeded: false };
        let pair = py.allow_threads(|| key_pair(&params, false));
        with_keys(py, params, pair, keys_for, Some(cfg), progress)
    }

    /// A small, INSECURE context for experiments and tests: N = 2^log_n, `levels` rescaling
    /// primes of `log_q` bits above a `log_q0`-bit base prime, `k` special primes, `dnum` digits.
    #[staticmethod]
    #[pyo3(signature = (log_n=12, levels=4, log_q0=55, log_q=40, log_p=56, k=1, dnum=None, rotations=vec![], conjugate=false, symbolic=false, progress=None))]
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
        progress: Option<Py<PyAny>>,
    ) -> PyResult<PyCkks> {
        let dnum = dnum.unwrap_or(levels + 1);
        let lit = ParametersLiteral::toy(log_n, log_q0, log_q, levels, log_p, k, dnum);
        let params = Parameters::new_insecure(lit).map_err(err)?;
        let keys_for = KeysFor { rotations, conjugate, seeded: false };
        let pair = py.allow_threads(|| key_pair(&params, symbolic));
        with_keys(py, params, pair, keys_for, None, progress)
    }

    /// The engine on this context's evaluation keys (every homomorphic operation).
    #[getter]
    fn evaluator(&self, py: Python<'_>) -> Py<PyServer> {
        self.engine.clone_ref(py)
    }

    /// The identity of the key set (32 hex digits): every ciphertext and evaluation key made
    /// here carries it.
    #[getter]
    fn key_id(&self) -> String {
        self.key_pair
            .as_ref()
            .map_or_else(|| KeyId::UNBOUND.to_hex(), |(sk, _)| sk.key_id().to_hex())
    }

    /// Evaluation keys for a server: relinearisation, the rotations asked for (default: this
    /// context's), conjugation if asked, and the bootstrapping circuit's keys (encapsulation
    /// keys included) if this context bootstraps and `bootstrapping` is true. `seeded`: store
    /// the seeded form (half the bytes; expanded on load). `progress(stage, done, total)`
    /// hears of every key generated; Ctrl-C stops the generation between keys.
    #[pyo3(signature = (rotations=None, conjugate=false, seeded=false, bootstrapping=true, progress=None))]
    fn evaluation_keys(
        &self,
        py: Python<'_>,
        rotations: Option<Vec<i64>>,
        conjugate: bool,
        seeded: bool,
        bootstrapping: bool,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<PyEvalKeys> {
        let (sk, _) = keys_of(self)?;
        let e = self.engine();
        let keys_for = KeysFor {
            rotations: rotations.unwrap_or_else(|| self.keys_for.rotations.clone()),
            conjugate,
            seeded,
        };
        let cfg = if bootstrapping { e.boot.as_ref().map(|b| b.cfg) } else { None };
        // The keys this context already holds, if they are the ones asked for: no second
        // generation (minutes and gigabytes at N = 2^16).
        let same = keys_for.rotations == self.keys_for.rotations
            && conjugate == self.keys_for.conjugate
            && seeded == self.keys_for.seeded
            && cfg.is_some() == e.boot.is_some()
            && e.eval.keys().relin.is_some(); // not after `without_evaluation_keys`
        if same {
            return Ok(PyEvalKeys {
                params: e.params.clone(),
                boot: e.boot.as_ref().map(|b| b.cfg),
                keys: e.eval.keys().clone(),
                encaps: e.boot.as_ref().and_then(|b| b.encaps.clone()),
            });
        }
        let progress = PyProgress::new(progress);
        py.allow_threads(|| {
            // The keys only: the circuit's shape names them, its diagonals are not needed.
            let (keys, boot) = make_keys(&e.params, sk, &keys_for, cfg.as_ref(), false, &progress)?;
            let encaps = boot.and_then(|b| b.encaps);
            let boot = e.boot.as_ref().map(|b| b.cfg);
            Ok(PyEvalKeys { params: e.params.clone(), boot, keys, encaps })
        })
    }

    /// The same client (parameters, key pair, what its keys were made for) holding no
    /// evaluation key and no encoded bootstrapping circuit: once its keys are with the
    /// servers, a client that only encrypts and decrypts frees their memory (gigabytes at
    /// N = 2^16). It still makes keys on request (`evaluation_keys`) and knows the circuit's
    /// shape (`bootstrap_input_scale`); its own homomorphic operations that need a key, and
    /// bootstrapping, fail naming what is missing.
    fn without_evaluation_keys(&self, py: Python<'_>) -> PyResult<PyCkks> {
        keys_of(self)?;
        let e = self.engine();
        let engine = py.allow_threads(|| {
            let eval = Evaluator::new(&e.params, EvaluationKeys::default()).map_err(err)?;
            let boot = match &e.boot {
                Some(b) => Some(Boot {
                    cfg: b.cfg,
                    bt: Arc::new(Bootstrapper::symbolic(&e.params, b.cfg).map_err(err)?),
                    encaps: None,
                }),
                None => None,
            };
            Ok::<_, PyErr>(PyServer::assemble(e.params.clone(), eval, boot))
        })?;
        Ok(PyCkks {
            engine: Py::new(py, engine)?,
            key_pair: self.key_pair.clone(),
            keys_for: self.keys_for.clone(),
        })
    }

    /// The public key (encrypts; no secret inside).
    fn public_key(&self) -> PyResult<PyKey> {
        let (_, pk) = keys_of(self)?;
        Ok(PyKey::new(&self.engine().params, KeyObj::Public(pk.clone())))
    }

    /// The secret key as bytes (its ternary coefficients, two bits each: 16 KiB at N = 2^16):
    /// the one way it leaves this process. Whoever holds them can decrypt everything encrypted
    /// under this key set.
    fn export_secret_key<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let (sk, _) = keys_of(self)?;
        Ok(PyBytes::new(py, &sk.export_bytes().map_err(err)?))
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
    #[pyo3(signature = (rotations, progress=None))]
    fn with_rotations(
        &self,
        py: Python<'_>,
        rotations: Vec<i64>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<PyCkks> {
        let mut keys_for = self.keys_for.clone();
        keys_for.rotations.extend(rotations);
        keys_for.rotations.sort_unstable();
        keys_for.rotations.dedup();
        let e = self.engine();
        let boot = e.boot.as_ref().map(|b| b.cfg);
        with_keys(py, e.params.clone(), self.key_pair.clone(), keys_for, boot, progress)
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
        let params = &self.engine().params;
        if self.key_pair.is_some() {
            return Err(err("encrypt_symbolic needs a symbolic context (symbolic=True)"));
        }
        if !slots.is_power_of_two() || slots > params.n() / 2 {
            return Err(err(format!(
                "slots must be a power of two of at most N/2 = {}, not {slots}",
                params.n() / 2
            )));
        }
        let level = level.unwrap_or(params.max_level());
        let mut ct = Ciphertext::symbolic(params, level).map_err(err)?;
        ct.set_scale(scale.unwrap_or(params.default_scale()));
        ct.set_slots(slots);
        Ok(ct.into())
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
        let (_, pk) = keys_of(self)?;
        let e = self.engine();
        let level = level_arg(&e.params, level)?;
        let scale = scale_arg(&e.params, scale, level)?;
        py.allow_threads(|| {
            let slots = v.len();
            let pt = e.encoder.encode(&v, slots, level, scale).map_err(err)?;
            let ct = encryptor::encrypt_pk(&e.params, &pt, pk).map_err(err)?;
            Ok(ct.into())
        })
    }

    /// Decrypt and decode to a complex128 vector of the ciphertext's slot count.
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        ct: &PyCiphertext,
    ) -> PyResult<Bound<'py, PyArray1<Complex64>>> {
        let (sk, _) = keys_of(self)?;
        let e = self.engine();
        let v = py.allow_threads(|| {
            let pt = encryptor::decrypt(&e.params, ct.inner(), sk).map_err(err)?;
            e.encoder.decode(&pt).map_err(err)
        })?;
        Ok(v.into_pyarray(py))
    }

    /// Load a ciphertext, validating it against this context's parameters (id, limb counts,
    /// every residue below its modulus) and key set: bad bytes raise `BasaltError`.
    fn ciphertext_from_bytes(&self, data: &[u8]) -> PyResult<PyCiphertext> {
        let id = self.key_pair.as_ref().map_or(KeyId::UNBOUND, |(sk, _)| sk.key_id());
        let ct = Ciphertext::from_bytes_for(&self.engine().params, id, data).map_err(err)?;
        Ok(ct.into())
    }

    /// Serialize the evaluation keys (relinearisation and Galois keys).
    fn evaluation_keys_to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let b = self.engine().eval.keys().to_bytes().map_err(err)?;
        Ok(PyBytes::new(py, &b))
    }

    /// Validate serialized evaluation keys against this context (raises `BasaltError` on any
    /// corruption); returns how many Galois keys they hold.
    fn check_evaluation_keys(&self, py: Python<'_>, data: &[u8]) -> PyResult<usize> {
        let data = data.to_vec();
        let mine = self.key_pair.as_ref().map_or(KeyId::UNBOUND, |(sk, _)| sk.key_id());
        let params = &self.engine().params;
        py.allow_threads(|| {
            let k = basalt_ckks::EvaluationKeys::from_bytes(params, &data).map_err(err)?;
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
