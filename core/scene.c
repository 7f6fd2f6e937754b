/* core/scene.c — scene files: YAML tree (after --set overrides) -> cb_scene
 * (see scene.h and the README, "Scene files"). Every rejected value is reported as
 * "FILE:LINE:COL: key.path: expected ..., got ..." and every unknown key with the
 * list of allowed keys. Mesh-file contents and pin indices are checked later, when
 * the world is created; solver parameter blocks are checked by the solvers. */
#include "core/scene.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/material.h"
#include "core/vec3.h"

static const double PI = 3.14159265358979323846;

typedef struct ctx {
    const char *label;
    cb_error *err;
    cb_scene *scene;   /* collects the files the scene reads (cb_scene.files) */
    cb_keys *keys;     /* the keys asked of each map: the allowed ones (core/params.h) */
} ctx;

/* A closed/open interval for range checks; infinite ends are unbounded. */
typedef struct range { double lo, hi; int lo_open, hi_open; } range;
static const range R_ANY = { -INFINITY, INFINITY, 0, 0 };
static const range R_POS = { 0.0, INFINITY, 1, 0 };
static const range R_NONNEG = { 0.0, INFINITY, 0, 0 };
static const range R_UNIT = { 0.0, 1.0, 0, 0 };

static const char *where(const ctx *c, const cb_yaml *node, char *buf, size_t size)
{
    return cb_yaml_where(node, c->label, buf, size);
}

/* map[key], noted as a key the reader asks of map (a key no getter asks for is refused
 * by check_keys, which names the keys asked: core/params.h, cb_keys). */
static const cb_yaml *ask(const ctx *c, const cb_yaml *map, const char *key)
{
    return cb_keys_ask(c->keys, map, key);
}

/* After a map's keys were read: a key of it nobody asked for is an error. */
static int check_keys(const ctx *c, const cb_yaml *map, const char *what)
{
    return cb_keys_check(c->keys, map, c->label, what, c->err);
}

static int is_null(const cb_yaml *n)
{
    return n && n->kind == CB_YAML_SCALAR && !n->quoted &&
           (n->scalar[0] == '\0' || strcmp(n->scalar, "~") == 0 || strcmp(n->scalar, "null") == 0);
}

static const char *kind_name(const cb_yaml *n)
{
    return n->kind == CB_YAML_MAP ? "a map" : n->kind == CB_YAML_SEQ ? "a list" : "a scalar";
}

static int in_range(double v, range r)
{
    if (r.lo_open ? !(v > r.lo) : !(v >= r.lo)) return 0;
    if (r.hi_open ? !(v < r.hi) : !(v <= r.hi)) return 0;
    return 1;
}

static void describe_range(range r, char *buf, size_t size)
{
    if (isinf(r.hi)) snprintf(buf, size, "a value %s %g", r.lo_open ? ">" : ">=", r.lo);
    else if (isinf(r.lo)) snprintf(buf, size, "a value %s %g", r.hi_open ? "<" : "<=", r.hi);
    else snprintf(buf, size, "a value in %c%g, %g%c", r.lo_open ? '(' : '[', r.lo, r.hi,
                  r.hi_open ? ')' : ']');
}

static int missing(const ctx *c, const cb_yaml *map, const char *key, const char *in)
{
    char w[600];
    return CB_FAIL(c->err, CB_ERR_INPUT, "%s: missing required key '%s' in %s",
                   where(c, map, w, sizeof w), key, in);
}

/* Join a path prefix and a key: "cloth" + "density" -> "cloth.density". */
static const char *path_join(char *buf, size_t size, const char *prefix, const char *key)
{
    if (prefix && prefix[0]) snprintf(buf, size, "%s.%s", prefix, key);
    else snprintf(buf, size, "%s", key);
    return buf;
}

/* A number at map[key]: default when absent (unless required), range-checked. */
static int get_double(const ctx *c, const cb_yaml *map, const char *prefix, const char *key,
                      int required, double def, range r, double *out)
{
    char what[300], w[600], rs[120];
    const cb_yaml *n = ask(c, map, key);
    if (!n) {
        if (required) return missing(c, map, key, prefix && prefix[0] ? prefix : "the scene");
        *out = def;
        return 0;
    }
    path_join(what, sizeof what, prefix, key);
    double v;
    int rc = cb_yaml_double(n, c->label, what, &v, c->err);
    if (rc) return rc;
    if (!in_range(v, r)) {
        describe_range(r, rs, sizeof rs);
        return CB_FAIL(c->err, CB_ERR_INPUT, "%s: %s: expected %s, got %s", where(c, n, w, sizeof w),
                       what, rs, n->scalar);
    }
    *out = v;
    return 0;
}

static int get_int(const ctx *c, const cb_yaml *map, const char *prefix, const char *key,
                   int required, int def, int lo, int *out)
{
    char what[300], w[600];
    const cb_yaml *n = ask(c, map, key);
    if (!n) {
        if (required) return missing(c, map, key, prefix && prefix[0] ? prefix : "the scene");
        *out = def;
        return 0;
    }
    path_join(what, sizeof what, prefix, key);
    int v;
    int rc = cb_yaml_int(n, c->label, what, &v, c->err);
    if (rc) return rc;
    if (v < lo)
        return CB_FAIL(c->err, CB_ERR_INPUT, "%s: %s: expected an integer >= %d, got %s",
                       where(c, n, w, sizeof w), what, lo, n->scalar);
    *out = v;
    return 0;
}

/* A vector of n numbers, each in range r (R_ANY for none). */
static int get_vec(const ctx *c, const cb_yaml *map, const char *prefix, const char *key,
                   int required, const double *def, int n, range r, double *out)
{
    char what[300], w[600], rs[120];
    const cb_yaml *node = ask(c, map, key);
    if (!node) {
        if (required) return missing(c, map, key, prefix && prefix[0] ? prefix : "the scene");
        for (int i = 0; i < n; i++) out[i] = def ? def[i] : 0.0;
        return 0;
    }
    path_join(what, sizeof what, prefix, key);
    double v[8];
    CB_ASSERT(n <= 8);
    int rc = cb_yaml_vec(node, c->label, what, n, v, c->err);
    if (rc) return rc;
    for (int i = 0; i < n; i++) {
        if (!in_range(v[i], r)) {
            describe_range(r, rs, sizeof rs);
            return CB_FAIL(c->err, CB_ERR_INPUT, "%s: %s[%d]: expected %s, got %s",
                           where(c, node->items[i], w, sizeof w), what, i, rs,
                           node->items[i]->scalar);
        }
        out[i] = v[i];
    }
    return 0;
}

