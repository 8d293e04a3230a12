//! Ordinary least-squares straight-line fit with the standard error of the
//! slope, the one statistical tool the heap measurement needs.

/// A fitted line `y = intercept + slope · x`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LineFit {
    /// Slope.
    pub slope: f64,
    /// Standard error of the slope: √(SSR / (n − 2) / Sxx), with SSR the sum of
    /// squared residuals and Sxx = Σ (x − x̄)².
    pub slope_stderr: f64,
    /// Intercept (y at x = 0).
    pub intercept: f64,
    /// Number of points fitted.
    pub points: usize,
}

/// Fits a line to `(x, y)` points by least squares. Returns `None` with
/// fewer than 3 points (no degrees of freedom left for the error) or when
/// all x are equal (the slope is undefined).
pub fn fit_line(points: &[(f64, f64)]) -> Option<LineFit> {
    let n = points.len();
    if n < 3 {
        return None;
    }
    let nf = n as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / nf;
    let my = points.iter().map(|p| p.1).sum::<f64>() / nf;
    let (mut sxx, mut sxy) = (0.0, 0.0);
    for &(x, y) in points {
        sxx += (x - mx) * (x - mx);
        sxy += (x - mx) * (y - my);
    }
    if sxx <= 0.0 || !sxx.is_finite() {
        return None;
    }
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let ssr: f64 = points
        .iter()
        .map(|&(x, y)| {
            let e = y - (intercept + slope * x);
            e * e
        })
        .sum();
    let slope_stderr = (ssr / (nf - 2.0) / sxx).sqrt();
    Some(LineFit {
        slope,
        slope_stderr,
        intercept,
        points: n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_line_has_zero_slope_error() {
        let pts: Vec<_> = (0..5).map(|i| (i as f64, 2.0 - 0.5 * i as f64)).collect();
        let f = fit_line(&pts).unwrap();
        assert!((f.slope + 0.5).abs() < 1e-12, "{f:?}");
        assert!((f.intercept - 2.0).abs() < 1e-12, "{f:?}");
        assert!(f.slope_stderr < 1e-12, "{f:?}");
    }

    #[test]
    fn slope_error_matches_the_textbook_formula() {
        // y = x + (+1, −1, +1, −1): SSR after the fit and Sxx by hand.
        let pts = [(0.0, 1.0), (1.0, 0.0), (2.0, 3.0), (3.0, 2.0)];
        let f = fit_line(&pts).unwrap();
        // x̄ = ȳ = 1.5, Sxx = 5, Sxy = 3: slope = 0.6.
        assert!((f.slope - 0.6).abs() < 1e-12, "{f:?}");
        let ssr: f64 = pts
            .iter()
            .map(|&(x, y)| (y - f.intercept - f.slope * x).powi(2))
            .sum();
        assert!((f.slope_stderr - (ssr / 2.0 / 5.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn too_few_points_or_one_x_give_none() {
        assert!(fit_line(&[(0.0, 0.0), (1.0, 1.0)]).is_none());
        assert!(fit_line(&[(1.0, 0.0), (1.0, 1.0), (1.0, 2.0)]).is_none());
    }
}
