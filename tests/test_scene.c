/* tests/test_scene.c — the YAML tree (core/yamltree.c), solver parameter blocks
 * (core/params.c) and scene loading (core/scene.c).
 *
 * Bad-input tests write a scene into the suite's temporary folder and check the
 * status and that the message starts with "FILE:LINE:COL:" of the offending node;
 * the expected line and column are found by searching the text we wrote, not
 * copied from the parser's output. Good-input tests compare against the values
 * written in the scene text, analytic rotations, and a parse/emit round trip. */
#include "cb_test.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <sys/stat.h>

#include "contact/colliders.h"
#include "core/params.h"
#include "core/scene.h"
#include "core/yamltree.h"

/* 1-based line and column of the first `node` at or after the first `anchor` in text. */
static void locate(const char *text, const char *anchor, const char *node, int *line, int *col)
{
    const char *a = strstr(text, anchor);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    const char *p = strstr(a, node);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    *line = 1;
    const char *bol = text;
    for (const char *q = text; q < p; q++)
        if (*q == '\n') { (*line)++; bol = q + 1; }
    *col = (int)(p - bol) + 1;
}

static int starts_with(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

/* Load `text` from a file; expect `status`, a message starting with
 * "FILE:LINE:COL:" of the node (col < 0: check the line only) and containing `want`. */
static void expect_fail_at(const char *file, const char *text, const char *const *sets, int nsets,
                           int status, const char *anchor, const char *node, int check_col,
                           const char *want)
{
    const char *path = cb_test_write_tmp(file, text);
    char full[1024];
    snprintf(full, sizeof full, "%s", path);
    cb_scene *s = NULL;
    cb_error err;
    cb_error_clear(&err);
    int rc = cb_scene_load(full, sets, nsets, &s, &err);
    CU_ASSERT_EQUAL(rc, status);
    CU_ASSERT_EQUAL(err.status, status);
    CU_ASSERT_PTR_NULL(s);
    cb_scene_free(&s);
    char prefix[1200];
    if (anchor) {
        int line, col;
        locate(text, anchor, node, &line, &col);
        if (check_col) snprintf(prefix, sizeof prefix, "%s:%d:%d: ", full, line, col);
        else snprintf(prefix, sizeof prefix, "%s:%d:", full, line);
    } else {
        snprintf(prefix, sizeof prefix, "%s", full);
    }
    int ok_prefix = starts_with(err.message, prefix);
    int ok_want = !want || strstr(err.message, want) != NULL;
    if (!ok_prefix || !ok_want)
        fprintf(stderr, "\n  message: %s\n  wanted prefix '%s' and '%s'\n", err.message, prefix,
                want ? want : "");
    CU_ASSERT(ok_prefix);
    CU_ASSERT(ok_want);
}

#define EXPECT_FAIL(text, anchor, node, want) \
    expect_fail_at("bad.yaml", (text), NULL, 0, CB_ERR_INPUT, (anchor), (node), 1, (want))

/* --------------------------------------------------------------- bad scenes */

static const char *const BASE_HEAD =
    "name: test\n"
    "duration: 1.0\n"
    "dt: 0.01\n";

static char *cat(const char *a, const char *b)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s%s", a, b);
    return buf;
}

static void test_unknown_top_key(void)
{
    const char *t = cat(BASE_HEAD, "cloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\nfrobnicate: 1\n");
    EXPECT_FAIL(t, "frobnicate", "frobnicate",
                "unknown key 'frobnicate' in the scene; allowed keys: name, duration, dt, frame_rate");
}

static void test_unknown_cloth_key(void)
{
    const char *t = cat(BASE_HEAD, "cloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\n  colour: red\n");
    EXPECT_FAIL(t, "colour", "colour", "unknown key 'colour' in cloth; allowed keys: grid, mesh, tets, volume_density, material, density");
}

static void test_unknown_collider_key(void)
{
    const char *t = cat(BASE_HEAD, "cloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\ncolliders:\n"
                                   "  - {type: plane, point: [0, 0, 0], normal: [0, 0, 1]}\n"
                                   "  - {type: sphere, center: [0, 0, 0], radius: 0.3, mass: 2}\n");
    EXPECT_FAIL(t, "mass", "mass",
                "unknown key 'mass' in colliders.1; allowed keys: type, center, radius, velocity, friction, restitution, angular_velocity");
}

static void test_wrong_type(void)
{
    const char *t = "name: test\nduration: 1.0\ndt: abc\ncloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\n";
    EXPECT_FAIL(t, "dt:", "abc", "dt: expected a number, got 'abc'");
}

static void test_trailing_garbage_and_quoted_number(void)
{
    const char *t = "name: test\nduration: 1.0abc\ndt: 0.01\ncloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\n";
    EXPECT_FAIL(t, "duration:", "1.0abc", "duration: expected a number, got '1.0abc'");
    t = "name: test\nduration: 1.0\ndt: \"0.01\"\ncloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\n";
    EXPECT_FAIL(t, "dt:", "\"0.01\"", "dt: expected a number");
    t = "name: test\nduration: .nan\ndt: 0.01\ncloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\n";
    EXPECT_FAIL(t, "duration:", ".nan", "expected a number");
    t = "name: test\nduration: inf\ndt: 0.01\ncloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\n";
    EXPECT_FAIL(t, "duration:", "inf", "duration: expected a finite number, got 'inf'");
    t = "name: test\nduration: 1\ndt: 0.01\ncloth:\n  grid: {nx: 3.5, ny: 3, size: [1, 1]}\n";
    EXPECT_FAIL(t, "nx:", "3.5", "cloth.grid.nx: expected an integer, got '3.5'");
}

static void test_dt_not_positive(void)
{
    const char *t = "name: test\nduration: 1.0\ndt: 0\ncloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\n";
    EXPECT_FAIL(t, "dt:", "0", "dt: expected a value > 0, got 0");
    t = "name: test\nduration: 1.0\ndt: -0.5\ncloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\n";
    EXPECT_FAIL(t, "dt:", "-0.5", "dt: expected a value > 0, got -0.5");
}

static void test_dt_above_duration(void)
{
    const char *t = "name: test\nduration: 0.1\ndt: 0.5\ncloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\n";
    EXPECT_FAIL(t, "dt:", "0.5", "dt: expected a value <= duration (0.1), got 0.5");
}

