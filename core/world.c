/* core/world.c — builds the world from a scene (world.h). */
#include "core/world.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/tetmesh.h"
#include "core/vec3.h"

void cb_world_free(cb_world **wp)
{
    if (!wp || !*wp) return;
    cb_world *w = *wp;
    cb_model_release(&w->model);
    cb_mesh_free(&w->mesh);
    free(w->state.x);
    free(w->state.v);
    free(w->mass);
    free(w->inv_mass);
    free(w->pinned);
    free(w->pin_origin);
    free(w->pin_velocity);
    free(w->pin_omega);
    free(w->pin_pivot);
    free(w->tets);
    free(w);
    *wp = NULL;
}

static void pin_vertex(cb_world *w, int i, const cb_pin_def *p)
{
    w->pinned[i] = 1;
    cb_v3_copy(w->pin_velocity[i], p->velocity);
    cb_v3_copy(w->pin_omega[i], p->angular_velocity);
    cb_v3_copy(w->pin_pivot[i], p->pivot);
}

/* The pin p of a cloth (or piece) whose vertices are off .. off + n - 1, a grid of
 * nx x ny vertices when nx > 0: indices and grid selectors are the piece's own. */
static int apply_pin_def(cb_world *w, const cb_pin_def *p, int off, int n, int nx, int ny, cb_error *err)
{
    const cb_mesh *m = w->mesh;
    if (p->kind != CB_PIN_INDICES && p->kind != CB_PIN_BOX && nx == 0)
        return CB_FAIL(err, CB_ERR_INPUT,
                       "%s: pins: grid selectors (corners, top, ...) need a grid cloth; "
                       "use indices or box with a mesh", p->where);
    switch (p->kind) {
    case CB_PIN_INDICES:
        for (int k = 0; k < p->nindices; k++) {
            if (p->indices[k] < 0 || p->indices[k] >= n)
                return CB_FAIL(err, CB_ERR_INPUT, "%s: pins: vertex index %d out of range [0, %d)",
                               p->where, p->indices[k], n);
            pin_vertex(w, off + p->indices[k], p);
        }
        break;
    case CB_PIN_CORNERS:
        pin_vertex(w, off, p);
        pin_vertex(w, off + nx - 1, p);
        pin_vertex(w, off + nx * (ny - 1), p);
        pin_vertex(w, off + nx * ny - 1, p);
        break;
    case CB_PIN_CORNERS_TOP:
        pin_vertex(w, off + nx * (ny - 1), p);
        pin_vertex(w, off + nx * ny - 1, p);
        break;
    case CB_PIN_CORNERS_BOTTOM:
        pin_vertex(w, off, p);
        pin_vertex(w, off + nx - 1, p);
        break;
    case CB_PIN_SIDE_TOP:
        for (int i = 0; i < nx; i++) pin_vertex(w, off + i + nx * (ny - 1), p);
        break;
    case CB_PIN_SIDE_BOTTOM:
        for (int i = 0; i < nx; i++) pin_vertex(w, off + i, p);
        break;
    case CB_PIN_SIDE_LEFT:
        for (int j = 0; j < ny; j++) pin_vertex(w, off + nx * j, p);
        break;
    case CB_PIN_SIDE_RIGHT:
        for (int j = 0; j < ny; j++) pin_vertex(w, off + nx - 1 + nx * j, p);
        break;
    case CB_PIN_BOX: {
        int hit = 0;
        for (int i = off; i < off + n; i++) {
            const double *x = m->x[i];
            int in = 1;
            for (int k = 0; k < 3; k++) in &= x[k] >= p->box_min[k] && x[k] <= p->box_max[k];
            if (in) { pin_vertex(w, i, p); hit++; }
        }
        if (!hit)
            return CB_FAIL(err, CB_ERR_INPUT, "%s: pins: the box selects no vertex", p->where);
        break;
    }
    }
    return CB_OK;
}

