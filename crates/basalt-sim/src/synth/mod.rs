//! Closed-form kernel-stream generators.
//!
//! **These are not the library.** Basalt's traces come from the code that computes (STYLE.md
//! §3); these generators write down the kernel stream of an algorithm *as the paper states it*
//! (CraterLake Listing 1, Han–Ki hybrid key switching, Strix Algorithm 1), so that the model's
//! unit tests have small, exactly known streams to time, and so that a stream can be
//! cross-checked against the library's kernel counts (`basalt-repro`'s closed-form workloads).

pub mod ckks;
pub mod lintrans;
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
        Trace { events: self.events }
    }
}