static void test_negative_density(void)
{
    const char *t = cat(BASE_HEAD, "cloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\n  density: -0.1\n");
    EXPECT_FAIL(t, "density:", "-0.1", "cloth.density: expected a value > 0, got -0.1");
}

static void test_missing_cloth(void)
{
    const char *t = cat(BASE_HEAD, "gravity: [0, 0, -1]\n");
    EXPECT_FAIL(t, "name", "name", "missing required key 'cloth'");
}

static void test_grid_and_mesh(void)
{
    const char *t = cat(BASE_HEAD, "cloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\n  density: 0.2\n"
                                   "  mesh: meshes/square.obj\n");
    EXPECT_FAIL(t, "mesh:", "meshes", "exactly one of 'grid' and 'mesh'");
    int gl, gc;
    locate(t, "grid:", "{", &gl, &gc);
    char want[1100];
    snprintf(want, sizeof want, "grid at %s/bad.yaml:%d:%d", cb_test_tmpdir(), gl, gc);
    EXPECT_FAIL(t, "mesh:", "meshes", want);
    t = cat(BASE_HEAD, "cloth:\n  density: 0.2\n");
    EXPECT_FAIL(t, "cloth:", "density", "exactly one of 'grid' or 'mesh'");
}

static void test_nx_too_small(void)
{
    const char *t = cat(BASE_HEAD, "cloth:\n  grid:\n    nx: 1\n    ny: 3\n    size: [1, 1]\n");
    EXPECT_FAIL(t, "nx:", "1", "cloth.grid.nx: expected an integer >= 2, got 1");
}

static void test_bad_collider_type(void)
{
    const char *t = cat(BASE_HEAD, "cloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\ncolliders:\n"
                                   "  - type: cone\n    center: [0, 0, 0]\n");
    EXPECT_FAIL(t, "type:", "cone",
                "colliders.0.type: expected one of plane, sphere, box, capsule, mesh, got 'cone'");
    t = cat(BASE_HEAD, "cloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\ncolliders:\n"
                       "  - {type: mesh, file: bunny.obj}\n");
    /* mesh colliders load their OBJ: a missing file is an I/O error at the collider's line */
    expect_fail_at("bad.yaml", t, NULL, 0, CB_ERR_IO, "file:", "bunny.obj", 1, "bunny.obj: cannot read");
}

static void test_restitution_above_one(void)
{
    const char *t = cat(BASE_HEAD, "cloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\ncolliders:\n"
                                   "  - type: sphere\n    center: [0, 0, 0]\n    radius: 0.5\n"
                                   "    restitution: 1.5\n");
    EXPECT_FAIL(t, "restitution:", "1.5", "colliders.0.restitution: expected a value in [0, 1], got 1.5");
}

static void test_zero_plane_normal(void)
{
    const char *t = cat(BASE_HEAD, "cloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\ncolliders:\n"
                                   "  - {type: plane, point: [0, 0, 0], normal: [0, 0, 0]}\n");
    EXPECT_FAIL(t, "normal:", "[", "colliders.0.normal: expected a non-zero vector");
}

static void test_bad_pins(void)
{
    const char *t = cat(BASE_HEAD, "cloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\n  pins:\n"
                                   "    - {select: corners, indices: [0]}\n");
    EXPECT_FAIL(t, "pins:", "{select", "exactly one of select, indices, box");
    t = cat(BASE_HEAD, "cloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\n  pins:\n"
                       "    - {indices: [0, -2]}\n");
    EXPECT_FAIL(t, "indices:", "-2", "cloth.pins.0.indices[1]: expected a vertex index >= 0, got -2");
    t = cat(BASE_HEAD, "cloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\n  pins:\n"
                       "    - {select: middle}\n");
    EXPECT_FAIL(t, "select:", "middle", "expected one of corners, corners_top");
}

static void test_yaml_syntax_error(void)
{
    const char *t = "name: test\ndt: 0.01\n  duration: 1\ncloth: {}\n";
    expect_fail_at("syntax.yaml", t, NULL, 0, CB_ERR_INPUT, "duration", "duration", 0,
                   "YAML syntax error: ");
    t = "name: test\ndt: [0.01, 0.02\nduration: 1\n";
    cb_yaml *y = NULL;
    cb_error err;
    cb_error_clear(&err);
    CU_ASSERT_EQUAL(cb_yaml_load_string(t, "flow.yaml", &y, &err), CB_ERR_INPUT);
    CU_ASSERT_PTR_NULL(y);
    CU_ASSERT(starts_with(err.message, "flow.yaml:"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "YAML syntax error: "));
}

static void test_duplicate_key(void)
{
    const char *t = "name: test\ndt: 0.01\nduration: 1\ndt: 0.02\ncloth: {}\n";
    int l1, c1;
    locate(t, "dt", "dt", &l1, &c1);
    char want[80];
    snprintf(want, sizeof want, "duplicate key 'dt' (first defined at line %d, again at line", l1);
    expect_fail_at("dup.yaml", t, NULL, 0, CB_ERR_INPUT, "dt: 0.02", "dt", 1, want);
}

static void test_anchor_alias_tag_rejected(void)
{
    const char *t = "name: test\ng: &g [0, 0, -1]\ngravity: *g\n";
    expect_fail_at("anchor.yaml", t, NULL, 0, CB_ERR_INPUT, "&g", "&g", 1, "anchors (&g) are not supported");
    t = "name: test\ndt: !!float 0.01\n";
    expect_fail_at("tag.yaml", t, NULL, 0, CB_ERR_INPUT, "!!float", "!!float", 1, "tags");
}

static void test_empty_document(void)
{
    expect_fail_at("empty.yaml", "# nothing here\n", NULL, 0, CB_ERR_INPUT, NULL, NULL, 0,
                   "empty YAML document");
}

static void test_unreadable_file(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/does-not-exist.yaml", cb_test_tmpdir());
    cb_scene *s = NULL;
    cb_error err;
    cb_error_clear(&err);
    CU_ASSERT_EQUAL(cb_scene_load(path, NULL, 0, &s, &err), CB_ERR_IO);
    CU_ASSERT_PTR_NULL(s);
    char want[1100];
    snprintf(want, sizeof want, "%s: cannot read: %s", path, strerror(ENOENT));
    CU_ASSERT_STRING_EQUAL(err.message, want);
}

