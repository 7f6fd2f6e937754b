/* core/mesh.c — grid generation, validation and topology (see mesh.h).
 *
 * Topology is derived by sorting the 3 nf half-edges by their (min, max) vertex
 * pair: unique edges, the faces of each edge (more than two is a non-manifold edge
 * and an error) and hinges for interior edges. Degenerate triangles are those with
 * a repeated index or an area below 1e-14 times the squared bounding-box diagonal.
 */
#include "core/mesh.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/vec3.h"

cb_grid_def cb_default_grid_def(void)
{
    cb_grid_def d;
    memset(&d, 0, sizeof d);
    d.nx = 10;
    d.ny = 10;
    d.size[0] = d.size[1] = 1.0;
    d.plane = CB_PLANE_XY;
    d.diagonal = CB_DIAG_ALTERNATE;
    return d;
}

void cb_mesh_free(cb_mesh **mp)
{
    if (!mp || !*mp) return;
    cb_mesh *m = *mp;
    free(m->x);
    free(m->f);
    free(m->s);
    free(m->e);
    free(m->ef);
    free(m->h);
    free(m->he);
    free(m->boundary);
    free(m);
    *mp = NULL;
}

double cb_triangle_area(const double (*x)[3], const int t[3])
{
    double a[3], b[3], n[3];
    cb_v3_sub(a, x[t[1]], x[t[0]]);
    cb_v3_sub(b, x[t[2]], x[t[0]]);
    cb_v3_cross(n, a, b);
    return 0.5 * cb_v3_norm(n);
}

typedef struct half_edge { int a, b, face, local; } half_edge;

static int cmp_half_edge(const void *pa, const void *pb)
{
    const half_edge *p = pa, *q = pb;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    if (p->b != q->b) return p->b < q->b ? -1 : 1;
    if (p->face != q->face) return p->face < q->face ? -1 : 1;
    return 0;
}

typedef struct sorted_tri { int v[3]; int face; } sorted_tri;

static int cmp_sorted_tri(const void *pa, const void *pb)
{
    const sorted_tri *p = pa, *q = pb;
    for (int k = 0; k < 3; k++)
        if (p->v[k] != q->v[k]) return p->v[k] < q->v[k] ? -1 : 1;
    return p->face < q->face ? -1 : (p->face > q->face);
}

static void sort3(int v[3])
{
    int t;
    if (v[0] > v[1]) { t = v[0]; v[0] = v[1]; v[1] = t; }
    if (v[1] > v[2]) { t = v[1]; v[1] = v[2]; v[2] = t; }
    if (v[0] > v[1]) { t = v[0]; v[0] = v[1]; v[1] = t; }
}

/* "label:LINE: triangle t" when the source line of each face is known, else "label: triangle t". */
static const char *tri_where(char *buf, size_t n, const char *label, const int *lines, int t)
{
    if (lines) snprintf(buf, n, "%s:%d: triangle %d", label, lines[t], t);
    else snprintf(buf, n, "%s: triangle %d", label, t);
    return buf;
}

