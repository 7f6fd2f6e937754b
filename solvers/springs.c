/* solvers/springs.c — spring sets of the mass-spring solvers and the implicit-Euler
 * objective g(x) (springs.h).
 *
 * Stiffnesses from the shared cloth model
 * ---------------------------------------
 * Stretch: every mesh edge is a spring of stiffness k_stretch and the edge's rest
 * length — exactly the shared model's stretch term.
 *
 * Bend springs (CB_SPRINGS_MODEL): a spring across a hinge, between its opposite
 * vertices, cannot reproduce the discrete-shells energy k_bend w (theta - theta0)^2
 * for small angles: folding the hinge by theta changes the spring's length only to
 * second order. With d1, d2 the distances of the opposite vertices from the hinge
 * line and s their offset along it (all invariant under folding), the spring length
 * at fold angle theta (0 = flat) is
 *     l(theta)^2 = s^2 + d1^2 + d2^2 + 2 d1 d2 cos(theta).
 * We choose the spring stiffness so that the spring and the hinge store the same
 * energy at a right-angle fold:
 *     1/2 k_b (l(0) - l(pi/2))^2 = k_bend w (pi/2)^2
 *     k_b = 2 k_bend w (pi/2)^2 / (sqrt(s^2 + (d1 + d2)^2) - sqrt(s^2 + d1^2 + d2^2))^2.
 * The spring's rest length is the rest distance of the two vertices (so a curved rest
 * shape is a rest state). For small folds the spring is much softer than the hinge
 * (its energy is O(theta^4)); for the 81 x 81 curtain (spacing a = 1/80 m, k_bend =
 * 1e-4 N m) a cell-diagonal hinge gives k_b = 3 pi^2 k_bend / (a^2 (sqrt 2 - 1)^2)
 * = 110 N/m.
 *
 * Classic set (CB_SPRINGS_CLASSIC, grids): structural springs between grid
 * neighbours and shear springs along both diagonals of every cell have k_stretch (the
 * second diagonal is an addition to the shared model: it stiffens shear); bending
 * springs join vertices two apart along a grid line, with the right-angle matching
 * above for a fold across their middle vertex: d1 = d2 = a (spacing along the
 * spring), s = 0, and the weight of the hinge edges on the fold line, w = 3 b / a
 * (b the spacing across).
 */
#include "solvers/springs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/vec3.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

double cb_springs_hinge_stiffness(double k_bend, double wgt, double d1, double d2, double s)
{
    double lf = sqrt(s * s + (d1 + d2) * (d1 + d2));
    double l90 = sqrt(s * s + d1 * d1 + d2 * d2);
    double dl = lf - l90;
    if (!(dl > 0)) return 0.0;
    return 2.0 * k_bend * wgt * (0.25 * M_PI * M_PI) / (dl * dl);
}

void cb_springs_release(cb_spring_set *s)
{
    if (!s) return;
    free(s->ij);
    free(s->rest);
    free(s->k);
    memset(s, 0, sizeof *s);
}

static int alloc_set(cb_spring_set *s, int cap, cb_error *err)
{
    memset(s, 0, sizeof *s);
    s->ij = cb_calloc((size_t)(cap > 0 ? cap : 1), sizeof *s->ij);
    s->rest = cb_calloc((size_t)(cap > 0 ? cap : 1), sizeof *s->rest);
    s->k = cb_calloc((size_t)(cap > 0 ? cap : 1), sizeof *s->k);
    if (!s->ij || !s->rest || !s->k) {
        cb_springs_release(s);
        return CB_FAIL(err, CB_ERR_NOMEM, "springs: out of memory for %d springs", cap);
    }
    return CB_OK;
}

static void push(cb_spring_set *s, const double (*X)[3], int a, int b, double k)
{
    s->ij[s->n][0] = a;
    s->ij[s->n][1] = b;
    s->rest[s->n] = cb_v3_dist(X[a], X[b]);
    s->k[s->n] = k;
    s->n++;
}