/* The mesh of one piece (grid or OBJ), moved by its translation. */
static int piece_mesh(const cb_scene *s, int k, cb_mesh **out, cb_error *err)
{
    const cb_cloth_piece *pc = &s->cloth.pieces[k];
    int rc = pc->use_grid ? cb_mesh_grid(&pc->grid, out, err) : cb_mesh_read_obj(pc->mesh_path, out, err);
    if (rc) {
        cb_error_prefix(err, "%s: cloth.pieces.%d: ", s->path, k);
        return rc;
    }
    for (int i = 0; i < (*out)->nv; i++) cb_v3_add((*out)->x[i], (*out)->x[i], pc->translation);
    return CB_OK;
}

/* cloth.pieces: every piece's mesh, one after the other, as one mesh (vertex and
 * triangle indices shifted by the vertices before). (*ranges)[k] is piece k's first
 * vertex, (*ranges)[npieces] the total; the grids' sizes go to nx, ny (0: a mesh). */
static int merge_pieces(cb_world *w, const cb_scene *s, int **ranges, int *nx, int *ny, cb_error *err)
{
    int np = s->cloth.npieces, rc = CB_OK;
    cb_mesh **pm = cb_calloc((size_t)np, sizeof *pm);
    *ranges = cb_calloc((size_t)np + 1, sizeof **ranges);
    if (!pm || !*ranges) {
        free(pm);
        return CB_FAIL(err, CB_ERR_NOMEM, "world: out of memory for %d pieces", np);
    }
    long nv = 0, nf = 0, ns = 0;
    for (int k = 0; k < np && !rc; k++) {
        rc = piece_mesh(s, k, &pm[k], err);
        if (rc) break;
        nx[k] = pm[k]->grid_nx;
        ny[k] = pm[k]->grid_ny;
        (*ranges)[k] = (int)nv;
        nv += pm[k]->nv;
        nf += pm[k]->nf;
        ns += pm[k]->ns;
        if (nv > 0x7fffffff || nf > 0x7fffffff)
            rc = CB_FAIL(err, CB_ERR_INPUT, "%s: cloth.pieces: more than 2^31 vertices or triangles", s->path);
    }
    double (*x)[3] = NULL;
    int (*f)[3] = NULL, (*seg)[2] = NULL;
    if (!rc) {
        (*ranges)[np] = (int)nv;
        x = cb_calloc((size_t)nv, sizeof *x);
        f = cb_calloc((size_t)(nf ? nf : 1), sizeof *f);
        seg = cb_calloc((size_t)(ns ? ns : 1), sizeof *seg);
        if (!x || !f || !seg) rc = CB_FAIL(err, CB_ERR_NOMEM, "world: out of memory for %ld vertices", nv);
    }
    if (!rc) {
        long fv = 0, ff = 0, fs = 0;
        for (int k = 0; k < np; k++) {
            const cb_mesh *m = pm[k];
            memcpy(x + fv, m->x, (size_t)m->nv * sizeof *x);
            for (int t = 0; t < m->nf; t++)
                for (int q = 0; q < 3; q++) f[ff + t][q] = m->f[t][q] + (int)fv;
            for (int t = 0; t < m->ns; t++)
                for (int q = 0; q < 2; q++) seg[fs + t][q] = m->s[t][q] + (int)fv;
            fv += m->nv;
            ff += m->nf;
            fs += m->ns;
        }
        rc = cb_mesh_from_arrays_lines((int)nv, (const double (*)[3])x, (int)nf, (const int (*)[3])f, (int)ns,
                                       (const int (*)[2])seg, "cloth.pieces", NULL, &w->mesh, err);
    }
    for (int k = 0; k < np; k++) cb_mesh_free(&pm[k]);
    free(pm);
    free(x);
    free(f);
    free(seg);
    return rc;
}

/* cloth.tets: the tet mesh (box or TetGen) -> w->tets, and the mesh made of its
 * boundary surface plus its interior edges as springs */
