/* solvers/step_contact.c — contact after an implicit step: self collision by
 * vertex-triangle projection, then colliders, then the pairs again with the vertices on
 * colliders held (step_contact.h). */
#include "solvers/step_contact.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/colliders.h"
#include "contact/distance.h"
#include "contact/spatial_hash.h"
#include "core/vec3.h"
#include "solvers/self_grid.h"

/* Hash cells of 1.5 mean edge lengths: with the box filter the answer does not depend
 * on the cell size; 1.5 visits fewer cells than 1 for thin cloth boxes (measured). */
#define CELL_SCALE 1.5
/* The dense grid's cells: 1.25 mean edge lengths at rest (fewer vertices tested per
 * triangle than 1.5: 0.67 against 0.74 ms of CPU per query on the swinging 81 x 81
 * curtain; 2.0 was slower, 1.0 no faster), so up to 32 cells per vertex are allowed
 * before the hash answers instead (with 16, part of the curtain's queries went to the
 * slower hash). */
#define GRID_CELL_SCALE 1.25
/* Cache margin: delta = CACHE_STEPS x the largest coordinate change of the step, at
 * least CACHE_MIN x self_distance (the contact pushes themselves move vertices by up
 * to self_distance), and no cache (rebuilt every step) when that exceeds the mean
 * edge length (the candidates would grow with the box volume). */
#define CACHE_STEPS 8.0
#define CACHE_MIN 4.0

struct cb_step_contact {
    cb_step_contact_def def;
    double reject2;          /* (1 + 1e-6)^2 self_distance^2: box distance^2 beyond it is no contact */
    cb_spatial_hash *hash;   /* NULL when self collision is off */
    /* candidate cache: the hash's pairs within self_distance (1 + 1e-6) + delta at the
     * positions xb; valid while every coordinate moved by less than delta/2 since */
    int nv, nf;
    double (*xb)[3];         /* [nv] positions of the last build */
    cb_pair_list cand;       /* cached candidates, by triangle then vertex */
    cb_pair_list act;        /* this step's pairs: cand filtered by the box test */
    double delta;            /* margin of the cache (0: rebuilt every step) */
    int valid;
    long builds, queries;
    unsigned char *held;     /* [nv] bit 1: put on a collider's surface by this step's collider
                              * pass; bit 2: moved by the pairs after it */
    double (*held_normal)[3]; /* [nv] that collider's outward normal there */
    double (*held_vel)[3];    /* [nv] and its surface velocity there (the work of the share it takes) */
    /* the far bound of a pass's pairs, taken at once at its start (self_passes) */
    unsigned char *farbits;  /* bit p & 7 of [p >> 3]: pair p was far at the start of the pass */
    long farcap;             /* pairs farbits has room for */
    int far_width;           /* cb_step_contact_far_bits's vector width; 0: each pair's bound
                              * taken when it is used (the reference, for tests) */
    long retaken;            /* pairs whose bound was taken again (an earlier pair moved a vertex) */
    unsigned *stamp;         /* [nv] the pass (epoch) that last moved each vertex */
    unsigned epoch;          /* this pass's number */
    long moves;              /* pairs that moved vertices in this pass */
    /* the dense grid (self_grid.h; NULL without an edge: the hash answers) */
    double rest_edge;        /* mean edge length at rest */
    double cell;             /* CELL_SCALE x the mean edge length of the last build (at rest for the grid,
                              * at the positions for the hash; the hash's cell size) */
    cb_self_grid *grid;
    cb_pair_list gpairs;     /* the pairs of the last grid query */
    const cb_pair_list *built; /* the pairs of the last build: gpairs or the hash's */
    long grid_builds;        /* builds the grid answered */
};

/* The far bound's width: `want` capped by the CPU, and 1 (pair by pair) for a mesh whose
 * vertex or triangle numbers times 3 do not fit the vector paths' 32-bit lanes
 * (solvers/step_far.h). */
static int far_width(int want, int nv, int nf)
{
    if (nv >= 715827882 || nf >= 715827882) return 1;
    int have = cb_step_contact_far_width();
    return want >= 8 && have >= 8 ? 8 : want >= 4 && have >= 4 ? 4 : 1;
}

