//! `basalt sim`: the accelerator models. `reproduce` puts the models' figures beside the papers'
//! (data/papers), `run` times a recorded trace on one machine (data/machines/*.toml).

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

#[derive(Args)]
pub struct SimArgs {
    #[command(subcommand)]
    cmd: SimCmd,
}

#[derive(Subcommand)]
enum SimCmd {
    /// Every modelled paper row: our figure, the paper's, the ratio; validation rows apart.
    Reproduce {
        /// One paper (osiris, fab, mxv, craterlake, strix); all when omitted.
        paper: Option<String>,
        /// JSON instead of the table.
        #[arg(long)]
        json: bool,
        /// Markdown instead of the table (docs/reproduction-status.md is this output).
        #[arg(long, conflicts_with = "json")]
        markdown: bool,
        /// Folder holding data/papers and data/machines.
        #[arg(long, default_value = "data")]
        data: PathBuf,
        /// Also write ours/theirs per modelled row as an SVG figure.
        #[arg(long)]
        plot: Option<PathBuf>,
    },
    /// Measure this CPU's per-kernel costs (Basalt's kernels, one thread) and write them as a
    /// machine file, so `--machine basalt_cpu` predicts Basalt's own CPU time.
    Calibrate {
        /// Where to write the machine file.
        #[arg(long, default_value = "data/machines/basalt_cpu.toml")]
        out: PathBuf,
        /// Seconds of timed repetitions per kernel.
        #[arg(long, default_value_t = 1.0, value_parser = crate::args::seconds)]
        min_time: f64,
        /// CKKS preset whose rescale measures the evaluator's time outside the kernels
        /// (`none`: kernels only).
        #[arg(long, default_value = "LATTIGO_RESIDUAL")]
        holdout: String,
    },
    /// Measure HMult and one key switch (and the hold-out rescale) on this CPU, one thread,
    /// thread CPU time, and compare with the calibrated model's predictions (±25 % target).
    ValidateCpu {
        #[arg(long, default_value = "basalt_cpu")]
        machine: String,
        #[arg(long, default_value = "LATTIGO_RESIDUAL")]
        preset: String,
        /// Seconds of timed repetitions per operation.
        #[arg(long, default_value_t = 2.0, value_parser = crate::args::seconds)]
        min_time: f64,
        #[arg(long)]
        json: bool,
        #[arg(long, default_value = "data")]
        data: PathBuf,
        /// Also run a real bootstrap with 2^k slots (sparse: few keys; thread CPU time, one
        /// thread, 3 runs after a warm-up) and compare with the prediction for its library trace.
        #[arg(long, value_parser = crate::args::log_slots)]
        bootstrap_log_slots: Option<u32>,
        /// Preset of the bootstrap check.
        #[arg(long, default_value = "N16QP1546H192H32")]
        bootstrap_preset: String,
    },
    /// Time one trace on a machine for each value of one config field (e.g.
    /// `--field memory.hbm_gbps --values 500,1000,2000`), one row per value.
    Sweep {
        #[arg(long)]
        machine: String,
        #[arg(long)]
        trace: PathBuf,
        /// Dotted machine field, as for `run --set`.
        #[arg(long)]
        field: String,
        #[arg(long, value_delimiter = ',', required = true)]
        values: Vec<String>,
        #[arg(long)]
        json: bool,
        #[arg(long, default_value = "data")]
        data: PathBuf,
        /// Also write latency over the swept values as an SVG line plot.
        #[arg(long)]
        plot: Option<PathBuf>,
    },
    /// Time one trace on every point of a grid over several machine fields at once
    /// (`--axis units.mdc.lanes=256,512,1024 --axis memory.hbm_gbps=1000,2000`): latency,
    /// area, energy and energy-delay product per point, and the Pareto front over (latency,
    /// energy, area).
    Grid {
        #[arg(long)]
        machine: String,
        #[arg(long)]
        trace: PathBuf,
        /// `FIELD=V1,V2,…` (dotted machine field as for `run --set`); repeat for each axis.
        #[arg(long = "axis", required = true)]
        axes: Vec<String>,
        /// JSON (`{"machine", "axes", "points", "pareto"}`) instead of the table.
        #[arg(long)]
        json: bool,
        /// Also write every point as CSV.
        #[arg(long)]
        csv: Option<PathBuf>,
        /// Also write energy over latency, Pareto front marked, as an SVG scatter.
        #[arg(long)]
        plot: Option<PathBuf>,
        #[arg(long, default_value = "data")]
        data: PathBuf,
    },
    /// One trace on several machines or variants of one (`osiris@memory.hbm_gbps=2000`):
    /// latency, stall, busiest unit, traffic by kind and energy, one row each.
    Compare {
        /// Trace file (JSON from `basalt trace`).
        #[arg(long)]
        trace: PathBuf,
        /// Machines, comma separated, each `NAME` or `NAME@field=value@…` (overrides as for
        /// `run --set`); every machine in data/machines when omitted.
        #[arg(long, value_delimiter = ',')]
        machines: Vec<String>,
        /// Bootstrap trace timed once per bootstrap marker (as for `run`).
        #[arg(long)]
        bootstrap_trace: Option<PathBuf>,
        /// One JSON object per machine instead of the table.
        #[arg(long)]
        json: bool,
        #[arg(long, default_value = "data")]
        data: PathBuf,
        /// Also write the latencies as an SVG bar chart (log scale).
        #[arg(long)]
        plot: Option<PathBuf>,
    },
    /// Time a trace (JSON from `basalt trace`) on a machine.
    Run {
        /// Machine file, or a name from data/machines (osiris, fab, mxv_u200, craterlake, craterlake_128k, f1plus, strix, cpu).
        #[arg(long)]
        machine: String,
        /// Trace file (JSON).
        #[arg(long)]
        trace: PathBuf,
        /// Bootstrap trace (JSON) timed once per bootstrap marker of `--trace` (the `resnet20`
        /// and `sort` programs); a trace with markers is refused without it.
        #[arg(long)]
        bootstrap_trace: Option<PathBuf>,
        /// Overrides `key=value` of machine fields, e.g. `memory.hbm_gbps=2000`.
        #[arg(long = "set")]
        overrides: Vec<String>,
        #[arg(long)]
        json: bool,
        #[arg(long, default_value = "data")]
        data: PathBuf,
        /// Also write utilisation.svg, traffic.svg and roofline.svg into this folder.
        #[arg(long)]
        plot_dir: Option<PathBuf>,
    },
}