/* One of `choices` (NULL-terminated) at map[key]; *out is its index, def when absent. */
static int get_choice(const ctx *c, const cb_yaml *map, const char *prefix, const char *key,
                      const char *const *choices, int required, int def, int *out)
{
    char what[300], w[600], list[300];
    const cb_yaml *n = ask(c, map, key);
    if (!n) {
        if (required) return missing(c, map, key, prefix && prefix[0] ? prefix : "the scene");
        *out = def;
        return 0;
    }
    path_join(what, sizeof what, prefix, key);
    size_t len = 0;
    list[0] = '\0';
    for (int k = 0; choices[k]; k++) {
        int wr = snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "", choices[k]);
        if (wr < 0 || (size_t)wr >= sizeof list - len) break;
        len += (size_t)wr;
    }
    if (n->kind != CB_YAML_SCALAR)
        return CB_FAIL(c->err, CB_ERR_INPUT, "%s: %s: expected one of %s, got %s",
                       where(c, n, w, sizeof w), what, list, kind_name(n));
    for (int k = 0; choices[k]; k++)
        if (strcmp(n->scalar, choices[k]) == 0) { *out = k; return 0; }
    return CB_FAIL(c->err, CB_ERR_INPUT, "%s: %s: expected one of %s, got '%s'",
                   where(c, n, w, sizeof w), what, list, n->scalar);
}

/* map[key] must be a map (or absent: *out NULL). */
static int get_map(const ctx *c, const cb_yaml *map, const char *prefix, const char *key,
                   const cb_yaml **out)
{
    char what[300], w[600];
    const cb_yaml *n = ask(c, map, key);
    *out = NULL;
    if (!n) return 0;
    if (n->kind != CB_YAML_MAP)
        return CB_FAIL(c->err, CB_ERR_INPUT, "%s: %s: expected a map of keys, got %s",
                       where(c, n, w, sizeof w), path_join(what, sizeof what, prefix, key),
                       kind_name(n));
    *out = n;
    return 0;
}

/* A non-empty string at map[key]. */
static int get_string(const ctx *c, const cb_yaml *map, const char *prefix, const char *key,
                      const cb_yaml **out)
{
    char what[300], w[600];
    const cb_yaml *n = ask(c, map, key);
    *out = NULL;
    if (!n) return missing(c, map, key, prefix && prefix[0] ? prefix : "the scene");
    if (n->kind != CB_YAML_SCALAR || n->scalar[0] == '\0' || is_null(n))
        return CB_FAIL(c->err, CB_ERR_INPUT, "%s: %s: expected a non-empty string, got %s",
                       where(c, n, w, sizeof w), path_join(what, sizeof what, prefix, key),
                       n->kind == CB_YAML_SCALAR ? "nothing" : kind_name(n));
    *out = n;
    return 0;
}

/* map[key] as a list: absent or empty -> *out NULL. */
static int get_list(const ctx *c, const cb_yaml *map, const char *prefix, const char *key,
                    const cb_yaml **out)
{
    char what[300], w[600];
    const cb_yaml *n = ask(c, map, key);
    *out = NULL;
    if (!n || is_null(n)) return 0;
    if (n->kind != CB_YAML_SEQ)
        return CB_FAIL(c->err, CB_ERR_INPUT, "%s: %s: expected a list, got %s",
                       where(c, n, w, sizeof w), path_join(what, sizeof what, prefix, key),
                       kind_name(n));
    *out = n;
    return 0;
}

static char *resolve_path(const char *dir, const char *rel)
{
    if (rel[0] == '/' || !dir || !dir[0]) return cb_strdup(rel);
    size_t n = strlen(dir) + strlen(rel) + 2;
    char *p = cb_malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, rel);
    return p;
}

/* Remember a file the scene reads (its path as resolved, plus `suffix`), for the run
 * file's digests. */
static int note_file(const ctx *c, const char *path, const char *suffix)
{
    cb_scene *s = c->scene;
    if (!s) return 0;
    size_t n = strlen(path) + strlen(suffix) + 1;
    char *copy = cb_malloc(n);
    char **grown = cb_realloc(s->files, (size_t)(s->nfiles + 1) * sizeof *grown);
    if (!copy || !grown) {
        free(copy);
        if (grown) s->files = grown;
        return CB_FAIL(c->err, CB_ERR_NOMEM, "%s: out of memory", c->label);
    }
    snprintf(copy, n, "%s%s", path, suffix);
    s->files = grown;
    s->files[s->nfiles++] = copy;
    return 0;
}

/* ---------------------------------------------------------------- cloth */

static int read_grid(const ctx *c, const cb_yaml *g, const char *P, cb_grid_def *def)
{
    static const char *const planes[] = { "xy", "xz", "yz", NULL };
    static const char *const diags[] = { "alternate", "right", "left", NULL };
    int rc, plane, diag;
    memset(def, 0, sizeof *def);
    if ((rc = get_int(c, g, P, "nx", 1, 0, 2, &def->nx)) ||
        (rc = get_int(c, g, P, "ny", 1, 0, 2, &def->ny)) ||
        (rc = get_vec(c, g, P, "size", 1, NULL, 2, R_POS, def->size)) ||
        (rc = get_vec(c, g, P, "origin", 0, NULL, 3, R_ANY, def->origin)) ||
        (rc = get_choice(c, g, P, "plane", planes, 0, 0, &plane)) ||
        (rc = get_choice(c, g, P, "diagonal", diags, 0, 0, &diag)) ||
        (rc = check_keys(c, g, P)))
        return rc;
    def->plane = plane == 0 ? CB_PLANE_XY : plane == 1 ? CB_PLANE_XZ : CB_PLANE_YZ;
    def->diagonal = diag == 0 ? CB_DIAG_ALTERNATE : diag == 1 ? CB_DIAG_RIGHT : CB_DIAG_LEFT;
    return 0;
}

