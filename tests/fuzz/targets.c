/* tests/fuzz/targets.c — the fuzz targets (targets.h). */
#define _DEFAULT_SOURCE /* mkstemp */
#include "targets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/mesh.h"
#include "core/scene.h"
#include "core/tetmesh.h"
#include "core/yamltree.h"

/* The bytes as a NUL-terminated string (an embedded NUL ends it, as a file reader sees). */
static char *text_of(const uint8_t *data, size_t size)
{
    char *t = malloc(size + 1);
    if (!t) abort();
    memcpy(t, data, size);
    t[size] = '\0';
    return t;
}

/* Splits t at the first line equal to `marker` (the line removed): returns the part after
 * it (inside t), or NULL when there is none. */
static char *split_at(char *t, const char *marker)
{
    size_t m = strlen(marker);
    for (char *p = t; (p = strstr(p, marker)); p += m)
        if ((p == t || p[-1] == '\n') && (p[m] == '\n' || p[m] == '\0')) {
            *p = '\0';
            return p[m] ? p + m + 1 : p + m;
        }
    return NULL;
}

/* The tree written back (cb_yaml_emit) parses to the same tree: compared as one line
 * of flow YAML each (cb_yaml_emit_flow), which does not depend on how the text laid the
 * tree out (block or flow). */
static void round_trip(const char *text)
{
    cb_yaml *a = NULL, *b = NULL;
    cb_error e;
    if (cb_yaml_load_string(text, "fuzz", &a, &e)) return;
    char *t1 = cb_yaml_emit(a);
    if (!t1) abort();
    if (cb_yaml_load_string(t1, "fuzz-emitted", &b, &e)) {
        fprintf(stderr, "emitted YAML does not parse: %s\n---\n%s---\n", e.message, t1);
        abort();
    }
    char *fa = cb_yaml_emit_flow(a), *fb = cb_yaml_emit_flow(b);
    if (!fa || !fb || strcmp(fa, fb)) {
        fprintf(stderr, "YAML round trip gives another tree:\n%s\n%s\n", fa ? fa : "(null)", fb ? fb : "(null)");
        abort();
    }
    free(t1);
    free(fa);
    free(fb);
    cb_yaml_free(&a);
    cb_yaml_free(&b);
}

int cb_fuzz_scene(const uint8_t *data, size_t size)
{
    char *t = text_of(data, size);
    char *sets_text = split_at(t, "#--set");
    const char *sets[16];
    int nsets = 0;
    for (char *line = sets_text; line && *line && nsets < 16;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        sets[nsets++] = line;
        line = nl ? nl + 1 : NULL;
    }
    cb_scene *s = NULL;
    cb_error e;
    if (cb_scene_parse_string(t, "fuzz.yaml", ".", sets, nsets, &s, &e) == CB_OK) cb_scene_free(&s);
    else if (!e.message[0]) abort(); /* every error says what is wrong */
    round_trip(t);
    free(t);
    return 0;
}

/* data[0..size) into the file stem + suffix; returns its path (malloc'd). */
static char *temp_file(const uint8_t *data, size_t size, const char *stem, const char *suffix)
{
    char *path = malloc(strlen(stem) + strlen(suffix) + 1);
    if (!path) abort();
    sprintf(path, "%s%s", stem, suffix);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
    return path;
}

/* A unique stem in TMPDIR (mkstemp's file is kept as a marker and removed at the end). */
static char *unique_stem(void)
{
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char *stem = malloc(strlen(dir) + 32);
    if (!stem) abort();
    sprintf(stem, "%s/cbfuzz-XXXXXX", dir);
    int fd = mkstemp(stem);
    if (fd < 0) abort();
    close(fd);
    return stem;
}

int cb_fuzz_obj(const uint8_t *data, size_t size)
{
    char *stem = unique_stem();
    char *path = temp_file(data, size, stem, ".obj");
    cb_mesh *m = NULL;
    cb_error e;
    if (cb_mesh_read_obj(path, &m, &e) == CB_OK) cb_mesh_free(&m);
    else if (!e.message[0]) abort();
    unlink(path);
    unlink(stem);
    free(path);
    free(stem);
    return 0;
}

int cb_fuzz_tetgen(const uint8_t *data, size_t size)
{
    char *t = text_of(data, size);
    char *ele = split_at(t, "#--ele");
    char *stem = unique_stem();
    char *node_path = temp_file((const uint8_t *)t, strlen(t), stem, ".node");
    char *ele_path = temp_file((const uint8_t *)(ele ? ele : ""), ele ? strlen(ele) : 0, stem, ".ele");
    cb_tetmesh *tm = NULL;
    cb_error e;
    cb_alloc_largest();
    if (cb_tetmesh_read_tetgen(stem, &tm, &e) == CB_OK) cb_tetmesh_free(&tm);
    else if (!e.message[0]) abort();
    /* what the reader allocates follows the files, not their headers' claims (a header
     * of 200 million tets in 83 bytes allocated 3.2 GB, issue 29): a record of a few bytes
     * costs at most some hundred bytes (the tet, its four faces, the lines) */
    size_t largest = cb_alloc_largest();
    if (largest > 256 * size + 4096) {
        fprintf(stderr, "tetgen: one allocation of %zu bytes for %zu bytes of input\n", largest, size);
        abort();
    }
    unlink(node_path);
    unlink(ele_path);
    unlink(stem);
    free(node_path);
    free(ele_path);
    free(stem);
    free(t);
    return 0;
}