/* Heights of x2 and x3 over the line x0-x1 and the offset of their feet along it. */
static void hinge_geometry(const double x0[3], const double x1[3], const double x2[3], const double x3[3],
                           double *d1, double *d2, double *off)
{
    double e[3], r2[3], r3[3];
    cb_v3_sub(e, x1, x0);
    cb_v3_normalize(e);
    cb_v3_sub(r2, x2, x0);
    cb_v3_sub(r3, x3, x0);
    double t2 = cb_v3_dot(r2, e), t3 = cb_v3_dot(r3, e);
    cb_v3_axpy(r2, -t2, e);
    cb_v3_axpy(r3, -t3, e);
    *d1 = cb_v3_norm(r2);
    *d2 = cb_v3_norm(r3);
    *off = fabs(t2 - t3);
}

static int build_model(const cb_world *w, int bend, cb_spring_set *s, cb_error *err)
{
    const cb_mesh *m = w->mesh;
    const double (*X)[3] = (const double (*)[3])m->x;
    int nb = bend && w->model.k_bend > 0 ? m->nh : 0;
    int rc = alloc_set(s, m->ne + nb, err);
    if (rc) return rc;
    for (int e = 0; e < m->ne; e++) push(s, X, m->e[e][0], m->e[e][1], w->model.k_stretch);
    s->nstretch = s->n;
    for (int i = 0; i < nb; i++) {
        const int *h = m->h[i];
        double d1, d2, off;
        hinge_geometry(X[h[0]], X[h[1]], X[h[2]], X[h[3]], &d1, &d2, &off);
        double k = cb_springs_hinge_stiffness(w->model.k_bend, w->model.hinge_weight[i], d1, d2, off);
        if (k > 0) push(s, X, h[2], h[3], k);
    }
    return CB_OK;
}

static int build_classic(const cb_world *w, cb_spring_set *s, cb_error *err)
{
    const cb_mesh *m = w->mesh;
    int nx = m->grid_nx, ny = m->grid_ny;
    if (nx < 2 || ny < 2 || nx * ny != m->nv)
        return CB_FAIL(err, CB_ERR_INPUT,
                       "springs: 'classic' needs a grid cloth (cloth.grid), this cloth is a mesh of %d vertices",
                       m->nv);
    const double (*X)[3] = (const double (*)[3])m->x;
    long cap = (long)(nx - 1) * ny + (long)nx * (ny - 1) + 2L * (nx - 1) * (ny - 1) +
               (long)(nx > 2 ? nx - 2 : 0) * ny + (long)nx * (ny > 2 ? ny - 2 : 0);
    if (cap > 2000000000L) return CB_FAIL(err, CB_ERR_INPUT, "springs: grid %d x %d too large", nx, ny);
    int rc = alloc_set(s, (int)cap, err);
    if (rc) return rc;
#define V(i, j) ((i) + nx * (j))
    double ks = w->model.k_stretch;
    /* structural */
    for (int j = 0; j < ny; j++)
        for (int i = 0; i + 1 < nx; i++) push(s, X, V(i, j), V(i + 1, j), ks);
    for (int j = 0; j + 1 < ny; j++)
        for (int i = 0; i < nx; i++) push(s, X, V(i, j), V(i, j + 1), ks);
    /* shear */
    for (int j = 0; j + 1 < ny; j++)
        for (int i = 0; i + 1 < nx; i++) {
            push(s, X, V(i, j), V(i + 1, j + 1), ks);
            push(s, X, V(i + 1, j), V(i, j + 1), ks);
        }
    s->nstretch = s->n;
    /* bending (skip-one) */
    double a = cb_v3_dist(X[V(1, 0)], X[V(0, 0)]), b = cb_v3_dist(X[V(0, 1)], X[V(0, 0)]);
    double ku = cb_springs_hinge_stiffness(w->model.k_bend, 3.0 * b / a, a, a, 0.0);
    double kv = cb_springs_hinge_stiffness(w->model.k_bend, 3.0 * a / b, b, b, 0.0);
    for (int j = 0; j < ny; j++)
        for (int i = 0; i + 2 < nx; i++) push(s, X, V(i, j), V(i + 2, j), ku);
    for (int j = 0; j + 2 < ny; j++)
        for (int i = 0; i < nx; i++) push(s, X, V(i, j), V(i, j + 2), kv);
#undef V
    return CB_OK;
}