static int read_pin(const ctx *c, const cb_yaml *node, const char *prefix, int index, cb_pin_def *pin)
{
    static const char *const sel[] = { "corners", "corners_top", "corners_bottom", "top",
                                       "bottom", "left", "right", NULL };
    static const cb_pin_kind sel_kind[] = { CB_PIN_CORNERS, CB_PIN_CORNERS_TOP,
                                            CB_PIN_CORNERS_BOTTOM, CB_PIN_SIDE_TOP,
                                            CB_PIN_SIDE_BOTTOM, CB_PIN_SIDE_LEFT,
                                            CB_PIN_SIDE_RIGHT };
    char P[96], w[600], what[300];
    int rc;
    snprintf(P, sizeof P, "%s.pins.%d", prefix, index);
    cb_yaml_where(node, c->label, pin->where, sizeof pin->where);
    if (node->kind != CB_YAML_MAP)
        return CB_FAIL(c->err, CB_ERR_INPUT,
                       "%s: %s: expected a map like {select: corners_top}, {indices: [0, 5]} or "
                       "{box: {min: [..], max: [..]}}, got %s",
                       where(c, node, w, sizeof w), P, kind_name(node));
    const cb_yaml *s = ask(c, node, "select"), *ix = ask(c, node, "indices"),
                  *box = ask(c, node, "box");
    int count = (s != NULL) + (ix != NULL) + (box != NULL);
    if (count != 1)
        return CB_FAIL(c->err, CB_ERR_INPUT, "%s: %s: expected exactly one of select, indices, box; got %s",
                       where(c, node, w, sizeof w), P, count ? "several" : "none");
    if (s) {
        int k;
        if ((rc = get_choice(c, node, P, "select", sel, 1, 0, &k))) return rc;
        pin->kind = sel_kind[k];
    } else if (ix) {
        path_join(what, sizeof what, P, "indices");
        if (ix->kind != CB_YAML_SEQ || ix->n == 0)
            return CB_FAIL(c->err, CB_ERR_INPUT, "%s: %s: expected a non-empty list of vertex indices, got %s",
                           where(c, ix, w, sizeof w), what,
                           ix->kind == CB_YAML_SEQ ? "an empty list" : kind_name(ix));
        pin->kind = CB_PIN_INDICES;
        pin->indices = cb_calloc((size_t)ix->n, sizeof *pin->indices);
        if (!pin->indices) return CB_FAIL(c->err, CB_ERR_NOMEM, "%s: out of memory", c->label);
        pin->nindices = ix->n;
        for (int i = 0; i < ix->n; i++) {
            char item[320];
            snprintf(item, sizeof item, "%s[%d]", what, i);
            if ((rc = cb_yaml_int(ix->items[i], c->label, item, &pin->indices[i], c->err))) return rc;
            if (pin->indices[i] < 0)
                return CB_FAIL(c->err, CB_ERR_INPUT, "%s: %s: expected a vertex index >= 0, got %s",
                               where(c, ix->items[i], w, sizeof w), item, ix->items[i]->scalar);
        }
    } else {
        char B[112];
        snprintf(B, sizeof B, "%s.box", P);
        if (box->kind != CB_YAML_MAP)
            return CB_FAIL(c->err, CB_ERR_INPUT, "%s: %s: expected a map {min: [x, y, z], max: [x, y, z]}, got %s",
                           where(c, box, w, sizeof w), B, kind_name(box));
        pin->kind = CB_PIN_BOX;
        if ((rc = get_vec(c, box, B, "min", 1, NULL, 3, R_ANY, pin->box_min)) ||
            (rc = get_vec(c, box, B, "max", 1, NULL, 3, R_ANY, pin->box_max)) ||
            (rc = check_keys(c, box, B)))
            return rc;
        for (int k = 0; k < 3; k++)
            if (pin->box_min[k] > pin->box_max[k])
                return CB_FAIL(c->err, CB_ERR_INPUT, "%s: %s: min[%d] = %g is greater than max[%d] = %g",
                               where(c, box, w, sizeof w), B, k, pin->box_min[k], k, pin->box_max[k]);
    }
    if ((rc = get_vec(c, node, P, "velocity", 0, NULL, 3, R_ANY, pin->velocity)) ||
        (rc = get_vec(c, node, P, "angular_velocity", 0, NULL, 3, R_ANY, pin->angular_velocity)) ||
        (rc = get_vec(c, node, P, "pivot", 0, NULL, 3, R_ANY, pin->pivot)))
        return rc;
    return check_keys(c, node, P);
}

/* cloth.tets: a TetGen base name (string, relative to the scene file) or
 * {box: {n: [3 ints >= 1], size: [3], origin: [3] (default 0), split: 5|6 (default 6)}}. */
static int read_tets(const ctx *c, const cb_yaml *tn, const char *dir, cb_cloth_def *cl)
{
    const char *P = "cloth.tets.box";
    char w[600];
    int rc;
    if (tn->kind == CB_YAML_SCALAR && tn->scalar[0] && !is_null(tn)) {
        cl->use_tets = 2;
        cl->tets_path = resolve_path(dir, tn->scalar);
        if (!cl->tets_path) return CB_FAIL(c->err, CB_ERR_NOMEM, "%s: out of memory", c->label);
        /* the TetGen pair, named as cb_tetmesh_read_tetgen names it */
        size_t base = strlen(cl->tets_path);
        const char *dot = strrchr(cl->tets_path, '.');
        if (dot && (!strcmp(dot, ".node") || !strcmp(dot, ".ele"))) base = (size_t)(dot - cl->tets_path);
        char *stem = cb_malloc(base + 1);
        if (!stem) return CB_FAIL(c->err, CB_ERR_NOMEM, "%s: out of memory", c->label);
        memcpy(stem, cl->tets_path, base);
        stem[base] = '\0';
        int rc2 = note_file(c, stem, ".node");
        if (!rc2) rc2 = note_file(c, stem, ".ele");
        free(stem);
        return rc2;
    }
    if (tn->kind != CB_YAML_MAP)
        return CB_FAIL(c->err, CB_ERR_INPUT, "%s: cloth.tets: expected a TetGen file base name (body for "
                       "body.node/body.ele) or {box: {n: [4, 4, 4], size: [0.2, 0.2, 0.2]}}, got %s",
                       where(c, tn, w, sizeof w), tn->kind == CB_YAML_SCALAR ? "nothing" : kind_name(tn));
    const cb_yaml *b;
    if ((rc = get_map(c, tn, "cloth.tets", "box", &b)) || (rc = check_keys(c, tn, "cloth.tets"))) return rc;
    if (!b) return missing(c, tn, "box", "cloth.tets");
    cl->use_tets = 1;
    cl->tet_box = cb_default_tet_box_def();
    if ((rc = get_vec(c, b, P, "size", 1, NULL, 3, R_POS, cl->tet_box.size)) ||
        (rc = get_vec(c, b, P, "origin", 0, NULL, 3, R_ANY, cl->tet_box.origin)) ||
        (rc = get_int(c, b, P, "split", 0, 6, 5, &cl->tet_box.split)))
        return rc;
    if (cl->tet_box.split != 5 && cl->tet_box.split != 6)
        return CB_FAIL(c->err, CB_ERR_INPUT, "%s: %s.split: expected 5 or 6 (tets per cube), got %s",
                       where(c, ask(c, b, "split"), w, sizeof w), P, ask(c, b, "split")->scalar);
    const cb_yaml *n = ask(c, b, "n");
    if (!n) return missing(c, b, "n", P);
    if (n->kind != CB_YAML_SEQ || n->n != 3)
        return CB_FAIL(c->err, CB_ERR_INPUT, "%s: %s.n: expected a list of 3 cube counts like [4, 4, 4], got %s",
                       where(c, n, w, sizeof w), P, n->kind == CB_YAML_SEQ ? "a list of another length" : kind_name(n));
    for (int k = 0; k < 3; k++) {
        char item[64];
        snprintf(item, sizeof item, "%s.n[%d]", P, k);
        if ((rc = cb_yaml_int(n->items[k], c->label, item, &cl->tet_box.n[k], c->err))) return rc;
        if (cl->tet_box.n[k] < 1 || cl->tet_box.n[k] > 1000)
            return CB_FAIL(c->err, CB_ERR_INPUT, "%s: %s: expected an integer in [1, 1000], got %s",
                           where(c, n->items[k], w, sizeof w), item, n->items[k]->scalar);
    }
    return check_keys(c, b, P);
}

