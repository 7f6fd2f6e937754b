/* tests/test_tetmesh.c — tetrahedral meshes (core/tetmesh.c) and the cloth.tets scene
 * key: the procedural box against counting formulas (vertices, tets, edges, boundary
 * faces, V - E + F - T = 1 for the solid and V - E + F = 2 for its surface), positive
 * tets, exact volume by tets and by the divergence theorem over the boundary (which
 * checks the outward orientation), the TetGen reader against the box written to files
 * (0- and 1-based, either orientation convention), every reader error with its
 * file:line, and the world built from a scene. */
#include "cb_test.h"

#include "contact/colliders.h"
#include "core/scene.h"
#include "core/tetmesh.h"
#include "core/vec3.h"
#include "core/world.h"

static double tets_volume(const cb_tetmesh *tm, int *nonpos)
{
    double V = 0;
    *nonpos = 0;
    for (int t = 0; t < tm->nt; t++) {
        const int *v = tm->t[t];
        double v6 = cb_tet_volume6(tm->x[v[0]], tm->x[v[1]], tm->x[v[2]], tm->x[v[3]]);
        if (!(v6 > 0)) (*nonpos)++;
        V += v6 / 6.0;
    }
    return V;
}

/* closed surface volume by the divergence theorem: sum x0 . (x1 x x2) / 6 */
static double surface_volume(const double (*x)[3], int nf, const int (*f)[3])
{
    double V = 0;
    for (int i = 0; i < nf; i++) {
        double c[3];
        cb_v3_cross(c, x[f[i][1]], x[f[i][2]]);
        V += cb_v3_dot(x[f[i][0]], c) / 6.0;
    }
    return V;
}

/* every directed boundary half-edge appears once and its reverse once (closed and
 * consistently oriented); returns the number of undirected edges, -1 if not */
static int check_closed_oriented(int nf, const int (*f)[3])
{
    int bad = 0;
    for (int i = 0; i < nf; i++)
        for (int k = 0; k < 3; k++) {
            int a = f[i][k], b = f[i][(k + 1) % 3], same = 0, rev = 0;
            for (int j = 0; j < nf; j++)
                for (int l = 0; l < 3; l++) {
                    int c = f[j][l], d = f[j][(l + 1) % 3];
                    same += c == a && d == b;
                    rev += c == b && d == a;
                }
            if (same != 1 || rev != 1) bad++;
        }
    return bad ? -1 : 3 * nf / 2;
}

