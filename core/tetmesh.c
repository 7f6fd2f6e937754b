/* core/tetmesh.c — tetrahedral meshes: the procedural box, the TetGen .node/.ele
 * reader, validation, boundary surface and edges (see tetmesh.h).
 *
 * Faces are found by sorting the 4 nt tet faces by their sorted vertex triple: a
 * triple seen once is on the boundary (kept with the orientation it has in its tet,
 * which points out of it), twice is interior (the two tets must lie on opposite sides:
 * their oriented copies run in opposite directions), more is an error.
 */
#include "core/tetmesh.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/vec3.h"

/* faces of a positive tet, each oriented outward: face k is opposite corner k */
static const int FACE[4][3] = { { 1, 2, 3 }, { 0, 3, 2 }, { 0, 1, 3 }, { 0, 2, 1 } };

cb_tet_box_def cb_default_tet_box_def(void)
{
    cb_tet_box_def d;
    memset(&d, 0, sizeof d);
    d.n[0] = d.n[1] = d.n[2] = 4;
    d.size[0] = d.size[1] = d.size[2] = 0.2;
    d.split = 6;
    return d;
}

void cb_tetmesh_free(cb_tetmesh **tp)
{
    if (!tp || !*tp) return;
    free((*tp)->x);
    free((*tp)->t);
    free(*tp);
    *tp = NULL;
}

double cb_tet_volume6(const double a[3], const double b[3], const double c[3], const double d[3])
{
    double u[3], v[3], w[3], n[3];
    cb_v3_sub(u, b, a);
    cb_v3_sub(v, c, a);
    cb_v3_sub(w, d, a);
    cb_v3_cross(n, u, v);
    return cb_v3_dot(n, w);
}

/* "label:LINE: tet k" when the source line is known, else "label: tet k" */
static const char *tet_where(char *buf, size_t n, const char *label, const int *lines, int t)
{
    if (lines) snprintf(buf, n, "%s:%d: tet %d", label, lines[t], t);
    else snprintf(buf, n, "%s: tet %d", label, t);
    return buf;
}

typedef struct face_rec { int v[3]; int tet, local; } face_rec;

static int cmp_face(const void *pa, const void *pb)
{
    const face_rec *p = pa, *q = pb;
    for (int k = 0; k < 3; k++)
        if (p->v[k] != q->v[k]) return p->v[k] < q->v[k] ? -1 : 1;
    return p->tet < q->tet ? -1 : (p->tet > q->tet);
}

static void sort3(int v[3])
{
    int t;
    if (v[0] > v[1]) { t = v[0]; v[0] = v[1]; v[1] = t; }
    if (v[1] > v[2]) { t = v[1]; v[1] = v[2]; v[2] = t; }
    if (v[0] > v[1]) { t = v[0]; v[0] = v[1]; v[1] = t; }
}

/* oriented face of record r */
static void face_of(const cb_tetmesh *tm, const face_rec *r, int f[3])
{
    for (int k = 0; k < 3; k++) f[k] = tm->t[r->tet][FACE[r->local][k]];
}

/* same cyclic order? */
static int same_cycle(const int a[3], const int b[3])
{
    for (int s = 0; s < 3; s++)
        if (a[0] == b[s] && a[1] == b[(s + 1) % 3] && a[2] == b[(s + 2) % 3]) return 1;
    return 0;
}

