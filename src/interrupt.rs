//! Clean stops on SIGINT and SIGTERM.
//!
//! [`install`] registers one process-wide handler (idempotent: a sweep calls
//! it once per run). The first signal only raises a flag: a run checks
//! [`requested`] after every step and ends there as if its duration were
//! over — `final.csv`, `final.png` and `summary.json` written, the summary
//! saying `"stopped": "interrupted"` — and a sweep starts no further runs.
//! A second signal exits at once with status 130, as a shell expects of
//! Ctrl-C.
//!
//! One delivery can bring a signal twice: coreutils `timeout` (and batch
//! schedulers built the same way) signals the child and then its whole
//! process group, which holds the child again. A signal that arrives
//! within [`SAME_DELIVERY`] of the first is taken as that same delivery —
//! sooner than a person could read the message and interrupt again — so a
//! scheduler's single TERM always ends with complete outputs.
//!
//! A host that handles the signals itself (the Python module, whose
//! interpreter owns SIGINT) calls [`leave_signals_to_host`] first, so that
//! [`install`] registers nothing, and then raises the same flag with
//! [`request`] when its user interrupts, and lowers it with [`clear`] once
//! the stopped run has returned.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

static SIGNALS: AtomicU32 = AtomicU32::new(0);
static INSTALL: Once = Once::new();
static HOSTED: AtomicBool = AtomicBool::new(false);
/// When the first signal of this process arrived.
static FIRST: Mutex<Option<Instant>> = Mutex::new(None);

/// Exit status after a second signal (128 + SIGINT, the shell convention).
pub const EXIT_INTERRUPTED: i32 = 130;

/// Signals this soon after the first are the same delivery (module docs).
pub const SAME_DELIVERY: Duration = Duration::from_millis(500);

/// What a signal arriving at `now` means, given when the first arrived
/// (recorded here when this is the first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Signal {
    /// The first: stop after the current step.
    First,
    /// The first one again, through another path of the same delivery.
    Same,
    /// A second interrupt: exit at once.
    Second,
}

fn classify(first: &mut Option<Instant>, now: Instant) -> Signal {
    match *first {
        None => {
            *first = Some(now);
            Signal::First
        }
        Some(t) if now.saturating_duration_since(t) < SAME_DELIVERY => Signal::Same,
        Some(_) => Signal::Second,
    }
}

/// Registers the handler once per process. A failure to register (another
/// handler already owns the signals) is logged and the run goes on without
/// clean stops.
pub fn install() {
    if HOSTED.load(Ordering::SeqCst) {
        return;
    }
    INSTALL.call_once(|| {
        let result = ctrlc::set_handler(|| {
            let now = Instant::now();
            let kind = classify(&mut FIRST.lock().unwrap_or_else(|e| e.into_inner()), now);
            match kind {
                Signal::First => {
                    SIGNALS.fetch_add(1, Ordering::SeqCst);
                    eprintln!(
                        "\ninterrupted: stopping after the current step and writing the outputs \
                         (interrupt again to exit at once)"
                    );
                }
                Signal::Same => {}
                Signal::Second => {
                    eprintln!("\ninterrupted twice: exiting now; outputs are incomplete");
                    std::process::exit(EXIT_INTERRUPTED);
                }
            }
        });
        if let Err(e) = result {
            log::warn!("no clean stop on SIGINT/SIGTERM: {e}");
        }
    });
}

/// Whether a SIGINT or SIGTERM has arrived since the start of the process.
pub fn requested() -> bool {
    SIGNALS.load(Ordering::SeqCst) > 0
}

/// From now on [`install`] registers no handler: the host process (an
/// interpreter embedding repose) keeps its own, and asks for clean stops
/// with [`request`].
pub fn leave_signals_to_host() {
    HOSTED.store(true, Ordering::SeqCst);
}

/// Asks the running runs to stop after their current step, as a first
/// signal does (without the message).
pub fn request() {
    SIGNALS.fetch_add(1, Ordering::SeqCst);
}

/// Forgets earlier requests, so that the next run goes to its end: for a
/// host whose user interrupted one run and then starts another.
pub fn clear() {
    SIGNALS.store(0, Ordering::SeqCst);
    *FIRST.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first signal stops; a repeat within SAME_DELIVERY is the same
    /// delivery (coreutils `timeout`'s TERM to the child and its group);
    /// one after it is a second interrupt, and stays one.
    #[test]
    fn a_repeat_within_the_window_is_one_delivery_and_a_later_one_a_second() {
        let t0 = Instant::now();
        let mut first = None;
        assert_eq!(classify(&mut first, t0), Signal::First);
        assert_eq!(
            classify(&mut first, t0 + Duration::from_micros(50)),
            Signal::Same
        );
        assert_eq!(
            classify(&mut first, t0 + SAME_DELIVERY - Duration::from_millis(1)),
            Signal::Same
        );
        assert_eq!(classify(&mut first, t0 + SAME_DELIVERY), Signal::Second);
        assert_eq!(
            classify(&mut first, t0 + 10 * SAME_DELIVERY),
            Signal::Second
        );
        assert_eq!(first, Some(t0), "the first arrival is kept");
    }
}
