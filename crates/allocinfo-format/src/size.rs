//! Human-readable byte sizes with binary (IEC) units.
//!
//! [`format_iec`] matches `numfmt --to=iec` (three significant digits,
//! rounding away from zero), with IEC unit names: `4.0 KiB`, `140 KiB`,
//! `1023 B`. [`parse_size`] reads sizes such as `4096`, `64K`, `1.5MiB`
//! (powers of 1024) and `4kB`, `1MB` (powers of 1000, as dd reads them).

const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

/// Formats a byte count like `numfmt --to=iec`, with a unit suffix.
///
/// ```
/// use allocinfo_format::size::format_iec;
/// assert_eq!(format_iec(1023), "1023 B");
/// assert_eq!(format_iec(4096), "4.0 KiB");
/// assert_eq!(format_iec(1025), "1.1 KiB");
/// assert_eq!(format_iec(143360), "140 KiB");
/// assert_eq!(format_iec(1048575), "1.0 MiB");
/// assert_eq!(format_iec(-1536), "-1.5 KiB");
/// ```
pub fn format_iec(bytes: i64) -> String {
    let sign = if bytes < 0 { "-" } else { "" };
    let (number, unit) = scale(bytes.unsigned_abs());
    format!("{sign}{number} {unit}")
}

/// [`format_iec`] of an unsigned count, to 2^64 - 1 (`16 EiB`, as numfmt's 16E).
///
/// ```
/// use allocinfo_format::size::format_iec_u64;
/// assert_eq!(format_iec_u64(u64::MAX), "16 EiB");
/// assert_eq!(format_iec_u64(4096), "4.0 KiB");
/// ```
pub fn format_iec_u64(bytes: u64) -> String {
    let (number, unit) = scale(bytes);
    format!("{number} {unit}")
}

/// Like [`format_iec`], with a `+` before positive values (for deltas).
pub fn format_iec_delta(bytes: i64) -> String {
    if bytes > 0 {
        format!("+{}", format_iec(bytes))
    } else {
        format_iec(bytes)
    }
}

fn div_ceil(a: u128, b: u128) -> u128 {
    a.div_ceil(b)
}

/// Returns the number (without unit) and the unit.
fn scale(v: u64) -> (String, &'static str) {
    if v < 1024 {
        return (v.to_string(), UNITS[0]);
    }
    let v = u128::from(v);
    let mut power = 1;
    while v >= 1024u128.pow(power + 1) {
        power += 1;
    }
    loop {
        let unit = 1024u128.pow(power);
        let tenths = div_ceil(v * 10, unit);
        if tenths < 100 {
            return (
                format!("{}.{}", tenths / 10, tenths % 10),
                UNITS[power as usize],
            );
        }
        let whole = div_ceil(v, unit);
        if whole < 1024 || power as usize == UNITS.len() - 1 {
            return (whole.to_string(), UNITS[power as usize]);
        }
        // Rounding up reached 1024 of this unit: 1.0 of the next one.
        power += 1;
    }
}

/// Error from [`parse_size`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    #[error(
        "invalid size {0:?}: expected a number with an optional unit (B, K or KiB, M or MiB, ...: powers of 1024; kB, MB, ...: powers of 1000)"
    )]
    Syntax(String),
    #[error("invalid size {0:?}: sizes are not negative")]
    Negative(String),
    #[error("invalid size {0:?}: larger than the largest size, 8 EiB less one byte (2^63 - 1)")]
    TooLarge(String),
}

