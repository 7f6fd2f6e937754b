/* core/mesh.h — the triangle mesh and its topology, shared by every solver.
 *
 * A cb_mesh is immutable after construction: rest positions, faces, and the
 * topology derived from them (unique edges, hinges, boundary). All constructors
 * validate their input and reject, with a message naming the file and line or the
 * offending element: non-manifold edges (more than two triangles), degenerate
 * (zero-area or repeated-index) and repeated triangles, indices out of range,
 * NaN/Inf coordinates, an empty mesh.
 */
#ifndef CB_MESH_H
#define CB_MESH_H

#include "core/error.h"

typedef struct cb_mesh {
    int nv, nf, ne, nh;
    double (*x)[3];   /* [nv] rest positions */
    int (*f)[3];      /* [nf] triangles, counter-clockwise */
    int ns;
    int (*s)[2];      /* [ns] springs without a triangle (OBJ `l` elements): they join the
                         edges e[] (ef = -1, -1), carry stretch and mass (line_density) only */
    int (*e)[2];      /* [ne] unique edges, e[i][0] < e[i][1], sorted lexicographically */
    int (*ef)[2];     /* [ne] the one or two faces of each edge; ef[i][1] = -1 on the boundary,
                         both -1 for a spring-only edge */
    int (*h)[4];      /* [nh] hinges: h[0], h[1] the interior edge, h[2] the opposite
                         vertex in the face where the edge runs h[0]->h[1], h[3] the
                         opposite vertex of the other face */
    int *he;          /* [nh] edge index of each hinge */
    unsigned char *boundary; /* [nv] 1 for vertices on a boundary edge */
    /* grid meshes only (else 0): vertex (i, j) is i + nx * j */
    int grid_nx, grid_ny;
} cb_mesh;

typedef enum { CB_PLANE_XY = 0, CB_PLANE_XZ = 1, CB_PLANE_YZ = 2 } cb_plane;
typedef enum {
    CB_DIAG_ALTERNATE = 0, /* alternate diagonals per cell (checkerboard) */
    CB_DIAG_RIGHT = 1,     /* every cell split along (i,j)-(i+1,j+1) */
    CB_DIAG_LEFT = 2       /* every cell split along (i+1,j)-(i,j+1) */
} cb_diagonal;

typedef struct cb_grid_def {
    int nx, ny;          /* vertices along u and v (>= 2 each) */
    double size[2];      /* extent along u and v (m) */
    double origin[3];    /* position of vertex (0,0) */
    cb_plane plane;      /* u,v axes: xy -> (x,y), xz -> (x,z), yz -> (y,z) */
    cb_diagonal diagonal;
} cb_grid_def;

cb_grid_def cb_default_grid_def(void);

/* Regular grid of nx*ny vertices and 2(nx-1)(ny-1) triangles. */
int cb_mesh_grid(const cb_grid_def *def, cb_mesh **out, cb_error *err);

/* Wavefront OBJ: v and f records (polygons fan-triangulated; v, v/t, v//n, v/t/n
 * and negative indices), l records (polylines: springs without a triangle),
 * comments and other records ignored. */
int cb_mesh_read_obj(const char *path, cb_mesh **out, cb_error *err);

/* Build from arrays (copied), validate and derive the topology. `label` names the
 * source in error messages (a file name, or "grid"). */
int cb_mesh_from_arrays(int nv, const double (*x)[3], int nf, const int (*f)[3],
                        const char *label, cb_mesh **out, cb_error *err);

/* The same with springs (seg, may be NULL when ns = 0) and the source line of each
 * face (for messages "file:LINE: triangle t"; may be NULL). */
int cb_mesh_from_arrays_lines(int nv, const double (*x)[3], int nf, const int (*f)[3], int ns,
                              const int (*seg)[2], const char *label, const int *face_lines,
                              cb_mesh **out, cb_error *err);

void cb_mesh_free(cb_mesh **m);

/* Area of triangle t at positions x. */
double cb_triangle_area(const double (*x)[3], const int t[3]);

/* Lumped masses: one third of each adjacent triangle's area times density (kg/m^2),
 * plus half of each adjacent spring's length times line_density (kg/m). */
void cb_mesh_lumped_masses(const cb_mesh *m, double density, double line_density, double *mass);

/* Find the edge index of (a,b) (any order); -1 if none. O(log ne). */
int cb_mesh_find_edge(const cb_mesh *m, int a, int b);

/* Vertex-face adjacency in CSR form: faces of vertex v are idx[ptr[v] .. ptr[v+1]-1]. */
int cb_mesh_vertex_faces(const cb_mesh *m, int **ptr, int **idx, cb_error *err);

#endif