int cb_springs_build(const cb_world *w, cb_spring_kind kind, cb_spring_set *out, cb_error *err)
{
    if (!w || !out) return CB_FAIL(err, CB_ERR_INPUT, "cb_springs_build: NULL argument");
    if (kind == CB_SPRINGS_MODEL || kind == CB_SPRINGS_STRETCH) return build_model(w, kind == CB_SPRINGS_MODEL, out, err);
    if (kind == CB_SPRINGS_CLASSIC) return build_classic(w, out, err);
    return CB_FAIL(err, CB_ERR_INPUT, "cb_springs_build: unknown spring set %d", (int)kind);
}

/* The square roots two springs at a time where SSE2 is there (the x86-64 baseline; the
 * compiler does not vectorise this loop: indexed loads, errno of sqrt): correctly
 * rounded, and the sum is taken in spring order, so the result is the same as the
 * scalar loop's. */
double cb_springs_energy(const cb_spring_set *s, const double (*x)[3])
{
    double e = 0.0;
    int i = 0;
#if defined(__SSE2__)
    for (; i + 1 < s->n; i += 2) {
        const double *pa = x[s->ij[i][0]], *pb = x[s->ij[i][1]];
        const double *qa = x[s->ij[i + 1][0]], *qb = x[s->ij[i + 1][1]];
        __m128d d0 = _mm_sub_pd(_mm_set_pd(qa[0], pa[0]), _mm_set_pd(qb[0], pb[0]));
        __m128d d1 = _mm_sub_pd(_mm_set_pd(qa[1], pa[1]), _mm_set_pd(qb[1], pb[1]));
        __m128d d2 = _mm_sub_pd(_mm_set_pd(qa[2], pa[2]), _mm_set_pd(qb[2], pb[2]));
        double len[2];
        _mm_storeu_pd(len, _mm_sqrt_pd(_mm_add_pd(_mm_add_pd(_mm_mul_pd(d0, d0), _mm_mul_pd(d1, d1)),
                                                  _mm_mul_pd(d2, d2))));
        for (int q = 0; q < 2; q++) {
            double l = len[q] - s->rest[i + q];
            e += 0.5 * s->k[i + q] * l * l;
        }
    }
#endif
    for (; i < s->n; i++) {
        double l = cb_v3_dist(x[s->ij[i][0]], x[s->ij[i][1]]) - s->rest[i];
        e += 0.5 * s->k[i] * l * l;
    }
    return e;
}

void cb_springs_add_forces(const cb_spring_set *s, const double (*x)[3], double (*f)[3])
{
    for (int i = 0; i < s->n; i++) {
        int a = s->ij[i][0], b = s->ij[i][1];
        double d[3];
        cb_v3_sub(d, x[a], x[b]);
        double l = cb_v3_norm(d);
        if (!(l > 0)) continue; /* coincident ends: the direction is undefined, no force */
        double c = -s->k[i] * (l - s->rest[i]) / l;
        cb_v3_axpy(f[a], c, d);
        cb_v3_axpy(f[b], -c, d);
    }
}

double cb_springs_objective(const cb_spring_set *s, const cb_world *w, const double (*x)[3],
                            const double (*y)[3], double h)
{
    double g = 0.0;
    for (int i = 0; i < w->nv; i++) {
        if (w->inv_mass[i] == 0.0) continue;
        double d[3];
        cb_v3_sub(d, x[i], y[i]);
        g += 0.5 * w->mass[i] * cb_v3_norm2(d) - h * h * w->mass[i] * cb_v3_dot(w->gravity, x[i]);
    }
    return g + h * h * cb_springs_energy(s, x);
}