/* Validation of positions and faces, before any topology. */
static int validate(const cb_mesh *m, const char *label, const int *lines, cb_error *err)
{
    if (m->nv <= 0 || m->nf + m->ns <= 0)
        return CB_FAIL(err, CB_ERR_INPUT, "%s: empty mesh (%d vertices, %d triangles)", label, m->nv, m->nf);
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < m->nv; i++) {
        if (!cb_v3_isfinite(m->x[i]))
            return CB_FAIL(err, CB_ERR_INPUT, "%s: vertex %d has a non-finite coordinate (%g, %g, %g)",
                           label, i, m->x[i][0], m->x[i][1], m->x[i][2]);
        for (int k = 0; k < 3; k++) {
            lo[k] = fmin(lo[k], m->x[i][k]);
            hi[k] = fmax(hi[k], m->x[i][k]);
        }
    }
    char w[600];
    double diag2 = 0;
    for (int k = 0; k < 3; k++) diag2 += (hi[k] - lo[k]) * (hi[k] - lo[k]);
    for (int t = 0; t < m->nf; t++) {
        const int *f = m->f[t];
        for (int k = 0; k < 3; k++)
            if (f[k] < 0 || f[k] >= m->nv)
                return CB_FAIL(err, CB_ERR_INPUT, "%s: vertex index %d out of range [0, %d)",
                               tri_where(w, sizeof w, label, lines, t), f[k], m->nv);
        if (f[0] == f[1] || f[1] == f[2] || f[0] == f[2])
            return CB_FAIL(err, CB_ERR_INPUT, "%s (%d %d %d) is degenerate: repeated vertex",
                           tri_where(w, sizeof w, label, lines, t), f[0], f[1], f[2]);
        double a = cb_triangle_area((const double (*)[3])m->x, f);
        if (!(a > 1e-14 * diag2))
            return CB_FAIL(err, CB_ERR_INPUT, "%s (%d %d %d) is degenerate: zero area",
                           tri_where(w, sizeof w, label, lines, t), f[0], f[1], f[2]);
    }
    for (int i = 0; i < m->ns; i++) {
        const int *e = m->s[i];
        if (e[0] < 0 || e[0] >= m->nv || e[1] < 0 || e[1] >= m->nv || e[0] == e[1])
            return CB_FAIL(err, CB_ERR_INPUT, "%s: spring %d (%d %d): vertex index out of range [0, %d) or repeated",
                           label, i, e[0], e[1], m->nv);
        if (!(cb_v3_dist(m->x[e[0]], m->x[e[1]]) > 0))
            return CB_FAIL(err, CB_ERR_INPUT, "%s: spring %d (%d %d) has zero length", label, i, e[0], e[1]);
    }
    {
        unsigned char *used = cb_calloc((size_t)m->nv, 1);
        if (!used) return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", label);
        for (int t = 0; t < m->nf; t++) used[m->f[t][0]] = used[m->f[t][1]] = used[m->f[t][2]] = 1;
        for (int i = 0; i < m->ns; i++) used[m->s[i][0]] = used[m->s[i][1]] = 1;
        int unused = -1;
        for (int i = 0; i < m->nv && unused < 0; i++)
            if (!used[i]) unused = i;
        free(used);
        if (unused >= 0)
            return CB_FAIL(err, CB_ERR_INPUT, "%s: vertex %d belongs to no triangle or spring", label, unused);
    }
    /* repeated triangles: same vertex set */
    sorted_tri *st = cb_calloc((size_t)m->nf, sizeof *st);
    if (!st) return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", label);
    for (int t = 0; t < m->nf; t++) {
        memcpy(st[t].v, m->f[t], sizeof st[t].v);
        sort3(st[t].v);
        st[t].face = t;
    }
    qsort(st, (size_t)m->nf, sizeof *st, cmp_sorted_tri);
    int rc = CB_OK;
    for (int t = 1; t < m->nf; t++)
        if (!memcmp(st[t].v, st[t - 1].v, sizeof st[t].v)) {
            rc = CB_FAIL(err, CB_ERR_INPUT, "%s repeats triangle %d (vertices %d %d %d)",
                         tri_where(w, sizeof w, label, lines, st[t].face), st[t - 1].face,
                         st[t].v[0], st[t].v[1], st[t].v[2]);
            break;
        }
    free(st);
    return rc;
}

static int build_topology(cb_mesh *m, const char *label, const int *lines, cb_error *err)
{
    size_t nh3 = 3 * (size_t)m->nf + (size_t)m->ns;
    half_edge *he = cb_calloc(nh3, sizeof *he);
    if (!he) return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", label);
    for (int t = 0; t < m->nf; t++)
        for (int k = 0; k < 3; k++) {
            int a = m->f[t][k], b = m->f[t][(k + 1) % 3];
            half_edge *h = &he[3 * (size_t)t + (size_t)k];
            h->a = a < b ? a : b;
            h->b = a < b ? b : a;
            h->face = t;
            h->local = k;
        }
    for (int i = 0; i < m->ns; i++) { /* springs sort after the faces of the same edge */
        half_edge *h = &he[3 * (size_t)m->nf + (size_t)i];
        int a = m->s[i][0], b = m->s[i][1];
        h->a = a < b ? a : b;
        h->b = a < b ? b : a;
        h->face = INT_MAX;
        h->local = -1;
    }
    qsort(he, nh3, sizeof *he, cmp_half_edge);
    /* drop spring entries that repeat a triangle edge or another spring */
    size_t w = 0;
    for (size_t i = 0; i < nh3; i++) {
        if (he[i].face == INT_MAX && w > 0 && he[w - 1].a == he[i].a && he[w - 1].b == he[i].b) continue;
        he[w++] = he[i];
    }
    nh3 = w;
    int ne = 0, nh = 0;
    for (size_t i = 0; i < nh3;) {
        size_t j = i + 1;
        while (j < nh3 && he[j].a == he[i].a && he[j].b == he[i].b) j++;
        if (j - i > 2) {
            char w[600];
            int rc = CB_FAIL(err, CB_ERR_INPUT,
                             "%s: non-manifold edge (%d, %d) shared by %zu triangles (%d, %d, %d%s)",
                             tri_where(w, sizeof w, label, lines, he[i + 2].face), he[i].a, he[i].b,
                             j - i, he[i].face, he[i + 1].face, he[i + 2].face, j - i > 3 ? ", ..." : "");
            free(he);
            return rc;
        }
        ne++;
        if (j - i == 2 && he[i + 1].face != INT_MAX) nh++;
        i = j;
    }
    m->ne = ne;
    m->nh = nh;
    m->e = cb_calloc((size_t)ne, sizeof *m->e);
    m->ef = cb_calloc((size_t)ne, sizeof *m->ef);
    m->h = cb_calloc((size_t)nh, sizeof *m->h);
    m->he = cb_calloc((size_t)nh, sizeof *m->he);
    m->boundary = cb_calloc((size_t)m->nv, 1);
    if (!m->e || !m->ef || !m->h || !m->he || !m->boundary) {
        free(he);
        return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", label);
    }
    int ie = 0, ih = 0;
    for (size_t i = 0; i < nh3;) {
        size_t j = i + 1;
        while (j < nh3 && he[j].a == he[i].a && he[j].b == he[i].b) j++;
        m->e[ie][0] = he[i].a;
        m->e[ie][1] = he[i].b;
        int two = j - i == 2 && he[i + 1].face != INT_MAX;
        m->ef[ie][0] = he[i].face == INT_MAX ? -1 : he[i].face;
        m->ef[ie][1] = two ? he[i + 1].face : -1;
        if (two) {
            /* orient the hinge as the edge runs in the first face */
            const int *f0 = m->f[he[i].face], *f1 = m->f[he[i + 1].face];
            int k = he[i].local;
            int *h = m->h[ih];
            h[0] = f0[k];
            h[1] = f0[(k + 1) % 3];
            h[2] = f0[(k + 2) % 3];
            int k1 = he[i + 1].local;
            h[3] = f1[(k1 + 2) % 3];
            m->he[ih] = ie;
            ih++;
        } else if (he[i].face != INT_MAX) {
            m->boundary[he[i].a] = m->boundary[he[i].b] = 1;
        }
        ie++;
        i = j;
    }
    free(he);
    return CB_OK;
}

