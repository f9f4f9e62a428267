//! UTC calendar time without a time zone database.

use std::time::{SystemTime, UNIX_EPOCH};

/// Broken-down UTC time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Utc {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
}

impl Utc {
    pub fn now() -> Utc {
        let secs = match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(d) => d.as_secs() as i64,
            Err(e) => -(e.duration().as_secs() as i64),
        };
        Utc::from_unix(secs)
    }

    /// Howard Hinnant's `civil_from_days`.
    pub fn from_unix(secs: i64) -> Utc {
        let days = secs.div_euclid(86400);
        let rem = secs.rem_euclid(86400);
        let z = days + 719468;
        let era = z.div_euclid(146097);
        let doe = z.rem_euclid(146097);
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = yoe + era * 400 + i64::from(month <= 2);
        Utc {
            year,
            month,
            day,
            hour: (rem / 3600) as u32,
            minute: (rem % 3600 / 60) as u32,
            second: (rem % 60) as u32,
        }
    }

    /// `20261121T105000Z`
    pub fn compact(&self) -> String {
        format!(
            "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }

    /// `2026-11-21T10:50:00Z` (RFC 3339)
    pub fn rfc3339(&self) -> String {
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }

    /// `10:50:00`
    pub fn clock(&self) -> String {
        format!("{:02}:{:02}:{:02}", self.hour, self.minute, self.second)
    }
}

#[cfg(test)]
mod tests {
    use super::Utc;

    #[test]
    fn known_dates() {
        assert_eq!(Utc::from_unix(0).compact(), "19700101T000000Z");
        assert_eq!(Utc::from_unix(951782400).compact(), "20000229T000000Z");
        assert_eq!(Utc::from_unix(1732186200).compact(), "20241121T105000Z");
        assert_eq!(Utc::from_unix(4102444799).compact(), "20991231T235959Z");
        assert_eq!(Utc::from_unix(4107542399).compact(), "21000228T235959Z");
        assert_eq!(Utc::from_unix(-1).compact(), "19691231T235959Z");
        assert_eq!(Utc::from_unix(1732186200).clock(), "10:50:00");
        assert_eq!(Utc::from_unix(1732186200).rfc3339(), "2024-11-21T10:50:00Z");
    }
}