/* Sort the faces, check them, and (if f != NULL) collect the boundary. */
static int scan_faces(const cb_tetmesh *tm, const char *label, const int *lines, int *nf, int (**f)[3],
                      cb_error *err)
{
    size_t n = 4 * (size_t)tm->nt;
    face_rec *r = cb_calloc(n, sizeof *r);
    if (!r) return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory for %d tets", label, tm->nt);
    for (int t = 0; t < tm->nt; t++)
        for (int k = 0; k < 4; k++) {
            face_rec *q = &r[4 * (size_t)t + (size_t)k];
            face_of(tm, &(face_rec){ { 0, 0, 0 }, t, k }, q->v);
            sort3(q->v);
            q->tet = t;
            q->local = k;
        }
    qsort(r, n, sizeof *r, cmp_face);
    int rc = CB_OK, nb = 0;
    char w1[600], w2[600];
    for (size_t i = 0; i < n && !rc;) {
        size_t j = i + 1;
        while (j < n && !memcmp(r[j].v, r[i].v, sizeof r[i].v)) j++;
        if (j - i > 2) {
            rc = CB_FAIL(err, CB_ERR_INPUT, "%s: face (%d %d %d) is shared by more than two tets (also tets %d and %d)",
                         tet_where(w1, sizeof w1, label, lines, r[i + 2].tet), r[i].v[0], r[i].v[1], r[i].v[2],
                         r[i].tet, r[i + 1].tet);
        } else if (j - i == 2) {
            int a[3], b[3];
            face_of(tm, &r[i], a);
            face_of(tm, &r[i + 1], b);
            if (same_cycle(a, b))
                rc = CB_FAIL(err, CB_ERR_INPUT, "%s overlaps %s: both lie on the same side of their shared face "
                             "(%d %d %d)", tet_where(w1, sizeof w1, label, lines, r[i + 1].tet),
                             tet_where(w2, sizeof w2, label, lines, r[i].tet), r[i].v[0], r[i].v[1], r[i].v[2]);
        } else {
            r[nb++] = r[i]; /* compact the boundary records in place (nb <= i) */
        }
        i = j;
    }
    if (!rc && f) {
        *f = cb_calloc(nb ? (size_t)nb : 1, sizeof **f);
        if (!*f) rc = CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", label);
        else {
            /* in the order of their sorted vertex triples: deterministic */
            for (int t = 0; t < nb; t++) face_of(tm, &r[t], (*f)[t]);
            *nf = nb;
        }
    }
    free(r);
    return rc;
}

static int validate(cb_tetmesh *tm, const char *label, const int *lines, cb_error *err)
{
    char w[600];
    if (tm->nv < 4 || tm->nt < 1)
        return CB_FAIL(err, CB_ERR_INPUT, "%s: empty tet mesh (%d vertices, %d tets)", label, tm->nv, tm->nt);
    double lo[3] = { INFINITY, INFINITY, INFINITY }, hi[3] = { -INFINITY, -INFINITY, -INFINITY };
    for (int i = 0; i < tm->nv; i++) {
        if (!cb_v3_isfinite(tm->x[i]))
            return CB_FAIL(err, CB_ERR_INPUT, "%s: vertex %d has a non-finite coordinate (%g, %g, %g)", label, i,
                           tm->x[i][0], tm->x[i][1], tm->x[i][2]);
        for (int k = 0; k < 3; k++) {
            lo[k] = fmin(lo[k], tm->x[i][k]);
            hi[k] = fmax(hi[k], tm->x[i][k]);
        }
    }
    double diag = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                       (hi[2] - lo[2]) * (hi[2] - lo[2]));
    double tol = 1e-12 * diag * diag * diag;
    int npos = 0, nneg = 0;
    for (int t = 0; t < tm->nt; t++) {
        const int *v = tm->t[t];
        for (int k = 0; k < 4; k++)
            if (v[k] < 0 || v[k] >= tm->nv)
                return CB_FAIL(err, CB_ERR_INPUT, "%s: vertex index %d out of range [0, %d)",
                               tet_where(w, sizeof w, label, lines, t), v[k], tm->nv);
        for (int a = 0; a < 4; a++)
            for (int b = a + 1; b < 4; b++)
                if (v[a] == v[b])
                    return CB_FAIL(err, CB_ERR_INPUT, "%s (%d %d %d %d) is degenerate: repeated vertex",
                                   tet_where(w, sizeof w, label, lines, t), v[0], v[1], v[2], v[3]);
        double V6 = cb_tet_volume6(tm->x[v[0]], tm->x[v[1]], tm->x[v[2]], tm->x[v[3]]);
        if (!(fabs(V6) > tol))
            return CB_FAIL(err, CB_ERR_INPUT, "%s (%d %d %d %d) is degenerate: volume %g",
                           tet_where(w, sizeof w, label, lines, t), v[0], v[1], v[2], v[3], V6 / 6.0);
        if (V6 > 0) npos++;
        else nneg++;
    }
    if (npos && nneg) {
        /* the minority sign is the inverted one (ties: negative) */
        int bad_sign = npos > nneg ? -1 : 1;
        for (int t = 0; t < tm->nt; t++) {
            const int *v = tm->t[t];
            double V6 = cb_tet_volume6(tm->x[v[0]], tm->x[v[1]], tm->x[v[2]], tm->x[v[3]]);
            if ((V6 > 0 ? 1 : -1) == bad_sign)
                return CB_FAIL(err, CB_ERR_INPUT, "%s (%d %d %d %d) is inverted: signed volume %g, while %d of "
                               "%d tets have the opposite sign", tet_where(w, sizeof w, label, lines, t), v[0],
                               v[1], v[2], v[3], V6 / 6.0, bad_sign < 0 ? npos : nneg, tm->nt);
        }
    }
    if (nneg) /* the whole mesh uses the opposite convention: flip every tet */
        for (int t = 0; t < tm->nt; t++) {
            int s = tm->t[t][2];
            tm->t[t][2] = tm->t[t][3];
            tm->t[t][3] = s;
        }
    unsigned char *used = cb_calloc((size_t)tm->nv, 1);
    if (!used) return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", label);
    for (int t = 0; t < tm->nt; t++)
        for (int k = 0; k < 4; k++) used[tm->t[t][k]] = 1;
    int unused = -1;
    for (int i = 0; i < tm->nv && unused < 0; i++)
        if (!used[i]) unused = i;
    free(used);
    if (unused >= 0) return CB_FAIL(err, CB_ERR_INPUT, "%s: vertex %d belongs to no tet", label, unused);
    return scan_faces(tm, label, lines, NULL, NULL, err);
}

