//! Any input: the parser returns a profile or an error naming an existing
//! line, never panics; whatever parses prints back in the kernel's format
//! and parses to the same profile.
#![no_main]

use allocinfo_format::Profile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match Profile::parse(data) {
        Ok(profile) => {
            let printed = profile.to_string();
            let again = Profile::parse(printed.as_bytes()).expect("printed profile parses");
            assert_eq!(again, profile);
            assert_eq!(again.to_string(), printed);
            let _ = profile.totals();
        }
        Err(e) => {
            let lines = data.split(|&b| b == b'\n').count();
            assert!(e.line >= 1 && e.line <= lines + 1, "{e} in {lines} lines");
            let _ = e.to_string();
        }
    }
});
