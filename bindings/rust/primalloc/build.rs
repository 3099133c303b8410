// SPDX-License-Identifier: MIT
//! Builds primalloc's static library from the tree this crate sits in
//! (or from PRIMALLOC_SOURCE) with CMake, and links it.  No crate
//! dependencies: cmake and a C compiler are the only tools it needs.
use std::env;
use std::path::PathBuf;
use std::process::Command;

fn run(cmd: &mut Command) {
    let status = cmd.status().unwrap_or_else(|e| panic!("{:?}: {}", cmd, e));
    assert!(status.success(), "{:?} failed: {}", cmd, status);
}

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let source = env::var_os("PRIMALLOC_SOURCE")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../../.."));
    let build = PathBuf::from(env::var("OUT_DIR").unwrap()).join("primalloc");
    run(Command::new("cmake")
        .arg("-S")
        .arg(&source)
        .arg("-B")
        .arg(&build)
        .args(["-DCMAKE_BUILD_TYPE=Release", "-DPM_TESTS=OFF", "-DPM_BENCH=OFF"]));
    run(Command::new("cmake")
        .arg("--build")
        .arg(&build)
        .args(["--target", "primalloc_static"]));
    println!("cargo:rustc-link-search=native={}", build.display());
    println!("cargo:rustc-link-lib=static=primalloc");
    println!("cargo:rustc-link-lib=pthread");
    for dir in ["src", "include", "tools", "CMakeLists.txt"] {
        println!("cargo:rerun-if-changed={}", source.join(dir).display());
    }
    println!("cargo:rerun-if-env-changed=PRIMALLOC_SOURCE");
}
