//! Physics tested as physics: every analytic validation case of
//! `repose::validate`, measured against its closed form, on every backend —
//! the f64 CPU reference, the f32 CPU mirror and the GPU — by the same test
//! body. Failure messages give measured and expected values and tolerances.

use repose::gpu::{context_for_tests, GpuContext};
use repose::step::{Backend, Stepper};
use repose::validate::{cases, Check};

/// The generic body: runs case `name` on steppers from `mk` and asserts every check.
fn assert_case_on(name: &str, mk: &dyn Fn() -> Stepper) {
    let f = cases()
        .into_iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no validation case named {name}"))
        .1;
    let checks: Vec<Check> = f(mk);
    assert!(!checks.is_empty(), "case {name} measured nothing");
    let backend = mk().backend.describe();
    let failed: Vec<String> = checks
        .iter()
        .filter(|c| !c.passed())
        .map(|c| c.to_string())
        .collect();
    assert!(
        failed.is_empty(),
        "{} check(s) failed on {backend}:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

fn gpu_stepper() -> Stepper {
    let ctx = GpuContext::try_new().expect("adapter vanished");
    Stepper::with_backend(Backend::gpu(ctx).expect("GPU solver"))
}

macro_rules! on_every_backend {
    ($($law:ident => $case:literal;)*) => {$(
        mod $law {
            use super::*;
            #[test]
            fn cpu_f64() {
                assert_case_on($case, &Stepper::new);
            }
            #[test]
            fn cpu_f32() {
                assert_case_on($case, &|| Stepper::with_backend(Backend::CpuF32));
            }
            #[test]
            fn gpu() {
                if context_for_tests(concat!(stringify!($law), "::gpu")).is_some() {
                    assert_case_on($case, &gpu_stepper);
                }
            }
        }
    )*};
}

on_every_backend! {
    sphere_rests_on_plane_without_sinking_and_carries_its_weight => "rest_on_plane";
    sphere_rests_on_plane_with_rolling_and_spinning_friction => "rest_on_plane_rolling_spinning";
    sphere_rests_on_box_floor_without_sinking => "rest_on_box_floor";
    sphere_rests_on_box_floor_with_rolling_and_spinning_friction => "rest_on_box_floor_rolling_spinning";
    sliding_sphere_rolls_after_2v0_over_7mug_at_5v0_over_7 => "slide_to_roll";
    associated_law_launches_a_sliding_sphere_at_mu_times_its_slip => "sliding_lift_off_associated";
    de_saxce_law_keeps_a_sliding_sphere_down => "sliding_stays_down_de_saxce";
    associated_law_floats_a_rolling_sphere_at_h_rho_omega => "rolling_floats_associated";
    rolling_resistance_decelerates_uniformly_and_stops_at_predicted_distance => "rolling_resistance";
    without_rolling_resistance_a_rolling_sphere_never_stops => "rolling_without_resistance";
    sphere_stays_at_rest_on_incline_below_tan_alpha_rho_over_r => "incline_at_rest";
    sphere_rolls_down_steeper_incline_at_five_sevenths_reduced_gravity => "incline_rolling_down";
    spinning_friction_stops_spin_at_predicted_time => "spinning_friction";
    sphere_rests_on_cylinder_cap_and_carries_its_weight => "rest_on_cylinder_cap";
    sphere_rests_on_cylinder_cap_with_rolling_and_spinning_friction => "rest_on_cylinder_cap_rolling_spinning";
    column_in_box_wall_and_floor_reaction_equals_total_weight => "column_reaction";
}

/// Every case in the registry has a test above (so new cases get asserted).
#[test]
fn every_validation_case_is_tested() {
    let src = include_str!("physics.rs");
    for (name, _) in cases() {
        assert!(
            src.contains(&format!("=> \"{name}\";")),
            "validation case {name} has no test in tests/physics.rs"
        );
    }
}
