/* solvers/pbd_layout.c — the pbd/xpbd solver's parameters and constraint graph
 * (pbd_internal.h; the method is described in solvers/pbd.c): reading the parameters,
 * building the stretch, bending and tetrahedral constraints, colouring them and storing
 * them colour by colour, the mesh parts of the parallel sweeps and the SIMD batches;
 * create and destroy. */
#include "solvers/pbd_internal.h"
#include "solvers/pbd.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "contact/colliders.h"
#include "contact/distance.h"
#include "contact/spatial_hash.h"
#include "contact/contact_probe.h"
#include "core/solver.h"
#include "core/vec3.h"
#include "solvers/pbd_constraints.h"
#include "solvers/pbd_simd.h"

static const char *const bending_names[] = {"paper", "dihedral", NULL};
static const char *const order_names[] = {"colour", "mesh", NULL};
static const char *const stepping_names[] = {"small_steps", "paper", NULL};
static const char *const simd_names[] = {"auto", "avx2", "off", NULL};

static int colour_constraints(int n, int arity, const int *verts, const double *w, uint64_t (*mask)[4],
                              int nv, int *colour)
{
    memset(mask, 0, (size_t)nv * sizeof *mask);
    int ncol = 0;
    for (int c = 0; c < n; c++) {
        uint64_t used[4] = {0, 0, 0, 0};
        const int *v = verts + (size_t)c * arity;
        for (int j = 0; j < arity; j++)
            if (w[v[j]] > 0.0)
                for (int q = 0; q < 4; q++) used[q] |= mask[v[j]][q];
        int col = -1;
        for (int q = 0; q < 4 && col < 0; q++)
            if (~used[q]) {
                uint64_t free_bits = ~used[q];
                int b = 0;
                while (!((free_bits >> b) & 1u)) b++;
                col = 64 * q + b;
            }
        if (col < 0) return -1;
        for (int j = 0; j < arity; j++)
            if (w[v[j]] > 0.0) mask[v[j]][col / 64] |= (uint64_t)1 << (col % 64);
        colour[c] = col;
        if (col + 1 > ncol) ncol = col + 1;
    }
    return ncol;
}

typedef struct ckey { int key, idx; } ckey;