int cb_mesh_from_arrays(int nv, const double (*x)[3], int nf, const int (*f)[3],
                        const char *label, cb_mesh **out, cb_error *err)
{
    return cb_mesh_from_arrays_lines(nv, x, nf, f, 0, NULL, label, NULL, out, err);
}

int cb_mesh_from_arrays_lines(int nv, const double (*x)[3], int nf, const int (*f)[3], int ns,
                              const int (*seg)[2], const char *label, const int *face_lines,
                              cb_mesh **out, cb_error *err)
{
    if (!label) label = "mesh";
    if (!out) return CB_FAIL(err, CB_ERR_INPUT, "%s: cb_mesh_from_arrays: out is NULL", label);
    *out = NULL;
    if (nv <= 0 || nf < 0 || ns < 0 || nf + ns <= 0 || !x || (nf && !f) || (ns && !seg))
        return CB_FAIL(err, CB_ERR_INPUT, "%s: empty mesh (%d vertices, %d triangles, %d springs)",
                       label, nv, nf, ns);
    cb_mesh *m = cb_calloc(1, sizeof *m);
    if (!m) return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", label);
    m->nv = nv;
    m->nf = nf;
    m->ns = ns;
    m->x = cb_calloc((size_t)nv, sizeof *m->x);
    m->f = cb_calloc((size_t)nf, sizeof *m->f);
    m->s = cb_calloc((size_t)ns, sizeof *m->s);
    if (!m->x || !m->f || !m->s) {
        cb_mesh_free(&m);
        return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", label);
    }
    memcpy(m->x, x, (size_t)nv * sizeof *m->x);
    if (nf) memcpy(m->f, f, (size_t)nf * sizeof *m->f);
    if (ns) memcpy(m->s, seg, (size_t)ns * sizeof *m->s);
    int rc = validate(m, label, face_lines, err);
    if (rc == CB_OK) rc = build_topology(m, label, face_lines, err);
    if (rc != CB_OK) {
        cb_mesh_free(&m);
        return rc;
    }
    *out = m;
    return CB_OK;
}