static void test_bad_set(void)
{
    const char *t = cat(BASE_HEAD, "cloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\n");
    const char *path = cb_test_write_tmp("set.yaml", t);
    char file[1024];
    snprintf(file, sizeof file, "%s", path);
    cb_scene *s = NULL;
    cb_error err;

    const char *noeq[] = { "dt0.001" };
    cb_error_clear(&err);
    CU_ASSERT_EQUAL(cb_scene_load(file, noeq, 1, &s, &err), CB_ERR_INPUT);
    CU_ASSERT_PTR_NULL(s);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "malformed assignment 'dt0.001'"));

    const char *into_scalar[] = { "dt.x=1" };
    cb_error_clear(&err);
    CU_ASSERT_EQUAL(cb_scene_load(file, into_scalar, 1, &s, &err), CB_ERR_INPUT);
    int line, col;
    locate(t, "dt:", "0.01", &line, &col);
    char want[1200];
    snprintf(want, sizeof want, "it is a scalar (%s:%d:%d)", file, line, col);
    CU_ASSERT(starts_with(err.message, "--set dt.x: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, want));

    /* a value that is wrong for the scene is reported against the --set, not the file */
    const char *bad_value[] = { "cloth.density=-1" };
    cb_error_clear(&err);
    CU_ASSERT_EQUAL(cb_scene_load(file, bad_value, 1, &s, &err), CB_ERR_INPUT);
    CU_ASSERT(starts_with(err.message, "--set cloth.density: cloth.density: expected a value > 0, got -1"));

    const char *bad_yaml[] = { "gravity=[0, 0" };
    cb_error_clear(&err);
    CU_ASSERT_EQUAL(cb_scene_load(file, bad_yaml, 1, &s, &err), CB_ERR_INPUT);
    CU_ASSERT(starts_with(err.message, "--set gravity: YAML syntax error in the value '[0, 0': "));

    const char *bad_index[] = { "gravity.7=1" };
    cb_error_clear(&err);
    CU_ASSERT_EQUAL(cb_yaml_set(NULL, bad_index[0], "x", &err), CB_ERR_INPUT);
    cb_error_clear(&err);
    const char *gt = cat(BASE_HEAD, "gravity: [0, 0, -1]\ncloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\n");
    path = cb_test_write_tmp("set2.yaml", gt);
    snprintf(file, sizeof file, "%s", path);
    CU_ASSERT_EQUAL(cb_scene_load(file, bad_index, 1, &s, &err), CB_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "index 7 out of range"));

    const char *unknown[] = { "cloth.colour=red" };
    cb_error_clear(&err);
    CU_ASSERT_EQUAL(cb_scene_load(file, unknown, 1, &s, &err), CB_ERR_INPUT);
    CU_ASSERT(starts_with(err.message, "--set cloth.colour: unknown key 'colour' in cloth"));
    CU_ASSERT_PTR_NULL(s);
}

/* --------------------------------------------------------------- good scenes */

static const char *const FULL =
    "name: full\n"
    "duration: 2.0\n"
    "dt: 0.005\n"
    "frame_rate: 30\n"
    "gravity: [0.5, 0, -9.0]\n"
    "log_every: 4\n"
    "bound: 50\n"
    "expensive_every: 0\n"
    "cloth:\n"
    "  grid: {nx: 7, ny: 5, size: [2.0, 1.5], origin: [-1, -0.75, 1.25], plane: xz, diagonal: left}\n"
    "  density: 0.25\n"
    "  line_density: 0.125\n"
    "  initial_stretch: 1.05\n"
    "  stretch: 500\n"
    "  bend: 2.0e-3\n"
    "  thickness: 0.004\n"
    "  velocity: [1, 2, 3]\n"
    "  angular_velocity: [0, 0, 0.5]\n"
    "  pins:\n"
    "    - {select: corners_top}\n"
    "    - select: left\n"
    "      velocity: [0, 0, 0.1]\n"
    "    - {indices: [0, 4, 9]}\n"
    "    - {box: {min: [-1, -1, -1], max: [0, 1, 2]}}\n"
    "colliders:\n"
    "  - {type: plane, point: [0, 0, -0.5], normal: [0, 0, 2]}\n"
    "  - {type: sphere, center: [0, 0, 0.5], radius: 0.3, friction: 0.3, restitution: 0.25,\n"
    "     velocity: [0, 0.1, 0]}\n"
    "  - type: box\n"
    "    center: [1, 2, 3]\n"
    "    size: [0.2, 0.4, 0.6]\n"
    "    rotation: {axis: [0, 0, 3], angle: 90}\n"
    "  - {type: capsule, p0: [0, 0, 0], p1: [1, 0, 0], radius: 0.05}\n"
    "  - {type: plane, point: [0, 0, 0], normal: [1, 1, 0]}\n"
    "solvers:\n"
    "  pbd: {iterations: 12, stiffness: 0.9}\n"
    "  fms:\n";