static int ckey_cmp(const void *pa, const void *pb)
{
    const ckey *a = pa, *b = pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Colour one constraint type and reorder its arrays by colour, and within a colour by
 * the smallest vertex index (memory locality; the constraints of a colour touch disjoint
 * free vertices, so their order does not change the result), appending one block per
 * non-empty colour. verts has n*arity ints, rest and alpha n doubles. */
static int order_by_colour(pbd_solver *s, int type, int n, int arity, int *verts, double *rest,
                           double *alpha, uint64_t (*mask)[4], cb_error *err)
{
    if (n <= 0) return CB_OK;
    if (s->mesh_order) {
        block *nb = cb_realloc(s->blocks, (size_t)(s->nblocks + 1) * sizeof *nb);
        if (!nb) return CB_FAIL(err, CB_ERR_NOMEM, "pbd: out of memory");
        s->blocks = nb;
        s->blocks[s->nblocks++] = (block){type, 0, n, n, 0, 0};
        return CB_OK;
    }
    int *colour = cb_calloc((size_t)n, sizeof *colour);
    int *tmpv = cb_calloc((size_t)n * (size_t)arity, sizeof *tmpv);
    double *tmpd = cb_calloc((size_t)n * 2, sizeof *tmpd);
    ckey *ord = cb_calloc((size_t)n, sizeof *ord);
    int count[MAX_COLOURS + 1];
    int rc = CB_OK;
    if (!colour || !tmpv || !tmpd || !ord) {
        rc = CB_FAIL(err, CB_ERR_NOMEM, "pbd: out of memory for %d constraints", n);
        goto done;
    }
    int ncol = colour_constraints(n, arity, verts, s->w, mask, s->nv, colour);
    if (ncol < 0) {
        rc = CB_FAIL(err, CB_ERR_INPUT, "pbd: the constraints need more than %d colours "
                     "(a vertex with too many neighbours)", MAX_COLOURS);
        goto done;
    }
    memset(count, 0, sizeof count);
    for (int c = 0; c < n; c++) count[colour[c] + 1]++;
    for (int k = 0; k < ncol; k++) count[k + 1] += count[k];
    block *nb = cb_realloc(s->blocks, (size_t)(s->nblocks + ncol) * sizeof *nb);
    if (!nb) {
        rc = CB_FAIL(err, CB_ERR_NOMEM, "pbd: out of memory");
        goto done;
    }
    s->blocks = nb;
    for (int k = 0; k < ncol; k++)
        if (count[k + 1] > count[k])
            s->blocks[s->nblocks++] = (block){type, count[k], count[k + 1], count[k + 1], 0, 0};
    memcpy(tmpv, verts, (size_t)n * (size_t)arity * sizeof *tmpv);
    memcpy(tmpd, rest, (size_t)n * sizeof *tmpd);
    memcpy(tmpd + n, alpha, (size_t)n * sizeof *tmpd);
    for (int c = 0; c < n; c++) {
        const int *v = tmpv + (size_t)c * arity;
        int key = v[0];
        for (int j = 1; j < arity; j++) key = v[j] < key ? v[j] : key;
        ord[count[colour[c]]++] = (ckey){key, c};
    }
    for (int k = 0; k < ncol; k++) { /* count[k] is now the end of colour k */
        int begin = k ? count[k - 1] : 0;
        if (count[k] > begin) qsort(ord + begin, (size_t)(count[k] - begin), sizeof *ord, ckey_cmp);
    }
    for (int dst = 0; dst < n; dst++) {
        int c = ord[dst].idx;
        memcpy(verts + (size_t)dst * arity, tmpv + (size_t)c * arity, (size_t)arity * sizeof *verts);
        rest[dst] = tmpd[c];
        alpha[dst] = tmpd[n + c];
    }
done:
    free(colour);
    free(tmpv);
    free(tmpd);
    free(ord);
    return rc;
}

/* ------------------------------------------------------------ create / destroy */

void cb_pbd_destroy(void *self)
{
    pbd_solver *s = self;
    if (!s) return;
    free(s->st); free(s->salpha); free(s->slambda);
    free(s->bd); free(s->balpha); free(s->blambda);
    free(s->te); free(s->talpha); free(s->tlambda);
    free(s->blocks);
    free(s->part_block);
    free(s->sbat);
    free(s->bbat);
    free(s->pmem); free(s->pk); free(s->vpred);
    free(s->cc);
    free(s->sc);
    free(s->cand);
    free(s->pb);
    free(s->grad);
    free(s->jthr);
    cb_spatial_hash_free(&s->hash);
    cb_contact_probe_free(&s->probe);
    free(s);
}

double cb_pbd_kprime(double k, int iterations)
{
    return 1.0 - pow(1.0 - k, 1.0 / (double)iterations);
}

/* k' for `sweeps` projections per time step (paper: per substep) */
void cb_pbd_set_kprime(pbd_solver *s, int sweeps)
{
    s->k_stretch = cb_pbd_kprime(s->ks_raw, sweeps);
    s->k_bend = cb_pbd_kprime(s->kb_raw, sweeps);
    s->k_volume = cb_pbd_kprime(s->kv_raw, sweeps);
    s->kprime_sweeps = sweeps;
}

/* The number of substeps of a step of dt: `substeps` (paper), or at least enough
 * for substeps no longer than max_substep (small_steps). */
int cb_pbd_substep_count(const pbd_solver *s, double dt)
{
    if (s->stepping == STEP_PAPER) return s->substeps;
    double q = ceil(dt / s->max_substep * (1.0 - 1e-12));
    int n = q > 1e6 ? 1000000 : q < 1 ? 1 : (int)q;
    return n > s->substeps ? n : s->substeps;
}

/* The stiffnesses read from the parameters (pbd: dimensionless k; xpbd: the tet
 * volume compliance), for building the constraints. */
typedef struct stiffness {
    double ks, kb, kv, vol_compliance;
} stiffness;

/* Create-time constraint arrays before colouring reorders them into s->st, bd, te. */
typedef struct build_arrays {
    int (*sv)[2], (*bv)[4], (*tv)[4];
    double *srest, *brest, *trest;
    uint64_t (*mask)[4];
} build_arrays;

static void free_build_arrays(build_arrays *b)
{
    free(b->sv); free(b->bv); free(b->tv);
    free(b->srest); free(b->brest); free(b->trest);
    free(b->mask);
    memset(b, 0, sizeof *b);
}

/* Stage 1: the parameters (every key read between begin and end), and what they
 * imply: the k' mapping, the bending cap, pressure only on a closed mesh. */
static int read_parameters(pbd_solver *s, const cb_world *w, const cb_params *prm, stiffness *k, cb_error *err)
{
    const char *name = s->xpbd ? "xpbd" : "pbd";
    const int xpbd = s->xpbd;
    *k = (stiffness){1.0, 0.1, 1.0, 0.0};
    cb_params q;
    int rc = cb_params_begin(prm, &q, err);
    if (!rc) rc = cb_params_choice(&q, "stepping", stepping_names, STEP_SMALL, &s->stepping,
                                   "small_steps: substeps of at most max_substep (Macklin 2019); paper: the 2007 loop", err);
    if (!rc) rc = cb_params_double(&q, "max_substep", 2.5e-4, 1e-9, 1e6, &s->max_substep,
                                   "longest substep with stepping small_steps (s)", err);
    if (!rc) rc = cb_params_int(&q, "iterations", s->stepping == STEP_PAPER ? 10 : 1, 1, 1000000, &s->iterations,
                                "Gauss-Seidel sweeps per substep (default 1 with small_steps, 10 with paper)", err);
    if (!rc) rc = cb_params_int(&q, "substeps", 1, 1, 1000000, &s->substeps,
                                "substeps per step (small_steps: the least number)", err);
    if (!rc) rc = cb_params_double(&q, "damping", 0.0, 0.0, 1.0, &s->k_damping,
                                   "k_damping of the paper's section 3.5 velocity damping", err);
    if (!rc) rc = cb_params_double(&q, "drag", 0.0, 0.0, 1e6, &s->drag,
                                   "velocity drag rate (1/s): v *= exp(-drag h)", err);
    if (!rc) rc = cb_params_double(&q, "contact_offset", 0.5 * w->thickness, 0.0, 1e3, &s->offset,
                                   "distance kept from the colliders (m; default half the cloth thickness)", err);
    if (!rc) rc = cb_params_bool(&q, "self_collision", w->mesh && w->mesh->nf > 0, &s->self_collision,
                                 "vertex-triangle self-collision constraints (default on for a triangle mesh)", err);
    if (!rc) rc = cb_params_double(&q, "self_thickness", w->thickness, 0.0, 1e3, &s->self_h,
                                   "self-collision thickness (m; default the cloth thickness)", err);
    if (!rc) rc = cb_params_double(&q, "self_margin", s->self_h, 0.0, 1e3, &s->self_margin,
                                   "extra self-collision search distance (m; default self_thickness)", err);
    if (!rc) rc = cb_params_bool(&q, "self_cache", 1, &s->self_cache,
                                 "small_steps: reuse the self-contact candidates across substeps and steps while "
                                 "the cloth's motion relative to itself stays below their margin (same contacts "
                                 "either way; false: a search every substep)", err);
    if (!rc) rc = cb_params_double(&q, "pressure", 0.0, 0.0, 1e6, &s->pressure,
                                   "overpressure factor of a closed mesh (0: off)", err);
    if (!rc) rc = cb_params_choice(&q, "order", order_names, 0, &s->mesh_order,
                                   "sweep order: colour (parallel colours) or mesh (serial, the paper's)", err);
    int simd_choice = 0;
    if (!rc) rc = cb_params_choice(&q, "simd", simd_names, 0, &simd_choice,
                                   "auto: stretch and bending 8 (AVX-512) or 4 (AVX2) at a time, as the CPU allows; "
                                   "avx2: at most 4; off: scalar", err);
    if (!rc) rc = cb_params_int(&q, "parts", 2, 1, 64, &s->parts,
                                "parallel sweeps: mesh parts swept side by side without a barrier per colour "
                                "(1: a barrier after every colour)", err);
    if (!xpbd) {
        if (!rc) rc = cb_params_double(&q, "stretch_stiffness", 1.0, 0.0, 1.0, &k->ks,
                                       "dimensionless stretch stiffness k", err);
        if (!rc) rc = cb_params_double(&q, "bend_stiffness", 0.1, 0.0, 1.0, &k->kb,
                                       "dimensionless bending stiffness k", err);
        if (!rc) rc = cb_params_double(&q, "volume_stiffness", 1.0, 0.0, 1.0, &k->kv,
                                       "dimensionless tet volume stiffness k", err);
        if (!rc) rc = cb_params_choice(&q, "bending", bending_names, 0, &s->bending,
                                       "bending constraint: the paper's acos(n1.n2) or the model's dihedral angle", err);
        if (!rc) rc = cb_params_double(&q, "bend_max_step", 0.5, 0.0, 1e30, &s->bend_cap,
                                       "largest angle change of one bending projection (rad; 0: unlimited)", err);
    } else {
        s->bending = 1;
        if (!rc) rc = cb_params_double(&q, "volume_compliance", 0.0, 0.0, 1e30, &k->vol_compliance,
                                       "tet volume compliance (0: incompressible)", err);
    }
    rc = cb_params_end(prm, &q, rc, err);
    if (rc) return rc;
    int width = cb_pbd_simd_width();
    s->simd = s->mesh_order || simd_choice == 2 ? 0 : simd_choice == 1 && width > 4 ? 4 : width;
    s->ks_raw = k->ks;
    s->kb_raw = k->kb;
    s->kv_raw = k->kv;
    cb_pbd_set_kprime(s, s->iterations);
    if (xpbd || !(s->bend_cap > 0)) s->bend_cap = INFINITY;
    const cb_mesh *m = w->mesh;
    if (s->pressure > 0) {
        int open = m->nf == 0 || m->ns > 0;
        for (int e = 0; e < m->ne && !open; e++) open = m->ef[e][1] < 0;
        if (open)
            return CB_FAIL(err, CB_ERR_INPUT, "%s: pressure needs a closed triangle mesh (every edge in "
                           "two triangles, no springs)", name);
        s->v6rest = cb_pbd_volume6(m, (const double (*)[3])m->x, NULL);
    }
    return CB_OK;
}

/* Stage 2: every array of the solver and the create-time arrays in b. */
static int allocate(pbd_solver *s, const cb_world *w, build_arrays *b, cb_error *err)
{
    const cb_mesh *m = w->mesh;
    int nv = w->nv;
    size_t ne = (size_t)m->ne, nh = (size_t)m->nh, nt = (size_t)w->ntets;
    size_t ne1 = ne ? ne : 1, nh1 = nh ? nh : 1, nt1 = nt ? nt : 1;
    b->sv = cb_calloc(ne1, sizeof *b->sv);
    b->bv = cb_calloc(nh1, sizeof *b->bv);
    b->tv = cb_calloc(nt1, sizeof *b->tv);
    b->srest = cb_calloc(ne1, sizeof *b->srest);
    b->brest = cb_calloc(nh1, sizeof *b->brest);
    b->trest = cb_calloc(nt1, sizeof *b->trest);
    b->mask = cb_calloc((size_t)nv, sizeof *b->mask);
    s->st = cb_calloc(ne1, sizeof *s->st);
    s->salpha = cb_calloc(ne1, sizeof *s->salpha);
    s->slambda = cb_calloc(ne1, sizeof *s->slambda);
    s->bd = cb_calloc(nh1, sizeof *s->bd);
    s->balpha = cb_calloc(nh1, sizeof *s->balpha);
    s->blambda = cb_calloc(nh1, sizeof *s->blambda);
    s->te = cb_calloc(nt1, sizeof *s->te);
    s->talpha = cb_calloc(nt1, sizeof *s->talpha);
    s->tlambda = cb_calloc(nt1, sizeof *s->tlambda);
    /* p aligned to 32 bytes (a point per 32-byte block: no load or store of a point
     * straddles two cache lines) */
    s->pmem = cb_calloc((size_t)nv + 1, sizeof *s->p);
    if (s->pmem) s->p = (double (*)[4])(((uintptr_t)s->pmem + 31) & ~(uintptr_t)31);
    s->pk = cb_calloc((size_t)nv, sizeof *s->pk);
    s->vpred = cb_calloc((size_t)nv, sizeof *s->vpred);
    s->capcc = nv * (w->ncolliders > 0 ? w->ncolliders : 1);
    s->cc = cb_calloc((size_t)s->capcc, sizeof *s->cc);
    s->grad = cb_calloc((size_t)nv, sizeof *s->grad);
#ifdef _OPENMP
    s->nthr = omp_get_max_threads();
#else
    s->nthr = 1;
#endif
    if (s->nthr < 1) s->nthr = 1;
    s->jthr = cb_calloc((size_t)s->nthr, sizeof *s->jthr);
    if (!b->sv || !b->bv || !b->tv || !b->srest || !b->brest || !b->trest || !b->mask || !s->jthr ||
        !s->st || !s->salpha || !s->slambda || !s->bd || !s->balpha || !s->blambda || !s->te || !s->talpha ||
        !s->tlambda || !s->p || !s->pk || !s->vpred || !s->cc || !s->grad)
        return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory for %d vertices", s->xpbd ? "xpbd" : "pbd", nv);
    return CB_OK;
}

/* Stage 3: the constraints in mesh order: stretch per edge, bending per hinge, volume
 * per tet (those with a free vertex, and a non-zero stiffness). */
static void build_constraints(pbd_solver *s, const cb_world *w, const stiffness *k, build_arrays *b)
{
    const cb_mesh *m = w->mesh;
    const double *ww = w->inv_mass;
    const int xpbd = s->xpbd;
    /* stretch: every mesh edge (xpbd: none when k_stretch = 0) */
    const double (*X)[3] = (const double (*)[3])m->x;
    if (!xpbd || w->model.k_stretch > 0)
        for (int e = 0; e < m->ne; e++) {
            int ia = m->e[e][0], ib = m->e[e][1];
            if (ww[ia] == 0 && ww[ib] == 0) continue;
            b->sv[s->ns][0] = ia;
            b->sv[s->ns][1] = ib;
            b->srest[s->ns] = w->model.rest_length[e];
            s->salpha[s->ns] = xpbd ? 1.0 / w->model.k_stretch : 0.0;
            s->ns++;
        }
    /* bending: every hinge */
    for (int i = 0; i < m->nh; i++) {
        const int *h = m->h[i];
        if (ww[h[0]] == 0 && ww[h[1]] == 0 && ww[h[2]] == 0 && ww[h[3]] == 0) continue;
        double alpha = 0, rest;
        if (xpbd) {
            double kw = 2.0 * w->model.k_bend * w->model.hinge_weight[i];
            if (!(kw > 0)) continue;
            alpha = 1.0 / kw;
        } else if (!(k->kb > 0)) {
            continue;
        }
        if (s->bending == 0) rest = cb_pbd_bend_paper_angle(X[h[0]], X[h[1]], X[h[2]], X[h[3]]);
        else rest = w->model.hinge_rest_angle[i];
        memcpy(b->bv[s->nb], h, sizeof b->bv[0]);
        b->brest[s->nb] = rest;
        s->balpha[s->nb] = alpha;
        s->nb++;
    }
    /* tetrahedral volume */
    for (int i = 0; i < w->ntets; i++) {
        const int *t = w->tets[i];
        if (!xpbd && !(k->kv > 0)) break;
        memcpy(b->tv[s->nt], t, sizeof b->tv[0]);
        b->trest[s->nt] = cb_pbd_tet_volume(X[t[0]], X[t[1]], X[t[2]], X[t[3]], 0.0, NULL);
        s->talpha[s->nt] = k->vol_compliance;
        s->nt++;
    }
}

/* Stage 4: colour each kind of constraint (parallel sweeps) and pack them. */
static int colour_and_pack(pbd_solver *s, const cb_world *w, build_arrays *b, cb_error *err)
{
    const double *ww = w->inv_mass;
    int rc = order_by_colour(s, T_STRETCH, s->ns, 2, &b->sv[0][0], b->srest, s->salpha, b->mask, err);
    if (!rc) rc = order_by_colour(s, T_BEND, s->nb, 4, &b->bv[0][0], b->brest, s->balpha, b->mask, err);
    if (!rc) rc = order_by_colour(s, T_TET, s->nt, 4, &b->tv[0][0], b->trest, s->talpha, b->mask, err);
    if (rc) return rc;
    for (int c = 0; c < s->ns; c++) {
        scon *k = &s->st[c];
        for (int j = 0; j < 2; j++) {
            k->v[j] = b->sv[c][j];
            k->w[j] = ww[b->sv[c][j]];
        }
        k->rest = b->srest[c];
    }
    for (int c = 0; c < s->nb + s->nt; c++) {
        int tet = c >= s->nb, i = tet ? c - s->nb : c;
        qcon *k = tet ? &s->te[i] : &s->bd[i];
        for (int j = 0; j < 4; j++) {
            k->v[j] = tet ? b->tv[i][j] : b->bv[i][j];
            k->w[j] = ww[k->v[j]];
        }
        k->rest = tet ? b->trest[i] : b->brest[i];
    }
    return CB_OK;
}


/* Stage 4a (parallel sweeps, `parts` > 1): the vertices fall in `parts` ranges of their
 * index (bands of a grid); a constraint whose free vertices all lie in part q belongs to
 * it, any other to the boundary. Every colour block is reordered part by part (stably)
 * and the blocks regrouped: part 0's (in their colour order), part 1's, ..., then the
 * boundary's. A sweep then runs the parts side by side, each part's colours one after the
 * other on one thread with no barrier between them (two parts share no free vertex),
 * then the boundary on one thread: two barriers per sweep instead of one per colour, and
 * the same order, so the same result, with any number of threads. A mesh whose vertex
 * order is not banded (more than a quarter of the constraints on the boundary) keeps the
 * barrier per colour. */
static int part_of(const pbd_solver *s, const int *v, const double *w, int arity, int K)
{
    int q = -1;
    for (int j = 0; j < arity; j++) {
        if (w[j] == 0.0) continue;
        int r = (int)((long long)v[j] * K / s->nv);
        if (q < 0) q = r;
        else if (q != r) return K;
    }
    return q < 0 ? 0 : q;
}

static int con_part(const pbd_solver *s, int type, int c, int K)
{
    if (type == T_STRETCH) return part_of(s, s->st[c].v, s->st[c].w, 2, K);
    const qcon *q = type == T_BEND ? &s->bd[c] : &s->te[c];
    return part_of(s, q->v, q->w, 4, K);
}

/* Scratch of reorder_block, for blocks of up to cap constraints. */
typedef struct reorder_buf { int *key; scon *ts; qcon *tq; double *ta; int cap; } reorder_buf;

static int reorder_buf_alloc(const pbd_solver *s, reorder_buf *r, cb_error *err)
{
    r->cap = 1;
    for (int b = 0; b < s->nblocks; b++)
        if (s->blocks[b].end - s->blocks[b].begin > r->cap) r->cap = s->blocks[b].end - s->blocks[b].begin;
    r->key = cb_calloc((size_t)r->cap, sizeof *r->key);
    r->ts = cb_calloc((size_t)r->cap, sizeof *r->ts);
    r->tq = cb_calloc((size_t)r->cap, sizeof *r->tq);
    r->ta = cb_calloc((size_t)r->cap, sizeof *r->ta);
    if (!r->key || !r->ts || !r->tq || !r->ta)
        return CB_FAIL(err, CB_ERR_NOMEM, "pbd: out of memory for %d constraints", r->cap);
    return CB_OK;
}

static void reorder_buf_free(reorder_buf *r)
{
    free(r->key);
    free(r->ts);
    free(r->tq);
    free(r->ta);
}

/* Reorder block bl's constraints (records and compliances) stably by r->key[i] in
 * [0, nkey), the key of constraint bl->begin + i (nkey <= MAX_KEYS); start[0..nkey] gets
 * where each key's run begins, counted from bl->begin. The order within a colour does
 * not change the result; the mesh parts and the SIMD batches both group by it. */
#define MAX_KEYS 66
static void reorder_block(pbd_solver *s, const block *bl, int nkey, int *start, reorder_buf *r)
{
    int m = bl->end - bl->begin, fill[MAX_KEYS];
    scon *st = s->st + bl->begin;
    qcon *qc = (bl->type == T_BEND ? s->bd : s->te) + bl->begin;
    double *al = (bl->type == T_STRETCH ? s->salpha : bl->type == T_BEND ? s->balpha : s->talpha) + bl->begin;
    memset(start, 0, (size_t)(nkey + 1) * sizeof *start);
    for (int i = 0; i < m; i++) start[r->key[i] + 1]++;
    for (int q = 0; q < nkey; q++) start[q + 1] += start[q];
    memcpy(fill, start, (size_t)nkey * sizeof *fill);
    if (bl->type == T_STRETCH) memcpy(r->ts, st, (size_t)m * sizeof *r->ts);
    else memcpy(r->tq, qc, (size_t)m * sizeof *r->tq);
    memcpy(r->ta, al, (size_t)m * sizeof *r->ta);
    for (int i = 0; i < m; i++) {
        int d = fill[r->key[i]]++;
        if (bl->type == T_STRETCH) st[d] = r->ts[i];
        else qc[d] = r->tq[i];
        al[d] = r->ta[i];
    }
}

static int split_parts(pbd_solver *s, cb_error *err)
{
    int K = s->parts, n = s->ns + s->nb + s->nt, nboundary = 0;
    s->nparts = 1;
    if (K < 2 || s->mesh_order || !s->parallel) return CB_OK;
    for (int b = 0; b < s->nblocks; b++)
        for (int c = s->blocks[b].begin; c < s->blocks[b].end; c++)
            nboundary += con_part(s, s->blocks[b].type, c, K) == K;
    if (4 * nboundary > n) return CB_OK;
    reorder_buf r = {0};
    block *nb = cb_calloc((size_t)s->nblocks * (size_t)(K + 1), sizeof *nb);
    int *sub = cb_calloc((size_t)s->nblocks * (size_t)(K + 2), sizeof *sub); /* block b, part q: its start */
    s->part_block = cb_calloc((size_t)K + 2, sizeof *s->part_block);
    int rc = reorder_buf_alloc(s, &r, err);
    if (!rc && (!nb || !sub || !s->part_block)) rc = CB_FAIL(err, CB_ERR_NOMEM, "pbd: out of memory for %d mesh parts", K);
    if (rc) goto done;
    for (int b = 0; b < s->nblocks; b++) {
        const block *bl = &s->blocks[b];
        for (int c = bl->begin; c < bl->end; c++) r.key[c - bl->begin] = con_part(s, bl->type, c, K);
        reorder_block(s, bl, K + 1, sub + (size_t)b * (K + 2), &r);
    }
    int nn = 0;
    for (int q = 0; q <= K; q++) {
        s->part_block[q] = nn;
        for (int b = 0; b < s->nblocks; b++) {
            const int *start = sub + (size_t)b * (K + 2);
            int begin = s->blocks[b].begin + start[q], end = s->blocks[b].begin + start[q + 1];
            if (end > begin) nb[nn++] = (block){s->blocks[b].type, begin, end, end, 0, 0};
        }
    }
    s->part_block[K + 1] = nn;
    free(s->blocks);
    s->blocks = nb;
    nb = NULL;
    s->nblocks = nn;
    s->nparts = K;
done:
    free(nb);
    free(sub);
    reorder_buf_free(&r);
    return rc;
}

/* Stage 4b (SIMD path): within each colour of stretch and bending constraints, the
 * constraints whose vertices are all free first (reorder_block: stable), then their
 * batches of four, the last one padded with empty lanes (c = -1, the vertices of its
 * first lane, never written). */
static int make_batches(pbd_solver *s, cb_error *err)
{
    reorder_buf r = {0};
    int rc = reorder_buf_alloc(s, &r, err), n2 = 0, n4 = 0;
    for (int b = 0; b < s->nblocks && !rc; b++) {
        block *bl = &s->blocks[b];
        if (bl->type == T_TET) continue;
        int start[3];
        for (int c = bl->begin; c < bl->end; c++)
            r.key[c - bl->begin] = bl->type == T_STRETCH ? attached(s->st[c].w, 2) : attached(s->bd[c].w, 4);
        reorder_block(s, bl, 2, start, &r);
        bl->mid = bl->begin + start[1];
        int nb = (bl->mid - bl->begin + 3) / 4;
        bl->b0 = bl->type == T_STRETCH ? n2 : n4;
        bl->b1 = bl->b0 + nb;
        if (bl->type == T_STRETCH) n2 += nb;
        else n4 += nb;
    }
    reorder_buf_free(&r);
    if (rc) return rc;
    s->sbat = cb_calloc((size_t)(n2 ? n2 : 1), sizeof *s->sbat);
    s->bbat = cb_calloc((size_t)(n4 ? n4 : 1), sizeof *s->bbat);
    if (!s->sbat || !s->bbat) return CB_FAIL(err, CB_ERR_NOMEM, "pbd: out of memory for %d batches", n2 + n4);
    for (int b = 0; b < s->nblocks; b++) {
        const block *bl = &s->blocks[b];
        if (bl->type == T_TET) continue;
        int two = bl->type == T_STRETCH, arity = two ? 2 : 4;
        for (int i = bl->b0; i < bl->b1; i++) {
            /* the batch's rows: vertex j of lane l is v[j][l] (the same in both layouts) */
            int (*v)[4] = two ? s->sbat[i].v : s->bbat[i].v, *cl = two ? s->sbat[i].c : s->bbat[i].c;
            double *rest = two ? s->sbat[i].rest : s->bbat[i].rest;
            for (int l = 0; l < 4; l++) {
                int c = bl->begin + 4 * (i - bl->b0) + l, real = c < bl->mid;
                int src = real ? c : bl->begin + 4 * (i - bl->b0); /* an empty lane reads lane 0 */
                const int *sv = two ? s->st[src].v : s->bd[src].v;
                for (int j = 0; j < arity; j++) v[j][l] = sv[j];
                rest[l] = two ? s->st[src].rest : s->bd[src].rest;
                cl[l] = real ? c : -1;
            }
        }
    }
    return CB_OK;
}

/* Stage 5: self collision (spatial hash, constraint store) and the contact probe. */
static int contact_parts(pbd_solver *s, const cb_world *w, cb_error *err)
{
    const char *name = s->xpbd ? "xpbd" : "pbd";
    const cb_mesh *m = w->mesh;
    int nv = w->nv;
    int rc = 0;
    if (s->self_collision) {
        if (m->nf == 0) rc = CB_FAIL(err, CB_ERR_INPUT, "%s: self_collision needs a triangle mesh", name);
        if (!rc) rc = cb_spatial_hash_create(1.0, &s->hash, err);
        /* small_steps: the pairs within a distance of a triangle's box, by triangle then
         * vertex, whatever the cell size (the candidate cache, pbd_contact.c) */
        if (!rc && s->stepping != STEP_PAPER) cb_spatial_hash_set_box_filter(s->hash, 1);
        if (!rc) {
            s->capsc = 4 * nv;
            s->sc = cb_calloc((size_t)s->capsc, sizeof *s->sc);
            s->pb = cb_calloc((size_t)nv, sizeof *s->pb);
            if (!s->sc || !s->pb) rc = CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", name);
        }
    }
    if (!rc && w->ncolliders) rc = cb_contact_probe_create(w, &s->probe, err);
    return rc;
}

int cb_pbd_create(const cb_world *w, const cb_params *prm, int xpbd, void **self, cb_error *err)
{
    const char *name = xpbd ? "xpbd" : "pbd";
    if (!w || !self) return CB_FAIL(err, CB_ERR_INPUT, "%s: NULL argument", name);
    *self = NULL;
    pbd_solver *s = cb_calloc(1, sizeof *s);
    if (!s) return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", name);
    s->xpbd = xpbd;
    s->mesh = w->mesh;
    s->nv = w->nv;
    s->w = w->inv_mass;
    s->pin_omega = (const double (*)[3])w->pin_omega;
    stiffness k;
    build_arrays b = {0};
    int rc = read_parameters(s, w, prm, &k, err);
    if (!rc) rc = allocate(s, w, &b, err);
    if (!rc) {
        build_constraints(s, w, &k, &b);
        /* small_steps runs 20x the sweeps of a step, each of them a parallel region with
         * a barrier per colour: with one sweep per substep a colour of a 40 x 40 cloth is
         * too little work to share (2 threads on a loaded 2-core machine: 1.4 s per step
         * instead of 38 ms), so it goes parallel at 16x the size only. Measured again for
         * issue 35 (load 19 on the 2 cores; bench ms per step, its project stage, 2 threads,
         * the threshold forced to 0 against serial): drape_sphere_contact 60 x 60 (21k
         * constraints) 577 against 15 ms, hanging 90 x 90 (48k) 4010 against 81 ms,
         * hanging 128 x 128 (97k, above the threshold) 4622 against 207 ms; loaded, the
         * barriers lose at every size, so the threshold stays until a quiet machine says
         * where 2 threads start to win (self contact and colliders are serial anyway) */
        int par_min = s->stepping == STEP_PAPER ? 4096 : 65536;
        s->parallel = !s->mesh_order && s->ns + s->nb + s->nt >= par_min;
        rc = colour_and_pack(s, w, &b, err);
    }
    if (!rc) rc = split_parts(s, err);
    if (!rc && s->simd) rc = make_batches(s, err);
    free_build_arrays(&b);
    if (!rc) rc = contact_parts(s, w, err);
    if (rc) {
        cb_pbd_destroy(s);
        return rc;
    }
    *self = s;
    return CB_OK;
}

