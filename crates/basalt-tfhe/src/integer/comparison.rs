//! Comparisons (`==`, `!=`, `<`, `<=`, `>`, `>=`, signed or unsigned by type) returning an
//! encrypted boolean, and `min`/`max`.
//!
//! # Algorithm
//! *Order*: each block pair gets a sign `s_i ∈ {LT, EQ, GT}` from one bootstrap of the linear
//! `a_i + m − b_i ∈ [1, 2m − 1]` (no packing needed); for a signed type the top pair compares as
//! two's-complement digits through a bivariate table on `a·m + b`. Signs reduce pairwise from
//! the top with the associative `hi ∘ lo = (hi = EQ ? lo : hi)` (a bivariate bootstrap on
//! `hi·m + lo`) in a tree of `⌈log2 B⌉` layers; the last layer's table also applies the
//! predicate, so the result is a 0/1 block with no extra bootstrap.
//! *Equality*: one bootstrap per block gives `[a_i = b_i]`; groups of up to `m + 1` such bits are
//! summed (a sum fits a block and its noise budget) and a bootstrap tests `sum = count`, until
//! one bit is left.
//!
//! # Source
//! TFHE-rs `integer` (`comparator.rs`: block signs and their tree reduction; equality by
//! summed block equalities), re-derived here.

use crate::integer::error::IntegerResult;
use crate::integer::radix::{Block, BoolCiphertext, RadixCiphertext};
use crate::integer::server::{IntegerServer, Job};
use crate::torus::Torus;

const LT: u64 = 0;
const EQ: u64 = 1;
const GT: u64 = 2;

/// An order predicate on the comparison of `a` with `b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    Lt,
    Le,
    Gt,
    Ge,
}

impl Order {
    fn holds(self, sign: u64) -> u64 {
        (match self {
            Order::Lt => sign == LT,
            Order::Le => sign != GT,
            Order::Gt => sign == GT,
            Order::Ge => sign != LT,
        }) as u64
    }
}

impl<T: Torus> IntegerServer<T> {
    /// Clean copies of both operands when their digits exceed one digit or a bootstrap's noise.
    fn clean_pair(
        &self,
        a: &RadixCiphertext<T>,
        b: &RadixCiphertext<T>,
    ) -> (RadixCiphertext<T>, RadixCiphertext<T>) {
        (self.clean(a), self.clean(b))
    }

    /// Compare `a` with `b` by `order` (signed types compare as signed).
    pub fn compare(
        &self,
        a: &RadixCiphertext<T>,
        b: &RadixCiphertext<T>,
        order: Order,
    ) -> IntegerResult<BoolCiphertext<T>> {
        self.check_pair(a, b)?;
        let (a, b) = self.clean_pair(a, b);
        let m = self.message_modulus();
        let nb = a.blocks.len();
        let d = self.delta();
        let sign = self.lut(|v| match v {
            _ if v < m => LT,
            _ if v == m => EQ,
            _ => GT,
        });
        let half = m / 2;
        let signed_digit = move |x: u64| x as i64 - if x >= half { m as i64 } else { 0 };
        let top_signed = self.lut2(move |x, y| match signed_digit(x).cmp(&signed_digit(y)) {
            std::cmp::Ordering::Less => LT,
            std::cmp::Ordering::Equal => EQ,
            std::cmp::Ordering::Greater => GT,
        });
        let jobs = a
            .blocks
            .iter()
            .zip(&b.blocks)
            .enumerate()
            .map(|(i, (x, y))| {
                if a.ty.signed && i + 1 == nb {
                    Job { input: self.pack(x, y), lut: &top_signed, degree: 2 }
                } else {
                    let diff = x.add(&y.clear_minus(m - 1, d)).add_clear(1, d);
                    Job { input: diff.ct, lut: &sign, degree: 2 }
                }
            })
            .collect();
        let signs = self.bootstrap_many(jobs);
        Ok(self.reduce_signs(signs, order))
    }

    /// Tree reduction of block signs (least significant first) to the predicate bit.
    fn reduce_signs(&self, mut signs: Vec<Block<T>>, order: Order) -> BoolCiphertext<T> {
        let combine = |hi: u64, lo: u64| if hi == EQ { lo } else { hi };
        if signs.len() == 1 {
            let last = self.lut(move |s| order.holds(s));
            let job = Job { input: signs[0].ct.clone(), lut: &last, degree: 1 };
            return BoolCiphertext { block: self.bootstrap_many(vec![job]).pop().expect("one") };
        }
        let inner = self.lut2(combine);
        let last = self.lut2(move |hi, lo| order.holds(combine(hi, lo)));
        while signs.len() > 1 {
            let final_layer = signs.len() == 2;
            let lut = if final_layer { &last } else { &inner };
            let degree = if final_layer { 1 } else { 2 };
            let jobs = signs
                .chunks(2)
                .filter(|c| c.len() == 2)
                .map(|c| Job { input: self.pack(&c[1], &c[0]), lut, degree })
                .collect();
            let mut next = self.bootstrap_many(jobs);
            if signs.len() % 2 == 1 {
                next.push(signs.pop().expect("odd leftover"));
            }
            signs = next;
        }
        BoolCiphertext { block: signs.pop().expect("one sign") }
    }

