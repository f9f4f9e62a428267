//! Size parsing and formatting never panic; formatted sizes stay short.
#![no_main]

use allocinfo_format::size::{format_iec, format_iec_delta, parse_size};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(Ok(v)) = std::str::from_utf8(data).map(parse_size) {
        assert!(v >= 0);
    }
    if data.len() >= 8 {
        let v = i64::from_le_bytes(data[..8].try_into().unwrap());
        let s = format_iec(v);
        assert!(s.len() <= 9, "{s}");
        let _ = format_iec_delta(v);
    }
});
