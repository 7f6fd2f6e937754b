/* contact/barrier.c — the IPC log barrier and the squared distances it acts on
 * (barrier.h), differentiated twice in forward mode. */
#include "contact/barrier.h"

#include <math.h>
#include <string.h>

#include "contact/distance.h"

#define NV 12

/* A value with its gradient and Hessian over the 12 coordinates. hs = 0: the Hessian is
 * not carried (left unset: an evaluation that needs no Hessian skips its 144 entries per
 * operation; the value and gradient are computed by the same operations either way, so
 * they are bitwise the same). Every jet of one evaluation has the same hs. */
typedef struct jet {
    double v, g[NV], H[NV][NV];
    int hs;
} jet;

static void jet_const(jet *o, double v, int hs)
{
    if (hs) memset(o, 0, sizeof *o);
    else memset(o->g, 0, sizeof o->g);
    o->v = v;
    o->hs = hs;
}

static void jet_var(jet *o, double v, int k, int hs)
{
    jet_const(o, v, hs);
    o->g[k] = 1.0;
}

static void jet_lin(jet *o, double ca, const jet *a, double cb, const jet *b)
{
    o->v = ca * a->v + cb * b->v;
    o->hs = a->hs;
    for (int i = 0; i < NV; i++) {
        o->g[i] = ca * a->g[i] + cb * b->g[i];
        for (int j = 0; j < NV && o->hs; j++) o->H[i][j] = ca * a->H[i][j] + cb * b->H[i][j];
    }
}

static void jet_mul(jet *o, const jet *a, const jet *b)
{
    jet r;
    r.v = a->v * b->v;
    r.hs = a->hs;
    for (int i = 0; i < NV; i++) {
        r.g[i] = a->g[i] * b->v + b->g[i] * a->v;
        for (int j = 0; j < NV && r.hs; j++)
            r.H[i][j] = a->H[i][j] * b->v + b->H[i][j] * a->v + a->g[i] * b->g[j] + b->g[i] * a->g[j];
    }
    *o = r;
}

/* o = f(a) with f, f', f'' at a->v given. */
static void jet_chain(jet *o, const jet *a, double f, double df, double d2f)
{
    jet r;
    r.v = f;
    r.hs = a->hs;
    for (int i = 0; i < NV; i++) {
        r.g[i] = df * a->g[i];
        for (int j = 0; j < NV && r.hs; j++) r.H[i][j] = df * a->H[i][j] + d2f * a->g[i] * a->g[j];
    }
    *o = r;
}

static void jet_div(jet *o, const jet *a, const jet *b)
{
    jet inv;
    double x = b->v;
    jet_chain(&inv, b, 1.0 / x, -1.0 / (x * x), 2.0 / (x * x * x));
    jet_mul(o, a, &inv);
}

/* 3-vectors of jets */
typedef struct jv3 {
    jet c[3];
} jv3;

static void jv3_point(jv3 *o, const double p[3], int slot, int hs)
{
    for (int k = 0; k < 3; k++) jet_var(&o->c[k], p[k], 3 * slot + k, hs);
}

static void jv3_sub(jv3 *o, const jv3 *a, const jv3 *b)
{
    for (int k = 0; k < 3; k++) jet_lin(&o->c[k], 1.0, &a->c[k], -1.0, &b->c[k]);
}

static void jv3_dot(jet *o, const jv3 *a, const jv3 *b)
{
    jet t;
    jet_mul(o, &a->c[0], &b->c[0]);
    for (int k = 1; k < 3; k++) {
        jet_mul(&t, &a->c[k], &b->c[k]);
        jet_lin(o, 1.0, o, 1.0, &t);
    }
}

static void jv3_cross(jv3 *o, const jv3 *a, const jv3 *b)
{
    jv3 r;
    jet t, u;
    for (int k = 0; k < 3; k++) {
        int i = (k + 1) % 3, j = (k + 2) % 3;
        jet_mul(&t, &a->c[i], &b->c[j]);
        jet_mul(&u, &a->c[j], &b->c[i]);
        jet_lin(&r.c[k], 1.0, &t, -1.0, &u);
    }
    *o = r;
}

/* |p - q|^2 */
static void d2_point_point(jet *o, const jv3 *p, const jv3 *q)
{
    jv3 d;
    jv3_sub(&d, p, q);
    jv3_dot(o, &d, &d);
}

/* squared distance of p from the line ab: |(p - a) x (b - a)|^2 / |b - a|^2 */
static void d2_point_line(jet *o, const jv3 *p, const jv3 *a, const jv3 *b)
{
    jv3 pa, ba, c;
    jet n, l;
    jv3_sub(&pa, p, a);
    jv3_sub(&ba, b, a);
    jv3_cross(&c, &pa, &ba);
    jv3_dot(&n, &c, &c);
    jv3_dot(&l, &ba, &ba);
    jet_div(o, &n, &l);
}