int cb_step_contact_create(const cb_world *w, const cb_step_contact_def *def, cb_step_contact **out,
                           cb_error *err)
{
    if (!w || !def || !out) return CB_FAIL(err, CB_ERR_INPUT, "cb_step_contact_create: NULL argument");
    *out = NULL;
    if (!(def->collider_offset >= 0) || !(def->self_distance >= 0) || !(def->self_friction >= 0) ||
        def->self_iterations < 1)
        return CB_FAIL(err, CB_ERR_INPUT,
                       "step contact: offsets and friction must be >= 0 and self_iterations >= 1");
    cb_step_contact *c = cb_calloc(1, sizeof *c);
    if (!c) return CB_FAIL(err, CB_ERR_NOMEM, "step contact: out of memory");
    c->def = *def;
    c->reject2 = (1.0 + 1e-6) * (1.0 + 1e-6) * def->self_distance * def->self_distance;
    if (!(w->mesh->nf > 0 && def->self_distance > 0)) c->def.self_collision = 0;
    if (c->def.self_collision) {
        int rc = cb_spatial_hash_create(CELL_SCALE, &c->hash, err);
        if (rc) {
            free(c);
            return rc;
        }
        cb_spatial_hash_set_box_filter(c->hash, 1);
        c->nv = w->nv;
        c->nf = w->mesh->nf;
        for (int e = 0; w->mesh->e && e < w->mesh->ne; e++)
            c->rest_edge += cb_v3_dist(w->mesh->x[w->mesh->e[e][0]], w->mesh->x[w->mesh->e[e][1]]);
        c->rest_edge = w->mesh->e && w->mesh->ne > 0 ? c->rest_edge / w->mesh->ne : 0.0;
        c->xb = cb_calloc((size_t)w->nv, sizeof *c->xb);
        c->held = cb_calloc((size_t)w->nv, sizeof *c->held);
        c->held_normal = cb_calloc((size_t)w->nv, sizeof *c->held_normal);
        c->held_vel = cb_calloc((size_t)w->nv, sizeof *c->held_vel);
        c->stamp = cb_calloc((size_t)w->nv, sizeof *c->stamp);
        c->far_width = far_width(8, w->nv, w->mesh->nf);
        if (!c->xb || !c->held || !c->held_normal || !c->held_vel || !c->stamp) {
            cb_step_contact_free(&c);
            return CB_FAIL(err, CB_ERR_NOMEM, "step contact: out of memory");
        }
        double gcell = GRID_CELL_SCALE * c->rest_edge;
        if (gcell > 0.0 && isfinite(gcell) && (rc = cb_self_grid_create(w->nv, gcell, &c->grid, err))) {
            cb_step_contact_free(&c);
            return rc;
        }
    }
    *out = c;
    return CB_OK;
}

void cb_step_contact_free(cb_step_contact **pc)
{
    if (!pc || !*pc) return;
    cb_spatial_hash_free(&(*pc)->hash);
    free((*pc)->xb);
    free((*pc)->held);
    free((*pc)->held_normal);
    free((*pc)->held_vel);
    free((*pc)->stamp);
    free((*pc)->farbits);
    cb_self_grid_free(&(*pc)->grid);
    cb_pair_list_release(&(*pc)->gpairs);
    cb_pair_list_release(&(*pc)->cand);
    cb_pair_list_release(&(*pc)->act);
    free(*pc);
    *pc = NULL;
}

static void tri_normal(const double (*x)[3], const int *t, double n[3])
{
    double e1[3], e2[3];
    cb_v3_sub(e1, x[t[1]], x[t[0]]);
    cb_v3_sub(e2, x[t[2]], x[t[0]]);
    cb_v3_cross(n, e1, e2);
}

