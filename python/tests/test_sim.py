"""One program, two executions, from Python: the kernels a real run executes equal the ones the
symbolic (trace-mode) run records, and the accelerator models time those traces."""

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import basalt
from basalt.ckks import Context
from basalt.sim import BasaltError, record, run

ROOT = Path(__file__).resolve().parents[2]
RNG = np.random.default_rng(5)
TOY = dict(log_n=10, levels=4, rotations=[1, 3], conjugate=True)


def program(x, y):
    """A little of everything: product, relinearisation, rescale, rotations, constants."""
    z = (x * y).rescale()
    z = z.rotate(1) + z.rotate(3).conjugate()
    return (z * 0.5).rescale() + 1.0


def test_symbolic_run_records_the_kernels_the_real_run_executes():
    real = Context.toy_insecure(**TOY)
    shape = Context.toy_insecure(**TOY, symbolic=True)
    n = real.slots
    xs = [real.encrypt(RNG.uniform(-1, 1, n)) for _ in range(2)]
    ss = [shape.encrypt_symbolic(n) for _ in range(2)]
    with record() as executed:
        out = program(*xs)
    with record() as traced:
        program(*ss)
    assert len(executed.trace) > 0
    assert executed.trace.counts() == traced.trace.counts()
    assert executed.trace.to_json() == traced.trace.to_json()
    # The real run did compute.
    x, y = (real.decrypt(c).real for c in xs)
    want = 0.5 * (np.roll(x * y, -1) + np.roll(x * y, -3)) + 1.0
    assert np.abs(real.decrypt(out) - want).max() < 1e-3


def test_symbolic_bootstrap_records_the_real_bootstrap_kernels():
    real = basalt.bootstrap.Context.toy_insecure(log_n=10, log_slots=4)
    shape = basalt.bootstrap.Context.toy_insecure(log_n=10, log_slots=4, symbolic=True)
    ct = real.encrypt(np.full(real.slots, 0.25))
    with record() as executed:
        real.bootstrap(ct)
    with record() as traced:
        shape.bootstrap(shape.encrypt_symbolic())
    assert executed.trace.counts()["KeyLoad"] > 0
    assert executed.trace.to_json() == traced.trace.to_json()


def test_recordings_nest_and_leave_nothing_open():
    ctx = Context.toy_insecure(**TOY, symbolic=True)
    x = ctx.encrypt_symbolic(8)
    with record() as outer:
        x.rotate(1)
        with record() as inner:
            (x * x).rescale()
    assert inner.trace.counts()["Ntt"] > 0
    assert outer.trace.counts() == run_alone(lambda: x.rotate(1))
    with pytest.raises(BasaltError, match="no recording is open"):
        basalt._basalt.trace_end()


def run_alone(f):
    with record() as r:
        f()
    return r.trace.counts()


def test_python_trace_matches_the_cli_and_times_the_same():
    """`basalt trace` and a Python program on the same preset give the same trace, so the
    CLI's figures and the Python API's are one model's."""
    exe = ROOT / os.environ.get("CARGO_TARGET_DIR", "target") / "release" / "basalt"
    if not exe.exists():
        # Only when pytest runs before `make setup` built the CLI; `make test` (CI) runs after
        # it, so there the comparison always runs.
        pytest.skip("needs `make setup` (builds target/release/basalt)")
    cli = subprocess.run([str(exe), "trace", "--program", "hmult", "--preset", "LATTIGO_RESIDUAL"],
                         check=True, capture_output=True, text=True).stdout
    ctx = Context.preset("LATTIGO_RESIDUAL", symbolic=True)
    x = ctx.encrypt_symbolic(ctx.slots)
    with record() as r:
        (x * x).rescale()
    assert r.trace.counts() == basalt.sim.Trace.from_json(cli).counts()
    ours = run(r.trace, "craterlake")
    theirs = run(basalt.sim.Trace.from_json(cli), "craterlake")
    assert ours["seconds"] == pytest.approx(theirs["seconds"])