/* squared distance of p from the plane through a with normal n (not unit): ((p - a).n)^2 / |n|^2 */
static void d2_point_plane(jet *o, const jv3 *p, const jv3 *a, const jv3 *n)
{
    jv3 pa;
    jet t, nn;
    jv3_sub(&pa, p, a);
    jv3_dot(&t, &pa, n);
    jet_mul(&t, &t, &t);
    jv3_dot(&nn, n, n);
    jet_div(o, &t, &nn);
}

static void jet_out(const jet *j, double g[12], double H[12][12])
{
    if (g) memcpy(g, j->g, sizeof j->g);
    if (H && j->hs) memcpy(H, j->H, sizeof j->H);
}

/* the value of o, its derivatives into g and H and the piece k into *kind (each may be NULL) */
static double jet_result(const jet *o, int k, double g[12], double H[12][12], int *kind)
{
    if (kind) *kind = k;
    jet_out(o, g, H);
    return o->v;
}

/* the squared distance piece of a point-triangle pair as a jet */
static void pt_jet(jet *o, const double p[3], const double a[3], const double b[3], const double c[3], int *kind,
                   int hs)
{
    double bary[3];
    cb_point_triangle_distance2(p, a, b, c, bary, NULL);
    jv3 P[4];
    const double *pts[4] = {p, a, b, c};
    for (int s = 0; s < 4; s++) jv3_point(&P[s], pts[s], s, hs);
    int zero = 0, nz = -1, z = -1;
    for (int k = 0; k < 3; k++) {
        if (bary[k] <= 0.0) {
            zero++;
            z = k;
        } else {
            nz = k;
        }
    }
    if (zero >= 2) { /* a vertex of the triangle */
        d2_point_point(o, &P[0], &P[1 + nz]);
        *kind = 0;
    } else if (zero == 1) { /* the edge opposite vertex z */
        d2_point_line(o, &P[0], &P[1 + (z + 1) % 3], &P[1 + (z + 2) % 3]);
        *kind = 1;
    } else {
        jv3 e1, e2, n;
        jv3_sub(&e1, &P[2], &P[1]);
        jv3_sub(&e2, &P[3], &P[1]);
        jv3_cross(&n, &e1, &e2);
        d2_point_plane(o, &P[0], &P[1], &n);
        *kind = 2;
    }
}

/* the squared distance piece of an edge-edge pair as a jet */
static void ee_jet(jet *o, const double p0[3], const double p1[3], const double q0[3], const double q1[3], int *kind,
                   int hs)
{
    double s, t;
    cb_edge_edge_distance2(p0, p1, q0, q1, &s, &t, NULL, NULL);
    jv3 P[4];
    const double *pts[4] = {p0, p1, q0, q1};
    for (int k = 0; k < 4; k++) jv3_point(&P[k], pts[k], k, hs);
    int se = s <= 0.0 || s >= 1.0, te = t <= 0.0 || t >= 1.0;
    int ps = s >= 1.0 ? 1 : 0, qt = t >= 1.0 ? 3 : 2;
    if (se && te) {
        d2_point_point(o, &P[ps], &P[qt]);
        *kind = 0;
    } else if (se) {
        d2_point_line(o, &P[ps], &P[2], &P[3]);
        *kind = 1;
    } else if (te) {
        d2_point_line(o, &P[qt], &P[0], &P[1]);
        *kind = 1;
    } else {
        jv3 e1, e2, n;
        jv3_sub(&e1, &P[1], &P[0]);
        jv3_sub(&e2, &P[3], &P[2]);
        jv3_cross(&n, &e1, &e2);
        d2_point_plane(o, &P[0], &P[2], &n);
        *kind = 3;
    }
}

double cb_pt_distance2_d(const double p[3], const double a[3], const double b[3], const double c[3],
                         double g[12], double H[12][12], int *kind)
{
    jet o;
    int k;
    pt_jet(&o, p, a, b, c, &k, H != NULL);
    return jet_result(&o, k, g, H, kind);
}

double cb_ee_distance2_d(const double p0[3], const double p1[3], const double q0[3], const double q1[3],
                         double g[12], double H[12][12], int *kind)
{
    jet o;
    int k;
    ee_jet(&o, p0, p1, q0, q1, &k, H != NULL);
    return jet_result(&o, k, g, H, kind);
}

double cb_barrier(double s, double shat, double *db, double *d2b)
{
    if (db) *db = 0.0;
    if (d2b) *d2b = 0.0;
    if (!(s > 0)) return INFINITY;
    if (s >= shat) return 0.0;
    double r = s - shat, l = log(s / shat);
    if (db) *db = -2.0 * r * l - r * r / s;
    if (d2b) *d2b = -2.0 * l - 4.0 * r / s + r * r / (s * s);
    return -r * r * l;
}

double cb_barrier_shat(double xi, double dhat) { return dhat * dhat + 2.0 * xi * dhat; }

