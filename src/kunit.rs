// SPDX-License-Identifier: GPL-2.0

//! KUnit test suites written in Rust.
//!
//! C header: [`include/kunit/test.h`](srctree/include/kunit/test.h)
//!
//! Linux 6.12's `kernel` crate can report a failed assertion to KUnit but cannot declare a
//! suite. [`kunit_suite!`] does what C's `kunit_test_suite()` does: it emits a `struct
//! kunit_suite` with its `struct kunit_case` array, and a pointer to the suite in the
//! `.kunit_test_suites` section, which KUnit walks at boot. [`kunit_expect!`] is
//! `KUNIT_EXPECT_TRUE_MSG()`: a failure is reported and the case goes on.

use core::{fmt, mem::MaybeUninit};
use kernel::{bindings, str::CStr};

/// A running KUnit test case.
///
/// # Invariants
///
/// `self.0` is the `struct kunit` of the case that runs on this thread, valid while `self` lives.
pub(crate) struct Test(*mut bindings::kunit);

impl Test {
    /// Wraps the `struct kunit` that KUnit passes to a case.
    ///
    /// # Safety
    ///
    /// `test` must be the `struct kunit` of the running case, and `Self` must not outlive it.
    pub(crate) unsafe fn from_raw(test: *mut bindings::kunit) -> Self {
        // INVARIANT: The caller guarantees that `test` is the running case's.
        Self(test)
    }

    /// Reports the failed expectation `site` with `msg`; the case goes on and will fail.
    pub(crate) fn fail(&self, site: &'static Site, msg: fmt::Arguments<'_>) {
        // SAFETY: By the type invariant `self.0` is the running case; `site` is static; the
        // format `%pA` takes a `fmt::Arguments`, which lives across the call.
        unsafe {
            bindings::__kunit_do_failed_assertion(
                self.0,
                &raw const site.loc,
                bindings::kunit_assert_type_KUNIT_EXPECTATION,
                &raw const site.assert.assert,
                Some(bindings::kunit_unary_assert_format),
                c"%pA".as_ptr().cast(),
                &raw const msg,
            )
        };
    }
}

impl Test {
    /// Marks the case skipped with `reason`, as `kunit_mark_skipped()` does; the case goes on.
    pub(crate) fn skip(&self, reason: &str) {
        // SAFETY: By the type invariant `self.0` is the running case, and the case's thread is
        // the only one that writes its status; KUnit reads it after the case returns.
        unsafe {
            let test = &mut *self.0;
            test.status = bindings::kunit_status_KUNIT_SKIPPED;
            let comment = &mut test.status_comment;
            let n = reason.len().min(comment.len() - 1);
            for (c, b) in comment.iter_mut().zip(reason.as_bytes()[..n].iter()) {
                *c = *b as _;
            }
            comment[n] = 0;
        }
    }
}

/// Where an expectation is written and what it expects: `struct kunit_loc` and
/// `struct kunit_unary_assert`.
pub(crate) struct Site {
    loc: bindings::kunit_loc,
    assert: bindings::kunit_unary_assert,
}

// SAFETY: `Site` only holds pointers to static, immutable strings.
unsafe impl Sync for Site {}

impl Site {
    /// Makes a site for the expectation `condition` at `file:line`.
    pub(crate) const fn new(file: &'static CStr, line: u32, condition: &'static CStr) -> Self {
        Self {
            loc: bindings::kunit_loc {
                file: file.as_char_ptr(),
                line: line as i32,
            },
            assert: bindings::kunit_unary_assert {
                assert: bindings::kunit_assert {},
                condition: condition.as_char_ptr(),
                expected_true: true,
            },
        }
    }
}

/// A C struct for which all zeroes is a valid value.
///
/// # Safety
///
/// All zeroes must be a valid value of the type.
unsafe trait Zeroable {}

// SAFETY: Null pointers, `None` callbacks, zero counts and enums whose zero is a variant.
unsafe impl Zeroable for bindings::kunit_case {}
// SAFETY: As above.
unsafe impl Zeroable for bindings::kunit_suite {}

/// Returns a zeroed C struct, as C's designated initializers leave unnamed fields.
const fn zeroed<T: Zeroable>() -> T {
    // SAFETY: `T: Zeroable`.
    unsafe { MaybeUninit::zeroed().assume_init() }
}

/// Returns one `struct kunit_case` running `run`.
pub(crate) const fn case(
    name: &'static CStr,
    run: unsafe extern "C" fn(*mut bindings::kunit),
) -> bindings::kunit_case {
    bindings::kunit_case {
        run_case: Some(run),
        name: name.as_char_ptr(),
        ..zeroed()
    }
}

/// Returns the `struct kunit_case` that ends a case array.
pub(crate) const fn case_end() -> bindings::kunit_case {
    zeroed()
}

/// Returns a `struct kunit_suite` called `name` running the cases in `cases`.
///
/// `name` is cut to the 255 bytes that `struct kunit_suite` holds.
pub(crate) const fn suite(name: &str, cases: *mut bindings::kunit_case) -> bindings::kunit_suite {
    let mut suite: bindings::kunit_suite = zeroed();
    let bytes = name.as_bytes();
    let mut i = 0;
    while i < bytes.len() && i < suite.name.len() - 1 {
        suite.name[i] = bytes[i] as _;
        i += 1;
    }
    suite.test_cases = cases;
    suite
}

/// Declares a KUnit suite of Rust test cases, each a `fn(&Test)` in the calling module.
///
/// ```ignore
/// kunit_suite!(alloctag_counters, "alloctag_counters", [pages_move_counters]);
/// ```
macro_rules! kunit_suite {
    ($module:ident, $name:literal, [$($case:ident),+ $(,)?]) => {
        mod $module {
            use kernel::bindings;

            $(
                /// KUnit's entry point for the case of the same name in the parent module.
                ///
                /// # Safety
                ///
                /// Only KUnit calls it, with the running case.
                unsafe extern "C" fn $case(test: *mut bindings::kunit) {
                    // SAFETY: KUnit passes the running case, which outlives this call.
                    let test = unsafe { $crate::kunit::Test::from_raw(test) };
                    super::$case(&test);
                }
            )+

            const CASE_COUNT: usize = [$(stringify!($case)),+].len();

            static mut CASES: [bindings::kunit_case; CASE_COUNT + 1] = [
                $($crate::kunit::case(kernel::c_str!(stringify!($case)), $case),)+
                $crate::kunit::case_end(),
            ];

            // KUnit writes the results into the suite and its cases, so both are mutable;
            // nothing but KUnit touches them.
            static mut SUITE: bindings::kunit_suite =
                $crate::kunit::suite($name, (&raw mut CASES).cast());

            #[used]
            #[link_section = ".kunit_test_suites"]
            static mut SUITE_ENTRY: *mut bindings::kunit_suite = &raw mut SUITE;
        }
    };
}
pub(crate) use kunit_suite;

/// Expects `condition` to hold in the running case; reports a failure with the optional message
/// and goes on, like `KUNIT_EXPECT_TRUE_MSG()`.
macro_rules! kunit_expect {
    ($test:expr, $condition:expr $(,)?) => {
        $crate::kunit::kunit_expect!($test, $condition, "")
    };
    ($test:expr, $condition:expr, $($msg:tt)+) => {
        if !$condition {
            static SITE: $crate::kunit::Site = $crate::kunit::Site::new(
                kernel::c_str!(file!()),
                line!(),
                kernel::c_str!(stringify!($condition)),
            );
            $test.fail(&SITE, format_args!($($msg)+));
        }
    };
}
pub(crate) use kunit_expect;
