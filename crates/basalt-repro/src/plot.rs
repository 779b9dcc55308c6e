//! The reproduction report as a figure: ours / theirs per modelled row, drawn with the
//! simulator's SVG plots ([`basalt_sim::plot::ratio_svg`]).

use basalt_sim::plot::{RatioPoint, fmt_num, ratio_svg};

use crate::ReproReport;

/// Ours / theirs for every modelled paper row (log scale), grey band = ±tolerance around 1,
/// one colour per paper.
pub fn reproduce_svg(rr: &ReproReport) -> String {
    let points: Vec<RatioPoint> = rr
        .rows
        .iter()
        .filter_map(|r| {
            let ratio = r.ratio.filter(|x| *x > 0.0)?;
            let tip = format!(
                "{} {} {} {}: ours {} theirs {} ({:?}, {})",
                r.paper,
                r.table,
                r.row,
                r.metric,
                r.ours.map_or("-".into(), fmt_num),
                fmt_num(r.theirs),
                r.role,
                if r.within == Some(true) { "within" } else { "outside" }
            );
            Some(RatioPoint { series: r.paper.clone(), ratio, tolerance: r.tolerance, tip })
        })
        .collect();
    ratio_svg("paper reproduction: ours / theirs per modelled row", "ours / theirs", &points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproduction_ratios_plot_every_modelled_row() {
        let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data");
        let rr = crate::reproduce(Some("strix"), std::path::Path::new(data)).unwrap();
        let svg = reproduce_svg(&rr);
        let modelled = rr.rows.iter().filter(|r| r.ratio.is_some_and(|x| x > 0.0)).count();
        assert!(modelled > 0);
        assert_eq!(svg.matches(r#"<circle class="point""#).count(), modelled);
        assert!(svg.contains(">ours / theirs</text>") && svg.contains("● strix"));
    }
}