/// A machine file path, or a machine name from the data folder (the built-in machines unless
/// `--data`/`$BASALT_DATA` name a folder).
pub fn machine_path(data: &Path, name: &str) -> PathBuf {
    let p = PathBuf::from(name);
    if p.is_file() { p } else { resolve_data(data).join("machines").join(format!("{name}.toml")) }
}

/// The data folder (papers, machines): `data` as given, except the default `data`, which means
/// `$BASALT_DATA` if set and otherwise the copies built into the binary
/// ([`basalt_sim::source::builtin_dir`]), so that `basalt sim …` works from any directory and
/// an installed binary needs no checkout.
pub fn resolve_data(data: &Path) -> PathBuf {
    if data != Path::new("data") {
        return data.to_path_buf();
    }
    match std::env::var_os("BASALT_DATA") {
        Some(d) => PathBuf::from(d),
        None => basalt_sim::source::builtin_dir().to_path_buf(),
    }
}

pub fn run(a: &SimArgs) -> Result<(), String> {
    match &a.cmd {
        SimCmd::Reproduce { paper, json, markdown, data, plot } => {
            // Bootstrapping rows need whole programs: the libraries record them here.
            let r = basalt_repro::library::reproduce(paper.as_deref(), &resolve_data(data))
                .map_err(|e| e.to_string())?;
            if let Some(p) = plot {
                write_file(p, &basalt_repro::plot::reproduce_svg(&r))?;
            }
            if *json {
                println!("{}", serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?);
            } else if *markdown {
                print!("{}", r.markdown());
            } else {
                println!("{r}");
            }
        }
        SimCmd::Calibrate { out, min_time, holdout } => {
            // Refuse a bad hold-out preset before spending time on the kernels.
            if holdout != "none" {
                basalt_ckks::Parameters::preset(holdout).map_err(|e| e.to_string())?;
            }
            eprintln!("calibrating Basalt's kernels on this CPU (one thread, N = 2^16) …");
            let c = crate::calibrate::measure_costs(duration(*min_time)?);
            let o = match holdout.as_str() {
                "none" => None,
                preset => {
                    eprintln!("measuring the evaluator's overhead on rescale ({preset}) …");
                    let t = duration(*min_time)?;
                    Some(crate::calibrate::measure_op_overhead(&c, preset, t)?)
                }
            };
            let date = std::process::Command::new("date")
                .args(["-u", "+%Y-%m-%d"])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                .unwrap_or_default();
            let text =
                crate::calibrate::machine_toml(&c, o.as_ref(), &date, &crate::bench::cpu_name());
            basalt_sim::Machine::from_toml(&text, out)
                .map_err(|e| format!("calibrated machine invalid: {e}"))?;
            std::fs::write(out, text).map_err(|e| format!("{}: {e}", out.display()))?;
            eprintln!("wrote {}", out.display());
        }
        SimCmd::ValidateCpu {
            machine,
            preset,
            min_time,
            json,
            data,
            bootstrap_log_slots,
            bootstrap_preset,
        } => {
            let m = basalt_sim::Machine::load(machine_path(data, machine))
                .map_err(|e| e.to_string())?;
            let t = duration(*min_time)?;
            // Refuse a bootstrap preset without a circuit before timing anything.
            if let Some(k) = bootstrap_log_slots {
                let p =
                    basalt_ckks::Parameters::preset(bootstrap_preset).map_err(|e| e.to_string())?;
                basalt_circuits::bootstrap::config::for_preset(
                    bootstrap_preset,
                    Some(*k),
                    p.log_n(),
                )
                .ok_or(format!("preset {bootstrap_preset:?} has no bootstrapping circuit"))?;
            }
            let mut checks = crate::calibrate::validate(&m, preset, t)?;
            if let Some(k) = bootstrap_log_slots {
                eprintln!(
                    "bootstrapping {bootstrap_preset} with 2^{k} slots (keys, then one run) …"
                );
                checks.push(crate::calibrate::validate_bootstrap(&m, bootstrap_preset, *k)?);
            }
            if !*json {
                println!(
                    "{:<10} {:>12} {:>12} {:>8}  (thread CPU ms, one thread)",
                    "op", "measured", "predicted", "ratio"
                );
            }
            for c in &checks {
                let ratio = c.predicted_ms / c.measured_ms;
                let verdict = if c.holdout {
                    "hold-out (calibrated on it)"
                } else if (ratio - 1.0).abs() <= 0.25 {
                    "within ±25 %"
                } else {
                    "OUTSIDE ±25 %"
                };
                if *json {
                    let row = serde_json::json!({"op": c.op, "preset": preset, "measured_ms": c.measured_ms,
                        "predicted_ms": c.predicted_ms, "predicted_over_measured": ratio, "holdout": c.holdout});
                    println!("{row}");
                } else {
                    println!(
                        "{:<10} {:>12.2} {:>12.2} {:>8.2}  {verdict}",
                        c.op, c.measured_ms, c.predicted_ms, ratio
                    );
                }
            }
        }
        SimCmd::Sweep { machine, trace, field, values, json, data, plot } => {
            basalt_sim::check_timing_overrides(&[field.as_str()]).map_err(|e| e.to_string())?;
            let t = read_trace(trace)?;
            let mut points = Vec::new();
            if !*json {
                println!(
                    "{field:>24} {:>14} {:>10} {:>10} {:>12}",
                    "latency (us)", "stall %", "keys MiB", "interm. MiB"
                );
            }
            for v in values {
                let set = format!("{field}={v}");
                let m =
                    basalt_sim::Machine::load_with(machine_path(data, machine), &[set.as_str()])
                        .map_err(|e| e.to_string())?;
                let r = basalt_sim::simulate(&m, &t).map_err(|e| e.to_string())?;
                let stall = 100.0 * r.stall_cycles / r.cycles.max(1.0);
                points.push(basalt_sim::plot::SweepPoint {
                    value: v.clone(),
                    metric: r.seconds * 1e6,
                });
                if *json {
                    let row = serde_json::json!({"field": field, "value": v, "report": r});
                    println!("{row}");
                } else {
                    let mib = |b: f64| b / (1 << 20) as f64;
                    let (keys, inter) = (mib(r.traffic.keys), mib(r.traffic.intermediates));
                    println!(
                        "{v:>24} {:>14.2} {stall:>10.1} {keys:>10.2} {inter:>12.2}",
                        r.seconds * 1e6
                    );
                }
            }
            // A flat sweep is usually a field that binds only under a switch (e.g. a crossbar's
            // clusters with the fixed network): say so rather than let it read as a finding.
            if points.len() > 1 && points.iter().all(|p| p.metric == points[0].metric) {
                eprintln!(
                    "note: the latency does not change with {field} on this trace; the field may \
                     bind only under a switch (docs/simulator.md, \"Machines as data\"), or the \
                     trace may not exercise it"
                );
            }
            if let Some(p) = plot {
                let svg = basalt_sim::plot::sweep_svg(machine, field, "latency (us)", &points);
                write_file(p, &svg)?;
            }
        }
        SimCmd::Grid { machine, trace, axes, json, csv, plot, data } => {
            let axes: Vec<basalt_sim::grid::GridAxis> = axes
                .iter()
                .map(|a| basalt_sim::grid::GridAxis::parse(a))
                .collect::<Result<_, _>>()
                .map_err(|e| e.to_string())?;
            let t = read_trace(trace)?;
            let pts = basalt_sim::grid::grid(&machine_path(data, machine), &t, &axes)
                .map_err(|e| e.to_string())?;
            if *json {
                let front: Vec<usize> =
                    pts.iter().enumerate().filter(|(_, p)| p.pareto).map(|(i, _)| i).collect();
                let out = serde_json::json!({
                    "machine": machine, "axes": axes, "points": pts, "pareto": front,
                });
                println!("{}", serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?);
            } else {
                print_grid(&pts);
            }
            if let Some(p) = csv {
                write_file(p, &basalt_sim::grid::csv(&pts))?;
            }
            if let Some(p) = plot {
                write_file(p, &basalt_sim::plot::grid_svg(machine, &pts))?;
            }
        }
        SimCmd::Compare { trace, machines, bootstrap_trace, json, data, plot } => {
            let t = read_trace(trace)?;
            let b = bootstrap_trace.as_deref().map(read_trace).transpose()?;
            let timed = crate::compare::run(data, machines, &t, b.as_ref(), *json)?;
            if let Some(p) = plot {
                let name =
                    trace.file_name().map_or_else(String::new, |n| n.to_string_lossy().into());
                write_file(p, &basalt_sim::plot::compare_svg(&name, &timed))?;
            }
        }
        SimCmd::Run { machine, trace, bootstrap_trace, overrides, json, data, plot_dir } => {
            let sets: Vec<&str> = overrides.iter().map(String::as_str).collect();
            basalt_sim::check_timing_overrides(&sets).map_err(|e| e.to_string())?;
            let m = basalt_sim::Machine::load_with(machine_path(data, machine), &sets)
                .map_err(|e| e.to_string())?;
            let t = read_trace(trace)?;
            let b = bootstrap_trace.as_deref().map(read_trace).transpose()?;
            let r = crate::compare::time(&m, &t, b.as_ref())?;
            if *json {
                println!("{}", serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?);
            } else {
                println!("{r}");
            }
            if let Some(dir) = plot_dir {
                write_run_plots(dir, &m, &r)?;
            }
        }
    }
    Ok(())
}