static int load_tets(cb_world *w, const cb_scene *s, cb_error *err)
{
    cb_tetmesh *tm = NULL;
    int rc;
    if (s->cloth.use_tets == 1) {
        rc = cb_tetmesh_box(&s->cloth.tet_box, &tm, err);
        if (rc) cb_error_prefix(err, "%s: cloth.tets.box: ", s->path);
    } else {
        rc = cb_tetmesh_read_tetgen(s->cloth.tets_path, &tm, err);
    }
    if (!rc) rc = cb_tetmesh_to_mesh(tm, s->cloth.use_tets == 1 ? "tet box" : s->cloth.tets_path, &w->mesh, err);
    if (!rc) {
        w->tets = cb_calloc((size_t)tm->nt, sizeof *w->tets);
        if (!w->tets) rc = CB_FAIL(err, CB_ERR_NOMEM, "world: out of memory for %d tets", tm->nt);
        else {
            memcpy(w->tets, tm->t, (size_t)tm->nt * sizeof *w->tets);
            w->ntets = tm->nt;
        }
    }
    cb_tetmesh_free(&tm);
    return rc;
}

/* What the initial state and the pins need of the cloth, or of each of its pieces:
 * its vertices off .. off + n - 1, its grid (nx 0: none), pins and initial motion. */
typedef struct part {
    int off, n, nx, ny;
    const cb_pin_def *pins;
    int npins;
    const double *velocity, *omega;
    double stretch;
} part;

static int make_parts(const cb_world *w, const cb_scene *s, const int *ranges, const int *gx, const int *gy,
                      part *parts)
{
    const cb_cloth_def *cl = &s->cloth;
    if (!cl->npieces) {
        parts[0] = (part){0, w->mesh->nv, w->mesh->grid_nx, w->mesh->grid_ny, cl->pins, cl->npins, cl->velocity,
                          cl->angular_velocity, cl->initial_stretch};
        return CB_OK;
    }
    for (int k = 0; k < cl->npieces; k++) {
        const cb_cloth_piece *pc = &cl->pieces[k];
        parts[k] = (part){ranges[k], ranges[k + 1] - ranges[k], gx[k], gy[k], pc->pins, pc->npins, pc->velocity,
                          pc->angular_velocity, 1.0};
    }
    return CB_OK;
}