static void test_full_scene(void)
{
    const char *path = cb_test_write_tmp("full.yaml", FULL);
    char file[1024];
    snprintf(file, sizeof file, "%s", path);
    cb_scene *s = NULL;
    cb_error err;
    cb_error_clear(&err);
    int rc = cb_scene_load(file, NULL, 0, &s, &err);
    if (rc) fprintf(stderr, "\n  %s\n", err.message);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_STRING_EQUAL(s->name, "full");
    CU_ASSERT_STRING_EQUAL(s->path, file);
    CU_ASSERT_STRING_EQUAL(s->dir, cb_test_tmpdir());
    CU_ASSERT_EQUAL(s->duration, 2.0);
    CU_ASSERT_EQUAL(s->dt, 0.005);
    CU_ASSERT_EQUAL(s->frame_rate, 30.0);
    CU_ASSERT(s->gravity[0] == 0.5 && s->gravity[1] == 0.0 && s->gravity[2] == -9.0);
    CU_ASSERT_EQUAL(s->log_every, 4);
    CU_ASSERT_EQUAL(s->bound, 50.0);
    CU_ASSERT_EQUAL(s->expensive_every, 0);
    CU_ASSERT_EQUAL(cb_scene_steps(s), 400);
    /* 1 / (30 * 0.005) = 6.67 -> 7 */
    CU_ASSERT_EQUAL(cb_scene_steps_per_frame(s), 7);

    const cb_cloth_def *c = &s->cloth;
    CU_ASSERT_EQUAL(c->use_grid, 1);
    CU_ASSERT_PTR_NULL(c->mesh_path);
    CU_ASSERT(c->grid.nx == 7 && c->grid.ny == 5);
    CU_ASSERT(c->grid.size[0] == 2.0 && c->grid.size[1] == 1.5);
    CU_ASSERT(c->grid.origin[0] == -1.0 && c->grid.origin[1] == -0.75 && c->grid.origin[2] == 1.25);
    CU_ASSERT_EQUAL(c->grid.plane, CB_PLANE_XZ);
    CU_ASSERT_EQUAL(c->grid.diagonal, CB_DIAG_LEFT);
    CU_ASSERT_EQUAL(c->density, 0.25);
    CU_ASSERT_EQUAL(c->line_density, 0.125);
    CU_ASSERT_EQUAL(c->initial_stretch, 1.05);
    CU_ASSERT_EQUAL(c->stretch, 500.0);
    CU_ASSERT_EQUAL(c->bend, 2.0e-3);
    CU_ASSERT_EQUAL(c->thickness, 0.004);
    CU_ASSERT(c->velocity[0] == 1.0 && c->velocity[1] == 2.0 && c->velocity[2] == 3.0);
    CU_ASSERT(c->angular_velocity[2] == 0.5 && c->angular_velocity[0] == 0.0);

    CU_ASSERT_EQUAL_FATAL(c->npins, 4);
    int line, col;
    CU_ASSERT_EQUAL(c->pins[0].kind, CB_PIN_CORNERS_TOP);
    locate(FULL, "pins:", "{select: corners_top}", &line, &col);
    char at[32];
    snprintf(at, sizeof at, ":%d:", line);
    CU_ASSERT_PTR_NOT_NULL(strstr(c->pins[0].where, at));
    CU_ASSERT_EQUAL(c->pins[1].kind, CB_PIN_SIDE_LEFT);
    CU_ASSERT_EQUAL(c->pins[1].velocity[2], 0.1);
    locate(FULL, "pins:", "select: left", &line, &col);
    snprintf(at, sizeof at, ":%d:", line);
    CU_ASSERT_PTR_NOT_NULL(strstr(c->pins[1].where, at));
    CU_ASSERT_EQUAL(c->pins[2].kind, CB_PIN_INDICES);
    CU_ASSERT_EQUAL_FATAL(c->pins[2].nindices, 3);
    CU_ASSERT(c->pins[2].indices[0] == 0 && c->pins[2].indices[1] == 4 && c->pins[2].indices[2] == 9);
    CU_ASSERT_EQUAL(c->pins[3].kind, CB_PIN_BOX);
    CU_ASSERT(c->pins[3].box_min[0] == -1.0 && c->pins[3].box_max[2] == 2.0);
    CU_ASSERT(c->pins[3].velocity[0] == 0.0 && c->pins[3].velocity[2] == 0.0);

    CU_ASSERT_EQUAL_FATAL(s->ncolliders, 5);
    const cb_collider *pl = &s->colliders[0], *sp = &s->colliders[1], *bx = &s->colliders[2],
                      *cp = &s->colliders[3], *p2 = &s->colliders[4];
    CU_ASSERT_EQUAL(pl->type, CB_COLLIDER_PLANE);
    CU_ASSERT(pl->normal[0] == 0.0 && pl->normal[1] == 0.0 && pl->normal[2] == 1.0);
    CU_ASSERT_EQUAL(pl->center[2], -0.5);
    CU_ASSERT_EQUAL(pl->friction, 0.0);
    CU_ASSERT_EQUAL(pl->restitution, 0.0);
    locate(FULL, "colliders:", "{type: plane", &line, &col);
    CU_ASSERT_EQUAL(pl->line, line);
    CU_ASSERT_EQUAL(sp->type, CB_COLLIDER_SPHERE);
    CU_ASSERT_EQUAL(sp->radius, 0.3);
    CU_ASSERT_EQUAL(sp->center[2], 0.5);
    CU_ASSERT_EQUAL(sp->friction, 0.3);
    CU_ASSERT_EQUAL(sp->restitution, 0.25);
    CU_ASSERT_EQUAL(sp->velocity[1], 0.1);
    CU_ASSERT_EQUAL(bx->type, CB_COLLIDER_BOX);
    CU_ASSERT(bx->center[0] == 1.0 && bx->center[1] == 2.0 && bx->center[2] == 3.0);
    CU_ASSERT_DOUBLE_EQUAL(bx->half[0], 0.1, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(bx->half[1], 0.2, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(bx->half[2], 0.3, 1e-15);
    /* 90 degrees about +z: x -> y, y -> -x, z -> z */
    const double want_axes[3][3] = { { 0, 1, 0 }, { -1, 0, 0 }, { 0, 0, 1 } };
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 3; i++) CU_ASSERT_DOUBLE_EQUAL(bx->axes[k][i], want_axes[k][i], 1e-15);
    CU_ASSERT_EQUAL(cp->type, CB_COLLIDER_CAPSULE);
    CU_ASSERT(cp->p1[0] == 1.0 && cp->p0[0] == 0.0 && cp->radius == 0.05);
    CU_ASSERT_DOUBLE_EQUAL(p2->normal[0], sqrt(0.5), 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(p2->normal[1], sqrt(0.5), 1e-15);
    CU_ASSERT_EQUAL(p2->normal[2], 0.0);

    /* solver blocks: a map, and an empty one (all defaults) */
    cb_params pp = cb_scene_params(s, "pbd");
    CU_ASSERT_PTR_NOT_NULL(pp.block);
    CU_ASSERT_STRING_EQUAL(pp.label, file);
    CU_ASSERT_STRING_EQUAL(pp.solver, "pbd");
    int it = 0;
    CU_ASSERT_EQUAL(cb_params_int(&pp, "iterations", 3, 1, 10000, &it, "test", &err), 0);
    CU_ASSERT_EQUAL(it, 12);
    cb_params pf = cb_scene_params(s, "fms");
    CU_ASSERT_PTR_NULL(pf.block);
    cb_params pn = cb_scene_params(s, "acm");
    CU_ASSERT_PTR_NULL(pn.block);
    cb_scene_free(&s);
    CU_ASSERT_PTR_NULL(s);
}

static void test_box_rotation_general_axis(void)
{
    const char *t = cat(BASE_HEAD, "cloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\ncolliders:\n"
                                   "  - {type: box, center: [0, 0, 0], size: [1, 2, 3],\n"
                                   "     rotation: {axis: [1, 2, 2], angle: 37}}\n");
    cb_scene *s = NULL;
    cb_error err;
    cb_error_clear(&err);
    CU_ASSERT_EQUAL_FATAL(cb_scene_load_string(t, "rot", ".", NULL, 0, &s, &err), 0);
    const cb_collider *b = &s->colliders[0];
    const double k[3] = { 1.0 / 3, 2.0 / 3, 2.0 / 3 };
    double th = 37.0 * 3.14159265358979323846 / 180.0;
    /* orthonormal, right-handed, fixes the axis, turns each axis by the angle about k */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double d = 0;
            for (int q = 0; q < 3; q++) d += b->axes[i][q] * b->axes[j][q];
            CU_ASSERT_DOUBLE_EQUAL(d, i == j ? 1.0 : 0.0, 1e-14);
        }
    double c[3] = { b->axes[0][1] * b->axes[1][2] - b->axes[0][2] * b->axes[1][1],
                    b->axes[0][2] * b->axes[1][0] - b->axes[0][0] * b->axes[1][2],
                    b->axes[0][0] * b->axes[1][1] - b->axes[0][1] * b->axes[1][0] };
    for (int q = 0; q < 3; q++) CU_ASSERT_DOUBLE_EQUAL(c[q], b->axes[2][q], 1e-14);
    for (int q = 0; q < 3; q++) {
        double rk = 0;
        for (int j = 0; j < 3; j++) rk += k[j] * b->axes[j][q];
        CU_ASSERT_DOUBLE_EQUAL(rk, k[q], 1e-14);
    }
    for (int j = 0; j < 3; j++) {
        /* angle between the components of e_j and R e_j perpendicular to k */
        double e[3] = { 0, 0, 0 };
        e[j] = 1;
        double u[3], v[3], uu = 0, vv = 0, uv = 0;
        for (int q = 0; q < 3; q++) {
            u[q] = e[q] - k[j] * k[q];
            v[q] = b->axes[j][q] - k[j] * k[q];
            uu += u[q] * u[q];
            vv += v[q] * v[q];
            uv += u[q] * v[q];
        }
        CU_ASSERT_DOUBLE_EQUAL(uv / sqrt(uu * vv), cos(th), 1e-12);
    }
    cb_scene_free(&s);
}

static void test_defaults_and_mesh_path(void)
{
    const char *t = "name: minimal\nduration: 1\ndt: 0.01\ncloth:\n  mesh: meshes/shirt.obj\n";
    cb_scene *s = NULL;
    cb_error err;
    cb_error_clear(&err);
    CU_ASSERT_EQUAL_FATAL(cb_scene_load_string(t, "mem.yaml", "/data/scenes", NULL, 0, &s, &err), 0);
    CU_ASSERT_EQUAL(s->frame_rate, 60.0);
    CU_ASSERT(s->gravity[0] == 0.0 && s->gravity[1] == 0.0 && s->gravity[2] == -9.81);
    CU_ASSERT_EQUAL(s->log_every, 1);
    CU_ASSERT_EQUAL(s->bound, 1000.0);
    CU_ASSERT_EQUAL(s->expensive_every, 1);
    CU_ASSERT_EQUAL(s->cloth.use_grid, 0);
    CU_ASSERT_STRING_EQUAL(s->cloth.mesh_path, "/data/scenes/meshes/shirt.obj");
    CU_ASSERT_EQUAL(s->cloth.density, 0.1);
    CU_ASSERT_EQUAL(s->cloth.line_density, 0.0);
    CU_ASSERT_EQUAL(s->cloth.initial_stretch, 1.0);
    CU_ASSERT_EQUAL(s->cloth.stretch, 1000.0);
    CU_ASSERT_EQUAL(s->cloth.bend, 1e-4);
    CU_ASSERT_EQUAL(s->cloth.thickness, 0.002);
    CU_ASSERT_EQUAL(s->cloth.npins, 0);
    CU_ASSERT_EQUAL(s->ncolliders, 0);
    CU_ASSERT_EQUAL(cb_scene_steps(s), 100);
    /* 1 / (60 * 0.01) = 1.67 -> 2 */
    CU_ASSERT_EQUAL(cb_scene_steps_per_frame(s), 2);
    cb_scene_free(&s);

    t = "name: g\nduration: 1\ndt: 0.1\nframe_rate: 100\ncloth:\n  mesh: /abs/m.obj\n";
    cb_error_clear(&err);
    CU_ASSERT_EQUAL_FATAL(cb_scene_load_string(t, "mem3.yaml", "rel", NULL, 0, &s, &err), 0);
    CU_ASSERT_STRING_EQUAL(s->cloth.mesh_path, "/abs/m.obj");
    CU_ASSERT_EQUAL(s->cloth.grid.plane, CB_PLANE_XY);
    /* 1 / (100 * 0.1) = 0.1 -> at least one step per frame */
    CU_ASSERT_EQUAL(cb_scene_steps_per_frame(s), 1);
    cb_scene_free(&s);
}

/* --------------------------------------------------------------- --set */

static const cb_yaml *at(const cb_yaml *root, const char *a, const char *b, int idx)
{
    const cb_yaml *n = cb_yaml_get(root, a);
    if (b) n = cb_yaml_get(n, b);
    if (idx >= 0) n = (n && n->kind == CB_YAML_SEQ && idx < n->n) ? n->items[idx] : NULL;
    return n;
}

static void test_set_overrides(void)
{
    const char *path = cb_test_write_tmp("full_set.yaml", FULL);
    char file[1024];
    snprintf(file, sizeof file, "%s", path);
    const char *sets[] = { "dt=0.001", "gravity=[0, 0, -1.5]", "colliders.1.radius=0.2",
                           "cloth.grid.nx=11", "solvers.fms.iterations=7", "solvers.xpbd.substeps=3",
                           "colliders.0.normal.2=5", "name='quoted name'" };
    cb_scene *s = NULL;
    cb_error err;
    cb_error_clear(&err);
    int rc = cb_scene_load(file, sets, (int)(sizeof sets / sizeof sets[0]), &s, &err);
    if (rc) fprintf(stderr, "\n  %s\n", err.message);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(s->dt, 0.001);
    CU_ASSERT(s->gravity[0] == 0.0 && s->gravity[1] == 0.0 && s->gravity[2] == -1.5);
    CU_ASSERT_EQUAL(s->colliders[1].radius, 0.2);
    CU_ASSERT_EQUAL(s->colliders[1].friction, 0.3); /* its siblings are untouched */
    CU_ASSERT_EQUAL(s->cloth.grid.nx, 11);
    CU_ASSERT_EQUAL(s->cloth.grid.ny, 5);
    CU_ASSERT_EQUAL(s->colliders[0].normal[2], 1.0);
    CU_ASSERT_STRING_EQUAL(s->name, "quoted name");
    CU_ASSERT_EQUAL(cb_scene_steps(s), 2000);
    int v = 0;
    cb_params pf = cb_scene_params(s, "fms");
    CU_ASSERT_EQUAL(cb_params_int(&pf, "iterations", 1, 1, 100, &v, "test", &err), 0);
    CU_ASSERT_EQUAL(v, 7);
    cb_params px = cb_scene_params(s, "xpbd");
    CU_ASSERT_EQUAL(cb_params_int(&px, "substeps", 1, 1, 100, &v, "test", &err), 0);
    CU_ASSERT_EQUAL(v, 3);

    /* the overrides show in the stored text: re-parse it and look the values up */
    CU_ASSERT_PTR_NOT_NULL_FATAL(s->text);
    cb_yaml *back = NULL;
    CU_ASSERT_EQUAL_FATAL(cb_yaml_load_string(s->text, "text", &back, &err), 0);
    const cb_yaml *n = at(back, "dt", NULL, -1);
    CU_ASSERT(n && n->kind == CB_YAML_SCALAR && strcmp(n->scalar, "0.001") == 0);
    n = at(back, "gravity", NULL, 2);
    CU_ASSERT(n && strcmp(n->scalar, "-1.5") == 0);
    n = cb_yaml_get(at(back, "colliders", NULL, 1), "radius");
    CU_ASSERT(n && strcmp(n->scalar, "0.2") == 0);
    n = at(back, "solvers", "fms", -1);
    CU_ASSERT(n && n->kind == CB_YAML_MAP && cb_yaml_get(n, "iterations") &&
              strcmp(cb_yaml_get(n, "iterations")->scalar, "7") == 0);
    n = at(back, "name", NULL, -1);
    CU_ASSERT(n && n->quoted && strcmp(n->scalar, "quoted name") == 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(s->text, "dt: 0.001\n"));
    cb_yaml_free(&back);
    cb_scene_free(&s);
}

static void test_set_appends(void)
{
    const char *t = cat(BASE_HEAD, "cloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\n");
    const char *sets[] = { "colliders.0.type=sphere", "colliders.0.center=[0, 0, 1]",
                           "colliders.0.radius=0.25", "colliders.1={type: plane, point: [0, 0, 0], normal: [0, 0, 1]}",
                           "cloth.pins.0.select=corners" };
    cb_scene *s = NULL;
    cb_error err;
    cb_error_clear(&err);
    int rc = cb_scene_load_string(t, "app.yaml", ".", sets, 5, &s, &err);
    if (rc) fprintf(stderr, "\n  %s\n", err.message);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL_FATAL(s->ncolliders, 2);
    CU_ASSERT_EQUAL(s->colliders[0].type, CB_COLLIDER_SPHERE);
    CU_ASSERT_EQUAL(s->colliders[0].radius, 0.25);
    CU_ASSERT_EQUAL(s->colliders[0].center[2], 1.0);
    CU_ASSERT_EQUAL(s->colliders[1].type, CB_COLLIDER_PLANE);
    CU_ASSERT_EQUAL_FATAL(s->cloth.npins, 1);
    CU_ASSERT_EQUAL(s->cloth.pins[0].kind, CB_PIN_CORNERS);
    cb_scene_free(&s);

    const char *gap[] = { "colliders.0.type=sphere", "colliders.2.type=sphere" };
    cb_error_clear(&err);
    CU_ASSERT_EQUAL(cb_scene_load_string(t, "app.yaml", ".", gap, 2, &s, &err), CB_ERR_INPUT);
    CU_ASSERT(starts_with(err.message, "--set colliders.2.type: index 2 out of range: colliders"));
    CU_ASSERT_PTR_NULL(s);
}

/* --------------------------------------------------------------- round trip */

static int tree_equal(const cb_yaml *a, const cb_yaml *b)
{
    if (!a || !b) return a == b;
    if (a->kind != b->kind || a->n != b->n) return 0;
    if (a->kind == CB_YAML_SCALAR) return a->quoted == b->quoted && strcmp(a->scalar, b->scalar) == 0;
    for (int i = 0; i < a->n; i++) {
        if (a->kind == CB_YAML_MAP && strcmp(a->keys[i], b->keys[i]) != 0) return 0;
        if (!tree_equal(a->items[i], b->items[i])) return 0;
    }
    return 1;
}

static void check_round_trip(const cb_yaml *t, const char *label)
{
    char *text = cb_yaml_emit(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    cb_yaml *back = NULL;
    cb_error err;
    cb_error_clear(&err);
    int rc = cb_yaml_load_string(text, label, &back, &err);
    if (rc) fprintf(stderr, "\n  %s: %s\n---\n%s---\n", label, err.message, text);
    CU_ASSERT_EQUAL(rc, 0);
    int eq = tree_equal(t, back);
    if (!eq) fprintf(stderr, "\n  %s: round trip differs:\n%s---\n", label, text);
    CU_ASSERT(eq);
    /* emitting again gives the same text */
    char *again = cb_yaml_emit(back);
    CU_ASSERT(again && strcmp(again, text) == 0);
    cb_yaml *clone = cb_yaml_clone(t);
    CU_ASSERT(tree_equal(t, clone));
    cb_yaml_free(&clone);
    free(again);
    free(text);
    cb_yaml_free(&back);
}

static void test_round_trip(void)
{
    static const char *const tricky =
        "plain: hello world\n"
        "inner_tab: a\tb\n"
        "quoted_number: \"0.01\"\n"
        "quoted_bool: 'yes'\n"
        "empty_value:\n"
        "empty_string: ''\n"
        "colon: \"a: b\"\n"
        "hash: \"x #y\"\n"
        "dash: \"-\"\n"
        "escapes: \"tab\\there \\\"q\\\" back\\\\slash\"\n"
        "literal: |\n  line one\n  line two\n"
        "unicode: \"caf\xc3\xa9\"\n"
        "\"key with: colon\": 1\n"
        "\"[odd key]\": 2\n"
        "'&amp': 3\n"
        "'': empty key\n"
        "flow_mixed: [1, 'two', \"a,b\", '']\n"
        "commas: [a b, c]\n"
        "nested:\n  - [1, 2]\n  - - {x: 1}\n    - y\n  - {}\n  - []\n  -\n  - {a: [1, {b: c}]}\n"
        "map_in_seq:\n  - type: sphere\n    center: [0, 0, 1]\n  - {type: plane}\n"
        "deep: {a: {b: {c: [[1, [2, 3]], x]}}}\n";
    cb_yaml *t = NULL;
    cb_error err;
    cb_error_clear(&err);
    int rc = cb_yaml_load_string(tricky, "tricky", &t, &err);
    if (rc) fprintf(stderr, "\n  %s\n", err.message);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT(cb_yaml_get(t, "quoted_number")->quoted);
    CU_ASSERT(!cb_yaml_get(t, "plain")->quoted);
    CU_ASSERT_STRING_EQUAL(cb_yaml_get(t, "literal")->scalar, "line one\nline two\n");
    check_round_trip(t, "tricky");
    cb_yaml_free(&t);

    CU_ASSERT_EQUAL_FATAL(cb_yaml_load_string(FULL, "full", &t, &err), 0);
    check_round_trip(t, "full");
    cb_yaml_free(&t);

    /* every shipped scene */
    DIR *d = opendir("data/scenes");
    int nscenes = 0;
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t len = strlen(e->d_name);
            if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0) continue;
            char path[1024];
            snprintf(path, sizeof path, "data/scenes/%s", e->d_name);
            cb_error_clear(&err);
            rc = cb_yaml_load_file(path, &t, &err);
            if (rc) fprintf(stderr, "\n  %s\n", err.message);
            CU_ASSERT_EQUAL(rc, 0);
            if (!rc) check_round_trip(t, path);
            cb_yaml_free(&t);
            /* and every shipped scene loads */
            cb_scene *s = NULL;
            rc = cb_scene_load(path, NULL, 0, &s, &err);
            if (rc) fprintf(stderr, "\n  %s\n", err.message);
            CU_ASSERT_EQUAL(rc, 0);
            cb_scene_free(&s);
            nscenes++;
        }
        closedir(d);
    }
    fprintf(stderr, " [%d shipped scenes] ", nscenes);
}