double cb_springs_gradient(const cb_spring_set *s, const cb_world *w, const double (*x)[3],
                           const double (*y)[3], double h, double (*grad)[3])
{
    double h2 = h * h;
    for (int i = 0; i < w->nv; i++)
        for (int k = 0; k < 3; k++) grad[i][k] = w->mass[i] * (x[i][k] - y[i][k] - h2 * w->gravity[k]);
    int i = 0;
#if defined(__SSE2__)
    /* two springs' square roots and divisions at a time (the loop's cost; the compiler
     * does not vectorise them), the same IEEE operations as the loop below, the rows
     * updated in spring order: the same bits */
    const __m128d vh2 = _mm_set1_pd(h2);
    for (; i + 1 < s->n; i += 2) {
        const int *sa = s->ij[i], *sb = s->ij[i + 1];
        double d[2][3], c[2];
        cb_v3_sub(d[0], x[sa[0]], x[sa[1]]);
        cb_v3_sub(d[1], x[sb[0]], x[sb[1]]);
        __m128d l = _mm_sqrt_pd(_mm_set_pd(cb_v3_norm2(d[1]), cb_v3_norm2(d[0])));
        __m128d f = _mm_mul_pd(_mm_mul_pd(vh2, _mm_loadu_pd(s->k + i)), _mm_sub_pd(l, _mm_loadu_pd(s->rest + i)));
        _mm_storeu_pd(c, _mm_div_pd(f, l));
        double len[2];
        _mm_storeu_pd(len, l);
        for (int q = 0; q < 2; q++) {
            if (!(len[q] > 0)) continue;
            const int *e = s->ij[i + q];
            cb_v3_axpy(grad[e[0]], c[q], d[q]);
            cb_v3_axpy(grad[e[1]], -c[q], d[q]);
        }
    }
#endif
    for (; i < s->n; i++) {
        int a = s->ij[i][0], b = s->ij[i][1];
        double d[3];
        cb_v3_sub(d, x[a], x[b]);
        double l = cb_v3_norm(d);
        if (!(l > 0)) continue;
        double c = h2 * s->k[i] * (l - s->rest[i]) / l;
        cb_v3_axpy(grad[a], c, d);
        cb_v3_axpy(grad[b], -c, d);
    }
    double n2 = 0.0;
    for (int i = 0; i < w->nv; i++) {
        if (w->inv_mass[i] == 0.0) {
            cb_v3_zero(grad[i]);
            continue;
        }
        n2 += cb_v3_norm2(grad[i]);
    }
    return sqrt(n2);
}

typedef struct entry {
    int col, row;
    long tag;   /* >= 0: spring_pos index; < 0: diag_pos index -1 - tag */
} entry;

static int same_entry(const entry *a, const entry *b) { return a->col == b->col && a->row == b->row; }

/* One stable counting-sort pass of E[0..ne) into out by key (row when by_row, else col),
 * keys in [0, N). */
static void count_pass(const entry *E, long ne, long N, int by_row, long *cnt, entry *out)
{
    memset(cnt, 0, (size_t)(N + 1) * sizeof *cnt);
    for (long q = 0; q < ne; q++) cnt[(by_row ? E[q].row : E[q].col) + 1]++;
    for (long k = 0; k < N; k++) cnt[k + 1] += cnt[k];
    for (long q = 0; q < ne; q++) out[cnt[by_row ? E[q].row : E[q].col]++] = E[q];
}

/* Sort the entries by (col, row) in O(ne + N): by row, then stably by col (a
 * comparison sort was half of fms's create time at 6561 vertices). Equal entries keep
 * their order. -1 when out of memory. */
static int sort_entries(entry *E, long ne, long N)
{
    entry *T = cb_calloc((size_t)(ne > 0 ? ne : 1), sizeof *T);
    long *cnt = cb_calloc((size_t)N + 1, sizeof *cnt);
    if (!T || !cnt) {
        free(T);
        free(cnt);
        return -1;
    }
    count_pass(E, ne, N, 1, cnt, T);
    count_pass(T, ne, N, 0, cnt, E);
    free(T);
    free(cnt);
    return 0;
}

