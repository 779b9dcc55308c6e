//! A progress bar on the terminal for the libraries' long operations (key generation,
//! bootstrapping stages), through their [`Progress`] hook. Drawn on stderr only when it is a
//! terminal, so JSON on stdout and redirected logs stay clean. Ctrl-C keeps its default effect
//! (the process ends), so the bar never cancels.

use basalt_ckks::progress::{Cancelled, Progress};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct TermProgress {
    bar: ProgressBar,
}

impl TermProgress {
    pub fn new() -> TermProgress {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template("{msg:>20} [{bar:30}] {pos}/{len} {elapsed}")
            .expect("a valid template")
            .progress_chars("=> ");
        bar.set_style(style);
        TermProgress { bar }
    }

    /// Remove the bar (the command then prints its result).
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Progress for TermProgress {
    fn stage(&self, name: &str, total: u64) {
        self.bar.set_length(total);
        self.bar.set_position(0);
        self.bar.set_message(name.to_string());
    }

    fn step(&self, done: u64) -> Result<(), Cancelled> {
        self.bar.set_position(done);
        Ok(())
    }
}