/* --------------------------------------------------------------- typed reads */

static void test_typed_reads(void)
{
    static const char *const text =
        "a: 1.5\nb: 1.0abc\nc: ''\nd: 3\ne: 2.5\nf: yes\ng: Off\nh: maybe\ni: [1, 2]\n"
        "j: 99999999999\nk: -nan\n";
    cb_yaml *t = NULL;
    cb_error err;
    cb_error_clear(&err);
    CU_ASSERT_EQUAL_FATAL(cb_yaml_load_string(text, "typed.yaml", &t, &err), 0);
    double x = 0;
    int i = 0;
    CU_ASSERT_EQUAL(cb_yaml_double(cb_yaml_get(t, "a"), "typed.yaml", "a", &x, &err), 0);
    CU_ASSERT_EQUAL(x, 1.5);
    CU_ASSERT_EQUAL(cb_yaml_double(cb_yaml_get(t, "b"), "typed.yaml", "b", &x, &err), CB_ERR_INPUT);
    CU_ASSERT_STRING_EQUAL(err.message, "typed.yaml:2:4: b: expected a number, got '1.0abc'");
    CU_ASSERT_EQUAL(cb_yaml_double(cb_yaml_get(t, "c"), "typed.yaml", "c", &x, &err), CB_ERR_INPUT);
    CU_ASSERT(starts_with(err.message, "typed.yaml:3:4: c: expected a number"));
    CU_ASSERT_EQUAL(cb_yaml_int(cb_yaml_get(t, "d"), "typed.yaml", "d", &i, &err), 0);
    CU_ASSERT_EQUAL(i, 3);
    CU_ASSERT_EQUAL(cb_yaml_int(cb_yaml_get(t, "e"), "typed.yaml", "e", &i, &err), CB_ERR_INPUT);
    CU_ASSERT_STRING_EQUAL(err.message, "typed.yaml:5:4: e: expected an integer, got '2.5'");
    CU_ASSERT_EQUAL(cb_yaml_int(cb_yaml_get(t, "j"), "typed.yaml", "j", &i, &err), CB_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "out of range"));
    CU_ASSERT_EQUAL(cb_yaml_double(cb_yaml_get(t, "k"), "typed.yaml", "k", &x, &err), CB_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "expected a finite number"));
    i = -1;
    CU_ASSERT_EQUAL(cb_yaml_bool(cb_yaml_get(t, "f"), "typed.yaml", "f", &i, &err), 0);
    CU_ASSERT_EQUAL(i, 1);
    CU_ASSERT_EQUAL(cb_yaml_bool(cb_yaml_get(t, "g"), "typed.yaml", "g", &i, &err), 0);
    CU_ASSERT_EQUAL(i, 0);
    CU_ASSERT_EQUAL(cb_yaml_bool(cb_yaml_get(t, "h"), "typed.yaml", "h", &i, &err), CB_ERR_INPUT);
    CU_ASSERT(starts_with(err.message, "typed.yaml:8:4: h: expected true or false"));
    double v[3];
    CU_ASSERT_EQUAL(cb_yaml_vec(cb_yaml_get(t, "i"), "typed.yaml", "i", 3, v, &err), CB_ERR_INPUT);
    CU_ASSERT_STRING_EQUAL(err.message, "typed.yaml:9:4: i: expected a list of 3 numbers, got 2");
    CU_ASSERT_EQUAL(cb_yaml_vec(cb_yaml_get(t, "i"), "typed.yaml", "i", 2, v, &err), 0);
    CU_ASSERT(v[0] == 1.0 && v[1] == 2.0);
    static const char *const allowed[] = { "a", "b", NULL };
    CU_ASSERT_EQUAL(cb_yaml_check_keys(t, "typed.yaml", "the test", allowed, &err), CB_ERR_INPUT);
    CU_ASSERT_STRING_EQUAL(err.message, "typed.yaml:3:1: unknown key 'c' in the test; allowed keys: a, b");
    cb_yaml_free(&t);
    CU_ASSERT_PTR_NULL(t);
}