    /// `a == b` (`negate`: `a != b`).
    fn equality(
        &self,
        a: &RadixCiphertext<T>,
        b: &RadixCiphertext<T>,
        negate: bool,
    ) -> IntegerResult<BoolCiphertext<T>> {
        self.check_pair(a, b)?;
        let (a, b) = self.clean_pair(a, b);
        let m = self.message_modulus();
        let d = self.delta();
        let eq = self.lut(move |v| (v == m) as u64);
        let mut bits = self.bootstrap_many(
            a.blocks
                .iter()
                .zip(&b.blocks)
                .map(|(x, y)| Job {
                    input: x.add(&y.clear_minus(m - 1, d)).add_clear(1, d).ct,
                    lut: &eq,
                    degree: 1,
                })
                .collect(),
        );
        // Groups of g bits: the sum (≤ g) must stay below p and its noise within the budget.
        let g = (self.max_noise_level() as usize).min(self.plaintext_modulus() as usize - 1);
        let all_of: Vec<_> =
            (0..=g as u64).map(|k| self.lut(move |s| ((s == k) != negate) as u64)).collect();
        let all_of_inner: Vec<_> =
            (0..=g as u64).map(|k| self.lut(move |s| (s == k) as u64)).collect();
        loop {
            let final_layer = bits.len() <= g;
            let tables = if final_layer { &all_of } else { &all_of_inner };
            let jobs = bits
                .chunks(g)
                .map(|c| {
                    let s = c[1..].iter().fold(c[0].clone(), |acc, x| acc.add(x));
                    Job { input: s.ct, lut: &tables[c.len()], degree: 1 }
                })
                .collect();
            bits = self.bootstrap_many(jobs);
            if final_layer {
                return Ok(BoolCiphertext { block: bits.pop().expect("one bit") });
            }
        }
    }

    pub fn eq(
        &self,
        a: &RadixCiphertext<T>,
        b: &RadixCiphertext<T>,
    ) -> IntegerResult<BoolCiphertext<T>> {
        self.equality(a, b, false)
    }
    pub fn ne(
        &self,
        a: &RadixCiphertext<T>,
        b: &RadixCiphertext<T>,
    ) -> IntegerResult<BoolCiphertext<T>> {
        self.equality(a, b, true)
    }
    pub fn lt(
        &self,
        a: &RadixCiphertext<T>,
        b: &RadixCiphertext<T>,
    ) -> IntegerResult<BoolCiphertext<T>> {
        self.compare(a, b, Order::Lt)
    }
    pub fn le(
        &self,
        a: &RadixCiphertext<T>,
        b: &RadixCiphertext<T>,
    ) -> IntegerResult<BoolCiphertext<T>> {
        self.compare(a, b, Order::Le)
    }
    pub fn gt(
        &self,
        a: &RadixCiphertext<T>,
        b: &RadixCiphertext<T>,
    ) -> IntegerResult<BoolCiphertext<T>> {
        self.compare(a, b, Order::Gt)
    }
    pub fn ge(
        &self,
        a: &RadixCiphertext<T>,
        b: &RadixCiphertext<T>,
    ) -> IntegerResult<BoolCiphertext<T>> {
        self.compare(a, b, Order::Ge)
    }

    /// `min(a, b)`: `select(a < b, a, b)`.
    pub fn min(
        &self,
        a: &RadixCiphertext<T>,
        b: &RadixCiphertext<T>,
    ) -> IntegerResult<RadixCiphertext<T>> {
        self.check_pair(a, b)?;
        let (a, b) = self.clean_pair(a, b);
        let c = self.lt(&a, &b)?;
        self.select(&c, &a, &b)
    }

    /// `max(a, b)`: `select(a < b, b, a)`.
    pub fn max(
        &self,
        a: &RadixCiphertext<T>,
        b: &RadixCiphertext<T>,
    ) -> IntegerResult<RadixCiphertext<T>> {
        self.check_pair(a, b)?;
        let (a, b) = self.clean_pair(a, b);
        let c = self.lt(&a, &b)?;
        self.select(&c, &b, &a)
    }
}