/* cloth.material: NAME (core/material.h): the fabric's density, thickness, stretch and bend
 * become the defaults of those keys (the cloth block's own keys override them); the file
 * read is one of the scene's files. */
static int read_material(const ctx *c, const cb_yaml *cn, double def[4])
{
    const cb_yaml *m;
    char dir[1024], path[1100], w[600];
    cb_material mat;
    int rc;
    if ((rc = get_string(c, cn, "cloth", "material", &m))) return rc;
    if (cb_yaml_get(cn, "tets"))
        return CB_FAIL(c->err, CB_ERR_INPUT, "%s: cloth.material: fabrics are for cloth (grid or mesh), "
                       "not a tet body", where(c, m, w, sizeof w));
    if ((rc = cb_material_load(cb_material_dir(dir, sizeof dir), m->scalar, &mat, path, sizeof path, c->err))) {
        if (!c->err) return rc;
        char msg[sizeof c->err->message];
        snprintf(msg, sizeof msg, "%s", c->err->message);
        return CB_FAIL(c->err, rc, "%s: cloth.material: %s", where(c, m, w, sizeof w), msg);
    }
    const double v[4] = { mat.areal_density, mat.thickness, mat.k_stretch, mat.k_bend };
    for (int k = 0; k < 4; k++)
        if (!isnan(v[k])) def[k] = v[k];
    return note_file(c, path, "");
}

/* The list `pins` of the map `map` (named `prefix` in messages). */
static int read_pins(const ctx *c, const cb_yaml *map, const char *prefix, cb_pin_def **out, int *n)
{
    const cb_yaml *pins;
    int rc;
    if ((rc = get_list(c, map, prefix, "pins", &pins))) return rc;
    if (!pins || pins->n == 0) return 0;
    *out = cb_calloc((size_t)pins->n, sizeof **out);
    if (!*out) return CB_FAIL(c->err, CB_ERR_NOMEM, "%s: out of memory", c->label);
    *n = pins->n;
    for (int i = 0; i < pins->n; i++)
        if ((rc = read_pin(c, pins->items[i], prefix, i, &(*out)[i]))) return rc;
    return 0;
}

/* cloth.pieces.<index>: {grid | mesh, translation, velocity, angular_velocity, pins}. */
static int read_piece(const ctx *c, const cb_yaml *node, int index, const char *dir, cb_cloth_piece *pc)
{
    char P[64], G[80], w[600];
    int rc;
    snprintf(P, sizeof P, "cloth.pieces.%d", index);
    if (node->kind != CB_YAML_MAP)
        return CB_FAIL(c->err, CB_ERR_INPUT, "%s: %s: expected a map with grid or mesh, got %s",
                       where(c, node, w, sizeof w), P, kind_name(node));
    const cb_yaml *grid = ask(c, node, "grid"), *mesh = ask(c, node, "mesh");
    if ((grid != NULL) == (mesh != NULL))
        return CB_FAIL(c->err, CB_ERR_INPUT, "%s: %s: give exactly one of 'grid' and 'mesh'",
                       where(c, node, w, sizeof w), P);
    if (grid) {
        const cb_yaml *g;
        snprintf(G, sizeof G, "%s.grid", P);
        if ((rc = get_map(c, node, P, "grid", &g)) || (rc = read_grid(c, g, G, &pc->grid))) return rc;
        pc->use_grid = 1;
    } else {
        const cb_yaml *m;
        if ((rc = get_string(c, node, P, "mesh", &m))) return rc;
        pc->mesh_path = resolve_path(dir, m->scalar);
        if (!pc->mesh_path) return CB_FAIL(c->err, CB_ERR_NOMEM, "%s: out of memory", c->label);
        if ((rc = note_file(c, pc->mesh_path, ""))) return rc;
    }
    if ((rc = get_vec(c, node, P, "translation", 0, NULL, 3, R_ANY, pc->translation)) ||
        (rc = get_vec(c, node, P, "velocity", 0, NULL, 3, R_ANY, pc->velocity)) ||
        (rc = get_vec(c, node, P, "angular_velocity", 0, NULL, 3, R_ANY, pc->angular_velocity)) ||
        (rc = read_pins(c, node, P, &pc->pins, &pc->npins)))
        return rc;
    return check_keys(c, node, P);
}

/* cloth.pieces: several pieces in one cloth; what each piece gives is refused beside it. */
static int read_pieces(const ctx *c, const cb_yaml *cn, const char *dir, cb_cloth_def *cl)
{
    static const char *const own[] = { "grid", "mesh", "tets", "pins", "velocity", "angular_velocity",
                                       "initial_stretch", NULL };
    char w[600];
    const cb_yaml *list;
    int rc;
    for (int k = 0; own[k]; k++)
        if (ask(c, cn, own[k]))
            return CB_FAIL(c->err, CB_ERR_INPUT, "%s: cloth.%s: with cloth.pieces, give %s in each piece",
                           where(c, ask(c, cn, own[k]), w, sizeof w), own[k], own[k]);
    if ((rc = get_list(c, cn, "cloth", "pieces", &list))) return rc;
    if (list->n == 0)
        return CB_FAIL(c->err, CB_ERR_INPUT, "%s: cloth.pieces: expected a non-empty list of pieces",
                       where(c, list, w, sizeof w));
    cl->pieces = cb_calloc((size_t)list->n, sizeof *cl->pieces);
    if (!cl->pieces) return CB_FAIL(c->err, CB_ERR_NOMEM, "%s: out of memory", c->label);
    cl->npieces = list->n;
    for (int i = 0; i < list->n; i++)
        if ((rc = read_piece(c, list->items[i], i, dir, &cl->pieces[i]))) return rc;
    return 0;
}