/// The grid as a table, one row per point, Pareto points starred.
fn print_grid(pts: &[basalt_sim::grid::GridPoint]) {
    let opt =
        |v: Option<f64>, scale: f64| v.map_or("-".to_string(), |x| format!("{:.4}", x * scale));
    let fields = pts.first().map_or(0, |p| p.settings.len());
    let header: Vec<String> =
        pts.first().map_or(vec![], |p| p.settings.iter().map(|(f, _)| f.clone()).collect());
    println!(
        "{}  {:>12} {:>8} {:>10} {:>12} {:>12} {:>9}  pareto",
        header.iter().map(|h| format!("{h:>20}")).collect::<Vec<_>>().join(" "),
        "latency ms",
        "stall %",
        "area mm2",
        "energy mJ",
        "EDP uJ·s",
        "power W"
    );
    for p in pts {
        let vals: Vec<String> = p.settings.iter().map(|(_, v)| format!("{v:>20}")).collect();
        debug_assert_eq!(vals.len(), fields);
        println!(
            "{}  {:>12.4} {:>8.1} {:>10} {:>12} {:>12} {:>9}  {}",
            vals.join(" "),
            p.seconds * 1e3,
            100.0 * p.stall_fraction,
            opt(p.area_mm2, 1.0),
            opt(p.energy_j, 1e3),
            opt(p.edp, 1e6),
            opt(p.power_w, 1.0),
            if p.pareto { "*" } else { "" }
        );
    }
}

fn read_trace(path: &Path) -> Result<basalt_trace::Trace, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: not a trace: {e}", path.display()))
}

/// The three figures of one run: utilisation per unit, traffic by kind, roofline.
fn write_run_plots(
    dir: &Path,
    m: &basalt_sim::Machine,
    r: &basalt_sim::Report,
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for (name, svg) in basalt_sim::plot::run_figures(m, r) {
        write_file(&dir.join(name), &svg)?;
    }
    Ok(())
}

fn write_file(path: &Path, text: &str) -> Result<(), String> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// `--min-time` as a duration; negative, zero or non-finite values are refused.
fn duration(secs: f64) -> Result<std::time::Duration, String> {
    if secs.is_finite() && secs > 0.0 {
        Ok(std::time::Duration::from_secs_f64(secs))
    } else {
        Err(format!("--min-time must be a positive number of seconds, not {secs}"))
    }
}
