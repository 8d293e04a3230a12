//! One parameter: the bracket and false position with the Illinois rule
//! (the module docs of [`super`], "One parameter"), and the interval of
//! its estimate.

use anyhow::Result;

use super::{End, Outcome, Param, Search, Status};

impl Search<'_> {
    /// Whether a one-parameter search ends with the bracket (`neg`, `pos`)
    /// after running `ids`: `Converged` at the run id closest to the target
    /// that meets it; `NoiseLimited` when the interval of the bracket's
    /// line already spans the bracket (runs inside it could not be told
    /// from the target), at the end closest to the target.
    fn bracket_stop(
        &self,
        neg: End,
        pos: End,
        ids: &[usize],
        sign: f64,
    ) -> Option<(usize, Status)> {
        let closest =
            |a: &usize, b: &usize| self.miss(*a, 0).abs().total_cmp(&self.miss(*b, 0).abs());
        if let Some(i) = ids
            .iter()
            .copied()
            .filter(|&i| self.converged(i))
            .min_by(closest)
        {
            return Some((i, Status::Converged));
        }
        let width = (pos.x - neg.x).abs();
        let slope = ((pos.d - neg.d) / width * sign).abs();
        let h = neg.h.max(pos.h);
        if slope == 0.0 || 2.0 * h / slope >= width {
            let i = if neg.d.abs() <= pos.d.abs() {
                neg.eval
            } else {
                pos.eval
            };
            return Some((i, Status::NoiseLimited));
        }
        None
    }

    /// One parameter: bracket, then false position (module docs).
    pub(super) fn one_parameter(&mut self) -> Result<Outcome> {
        let p = self.params[0].clone();
        let t = self.targets[0];
        let tol = self.settings.tol;
        let ids = self.run(vec![vec![p.lo], vec![p.hi]])?;
        let (a, b) = (ids[0], ids[1]);
        let (ma, mb) = (self.evals[a].obs[0].mean, self.evals[b].obs[0].mean);
        // Orient so that the miss grows from `neg` to `pos`.
        let sign = if mb >= ma { 1.0 } else { -1.0 };
        let (ea, eb) = (self.end(a, sign), self.end(b, sign));
        let slope_ab = (mb - ma) / (p.hi - p.lo);
        if ea.d > 0.0 || eb.d < 0.0 {
            // Both ends on one side of the target.
            let c = if self.miss(a, 0).abs() <= self.miss(b, 0).abs() {
                ea
            } else {
                eb
            };
            let (xc, mc) = (c.x, self.evals[c.eval].obs[0].mean);
            if self.within_noise(c.eval) {
                let status = if self.converged(c.eval) {
                    Status::Converged
                } else {
                    Status::NoiseLimited
                };
                let mut interval = vec![line_interval(&p, xc, slope_ab, c.h)];
                self.widen(&mut interval);
                let msg = format!(
                    "the target {t:.2}° is met at the end of the range, {} = {xc} ({mc:.2}° ± {:.2}°, 95 %); the range may cut off values beyond it",
                    p.path, c.h
                );
                return Ok(self.outcome(status, vec![xc], interval, msg));
            }
            let msg = format!(
                "the target {t:.2}° is out of reach for {} in [{}, {}]: the angle runs from {ma:.2}° to {mb:.2}°; the closest end is {} = {xc} ({mc:.2}° ± {:.2}°, 95 %)",
                p.path, p.lo, p.hi, p.path, c.h
            );
            return Ok(self.outcome(Status::OutOfReach, vec![xc], Vec::new(), msg));
        }
        // The oriented miss grows with x, so a is the negative end.
        let (mut neg, mut pos) = (ea, eb);
        // Illinois weights and which end survived the last round.
        let (mut w_neg, mut w_pos) = (1.0f64, 1.0f64);
        let mut kept: Option<bool> = None; // Some(true): neg kept, pos moved
        let mut stop = self.bracket_stop(neg, pos, &[a, b], sign);
        while stop.is_none() {
            if self.evals.len() >= self.settings.max_evals {
                break;
            }
            let (dn, dp) = (w_neg * neg.d, w_pos * pos.d);
            let mut tau = if dp - dn > 0.0 { -dn / (dp - dn) } else { 0.5 };
            tau = tau.clamp(0.1, 0.9);
            let x = neg.x + tau * (pos.x - neg.x);
            let mut points = vec![vec![x]];
            if self.settings.per_round >= 2 && self.evals.len() + 2 <= self.settings.max_evals {
                let mid = if tau >= 0.5 {
                    0.5 * (neg.x + x)
                } else {
                    0.5 * (x + pos.x)
                };
                points.push(vec![mid]);
            }
            let before = self.evals.len();
            let ids = self.run(points)?;
            if self.evals.len() == before {
                // Every proposal rounds to a point already run: the
                // bracket is as narrow as the rounding.
                break;
            }
            // New bracket: walk the points inside it from the neg end.
            let mut inside: Vec<End> = ids
                .iter()
                .map(|&i| self.end(i, sign))
                .filter(|q| (q.x - neg.x) * (pos.x - q.x) > 0.0)
                .collect();
            let dir = (pos.x - neg.x).signum();
            inside.sort_by(|u, v| (dir * u.x).total_cmp(&(dir * v.x)));
            let (old_neg, old_pos) = (neg.eval, pos.eval);
            for q in inside {
                if q.d <= 0.0 {
                    neg = q;
                } else {
                    pos = q;
                    break;
                }
            }
            let neg_kept = neg.eval == old_neg;
            let pos_kept = pos.eval == old_pos;
            match (neg_kept, pos_kept) {
                (true, false) => {
                    w_pos = 1.0;
                    if kept == Some(true) {
                        w_neg *= 0.5;
                    }
                    kept = Some(true);
                }
                (false, true) => {
                    w_neg = 1.0;
                    if kept == Some(false) {
                        w_pos *= 0.5;
                    }
                    kept = Some(false);
                }
                _ => {
                    w_neg = 1.0;
                    w_pos = 1.0;
                    kept = None;
                }
            }
            stop = self.bracket_stop(neg, pos, &ids, sign);
        }
        // The estimate: the root of the line through the final bracket.
        let slope = (pos.d - neg.d) / (pos.x - neg.x) * sign;
        let tau = if pos.d - neg.d > 0.0 {
            -neg.d / (pos.d - neg.d)
        } else {
            0.5
        };
        let xhat = p.round(neg.x + tau * (pos.x - neg.x));
        let h = neg.h + tau * (pos.h - neg.h);
        let mut interval = vec![line_interval(&p, xhat, slope, h)];
        self.widen(&mut interval);
        let (status, msg) = match stop {
            Some((i, status)) => {
                let o = &self.evals[i].obs[0];
                (
                    status,
                    format!(
                        "{} = {xhat} (interval {} … {}); at {} = {} the angle is {:.2}° ± {:.2}° against the target {t:.2}°{}",
                        p.path,
                        interval[0][0],
                        interval[0][1],
                        p.path,
                        self.evals[i].x[0],
                        o.mean,
                        o.stderr,
                        if status == Status::NoiseLimited {
                            format!(
                                "; the seeds' scatter (95 % band ±{:.2}°) is wider than --tol {tol}°: more --seeds narrow it",
                                self.band(i, 0)
                            )
                        } else {
                            String::new()
                        }
                    ),
                )
            }
            None => (
                Status::Budget,
                format!(
                    "stopped after {} evaluations without meeting the target {t:.2}° within --tol {tol}°: the bracket is {} = {} … {} ({:.2}° … {:.2}°); the estimate {xhat} is the line's root",
                    self.evals.len(),
                    p.path,
                    neg.x.min(pos.x),
                    neg.x.max(pos.x),
                    t + sign * neg.d,
                    t + sign * pos.d
                ),
            ),
        };
        Ok(self.outcome(status, vec![xhat], interval, msg))
    }
}

/// The interval of a one-parameter estimate: where the line of `slope`
/// (° per unit) through (x, T) is within the band `band` (°) of T, within
/// the range.
fn line_interval(p: &Param, x: f64, slope: f64, band: f64) -> [f64; 2] {
    let h = if slope.abs() > 0.0 {
        band / slope.abs()
    } else {
        f64::INFINITY
    };
    [p.round((x - h).max(p.lo)), p.round((x + h).min(p.hi))]
}
