//! The `shader!` proc-macro: compiles a GLSL compute shader written with the ncnn GLSL extension
//! in every valid permutation of the options it supports, at build time, and expands to a
//! `&'static fpshader::meta::ShaderModule` (the module itself lives in a `static` the expansion
//! declares), so it works wherever an expression does: `let`, `static`, `const`, an argument, a
//! return value.
//!
//! ```ignore
//! let conv = fpshader::shader!("shaders/conv.comp", fp16s, fp16a);
//! static CONV: &fpshader::meta::ShaderModule = fpshader::shader!("shaders/conv.comp", fp16s, fp16a);
//! static INLINE: &fpshader::meta::ShaderModule = fpshader::shader!(
//!     src: "#version 450\nvoid main() {}\n",
//!     fp16p, fp16s,
//!     include: ["shaders/include"],
//!     define: [("TILE", "8"), ("FAST")],
//!     target_env: "vulkan1.1",
//! );
//! ```
//!
//! Through the runtime it is `fpshader::shader!`, with `fpshader`'s `shader-macro` feature:
//!
//! ```toml
//! [dependencies]
//! fpshader = { version = "0.1", features = ["shader-macro"] }
//! ```
//!
//! The macro compiles with shaderc, so the build needs cmake and a C++ compiler (glslang's C++
//! is built once per target dir); the built-in layer shaders of `fpshader` need neither.
//!
//! Paths are relative to the invoking crate's `CARGO_MANIFEST_DIR` (or, failing that, to the
//! folder of the file invoking the macro). The crate is rebuilt when the
//! shader or any file it includes changes. Errors become `compile_error!`s: GLSL diagnostics (with
//! the shader's file and line) on the path or source literal, unknown options on the option.

use std::path::{Path, PathBuf};

use fpshader_build::cache::{Cache, default_dir_for_manifest};
use fpshader_build::codegen::{self, Embed};
use fpshader_build::{Compiler, Define, Opt, OptionSet, Settings, Source, TargetEnv};
use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Expr, Ident, LitStr, Token, bracketed};