int cb_world_create(const cb_scene *s, cb_world **out, cb_error *err)
{
    if (!s || !out) return CB_FAIL(err, CB_ERR_INPUT, "cb_world_create: NULL argument");
    *out = NULL;
    cb_world *w = cb_calloc(1, sizeof *w);
    if (!w) return CB_FAIL(err, CB_ERR_NOMEM, "world: out of memory");
    w->scene = s;
    int rc, np = s->cloth.npieces > 0 ? s->cloth.npieces : 1, *ranges = NULL;
    part *parts = cb_calloc((size_t)np, sizeof *parts);
    int *gx = cb_calloc((size_t)np, sizeof *gx), *gy = cb_calloc((size_t)np, sizeof *gy);
    if (!parts || !gx || !gy) {
        rc = CB_FAIL(err, CB_ERR_NOMEM, "world: out of memory");
    } else if (s->cloth.npieces) {
        rc = merge_pieces(w, s, &ranges, gx, gy, err);
    } else if (s->cloth.use_tets) {
        rc = load_tets(w, s, err);
    } else if (s->cloth.use_grid) {
        rc = cb_mesh_grid(&s->cloth.grid, &w->mesh, err);
        if (rc) cb_error_prefix(err, "%s: cloth.grid: ", s->path);
    } else {
        rc = cb_mesh_read_obj(s->cloth.mesh_path, &w->mesh, err);
    }
    if (!rc) rc = make_parts(w, s, ranges, gx, gy, parts);
    free(ranges);
    free(gx);
    free(gy);
    if (rc) {
        free(parts);
        cb_world_free(&w);
        return rc;
    }
    int nv = w->nv = w->mesh->nv;
    w->state.x = cb_calloc((size_t)nv, sizeof *w->state.x);
    w->state.v = cb_calloc((size_t)nv, sizeof *w->state.v);
    w->mass = cb_calloc((size_t)nv, sizeof *w->mass);
    w->inv_mass = cb_calloc((size_t)nv, sizeof *w->inv_mass);
    w->pinned = cb_calloc((size_t)nv, 1);
    w->pin_origin = cb_calloc((size_t)nv, sizeof *w->pin_origin);
    w->pin_velocity = cb_calloc((size_t)nv, sizeof *w->pin_velocity);
    w->pin_omega = cb_calloc((size_t)nv, sizeof *w->pin_omega);
    w->pin_pivot = cb_calloc((size_t)nv, sizeof *w->pin_pivot);
    if (!w->state.x || !w->state.v || !w->mass || !w->inv_mass || !w->pinned || !w->pin_origin ||
        !w->pin_velocity || !w->pin_omega || !w->pin_pivot) {
        free(parts);
        cb_world_free(&w);
        return CB_FAIL(err, CB_ERR_NOMEM, "world: out of memory for %d vertices", nv);
    }
    rc = cb_model_init(&w->model, w->mesh, s->cloth.stretch, s->cloth.bend, s->cloth.thickness,
                       s->cloth.density, err);
    if (rc) {
        cb_error_prefix(err, "%s: ", s->path);
        free(parts);
        cb_world_free(&w);
        return rc;
    }
    if (w->ntets) {
        cb_tetmesh body = { .nv = nv, .nt = w->ntets, .x = w->mesh->x, .t = w->tets };
        cb_tetmesh_lumped_masses(&body, s->cloth.volume_density, w->mass);
    } else {
        cb_mesh_lumped_masses(w->mesh, s->cloth.density, s->cloth.line_density, w->mass);
    }
    for (int p = 0; p < np && !rc; p++)
        for (int k = 0; k < parts[p].npins && !rc; k++)
            rc = apply_pin_def(w, &parts[p].pins[k], parts[p].off, parts[p].n, parts[p].nx, parts[p].ny, err);
    if (rc) {
        free(parts);
        cb_world_free(&w);
        return rc;
    }
    /* initial state of each part: rest positions (scaled about its centroid by
     * initial_stretch), uniform velocity plus spin about its centroid */
    for (int p = 0; p < np; p++) {
        const part *pt = &parts[p];
        double c[3] = {0, 0, 0}, mt = 0;
        for (int i = pt->off; i < pt->off + pt->n; i++) {
            cb_v3_axpy(c, w->mass[i], w->mesh->x[i]);
            mt += w->mass[i];
        }
        cb_v3_scale(c, c, 1.0 / mt);
        for (int i = pt->off; i < pt->off + pt->n; i++) {
            double r[3], wr[3];
            cb_v3_sub(r, w->mesh->x[i], c);
            for (int k = 0; k < 3; k++) w->state.x[i][k] = c[k] + pt->stretch * r[k];
            cb_v3_cross(wr, pt->omega, r);
            cb_v3_add(w->state.v[i], pt->velocity, wr);
        }
    }
    free(parts);
    for (int i = 0; i < nv; i++) {
        if (w->pinned[i]) {
            w->npinned++;
            w->inv_mass[i] = 0.0;
            cb_v3_copy(w->pin_origin[i], w->state.x[i]);
            cb_world_pin_velocity(w, i, 0.0, w->state.v[i]);
        } else {
            w->inv_mass[i] = 1.0 / w->mass[i];
        }
    }
    cb_v3_copy(w->gravity, s->gravity);
    w->thickness = s->cloth.thickness;
    for (int c = 0; c < s->ncolliders; c++)
        if (s->colliders[c].type == CB_COLLIDER_MESH && !s->colliders[c].mesh) {
            cb_world_free(&w);
            return CB_FAIL(err, CB_ERR_INPUT, "%s: colliders.%d: the mesh collider's geometry is not built: "
                           "load the scene with cb_scene_load (contact/colliders.h), not only parse it",
                           s->path, c);
        }
    w->ncolliders = s->ncolliders;
    w->colliders = s->colliders;
    w->state.t = 0.0;
    *out = w;
    return CB_OK;
}