int cb_tetmesh_from_arrays(int nv, const double (*x)[3], int nt, const int (*t)[4], const char *label,
                           const int *tet_lines, cb_tetmesh **out, cb_error *err)
{
    if (!out) return CB_FAIL(err, CB_ERR_INPUT, "cb_tetmesh_from_arrays: out is NULL");
    *out = NULL;
    if (!label) label = "tets";
    if (nv < 0 || nt < 0 || (nv > 0 && !x) || (nt > 0 && !t))
        return CB_FAIL(err, CB_ERR_INPUT, "%s: bad arrays (%d vertices, %d tets)", label, nv, nt);
    cb_tetmesh *tm = cb_calloc(1, sizeof *tm);
    if (!tm) return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", label);
    tm->nv = nv;
    tm->nt = nt;
    tm->x = cb_calloc(nv ? (size_t)nv : 1, sizeof *tm->x);
    tm->t = cb_calloc(nt ? (size_t)nt : 1, sizeof *tm->t);
    if (!tm->x || !tm->t) {
        cb_tetmesh_free(&tm);
        return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory for %d vertices, %d tets", label, nv, nt);
    }
    if (nv) memcpy(tm->x, x, (size_t)nv * sizeof *tm->x);
    if (nt) memcpy(tm->t, t, (size_t)nt * sizeof *tm->t);
    int rc = validate(tm, label, tet_lines, err);
    if (rc) {
        cb_tetmesh_free(&tm);
        return rc;
    }
    *out = tm;
    return CB_OK;
}

