//! Parameters and keys as objects: the parameter set (JSON), the evaluation-key set a server is
//! built from, and each key of it on its own (public, relinearisation, one rotation step,
//! conjugation, the bootstrapping circuit's encapsulation keys). Each serializes to bytes and
//! validates on load against the parameters: checksum, shape, kind and key identity.

use basalt_circuits::bootstrap::{BootstrapConfig, Bootstrapper, Encapsulation};
use basalt_ckks::{
    EvaluationKeys, GaloisKey, KeyId, Parameters, ParametersLiteral, PublicKey, RelinKey, SecretKey,
};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::err;

/// The parameters of a context (and its bootstrapping configuration), without any key: what a
/// server is built from together with the evaluation keys. Serializes to JSON.
#[pyclass(module = "basalt._basalt", name = "CkksParameters", frozen)]
#[derive(Clone)]
pub struct PyParams {
    pub(crate) params: Parameters,
    pub(crate) boot: Option<BootstrapConfig>,
}

impl PyParams {
    /// The circuit's shape without its encoded diagonals (milliseconds where the circuit takes
    /// seconds and gigabytes at N = 2^16): enough to validate the configuration and list the
    /// rotation keys it needs.
    pub(crate) fn shape(&self) -> PyResult<Option<Bootstrapper>> {
        self.boot.map(|cfg| Bootstrapper::symbolic(&self.params, cfg).map_err(err)).transpose()
    }

    /// The bootstrapping configuration `what` (some bootstrapping keys) needs, or the error
    /// that these parameters do not bootstrap.
    fn bootstrapping(&self, what: &str) -> PyResult<&BootstrapConfig> {
        self.boot
            .as_ref()
            .ok_or_else(|| err(format!("{what}, but the parameters do not bootstrap")))
    }

    /// Load the circuit's encapsulation keys (`what`, for the errors) from `data`: the
    /// parameters must bootstrap with an ephemeral secret, whose weight shapes the keys.
    fn encapsulation(&self, what: &str, data: &[u8]) -> PyResult<Encapsulation> {
        encaps_from_bytes(self, self.bootstrapping(what)?, data)
    }
}

#[derive(serde::Serialize, serde::Deserialize)]
struct ParamsWire {
    literal: ParametersLiteral,
    bootstrapping: Option<BootstrapConfig>,
}

#[pymethods]
impl PyParams {
    /// The parameter set's name: the one definition, which client contexts and servers report
    /// through their `parameters()`.
    #[getter]
    fn name(&self) -> String {
        self.params.name().to_string()
    }
    /// Whether the parameters carry a bootstrapping circuit (an engine bootstraps if, besides,
    /// its keys serve it: `CkksServer.can_bootstrap`).
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
        let p =
            PyParams { params: Parameters::new(w.literal).map_err(err)?, boot: w.bootstrapping };
        // The circuit's shape checks the configuration; encoding its diagonals (seconds and
        // gigabytes at N = 2^16) is left to whoever bootstraps.
        p.shape()?;
        Ok(p)
    }
    fn __repr__(&self) -> String {
        format!("CkksParameters({:?}, bootstrapping={})", self.params.name(), self.boot.is_some())
    }
    /// The secret key exported as `data` (`Context.export_secret_key()`, two bits a
    /// coefficient) as the library holds it in memory: its residues modulo every prime, NTT
    /// domain, little-endian `u64` words. What a search of a process's memory for the secret
    /// looks for; it holds nothing `data` does not. Validated like any load.
    #[pyo3(name = "_secret_key_residues")]
    fn secret_key_residues<'py>(
        &self,
        py: Python<'py>,
        data: &[u8],
    ) -> PyResult<Bound<'py, PyBytes>> {
        let sk = SecretKey::from_bytes(&self.params, data).map_err(err)?;
        let words = sk.poly().data();
        // Written straight into the Python object: no other copy to erase.
        PyBytes::new_with(py, 8 * words.len(), |out| {
            for (o, w) in out.chunks_exact_mut(8).zip(words) {
                o.copy_from_slice(&w.to_le_bytes());
            }
            Ok(())
        })
    }
}

