/* Portable conv kernels (RIDGE_ISA=ref and CPUs without AVX2): the same template as the SIMD
 * files, with a "vector" of 8 floats in a struct and plain loops, so the tiling logic runs and
 * is tested even where no SIMD variant can. */
#include "conv/conv.h"

#define VL 8
typedef struct vf8 {
    float v[VL];
} vf8;
#define VF vf8

static inline vf8 vzero(void)
{
    vf8 r;
    for (int i = 0; i < VL; i++) r.v[i] = 0.0f;
    return r;
}
static inline vf8 vload(const float *p)
{
    vf8 r;
    for (int i = 0; i < VL; i++) r.v[i] = p[i];
    return r;
}
static inline void vstore(float *p, vf8 a)
{
    for (int i = 0; i < VL; i++) p[i] = a.v[i];
}
static inline vf8 vbcast(const float *p)
{
    vf8 r;
    for (int i = 0; i < VL; i++) r.v[i] = *p;
    return r;
}
static inline vf8 vfma(vf8 a, vf8 b, vf8 c)
{
    for (int i = 0; i < VL; i++) c.v[i] += a.v[i] * b.v[i];
    return c;
}
static inline vf8 vfnma(vf8 a, vf8 b, vf8 c)
{
    for (int i = 0; i < VL; i++) c.v[i] -= a.v[i] * b.v[i];
    return c;
}
static inline vf8 vadd(vf8 a, vf8 b)
{
    for (int i = 0; i < VL; i++) a.v[i] += b.v[i];
    return a;
}
/* as _mm256_max_ps: the second operand when either is NaN */
static inline vf8 vmax(vf8 a, vf8 b)
{
    for (int i = 0; i < VL; i++) a.v[i] = a.v[i] > b.v[i] ? a.v[i] : b.v[i];
    return a;
}

static inline vf8 vsub(vf8 a, vf8 b)
{
    for (int i = 0; i < VL; i++) a.v[i] -= b.v[i];
    return a;
}
static inline vf8 vmul(vf8 a, vf8 b)
{
    for (int i = 0; i < VL; i++) a.v[i] *= b.v[i];
    return a;
}
static inline vf8 vset1(float f)
{
    return vbcast(&f);
}

#define VZERO() vzero()
#define VLOAD(p) vload(p)
#define VSTORE(p, v) vstore((p), (v))
#define VSTREAM(p, v) vstore((p), (v))
#define VBCAST(p) vbcast(p)
#define VFMA(a, b, c) vfma((a), (b), (c))
#define VFNMA(a, b, c) vfnma((a), (b), (c))
#define VADD(a, b) vadd((a), (b))
#define VMAX(a, b) vmax((a), (b))
#define VSUB(a, b) vsub((a), (b))
#define VMUL(a, b) vmul((a), (b))
#define VSET1(f) vset1(f)
#define KNAME ridge_f32_conv_kernels__scalar
#define KNAME_STR "f32-conv-6x16-scalar"
#define KISA RIDGE_ISA_REF

#define CONV_DW_INLINE static __attribute__((noinline)) /* see conv-template.h */
#include "conv/conv-template.h"