static int read_cloth(const ctx *c, const cb_yaml *root, const char *dir, cb_cloth_def *cl)
{
    char w[600], w2[600];
    int rc;
    const cb_yaml *cn = ask(c, root, "cloth");
    if (!cn) return missing(c, root, "cloth", "the scene");
    if (cn->kind != CB_YAML_MAP)
        return CB_FAIL(c->err, CB_ERR_INPUT, "%s: cloth: expected a map with grid or mesh, got %s",
                       where(c, cn, w, sizeof w), kind_name(cn));

    int with_pieces = cb_yaml_get(cn, "pieces") != NULL; /* asked at the end, listed last */
    const cb_yaml *grid = ask(c, cn, "grid"), *mesh = ask(c, cn, "mesh");
    const cb_yaml *tets = ask(c, cn, "tets");
    if (!with_pieces && tets && (grid || mesh))
        return CB_FAIL(c->err, CB_ERR_INPUT, "%s: cloth: give only one of 'grid', 'mesh' and 'tets' (%s at %s)",
                       where(c, tets, w, sizeof w), grid ? "grid" : "mesh",
                       where(c, grid ? grid : mesh, w2, sizeof w2));
    if (!tets && ask(c, cn, "volume_density"))
        return CB_FAIL(c->err, CB_ERR_INPUT, "%s: cloth.volume_density: only a tet body (cloth.tets) has a "
                       "volume density; cloth takes density (kg/m^2)",
                       where(c, ask(c, cn, "volume_density"), w, sizeof w));
    if (tets && ask(c, cn, "density"))
        return CB_FAIL(c->err, CB_ERR_INPUT, "%s: cloth.density: a tet body (cloth.tets) takes volume_density "
                       "(kg/m^3), not the areal density", where(c, ask(c, cn, "density"), w, sizeof w));
    if (with_pieces) {
        /* the pieces hold the geometry (read_pieces, below) */
    } else if (tets) {
        if ((rc = read_tets(c, tets, dir, cl)) ||
            (rc = get_double(c, cn, "cloth", "volume_density", 0, 1000.0, R_POS, &cl->volume_density)))
            return rc;
    } else if (grid && mesh)
        return CB_FAIL(c->err, CB_ERR_INPUT,
                       "%s: cloth: give exactly one of 'grid' and 'mesh', not both (grid at %s)",
                       where(c, mesh, w, sizeof w), where(c, grid, w2, sizeof w2));
    else if (!grid && !mesh)
        return CB_FAIL(c->err, CB_ERR_INPUT, "%s: cloth: give exactly one of 'grid' or 'mesh' "
                       "(or 'tets' for a soft body)", where(c, cn, w, sizeof w));
    else if (grid) {
        const cb_yaml *g;
        if ((rc = get_map(c, cn, "cloth", "grid", &g))) return rc;
        cl->use_grid = 1;
        if ((rc = read_grid(c, g, "cloth.grid", &cl->grid))) return rc;
    } else {
        const cb_yaml *m;
        if ((rc = get_string(c, cn, "cloth", "mesh", &m))) return rc;
        cl->use_grid = 0;
        cl->mesh_path = resolve_path(dir, m->scalar);
        if (!cl->mesh_path) return CB_FAIL(c->err, CB_ERR_NOMEM, "%s: out of memory", c->label);
        if ((rc = note_file(c, cl->mesh_path, ""))) return rc;
    }
    double def[4] = { 0.1, 0.002, 1000.0, 1e-4 }; /* density, thickness, stretch, bend */
    if (ask(c, cn, "material") && (rc = read_material(c, cn, def))) return rc;
    if ((rc = get_double(c, cn, "cloth", "density", 0, def[0], R_POS, &cl->density)) ||
        (rc = get_double(c, cn, "cloth", "line_density", 0, 0.0, R_NONNEG, &cl->line_density)) ||
        (rc = get_double(c, cn, "cloth", "stretch", 0, def[2], R_NONNEG, &cl->stretch)) ||
        (rc = get_double(c, cn, "cloth", "bend", 0, def[3], R_NONNEG, &cl->bend)) ||
        (rc = get_double(c, cn, "cloth", "thickness", 0, def[1], R_NONNEG, &cl->thickness)) ||
        (rc = get_vec(c, cn, "cloth", "velocity", 0, NULL, 3, R_ANY, cl->velocity)) ||
        (rc = get_vec(c, cn, "cloth", "angular_velocity", 0, NULL, 3, R_ANY, cl->angular_velocity)) ||
        (rc = get_double(c, cn, "cloth", "initial_stretch", 0, 1.0, R_POS, &cl->initial_stretch)))
        return rc;
    if ((rc = read_pins(c, cn, "cloth", &cl->pins, &cl->npins))) return rc;
    if (ask(c, cn, "pieces") && (rc = read_pieces(c, cn, dir, cl))) return rc;
    return check_keys(c, cn, "cloth");
}

/* ---------------------------------------------------------------- colliders */

/* Rotation by `deg` degrees about unit axis k: axes[j] = R e_j (Rodrigues). */
static void rotated_axes(const double k[3], double deg, double axes[3][3])
{
    double th = deg * PI / 180.0, cs = cos(th), sn = sin(th);
    for (int j = 0; j < 3; j++) {
        double e[3] = { 0, 0, 0 }, kxe[3];
        e[j] = 1.0;
        cb_v3_cross(kxe, k, e);
        double kd = cb_v3_dot(k, e);
        for (int i = 0; i < 3; i++) axes[j][i] = cs * e[i] + sn * kxe[i] + (1.0 - cs) * kd * k[i];
    }
}

/* A mesh collider: {type: mesh, file: PATH (relative to the scene file), and either
 * velocity [3] (m/s) + angular_velocity [3] (rad/s about pivot [3], default the mesh's
 * surface centroid), or keyframes: [{time: t, translation: [3], rotation: {axis: [3],
 * angle: DEGREES}}, ...] (strictly increasing times; translation piecewise linear,
 * rotation slerped along the shorter arc, first/last pose held outside the key range;
 * see contact/trimesh_collider.h), plus friction/restitution read by the caller}. */