/* One vertex-triangle pair; returns 1 if it was closer than the distance. With `held`
 * (NULL in the first pass) a vertex with bit 1 does not move towards its collider
 * (held_normal): that share of the pair's correction goes to the others; the vertices
 * moved get bit 2, and ext (may be NULL) gets the impulse the pair then puts into the
 * cloth (the collider's through a held vertex, or a pin's) and *work (with ext) its work:
 * each held vertex's share times its collider's surface velocity there (held_vel), a
 * pinned vertex's times its scripted velocity. */
static int resolve_pair(cb_step_contact *c, cb_world *w, const double (*x0)[3], int v, const int *t,
                        unsigned char *held, double ext[3], double *work)
{
    double (*x)[3] = w->state.x, (*vel)[3] = w->state.v;
    const double dist = c->def.self_distance;
    double bary[3], cp[3];
    double d2 = cb_point_triangle_distance2(x[v], x[t[0]], x[t[1]], x[t[2]], bary, cp);
    if (!(d2 < dist * dist)) return 0;
    /* the side the vertex was on at the start of the step */
    double n0[3], p0[3] = {0, 0, 0}, r0[3];
    tri_normal(x0, t, n0);
    for (int k = 0; k < 3; k++) cb_v3_axpy(p0, bary[k], x0[t[k]]);
    cb_v3_sub(r0, x0[v], p0);
    double side = cb_v3_dot(r0, n0);
    double n[3];
    tri_normal((const double (*)[3])x, t, n);
    if (cb_v3_normalize(n) == 0.0) return 0; /* degenerate triangle now: no normal */
    if (side == 0.0) {
        double r[3];
        cb_v3_sub(r, x[v], cp);
        side = cb_v3_dot(r, n);
        if (side == 0.0) side = 1.0;
    }
    if (side < 0) cb_v3_scale(n, n, -1.0);
    /* the vertex moves along n, the triangle's along -n; a held one not into its collider */
    double wv = w->inv_mass[v], wt[3], denom;
    if (held && (held[v] & 1) && cb_v3_dot(n, c->held_normal[v]) < 0) wv = 0.0;
    denom = wv;
    for (int k = 0; k < 3; k++) {
        wt[k] = w->inv_mass[t[k]];
        if (held && (held[t[k]] & 1) && cb_v3_dot(n, c->held_normal[t[k]]) > 0) wt[k] = 0.0;
        denom += bary[k] * bary[k] * wt[k];
    }
    if (!(denom > 0)) return 0; /* everything pinned or held */
    /* position: C = (x_v - sum b_k x_k) . n - dist >= 0 */
    double r[3];
    cb_v3_sub(r, x[v], cp);
    double C = cb_v3_dot(r, n) - dist;
    if (C < 0) {
        double lambda = -C / denom;
        c->stamp[v] = c->stamp[t[0]] = c->stamp[t[1]] = c->stamp[t[2]] = c->epoch; /* moved in this pass */
        c->moves++;
        cb_v3_axpy(x[v], wv * lambda, n);
        for (int k = 0; k < 3; k++) cb_v3_axpy(x[t[k]], -wt[k] * bary[k] * lambda, n);
        if (held) { /* mark the vertices this pass moves (bit 2): the colliders look at them again */
            if (wv > 0) held[v] |= 2;
            for (int k = 0; k < 3; k++)
                if (wt[k] > 0 && bary[k] != 0.0) held[t[k]] |= 2;
        }
    }
    /* velocity: inelastic normal, Coulomb friction on the tangential part */
    double vr[3];
    cb_v3_copy(vr, vel[v]);
    for (int k = 0; k < 3; k++) cb_v3_axpy(vr, -bary[k], vel[t[k]]);
    double vn = cb_v3_dot(vr, n);
    if (vn < 0) {
        double vt[3], dv[3];
        cb_v3_copy(vt, vr);
        cb_v3_axpy(vt, -vn, n);
        double lt = cb_v3_norm(vt);
        double cut = lt > 0 ? fmin(1.0, c->def.self_friction * (-vn) / lt) : 0.0;
        cb_v3_scale(dv, n, -vn);
        cb_v3_axpy(dv, -cut, vt);
        double j[3];
        cb_v3_scale(j, dv, 1.0 / denom);
        cb_v3_axpy(vel[v], wv, j);
        for (int k = 0; k < 3; k++) cb_v3_axpy(vel[t[k]], -wt[k] * bary[k], j);
        if (ext) { /* a held (or pinned) share is external: the momentum the pair no longer conserves */
            double f = (wv > 0 ? 1.0 : 0.0);
            for (int k = 0; k < 3; k++) f -= wt[k] > 0 ? bary[k] : 0.0;
            cb_v3_axpy(ext, f, j);
            /* the share through vertex u, -j (the vertex) or +b_k j (a triangle's), does
               work at the velocity of what holds u: its collider's surface, or its pin */
            if (wv == 0.0) *work -= cb_v3_dot(j, held && (held[v] & 1) ? c->held_vel[v] : vel[v]);
            for (int k = 0; k < 3; k++)
                if (wt[k] == 0.0)
                    *work += bary[k] * cb_v3_dot(j, held && (held[t[k]] & 1) ? c->held_vel[t[k]] : vel[t[k]]);
        }
    }
    return 1;
}