int cb_mesh_grid(const cb_grid_def *d, cb_mesh **out, cb_error *err)
{
    if (!d || !out) return CB_FAIL(err, CB_ERR_INPUT, "grid: NULL argument");
    *out = NULL;
    if (d->nx < 2 || d->ny < 2)
        return CB_FAIL(err, CB_ERR_INPUT, "grid: nx and ny must be >= 2 (got %d x %d)", d->nx, d->ny);
    if ((long)d->nx * d->ny > 50000000L)
        return CB_FAIL(err, CB_ERR_INPUT, "grid: %d x %d vertices is too large", d->nx, d->ny);
    if (!(d->size[0] > 0) || !(d->size[1] > 0) || !isfinite(d->size[0]) || !isfinite(d->size[1]))
        return CB_FAIL(err, CB_ERR_INPUT, "grid: size must be positive and finite (got %g x %g)",
                       d->size[0], d->size[1]);
    if (!cb_v3_isfinite(d->origin))
        return CB_FAIL(err, CB_ERR_INPUT, "grid: origin must be finite");
    int nx = d->nx, ny = d->ny, nv = nx * ny, nf = 2 * (nx - 1) * (ny - 1);
    double (*x)[3] = cb_calloc((size_t)nv, sizeof *x);
    int (*f)[3] = cb_calloc((size_t)nf, sizeof *f);
    if (!x || !f) {
        free(x);
        free(f);
        return CB_FAIL(err, CB_ERR_NOMEM, "grid: out of memory for %d vertices", nv);
    }
    int ua = 0, va = 1;
    if (d->plane == CB_PLANE_XZ) { ua = 0; va = 2; }
    else if (d->plane == CB_PLANE_YZ) { ua = 1; va = 2; }
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++) {
            double *p = x[i + nx * j];
            cb_v3_copy(p, d->origin);
            p[ua] += d->size[0] * (double)i / (double)(nx - 1);
            p[va] += d->size[1] * (double)j / (double)(ny - 1);
        }
    int t = 0;
    for (int j = 0; j < ny - 1; j++)
        for (int i = 0; i < nx - 1; i++) {
            int v00 = i + nx * j, v10 = v00 + 1, v01 = v00 + nx, v11 = v01 + 1;
            int right = d->diagonal == CB_DIAG_RIGHT ||
                        (d->diagonal == CB_DIAG_ALTERNATE && ((i + j) % 2 == 0));
            if (right) { /* split along v00-v11 */
                f[t][0] = v00; f[t][1] = v10; f[t][2] = v11; t++;
                f[t][0] = v00; f[t][1] = v11; f[t][2] = v01; t++;
            } else {     /* split along v10-v01 */
                f[t][0] = v00; f[t][1] = v10; f[t][2] = v01; t++;
                f[t][0] = v10; f[t][1] = v11; f[t][2] = v01; t++;
            }
        }
    int rc = cb_mesh_from_arrays(nv, (const double (*)[3])x, nf, (const int (*)[3])f, "grid", out, err);
    free(x);
    free(f);
    if (rc == CB_OK) {
        (*out)->grid_nx = nx;
        (*out)->grid_ny = ny;
    }
    return rc;
}

void cb_mesh_lumped_masses(const cb_mesh *m, double density, double line_density, double *mass)
{
    memset(mass, 0, (size_t)m->nv * sizeof *mass);
    for (int i = 0; i < m->ns; i++) {
        double h = 0.5 * line_density * cb_v3_dist(m->x[m->s[i][0]], m->x[m->s[i][1]]);
        mass[m->s[i][0]] += h;
        mass[m->s[i][1]] += h;
    }
    for (int t = 0; t < m->nf; t++) {
        double a = cb_triangle_area((const double (*)[3])m->x, m->f[t]) * density / 3.0;
        for (int k = 0; k < 3; k++) mass[m->f[t][k]] += a;
    }
}

int cb_mesh_find_edge(const cb_mesh *m, int a, int b)
{
    if (a > b) { int t = a; a = b; b = t; }
    int lo = 0, hi = m->ne - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        const int *e = m->e[mid];
        if (e[0] == a && e[1] == b) return mid;
        if (e[0] < a || (e[0] == a && e[1] < b)) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

int cb_mesh_vertex_faces(const cb_mesh *m, int **ptr_out, int **idx_out, cb_error *err)
{
    int *ptr = cb_calloc((size_t)m->nv + 1, sizeof *ptr);
    int *idx = cb_calloc(3 * (size_t)m->nf, sizeof *idx);
    if (!ptr || !idx) {
        free(ptr);
        free(idx);
        return CB_FAIL(err, CB_ERR_NOMEM, "vertex-face adjacency: out of memory");
    }
    for (int t = 0; t < m->nf; t++)
        for (int k = 0; k < 3; k++) ptr[m->f[t][k] + 1]++;
    for (int v = 0; v < m->nv; v++) ptr[v + 1] += ptr[v];
    int *fill = cb_calloc((size_t)m->nv, sizeof *fill);
    if (!fill) {
        free(ptr);
        free(idx);
        return CB_FAIL(err, CB_ERR_NOMEM, "vertex-face adjacency: out of memory");
    }
    for (int t = 0; t < m->nf; t++)
        for (int k = 0; k < 3; k++) {
            int v = m->f[t][k];
            idx[ptr[v] + fill[v]++] = t;
        }
    free(fill);
    *ptr_out = ptr;
    *idx_out = idx;
    return CB_OK;
}