static int read_mesh_collider(const ctx *c, const cb_yaml *node, const char *P, const char *dir,
                              cb_collider *col)
{
    char w[600], K[96], R[112];
    int rc;
    const cb_yaml *file, *keys;
    cb_trimesh_motion mo = cb_trimesh_default_motion();
    if ((rc = get_string(c, node, P, "file", &file)) ||
        (rc = get_list(c, node, P, "keyframes", &keys)) ||
        (rc = get_vec(c, node, P, "velocity", 0, NULL, 3, R_ANY, mo.velocity)) ||
        (rc = get_vec(c, node, P, "angular_velocity", 0, NULL, 3, R_ANY, mo.angular_velocity)) ||
        (rc = get_vec(c, node, P, "pivot", 0, NULL, 3, R_ANY, mo.pivot)))
        return rc;
    mo.has_pivot = ask(c, node, "pivot") != NULL;
    const cb_yaml *kn = ask(c, node, "keyframes");
    if (kn && (ask(c, node, "velocity") || ask(c, node, "angular_velocity")))
        return CB_FAIL(c->err, CB_ERR_INPUT, "%s: %s: give either keyframes or velocity/angular_velocity, "
                       "not both", where(c, kn, w, sizeof w), P);
    if (kn && (!keys || keys->n == 0))
        return CB_FAIL(c->err, CB_ERR_INPUT, "%s: %s.keyframes: expected a non-empty list of "
                       "{time, translation, rotation}", where(c, kn, w, sizeof w), P);
    cb_trimesh_keyframe *kf = NULL;
    if (keys) {
        mo.kind = CB_TRIMESH_KEYFRAMES;
        kf = cb_calloc((size_t)keys->n, sizeof *kf);
        if (!kf) return CB_FAIL(c->err, CB_ERR_NOMEM, "%s: out of memory", c->label);
        mo.keys = kf;
        mo.nkeys = keys->n;
        for (int i = 0; i < keys->n && !rc; i++) {
            const cb_yaml *k = keys->items[i], *rot = NULL;
            snprintf(K, sizeof K, "%s.keyframes.%d", P, i);
            snprintf(R, sizeof R, "%s.rotation", K);
            if (k->kind != CB_YAML_MAP) {
                rc = CB_FAIL(c->err, CB_ERR_INPUT, "%s: %s: expected a map like {time: 0, translation: "
                             "[0, 0, 0], rotation: {axis: [0, 0, 1], angle: 0}}, got %s",
                             where(c, k, w, sizeof w), K, kind_name(k));
                break;
            }
            if ((rc = get_double(c, k, K, "time", 1, 0.0, R_ANY, &kf[i].time)) ||
                (rc = get_vec(c, k, K, "translation", 0, NULL, 3, R_ANY, kf[i].translation)) ||
                (rc = get_map(c, k, K, "rotation", &rot)) ||
                (rc = check_keys(c, k, K)))
                break;
            if (i > 0 && !(kf[i].time > kf[i - 1].time)) {
                rc = CB_FAIL(c->err, CB_ERR_INPUT, "%s: %s.time: expected a time after the previous "
                             "keyframe's %g (times must increase strictly), got %s",
                             where(c, ask(c, k, "time"), w, sizeof w), K, kf[i - 1].time,
                             ask(c, k, "time")->scalar);
                break;
            }
            cb_v3_set(kf[i].axis, 0, 0, 1);
            if (rot) {
                double deg;
                if ((rc = get_vec(c, rot, R, "axis", 1, NULL, 3, R_ANY, kf[i].axis)) ||
                    (rc = get_double(c, rot, R, "angle", 1, 0.0, R_ANY, &deg)) ||
                    (rc = check_keys(c, rot, R)))
                    break;
                if (!(cb_v3_normalize(kf[i].axis) > 0.0)) {
                    rc = CB_FAIL(c->err, CB_ERR_INPUT, "%s: %s.axis: expected a non-zero vector, got "
                                 "[0, 0, 0]", where(c, ask(c, rot, "axis"), w, sizeof w), R);
                    break;
                }
                kf[i].angle = deg * PI / 180.0;
            }
        }
    } else if (ask(c, node, "velocity") || ask(c, node, "angular_velocity")) {
        mo.kind = CB_TRIMESH_VELOCITY;
    }
    /* the description only: the contact layer builds the geometry (cb_scene_load,
     * contact/colliders.h), naming this place in its messages */
    mo.keys = kf;
    col->mesh_motion = mo;
    if (rc) return rc;
    snprintf(K, sizeof K, "%s.file", P);
    char *at = NULL;
    if (!(col->mesh_path = resolve_path(dir, file->scalar)) ||
        !(at = cb_malloc(strlen(where(c, file, w, sizeof w)) + strlen(K) + 3)))
        return CB_FAIL(c->err, CB_ERR_NOMEM, "%s: out of memory", c->label);
    sprintf(at, "%s: %s", w, K);
    col->mesh_where = at;
    return note_file(c, col->mesh_path, "");
}

/* An analytic collider's angular_velocity: a spin in place, allowed where it keeps the
 * shape (collider.h); a box, or an axis off the plane's normal or the capsule's
 * segment, would need the shape to turn: a mesh collider does that. */
static int read_spin(const ctx *c, const cb_yaml *node, const char *P, cb_collider *col)
{
    double *om = col->angular_velocity;
    int rc = get_vec(c, node, P, "angular_velocity", 0, NULL, 3, R_ANY, om);
    if (rc || cb_v3_norm2(om) == 0.0) return rc;
    double axis[3] = {0, 0, 0}, cr[3];
    if (col->type == CB_COLLIDER_PLANE) cb_v3_copy(axis, col->normal);
    if (col->type == CB_COLLIDER_CAPSULE) cb_v3_sub(axis, col->p1, col->p0);
    cb_v3_cross(cr, om, axis);
    char w[600], what[300];
    path_join(what, sizeof what, P, "angular_velocity");
    if (col->type == CB_COLLIDER_BOX ||
        (col->type != CB_COLLIDER_SPHERE && cb_v3_norm(cr) > 1e-12 * cb_v3_norm(om) * cb_v3_norm(axis)))
        return CB_FAIL(c->err, CB_ERR_INPUT,
                       "%s: %s: a %s can only spin in place %s; a turning shape needs a mesh collider "
                       "(type: mesh, angular_velocity, pivot)",
                       where(c, ask(c, node, "angular_velocity"), w, sizeof w), what, cb_collider_type_name(col->type),
                       col->type == CB_COLLIDER_PLANE ? "about its normal" :
                       col->type == CB_COLLIDER_CAPSULE ? "about its segment p0-p1" : "(a box never can)");
    return 0;
}