static void test_box_counts_volume_boundary(void)
{
    const int N[3] = {3, 2, 4};
    const double size[3] = {0.3, 0.2, 0.5}, origin[3] = {-1.0, 0.5, 2.0};
    for (int split = 5; split <= 6; split++) {
        cb_tet_box_def d = cb_default_tet_box_def();
        memcpy(d.n, N, sizeof d.n);
        memcpy(d.size, size, sizeof d.size);
        memcpy(d.origin, origin, sizeof d.origin);
        d.split = split;
        cb_tetmesh *tm = NULL;
        cb_error e;
        CU_ASSERT_EQUAL_FATAL(cb_tetmesh_box(&d, &tm, &e), CB_OK);
        int n0 = N[0], n1 = N[1], n2 = N[2];
        int nv = (n0 + 1) * (n1 + 1) * (n2 + 1), cells = n0 * n1 * n2;
        CU_ASSERT_EQUAL(tm->nv, nv);
        CU_ASSERT_EQUAL(tm->nt, split * cells);
        int nonpos;
        double V = tets_volume(tm, &nonpos);
        CU_ASSERT_EQUAL(nonpos, 0);
        CB_ASSERT_REL(V, size[0] * size[1] * size[2], 1e-13);
        /* edges: axis edges + one diagonal per face square (+ one body diagonal per cube for 6) */
        int axis = n0 * (n1 + 1) * (n2 + 1) + n1 * (n0 + 1) * (n2 + 1) + n2 * (n0 + 1) * (n1 + 1);
        int squares = n0 * n1 * (n2 + 1) + n0 * n2 * (n1 + 1) + n1 * n2 * (n0 + 1);
        int ne = 0, nf = 0;
        int (*edges)[2] = NULL, (*faces)[3] = NULL;
        CU_ASSERT_EQUAL_FATAL(cb_tetmesh_edges(tm, &ne, &edges, &e), CB_OK);
        CU_ASSERT_EQUAL(ne, axis + squares + (split == 6 ? cells : 0));
        CU_ASSERT_EQUAL_FATAL(cb_tetmesh_boundary(tm, &nf, &faces, &e), CB_OK);
        int outer = 2 * (n0 * n1 + n1 * n2 + n0 * n2);
        CU_ASSERT_EQUAL(nf, 2 * outer);
        /* conforming: every interior face in exactly two tets, and the solid is a ball */
        int interior_faces = (4 * tm->nt - nf) / 2;
        CU_ASSERT_EQUAL(nv - ne + (nf + interior_faces) - tm->nt, 1);
        /* the surface: closed, consistently oriented, a sphere, outward, on the box */
        int be = check_closed_oriented(nf, (const int (*)[3])faces);
        CU_ASSERT(be > 0);
        unsigned char *on = calloc((size_t)nv, 1);
        int bv = 0, off_box = 0;
        for (int i = 0; i < nf; i++)
            for (int k = 0; k < 3; k++) on[faces[i][k]] = 1;
        for (int i = 0; i < nv; i++) {
            if (!on[i]) continue;
            bv++;
            int at_side = 0;
            for (int k = 0; k < 3; k++)
                at_side |= fabs(tm->x[i][k] - origin[k]) < 1e-12 || fabs(tm->x[i][k] - origin[k] - size[k]) < 1e-12;
            off_box += !at_side;
        }
        free(on);
        CU_ASSERT_EQUAL(off_box, 0);
        CU_ASSERT_EQUAL(bv, nv - (n0 - 1) * (n1 - 1) * (n2 - 1));
        CU_ASSERT_EQUAL(bv - be + nf, 2);
        CB_ASSERT_REL(surface_volume((const double (*)[3])tm->x, nf, (const int (*)[3])faces), V, 1e-12);
        /* masses: a quarter of each tet's volume times density */
        double *m = calloc((size_t)nv, sizeof *m), M = 0, mmin = INFINITY;
        cb_tetmesh_lumped_masses(tm, 250.0, m);
        for (int i = 0; i < nv; i++) {
            M += m[i];
            mmin = fmin(mmin, m[i]);
        }
        CB_ASSERT_REL(M, 250.0 * V, 1e-12);
        CU_ASSERT(mmin > 0);
        free(m);
        /* the triangle mesh: boundary + interior edges as springs, all tet edges are mesh edges */
        cb_mesh *mesh = NULL;
        CU_ASSERT_EQUAL_FATAL(cb_tetmesh_to_mesh(tm, "box", &mesh, &e), CB_OK);
        CU_ASSERT_EQUAL(mesh->nv, nv);
        CU_ASSERT_EQUAL(mesh->nf, nf);
        CU_ASSERT_EQUAL(mesh->ne, ne);
        CU_ASSERT_EQUAL(mesh->ns, ne - be);
        CU_ASSERT_EQUAL(mesh->nh, be);
        int missing = 0;
        for (int i = 0; i < ne; i++) missing += cb_mesh_find_edge(mesh, edges[i][0], edges[i][1]) < 0;
        CU_ASSERT_EQUAL(missing, 0);
        fprintf(stderr, "  split %d: %d vertices, %d tets, %d edges, %d boundary faces, volume %.15g\n", split, nv,
                tm->nt, ne, nf, V);
        cb_mesh_free(&mesh);
        CU_ASSERT_PTR_NULL(mesh);
        free(edges);
        free(faces);
        cb_tetmesh_free(&tm);
        CU_ASSERT_PTR_NULL(tm);
    }
    /* bad definitions */
    cb_tet_box_def d = cb_default_tet_box_def();
    cb_tetmesh *tm = NULL;
    cb_error e;
    d.split = 4;
    CU_ASSERT_EQUAL(cb_tetmesh_box(&d, &tm, &e), CB_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "split"));
    d = cb_default_tet_box_def();
    d.n[1] = 0;
    CU_ASSERT_EQUAL(cb_tetmesh_box(&d, &tm, &e), CB_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "n[1]"));
    CU_ASSERT_PTR_NULL(tm);
}

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    fputs(text, fp);
    fclose(fp);
}

/* Write tm as TetGen files (numbering from base, corners swapped when flip, with a
 * comment, an attribute and boundary markers on the points). */
