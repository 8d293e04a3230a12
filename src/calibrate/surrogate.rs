//! Several parameters: the local linear surrogate fitted by least squares
//! (the module docs of [`super`], "Several parameters").

use anyhow::Result;

use super::{Evaluation, Outcome, Search, Status};

impl Search<'_> {
    /// Several parameters: the local linear surrogate (module docs).
    pub(super) fn surrogate(&mut self) -> Result<Outcome> {
        let n = self.params.len();
        let params = self.params.to_vec();
        let to_x =
            |u: &[f64]| -> Vec<f64> { u.iter().zip(&params).map(|(u, p)| p.value(*u)).collect() };
        let to_u =
            |x: &[f64]| -> Vec<f64> { x.iter().zip(&params).map(|(x, p)| p.unit(*x)).collect() };
        let mut design = vec![vec![0.5; n]];
        for k in 0..n {
            let mut u = vec![0.5; n];
            u[k] += 0.25;
            design.push(u);
        }
        let ids = self.run(design.iter().map(|u| to_x(u)).collect())?;
        let mut last = ids[0];
        let mut clamped_before = false;
        loop {
            if let Some(i) = (0..self.evals.len())
                .filter(|&i| self.converged(i))
                .min_by(|&a, &b| self.nearest_score(a).total_cmp(&self.nearest_score(b)))
            {
                return Ok(self.surrogate_outcome(i, Status::Converged));
            }
            if self.evals.len() >= self.settings.max_evals {
                return Ok(self.surrogate_outcome(last, Status::Budget));
            }
            let u_ref = to_u(&self.evals[last].x);
            let Some(model) = self.fit(&u_ref) else {
                return Ok(self.surrogate_outcome(last, Status::Ambiguous));
            };
            let Some(mut u) = model.root(self.targets) else {
                return Ok(self.surrogate_outcome(last, Status::Ambiguous));
            };
            // Within the noise, and the model's next step shorter than the
            // root's own uncertainty: more points would chase noise.
            let h: Vec<f64> = (0..n).map(|j| self.band(last, j)).collect();
            let spread = model.root_spread(&h);
            if self.within_noise(last) && (0..n).all(|k| (u[k] - u_ref[k]).abs() <= spread[k]) {
                return Ok(self.surrogate_outcome(last, Status::NoiseLimited));
            }
            let outside = u.iter().any(|v| !(0.0..=1.0).contains(v));
            // At most half the unit box from the reference point.
            let step: Vec<f64> = u.iter().zip(&u_ref).map(|(a, b)| a - b).collect();
            let len = step.iter().map(|s| s * s).sum::<f64>().sqrt();
            if len > 0.5 {
                u = u_ref
                    .iter()
                    .zip(&step)
                    .map(|(r, s)| r + s * 0.5 / len)
                    .collect();
            }
            let u: Vec<f64> = u.iter().map(|v| v.clamp(0.0, 1.0)).collect();
            if outside && clamped_before {
                return Ok(self.surrogate_outcome(last, Status::OutOfReach));
            }
            clamped_before = outside;
            let before = self.evals.len();
            let mut id = self.run(vec![to_x(&u)])?[0];
            if self.evals.len() == before {
                // Rounded onto a point already run: try halfway.
                let half: Vec<f64> = u.iter().zip(&u_ref).map(|(a, b)| 0.5 * (a + b)).collect();
                id = self.run(vec![to_x(&half)])?[0];
                if self.evals.len() == before {
                    let status = if outside {
                        Status::OutOfReach
                    } else {
                        Status::Budget
                    };
                    return Ok(self.surrogate_outcome(last, status));
                }
            }
            last = id;
        }
    }

    fn nearest_score(&self, i: usize) -> f64 {
        (0..self.targets.len())
            .map(|j| self.miss(i, j).abs() / self.settings.tol.max(self.band(i, j)))
            .fold(0.0f64, f64::max)
    }

    /// The linear model c + A u fitted to the 2n + 1 evaluations nearest
    /// `u_ref` (scaled coordinates); `None` when they do not span the
    /// parameters.
    fn fit(&self, u_ref: &[f64]) -> Option<Model> {
        let n = self.params.len();
        let us: Vec<Vec<f64>> = self
            .evals
            .iter()
            .map(|e| {
                e.x.iter()
                    .zip(self.params)
                    .map(|(x, p)| p.unit(*x))
                    .collect()
            })
            .collect();
        let mut order: Vec<usize> = (0..us.len()).collect();
        let dist = |u: &[f64]| {
            u.iter()
                .zip(u_ref)
                .map(|(a, b)| (a - b).powi(2))
                .sum::<f64>()
        };
        order.sort_by(|&a, &b| dist(&us[a]).total_cmp(&dist(&us[b])));
        order.truncate((2 * n + 1).max(n + 1));
        if order.len() < n + 1 {
            return None;
        }
        let rows = order.len();
        let design =
            nalgebra::DMatrix::from_fn(
                rows,
                n + 1,
                |r, c| {
                    if c == 0 {
                        1.0
                    } else {
                        us[order[r]][c - 1]
                    }
                },
            );
        let svd = design.clone().svd(true, true);
        let smax = svd.singular_values.max();
        if svd.singular_values.min() <= 1e-9 * smax {
            return None;
        }
        let mut c = vec![0.0; n];
        let mut a = nalgebra::DMatrix::zeros(n, n);
        for j in 0..n {
            let y = nalgebra::DVector::from_fn(rows, |r, _| self.evals[order[r]].obs[j].mean);
            let beta = svd.solve(&y, 1e-12).ok()?;
            c[j] = beta[0];
            for k in 0..n {
                a[(j, k)] = beta[k + 1];
            }
        }
        Some(Model { c, a })
    }

    /// Ends a surrogate search at evaluation `at` with `status`.
    fn surrogate_outcome(&mut self, at: usize, status: Status) -> Outcome {
        let n = self.params.len();
        let params = self.params.to_vec();
        let u_at: Vec<f64> = self.evals[at]
            .x
            .iter()
            .zip(&params)
            .map(|(x, p)| p.unit(*x))
            .collect();
        let bands: Vec<f64> = (0..n).map(|j| self.band(at, j)).collect();
        let angles = |ev: &Evaluation| {
            ev.obs
                .iter()
                .map(|o| format!("{:.2}° ± {:.2}°", o.mean, o.stderr))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let targets = self
            .targets
            .iter()
            .map(|t| format!("{t:.2}°"))
            .collect::<Vec<_>>()
            .join(", ");
        let point = |x: &[f64]| {
            params
                .iter()
                .zip(x)
                .map(|(p, v)| format!("{} = {v}", p.path))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let model = self.fit(&u_at);
        let root = model.as_ref().and_then(|m| m.root(self.targets));
        match (status, model, root) {
            (Status::Converged | Status::NoiseLimited | Status::Budget, Some(m), Some(u)) => {
                let inside = u.iter().all(|v| (0.0..=1.0).contains(v));
                let u = if inside { u } else { u_at.clone() };
                let x: Vec<f64> = u
                    .iter()
                    .zip(&params)
                    .map(|(u, p)| p.round(p.value(*u)))
                    .collect();
                let half = m.root_spread(&bands);
                let mut interval: Vec<[f64; 2]> = (0..n)
                    .map(|k| {
                        let h = half[k] * params[k].width();
                        let p = &params[k];
                        [p.round((x[k] - h).max(p.lo)), p.round((x[k] + h).min(p.hi))]
                    })
                    .collect();
                self.widen(&mut interval);
                let at_ev = &self.evals[at];
                let msg = match status {
                    Status::Budget => format!(
                        "stopped after {} evaluations without meeting the targets {targets} within --tol {}°; the closest evaluation, {}, gave {}; the model's root is {}",
                        self.evals.len(),
                        self.settings.tol,
                        point(&at_ev.x),
                        angles(at_ev),
                        point(&x)
                    ),
                    _ => format!(
                        "{}; at {} the angles are {} against the targets {targets}{}",
                        point(&x),
                        point(&at_ev.x),
                        angles(at_ev),
                        if status == Status::NoiseLimited {
                            "; the seeds' scatter is wider than --tol: more --seeds narrow it"
                        } else {
                            ""
                        }
                    ),
                };
                self.outcome(status, x, interval, msg)
            }
            (Status::OutOfReach, _, _) => {
                let at_ev = &self.evals[at];
                let msg = format!(
                    "the targets {targets} are out of reach within the ranges: the search was held at the ranges' edge twice; the closest point, {}, gives {}",
                    point(&at_ev.x),
                    angles(at_ev)
                );
                let x = at_ev.x.clone();
                self.outcome(Status::OutOfReach, x, Vec::new(), msg)
            }
            _ => {
                let at_ev = &self.evals[at];
                let msg = format!(
                    "the targets {targets} do not determine the parameters separately near {}: the angles change along one direction only (or not at all) there; widen the ranges or pick targets that respond differently to the parameters",
                    point(&at_ev.x)
                );
                let x = at_ev.x.clone();
                self.outcome(Status::Ambiguous, x, Vec::new(), msg)
            }
        }
    }
}

/// A linear model of the angles in scaled coordinates: m = c + A u.
struct Model {
    c: Vec<f64>,
    a: nalgebra::DMatrix<f64>,
}

impl Model {
    /// Where the model meets `targets`; `None` when A is nearly singular
    /// (its smallest singular value below 1e-6 of the largest, or the
    /// largest below 1e-9 ° per range).
    fn root(&self, targets: &[f64]) -> Option<Vec<f64>> {
        let n = self.c.len();
        let svd = self.a.clone().svd(true, true);
        let smax = svd.singular_values.max();
        if smax < 1e-9 || svd.singular_values.min() < 1e-6 * smax {
            return None;
        }
        let rhs = nalgebra::DVector::from_fn(n, |j, _| targets[j] - self.c[j]);
        let u = svd.solve(&rhs, 0.0).ok()?;
        Some(u.iter().copied().collect())
    }

    /// √diag(A⁻¹ E A⁻ᵀ), E = diag(h²) for the targets' bands h: the
    /// root's band in scaled coordinates.
    fn root_spread(&self, e: &[f64]) -> Vec<f64> {
        let n = self.c.len();
        let Some(inv) = self.a.clone().try_inverse() else {
            return vec![f64::INFINITY; n];
        };
        (0..n)
            .map(|k| {
                (0..n)
                    .map(|j| (inv[(k, j)] * e[j]).powi(2))
                    .sum::<f64>()
                    .sqrt()
            })
            .collect()
    }
}