static int read_collider(const ctx *c, const cb_yaml *node, int index, const char *dir,
                         cb_collider *col)
{
    static const char *const types[] = { "plane", "sphere", "box", "capsule", "mesh", NULL };
    static const cb_collider_type tcodes[] = { CB_COLLIDER_PLANE, CB_COLLIDER_SPHERE, CB_COLLIDER_BOX,
                                               CB_COLLIDER_CAPSULE, CB_COLLIDER_MESH };
    char P[48], w[600];
    int rc, t;
    snprintf(P, sizeof P, "colliders.%d", index);
    if (node->kind != CB_YAML_MAP)
        return CB_FAIL(c->err, CB_ERR_INPUT, "%s: %s: expected a map like {type: sphere, center: [0, 0, 0], "
                       "radius: 0.5}, got %s", where(c, node, w, sizeof w), P, kind_name(node));
    if ((rc = get_choice(c, node, P, "type", types, 1, 0, &t))) return rc;
    *col = cb_default_collider(tcodes[t]);
    col->line = node->line;
    switch (tcodes[t]) {
    case CB_COLLIDER_PLANE: {
        if ((rc = get_vec(c, node, P, "point", 1, NULL, 3, R_ANY, col->center)) ||
            (rc = get_vec(c, node, P, "normal", 1, NULL, 3, R_ANY, col->normal)))
            return rc;
        if (!(cb_v3_normalize(col->normal) > 0.0))
            return CB_FAIL(c->err, CB_ERR_INPUT, "%s: %s.normal: expected a non-zero vector, got [0, 0, 0]",
                           where(c, ask(c, node, "normal"), w, sizeof w), P);
        break;
    }
    case CB_COLLIDER_SPHERE:
        if ((rc = get_vec(c, node, P, "center", 1, NULL, 3, R_ANY, col->center)) ||
            (rc = get_double(c, node, P, "radius", 1, 0.0, R_POS, &col->radius)))
            return rc;
        break;
    case CB_COLLIDER_BOX: {
        double size[3];
        if ((rc = get_vec(c, node, P, "center", 1, NULL, 3, R_ANY, col->center)) ||
            (rc = get_vec(c, node, P, "size", 1, NULL, 3, R_POS, size)))
            return rc;
        for (int k = 0; k < 3; k++) col->half[k] = 0.5 * size[k];
        const cb_yaml *rot;
        char R[64];
        snprintf(R, sizeof R, "%s.rotation", P);
        if ((rc = get_map(c, node, P, "rotation", &rot))) return rc;
        if (rot) {
            double axis[3], angle;
            if ((rc = get_vec(c, rot, R, "axis", 1, NULL, 3, R_ANY, axis)) ||
                (rc = get_double(c, rot, R, "angle", 1, 0.0, R_ANY, &angle)) ||
                (rc = check_keys(c, rot, R)))
                return rc;
            if (!(cb_v3_normalize(axis) > 0.0))
                return CB_FAIL(c->err, CB_ERR_INPUT, "%s: %s.axis: expected a non-zero vector, got [0, 0, 0]",
                               where(c, ask(c, rot, "axis"), w, sizeof w), R);
            rotated_axes(axis, angle, col->axes);
        } else {
            for (int j = 0; j < 3; j++)
                for (int i = 0; i < 3; i++) col->axes[j][i] = i == j ? 1.0 : 0.0;
        }
        break;
    }
    case CB_COLLIDER_CAPSULE:
        if ((rc = get_vec(c, node, P, "p0", 1, NULL, 3, R_ANY, col->p0)) ||
            (rc = get_vec(c, node, P, "p1", 1, NULL, 3, R_ANY, col->p1)) ||
            (rc = get_double(c, node, P, "radius", 1, 0.0, R_POS, &col->radius)))
            return rc;
        break;
    case CB_COLLIDER_MESH:
        if ((rc = read_mesh_collider(c, node, P, dir, col))) {
            cb_collider_release(col);
            return rc;
        }
        break;
    }
    if ((rc = get_vec(c, node, P, "velocity", 0, NULL, 3, R_ANY, col->velocity)) ||
        (rc = get_double(c, node, P, "friction", 0, 0.0, R_NONNEG, &col->friction)) ||
        (rc = get_double(c, node, P, "restitution", 0, 0.0, R_UNIT, &col->restitution)) ||
        (col->type != CB_COLLIDER_MESH && (rc = read_spin(c, node, P, col))) ||
        (rc = check_keys(c, node, P))) {
        cb_collider_release(col); /* a mesh description read above */
        return rc;
    }
    return 0;
}

/* ---------------------------------------------------------------- scene */

static int interpret(const ctx *c, cb_scene *s)
{
    static const double g0[3] = { 0.0, 0.0, -9.81 };
    const cb_yaml *root = s->root;
    char w[600];
    int rc;
    if (root->kind != CB_YAML_MAP)
        return CB_FAIL(c->err, CB_ERR_INPUT, "%s: expected a map of scene keys (name, duration, dt, "
                       "cloth, ...) at the top level, got %s", where(c, root, w, sizeof w),
                       kind_name(root));

    const cb_yaml *name;
    if ((rc = get_string(c, root, "", "name", &name))) return rc;
    if (!(s->name = cb_strdup(name->scalar))) return CB_FAIL(c->err, CB_ERR_NOMEM, "out of memory");
    if ((rc = get_double(c, root, "", "duration", 1, 0.0, R_POS, &s->duration)) ||
        (rc = get_double(c, root, "", "dt", 1, 0.0, R_POS, &s->dt)) ||
        (rc = get_double(c, root, "", "frame_rate", 0, 60.0, R_POS, &s->frame_rate)) ||
        (rc = get_vec(c, root, "", "gravity", 0, g0, 3, R_ANY, s->gravity)) ||
        (rc = get_int(c, root, "", "log_every", 0, 1, 1, &s->log_every)) ||
        (rc = get_double(c, root, "", "bound", 0, 1000.0, R_POS, &s->bound)) ||
        (rc = get_int(c, root, "", "expensive_every", 0, 1, 0, &s->expensive_every)))
        return rc;
    const cb_yaml *audit = ask(c, root, "audit");
    if (audit && (rc = cb_yaml_bool(audit, c->label, "audit", &s->audit, c->err))) return rc;
    /* the run health check (experiments/harness/health.h); the defaults are the README's */
    const cb_yaml *health;
    if ((rc = get_map(c, root, "", "health", &health))) return rc;
    if ((rc = get_double(c, health, "health", "energy_factor", 0, CB_HEALTH_ENERGY_FACTOR, R_POS,
                         &s->health_energy_factor)) ||
        (rc = get_double(c, health, "health", "max_strain", 0, CB_HEALTH_MAX_STRAIN, R_POS,
                         &s->health_max_strain)) ||
        (rc = check_keys(c, health, "health")))
        return rc;
    if (s->dt > s->duration)
        return CB_FAIL(c->err, CB_ERR_INPUT, "%s: dt: expected a value <= duration (%g), got %s",
                       where(c, ask(c, root, "dt"), w, sizeof w), s->duration,
                       ask(c, root, "dt")->scalar);
    /* the step count must fit a long with room to spare (a count that overflowed gave a
     * run of 0 steps that ended ok) */
    if (!(s->duration / s->dt <= CB_SCENE_MAX_STEPS))
        return CB_FAIL(c->err, CB_ERR_INPUT, "%s: dt: duration / dt = %.3g steps, at most %.0e are allowed (got "
                       "dt %s for a duration of %g s)", where(c, ask(c, root, "dt"), w, sizeof w),
                       s->duration / s->dt, CB_SCENE_MAX_STEPS, ask(c, root, "dt")->scalar, s->duration);

    if ((rc = read_cloth(c, root, s->dir, &s->cloth))) return rc;

    const cb_yaml *cols;
    if ((rc = get_list(c, root, "", "colliders", &cols))) return rc;
    if (cols && cols->n > 0) {
        s->colliders = cb_calloc((size_t)cols->n, sizeof *s->colliders);
        if (!s->colliders) return CB_FAIL(c->err, CB_ERR_NOMEM, "out of memory");
        for (int i = 0; i < cols->n; i++) {
            if ((rc = read_collider(c, cols->items[i], i, s->dir, &s->colliders[i]))) return rc;
            s->ncolliders = i + 1;
        }
    }

    const cb_yaml *solvers = ask(c, root, "solvers");
    if (solvers && !is_null(solvers)) {
        if (solvers->kind != CB_YAML_MAP)
            return CB_FAIL(c->err, CB_ERR_INPUT, "%s: solvers: expected a map of solver names "
                           "to parameter maps (pbd: {iterations: 10}), got %s",
                           where(c, solvers, w, sizeof w), kind_name(solvers));
        for (int i = 0; i < solvers->n; i++) {
            const cb_yaml *b = solvers->items[i];
            if (b->kind != CB_YAML_MAP && !is_null(b))
                return CB_FAIL(c->err, CB_ERR_INPUT, "%s: solvers.%s: expected a map of parameters "
                               "(or nothing), got %s", where(c, b, w, sizeof w), solvers->keys[i],
                               kind_name(b));
        }
    }
    return check_keys(c, root, "the scene");
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return cb_strdup(".");
    if (slash == path) return cb_strdup("/");
    size_t n = (size_t)(slash - path);
    char *d = cb_malloc(n + 1);
    if (d) {
        memcpy(d, path, n);
        d[n] = '\0';
    }
    return d;
}