/* the mollifier as a jet */
static void mollifier_jet(jet *o, const double p0[3], const double p1[3], const double q0[3], const double q1[3],
                          double eps_x, int hs)
{
    jv3 P[4], e1, e2, n;
    const double *pts[4] = {p0, p1, q0, q1};
    for (int k = 0; k < 4; k++) jv3_point(&P[k], pts[k], k, hs);
    jv3_sub(&e1, &P[1], &P[0]);
    jv3_sub(&e2, &P[3], &P[2]);
    jv3_cross(&n, &e1, &e2);
    jet c;
    jv3_dot(&c, &n, &n);
    double u = c.v / eps_x;
    if (u >= 1.0) jet_const(o, 1.0, hs);
    else jet_chain(o, &c, (2.0 - u) * u, (2.0 - 2.0 * u) / eps_x, -2.0 / (eps_x * eps_x));
}

double cb_ee_mollifier_d(const double p0[3], const double p1[3], const double q0[3], const double q1[3],
                         double eps_x, double g[12], double H[12][12])
{
    jet o;
    mollifier_jet(&o, p0, p1, q0, q1, eps_x, H != NULL);
    jet_out(&o, g, H);
    return o.v;
}

double cb_pair_barrier(int ee, const double p0[3], const double p1[3], const double q0[3], const double q1[3],
                       double xi, double shat, double eps_x, double g[12], double H[12][12], double *d2)
{
    jet d;
    int kind;
    int hs = H != NULL;
    if (ee) ee_jet(&d, p0, p1, q0, q1, &kind, hs);
    else pt_jet(&d, p0, p1, q0, q1, &kind, hs);
    if (d2) *d2 = d.v;
    double db, d2b, s = d.v - xi * xi;
    double b = cb_barrier(s, shat, &db, &d2b);
    jet o;
    jet_chain(&o, &d, b, db, d2b); /* d/dx b(d2 - xi^2) = b' grad d2 */
    if (ee && eps_x > 0 && isfinite(b) && b > 0) {
        jet m;
        mollifier_jet(&m, p0, p1, q0, q1, eps_x, hs);
        jet_mul(&o, &o, &m);
    }
    jet_out(&o, g, H);
    return o.v;
}

/* o = b(s) on s(q) = (sqrt q - r)^2 - xi^2 of the squared distance d (infinite where
 * sqrt q - r <= xi); the offset distance sqrt q - r into *phi (may be NULL). */
static void offset_jet(jet *o, const jet *d, double r, double xi, double shat, int hs, double *phi)
{
    double q = d->v, sq = sqrt(q), f = sq - r;
    if (phi) *phi = f;
    if (!(f > xi) || !(sq > 0)) {
        jet_const(o, INFINITY, hs);
        return;
    }
    /* s' = f / sqrt q, s'' = r / (2 q^1.5) */
    jet sj;
    jet_chain(&sj, d, f * f - xi * xi, f / sq, r / (2.0 * q * sq));
    double db, d2b, bv = cb_barrier(sj.v, shat, &db, &d2b);
    jet_chain(o, &sj, bv, db, d2b);
}

double cb_sphere_barrier(int n, const double a[3], const double b[3], const double c[3], const double center[3],
                         double r, double xi, double shat, double g[12], double H[12][12], double *phi)
{
    jet d;
    jv3 P[4];
    int hs = H != NULL;
    const double *pts[4] = {center, a, b, n == 3 ? c : b};
    for (int k = 0; k < 4; k++) jv3_point(&P[k], pts[k], k, hs);
    if (n == 3) {
        int kind;
        pt_jet(&d, center, a, b, c, &kind, hs);
    } else {
        double t;
        cb_point_segment_distance2(center, a, b, &t, NULL);
        if (t <= 0.0) d2_point_point(&d, &P[0], &P[1]);
        else if (t >= 1.0) d2_point_point(&d, &P[0], &P[2]);
        else d2_point_line(&d, &P[0], &P[1], &P[2]); /* slot 3 (c) takes no part */
    }
    jet o;
    offset_jet(&o, &d, r, xi, shat, hs, phi);
    jet_out(&o, g, H);
    return o.v;
}

double cb_offset_pair_barrier(int ee, const double p0[3], const double p1[3], const double q0[3], const double q1[3],
                              double r, double xi, double shat, double eps_x, double g[12], double H[12][12],
                              double *phi)
{
    jet d;
    int kind;
    int hs = H != NULL;
    if (ee) ee_jet(&d, p0, p1, q0, q1, &kind, hs);
    else pt_jet(&d, p0, p1, q0, q1, &kind, hs);
    jet o;
    offset_jet(&o, &d, r, xi, shat, hs, phi);
    if (ee && eps_x > 0 && isfinite(o.v) && o.v > 0) {
        jet m;
        mollifier_jet(&m, p0, p1, q0, q1, eps_x, hs);
        jet_mul(&o, &o, &m);
    }
    jet_out(&o, g, H);
    return o.v;
}
