//! Compile-fail tests: each `shader!` misuse gives a located `compile_error!`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