def test_full_size_bootstrap_traces_and_runs_on_each_ckks_machine(tmp_path):
    ctx = basalt.bootstrap.Context.preset(
        "CRATERLAKE_80_BOOT", seeded_keys=True, symbolic=True, allow_insecure=True
    )
    with record() as r:
        out = ctx.bootstrap(ctx.encrypt_symbolic())
    assert out.level == ctx.output_level
    lat = {m: run(r.trace, m)["seconds"] for m in ["craterlake", "f1plus", "osiris"]}
    assert all(s > 0 for s in lat.values()), lat
    # Removing KSHGen (keys stream from memory in full) cannot make the bootstrap faster.
    no_kshgen = run(r.trace, "craterlake", {"switches.kshgen": False})["seconds"]
    assert no_kshgen >= lat["craterlake"]
    rep = run(r.trace, "craterlake", plot_dir=tmp_path)
    assert sorted(Path(p).name for p in rep["figures"]) == [
        "roofline.svg", "traffic.svg", "utilisation.svg"]
    assert all("<svg" in Path(p).read_text() for p in rep["figures"])


def test_sweep_over_bandwidth_is_monotone():
    ctx = Context.preset("LATTIGO_RESIDUAL", rotations=[1], symbolic=True)
    x = ctx.encrypt_symbolic(ctx.slots)
    with record() as r:
        x.rotate(1)
    pts = basalt.sim.sweep(r.trace, "craterlake", "memory.hbm_gbps", [100, 400, 1600])
    secs = [rep["seconds"] for _, rep in pts]
    assert secs[0] > secs[1] >= secs[2] > 0


def test_grid_gives_latency_area_energy_edp_and_a_pareto_front(tmp_path):
    ctx = Context.preset("LATTIGO_RESIDUAL", rotations=[1], symbolic=True)
    x = ctx.encrypt_symbolic(ctx.slots)
    with record() as r:
        x.rotate(1)
    axes = {"units.hadamard.lanes": [1024, 2048], "memory.hbm_gbps": [1000, 2000]}
    g = basalt.sim.grid(r.trace, "osiris", axes, csv=tmp_path / "g.csv", plot=tmp_path / "g.svg")
    rows = g.to_dict("records") if hasattr(g, "to_dict") else g
    assert len(rows) == 4
    assert [(p["units.hadamard.lanes"], p["memory.hbm_gbps"]) for p in rows] == [
        ("1024", "1000"), ("1024", "2000"), ("2048", "1000"), ("2048", "2000")]
    for p in rows:
        assert p["area_mm2"] > 0 and p["energy_j"] > 0 and p["power_w"] > 0
        assert p["edp"] == pytest.approx(p["energy_j"] * p["seconds"])
    # Halving the Hadamard lanes removes area: 2 x 1,024 lanes x 3.44e-3 mm² each.
    assert rows[2]["area_mm2"] - rows[0]["area_mm2"] == pytest.approx(2 * 1024 * 0.00344238)
    assert any(p["pareto"] for p in rows)
    assert (tmp_path / "g.csv").read_text().startswith("units.hadamard.lanes,memory.hbm_gbps,")
    assert "<svg" in (tmp_path / "g.svg").read_text()
    with pytest.raises(BasaltError, match="memory.nope"):
        basalt.sim.grid(r.trace, "osiris", {"memory.nope": [1, 2]})


def test_compare_times_variants_and_reports_machines_that_cannot_run_the_trace(tmp_path):
    ctx = Context.preset("LATTIGO_RESIDUAL", rotations=[1], symbolic=True)
    x = ctx.encrypt_symbolic(ctx.slots)
    with record() as r:
        x.rotate(1)
    svg = tmp_path / "compare.svg"
    rows = basalt.sim.compare(r.trace, ["osiris", ("osiris", {"memory.hbm_gbps": 100}), "strix"],
                              plot=svg)
    figure = svg.read_text()
    assert figure.count('<rect class="bar"') == 2  # Strix could not run the trace
    assert [row["machine"] for row in rows] == ["osiris", "osiris@memory.hbm_gbps=100", "strix"]
    assert rows[1]["report"]["seconds"] > rows[0]["report"]["seconds"] > 0
    assert "report" not in rows[2] and "16384" in rows[2]["error"]  # N = 2^16 > Strix's ring
    with pytest.raises(BasaltError, match="hbm_gbps"):
        basalt.sim.compare(r.trace, ["osiris", ("fab", {"memory.hbm_gbps": -1})])
    # A switch only the recording reads (the BSGS order) cannot change a recorded trace's time.
    with pytest.raises(BasaltError, match="plain-order"):
        basalt.sim.run(r.trace, "osiris", {"switches.gsc_order": False})