/* The spread of the displacements x - ref over the vertices: the largest over the
 * coordinates of half the range (max - min) of x[v][k] - ref[v][k], so a common
 * translation counts 0. maxabs (if not NULL): the largest |x[v][k]|. */
static double half_spread(const double (*x)[3], const double (*ref)[3], int nv, double *maxabs)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY}, big = 0.0;
    for (int v = 0; v < nv; v++)
        for (int k = 0; k < 3; k++) {
            double d = x[v][k] - ref[v][k], a = fabs(x[v][k]);
            lo[k] = d < lo[k] ? d : lo[k];
            hi[k] = d > hi[k] ? d : hi[k];
            big = a > big ? a : big;
        }
    if (maxabs) *maxabs = big;
    double spread = 0.0;
    for (int k = 0; k < 3; k++) spread = fmax(spread, 0.5 * (hi[k] - lo[k]));
    return spread;
}

int cb_step_contact_candidates(cb_step_contact *c, const cb_mesh *m, const double (*x)[3], const double (*x0)[3],
                               const cb_pair_list **pairs, cb_error *err)
{
    if (!c || !m || !x || !x0 || !pairs) return CB_FAIL(err, CB_ERR_INPUT, "cb_step_contact_candidates: NULL argument");
    *pairs = NULL;
    if (!c->def.self_collision) return CB_FAIL(err, CB_ERR_INPUT, "step contact: self collision is off");
    if (m->nv != c->nv) return CB_FAIL(err, CB_ERR_INPUT, "step contact: %d vertices (created for %d)", m->nv, c->nv);
    const int nv = m->nv;
    c->queries++;
    /* spread of the displacement since the build: per coordinate, half the range of
     * x - xb over the vertices (a common translation removed), and the largest
     * coordinate */
    double maxabs = 0.0;
    double moved = c->valid ? half_spread(x, (const double (*)[3])c->xb, nv, &maxabs) : 0.0;
    /* A pair with box distance <= self_distance (1 + 1e-6) now has a box distance in
     * each coordinate (Chebyshev) <= that at the build plus the largest change of a
     * coordinate difference between the vertex and a vertex of the triangle (each box
     * bound is a coordinate of one of them), at most hi - lo = 2 moved; so it is in the
     * cache while 2 moved < delta, however far the cloth moved as a whole. The
     * tolerance covers the rounding of the differences and comparisons. */
    if (!c->valid || !(2.0 * moved + 64 * DBL_EPSILON * maxabs < c->delta)) {
        double step = half_spread(x, x0, nv, NULL);
        double cell = c->builds ? c->cell / CELL_SCALE : INFINITY;
        double delta = fmax(CACHE_STEPS * step, CACHE_MIN * c->def.self_distance);
        if (c->def.self_cache == 0 || !(delta <= cell)) delta = 0.0;
        /* no cache: the grid's answer is filtered with the box test as it is found */
        int rc = c->grid ? cb_self_grid_query(c->grid, m, x, sqrt(c->reject2) + delta, delta > 0.0 ? -1.0 : c->reject2,
                                              &c->gpairs, err)
                         : 0;
        if (rc < 0) return rc;
        if (rc) c->cell = CELL_SCALE * c->rest_edge; /* the mean edge times CELL_SCALE, as the cache reads it */
        if (rc == 0) { /* the hash: the same pairs */
            rc = cb_spatial_hash_query(c->hash, m, x, sqrt(c->reject2) + delta, err);
            if (rc) return rc;
            c->cell = cb_spatial_hash_cell_size(c->hash);
        }
        c->grid_builds += rc;
        const cb_pair_list *pl = rc ? &c->gpairs : cb_spatial_hash_pairs(c->hash);
        c->built = pl;
        if (cb_pair_list_reserve(&c->act, pl->n) || (delta > 0.0 && cb_pair_list_reserve(&c->cand, pl->n)))
            return CB_FAIL(err, CB_ERR_NOMEM, "step contact: out of memory for %ld candidates", pl->n);
        c->delta = delta;
        c->valid = delta > 0.0;
        c->builds++;
        if (c->valid) { /* keep the candidates and the positions they are valid around */
            memcpy(c->cand.p, pl->p, (size_t)pl->n * sizeof *pl->p);
            c->cand.n = pl->n;
            memcpy(c->xb, x, (size_t)nv * sizeof *x);
        }
    }
    /* this step's pairs: the candidates passing the box test now (in their order);
     * a grid query without cache has applied it already */
    if (!c->valid && c->built == &c->gpairs) { /* built by this call: no cache, no build is kept */
        *pairs = &c->gpairs;
        return CB_OK;
    }
    const cb_pair_list *src = c->valid ? &c->cand : c->built;
    const int (*f)[3] = (const int (*)[3])m->f;
    const int (*cp)[2] = (const int (*)[2])src->p;
    int (*ap)[2] = c->act.p;
    long n = 0;
    for (long i = 0; i < src->n; i++) {
        int v = cp[i][0];
        const int *t = f[cp[i][1]];
        ap[n][0] = v;
        ap[n][1] = cp[i][1];
        n += cb_self_grid_box_dist2(x[v], x[t[0]], x[t[1]], x[t[2]]) <= c->reject2;
    }
    c->act.n = n;
    *pairs = &c->act;
    return CB_OK;
}