static void write_tetgen(const char *stem, const cb_tetmesh *tm, int base, int flip)
{
    char path[700];
    snprintf(path, sizeof path, "%s.node", stem);
    FILE *fp = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    fprintf(fp, "# written by test_tetmesh\n%d 3 1 1\n", tm->nv);
    for (int i = 0; i < tm->nv; i++)
        fprintf(fp, "%d  %.17g %.17g %.17g  %g %d\n", i + base, tm->x[i][0], tm->x[i][1], tm->x[i][2], 0.5 * i, i % 2);
    fclose(fp);
    snprintf(path, sizeof path, "%s.ele", stem);
    fp = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    fprintf(fp, "%d 4 0\n\n", tm->nt);
    for (int t = 0; t < tm->nt; t++) {
        const int *v = tm->t[t];
        fprintf(fp, "%d %d %d %d %d  # tet\n", t + base, v[0] + base, v[1] + base, (flip ? v[3] : v[2]) + base,
                (flip ? v[2] : v[3]) + base);
    }
    fclose(fp);
}

static void test_tetgen_roundtrip(void)
{
    cb_tet_box_def d = cb_default_tet_box_def();
    d.n[0] = 2;
    d.n[1] = 3;
    d.n[2] = 2;
    d.split = 5;
    cb_tetmesh *box = NULL, *tm = NULL;
    cb_error e;
    CU_ASSERT_EQUAL_FATAL(cb_tetmesh_box(&d, &box, &e), CB_OK);
    int nonpos;
    double V = tets_volume(box, &nonpos);
    for (int variant = 0; variant < 4; variant++) {
        int base = variant & 1, flip = variant >> 1;
        char stem[600], arg[640];
        snprintf(stem, sizeof stem, "%s/rt%d", cb_test_tmpdir(), variant);
        write_tetgen(stem, box, base, flip);
        /* the base name, or either file name */
        snprintf(arg, sizeof arg, "%s%s", stem, variant == 1 ? ".node" : variant == 2 ? ".ele" : "");
        int rc = cb_tetmesh_read_tetgen(arg, &tm, &e);
        if (rc) fprintf(stderr, "  %s\n", e.message);
        CU_ASSERT_EQUAL_FATAL(rc, CB_OK);
        CU_ASSERT_EQUAL(tm->nv, box->nv);
        CU_ASSERT_EQUAL(tm->nt, box->nt);
        double dx = 0;
        for (int i = 0; i < tm->nv; i++) dx = fmax(dx, cb_v3_dist(tm->x[i], box->x[i]));
        CU_ASSERT(dx == 0.0);
        CB_ASSERT_REL(tets_volume(tm, &nonpos), V, 1e-13);
        CU_ASSERT_EQUAL(nonpos, 0); /* the flipped file was flipped back */
        int same = 0;
        for (int t = 0; t < tm->nt; t++) same += !memcmp(tm->t[t], box->t[t], sizeof tm->t[t]);
        CU_ASSERT_EQUAL(same, box->nt);
        cb_tetmesh_free(&tm);
    }
    cb_tetmesh_free(&box);
}

/* five tets of the unit cube (all positive) with 1-based numbering */
static const char *cube_node = "8 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 1 1 0\n5 0 0 1\n6 1 0 1\n7 0 1 1\n8 1 1 1\n";
static const char *cube_ele = "5 4 0\n1 2 1 6 4\n2 3 1 4 7\n3 5 1 7 6\n4 8 4 6 7\n5 1 4 7 6\n";

typedef struct bad_case {
    const char *node, *ele;  /* NULL: the cube's; "" with missing: no file */
    const char *where;       /* "node:LINE" or "ele:LINE" (or "node" for no line) */
    const char *what;
} bad_case;