int cb_springs_pattern(const cb_spring_set *s, const int *unk, int nunk, int bs, int **colptr,
                       int **rowidx, int **diag_pos, int **spring_pos, cb_error *err)
{
    if (!s || !unk || !colptr || !rowidx || !diag_pos || !spring_pos)
        return CB_FAIL(err, CB_ERR_INPUT, "cb_springs_pattern: NULL argument");
    if (bs != 1 && bs != 3) return CB_FAIL(err, CB_ERR_INPUT, "cb_springs_pattern: block size %d (1 or 3)", bs);
    if (nunk < 1) return CB_FAIL(err, CB_ERR_INPUT, "cb_springs_pattern: empty system (no free vertex)");
    *colptr = *rowidx = *diag_pos = *spring_pos = NULL;
    long b2 = (long)bs * bs, N = (long)nunk * bs;
    long nd = (long)nunk * (bs * (bs + 1) / 2);
    long cap = nd + (long)s->n * b2;
    if (N > 1000000000L || cap > 1500000000L)
        return CB_FAIL(err, CB_ERR_INPUT, "cb_springs_pattern: system too large (%ld unknowns)", N);
    entry *E = cb_calloc((size_t)cap, sizeof *E);
    int *cp = cb_calloc((size_t)N + 1, sizeof *cp);
    int *dp = cb_calloc((size_t)(nunk * b2), sizeof *dp);
    int *sp = cb_calloc((size_t)(s->n > 0 ? s->n * b2 : 1), sizeof *sp);
    int *ri = NULL;
    if (!E || !cp || !dp || !sp) goto nomem;
    long ne = 0;
    for (int u = 0; u < nunk; u++)
        for (int r = 0; r < bs; r++)
            for (int c = 0; c <= r; c++) E[ne++] = (entry){(int)(u * bs + c), (int)(u * bs + r), -1 - (u * b2 + r * bs + c)};
    for (int i = 0; i < s->n; i++) {
        int ua = unk[s->ij[i][0]], ub = unk[s->ij[i][1]];
        if (ua < 0 || ub < 0 || ua == ub) {
            for (long q = 0; q < b2; q++) sp[i * b2 + q] = -1;
            continue;
        }
        int hi = ua > ub ? ua : ub, lo = ua > ub ? ub : ua;
        for (int r = 0; r < bs; r++)
            for (int c = 0; c < bs; c++) E[ne++] = (entry){lo * bs + c, hi * bs + r, i * b2 + r * bs + c};
    }
    ri = cb_calloc((size_t)(ne > 0 ? ne : 1), sizeof *ri);
    if (!ri || sort_entries(E, ne, N)) goto nomem;
    long nnz = 0;
    for (long q = 0; q < ne; q++) {
        if (q == 0 || !same_entry(&E[q], &E[q - 1])) {
            ri[nnz] = E[q].row;
            cp[E[q].col + 1]++;
            nnz++;
        }
        long pos = nnz - 1;
        if (E[q].tag >= 0) sp[E[q].tag] = (int)pos;
        else dp[-1 - E[q].tag] = (int)pos;
    }
    for (long j = 0; j < N; j++) cp[j + 1] += cp[j];
    if (bs == 3)
        for (int u = 0; u < nunk; u++)
            for (int r = 0; r < 3; r++)
                for (int c = r + 1; c < 3; c++) dp[u * 9 + r * 3 + c] = dp[u * 9 + c * 3 + r];
    free(E);
    *colptr = cp;
    *rowidx = ri;
    *diag_pos = dp;
    *spring_pos = sp;
    return CB_OK;
nomem:
    free(E);
    free(cp);
    free(dp);
    free(sp);
    free(ri);
    return CB_FAIL(err, CB_ERR_NOMEM, "cb_springs_pattern: out of memory (%ld unknowns)", N);
}
