//! Scene text: parsing, overrides-free validation and sphere generation
//! must return a named error or a scene, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(scene) = repose::scene::Scene::from_str(text, "fuzz.ron", &[]) {
            let _ = scene.build();
        }
    }
});
