/* core/material.h — measured fabrics (data/materials/NAME.yaml) and their mapping to the
 * shared cloth model (core/model.h). A scene's `cloth.material: NAME` takes a fabric's
 * density, thickness, stretch and bend from here; keys the cloth block gives itself
 * override them.
 *
 * A material file holds published measurements and where they come from:
 *   source: "..."            (required: the publication, table and row)
 *   density: 472.6           kg/m^3, with thickness; or areal_density: kg/m^2
 *   thickness: 0.318e-3      m
 *   youngs_modulus: 0.821e6  Pa      } optional, both or neither: without them the
 *   poisson_ratio: 0.243     [-]     } material sets only the density (and thickness)
 *
 * The mapping (derived in the README, "Measured fabrics"):
 *   areal density rho_A = density * thickness (or areal_density as given);
 *   bending stiffness B = E t^3 / (12 (1 - nu^2))   (N m per unit width, a Kirchhoff plate);
 *   k_bend = B / 6: the continuum limit of the discrete-shells hinges of a grid bent about
 *     a grid axis (each hinge across the bending direction has weight 3 hy/hx and angle
 *     kappa hx, the other hinges angle 0: energy per area 3 k_bend kappa^2 = B/2 kappa^2),
 *     whatever the spacing hx, hy and the diagonals; other meshes and directions: approximate;
 *   k_stretch = 3/4 E t: a grid of square cells with one diagonal each and the same spring
 *     constant on every edge is, under affine strain, an isotropic membrane with Young's
 *     modulus (times thickness) 4/3 k_stretch and Poisson's ratio 1/3, whatever the
 *     measured nu (springs cannot represent it: the shear stiffness is off by
 *     (1 + nu) / (4/3)).
 */
#ifndef CB_MATERIAL_H
#define CB_MATERIAL_H

#include <stddef.h>

#include "core/error.h"

/* B / k_bend of the grid triangulation with square cells (either diagonal pattern), bent
 * by a moment about a grid axis with the lateral curvature and the twist free (a strip):
 * the hinges' continuum limit after the non-affine relaxation (README, "Measured fabrics";
 * analysis/tools/hinge_stiffness.py computes it). */
#define CB_HINGE_STIFFNESS 4.8

typedef struct cb_material {
    char name[64];
    double areal_density;     /* rho_A, kg/m^2 */
    double thickness;         /* m; NaN when the file gives none */
    double youngs_modulus;    /* E, Pa; NaN when not given */
    double poisson_ratio;     /* nu; NaN when not given */
    double bending_stiffness; /* B, N m; NaN without E and nu */
    double k_stretch;         /* N/m (shared model); NaN without E */
    double k_bend;            /* N m (shared model); NaN without E and nu */
} cb_material;

/* The folder holding the material files: $CLOTHBENCH_DATA/materials when that is set,
 * else the source tree's data/materials (compiled in). Returns buf. */
const char *cb_material_dir(char *buf, size_t size);

/* Reads dir/NAME.yaml. A name that is not [A-Za-z0-9_-]+ or has no file is refused with
 * the list of the known ones (the .yaml files in dir). path[size] receives the file read. */
int cb_material_load(const char *dir, const char *name, cb_material *out, char *path, size_t size,
                     cb_error *err);

/* The mappings above. */
double cb_material_bending_stiffness(double E, double t, double nu);
double cb_material_k_bend(double B);
double cb_material_k_stretch(double E, double t);

#endif
