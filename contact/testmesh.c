/* contact/testmesh.c — deterministic crumpled cloth and triangle soups for tests and
 * benchmarks (testmesh.h). */
#include "contact/testmesh.h"

#include <math.h>
#include <stdlib.h>

#include "core/vec3.h"

#define TWO_PI 6.283185307179586

uint64_t cb_testmesh_seed(uint64_t seed) { return seed * 0x9E3779B97F4A7C15ull + 1; }

double cb_testmesh_uniform(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

int cb_testmesh_grid(int nx, int ny, double size, cb_diagonal diag, cb_mesh **out, cb_error *err)
{
    if (!out) return CB_FAIL(err, CB_ERR_INPUT, "cb_testmesh_grid: NULL argument");
    cb_grid_def d = cb_default_grid_def();
    d.nx = nx;
    d.ny = ny;
    d.size[0] = d.size[1] = size;
    d.origin[0] = d.origin[1] = d.origin[2] = 0.0;
    d.plane = CB_PLANE_XY;
    d.diagonal = diag;
    return cb_mesh_grid(&d, out, err);
}

int cb_testmesh_crumple(const cb_mesh *m, double amp, uint64_t *state, double (**out)[3], cb_error *err)
{
    if (!m || !state || !out) return CB_FAIL(err, CB_ERR_INPUT, "cb_testmesh_crumple: NULL argument");
    double (*x)[3] = cb_calloc((size_t)(m->nv > 0 ? m->nv : 1), sizeof *x);
    *out = x;
    if (!x) return CB_FAIL(err, CB_ERR_NOMEM, "cb_testmesh_crumple: out of memory for %d vertices", m->nv);
    double k[6][2], ph[6], a[6][3];
    for (int i = 0; i < 6; i++) {
        double ang = TWO_PI * cb_testmesh_uniform(state), mag = TWO_PI * (1.0 + 2.0 * cb_testmesh_uniform(state));
        k[i][0] = mag * cos(ang);
        k[i][1] = mag * sin(ang);
        ph[i] = TWO_PI * cb_testmesh_uniform(state);
        for (int c = 0; c < 3; c++) a[i][c] = amp * (2 * cb_testmesh_uniform(state) - 1);
    }
    for (int v = 0; v < m->nv; v++) {
        double u = m->x[v][0], w = m->x[v][1];
        x[v][0] = u;
        x[v][1] = w;
        x[v][2] = 0;
        for (int i = 0; i < 6; i++) {
            double s = sin(k[i][0] * u + k[i][1] * w + ph[i]);
            for (int c = 0; c < 3; c++) x[v][c] += a[i][c] * s;
        }
    }
    return CB_OK;
}

/* Triangles on random triples of the nv pool vertices in x, no edge used twice. */
static void shared_triangles(int nf, int nv, const double (*x)[3], unsigned char *use, uint64_t *state,
                             int (*f)[3])
{
    int t = 0;
    while (t < nf) {
        int a = (int)(cb_testmesh_uniform(state) * nv), b = (int)(cb_testmesh_uniform(state) * nv),
            c = (int)(cb_testmesh_uniform(state) * nv);
        if (a == b || b == c || a == c) continue;
        /* prefer local triangles: reject long ones most of the time */
        double l = cb_v3_dist(x[a], x[b]) + cb_v3_dist(x[b], x[c]) + cb_v3_dist(x[c], x[a]);
        if (l > 1.2 && cb_testmesh_uniform(state) < 0.9) continue;
        int e[3][2] = {{a, b}, {b, c}, {c, a}}, ok = 1;
        for (int i = 0; i < 3; i++) {
            int p = e[i][0] < e[i][1] ? e[i][0] : e[i][1], q = e[i][0] ^ e[i][1] ^ p;
            if (use[(size_t)p * nv + q]) ok = 0;
        }
        if (!ok) continue;
        for (int i = 0; i < 3; i++) {
            int p = e[i][0] < e[i][1] ? e[i][0] : e[i][1], q = e[i][0] ^ e[i][1] ^ p;
            use[(size_t)p * nv + q] = 1;
        }
        f[t][0] = a;
        f[t][1] = b;
        f[t][2] = c;
        t++;
    }
}

int cb_testmesh_soup(int nf, int shared, double spread, uint64_t *state, cb_mesh **out, cb_error *err)
{
    if (!state || !out) return CB_FAIL(err, CB_ERR_INPUT, "cb_testmesh_soup: NULL argument");
    if (nf < 1 || nf > 1000000) return CB_FAIL(err, CB_ERR_INPUT, "cb_testmesh_soup: %d triangles (1 to 1e6)", nf);
    int nv = shared ? nf / 2 + 3 : 3 * nf;
    double (*x)[3] = cb_calloc((size_t)nv, sizeof *x);
    int (*f)[3] = cb_calloc((size_t)nf, sizeof *f);
    unsigned char *use = shared ? cb_calloc((size_t)nv * nv, 1) : NULL;
    int rc;
    if (!x || !f || (shared && !use)) {
        rc = CB_FAIL(err, CB_ERR_NOMEM, "cb_testmesh_soup: out of memory for %d triangles", nf);
    } else {
        if (shared) {
            for (int v = 0; v < nv; v++)
                for (int c = 0; c < 3; c++) x[v][c] = cb_testmesh_uniform(state);
            shared_triangles(nf, nv, (const double (*)[3])x, use, state, f);
        } else {
            for (int t = 0; t < nf; t++) {
                double c[3] = {cb_testmesh_uniform(state), cb_testmesh_uniform(state), cb_testmesh_uniform(state)};
                for (int k = 0; k < 3; k++) {
                    f[t][k] = 3 * t + k;
                    for (int j = 0; j < 3; j++) x[3 * t + k][j] = c[j] + spread * (2 * cb_testmesh_uniform(state) - 1);
                }
            }
        }
        rc = cb_mesh_from_arrays(nv, (const double (*)[3])x, nf, (const int (*)[3])f, "soup", out, err);
    }
    free(x);
    free(f);
    free(use);
    return rc;
}