int cb_tetmesh_box(const cb_tet_box_def *def, cb_tetmesh **out, cb_error *err)
{
    if (!def || !out) return CB_FAIL(err, CB_ERR_INPUT, "cb_tetmesh_box: NULL argument");
    *out = NULL;
    for (int k = 0; k < 3; k++) {
        if (def->n[k] < 1)
            return CB_FAIL(err, CB_ERR_INPUT, "tet box: n[%d] must be >= 1, got %d", k, def->n[k]);
        if (!(def->size[k] > 0) || !isfinite(def->size[k]))
            return CB_FAIL(err, CB_ERR_INPUT, "tet box: size[%d] must be > 0, got %g", k, def->size[k]);
        if (!isfinite(def->origin[k]))
            return CB_FAIL(err, CB_ERR_INPUT, "tet box: origin[%d] is not finite", k);
    }
    if (def->split != 5 && def->split != 6)
        return CB_FAIL(err, CB_ERR_INPUT, "tet box: split must be 5 or 6, got %d", def->split);
    int n0 = def->n[0], n1 = def->n[1], n2 = def->n[2];
    double cells = (double)n0 * n1 * n2, verts = (double)(n0 + 1) * (n1 + 1) * (n2 + 1);
    if (verts > 5e7 || cells * def->split > 2e8)
        return CB_FAIL(err, CB_ERR_INPUT, "tet box: %d x %d x %d cubes is too large", n0, n1, n2);
    int nv = (int)verts, nt = (int)(cells * def->split);
    double (*x)[3] = cb_calloc((size_t)nv, sizeof *x);
    int (*t)[4] = cb_calloc((size_t)nt, sizeof *t);
    if (!x || !t) {
        free(x);
        free(t);
        return CB_FAIL(err, CB_ERR_NOMEM, "tet box: out of memory for %d vertices", nv);
    }
    for (int k = 0; k <= n2; k++)
        for (int j = 0; j <= n1; j++)
            for (int i = 0; i <= n0; i++) {
                double *p = x[i + (n0 + 1) * (j + (n1 + 1) * k)];
                p[0] = def->origin[0] + def->size[0] * i / n0;
                p[1] = def->origin[1] + def->size[1] * j / n1;
                p[2] = def->origin[2] + def->size[2] * k / n2;
            }
    int m = 0;
    for (int k = 0; k < n2; k++)
        for (int j = 0; j < n1; j++)
            for (int i = 0; i < n0; i++) {
                int c[8]; /* corner b = dx + 2 dy + 4 dz */
                for (int b = 0; b < 8; b++)
                    c[b] = (i + (b & 1)) + (n0 + 1) * ((j + ((b >> 1) & 1)) + (n1 + 1) * (k + ((b >> 2) & 1)));
                int tl[6][4], ntl = 0;
                if (def->split == 6) {
                    /* Freudenthal: 000 -> +e_a -> +e_b -> 111 for each permutation (a, b, c) */
                    static const int perm[6][2] = { { 0, 1 }, { 0, 2 }, { 1, 0 }, { 1, 2 }, { 2, 0 }, { 2, 1 } };
                    for (int q = 0; q < 6; q++) {
                        int b1 = 1 << perm[q][0], b2 = b1 | (1 << perm[q][1]);
                        int v[4] = { c[0], c[b1], c[b2], c[7] };
                        memcpy(tl[ntl++], v, sizeof v);
                    }
                } else {
                    /* the central tet joins the corners of one parity (alternating from cube
                     * to cube so face diagonals match); a corner tet cuts off each other corner */
                    int par = (i + j + k) & 1, central[4], nc = 0;
                    for (int b = 0; b < 8; b++) {
                        int pc = ((b & 1) + ((b >> 1) & 1) + ((b >> 2) & 1)) & 1;
                        if (pc == par) central[nc++] = c[b];
                        else {
                            int v[4] = { c[b], c[b ^ 1], c[b ^ 2], c[b ^ 4] };
                            memcpy(tl[ntl++], v, sizeof v);
                        }
                    }
                    memcpy(tl[ntl++], central, sizeof central);
                }
                for (int q = 0; q < ntl; q++) {
                    int *v = tl[q];
                    if (cb_tet_volume6(x[v[0]], x[v[1]], x[v[2]], x[v[3]]) < 0) {
                        int s = v[2];
                        v[2] = v[3];
                        v[3] = s;
                    }
                    memcpy(t[m++], v, sizeof t[0]);
                }
            }
    CB_ASSERT(m == nt);
    int rc = cb_tetmesh_from_arrays(nv, (const double (*)[3])x, nt, (const int (*)[4])t, "tet box", NULL, out, err);
    free(x);
    free(t);
    return rc;
}

/* ---------------------------------------------------------------- TetGen */

typedef struct reader {
    FILE *fp;
    const char *path;
    char *buf;
    size_t cap;
    int line;
} reader;

/* The next line with something other than blanks and a comment; NULL at the end. */
static char *next_record(reader *r)
{
    while (getline(&r->buf, &r->cap, r->fp) >= 0) {
        r->line++;
        char *h = strchr(r->buf, '#');
        if (h) *h = '\0';
        char *s = r->buf;
        while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n' || *s == ',') s++;
        if (*s) return s;
    }
    return NULL;
}

