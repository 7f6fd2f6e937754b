/* contact/colliders.c — collider queries (analytic shapes and triangle meshes), the
 * world's collider distance and contact resolution, and the scene loader that builds
 * mesh colliders' geometry (colliders.h). A moving analytic collider's pose at time t
 * is its t = 0 pose translated by velocity * t, so a query at time t is a query of the
 * t = 0 shape at x - velocity t. */
#include "contact/colliders.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/trimesh_collider.h"
#include "core/vec3.h"

static double round_query(const double c[3], double r, const double x[3], double n[3], double cp[3])
{
    double d[3];
    cb_v3_sub(d, x, c);
    double l = cb_v3_norm(d);
    if (l > 0) cb_v3_scale(n, d, 1.0 / l);
    else cb_v3_set(n, 0, 0, 1);
    for (int k = 0; k < 3; k++) cp[k] = c[k] + r * n[k];
    return l - r;
}

static double box_query(const cb_collider *c, const double x[3], double n[3], double cp[3])
{
    double d[3], q[3];
    cb_v3_sub(d, x, c->center);
    for (int k = 0; k < 3; k++) q[k] = cb_v3_dot(d, c->axes[k]);
    double out[3], ol2 = 0;
    for (int k = 0; k < 3; k++) {
        double o = fabs(q[k]) - c->half[k];
        out[k] = o > 0 ? (q[k] > 0 ? o : -o) : 0.0;
        ol2 += out[k] * out[k];
    }
    double ql[3], nl[3], dist;
    if (ol2 > 0) { /* outside: closest point is q clamped to the box */
        dist = sqrt(ol2);
        for (int k = 0; k < 3; k++) {
            ql[k] = q[k] - out[k];
            nl[k] = out[k] / dist;
        }
    } else { /* inside (or on the surface): nearest face */
        int best = 0;
        double bd = -INFINITY;
        for (int k = 0; k < 3; k++) {
            double o = fabs(q[k]) - c->half[k];
            if (o > bd) { bd = o; best = k; }
        }
        dist = bd;
        cb_v3_copy(ql, q);
        cb_v3_zero(nl);
        double s = q[best] >= 0 ? 1.0 : -1.0;
        ql[best] = s * c->half[best];
        nl[best] = s;
    }
    cb_v3_copy(cp, c->center);
    cb_v3_zero(n);
    for (int k = 0; k < 3; k++) {
        cb_v3_axpy(cp, ql[k], c->axes[k]);
        cb_v3_axpy(n, nl[k], c->axes[k]);
    }
    return dist;
}

double cb_collider_query(const cb_collider *c, double t, const double x_in[3], double normal[3],
                         double closest[3])
{
    double x[3], n[3], cp[3], dist;
    for (int k = 0; k < 3; k++) x[k] = x_in[k] - c->velocity[k] * t;
    switch (c->type) {
    case CB_COLLIDER_PLANE: {
        dist = cb_collider_plane_height(c, x);
        cb_v3_copy(n, c->normal);
        for (int k = 0; k < 3; k++) cp[k] = x[k] - dist * n[k];
        break;
    }
    case CB_COLLIDER_SPHERE:
        dist = round_query(c->center, c->radius, x, n, cp);
        break;
    case CB_COLLIDER_BOX:
        dist = box_query(c, x, n, cp);
        break;
    case CB_COLLIDER_CAPSULE: {
        double ab[3], ap[3], foot[3];
        cb_v3_sub(ab, c->p1, c->p0);
        cb_v3_sub(ap, x, c->p0);
        double l2 = cb_v3_norm2(ab);
        double s = l2 > 0 ? cb_v3_dot(ap, ab) / l2 : 0.0;
        s = s < 0 ? 0 : (s > 1 ? 1 : s);
        cb_v3_copy(foot, c->p0);
        cb_v3_axpy(foot, s, ab);
        dist = round_query(foot, c->radius, x, n, cp);
        break;
    }
    case CB_COLLIDER_MESH:
        /* the mesh collider handles its own motion: pass the original point and time */
        if (c->mesh)
            return cb_trimesh_collider_query(c->mesh, t, x_in, normal, closest);
        if (normal) cb_v3_set(normal, 0, 0, 1);
        if (closest) cb_v3_copy(closest, x_in);
        return INFINITY;
    default:
        return INFINITY;
    }
    if (normal) cb_v3_copy(normal, n);
    if (closest)
        for (int k = 0; k < 3; k++) closest[k] = cp[k] + c->velocity[k] * t;
    return dist;
}

