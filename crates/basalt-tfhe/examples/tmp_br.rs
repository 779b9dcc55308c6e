use basalt_tfhe::blind_rotate::shape_of;
use basalt_tfhe::external_product::{ExternalProductWorkspace, cmux_rotate};
use basalt_tfhe::fft::fft_for;
use basalt_tfhe::random::Csprng;
use basalt_tfhe::{ClientKey, TfheParams};
use std::time::Instant;
fn main() {
    let params = TfheParams::preset("2_2", false).unwrap();
    let mut rng = Csprng::from_seed(1);
    let ck = ClientKey::<u64>::with_rng(&params, &mut rng).unwrap();
    let sk = ck.server_key_with(&mut rng);
    let bsk = sk.bsk();
    let fft = fft_for(2048);
    let shape = shape_of(bsk);
    let mut ws = ExternalProductWorkspace::<u64>::new(&fft, 1, 1);
    let mut acc = vec![0u64; 4096];
    rng.fill_uniform(&mut acc);
    let mut diff = vec![0u64; 4096];
    for (modn, pf, dist) in [(918usize, false, 1), (918, true, 1), (918, true, 2), (918, true, 3), (1, false, 1)] {
        let mut best = f64::MAX;
        for _ in 0..8 {
            let t = Instant::now();
            for i in 0..918 {
                let nx = if pf { bsk.ggsw((i + dist) % modn) } else { &[] }; cmux_rotate(&mut acc, &mut diff, bsk.ggsw(i % modn), (i * 7) % 4096, shape, &fft, &mut ws, nx);
            }
            best = best.min(t.elapsed().as_secs_f64() * 1e3);
        }
        println!("ggsw mod {modn} prefetch {pf} dist {dist}: {best:.2} ms");
    }
}