/* Next whitespace-separated token of *s (NUL-terminated in place); NULL if none. */
static char *next_token(char **s)
{
    char *p = *s;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n' || *p == ',') p++;
    if (!*p) {
        *s = p;
        return NULL;
    }
    char *q = p;
    while (*q && *q != ' ' && *q != '\t' && *q != '\r' && *q != '\n' && *q != ',') q++;
    if (*q) *q++ = '\0';
    *s = q;
    return p;
}

static int read_long(reader *r, char **s, const char *what, long *out, cb_error *err)
{
    char *tok = next_token(s);
    if (!tok) return CB_FAIL(err, CB_ERR_INPUT, "%s:%d: missing %s", r->path, r->line, what);
    char *end;
    errno = 0;
    long v = strtol(tok, &end, 10);
    if (*end || end == tok || errno)
        return CB_FAIL(err, CB_ERR_INPUT, "%s:%d: %s: expected an integer, got '%s'", r->path, r->line, what, tok);
    *out = v;
    return CB_OK;
}

static int read_num(reader *r, char **s, const char *what, double *out, cb_error *err)
{
    char *tok = next_token(s);
    if (!tok) return CB_FAIL(err, CB_ERR_INPUT, "%s:%d: missing %s", r->path, r->line, what);
    char *end;
    double v = strtod(tok, &end);
    if (*end || end == tok)
        return CB_FAIL(err, CB_ERR_INPUT, "%s:%d: %s: expected a number, got '%s'", r->path, r->line, what, tok);
    if (!isfinite(v))
        return CB_FAIL(err, CB_ERR_INPUT, "%s:%d: %s is not finite (%s)", r->path, r->line, what, tok);
    *out = v;
    return CB_OK;
}

static int no_more(reader *r, char **s, int expected, cb_error *err)
{
    char *tok = next_token(s);
    if (tok)
        return CB_FAIL(err, CB_ERR_INPUT, "%s:%d: expected %d values on this line (as the header says), "
                       "found more ('%s')", r->path, r->line, expected, tok);
    return CB_OK;
}

static int open_reader(reader *r, const char *path, cb_error *err)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    r->fp = fopen(path, "r");
    if (!r->fp) return CB_FAIL(err, CB_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
    return CB_OK;
}

static void close_reader(reader *r)
{
    if (r->fp) fclose(r->fp);
    free(r->buf);
    r->fp = NULL;
    r->buf = NULL;
}

/* The records the rest of the file can hold, each of `values` numbers: a number is one
 * byte at least and is followed by a separator or the line's end, so a record takes
 * 2 * values bytes or more (the last line may lack its end). The reader allocates for
 * no more records than that, whatever the header claims: an 83-byte .ele claiming 200
 * million tetrahedra made it allocate 3.2 GB before reading one (issue 29); now it
 * reads what is there and says the header claimed more. LONG_MAX when the size is
 * unknown (not a regular file). */
static long records_left(reader *r, int values)
{
    struct stat st;
    long at = ftell(r->fp);
    if (at < 0 || fstat(fileno(r->fp), &st) != 0 || !S_ISREG(st.st_mode)) return LONG_MAX;
    return st.st_size > at ? (long)((st.st_size - at + 1) / (2 * values)) : 0; /* + 1: the last line's end */
}

/* anything but separators left in s? */
static int has_token(const char *s)
{
    return s[strspn(s, " \t\r\n,")] != '\0';
}

/* The header line: nvals integers, trailing ones optional (then defs[k]). */
static int read_header(reader *r, int nvals, const char *const *names, const long *defs, long *vals,
                       cb_error *err)
{
    char *s = next_record(r);
    if (!s) return CB_FAIL(err, CB_ERR_INPUT, "%s:%d: empty file: expected a header line", r->path, r->line);
    for (int k = 0; k < nvals; k++) {
        vals[k] = defs[k];
        if (k > 0 && !has_token(s)) continue;
        int rc = read_long(r, &s, names[k], &vals[k], err);
        if (rc) return rc;
    }
    return no_more(r, &s, nvals, err);
}

