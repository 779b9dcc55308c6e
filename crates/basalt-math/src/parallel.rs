//! Inner parallelism switch: one operation's limbs across the pool, or the whole operation on
//! the calling thread.
//!
//! Every kernel splits its limbs over the rayon pool (one task per limb above a size
//! threshold). That is what a single large operation wants. A server that processes many
//! independent ciphertexts wants the opposite: one ciphertext per task and no splitting
//! inside it, so each core streams its own operands with no fork-join point and no
//! cross-core traffic. [`sequential`] runs a closure in that mode on the calling thread: the
//! kernels it reaches read [`min_len`] and do not split (`with_min_len(usize::MAX)` makes a
//! rayon iterator one job that runs where it is called). The results are identical either way:
//! the arithmetic is exact and does not depend on how the limbs are scheduled.

use std::cell::Cell;

thread_local! {
    static SEQUENTIAL: Cell<bool> = const { Cell::new(false) };
}

/// Run `f` with the kernels' inner parallelism off on this thread (nested calls are fine).
pub fn sequential<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            SEQUENTIAL.with(|s| s.set(self.0));
        }
    }
    let _restore = Restore(SEQUENTIAL.with(|s| s.replace(true)));
    f()
}

/// True unless the calling thread is inside [`sequential`].
#[inline]
pub fn inner_parallel() -> bool {
    !SEQUENTIAL.with(Cell::get)
}

/// The minimum length a kernel's parallel iterator may be split to: 1 normally,
/// `usize::MAX` (never split) inside [`sequential`].
#[inline]
pub fn min_len() -> usize {
    if inner_parallel() { 1 } else { usize::MAX }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    #[test]
    fn sequential_keeps_work_on_the_calling_thread_and_restores() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        pool.install(|| {
            assert!(inner_parallel());
            let me = rayon::current_thread_index();
            let seen: Vec<Option<usize>> = sequential(|| {
                assert!(!inner_parallel());
                sequential(|| assert!(!inner_parallel()));
                assert!(!inner_parallel());
                (0..64)
                    .into_par_iter()
                    .with_min_len(min_len())
                    .map(|_| rayon::current_thread_index())
                    .collect()
            });
            assert!(seen.iter().all(|&t| t == me));
            assert!(inner_parallel());
        });
    }
}