/// Parses a size: a non-negative number (decimals allowed) with an optional
/// unit `K`, `M`, `G`, `T`, `P`, `E`, case-insensitive, as dd and coreutils
/// read them: alone or followed by `i` or `iB` a power of 1024 (`64K`,
/// `1.5MiB`), followed by `B` alone a power of 1000 (`4kB`, `1MB`).
/// Fractions of a byte are rounded up.
///
/// ```
/// use allocinfo_format::size::parse_size;
/// assert_eq!(parse_size("4096").unwrap(), 4096);
/// assert_eq!(parse_size("64K").unwrap(), 65536);
/// assert_eq!(parse_size("1.5 MiB").unwrap(), 1572864);
/// assert!(parse_size("12 parsecs").is_err());
/// ```
pub fn parse_size(input: &str) -> Result<i64, SizeError> {
    let error = || SizeError::Syntax(input.to_owned());
    let too_large = || SizeError::TooLarge(input.to_owned());
    let s = input.trim();
    if s.starts_with('-') && s.len() > 1 {
        return Err(SizeError::Negative(input.to_owned()));
    }
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    let (number, unit) = (&s[..split], s[split..].trim_start());
    let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && frac.is_empty() || frac.contains('.') {
        return Err(error());
    }
    if whole.len() > 20 && whole.bytes().all(|b| b.is_ascii_digit()) {
        return Err(too_large());
    }
    let unit = unit.to_ascii_lowercase();
    let with_b = unit.strip_suffix('b');
    let unit = with_b.unwrap_or(&unit);
    let binary = unit.ends_with('i');
    let unit = unit.strip_suffix('i').unwrap_or(unit);
    // As dd and coreutils: KB, MB, ... are powers of 1000; K, KiB, M, MiB,
    // ... powers of 1024.
    let base: u128 = if with_b.is_some() && !binary && !unit.is_empty() {
        1000
    } else {
        1024
    };
    let power = match unit {
        "" if !s.ends_with(['i', 'I']) => 0,
        "k" => 1,
        "m" => 2,
        "g" => 3,
        "t" => 4,
        "p" => 5,
        "e" => 6,
        _ => return Err(error()),
    };
    let multiplier = base.pow(power);
    let whole: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| error())?
    };
    let frac_digits = frac.len().min(18);
    let frac: u128 = if frac_digits == 0 {
        0
    } else {
        frac[..frac_digits].parse().map_err(|_| error())?
    };
    let total = whole
        .checked_mul(multiplier)
        .and_then(|w| w.checked_add(div_ceil(frac * multiplier, 10u128.pow(frac_digits as u32))))
        .ok_or_else(too_large)?;
    i64::try_from(total).map_err(|_| too_large())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected strings produced by GNU coreutils 9.1 `numfmt --to=iec`.
    #[test]
    fn matches_numfmt() {
        let cases = [
            (0, "0"),
            (1, "1"),
            (1000, "1000"),
            (1023, "1023"),
            (1024, "1.0K"),
            (1025, "1.1K"),
            (1536, "1.5K"),
            (4096, "4.0K"),
            (10239, "10K"),
            (10240, "10K"),
            (10241, "11K"),
            (102400, "100K"),
            (143360, "140K"),
            (1048575, "1.0M"),
            (1048576, "1.0M"),
            (1073741824, "1.0G"),
            (5000000000, "4.7G"),
            (-4096, "-4.0K"),
            (-1025, "-1.1K"),
            (i64::MAX, "8.0E"),
        ];
        for (v, numfmt) in cases {
            let ours = format_iec(v);
            let (num, unit) = ours.split_once(' ').unwrap();
            let short = if unit == "B" {
                String::new()
            } else {
                unit[..1].to_owned()
            };
            assert_eq!(format!("{num}{short}"), numfmt, "for {v}");
        }
        assert_eq!(format_iec(i64::MIN), "-8.0 EiB");
    }

    #[test]
    fn deltas_have_signs() {
        assert_eq!(format_iec_delta(4096), "+4.0 KiB");
        assert_eq!(format_iec_delta(0), "0 B");
        assert_eq!(format_iec_delta(-10), "-10 B");
    }

    #[test]
    fn parses_sizes() {
        for (s, v) in [
            ("0", 0),
            ("17", 17),
            ("17B", 17),
            ("1k", 1024),
            ("1KiB", 1024),
            ("1kb", 1000),
            ("4kB", 4000),
            ("1MB", 1_000_000),
            ("1.5GB", 1_500_000_000),
            ("1Mi", 1 << 20),
            ("2 MiB", 2 << 20),
            ("1.5G", 3 << 29),
            (".5K", 512),
            ("0.1K", 103),
            ("7E", 7 << 60),
        ] {
            assert_eq!(parse_size(s), Ok(v), "{s}");
        }
        assert_eq!(parse_size("8EiB"), Err(SizeError::TooLarge("8EiB".into())));
        assert_eq!(
            parse_size("8E").unwrap_err().to_string(),
            "invalid size \"8E\": larger than the largest size, 8 EiB less one byte (2^63 - 1)"
        );
        assert_eq!(
            parse_size("-1").unwrap_err().to_string(),
            "invalid size \"-1\": sizes are not negative"
        );
        assert_eq!(parse_size("-4K"), Err(SizeError::Negative("-4K".into())));
        assert_eq!(parse_size("1Q"), Err(SizeError::Syntax("1Q".into())));
        for bad in [
            "",
            "K",
            "-1",
            "1.2.3",
            "1Q",
            "1 KiBs",
            "1i",
            "99999999999999999999999",
        ] {
            assert!(parse_size(bad).is_err(), "{bad:?}");
        }
    }
}
