/* core/tetmesh.h — tetrahedral meshes for soft bodies (cloth.tets in a scene).
 *
 * A cb_tetmesh is a vertex array and a list of tetrahedra, every one positively
 * oriented: 6V = (x1 - x0) x (x2 - x0) . (x3 - x0) > 0. Sources: a procedural box
 * (n[0] x n[1] x n[2] cubes, each split into 5 or 6 tets, conforming across cubes) and
 * TetGen .node/.ele files. The world turns a tet mesh into a cb_mesh whose triangles
 * are the boundary surface (faces used by exactly one tet, outward oriented) and whose
 * springs are the interior tet edges, so every tet edge is a mesh edge; the vertex
 * numbering is the tet mesh's.
 *
 * Validation rejects, naming FILE:LINE for file input (or the tet index for arrays):
 * unreadable files, bad header counts, non-numbers, NaN/Inf coordinates, node indices
 * out of range, repeated corners, degenerate tets (|6V| below 1e-12 times the cube of
 * the bounding-box diagonal), inverted tets (a sign different from the others), faces
 * shared by more than two tets and vertices used by no tet.
 */
#ifndef CB_TETMESH_H
#define CB_TETMESH_H

#include "core/error.h"
#include "core/mesh.h"

typedef struct cb_tetmesh {
    int nv, nt;
    double (*x)[3];   /* [nv] rest positions */
    int (*t)[4];      /* [nt] positively oriented tetrahedra */
} cb_tetmesh;

typedef struct cb_tet_box_def {
    int n[3];         /* cubes along x, y, z (>= 1 each): (n0+1)(n1+1)(n2+1) vertices */
    double size[3];   /* extent (m), > 0 */
    double origin[3]; /* the minimum corner */
    int split;        /* tets per cube: 5 (alternating parity) or 6 (Freudenthal, one diagonal) */
} cb_tet_box_def;

cb_tet_box_def cb_default_tet_box_def(void);

/* The box: vertex (i, j, k) is i + (n0+1) (j + (n1+1) k); split*n0*n1*n2 tets. */
int cb_tetmesh_box(const cb_tet_box_def *def, cb_tetmesh **out, cb_error *err);

/* TetGen files: `path` is the base name (body -> body.node, body.ele); a trailing
 * .node or .ele is stripped. Node numbering may start at 0 or 1 (the first point
 * number in .node says which, and must then count up by one); .ele may have 4 or 10
 * nodes per tet (the first 4 are the corners), attributes and boundary markers are
 * ignored, '#' starts a comment. If every tet is negatively oriented, all are flipped
 * (a mesher using the opposite convention); a mix of signs is an error. */
int cb_tetmesh_read_tetgen(const char *path, cb_tetmesh **out, cb_error *err);

/* Build from arrays (copied) and validate; `label` names the source in messages,
 * `tet_lines` (may be NULL) the source line of each tet. Orientation as above. */
int cb_tetmesh_from_arrays(int nv, const double (*x)[3], int nt, const int (*t)[4], const char *label,
                           const int *tet_lines, cb_tetmesh **out, cb_error *err);

void cb_tetmesh_free(cb_tetmesh **tm);

/* Signed 6V of the tet (a, b, c, d): (b - a) x (c - a) . (d - a). */
double cb_tet_volume6(const double a[3], const double b[3], const double c[3], const double d[3]);

/* Boundary faces: used by exactly one tet, oriented so the normal (x1-x0)x(x2-x0)
 * points out of that tet. *f is allocated (free()); a face in more than two tets is an
 * error. */
int cb_tetmesh_boundary(const cb_tetmesh *tm, int *nf, int (**f)[3], cb_error *err);

/* Unique edges, e[i][0] < e[i][1], sorted. *e is allocated (free()). */
int cb_tetmesh_edges(const cb_tetmesh *tm, int *ne, int (**e)[2], cb_error *err);

/* The triangle mesh of the body: the boundary surface plus the interior edges as
 * springs (cb_mesh.s), same vertex numbering. */
int cb_tetmesh_to_mesh(const cb_tetmesh *tm, const char *label, cb_mesh **out, cb_error *err);

/* Lumped masses: a quarter of each adjacent tet's volume times density (kg/m^3). */
void cb_tetmesh_lumped_masses(const cb_tetmesh *tm, double density, double *mass);

#endif
