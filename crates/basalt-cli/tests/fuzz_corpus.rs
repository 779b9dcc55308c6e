//! Replays the fuzzing corpus (`fuzz/corpus/TARGET/*`, seeds and every input the fuzzers kept)
//! through the same deserializers as the fuzz targets (`fuzz/harness.rs`), plus every seed cut
//! short and with bytes flipped: fast and deterministic, so that CI catches a regression without
//! a fuzzer. Each call must return (an error is fine), never panic.

#[path = "../../../fuzz/harness.rs"]
mod harness_file;
use harness_file::harness;

#[test]
fn the_fuzz_corpus_replays_without_a_panic() {
    let root = harness::root().join("fuzz/corpus");
    let mut count = 0;
    for target in harness::TARGETS {
        let dir = root.join(target);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{target}: empty corpus");
        for f in files {
            let data = std::fs::read(&f).unwrap();
            harness::run(target, &data);
            // Cut short at a few places and flip a few bytes (deterministic positions).
            for cut in [0, 1, data.len() / 3, data.len().saturating_sub(1)] {
                harness::run(target, &data[..cut.min(data.len())]);
            }
            for k in 0..8usize {
                if data.len() < 2 {
                    break;
                }
                let mut d = data.clone();
                let i = (k * 7919 + 13) % (d.len() - 1) + 1; // keep a key selector byte
                d[i] ^= 1 << (k % 8);
                harness::run(target, &d);
            }
            count += 1;
        }
    }
    assert!(count >= 10, "{count} corpus files");
}