int cb_step_contact_set_width(cb_step_contact *c, int width)
{
    if (!c || !c->def.self_collision) return 1;
    c->far_width = width <= 0 ? 0 : far_width(width, c->nv, c->nf);
    return c->grid ? cb_self_grid_set_width(c->grid, width > 0 ? width : 1) : (width > 0 ? c->far_width : 1);
}

long cb_step_contact_retaken(const cb_step_contact *c) { return c ? c->retaken : 0; }

long cb_step_contact_grid_builds(const cb_step_contact *c) { return c ? c->grid_builds : 0; }

void cb_step_contact_cache_stats(const cb_step_contact *c, long *builds, long *queries)
{
    if (builds) *builds = c ? c->builds : 0;
    if (queries) *queries = c ? c->queries : 0;
}

/* Gauss-Seidel over the pairs, up to self_iterations passes; the pairs closer than the
 * distance in the first pass. A pair is first rejected when a lower bound on its
 * distance exceeds the thickness (cb_step_contact_far: exact, with a relative margin far
 * above round-off; the pairs passed the box test when they were collected, and
 * repeating that rejected almost nothing). The bound is taken for all the pairs at the
 * start of each pass, eight per vector (cb_step_contact_far_bits, bit for bit the single
 * pair's), and used for a pair none of whose vertices an earlier pair of the pass has
 * moved (the stamps): its positions are then those at the start, so the bound is the
 * one the pair would get alone; for the others it is taken again from the positions
 * now. c->farbits has room for the pairs (cb_step_contact_apply). */
