//! Durations as people write and read them: `--older-than 30s`, and the
//! ages of live objects (`live`, `waste`).

/// Parses a duration: a number with an optional unit ns, us, ms, s (the
/// default), m, h or d.
pub fn duration_ns(s: &str) -> Result<u64, String> {
    let bad = || format!("invalid duration {s:?}: expected e.g. 500ms, 30s, 5m, 2h, 1d");
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (value, unit) = s.split_at(split);
    let value: f64 = value.parse().map_err(|_| bad())?;
    let scale = match unit {
        "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "" | "s" => 1e9,
        "m" => 60e9,
        "h" => 3600e9,
        "d" => 86400e9,
        _ => return Err(bad()),
    };
    let ns = value * scale;
    if !ns.is_finite() || ns < 0.0 || ns > u64::MAX as f64 {
        return Err(bad());
    }
    Ok(ns as u64)
}

/// Shows nanoseconds the way a person reads an age: 850ms, 12.5s, 3m20s, 2h05m.
pub fn age(ns: u64) -> String {
    let ms = ns / 1_000_000;
    let s = ns / 1_000_000_000;
    match s {
        0 => format!("{ms}ms"),
        1..=59 => format!("{}.{}s", s, (ms % 1000) / 100),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_ages() {
        assert_eq!(duration_ns("30s"), Ok(30_000_000_000));
        assert_eq!(duration_ns("2"), Ok(2_000_000_000));
        assert_eq!(duration_ns("1.5m"), Ok(90_000_000_000));
        assert_eq!(duration_ns("500ms"), Ok(500_000_000));
        assert_eq!(duration_ns("1d"), Ok(86_400_000_000_000));
        for bad in ["", "s", "1x", "-1s", "1e400"] {
            assert!(duration_ns(bad).is_err(), "{bad}");
        }
        assert_eq!(age(850_000_000), "850ms");
        assert_eq!(age(12_500_000_000), "12.5s");
        assert_eq!(age(200_000_000_000), "3m20s");
        assert_eq!(age(7_500_000_000_000), "2h05m");
    }
}