def test_bad_inputs_raise_named_errors():
    ctx = Context.toy_insecure(**TOY, symbolic=True)
    x = ctx.encrypt_symbolic(8)
    with record() as r:
        x.rotate(1)
    with pytest.raises(BasaltError, match="unknown machine"):
        run(r.trace, "no_such_machine")
    with pytest.raises(BasaltError, match="no_such_field"):
        run(r.trace, "craterlake", {"memory.no_such_field": 1})
    with pytest.raises(BasaltError, match="hbm_gbps"):
        run(r.trace, "craterlake", {"memory.hbm_gbps": -5})
    with pytest.raises(BasaltError, match="not a trace"):
        basalt.sim.Trace.from_json(json.dumps({"events": [{"ev": "Kernel", "what": 1}]}))
    with pytest.raises(BasaltError, match="symbolic"):
        ctx.decrypt(x)
    with pytest.raises(BasaltError, match="symbolic"):
        ctx.encrypt(np.ones(8))
    with pytest.raises(BasaltError, match="power of two"):
        ctx.encrypt_symbolic(6)
    real = Context.toy_insecure(**TOY)
    with pytest.raises(BasaltError, match="symbolic context"):
        real.encrypt_symbolic(8)


def test_bootstrap_markers_are_timed_from_a_bootstrap_trace_or_refused():
    ctx = Context.preset("LATTIGO_RESIDUAL", rotations=[1], symbolic=True)
    x = ctx.encrypt_symbolic(ctx.slots)
    with record() as r:
        x.rotate(1)
    # The op, a bootstrap marker (as ResNet-20 and sort record them), the op again.
    events = json.loads(r.trace.to_json())["events"]
    marker = [{"ev": "Marker", "marker": "bootstrap"}]
    marked = basalt.sim.Trace.from_json(json.dumps({"events": events + marker + events}))
    with pytest.raises(BasaltError, match="1 bootstrap"):
        run(marked, "craterlake")
    once = run(r.trace, "craterlake")["seconds"]
    # Two segments plus the bootstrap (here the same op) once.
    total = run(marked, "craterlake", bootstrap=r.trace)["seconds"]
    assert total == pytest.approx(3 * once, rel=1e-9)


def test_machines_lists_the_models():
    assert {"craterlake", "f1plus", "fab", "osiris", "strix"} <= set(basalt.sim.machines())


def test_tfhe_pbs_batches_time_on_strix_and_are_refused_by_ckks_machines():
    t = basalt.tfhe.Context("TFHERS_2_2_KS_PBS")
    cts = [t.encrypt(m) for m in range(4)]
    square = lambda m: (m * m) % t.plaintext_modulus  # noqa: E731
    with record() as one:
        t.apply(cts[0], square)
    with record() as batch:
        out = t.apply_batch(cts, square)
    assert [t.decrypt(c) for c in out] == [square(m) for m in range(4)]
    fft = "Tfhe(Fft)"
    assert batch.trace.counts()[fft] == 4 * one.trace.counts()[fft]
    s1 = run(one.trace, "strix")["seconds"]
    s4 = run(batch.trace, "strix")["seconds"]
    # The batch shares each iteration's bootstrapping key: four PBS cost less than four alone.
    assert s1 < s4 < 4 * s1
    with pytest.raises(BasaltError, match="no unit that executes"):
        run(one.trace, "craterlake")


def test_reproduce_reports_the_papers_rows_with_provenance():
    rep = basalt.sim.reproduce("strix")
    rows = {(r["table"], r["row"], r["metric"]): r for r in rep["rows"]}
    thr = rows[("V", "Strix I", "throughput")]
    assert thr["ours"] > 0 and thr["ratio"] == pytest.approx(thr["ours"] / thr["theirs"])
    kinds = {r["kind"] for r in rep["rows"]}
    assert {"target", "validation", "calibration", "bookkeeping", "derived", "baseline"} == kinds
    # A derived row inherits its sources' tolerance and names them.
    imp = rows[("VI", "improvement", "throughput")]
    assert imp["kind"] == "derived" and imp["from"] and imp["tolerance"] > 0.01
    assert any(r["ours"] is None for r in rep["rows"])  # "not yet modelled" is reported, not faked
    assert rep["readings"]
    with pytest.raises(BasaltError, match="paper"):
        basalt.sim.reproduce("no_such_paper")
