/* core/model.c — the shared cloth model's energies and exact gradients (model.h).
 *
 * Dihedral angle gradient. With e = x1 - x0, N1 = e x (x2 - x0), N2 = (x3 - x0) x e
 * (the two face normals, unnormalised) and h_i = |N_i| / |e| the heights of the
 * opposite vertices over the edge line:
 *   d theta / d x2 = -|e| N1 / |N1|^2,   d theta / d x3 = -|e| N2 / |N2|^2
 * and, with s_i = ((x_i - x0) . e) / |e|^2 the position of the foot of x_i along
 * the edge, moving x0 (x1) along a face normal changes that face's tilt like
 * moving its opposite vertex by -(1 - s) (-s) times as much:
 *   d theta / d x0 = -(1 - s2) g2 - (1 - s3) g3,   d theta / d x1 = -s2 g2 - s3 g3.
 * The four gradients sum to zero (translation invariance). Checked against
 * central finite differences in tests/test_model.c.
 */
#include "core/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/vec3.h"

int cb_model_init(cb_cloth_model *m, const cb_mesh *mesh, double k_stretch, double k_bend,
                  double thickness, double density, cb_error *err)
{
    if (!m || !mesh) return CB_FAIL(err, CB_ERR_INPUT, "cb_model_init: NULL argument");
    memset(m, 0, sizeof *m);
    if (!(k_stretch >= 0) || !(k_bend >= 0) || !(thickness >= 0) || !(density > 0))
        return CB_FAIL(err, CB_ERR_INPUT,
                       "cloth model: stretch, bend and thickness must be >= 0 and density > 0 "
                       "(got %g, %g, %g, %g)", k_stretch, k_bend, thickness, density);
    m->k_stretch = k_stretch;
    m->k_bend = k_bend;
    m->thickness = thickness;
    m->density = density;
    m->mesh = mesh;
    m->rest_length = cb_calloc((size_t)mesh->ne, sizeof(double));
    m->hinge_weight = cb_calloc((size_t)mesh->nh, sizeof(double));
    m->hinge_rest_angle = cb_calloc((size_t)mesh->nh, sizeof(double));
    if (!m->rest_length || !m->hinge_weight || !m->hinge_rest_angle) {
        cb_model_release(m);
        return CB_FAIL(err, CB_ERR_NOMEM, "cloth model: out of memory");
    }
    const double (*x)[3] = (const double (*)[3])mesh->x;
    for (int i = 0; i < mesh->ne; i++) m->rest_length[i] = cb_v3_dist(x[mesh->e[i][0]], x[mesh->e[i][1]]);
    for (int i = 0; i < mesh->nh; i++) {
        const int *h = mesh->h[i];
        double l = m->rest_length[mesh->he[i]];
        int e = mesh->he[i];
        double a1 = cb_triangle_area(x, mesh->f[mesh->ef[e][0]]);
        double a2 = cb_triangle_area(x, mesh->f[mesh->ef[e][1]]);
        m->hinge_weight[i] = 3.0 * l * l / (a1 + a2);
        m->hinge_rest_angle[i] = cb_dihedral_angle(x[h[0]], x[h[1]], x[h[2]], x[h[3]], NULL);
    }
    return CB_OK;
}

void cb_model_release(cb_cloth_model *m)
{
    if (!m) return;
    free(m->rest_length);
    free(m->hinge_weight);
    free(m->hinge_rest_angle);
    m->rest_length = m->hinge_weight = m->hinge_rest_angle = NULL;
}

double cb_dihedral_angle(const double x0[3], const double x1[3], const double x2[3],
                         const double x3[3], double grad[4][3])
{
    return cb_dihedral_angle_at(x0, x1, x2, x3, grad, 0);
}

double cb_model_edge_energy(const cb_cloth_model *m, int e, const double (*x)[3])
{
    const int *ev = m->mesh->e[e];
    double d = cb_v3_dist(x[ev[0]], x[ev[1]]) - m->rest_length[e];
    return 0.5 * m->k_stretch * d * d;
}

double cb_model_hinge_energy(const cb_cloth_model *m, int i, const double (*x)[3])
{
    const int *h = m->mesh->h[i];
    double d = cb_dihedral_angle(x[h[0]], x[h[1]], x[h[2]], x[h[3]], NULL) - m->hinge_rest_angle[i];
    return m->k_bend * m->hinge_weight[i] * d * d;
}

double cb_model_stretch_energy(const cb_cloth_model *m, const double (*x)[3])
{
    double E = 0;
    for (int i = 0; i < m->mesh->ne; i++) E += cb_model_edge_energy(m, i, x);
    return E;
}

double cb_model_bend_energy(const cb_cloth_model *m, const double (*x)[3])
{
    double E = 0;
    for (int i = 0; i < m->mesh->nh; i++) E += cb_model_hinge_energy(m, i, x);
    return E;
}

void cb_model_add_stretch_forces(const cb_cloth_model *m, const double (*x)[3], double (*f)[3])
{
    const cb_mesh *mesh = m->mesh;
    for (int i = 0; i < mesh->ne; i++) {
        int a = mesh->e[i][0], b = mesh->e[i][1];
        double d[3];
        cb_v3_sub(d, x[a], x[b]);
        double l = cb_v3_norm(d);
        if (!(l > 0)) continue;
        double s = -m->k_stretch * (l - m->rest_length[i]) / l; /* force on a along d */
        cb_v3_axpy(f[a], s, d);
        cb_v3_axpy(f[b], -s, d);
    }
}

void cb_model_add_bend_forces(const cb_cloth_model *m, const double (*x)[3], double (*f)[3])
{
    const cb_mesh *mesh = m->mesh;
    if (m->k_bend == 0) return;
    for (int i = 0; i < mesh->nh; i++) {
        const int *h = mesh->h[i];
        double g[4][3];
        double theta = cb_dihedral_angle(x[h[0]], x[h[1]], x[h[2]], x[h[3]], g);
        double s = -2.0 * m->k_bend * m->hinge_weight[i] * (theta - m->hinge_rest_angle[i]);
        for (int k = 0; k < 4; k++) cb_v3_axpy(f[h[k]], s, g[k]);
    }
}

double cb_model_max_strain(const cb_cloth_model *m, const double (*x)[3])
{
    const cb_mesh *mesh = m->mesh;
    double s = 0;
    for (int i = 0; i < mesh->ne; i++) {
        double L = m->rest_length[i];
        double d = fabs(cb_v3_dist(x[mesh->e[i][0]], x[mesh->e[i][1]]) - L) / L;
        if (d > s || isnan(d)) s = d;
    }
    return s;
}
