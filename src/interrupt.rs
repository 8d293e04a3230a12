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
//! A host that handles the signals itself (the Python module, whose
//! interpreter owns SIGINT) calls [`leave_signals_to_host`] first, so that
//! [`install`] registers nothing, and then raises the same flag with
//! [`request`] when its user interrupts, and lowers it with [`clear`] once
//! the stopped run has returned.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Once;

static SIGNALS: AtomicU32 = AtomicU32::new(0);
static INSTALL: Once = Once::new();
static HOSTED: AtomicBool = AtomicBool::new(false);

/// Exit status after a second signal (128 + SIGINT, the shell convention).
pub const EXIT_INTERRUPTED: i32 = 130;

/// Registers the handler once per process. A failure to register (another
/// handler already owns the signals) is logged and the run goes on without
/// clean stops.
pub fn install() {
    if HOSTED.load(Ordering::SeqCst) {
        return;
    }
    INSTALL.call_once(|| {
        let result = ctrlc::set_handler(|| {
            if SIGNALS.fetch_add(1, Ordering::SeqCst) == 0 {
                eprintln!(
                    "\ninterrupted: stopping after the current step and writing the outputs \
                     (interrupt again to exit at once)"
                );
            } else {
                eprintln!("\ninterrupted twice: exiting now; outputs are incomplete");
                std::process::exit(EXIT_INTERRUPTED);
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
}