static int read_node(const char *path, int *nv_out, double (**x_out)[3], int *base_out, int **lines_out,
                     cb_error *err)
{
    reader r;
    int rc = open_reader(&r, path, err);
    if (rc) return rc;
    static const char *const hn[] = { "number of points", "dimension", "number of attributes",
                                      "boundary marker flag" };
    static const long hd[] = { 0, 3, 0, 0 };
    long h[4];
    double (*x)[3] = NULL;
    int *lines = NULL;
    rc = read_header(&r, 4, hn, hd, h, err);
    if (!rc && (h[0] < 4 || h[0] > 50000000))
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s:%d: number of points: expected 4 to 50000000, got %ld", path, r.line, h[0]);
    if (!rc && h[1] != 3)
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s:%d: dimension: expected 3, got %ld", path, r.line, h[1]);
    if (!rc && (h[2] < 0 || h[2] > 1000))
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s:%d: number of attributes: expected 0 to 1000, got %ld", path, r.line, h[2]);
    if (!rc && h[3] != 0 && h[3] != 1)
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s:%d: boundary marker flag: expected 0 or 1, got %ld", path, r.line, h[3]);
    int nvals = rc ? 0 : 4 + (int)h[2] + (int)h[3]; /* the header is checked: no overflow */
    int n = rc ? 0 : (int)h[0], base = 0;
    int cap = rc ? 0 : (int)(records_left(&r, nvals) < n ? records_left(&r, nvals) : n);
    if (!rc) {
        x = cb_calloc((size_t)cap, sizeof *x);
        lines = cb_calloc((size_t)cap, sizeof *lines);
        if (!x || !lines) rc = CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory for %d points", path, cap);
    }
    for (int i = 0; i < n && !rc; i++) {
        char *s = i < cap ? next_record(&r) : NULL;
        if (!s) {
            rc = CB_FAIL(err, CB_ERR_INPUT, "%s:%d: the header says %d points, found only %d", path, r.line, n, i);
            break;
        }
        long idx;
        if ((rc = read_long(&r, &s, "point number", &idx, err))) break;
        if (i == 0) {
            if (idx != 0 && idx != 1) {
                rc = CB_FAIL(err, CB_ERR_INPUT, "%s:%d: the first point number must be 0 or 1 (it sets the "
                             "numbering), got %ld", path, r.line, idx);
                break;
            }
            base = (int)idx;
        } else if (idx != base + i) {
            rc = CB_FAIL(err, CB_ERR_INPUT, "%s:%d: point number: expected %d (points are numbered in order), got %ld",
                         path, r.line, base + i, idx);
            break;
        }
        static const char *const axis[] = { "x coordinate", "y coordinate", "z coordinate" };
        for (int k = 0; k < 3 && !rc; k++) rc = read_num(&r, &s, axis[k], &x[i][k], err);
        for (int k = 0; k < (int)h[2] && !rc; k++) {
            double a;
            rc = read_num(&r, &s, "attribute", &a, err);
        }
        if (!rc && h[3]) {
            long mk;
            rc = read_long(&r, &s, "boundary marker", &mk, err);
        }
        if (!rc) rc = no_more(&r, &s, nvals, err);
        if (!rc) lines[i] = r.line;
    }
    if (!rc && ferror(r.fp)) rc = CB_FAIL(err, CB_ERR_IO, "%s: read error", path);
    close_reader(&r);
    if (rc) {
        free(x);
        free(lines);
        return rc;
    }
    *nv_out = n;
    *x_out = x;
    *base_out = base;
    *lines_out = lines;
    return CB_OK;
}