/// Evaluation keys of one key set (no secret): relinearisation, rotations, conjugation and,
/// for a bootstrapping context, the circuit's keys and encapsulation keys.
#[pyclass(module = "basalt._basalt", name = "CkksEvaluationKeys", frozen)]
#[derive(Clone)]
pub struct PyEvalKeys {
    pub(crate) params: Parameters,
    /// The parameters' bootstrapping configuration (whether or not these keys serve it).
    pub(crate) boot: Option<BootstrapConfig>,
    pub(crate) keys: EvaluationKeys,
    pub(crate) encaps: Option<Encapsulation>,
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
    conjugate: Option<bool>,
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
    // A bootstrapping server needs the circuit's keys whatever the program lists.
    // Only the circuit's rotation steps are read: its shape has them.
    if let (Some(s), Some(bt)) = (steps.as_mut(), p.shape()?) {
        s.extend(bt.rotations());
        conjugate = Some(true);
    }
    let keys = EvaluationKeys::from_bytes_selected(&p.params, a, steps.as_deref(), conjugate)
        .map_err(err)?
        .expanded(&p.params)
        .map_err(err)?;
    let encaps = if b.is_empty() {
        None
    } else {
        Some(p.encapsulation("evaluation keys: encapsulation keys", b)?)
    };
    if let Some(e) = &encaps {
        let id = keys.key_id().map_err(err)?.unwrap_or(KeyId::UNBOUND);
        id.join(e.key_id(), "the encapsulation keys").map_err(err)?;
    }
    Ok(PyEvalKeys { params: p.params.clone(), boot: p.boot, keys, encaps })
}