/* Takes ownership of root. */
static int finish_load(cb_yaml *root, const char *label, const char *dir, const char *const *sets,
                       int nsets, cb_scene **out, cb_error *err)
{
    int rc = 0;
    cb_scene *s = cb_calloc(1, sizeof *s);
    if (!s) {
        cb_yaml_free(&root);
        return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", label);
    }
    s->root = root;
    s->path = cb_strdup(label);
    s->dir = cb_strdup(dir);
    if (!s->path || !s->dir) { rc = CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", label); goto fail; }
    for (int i = 0; i < nsets; i++)
        if ((rc = cb_yaml_set(s->root, sets[i], label, err))) goto fail;
    ctx c = { .label = label, .err = err, .scene = s };
    if ((rc = cb_keys_create(&c.keys, err))) goto fail;
    rc = interpret(&c, s);
    cb_keys_free(&c.keys);
    if (rc) goto fail;
    s->text = cb_yaml_emit(s->root);
    if (!s->text) { rc = CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", label); goto fail; }
    *out = s;
    return 0;
fail:
    cb_scene_free(&s);
    return rc;
}

static int check_sets(const char *const *sets, int nsets, cb_error *err)
{
    if (nsets < 0 || (nsets > 0 && !sets))
        return CB_FAIL(err, CB_ERR_INPUT, "scene: bad override list (%d overrides)", nsets);
    for (int i = 0; i < nsets; i++) {
        if (!sets[i]) return CB_FAIL(err, CB_ERR_INPUT, "scene: override %d is NULL", i);
        long at = cb_utf8_invalid_at(sets[i]);
        if (at >= 0) /* it would go into the run file's scene text, which could not be read again */
            return CB_FAIL(err, CB_ERR_INPUT, "--set: override %d is not valid UTF-8 (byte %ld)", i + 1, at + 1);
    }
    return 0;
}

int cb_scene_parse(const char *path, const char *const *sets, int nsets, cb_scene **out, cb_error *err)
{
    if (!out) return CB_FAIL(err, CB_ERR_INPUT, "cb_scene_parse: out is NULL");
    *out = NULL;
    if (!path || !path[0]) return CB_FAIL(err, CB_ERR_INPUT, "cb_scene_parse: no scene file given");
    int rc = check_sets(sets, nsets, err);
    if (rc) return rc;
    cb_yaml *root = NULL;
    if ((rc = cb_yaml_load_file(path, &root, err))) return rc;
    char *dir = dir_of(path);
    if (!dir) {
        cb_yaml_free(&root);
        return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", path);
    }
    rc = finish_load(root, path, dir, sets, nsets, out, err);
    free(dir);
    return rc;
}

int cb_scene_parse_string(const char *text, const char *label, const char *dir,
                          const char *const *sets, int nsets, cb_scene **out, cb_error *err)
{
    if (!out) return CB_FAIL(err, CB_ERR_INPUT, "cb_scene_parse_string: out is NULL");
    *out = NULL;
    if (!label) label = "<string>";
    if (!dir) dir = ".";
    if (!text) return CB_FAIL(err, CB_ERR_INPUT, "%s: no scene text", label);
    int rc = check_sets(sets, nsets, err);
    if (rc) return rc;
    cb_yaml *root = NULL;
    if ((rc = cb_yaml_load_string(text, label, &root, err))) return rc;
    return finish_load(root, label, dir, sets, nsets, out, err);
}

void cb_scene_free(cb_scene **sp)
{
    if (!sp || !*sp) return;
    cb_scene *s = *sp;
    for (int i = 0; i < s->ncolliders; i++) cb_collider_release(&s->colliders[i]);
    free(s->colliders);
    for (int i = 0; i < s->cloth.npins; i++) free(s->cloth.pins[i].indices);
    free(s->cloth.pins);
    for (int p = 0; p < s->cloth.npieces; p++) {
        cb_cloth_piece *pc = &s->cloth.pieces[p];
        for (int i = 0; i < pc->npins; i++) free(pc->pins[i].indices);
        free(pc->pins);
        free(pc->mesh_path);
    }
    free(s->cloth.pieces);
    free(s->cloth.mesh_path);
    free(s->cloth.tets_path);
    for (int i = 0; i < s->nfiles; i++) free(s->files[i]);
    free(s->files);
    cb_yaml_free(&s->root);
    free(s->text);
    free(s->name);
    free(s->dir);
    free(s->path);
    free(s);
    *sp = NULL;
}

cb_params cb_scene_params(const cb_scene *s, const char *solver)
{
    cb_params p = { .label = s ? s->path : NULL, .solver = solver, .block = NULL };
    if (!s || !solver) return p;
    const cb_yaml *b = cb_yaml_get(cb_yaml_get(s->root, "solvers"), solver);
    if (b && b->kind == CB_YAML_MAP) p.block = b;
    return p;
}

long cb_scene_steps(const cb_scene *s)
{
    CB_ASSERT(s && s->dt > 0.0);
    return lround(s->duration / s->dt);
}

long cb_scene_steps_per_frame(const cb_scene *s)
{
    CB_ASSERT(s && s->dt > 0.0 && s->frame_rate > 0.0);
    double k = 1.0 / (s->frame_rate * s->dt);
    if (!(k < CB_SCENE_MAX_STEPS)) k = CB_SCENE_MAX_STEPS; /* one frame at the end */
    return k < 1 ? 1 : lround(k);
}