/* r = R(omega t)(pin_origin - pin_pivot), Rodrigues' formula. */
static void pin_arm(const cb_world *w, int i, double t, double r[3])
{
    const double *om = w->pin_omega[i];
    double r0[3], n = cb_v3_norm(om);
    cb_v3_sub(r0, w->pin_origin[i], w->pin_pivot[i]);
    double k[3], kxr[3], c = cos(n * t), s = sin(n * t);
    cb_v3_scale(k, om, 1.0 / n);
    cb_v3_cross(kxr, k, r0);
    double kr = cb_v3_dot(k, r0);
    for (int q = 0; q < 3; q++) r[q] = r0[q] * c + kxr[q] * s + k[q] * kr * (1.0 - c);
}

static int pin_rotates(const cb_world *w, int i)
{
    const double *om = w->pin_omega[i];
    return om[0] != 0.0 || om[1] != 0.0 || om[2] != 0.0;
}

void cb_world_pin_target(const cb_world *w, int i, double t, double out[3])
{
    if (!pin_rotates(w, i)) {
        for (int k = 0; k < 3; k++) out[k] = w->pin_origin[i][k] + w->pin_velocity[i][k] * t;
        return;
    }
    double r[3];
    pin_arm(w, i, t, r);
    for (int k = 0; k < 3; k++) out[k] = w->pin_pivot[i][k] + r[k] + w->pin_velocity[i][k] * t;
}

void cb_world_pin_velocity(const cb_world *w, int i, double t, double out[3])
{
    cb_v3_copy(out, w->pin_velocity[i]);
    if (!pin_rotates(w, i)) return;
    double r[3], wr[3];
    pin_arm(w, i, t, r);
    cb_v3_cross(wr, w->pin_omega[i], r);
    cb_v3_add(out, out, wr);
}

void cb_world_apply_pins(cb_world *w, double t)
{
    if (!w->npinned) return;
    for (int i = 0; i < w->nv; i++)
        if (w->pinned[i]) {
            cb_world_pin_target(w, i, t, w->state.x[i]);
            cb_world_pin_velocity(w, i, t, w->state.v[i]);
        }
}

int cb_world_stable_step(const cb_world *w, double safety, double *h, cb_error *err)
{
    const cb_mesh *m = w->mesh;
    double *stiff = cb_calloc((size_t)w->nv, sizeof *stiff);
    if (!stiff) return CB_FAIL(err, CB_ERR_NOMEM, "stability bound: out of memory");
    for (int e = 0; e < m->ne; e++) {
        stiff[m->e[e][0]] += 2.0 * w->model.k_stretch;
        stiff[m->e[e][1]] += 2.0 * w->model.k_stretch;
    }
    const double (*x)[3] = (const double (*)[3])m->x;
    for (int i = 0; i < m->nh; i++) {
        const int *hg = m->h[i];
        double g[4][3];
        cb_dihedral_angle(x[hg[0]], x[hg[1]], x[hg[2]], x[hg[3]], g);
        for (int k = 0; k < 4; k++)
            stiff[hg[k]] += 8.0 * w->model.k_bend * w->model.hinge_weight[i] * cb_v3_norm2(g[k]);
    }
    double wmax2 = 0.0;
    for (int i = 0; i < w->nv; i++)
        if (w->inv_mass[i] > 0) wmax2 = fmax(wmax2, stiff[i] * w->inv_mass[i]);
    free(stiff);
    *h = wmax2 > 0 ? safety * 2.0 / sqrt(wmax2) : INFINITY;
    return CB_OK;
}
