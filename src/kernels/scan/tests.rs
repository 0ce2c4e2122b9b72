//! Scanner tests on text in the shapes real kernel files use.

use super::*;

const SRC: &str = r#"
// __global__ void commented_out(float* x) {}
#define TILE 16
#define KERNEL_BODY(name) \
    __global__ void name(float* x) { x[0] = 1; }
#define RESTRICT __restrict__
#define BOUNDS(n) __launch_bounds__(n)
extern "C" __global__ void k_one(const float* __restrict__ A, float *B,
                                 int M, int N) { }
/* a block comment
   __global__ void also_commented() {} */
extern "C" {
__global__ void k_two(float* out, unsigned int n) { if (n) { out[0] = 1; } }
}
template <int BLOCK = 256, typename T>
__global__ void __launch_bounds__(BLOCK) k_templ(T* x, const T* RESTRICT y,
    int n = 4) {}
static __global__ void BOUNDS(128) k_macro_bounds(float* x) {}
__global__ void k_proto(float* x);
void __global__ k_proto(float* x) { const char* s = "__global__ void fake() {"; }
namespace outer { namespace inner {
__global__ void k_ns(float*, int) {}
} }
__global__ void k_mangled(void) {}
int main() { k_mangled<<<1, 1>>>(); return 0; }
"#;

fn names(ks: &[KernelDecl]) -> Vec<&str> {
    ks.iter().map(|k| k.name.as_str()).collect()
}

#[test]
fn finds_definitions_in_real_world_shapes() {
    let ks = scan(SRC, "x.cu");
    assert_eq!(
        names(&ks),
        [
            "k_one",
            "k_two",
            "k_templ",
            "k_macro_bounds",
            "k_proto",
            "k_ns",
            "k_mangled"
        ]
    );
    let one = &ks[0];
    assert_eq!((one.line, one.extern_c), (8, true));
    assert_eq!(one.params.len(), 4);
    assert_eq!(one.params[0].name, "A");
    assert!(one.params[0].is_pointer());
    assert_eq!(one.params[0].base_type(), "float");
    assert_eq!(ks[1].params[1].base_type(), "unsigned int");
    assert!(ks[1].extern_c);
    assert!(ks[6].params.is_empty());
    assert!(!ks[6].extern_c);
    assert_eq!(ks[6].location(), "x.cu:24");
}

#[test]
fn reads_templates_defaults_namespaces_and_unnamed_parameters() {
    let ks = scan(SRC, "x.cu");
    let t = &ks[2];
    let head = t.template.as_ref().unwrap();
    assert_eq!(head[0].name, "BLOCK");
    assert_eq!(head[0].default.as_deref(), Some("256"));
    assert_eq!(head[1].name, "T");
    assert_eq!(
        t.params[1].ty, "const T* RESTRICT",
        "a macro stays in the type"
    );
    assert_eq!(t.params[1].name, "y");
    assert_eq!(t.params[2].name, "n", "default argument dropped");
    assert_eq!(
        t.signature(),
        "template <int BLOCK = 256, typename T> k_templ(T* x, const T* RESTRICT y, int n)"
    );
    let ns = &ks[5];
    assert_eq!(ns.scope, ["outer", "inner"]);
    assert_eq!(ns.params[0].ty, "float*");
    assert_eq!(ns.params[0].name, "");
    assert_eq!(ns.params[1].ty, "int");
}

#[test]
fn local_includes_are_listed_without_system_headers() {
    let t = "#include <stdio.h>\n#include \"common.h\"\n  #  include \"sub/x.cuh\"\n";
    assert_eq!(local_includes(t), ["common.h", "sub/x.cuh"]);
}

#[test]
fn comments_are_blanked_but_literals_kept() {
    let s = strip_comments("a // b\nc /* d\ne */ f \"// g\" '/' 1'000 /* h */");
    assert_eq!(s.lines().count(), 3);
    assert!(s.contains("\"// g\""));
    assert!(!s.contains(" b") && !s.contains(" h "));
}