/* --------------------------------------------------------------- params */

static void test_params(void)
{
    static const char *const text =
        "solvers:\n"
        "  pbd:\n"
        "    iterations: 0\n"
        "    stiffness: 0.5\n"
        "    mode: fast\n"
        "    warm: on\n"
        "    foo: 1\n";
    cb_yaml *t = NULL;
    cb_error err;
    cb_error_clear(&err);
    CU_ASSERT_EQUAL_FATAL(cb_yaml_load_string(text, "p.yaml", &t, &err), 0);
    cb_params p = {.label = "p.yaml", .solver = "pbd", .block = cb_yaml_get(cb_yaml_get(t, "solvers"), "pbd")};
    cb_params none = {.label = "p.yaml", .solver = "fms"};
    int it = -1, b = -1, ch = -1;
    double st = -1;

    /* defaults when the block or the key is absent */
    CU_ASSERT_EQUAL(cb_params_int(&none, "iterations", 10, 1, 10000, &it, "test", &err), 0);
    CU_ASSERT_EQUAL(it, 10);
    CU_ASSERT_EQUAL(cb_params_double(&p, "omega", 1.25, 0, 2, &st, "test", &err), 0);
    CU_ASSERT_EQUAL(st, 1.25);
    CU_ASSERT_EQUAL(cb_params_bool(&none, "warm", 1, &b, "test", &err), 0);
    CU_ASSERT_EQUAL(b, 1);
    static const char *const modes[] = { "slow", "fast", NULL };
    CU_ASSERT_EQUAL(cb_params_choice(&none, "mode", modes, 0, &ch, "test", &err), 0);
    CU_ASSERT_EQUAL(ch, 0);

    /* values present */
    CU_ASSERT_EQUAL(cb_params_double(&p, "stiffness", 1.0, 0.0, 1.0, &st, "test", &err), 0);
    CU_ASSERT_EQUAL(st, 0.5);
    CU_ASSERT_EQUAL(cb_params_bool(&p, "warm", 0, &b, "test", &err), 0);
    CU_ASSERT_EQUAL(b, 1);
    CU_ASSERT_EQUAL(cb_params_choice(&p, "mode", modes, 0, &ch, "test", &err), 0);
    CU_ASSERT_EQUAL(ch, 1);

    /* range errors name file:line:col and the full key */
    int line, col;
    locate(text, "iterations", "0", &line, &col);
    char want[256];
    snprintf(want, sizeof want, "p.yaml:%d:%d: solvers.pbd.iterations: expected a value in [1, 10000], got 0",
             line, col);
    CU_ASSERT_EQUAL(cb_params_int(&p, "iterations", 10, 1, 10000, &it, "test", &err), CB_ERR_INPUT);
    CU_ASSERT_STRING_EQUAL(err.message, want);
    CU_ASSERT_EQUAL(cb_params_double(&p, "stiffness", 1.0, 0.75, 1.0, &st, "test", &err), CB_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "solvers.pbd.stiffness: expected a value in [0.75, 1], got 0.5"));
    static const char *const other[] = { "a", "b", NULL };
    CU_ASSERT_EQUAL(cb_params_choice(&p, "mode", other, 0, &ch, "test", &err), CB_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "solvers.pbd.mode: expected one of a, b, got 'fast'"));

    /* unknown keys: the allowed ones are those the getters were asked for */
    cb_params q;
    CU_ASSERT_EQUAL_FATAL(cb_params_begin(&p, &q, &err), 0);
    CU_ASSERT_EQUAL(cb_params_int(&q, "iterations", 10, 0, 10000, &it, "test", &err), 0);
    CU_ASSERT_EQUAL(cb_params_double(&q, "stiffness", 1.0, 0.0, 1.0, &st, "test", &err), 0);
    CU_ASSERT_EQUAL(cb_params_choice(&q, "mode", modes, 0, &ch, "test", &err), 0);
    CU_ASSERT_EQUAL(cb_params_bool(&q, "warm", 0, &b, "test", &err), 0);
    locate(text, "foo", "foo", &line, &col);
    snprintf(want, sizeof want, "p.yaml:%d:%d: unknown key 'foo' in solvers.pbd; allowed keys: "
             "iterations, stiffness, mode, warm", line, col);
    CU_ASSERT_EQUAL(cb_params_end(&p, &q, 0, &err), CB_ERR_INPUT);
    CU_ASSERT_STRING_EQUAL(err.message, want);
    CU_ASSERT_PTR_NULL(q.rec);
    CU_ASSERT_EQUAL_FATAL(cb_params_begin(&none, &q, &err), 0);
    CU_ASSERT_EQUAL(cb_params_end(&none, &q, 0, &err), 0);

    /* one-line text: "{}" when absent; else one line that parses back to the block */
    char *s0 = cb_params_text(&none);
    CU_ASSERT_STRING_EQUAL(s0, "{}");
    free(s0);
    char *s1 = cb_params_text(&p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s1);
    CU_ASSERT_PTR_NULL(strchr(s1, '\n'));
    CU_ASSERT(s1[0] == '{');
    cb_yaml *back = NULL;
    CU_ASSERT_EQUAL(cb_yaml_load_string(s1, "text", &back, &err), 0);
    CU_ASSERT(tree_equal(back, p.block));
    cb_yaml_free(&back);
    free(s1);
    cb_yaml_free(&t);
}