/// Compiles a shader in all its variants into a `&'static ShaderModule`; see the crate
/// documentation.
#[proc_macro]
pub fn shader(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    let args = syn::parse_macro_input!(input as Args);
    // the invoking source file's folder, for paths not found under CARGO_MANIFEST_DIR
    let source_dir = proc_macro::Span::call_site()
        .local_file()
        .and_then(|f| f.parent().map(Path::to_path_buf));
    match expand(args, source_dir) {
        Ok(ts) => ts.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

enum Input {
    Path(LitStr),
    Src(LitStr),
}

impl Input {
    fn lit(&self) -> &LitStr {
        match self {
            Input::Path(l) | Input::Src(l) => l,
        }
    }
}

struct Args {
    input: Input,
    options: Vec<Ident>,
    includes: Vec<LitStr>,
    defines: Vec<(LitStr, Option<LitStr>)>,
    target_env: Option<LitStr>,
}

impl Parse for Args {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let first = if input.peek(LitStr) {
            Input::Path(input.parse()?)
        } else {
            let key: Ident = input.parse()?;
            input.parse::<Token![:]>()?;
            match key.to_string().as_str() {
                "src" => Input::Src(input.parse()?),
                "path" => Input::Path(input.parse()?),
                _ => {
                    return Err(syn::Error::new(
                        key.span(),
                        "expected a shader path literal, `path: \"…\"` or `src: \"…\"`",
                    ));
                }
            }
        };
        let mut args = Args {
            input: first,
            options: Vec::new(),
            includes: Vec::new(),
            defines: Vec::new(),
            target_env: None,
        };
        while !input.is_empty() {
            input.parse::<Token![,]>()?;
            if input.is_empty() {
                break;
            }
            let ident: Ident = input.parse()?;
            if !input.peek(Token![:]) {
                args.options.push(ident);
                continue;
            }
            input.parse::<Token![:]>()?;
            match ident.to_string().as_str() {
                "include" => {
                    let content;
                    bracketed!(content in input);
                    let list = Punctuated::<LitStr, Token![,]>::parse_terminated(&content)?;
                    args.includes.extend(list);
                }
                "define" => {
                    let content;
                    bracketed!(content in input);
                    let list = Punctuated::<Expr, Token![,]>::parse_terminated(&content)?;
                    for e in list {
                        args.defines.push(define(&e)?);
                    }
                }
                "target_env" => args.target_env = Some(input.parse()?),
                other => {
                    return Err(syn::Error::new(
                        ident.span(),
                        format!(
                            "unknown key `{other}`; expected option names or include:, define:, target_env:"
                        ),
                    ));
                }
            }
        }
        Ok(args)
    }
}

/// `("NAME", "VALUE")`, `("NAME")` or `"NAME"`.
fn define(e: &Expr) -> syn::Result<(LitStr, Option<LitStr>)> {
    fn lit(e: &Expr) -> syn::Result<LitStr> {
        match e {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Ok(s.clone()),
            // a `$x:literal` or `$x:expr` passed in from a macro_rules macro arrives grouped
            Expr::Group(g) => lit(&g.expr),
            other => Err(syn::Error::new_spanned(other, "expected a string literal")),
        }
    }
    match e {
        Expr::Tuple(t) if t.elems.len() == 2 => Ok((lit(&t.elems[0])?, Some(lit(&t.elems[1])?))),
        Expr::Tuple(t) if t.elems.len() == 1 => Ok((lit(&t.elems[0])?, None)),
        Expr::Paren(p) => Ok((lit(&p.expr)?, None)),
        other => Ok((lit(other)?, None)),
    }
}

fn expand(args: Args, source_dir: Option<PathBuf>) -> syn::Result<TokenStream> {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    // relative to CARGO_MANIFEST_DIR (as vulkano-shaders), else to the invoking file's folder
    let resolve = |p: &str| {
        let p = Path::new(p);
        if p.is_absolute() {
            return p.to_path_buf();
        }
        let in_manifest = manifest_dir.join(p);
        match &source_dir {
            Some(dir) if !in_manifest.exists() && dir.join(p).exists() => dir.join(p),
            _ => in_manifest,
        }
    };
    let lit = args.input.lit().clone();
    let err = |e: &dyn std::fmt::Display| syn::Error::new(lit.span(), e.to_string());

    let mut supported = OptionSet::FP32;
    for ident in &args.options {
        let opt: Opt = ident
            .to_string()
            .parse()
            .map_err(|e: fpshader_build::OptionError| {
                syn::Error::new(ident.span(), e.to_string())
            })?;
        supported = supported.with(opt);
    }

    let mut settings = Settings {
        include_dirs: args.includes.iter().map(|l| resolve(&l.value())).collect(),
        ..Settings::default()
    };
    for (name, value) in &args.defines {
        let value = value.as_ref().map(LitStr::value);
        let d = Define::new(&name.value(), value.as_deref())
            .map_err(|e| syn::Error::new(name.span(), e.to_string()))?;
        settings.defines.push(d);
    }
    if let Some(env) = &args.target_env {
        settings.target_env = env
            .value()
            .parse::<TargetEnv>()
            .map_err(|e| syn::Error::new(env.span(), e.to_string()))?;
    }

    let (source, module_name, mut tracked) = match &args.input {
        Input::Path(l) => {
            let path = resolve(&l.value());
            if !path.is_file() {
                return Err(err(&format!(
                    "cannot find shader `{}` (paths are relative to CARGO_MANIFEST_DIR or to the \
                     file invoking shader!)",
                    l.value()
                )));
            }
            let mut source = Source::from_file(&path).map_err(|e| err(&e))?;
            // diagnostics name the file as the user wrote it
            source.name = l.value();
            let name = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "shader".to_string());
            (source, name, vec![path])
        }
        Input::Src(l) => {
            let source = Source::from_str("shader!(src)", l.value()).map_err(|e| err(&e))?;
            (source, "inline".to_string(), Vec::new())
        }
    };

    let cache = Cache::from_env(default_dir_for_manifest(&manifest_dir));
    let compiler = Compiler::new(settings)
        .map_err(|e| err(&e))?
        .with_cache(cache);
    let set = compiler
        .compile_variants(&source, supported)
        .map_err(|e| err(&e))?;
    tracked.extend(set.includes.iter().map(|p| {
        if p.is_absolute() {
            p.clone()
        } else {
            manifest_dir.join(p)
        }
    }));

    let module = codegen::module_expr(&set, &module_name, "::fpshader", Embed::ByteString)
        .map_err(|e| err(&e))?;
    let module: TokenStream = module
        .parse()
        .map_err(|e| syn::Error::new(Span::call_site(), format!("fpshader codegen: {e}")))?;
    let tracked = tracked.iter().map(|p| p.display().to_string());
    // the module lives in a static the expansion declares, so the value is a `&'static`
    // reference: usable in `let`, `static`, `const`, argument and return positions alike, and
    // what `Context::pipeline` takes
    Ok(quote! {
        {
            // rustc rebuilds the crate when these files change
            #( const _: &[u8] = ::core::include_bytes!(#tracked); )*
            static __FPSHADER_MODULE: ::fpshader::meta::ShaderModule = #module;
            &__FPSHADER_MODULE
        }
    })
}
