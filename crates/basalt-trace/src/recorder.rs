//! Thread-local, scoped recording of kernels and regions.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::kernel::{Kernel, KernelKind, KeyId};

/// A point in a program that stands for work recorded elsewhere (no kernel, no region).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Marker {
    /// One bootstrap, recorded separately and timed once per marker. A ResNet-20 inference or a
    /// sort bootstraps dozens to hundreds of times with one identical kernel stream, seconds to
    /// record at N = 2^16 each, so the workloads record each as a marker and a consumer (the
    /// simulator's `refresh`) adds the one recorded bootstrap per marker.
    Bootstrap,
}

/// A recorded event: a kernel, the opening/closing of a named region, a key identity or a
/// [`Marker`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "ev")]
pub enum Event {
    Kernel(Kernel),
    Enter {
        name: String,
    },
    Exit,
    /// The `KeyLoad` that follows reads key `key` (written by the recorder under a
    /// [`key_scope`]; metadata, not work).
    Key {
        key: KeyId,
    },
    /// Work recorded elsewhere stands here (JSON `{"ev":"Marker","marker":"bootstrap"}`).
    Marker {
        marker: Marker,
    },
}

/// A recorded stream of events.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    pub events: Vec<Event>,
}

impl Trace {
    /// The kernels alone, in order.
    pub fn kernels(&self) -> impl Iterator<Item = &Kernel> {
        self.events.iter().filter_map(|e| match e {
            Event::Kernel(k) => Some(k),
            _ => None,
        })
    }

    /// Work units per kernel kind (see [`Kernel::units`]).
    pub fn counts(&self) -> BTreeMap<KernelKind, u64> {
        let mut m = BTreeMap::new();
        for k in self.kernels() {
            *m.entry(k.kind()).or_insert(0) += k.units();
        }
        m
    }

    /// Units of one kind.
    pub fn count(&self, kind: KernelKind) -> u64 {
        self.kernels().filter(|k| k.kind() == kind).map(Kernel::units).sum()
    }

    /// How many `marker` events the trace holds.
    pub fn markers(&self, marker: Marker) -> usize {
        self.events
            .iter()
            .filter(|e| matches!(e, Event::Marker { marker: m } if *m == marker))
            .count()
    }

    /// The program's inputs: each `CtLoad` of an object the trace neither stored nor loaded
    /// before it (later reads of it, and reads of results, are the program's own traffic).
    pub fn input_loads(&self) -> Vec<&Kernel> {
        let mut seen = std::collections::HashSet::new();
        self.kernels()
            .filter(|k| match **k {
                Kernel::CtLoad { id, .. } => seen.insert(id),
                Kernel::CtStore { id, .. } => {
                    seen.insert(id);
                    false
                }
                _ => false,
            })
            .collect()
    }
}