void cb_collider_velocity(const cb_collider *c, double t, const double x[3], double v[3])
{
    if (c->type == CB_COLLIDER_MESH && c->mesh) { /* rotating or keyframed: depends on t, x */
        cb_trimesh_collider_velocity(c->mesh, t, x, v);
        return;
    }
    cb_v3_copy(v, c->velocity);
    const double *om = c->angular_velocity;
    if (om[0] == 0.0 && om[1] == 0.0 && om[2] == 0.0) return;
    /* spinning in place about an axis through centre (sphere, plane) or p0 (capsule),
     * which move with the collider: v + omega x (x - c(t)) */
    const double *c0 = c->type == CB_COLLIDER_CAPSULE ? c->p0 : c->center;
    double r[3], wr[3];
    for (int k = 0; k < 3; k++) r[k] = x[k] - (c0[k] + c->velocity[k] * t);
    cb_v3_cross(wr, om, r);
    cb_v3_add(v, v, wr);
}

double cb_world_collider_distance(const cb_world *w, double t, const double x[3], int *which,
                                  double normal[3], double closest[3])
{
    double best = INFINITY;
    if (which) *which = -1;
    for (int c = 0; c < w->ncolliders; c++) {
        double n[3], cp[3];
        double d = cb_collider_query(&w->colliders[c], t, x, n, cp);
        if (d < best) {
            best = d;
            if (which) *which = c;
            if (normal) cb_v3_copy(normal, n);
            if (closest) cb_v3_copy(closest, cp);
        }
    }
    return best;
}

int cb_world_resolve_collider_contact(const cb_world *w, int i, double t, double offset,
                                      double x[3], double v[3], double impulse[3], double *work)
{
    if (w->inv_mass[i] == 0.0) return 0;
    int hit = 0;
    for (int c = 0; c < w->ncolliders; c++) {
        const cb_collider *col = &w->colliders[c];
        double n[3];
        double d = cb_collider_query(col, t, x, n, NULL);
        if (!(d < offset)) continue;
        hit = 1;
        cb_v3_axpy(x, offset - d, n);
        double vc[3], vr[3], vt[3], v_old[3];
        cb_v3_copy(v_old, v);
        cb_collider_velocity(col, t, x, vc);
        cb_v3_sub(vr, v, vc);
        double vn = cb_v3_dot(vr, n);
        if (vn < 0) {
            cb_v3_copy(vt, vr);
            cb_v3_axpy(vt, -vn, n);
            double dvn = -(1.0 + col->restitution) * vn; /* > 0 */
            double lt = cb_v3_norm(vt);
            double scale = lt > 0 ? fmax(0.0, 1.0 - col->friction * dvn / lt) : 0.0;
            for (int k = 0; k < 3; k++) v[k] = vc[k] - col->restitution * vn * n[k] + scale * vt[k];
        }
        double j[3];
        for (int k = 0; k < 3; k++) j[k] = w->mass[i] * (v[k] - v_old[k]);
        if (impulse) cb_v3_add(impulse, impulse, j);
        if (work) *work += cb_v3_dot(j, vc);
    }
    return hit;
}

static void free_trimesh(struct cb_trimesh_collider **m) { cb_trimesh_collider_free(m); }

int cb_scene_load_colliders(cb_scene *s, cb_error *err)
{
    if (!s) return CB_FAIL(err, CB_ERR_INPUT, "cb_scene_load_colliders: no scene");
    for (int i = 0; i < s->ncolliders; i++) {
        cb_collider *col = &s->colliders[i];
        if (col->type != CB_COLLIDER_MESH || col->mesh) continue;
        if (!col->mesh_path)
            return CB_FAIL(err, CB_ERR_INPUT, "%s: colliders.%d: a mesh collider without a file", s->path, i);
        int rc = cb_trimesh_collider_load(col->mesh_path, &col->mesh_motion, &col->mesh, err);
        if (rc) {
            if (col->mesh_where) cb_error_prefix(err, "%s: ", col->mesh_where);
            return rc;
        }
        col->mesh_free = free_trimesh;
    }
    return CB_OK;
}

int cb_scene_load(const char *path, const char *const *sets, int nsets, cb_scene **out, cb_error *err)
{
    int rc = cb_scene_parse(path, sets, nsets, out, err);
    if (!rc && (rc = cb_scene_load_colliders(*out, err))) cb_scene_free(out);
    return rc;
}

int cb_scene_load_string(const char *text, const char *label, const char *dir,
                         const char *const *sets, int nsets, cb_scene **out, cb_error *err)
{
    int rc = cb_scene_parse_string(text, label, dir, sets, nsets, out, err);
    if (!rc && (rc = cb_scene_load_colliders(*out, err))) cb_scene_free(out);
    return rc;
}