static void test_tetgen_errors_name_file_and_line(void)
{
    cb_tetmesh *tm = NULL;
    cb_error e;
    char stem[600];
    /* the cube itself reads, and its orientation is positive */
    snprintf(stem, sizeof stem, "%s/cube", cb_test_tmpdir());
    char p1[700], p2[700];
    snprintf(p1, sizeof p1, "%s.node", stem);
    snprintf(p2, sizeof p2, "%s.ele", stem);
    write_file(p1, cube_node);
    write_file(p2, cube_ele);
    CU_ASSERT_EQUAL_FATAL(cb_tetmesh_read_tetgen(stem, &tm, &e), CB_OK);
    int nonpos;
    CB_ASSERT_REL(tets_volume(tm, &nonpos), 1.0, 1e-14);
    CU_ASSERT_EQUAL(nonpos, 0);
    cb_tetmesh_free(&tm);

    static const bad_case cases[] = {
        {"8 3 0 0\n1 0 0 0\n2 1 0 0\n", NULL, "node:3", "says 8 points, found only 2"},
        {"eight 3 0 0\n", NULL, "node:1", "number of points: expected an integer"},
        {"8 2 0 0\n", NULL, "node:1", "dimension: expected 3"},
        {"8 3 0 2\n", NULL, "node:1", "boundary marker flag"},
        {"# c\n8 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 1 1 0\n5 0 zero 1\n", NULL, "node:7",
         "y coordinate: expected a number, got 'zero'"},
        {"8 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 1 nan 0\n", NULL, "node:5", "y coordinate is not finite"},
        {"8 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 1 1 0 7\n", NULL, "node:5", "found more ('7')"},
        {"8 3 0 0\n2 0 0 0\n", NULL, "node:2", "first point number must be 0 or 1"},
        {"8 3 0 0\n1 0 0 0\n3 1 0 0\n", NULL, "node:3", "point number: expected 2"},
        {"9 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 1 1 0\n5 0 0 1\n6 1 0 1\n7 0 1 1\n8 1 1 1\n9 5 5 5\n", NULL,
         "node:10", "point 9 belongs to no tetrahedron"},
        {NULL, "5 4 0\n1 2 1 6 4\n2 3 1 4 9\n", "ele:3", "node 4: index 9 out of range [1, 8]"},
        {NULL, "5 4 0\n1 2 1 6 4\n2 3 1 4 0\n", "ele:3", "index 0 out of range"},
        {NULL, "5 5 0\n", "ele:1", "nodes per tetrahedron: expected 4 or 10"},
        {NULL, "6 4 0\n1 2 1 6 4\n2 3 1 4 7\n3 5 1 7 6\n4 8 4 6 7\n5 1 4 7 6\n", "ele:6", "says 6 tetrahedra, found only 5"},
        {NULL, "5 4 0\n1 2 1 6 4\n2 3 1 4 7\n3 5 1 7 6\n4 8 4 6 7\n5 1 4 7 x\n", "ele:6", "node 4: expected an integer"},
        {NULL, "5 4 0\n1 2 1 6 4\n2 3 1 4 7\n3 5 1 7 6\n4 8 4 6 7\n5 1 4 7 6 1.5\n", "ele:6", "found more ('1.5')"},
        /* tet 2 swapped: 4 positive, 1 inverted */
        {NULL, "5 4 0\n1 2 1 6 4\n2 3 1 7 4\n3 5 1 7 6\n4 8 4 6 7\n5 1 4 7 6\n", "ele:3", "tet 1 (2 0 6 3) is inverted"},
        {NULL, "5 4 0\n1 2 1 6 4\n2 3 1 4 7\n3 5 1 7 6\n4 8 4 6 7\n5 1 4 7 1\n", "ele:6", "repeated vertex"},
        /* 1 2 3 4 are coplanar (z = 0) */
        {NULL, "6 4 0\n1 2 1 6 4\n2 3 1 4 7\n3 5 1 7 6\n4 8 4 6 7\n5 1 4 7 6\n6 1 2 3 4\n", "ele:7",
         "tet 5 (0 1 2 3) is degenerate: volume 0"},
        /* the central tet twice: its faces are in three tets */
        {NULL, "6 4 0\n1 2 1 6 4\n2 3 1 4 7\n3 5 1 7 6\n4 8 4 6 7\n5 1 4 7 6\n6 1 4 7 6\n", "ele:7",
         "shared by more than two tets"},
        /* 10-node tets: the corners are the first 4 */
        {NULL, "5 10 0\n1 2 1 6 4 1 1 1 1 1 1\n2 3 1 4 7 1 1 1 1 1 1\n3 5 1 7 6 1 1 1 1 1 1\n4 8 4 6 7 1 1 1 1 1 1\n"
               "5 1 4 7 6 1 1 1 1 1 99\n", "ele:6", "node 10: index 99 out of range"},
    };
    int n = (int)(sizeof cases / sizeof cases[0]);
    for (int i = 0; i < n; i++) {
        snprintf(stem, sizeof stem, "%s/bad%d", cb_test_tmpdir(), i);
        snprintf(p1, sizeof p1, "%s.node", stem);
        snprintf(p2, sizeof p2, "%s.ele", stem);
        write_file(p1, cases[i].node ? cases[i].node : cube_node);
        write_file(p2, cases[i].ele ? cases[i].ele : cube_ele);
        memset(&e, 0, sizeof e);
        int rc = cb_tetmesh_read_tetgen(stem, &tm, &e);
        char where[700];
        snprintf(where, sizeof where, "%s.%s", stem, cases[i].where);
        int ok = rc == CB_ERR_INPUT && strstr(e.message, where) && strstr(e.message, cases[i].what);
        if (!ok) fprintf(stderr, "  case %d: rc %d, message '%s', expected '%s' and '%s'\n", i, rc, e.message, where,
                         cases[i].what);
        CU_ASSERT(ok);
        CU_ASSERT_PTR_NULL(tm);
    }
    /* two tets on the same side of their shared face, from arrays with source lines */
    const double x[5][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0.2, 0.2, 1}};
    const int t2[2][4] = {{0, 1, 2, 3}, {0, 1, 2, 4}}, lines[2] = {10, 20};
    CU_ASSERT_EQUAL(cb_tetmesh_from_arrays(5, x, 2, t2, "arr", lines, &tm, &e), CB_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "arr:20: tet 1 overlaps arr:10: tet 0"));
    CU_ASSERT_PTR_NULL(tm);
    /* one positive tet, with and without the opposite convention */
    const int t1[1][4] = {{0, 2, 1, 3}};
    CU_ASSERT_EQUAL_FATAL(cb_tetmesh_from_arrays(4, x, 1, t1, "arr", NULL, &tm, &e), CB_OK);
    CU_ASSERT(cb_tet_volume6(tm->x[tm->t[0][0]], tm->x[tm->t[0][1]], tm->x[tm->t[0][2]], tm->x[tm->t[0][3]]) > 0);
    cb_tetmesh_free(&tm);
    /* unreadable file */
    snprintf(stem, sizeof stem, "%s/nothing", cb_test_tmpdir());
    CU_ASSERT_EQUAL(cb_tetmesh_read_tetgen(stem, &tm, &e), CB_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "nothing.node: cannot read"));
    snprintf(stem, sizeof stem, "%s/only_node", cb_test_tmpdir());
    snprintf(p1, sizeof p1, "%s.node", stem);
    write_file(p1, cube_node);
    CU_ASSERT_EQUAL(cb_tetmesh_read_tetgen(stem, &tm, &e), CB_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "only_node.ele: cannot read"));
}

