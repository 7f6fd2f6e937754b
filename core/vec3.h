/* core/vec3.h — small inline vector math on double[3]. Positions everywhere are
 * double (*x)[3] (xyz contiguous per vertex). Output arguments come first. */
#ifndef CB_VEC3_H
#define CB_VEC3_H

#include <math.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static inline void cb_v3_set(double o[3], double x, double y, double z) { o[0] = x; o[1] = y; o[2] = z; }
static inline void cb_v3_copy(double o[3], const double a[3]) { o[0] = a[0]; o[1] = a[1]; o[2] = a[2]; }
static inline void cb_v3_zero(double o[3]) { o[0] = o[1] = o[2] = 0.0; }
static inline void cb_v3_add(double o[3], const double a[3], const double b[3])
{ o[0] = a[0] + b[0]; o[1] = a[1] + b[1]; o[2] = a[2] + b[2]; }
static inline void cb_v3_sub(double o[3], const double a[3], const double b[3])
{ o[0] = a[0] - b[0]; o[1] = a[1] - b[1]; o[2] = a[2] - b[2]; }
static inline void cb_v3_scale(double o[3], const double a[3], double s)
{ o[0] = s * a[0]; o[1] = s * a[1]; o[2] = s * a[2]; }
/* o += s * a */
static inline void cb_v3_axpy(double o[3], double s, const double a[3])
{ o[0] += s * a[0]; o[1] += s * a[1]; o[2] += s * a[2]; }
static inline double cb_v3_dot(const double a[3], const double b[3])
{ return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static inline void cb_v3_cross(double o[3], const double a[3], const double b[3])
{
    double x = a[1] * b[2] - a[2] * b[1];
    double y = a[2] * b[0] - a[0] * b[2];
    double z = a[0] * b[1] - a[1] * b[0];
    o[0] = x; o[1] = y; o[2] = z;
}
static inline double cb_v3_norm2(const double a[3]) { return cb_v3_dot(a, a); }
static inline double cb_v3_norm(const double a[3]) { return sqrt(cb_v3_dot(a, a)); }
static inline double cb_v3_dist2(const double a[3], const double b[3])
{ double d[3]; cb_v3_sub(d, a, b); return cb_v3_norm2(d); }
static inline double cb_v3_dist(const double a[3], const double b[3])
{ double d[3]; cb_v3_sub(d, a, b); return cb_v3_norm(d); }
/* Normalises in place; returns the old length (a is left unchanged when it is 0). */
static inline double cb_v3_normalize(double a[3])
{
    double n = cb_v3_norm(a);
    if (n > 0.0) { a[0] /= n; a[1] /= n; a[2] /= n; }
    return n;
}
static inline int cb_v3_isfinite(const double a[3])
{ return isfinite(a[0]) && isfinite(a[1]) && isfinite(a[2]); }

#endif
