//! A panic inside any exported function comes back as `CODEOID_ERROR_PANIC` (or the documented
//! default for infallible functions) instead of unwinding into C or aborting, and the handle
//! stays usable afterwards.

use std::ffi::CStr;

use super::contract::calls;
use super::{Fixture, Out, c, check};
use crate::panic::inject_panic_on_next_call;
use crate::*;

#[test]
fn every_fallible_function_turns_a_panic_into_the_panic_code() {
    let fx = Fixture::new();
    let texts: Vec<(*const std::ffi::c_char, usize)> = (0..4).map(|_| c("x")).collect();
    for call in calls() {
        let mut out = Out::new();
        inject_panic_on_next_call();
        // SAFETY: valid handle, texts and out; the body panics before reading them.
        let err =
            check(unsafe { (call.invoke)(fx.memory, &texts, out.ptr()) }).expect_err(call.name);
        assert_eq!(err.code, CODEOID_ERROR_PANIC, "{}: {err:?}", call.name);
        assert!(
            err.message
                .starts_with(&format!("{} panicked: injected by a test", call.name)),
            "{}",
            err.message
        );
        assert!(
            out.0.ptr.is_null(),
            "{}: out written after a panic",
            call.name
        );
    }
    // SAFETY: as above.
    inject_panic_on_next_call();
    let mut memory = std::ptr::null_mut();
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let err = check(unsafe { codeoid_memory_open(std::ptr::null(), 0, &mut memory) }).unwrap_err();
    assert_eq!(err.code, CODEOID_ERROR_PANIC);
    assert!(memory.is_null());

    // The handle still works after all those panics.
    let mut out = Out::new();
    // SAFETY: valid handle and out.
    check(unsafe { codeoid_memory_sessions(fx.memory, out.ptr()) }).unwrap();
    assert_eq!(out.text(), "[]");
}

#[test]
fn infallible_functions_return_their_defaults_on_panic() {
    let fx = Fixture::new();
    let (p, l) = c("ep_missing");
    let mut out = Out::new();
    // SAFETY: valid arguments.
    let err = unsafe { codeoid_memory_episode(fx.memory, p, l, out.ptr()) };
    assert!(!err.is_null());
    // SAFETY: `err` is a live error; each accessor panics once, then works.
    unsafe {
        inject_panic_on_next_call();
        assert_eq!(codeoid_error_code(err), 0);
        inject_panic_on_next_call();
        assert_eq!(CStr::from_ptr(codeoid_error_message(err)).to_bytes(), b"");
        inject_panic_on_next_call();
        assert!(codeoid_error_code_name(CODEOID_ERROR_NOT_FOUND).is_null());
        assert_eq!(codeoid_error_code(err), CODEOID_ERROR_NOT_FOUND);
        // A panicking free leaks instead of unwinding; the next free works.
        inject_panic_on_next_call();
        codeoid_error_free(err);
        codeoid_error_free(err);
        let mut s = Out::new();
        check(codeoid_memory_sessions(fx.memory, s.ptr())).unwrap();
        inject_panic_on_next_call();
        codeoid_string_free(s.ptr());
        assert!(!s.0.ptr.is_null(), "a panicking free changes nothing");
    }
}

#[test]
fn the_cancel_flag_s_functions_return_their_defaults_on_panic() {
    inject_panic_on_next_call();
    assert!(codeoid_cancel_new().is_null());
    let flag = codeoid_cancel_new();
    assert!(!flag.is_null());
    // SAFETY: a live flag; each function panics once, then works; it is freed once.
    unsafe {
        codeoid_cancel_request(flag);
        inject_panic_on_next_call();
        assert!(!codeoid_cancel_requested(flag));
        assert!(codeoid_cancel_requested(flag));
        // A panicking free leaks instead of unwinding; the next free works.
        inject_panic_on_next_call();
        codeoid_cancel_free(flag);
        codeoid_cancel_free(flag);
    }
}