thread_local! {
    static STACK: RefCell<Vec<Trace>> = const { RefCell::new(Vec::new()) };
    /// Per open recorder: object id (`CtLoad`/`CtStore`) → its dense id in that recording.
    static OBJECTS: RefCell<Vec<HashMap<u64, u64>>> = const { RefCell::new(Vec::new()) };
    static KEYS: RefCell<Vec<KeyId>> = const { RefCell::new(Vec::new()) };
    static ONCHIP_PLAINTEXTS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Run `f` with a recorder open on this thread; return its result and what it emitted.
/// Recorders nest: an inner recording does not leak into the outer one.
pub fn record<R>(f: impl FnOnce() -> R) -> (R, Trace) {
    // Closes the recorder even if `f` panics, so the thread stays usable.
    struct Scope(bool);
    impl Drop for Scope {
        fn drop(&mut self) {
            if self.0 {
                end();
            }
        }
    }
    begin();
    let mut scope = Scope(true);
    let r = f();
    scope.0 = false;
    let t = end().expect("the recorder opened above is still open");
    (r, t)
}

/// Open a recorder on this thread, to be closed by [`end`]. For callers that cannot pass a
/// closure to [`record`]: a Python `with` block opens and closes the recording in two calls
/// into the library. Prefer [`record`] in Rust, which cannot leave a recorder open.
pub fn begin() {
    STACK.with(|s| s.borrow_mut().push(Trace::default()));
    OBJECTS.with(|o| o.borrow_mut().push(HashMap::new()));
}

/// Close the innermost recorder opened by [`begin`] and return what it recorded; `None` when
/// no recorder is open on this thread.
pub fn end() -> Option<Trace> {
    OBJECTS.with(|o| o.borrow_mut().pop());
    STACK.with(|s| s.borrow_mut().pop())
}

/// True when a recorder is open on this thread.
#[inline]
pub fn is_recording() -> bool {
    STACK.with(|s| !s.borrow().is_empty())
}

/// Report a kernel to the innermost open recorder, if any. Inside a [`key_scope`], a
/// `KeyLoad` is preceded by an [`Event::Key`] naming the key; inside a
/// [`plaintexts_on_chip`] scope a `PlainLoad` is dropped. The object ids of `CtLoad` and
/// `CtStore` are renumbered densely in order of first appearance in the recording (see
/// [`crate::ObjectId`]).
#[inline]
pub fn emit(mut k: Kernel) {
    if matches!(k, Kernel::PlainLoad { .. }) && ONCHIP_PLAINTEXTS.with(|c| c.get()) > 0 {
        return;
    }
    if let Kernel::CtLoad { id, .. } | Kernel::CtStore { id, .. } = &mut k {
        OBJECTS.with(|o| {
            if let Some(map) = o.borrow_mut().last_mut() {
                let next = map.len() as u64;
                *id = *map.entry(*id).or_insert(next);
            }
        });
    }
    STACK.with(|s| {
        if let Some(t) = s.borrow_mut().last_mut() {
            if matches!(k, Kernel::KeyLoad { .. })
                && let Some(key) = KEYS.with(|keys| keys.borrow().last().copied())
            {
                t.events.push(Event::Key { key });
            }
            t.events.push(Event::Kernel(k));
        }
    });
}

/// Ends its key scope when dropped.
pub struct KeyScope {
    active: bool,
}

impl Drop for KeyScope {
    fn drop(&mut self) {
        if self.active {
            KEYS.with(|k| k.borrow_mut().pop());
        }
    }
}

/// Name the key that `KeyLoad`s emitted until the guard drops read. The evaluator knows which
/// key an operation uses (relinearisation, the Galois element of a rotation); the key-switching
/// code that emits the load does not need to, so the identity travels by scope. Scopes nest
/// (the innermost wins); outside a recording this is a no-op.
#[must_use = "the key scope ends when the guard is dropped"]
pub fn key_scope(key: KeyId) -> KeyScope {
    let active = is_recording();
    if active {
        KEYS.with(|k| k.borrow_mut().push(key));
    }
    KeyScope { active }
}

/// Ends its on-chip-plaintext scope when dropped.
pub struct OnChipPlaintexts(());

impl Drop for OnChipPlaintexts {
    fn drop(&mut self) {
        ONCHIP_PLAINTEXTS.with(|c| c.set(c.get() - 1));
    }
}

/// The plaintexts that operations read until the guard drops were generated on chip (OF-Limb:
/// extended from one stored limb, whose `PlainLoad` the generator emitted), so the operations'
/// own full-limb `PlainLoad`s are not recorded. The evaluator that emits the load cannot know
/// where the caller's plaintext came from, so this travels by scope, like [`key_scope`].
#[must_use = "the scope ends when the guard is dropped"]
pub fn plaintexts_on_chip() -> OnChipPlaintexts {
    ONCHIP_PLAINTEXTS.with(|c| c.set(c.get() + 1));
    OnChipPlaintexts(())
}

/// Closes its region when dropped.
pub struct RegionGuard {
    active: bool,
}

impl Drop for RegionGuard {
    fn drop(&mut self) {
        if self.active {
            STACK.with(|s| {
                if let Some(t) = s.borrow_mut().last_mut() {
                    t.events.push(Event::Exit);
                }
            });
        }
    }
}

/// Record `marker` in the innermost open recorder, if any (see [`Marker`]).
pub fn mark(marker: Marker) {
    STACK.with(|s| {
        if let Some(t) = s.borrow_mut().last_mut() {
            t.events.push(Event::Marker { marker });
        }
    });
}

/// Open a named region until the returned guard is dropped.
#[must_use = "the region closes when the guard is dropped"]
pub fn region(name: &str) -> RegionGuard {
    let active = STACK.with(|s| {
        if let Some(t) = s.borrow_mut().last_mut() {
            t.events.push(Event::Enter { name: name.to_string() });
            true
        } else {
            false
        }
    });
    RegionGuard { active }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ElemOp;

    #[test]
    fn begin_and_end_record_as_a_closure_does() {
        let work = || {
            emit(Kernel::Ntt { n: 8, limbs: 2 });
            let _r = region("r");
            emit(Kernel::BConv { n: 8, from: 2, to: 3 });
        };
        let ((), closed) = record(work);
        begin();
        work();
        let opened = end();
        assert_eq!(opened.as_ref(), Some(&closed));
        assert_eq!(closed.count(KernelKind::BConv), 48);
        assert!(end().is_none(), "nothing is left open");
        assert!(!is_recording());
    }

    #[test]
    fn a_panicking_program_leaves_no_recorder_open() {
        let r = std::panic::catch_unwind(|| record(|| -> u8 { panic!("boom") }));
        assert!(r.is_err());
        assert!(!is_recording());
    }

    #[test]
    fn records_only_inside_scope_and_nests() {
        emit(Kernel::Ntt { n: 8, limbs: 1 });
        let ((), outer) = record(|| {
            let _r = region("outer");
            emit(Kernel::Ntt { n: 8, limbs: 2 });
            let ((), inner) = record(|| emit(Kernel::Intt { n: 8, limbs: 3 }));
            assert_eq!(inner.count(KernelKind::Intt), 3);
            emit(Kernel::BConv { n: 8, from: 2, to: 3 });
        });
        assert_eq!(outer.count(KernelKind::Ntt), 2);
        assert_eq!(outer.count(KernelKind::Intt), 0);
        assert_eq!(outer.count(KernelKind::BConv), 48);
        assert_eq!(outer.events.first(), Some(&Event::Enter { name: "outer".into() }));
        assert_eq!(outer.events.last(), Some(&Event::Exit));
        assert!(!is_recording());
        let _ = ElemOp::Add;
    }

    #[test]
    fn key_scopes_name_key_loads_only() {
        let load = Kernel::KeyLoad { n: 8, limbs: 2, digits: 1, seeded: false };
        let ((), t) = record(|| {
            emit(load.clone()); // no scope: anonymous
            let _g = key_scope(KeyId::Galois { element: 5 });
            emit(Kernel::Ntt { n: 8, limbs: 1 });
            emit(load.clone());
            {
                let _r = key_scope(KeyId::Relin);
                emit(load.clone());
            }
            emit(load.clone());
        });
        let g5 = Event::Key { key: KeyId::Galois { element: 5 } };
        let relin = Event::Key { key: KeyId::Relin };
        let l = Event::Kernel(load);
        assert_eq!(
            t.events,
            vec![
                l.clone(),
                Event::Kernel(Kernel::Ntt { n: 8, limbs: 1 }),
                g5.clone(),
                l.clone(),
                relin,
                l.clone(),
                g5,
                l
            ]
        );
        // Outside a recording a scope is inert and leaves nothing behind.
        drop(key_scope(KeyId::Relin));
        let ((), t) = record(|| emit(Kernel::KeyLoad { n: 8, limbs: 1, digits: 1, seeded: true }));
        assert_eq!(t.events.len(), 1);
        let s = serde_json::to_string(&t.events).unwrap();
        assert!(!s.contains("\"Key\""));
        // The JSON form other tools read.
        let ((), t) = record(|| {
            let _g = key_scope(KeyId::Galois { element: 5 });
            emit(Kernel::KeyLoad { n: 8, limbs: 1, digits: 1, seeded: false });
        });
        let s = serde_json::to_string(&t.events[0]).unwrap();
        assert_eq!(s, r#"{"ev":"Key","key":{"kind":"galois","element":5}}"#);
        let back: Event = serde_json::from_str(&s).unwrap();
        assert_eq!(back, t.events[0]);
    }

    #[test]
    fn on_chip_plaintext_scopes_drop_plaintext_loads_only() {
        let pt = Kernel::PlainLoad { n: 8, limbs: 3 };
        let ntt = Kernel::Ntt { n: 8, limbs: 3 };
        let ((), t) = record(|| {
            emit(pt.clone());
            {
                let _g = plaintexts_on_chip();
                let _h = plaintexts_on_chip(); // nests
                emit(pt.clone());
                emit(ntt.clone());
            }
            emit(pt.clone());
        });
        let k = |k: &Kernel| Event::Kernel(k.clone());
        assert_eq!(t.events, vec![k(&pt), k(&ntt), k(&pt)]);
    }

    #[test]
    fn input_loads_are_first_reads_of_unstored_objects() {
        let ct = |id, load| {
            let (n, limbs, polys) = (8, 1, 2);
            if load {
                Kernel::CtLoad { n, limbs, polys, id }
            } else {
                Kernel::CtStore { n, limbs, polys, id }
            }
        };
        let ((), t) = record(|| {
            for (id, load) in [(7, true), (7, true), (8, false), (8, true), (9, true)] {
                emit(ct(id, load));
            }
        });
        // Renumbered: 7 -> 0, 8 -> 1, 9 -> 2.
        assert_eq!(t.input_loads(), [&ct(0, true), &ct(2, true)]);
    }

    #[test]
    fn markers_are_recorded_inside_a_recording_only() {
        mark(Marker::Bootstrap); // no recorder: nothing to write to
        let ((), t) = record(|| {
            emit(Kernel::Ntt { n: 8, limbs: 1 });
            mark(Marker::Bootstrap);
            let _r = region("r");
            mark(Marker::Bootstrap);
        });
        assert_eq!(t.markers(Marker::Bootstrap), 2);
        assert_eq!(t.events[1], Event::Marker { marker: Marker::Bootstrap });
        let s = serde_json::to_string(&t.events[1]).unwrap();
        assert_eq!(s, r#"{"ev":"Marker","marker":"bootstrap"}"#);
        assert_eq!(serde_json::from_str::<Event>(&s).unwrap(), t.events[1]);
        assert!(serde_json::from_str::<Event>(r#"{"ev":"Marker","marker":"nap"}"#).is_err());
    }

    #[test]
    fn serde_round_trip() {
        let ((), t) = record(|| emit(Kernel::Elem { n: 16, limbs: 4, op: ElemOp::MulAcc }));
        let s = serde_json::to_string(&t).unwrap();
        let back: Trace = serde_json::from_str(&s).unwrap();
        assert_eq!(back, t);
    }
}