/// The circuit's encapsulation keys from `b`: the configuration must have an ephemeral secret,
/// whose weight shapes the keys.
pub(crate) fn encaps_from_bytes(
    p: &PyParams,
    cfg: &BootstrapConfig,
    b: &[u8],
) -> PyResult<Encapsulation> {
    let h = cfg.ephemeral_h.ok_or_else(|| {
        err("evaluation keys: encapsulation keys for a circuit without an ephemeral secret")
    })?;
    Encapsulation::from_bytes(&p.params, h, b).map_err(err)
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
    /// the bootstrapping circuit's, if the parameters bootstrap) are decoded and kept. The
    /// conjugation key: `None` keeps it when present, `True` requires it, `False` drops it.
    #[staticmethod]
    #[pyo3(signature = (params, data, rotations=None, conjugate=None))]
    fn from_bytes(
        py: Python<'_>,
        params: &PyParams,
        data: &[u8],
        rotations: Option<Vec<i64>>,
        conjugate: Option<bool>,
    ) -> PyResult<PyEvalKeys> {
        // `data` borrows an immutable `bytes` the call keeps alive: no copy of gigabytes.
        py.allow_threads(|| evk_from_bytes(params, data, rotations.as_deref(), conjugate))
    }
    /// Only the relinearisation key, the rotation keys for `steps` and (if asked) the
    /// conjugation key; with `bootstrapping`, also every key the bootstrapping circuit needs
    /// (its rotation keys, the conjugation key, its encapsulation keys). A key asked for and
    /// not held is an error naming it.
    #[pyo3(signature = (steps, conjugate=false, bootstrapping=false))]
    fn select(
        &self,
        steps: Vec<i64>,
        conjugate: bool,
        bootstrapping: bool,
    ) -> PyResult<PyEvalKeys> {
        let (mut steps, mut conjugate) = (steps, conjugate);
        let encaps = if bootstrapping {
            let what = "select(bootstrapping=True)";
            let cfg =
                self.boot.ok_or_else(|| err(format!("{what}: the parameters do not bootstrap")))?;
            // The circuit's shape names its keys; its diagonals are not needed.
            let shape = Bootstrapper::symbolic(&self.params, cfg).map_err(err)?;
            steps.extend(shape.rotations());
            conjugate = true;
            if cfg.ephemeral_h.is_some() && self.encaps.is_none() {
                return Err(err(format!(
                    "{what}: these keys hold no bootstrapping keys (the circuit's encapsulation \
                     keys)"
                )));
            }
            self.encaps.clone()
        } else {
            None
        };
        let keys = self.keys.select(&self.params, &steps, conjugate).map_err(err)?;
        Ok(PyEvalKeys { params: self.params.clone(), boot: self.boot, keys, encaps })
    }

    /// The relinearisation key.
    fn relinearization(&self) -> PyResult<PyKey> {
        let r =
            self.keys.relin.clone().ok_or_else(|| err("these keys hold no relinearization key"))?;
        Ok(PyKey::new(&self.params, KeyObj::Relin(r)))
    }
    /// The key of the left rotation by `step`.
    fn rotation(&self, step: i64) -> PyResult<PyKey> {
        let g = self.params.ring().galois_element_for_rotation(step);
        if g == 1 {
            return Err(err(format!(
                "a rotation by {step} is the identity on {} slots: it needs no key",
                self.params.max_slots()
            )));
        }
        let k = self.keys.galois.get(&g).ok_or_else(|| {
            err(basalt_ckks::CkksError::MissingRotationKey { rotation: step, galois: g })
        })?;
        Ok(PyKey::new(&self.params, KeyObj::Galois(k.clone())))
    }
    /// The conjugation key, if held.
    fn conjugation(&self) -> Option<PyKey> {
        let g = self.params.ring().galois_element_conjugate();
        self.keys.galois.get(&g).map(|k| PyKey::new(&self.params, KeyObj::Galois(k.clone())))
    }
    /// The bootstrapping circuit's encapsulation keys (the switches to the sparse ephemeral
    /// secret and back), if held. The circuit's rotation keys are ordinary rotation keys.
    fn bootstrapping(&self) -> Option<PyKey> {
        self.encaps.clone().map(|e| PyKey::new(&self.params, KeyObj::Encapsulation(Box::new(e))))
    }

    /// An evaluation-key set from single keys (e.g. loaded one file each): at most one
    /// relinearisation key and one set of encapsulation keys, any rotation and conjugation
    /// keys; all of `params` and of one key set, else `BasaltError` naming both identities.
    #[staticmethod]
    fn assemble(params: &PyParams, keys: Vec<PyRef<'_, PyKey>>) -> PyResult<PyEvalKeys> {
        let mut out = EvaluationKeys::default();
        let mut encaps = None;
        let mut id = KeyId::UNBOUND;
        for k in &keys {
            if k.params_id != params.params.id() {
                return Err(err(format!("a {} key belongs to another parameter set", k.kind())));
            }
            id = id.join(k.identity(), "a key of the set").map_err(err)?;
            match &k.key {
                KeyObj::Relin(r) => {
                    if out.relin.replace(r.clone()).is_some() {
                        return Err(err("two relinearization keys"));
                    }
                }
                KeyObj::Galois(g) => {
                    out.galois.insert(g.galois, g.clone());
                }
                KeyObj::Encapsulation(e) => {
                    params.bootstrapping("bootstrapping keys")?;
                    if encaps.replace(e.as_ref().clone()).is_some() {
                        return Err(err("two sets of bootstrapping keys"));
                    }
                }
                KeyObj::Public(_) => {
                    return Err(err("a public key is not an evaluation key (it encrypts)"));
                }
            }
        }
        let keys = out.expanded(&params.params).map_err(err)?;
        Ok(PyEvalKeys { params: params.params.clone(), boot: params.boot, keys, encaps })
    }
}

/// One key, typed by what it does.
#[derive(Clone)]
pub(crate) enum KeyObj {
    Public(PublicKey),
    Relin(RelinKey),
    /// A rotation key or the conjugation key (both are Galois keys).
    Galois(GaloisKey),
    Encapsulation(Box<Encapsulation>),
}

/// A single key of a key set: serializes to bytes, validates on load (checksum, shape, kind
/// and parameter set), carries the identity of its key set.
#[pyclass(module = "basalt._basalt", name = "CkksKey", frozen)]
#[derive(Clone)]
pub struct PyKey {
    key: KeyObj,
    params_id: u64,
    slots: usize,
    /// The rotation step of a rotation key (left, in `1..slots`).
    step: Option<i64>,
    conjugation: bool,
}