static int read_ele(const char *path, int nv, int base, int *nt_out, int (**t_out)[4], int **lines_out,
                    cb_error *err)
{
    reader r;
    int rc = open_reader(&r, path, err);
    if (rc) return rc;
    static const char *const hn[] = { "number of tetrahedra", "nodes per tetrahedron", "number of attributes" };
    static const long hd[] = { 0, 4, 0 };
    long h[3];
    int (*t)[4] = NULL;
    int *lines = NULL;
    rc = read_header(&r, 3, hn, hd, h, err);
    if (!rc && (h[0] < 1 || h[0] > 200000000))
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s:%d: number of tetrahedra: expected 1 to 200000000, got %ld", path, r.line,
                     h[0]);
    if (!rc && h[1] != 4 && h[1] != 10)
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s:%d: nodes per tetrahedron: expected 4 or 10, got %ld", path, r.line, h[1]);
    if (!rc && (h[2] < 0 || h[2] > 1000))
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s:%d: number of attributes: expected 0 to 1000, got %ld", path, r.line, h[2]);
    int nvals = rc ? 0 : 1 + (int)h[1] + (int)h[2]; /* the header is checked: no overflow */
    int n = rc ? 0 : (int)h[0];
    int cap = rc ? 0 : (int)(records_left(&r, nvals) < n ? records_left(&r, nvals) : n);
    if (!rc) {
        t = cb_calloc((size_t)cap, sizeof *t);
        lines = cb_calloc((size_t)cap, sizeof *lines);
        if (!t || !lines) rc = CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory for %d tets", path, cap);
    }
    for (int i = 0; i < n && !rc; i++) {
        char *s = i < cap ? next_record(&r) : NULL;
        if (!s) {
            rc = CB_FAIL(err, CB_ERR_INPUT, "%s:%d: the header says %d tetrahedra, found only %d", path, r.line, n, i);
            break;
        }
        long idx;
        if ((rc = read_long(&r, &s, "tetrahedron number", &idx, err))) break;
        for (int k = 0; k < (int)h[1] && !rc; k++) {
            char what[64];
            snprintf(what, sizeof what, "node %d", k + 1);
            long v;
            if ((rc = read_long(&r, &s, what, &v, err))) break;
            if (v < base || v >= (long)base + nv) {
                rc = CB_FAIL(err, CB_ERR_INPUT, "%s:%d: %s: index %ld out of range [%d, %d] (%d points, numbered "
                             "from %d)", path, r.line, what, v, base, base + nv - 1, nv, base);
                break;
            }
            if (k < 4) t[i][k] = (int)(v - base);
        }
        for (int k = 0; k < (int)h[2] && !rc; k++) {
            double a;
            rc = read_num(&r, &s, "attribute", &a, err);
        }
        if (!rc) rc = no_more(&r, &s, nvals, err);
        if (!rc) lines[i] = r.line;
    }
    if (!rc && ferror(r.fp)) rc = CB_FAIL(err, CB_ERR_IO, "%s: read error", path);
    close_reader(&r);
    if (rc) {
        free(t);
        free(lines);
        return rc;
    }
    *nt_out = n;
    *t_out = t;
    *lines_out = lines;
    return CB_OK;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

int cb_tetmesh_read_tetgen(const char *path, cb_tetmesh **out, cb_error *err)
{
    if (!path || !out) return CB_FAIL(err, CB_ERR_INPUT, "cb_tetmesh_read_tetgen: NULL argument");
    *out = NULL;
    if (!path[0]) return CB_FAIL(err, CB_ERR_INPUT, "cb_tetmesh_read_tetgen: empty path");
    size_t n = strlen(path);
    if (ends_with(path, ".node") || ends_with(path, ".ele")) n = (size_t)(strrchr(path, '.') - path);
    char *node = cb_malloc(n + 6), *ele = cb_malloc(n + 5);
    if (!node || !ele) {
        free(node);
        free(ele);
        return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", path);
    }
    snprintf(node, n + 6, "%.*s.node", (int)n, path);
    snprintf(ele, n + 5, "%.*s.ele", (int)n, path);
    int nv = 0, nt = 0, base = 0;
    double (*x)[3] = NULL;
    int (*t)[4] = NULL;
    int *vlines = NULL, *tlines = NULL;
    int rc = read_node(node, &nv, &x, &base, &vlines, err);
    if (!rc) rc = read_ele(ele, nv, base, &nt, &t, &tlines, err);
    if (!rc) { /* a point no tet uses: name its line in the .node file */
        unsigned char *used = cb_calloc((size_t)nv, 1);
        if (!used) rc = CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", node);
        for (int i = 0; !rc && i < nt; i++)
            for (int k = 0; k < 4; k++) used[t[i][k]] = 1;
        for (int v = 0; !rc && v < nv; v++)
            if (!used[v])
                rc = CB_FAIL(err, CB_ERR_INPUT, "%s:%d: point %d belongs to no tetrahedron of %s", node, vlines[v],
                             v + base, ele);
        free(used);
    }
    if (!rc) rc = cb_tetmesh_from_arrays(nv, (const double (*)[3])x, nt, (const int (*)[4])t, ele, tlines, out, err);
    free(x);
    free(t);
    free(vlines);
    free(tlines);
    free(node);
    free(ele);
    return rc;
}

/* ---------------------------------------------------------------- derived data */

