//! Siconos problem text (`repose solve`): a named error or a problem,
//! never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = repose::siconos::SiconosProblem::parse(text, "fuzz.dat");
    }
});