CB_TEST_MAIN("scene",
    CB_TEST(test_unknown_top_key),
    CB_TEST(test_unknown_cloth_key),
    CB_TEST(test_unknown_collider_key),
    CB_TEST(test_wrong_type),
    CB_TEST(test_trailing_garbage_and_quoted_number),
    CB_TEST(test_dt_not_positive),
    CB_TEST(test_dt_above_duration),
    CB_TEST(test_negative_density),
    CB_TEST(test_missing_cloth),
    CB_TEST(test_grid_and_mesh),
    CB_TEST(test_nx_too_small),
    CB_TEST(test_bad_collider_type),
    CB_TEST(test_restitution_above_one),
    CB_TEST(test_zero_plane_normal),
    CB_TEST(test_bad_pins),
    CB_TEST(test_yaml_syntax_error),
    CB_TEST(test_duplicate_key),
    CB_TEST(test_anchor_alias_tag_rejected),
    CB_TEST(test_empty_document),
    CB_TEST(test_unreadable_file),
    CB_TEST(test_bad_set),
    CB_TEST(test_full_scene),
    CB_TEST(test_box_rotation_general_axis),
    CB_TEST(test_defaults_and_mesh_path),
    CB_TEST(test_set_overrides),
    CB_TEST(test_set_appends),
    CB_TEST(test_round_trip),
    CB_TEST(test_typed_reads),
    CB_TEST(test_params))