int cb_tetmesh_boundary(const cb_tetmesh *tm, int *nf, int (**f)[3], cb_error *err)
{
    if (!tm || !nf || !f) return CB_FAIL(err, CB_ERR_INPUT, "cb_tetmesh_boundary: NULL argument");
    *f = NULL;
    *nf = 0;
    return scan_faces(tm, "tets", NULL, nf, f, err);
}

static int cmp_edge(const void *pa, const void *pb)
{
    const int *p = pa, *q = pb;
    if (p[0] != q[0]) return p[0] < q[0] ? -1 : 1;
    return p[1] < q[1] ? -1 : (p[1] > q[1]);
}

int cb_tetmesh_edges(const cb_tetmesh *tm, int *ne, int (**e)[2], cb_error *err)
{
    if (!tm || !ne || !e) return CB_FAIL(err, CB_ERR_INPUT, "cb_tetmesh_edges: NULL argument");
    *e = NULL;
    *ne = 0;
    size_t n = 6 * (size_t)tm->nt;
    int (*a)[2] = cb_calloc(n ? n : 1, sizeof *a);
    if (!a) return CB_FAIL(err, CB_ERR_NOMEM, "tets: out of memory for %d tets", tm->nt);
    size_t m = 0;
    for (int t = 0; t < tm->nt; t++)
        for (int i = 0; i < 4; i++)
            for (int j = i + 1; j < 4; j++) {
                int u = tm->t[t][i], v = tm->t[t][j];
                a[m][0] = u < v ? u : v;
                a[m][1] = u < v ? v : u;
                m++;
            }
    qsort(a, m, sizeof *a, cmp_edge);
    size_t k = 0;
    for (size_t i = 0; i < m; i++)
        if (k == 0 || cmp_edge(a[k - 1], a[i]) != 0) memcpy(a[k++], a[i], sizeof a[0]);
    *e = a;
    *ne = (int)k;
    return CB_OK;
}

int cb_tetmesh_to_mesh(const cb_tetmesh *tm, const char *label, cb_mesh **out, cb_error *err)
{
    if (!tm || !out) return CB_FAIL(err, CB_ERR_INPUT, "cb_tetmesh_to_mesh: NULL argument");
    *out = NULL;
    if (!label) label = "tets";
    int nf = 0, ne = 0, rc;
    int (*f)[3] = NULL, (*e)[2] = NULL, (*be)[2] = NULL;
    if ((rc = scan_faces(tm, label, NULL, &nf, &f, err)) || (rc = cb_tetmesh_edges(tm, &ne, &e, err))) goto done;
    /* interior edges: tet edges that are no boundary-face edge */
    be = cb_calloc(3 * (size_t)nf + 1, sizeof *be);
    if (!be) {
        rc = CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", label);
        goto done;
    }
    for (int i = 0; i < nf; i++)
        for (int k = 0; k < 3; k++) {
            int u = f[i][k], v = f[i][(k + 1) % 3];
            be[3 * i + k][0] = u < v ? u : v;
            be[3 * i + k][1] = u < v ? v : u;
        }
    qsort(be, 3 * (size_t)nf, sizeof *be, cmp_edge);
    int ns = 0;
    for (int i = 0; i < ne; i++)
        if (!bsearch(e[i], be, 3 * (size_t)nf, sizeof *be, cmp_edge)) memcpy(e[ns++], e[i], sizeof e[0]);
    rc = cb_mesh_from_arrays_lines(tm->nv, (const double (*)[3])tm->x, nf, (const int (*)[3])f, ns,
                                   (const int (*)[2])e, label, NULL, out, err);
done:
    free(f);
    free(e);
    free(be);
    return rc;
}

void cb_tetmesh_lumped_masses(const cb_tetmesh *tm, double density, double *mass)
{
    CB_ASSERT(tm && mass);
    memset(mass, 0, (size_t)tm->nv * sizeof *mass);
    for (int t = 0; t < tm->nt; t++) {
        const int *v = tm->t[t];
        double m = density * cb_tet_volume6(tm->x[v[0]], tm->x[v[1]], tm->x[v[2]], tm->x[v[3]]) / 6.0 / 4.0;
        for (int k = 0; k < 4; k++) mass[v[k]] += m;
    }
}
