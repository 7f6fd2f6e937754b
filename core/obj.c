/* core/obj.c — Wavefront OBJ reader (v and f records; see mesh.h).
 *
 * Polygons are fan-triangulated; `l` polylines become springs. Face corners may be v, v/t, v//n or v/t/n, with
 * 1-based or negative (relative) indices. Every error names file:line. The mesh is
 * then validated by cb_mesh_from_arrays_lines, whose messages name the line of the
 * offending face too.
 */
#include "core/mesh.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct growbuf { void *data; size_t n, cap, elem; } growbuf;

static void *grow_push(growbuf *g)
{
    if (g->n == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 256;
        void *d = cb_realloc(g->data, cap * g->elem);
        if (!d) return NULL;
        g->data = d;
        g->cap = cap;
    }
    return (char *)g->data + g->elem * g->n++;
}

static int parse_vertex(char *s, const char *path, int line, double out[3], cb_error *err)
{
    for (int k = 0; k < 3; k++) {
        char *end;
        while (*s == ' ' || *s == '\t') s++;
        if (!*s || *s == '\n' || *s == '\r' || *s == '#')
            return CB_FAIL(err, CB_ERR_INPUT, "%s:%d: vertex needs 3 coordinates, got %d", path, line, k);
        errno = 0;
        out[k] = strtod(s, &end);
        if (end == s || (*end && *end != ' ' && *end != '\t' && *end != '\n' && *end != '\r'))
            return CB_FAIL(err, CB_ERR_INPUT, "%s:%d: vertex coordinate %d is not a number", path, line, k + 1);
        if (!isfinite(out[k]))
            return CB_FAIL(err, CB_ERR_INPUT, "%s:%d: vertex coordinate %d is not finite", path, line, k + 1);
        s = end;
    }
    return CB_OK;
}

int cb_mesh_read_obj(const char *path, cb_mesh **out, cb_error *err)
{
    if (!path || !out) return CB_FAIL(err, CB_ERR_INPUT, "cb_mesh_read_obj: NULL argument");
    *out = NULL;
    FILE *fp = fopen(path, "r");
    if (!fp) return CB_FAIL(err, CB_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
    growbuf V = {0, 0, 0, sizeof(double[3])}, F = {0, 0, 0, sizeof(int[3])}, L = {0, 0, 0, sizeof(int)},
            S = {0, 0, 0, sizeof(int[2])};
    char *buf = NULL;
    size_t cap = 0;
    int line = 0, rc = CB_OK;
    int poly[256];
    while (rc == CB_OK && getline(&buf, &cap, fp) >= 0) {
        line++;
        char *s = buf;
        while (*s == ' ' || *s == '\t') s++;
        if (s[0] == 'v' && (s[1] == ' ' || s[1] == '\t')) {
            double *p = grow_push(&V);
            if (!p) { rc = CB_FAIL(err, CB_ERR_NOMEM, "%s:%d: out of memory", path, line); break; }
            rc = parse_vertex(s + 2, path, line, p, err);
        } else if ((s[0] == 'f' || s[0] == 'l') && (s[1] == ' ' || s[1] == '\t')) {
            int is_line = s[0] == 'l';
            int n = 0;
            char *tok = s + 2;
            for (;;) {
                while (*tok == ' ' || *tok == '\t') tok++;
                if (!*tok || *tok == '\n' || *tok == '\r' || *tok == '#') break;
                char *end;
                errno = 0;
                long idx = strtol(tok, &end, 10);
                if (end == tok) {
                    rc = CB_FAIL(err, CB_ERR_INPUT, "%s:%d: face corner %d: expected a vertex index", path, line, n + 1);
                    break;
                }
                while (*end && *end != ' ' && *end != '\t' && *end != '\n' && *end != '\r') end++; /* skip /t/n */
                long nvl = (long)V.n;
                long v = idx > 0 ? idx - 1 : (idx < 0 ? nvl + idx : -1);
                if (idx == 0 || v < 0 || v >= nvl) {
                    rc = CB_FAIL(err, CB_ERR_INPUT,
                                 "%s:%d: face corner %d: vertex index %ld out of range (%ld vertices defined so far)",
                                 path, line, n + 1, idx, nvl);
                    break;
                }
                if (n == (int)(sizeof poly / sizeof poly[0])) {
                    rc = CB_FAIL(err, CB_ERR_INPUT, "%s:%d: face has more than %d corners", path, line, n);
                    break;
                }
                poly[n++] = (int)v;
                tok = end;
            }
            if (rc != CB_OK) break;
            if (is_line) {
                if (n < 2) {
                    rc = CB_FAIL(err, CB_ERR_INPUT, "%s:%d: line needs at least 2 vertices, got %d", path, line, n);
                    break;
                }
                for (int k = 0; k + 1 < n; k++) {
                    int *e = grow_push(&S);
                    if (!e) { rc = CB_FAIL(err, CB_ERR_NOMEM, "%s:%d: out of memory", path, line); break; }
                    e[0] = poly[k];
                    e[1] = poly[k + 1];
                }
                continue;
            }
            if (n < 3) {
                rc = CB_FAIL(err, CB_ERR_INPUT, "%s:%d: face needs at least 3 vertices, got %d", path, line, n);
                break;
            }
            for (int k = 1; k + 1 < n; k++) {
                int *t = grow_push(&F);
                int *l = grow_push(&L);
                if (!t || !l) { rc = CB_FAIL(err, CB_ERR_NOMEM, "%s:%d: out of memory", path, line); break; }
                t[0] = poly[0]; t[1] = poly[k]; t[2] = poly[k + 1];
                *l = line;
            }
        }
        /* every other record (vn, vt, o, g, s, usemtl, mtllib, comments) is ignored */
    }
    if (rc == CB_OK && ferror(fp)) rc = CB_FAIL(err, CB_ERR_IO, "%s: read error", path);
    fclose(fp);
    free(buf);
    if (rc == CB_OK && (V.n == 0 || F.n + S.n == 0))
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s: empty mesh (%zu vertices, %zu faces)", path, V.n, F.n);
    if (rc == CB_OK)
        rc = cb_mesh_from_arrays_lines((int)V.n, (const double (*)[3])V.data, (int)F.n,
                                       (const int (*)[3])F.data, (int)S.n, (const int (*)[2])S.data,
                                       path, (const int *)L.data, out, err);
    free(V.data);
    free(F.data);
    free(L.data);
    free(S.data);
    return rc;
}
