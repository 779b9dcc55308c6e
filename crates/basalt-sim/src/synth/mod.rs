//! Closed-form kernel-stream generators.
//!
//! **These are not the library.** Basalt's traces should come from the code that computes
//! (STYLE.md §3); until the CKKS and TFHE libraries emit traces, these generators write down the
//! kernel stream of an algorithm *as the paper states it* (CraterLake Listing 1, Han–Ki hybrid
//! key switching, Strix Algorithm 1), so that unit tests and paper-table reproductions have
//! something to run. When a library trace exists for a row, the reproduction should switch to it
//! and the generator becomes a cross-check (equal kernel counts).

pub mod ckks;
pub mod tfhe;

use basalt_trace::{Event, Kernel, Trace};

/// A tiny builder: kernels and balanced regions.
#[derive(Default)]
pub struct Builder {
    events: Vec<Event>,
}

impl Builder {
    pub fn new() -> Builder {
        Builder::default()
    }

    pub fn k(&mut self, k: Kernel) -> &mut Builder {
        self.events.push(Event::Kernel(k));
        self
    }

    /// Run `f` inside region `name`.
    pub fn region(&mut self, name: &str, f: impl FnOnce(&mut Builder)) -> &mut Builder {
        self.events.push(Event::Enter { name: name.into() });
        f(self);
        self.events.push(Event::Exit);
        self
    }

    pub fn extend(&mut self, t: Trace) -> &mut Builder {
        self.events.extend(t.events);
        self
    }

    pub fn build(self) -> Trace {
        Trace {
            events: self.events,
        }
    }
}