impl PyKey {
    pub(crate) fn new(params: &Parameters, key: KeyObj) -> PyKey {
        let ring = params.ring();
        let (step, conjugation) = match &key {
            KeyObj::Galois(g) => {
                let conj = g.galois == ring.galois_element_conjugate();
                let step = (1..params.max_slots() as i64)
                    .find(|&k| ring.galois_element_for_rotation(k) == g.galois);
                (step.filter(|_| !conj), conj)
            }
            _ => (None, false),
        };
        PyKey { key, params_id: params.id(), slots: params.max_slots(), step, conjugation }
    }

    fn identity(&self) -> KeyId {
        match &self.key {
            KeyObj::Public(k) => k.key_id(),
            KeyObj::Relin(k) => k.key.key_id(),
            KeyObj::Galois(k) => k.key.key_id(),
            KeyObj::Encapsulation(e) => e.key_id(),
        }
    }
}

#[pymethods]
impl PyKey {
    /// `public`, `relinearization`, `rotation`, `conjugation` or `bootstrapping`.
    #[getter]
    fn kind(&self) -> &'static str {
        match &self.key {
            KeyObj::Public(_) => "public",
            KeyObj::Relin(_) => "relinearization",
            KeyObj::Galois(_) if self.conjugation => "conjugation",
            KeyObj::Galois(_) => "rotation",
            KeyObj::Encapsulation(_) => "bootstrapping",
        }
    }
    /// The key set it belongs to (32 hex digits).
    #[getter]
    fn key_id(&self) -> String {
        self.identity().to_hex()
    }
    /// The rotation step of a rotation key (left, in `1..slots`), else `None`.
    #[getter]
    fn step(&self) -> Option<i64> {
        self.step
    }
    /// The Galois element of a rotation or conjugation key, else `None`.
    #[getter]
    fn galois_element(&self) -> Option<u64> {
        match &self.key {
            KeyObj::Galois(g) => Some(g.galois),
            _ => None,
        }
    }
    /// Whether it is stored in seeded form (half the bytes; expanded when a server loads it).
    #[getter]
    fn seeded(&self) -> bool {
        let m = match &self.key {
            KeyObj::Relin(r) => &r.key,
            KeyObj::Galois(g) => &g.key,
            _ => return false,
        };
        matches!(m, basalt_ckks::KeyMaterial::Seeded(_))
    }
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let b = py.allow_threads(|| match &self.key {
            KeyObj::Public(k) => k.to_bytes().map_err(err),
            KeyObj::Relin(k) => k.to_bytes().map_err(err),
            KeyObj::Galois(k) => k.to_bytes().map_err(err),
            KeyObj::Encapsulation(e) => e.to_bytes().map_err(err),
        })?;
        Ok(PyBytes::new(py, &b))
    }
    /// Load a key of `kind` for `params`: corrupted bytes, a key of another kind or parameter
    /// set raise `BasaltError` naming the problem.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, params: &PyParams, kind: &str, data: &[u8]) -> PyResult<PyKey> {
        let p = &params.params;
        let key = py.allow_threads(|| -> PyResult<KeyObj> {
            Ok(match kind {
                "public" => KeyObj::Public(PublicKey::from_bytes(p, data).map_err(err)?),
                "relinearization" => KeyObj::Relin(RelinKey::from_bytes(p, data).map_err(err)?),
                "rotation" | "conjugation" => {
                    KeyObj::Galois(GaloisKey::from_bytes(p, data).map_err(err)?)
                }
                "bootstrapping" => KeyObj::Encapsulation(Box::new(
                    params.encapsulation("bootstrapping keys", data)?,
                )),
                other => return Err(err(format!("unknown key kind {other:?}"))),
            })
        })?;
        let k = PyKey::new(p, key);
        if k.kind() != kind {
            return Err(err(format!("the bytes hold a {} key, not a {kind} key", k.kind())));
        }
        Ok(k)
    }
    fn __repr__(&self) -> String {
        let what = match (self.step, self.kind()) {
            (Some(s), _) => format!("rotation by {s}"),
            (None, k) => k.to_string(),
        };
        format!("CkksKey({what}, key_id={}, slots={})", self.key_id(), self.slots)
    }
}
