//! RNS basis changes: fast base conversion ([`BConv`]) and the ModChange family built on it.
//!
//! Osiris (§II) describes ModUp, ModDown and Rescale as one primitive, ModChange = INTT → BConv →
//! NTT; here too they share one implementation (`mod_change::divide_round`).

mod avx2;
mod bconv;
mod mod_change;
mod simd;

pub use bconv::{BConv, BConvInput, BConvMode};
pub use mod_change::{
    mod_down, mod_down_add, mod_down_automorphism, mod_down_rescale, mod_up, mod_up_with, rescale,
};