/* cloth.tets in a scene: box and TetGen, masses from volume_density, and key errors */
static void test_scene_world_tets(void)
{
    cb_error e;
    char text[2048], stem[600];
    snprintf(stem, sizeof stem, "%s/scene_cube", cb_test_tmpdir());
    char p1[700], p2[700];
    snprintf(p1, sizeof p1, "%s.node", stem);
    snprintf(p2, sizeof p2, "%s.ele", stem);
    write_file(p1, cube_node);
    write_file(p2, cube_ele);
    const char *bodies[2] = {"{box: {n: [2, 3, 4], size: [0.2, 0.3, 0.4], origin: [0, 0, 1], split: 5}}", stem};
    const double vol[2] = {0.2 * 0.3 * 0.4, 1.0};
    const int ntets[2] = {5 * 24, 5}, nverts[2] = {3 * 4 * 5, 8};
    for (int b = 0; b < 2; b++) {
        snprintf(text, sizeof text,
                 "name: t\nduration: 1\ndt: 0.01\ncloth:\n  tets: %s\n  volume_density: 300\n"
                 "  pins: [{box: {min: [-1, -1, -1], max: [5, 5, %g]}}]\n", bodies[b], b == 0 ? 1.0 : 0.5);
        cb_scene *s = NULL;
        cb_world *w = NULL;
        int rc = cb_scene_load_string(text, "t.yaml", ".", NULL, 0, &s, &e);
        if (!rc) rc = cb_world_create(s, &w, &e);
        if (rc) fprintf(stderr, "  %s\n", e.message);
        CU_ASSERT_EQUAL_FATAL(rc, CB_OK);
        CU_ASSERT_EQUAL(w->ntets, ntets[b]);
        CU_ASSERT_EQUAL(w->nv, nverts[b]);
        double M = 0, V = 0;
        for (int i = 0; i < w->nv; i++) M += w->mass[i];
        for (int t = 0; t < w->ntets; t++) {
            const int *v = w->tets[t];
            double v6 = cb_tet_volume6(w->state.x[v[0]], w->state.x[v[1]], w->state.x[v[2]], w->state.x[v[3]]);
            CU_ASSERT(v6 > 0);
            V += v6 / 6.0;
        }
        CB_ASSERT_REL(V, vol[b], 1e-13);
        CB_ASSERT_REL(M, 300.0 * vol[b], 1e-12);
        /* the pin box takes the bottom layer: (2+1)(3+1) vertices of the box, 4 of the cube */
        CU_ASSERT_EQUAL(w->npinned, b == 0 ? 12 : 4);
        cb_world_free(&w);
        cb_scene_free(&s);
    }
    static const struct { const char *cloth, *needle; } bad[] = {
        {"  tets: {box: {n: [2, 2, 2], size: [1, 1, 1]}}\n  grid: {nx: 3, ny: 3, size: [1, 1]}\n",
         "give only one of 'grid', 'mesh' and 'tets'"},
        {"  tets: {box: {n: [2, 2, 2], size: [1, 1, 1]}}\n  density: 0.1\n", "takes volume_density"},
        {"  grid: {nx: 3, ny: 3, size: [1, 1]}\n  volume_density: 10\n", "only a tet body"},
        {"  tets: {box: {n: [2, 2, 2], size: [1, 1, 1], split: 7}}\n", "t.yaml:5:54: cloth.tets.box.split: expected 5 or 6"},
        {"  tets: {box: {n: [2, 0, 2], size: [1, 1, 1]}}\n", "cloth.tets.box.n[1]: expected an integer in [1, 1000]"},
        {"  tets: {box: {n: [2, 2], size: [1, 1, 1]}}\n", "cloth.tets.box.n: expected a list of 3"},
        {"  tets: {box: {size: [1, 1, 1]}}\n", "missing required key 'n'"},
        {"  tets: {ball: 3}\n", "unknown key 'ball'"},
        {"  tets: [1, 2]\n", "cloth.tets: expected a TetGen file base name"},
        {"  tets: {box: {n: [2, 2, 2], size: [1, 1, 1]}}\n  volume_density: -1\n", "cloth.volume_density: expected a value > 0"},
    };
    for (int i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
        snprintf(text, sizeof text, "name: t\nduration: 1\ndt: 0.01\ncloth:\n%s", bad[i].cloth);
        cb_scene *s = NULL;
        memset(&e, 0, sizeof e);
        int rc = cb_scene_load_string(text, "t.yaml", ".", NULL, 0, &s, &e);
        int ok = rc == CB_ERR_INPUT && strstr(e.message, bad[i].needle) && strstr(e.message, "t.yaml:");
        if (!ok) fprintf(stderr, "  bad %d: rc %d '%s', expected '%s'\n", i, rc, e.message, bad[i].needle);
        CU_ASSERT(ok);
        CU_ASSERT_PTR_NULL(s);
    }
    /* a missing TetGen body is reported when the world is built, naming the file */
    snprintf(text, sizeof text, "name: t\nduration: 1\ndt: 0.01\ncloth:\n  tets: no/such/body\n");
    cb_scene *s = NULL;
    cb_world *w = NULL;
    CU_ASSERT_EQUAL_FATAL(cb_scene_load_string(text, "t.yaml", "/tmp", NULL, 0, &s, &e), CB_OK);
    CU_ASSERT_EQUAL(cb_world_create(s, &w, &e), CB_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "/tmp/no/such/body.node: cannot read"));
    CU_ASSERT_PTR_NULL(w);
    cb_scene_free(&s);
}

CB_TEST_MAIN("tetmesh",
             CB_TEST(test_box_counts_volume_boundary),
             CB_TEST(test_tetgen_roundtrip),
             CB_TEST(test_tetgen_errors_name_file_and_line),
             CB_TEST(test_scene_world_tets))