static int self_passes(cb_step_contact *c, cb_world *w, const double (*x0)[3], const cb_pair_list *pl,
                       unsigned char *held, double ext[3], double *work)
{
    const int (*f)[3] = (const int (*)[3])w->mesh->f;
    const double (*x)[3] = (const double (*)[3])w->state.x;
    const double dist2 = c->def.self_distance * c->def.self_distance;
    const unsigned char *bits = c->farbits;
    int n = 0;
    for (int it = 0; it < c->def.self_iterations; it++) {
        if (++c->epoch == 0) { /* the stamps wrapped around: start them again */
            memset(c->stamp, 0, (size_t)c->nv * sizeof *c->stamp);
            c->epoch = 1;
        }
        c->moves = 0;
        const int upfront = c->far_width > 0;
        if (upfront) cb_step_contact_far_bits(c->far_width, x, f, (const int (*)[2])pl->p, pl->n, dist2, c->farbits);
        const unsigned *st = c->stamp, ep = c->epoch;
        int active = 0;
        for (long p = 0; p < pl->n; p++) {
            const int v = pl->p[p][0], *t = f[pl->p[p][1]];
            int far;
            if (upfront && (c->moves == 0 || (st[v] != ep && st[t[0]] != ep && st[t[1]] != ep && st[t[2]] != ep))) {
                far = (bits[p >> 3] >> (p & 7)) & 1;
            } else {
                far = cb_step_contact_far(x[v], x[t[0]], x[t[1]], x[t[2]], dist2);
                c->retaken += upfront;
            }
            if (!far) active += resolve_pair(c, w, x0, v, t, held, ext, work);
        }
        if (it == 0) n = active;
        if (!active) break;
    }
    return n;
}

int cb_step_contact_apply(cb_step_contact *c, cb_world *w, const double (*x0)[3], double t1,
                          double impulse[3], double *work, int *contacts, cb_error *err)
{
    if (!c || !w || !x0 || !impulse || !work || !contacts)
        return CB_FAIL(err, CB_ERR_INPUT, "cb_step_contact_apply: NULL argument");
    int n = 0;
    const cb_pair_list *pl = NULL;
    if (c->def.self_collision) {
        int rc = cb_step_contact_candidates(c, w->mesh, (const double (*)[3])w->state.x, x0, &pl, err);
        if (rc) {
            cb_error_prefix(err, "self collision: ");
            return rc;
        }
        if (pl->n > c->farcap) { /* the far bits of the pairs (self_passes) */
            free(c->farbits);
            c->farbits = cb_malloc((size_t)(pl->n + 7) / 8);
            c->farcap = c->farbits ? pl->n : 0;
            if (!c->farbits) return CB_FAIL(err, CB_ERR_NOMEM, "self collision: out of memory for %ld pairs", pl->n);
        }
        n += self_passes(c, w, x0, pl, NULL, NULL, NULL);
    }
    if (!w->ncolliders) {
        *contacts = n;
        return CB_OK;
    }
    int held = 0;
    for (int i = 0; i < w->nv; i++) {
        int hit = cb_world_resolve_collider_contact(w, i, t1, c->def.collider_offset, w->state.x[i], w->state.v[i],
                                                    impulse, work);
        n += hit;
        held += hit;
        if (!pl) continue;
        c->held[i] = (unsigned char)hit;
        if (hit) {
            int which = -1;
            double cp[3];
            cb_world_collider_distance(w, t1, w->state.x[i], &which, c->held_normal[i], cp);
            if (which >= 0) cb_collider_velocity(&w->colliders[which], t1, cp, c->held_vel[i]);
        }
    }
    /* The collider pass puts every vertex within the offset on it: a layer pressed into a
     * collider by the one above comes back through it (both on the offset surface, or the
     * lower one above). The pairs again, the vertices on a collider moving only away from
     * it, then the colliders once more for anything those pairs pushed in. */
    if (pl && held && pl->n) {
        self_passes(c, w, x0, pl, c->held, impulse, work);
        for (int i = 0; i < w->nv; i++)
            if (c->held[i] & 2)
                cb_world_resolve_collider_contact(w, i, t1, c->def.collider_offset, w->state.x[i], w->state.v[i],
                                                  impulse, work);
    }
    *contacts = n;
    return CB_OK;
}

int cb_step_contact_self_active(const cb_step_contact *c) { return c && c->def.self_collision; }
