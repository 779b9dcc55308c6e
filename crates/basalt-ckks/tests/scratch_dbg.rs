mod common;
use basalt_ckks::encryptor::decrypt;
use common::*;

#[test]
fn dbg() {
    let c = setup(toy(12, 3, 2, 2), &[1], false);
    let v = random_values(c.params.max_slots(), 3);
    let ct = c.encrypt(&v, 3);
    let ring = c.params.ring();
    let r = c.eval.rotate(&ct, 1).unwrap();
    let g = ring.galois_element_for_rotation(1);
    let pa = decrypt(&c.params, &ct, &c.sk).unwrap();
    let pr = decrypt(&c.params, &r, &c.sk).unwrap();
    let mut x = ring.automorphism(pa.poly(), g);
    ring.sub_assign(&mut x, pr.poly());
    ring.intt_assign(&mut x);
    let e = ring.to_f64_centered(&x);
    let m = e.iter().fold(0.0f64, |a, b| a.max(b.abs()));
    println!("max |phi(dec) - dec(rot)| = {m} ({:.1} bits)", m.log2());
    let mut y = pa.poly().clone();
    ring.intt_assign(&mut y);
    let f = ring.to_f64_centered(&y);
    println!("max |m| = {:.1} bits", f.iter().fold(0.0f64, |a, b| a.max(b.abs())).log2());
    println!("fresh {}", c.precision(&v, &ct));
    println!("rot {}", c.precision(&rot(&v, 1), &r));
    // Direct: decode(phi(pa)) vs rot(v)
    let mut pa2 = pa.clone();
    let _ = &mut pa2;
    let phi = ring.automorphism(pa.poly(), g);
    let mut tmp = ring.automorphism(pa.poly(), g);
    ring.intt_assign(&mut tmp);
    let coeffs = ring.to_f64_centered(&tmp);
    let dec = c.enc.unembed(&coeffs, c.params.max_slots(), pa.scale());
    println!("phi(plain) {}", basalt_ckks::PrecisionStats::new(&rot(&v, 1), &dec));
    let _ = phi;
}
